//! The addon's errors, made in one place. Each is an `InvalidArg` whose message names the
//! argument or says where: `index.js` gives a `Limits` one as a `ManifestError`, and checks the
//! types of the arguments itself, as `TypeError`s.

use std::fmt::Display;

use napi::{Error, Status};

/// The argument `name`, whose value the crate refused with `error`:
/// `maxTokens must be at least 32 ...`.
pub(crate) fn refused<E: Display>(name: &'static str) -> impl Fn(E) -> Error {
    move |error| invalid(format!("{name} {error}"))
}

/// An error saying `message`.
pub(crate) fn invalid(message: impl Display) -> Error {
    Error::new(Status::InvalidArg, message.to_string())
}
