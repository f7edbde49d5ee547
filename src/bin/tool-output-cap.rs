//! `tool-output-cap`: the cap for agent hosts that cannot link a Rust crate. See the README.

fn main() -> std::process::ExitCode {
    tool_output_cap::cli::main()
}
