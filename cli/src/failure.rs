//! What stops the binary before it could do its job.

/// What stops the binary before it could do its job: said on stderr, with an exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) code: u8,
}

impl Failure {
    /// A bad flag or manifest: exit code 2.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }

    /// Reading or writing failed, or a server did not answer: exit code 1.
    pub(crate) fn io(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// The command could not be started: exit code 127, as a shell says.
    pub(crate) fn not_started(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 127,
        }
    }
}

impl From<tool_output_cap::ManifestError> for Failure {
    fn from(error: tool_output_cap::ManifestError) -> Self {
        Failure::usage(error.to_string())
    }
}
