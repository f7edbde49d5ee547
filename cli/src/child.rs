//! The command a subcommand runs: starting it, and its exit code as this process's.

use std::process::{ExitCode, ExitStatus};

use crate::Failure;

/// The command `argv` names, not yet started; an error if there is none.
pub(crate) fn command(argv: &[String]) -> Result<std::process::Command, Failure> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Failure::usage("no command to run"))?;
    let mut command = std::process::Command::new(program);
    command.args(args);
    Ok(command)
}

/// Why `argv`'s command did not start: exit code 127, as a shell says.
pub(crate) fn not_started(argv: &[String], error: std::io::Error) -> Failure {
    Failure::not_started(format!("cannot start `{}`: {error}", argv[0]))
}

/// The exit code of a command that ended with `status`: its own, or 128 and the signal that
/// ended it, as a shell says.
pub(crate) fn exit_code(status: ExitStatus) -> ExitCode {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return ExitCode::from(128u8.saturating_add(signal as u8));
    }
    ExitCode::from(status.code().unwrap_or(1) as u8)
}
