//! The command a subcommand runs: starting it, and its exit code as this process's.

use std::process::ExitStatus;

use crate::Failure;

/// The command `argv` names, not yet started; an error if there is none. On Linux it is killed
/// when this process dies, however it dies: a SIGKILL to the proxy leaves no server behind.
///
/// It must be started from the main thread, which lives as long as the process: the kernel sends
/// the signal when the thread that started the command ends.
pub(crate) fn command(argv: &[String]) -> Result<std::process::Command, Failure> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Failure::usage("no command to run"))?;
    let mut command = std::process::Command::new(program);
    command.args(args);
    #[cfg(target_os = "linux")]
    die_with_parent(&mut command);
    Ok(command)
}

/// Asks the kernel to SIGKILL the command when its parent, this process, dies.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;

    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed. It makes two system calls, prctl(PR_SET_PDEATHSIG) and getppid, through
    // nix's thin wrappers; it allocates nothing, takes no lock and touches no state shared with
    // the parent. The error it may return is built from an errno, without allocating.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            // The parent died before the request was made: nothing would send the signal.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from(std::io::ErrorKind::Other));
            }
            Ok(())
        });
    }
}

/// Why `argv`'s command did not start: exit code 127, as a shell says.
pub(crate) fn not_started(argv: &[String], error: std::io::Error) -> Failure {
    Failure::not_started(format!("cannot start `{}`: {error}", argv[0]))
}

/// The exit code of a command that ended with `status`: its own, or 128 and the signal that
/// ended it, as a shell says.
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return 128u8.saturating_add(signal as u8);
    }
    status.code().unwrap_or(1) as u8
}
