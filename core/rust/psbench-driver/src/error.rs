//! Failing: an Error is what every fallible call of a driver returns; the SDK reports it
//! as "<driver name>: <message>" through psb_error and returns the ABI's failure value.

use std::any::Any;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Any failure.
    Failed,
    /// Writer::drain(): not drained within the timeout (the ABI's 0, with a message).
    Timeout,
    /// A sample taken that is not one this run's writers send: that sample is lost, a
    /// listener goes on with the next (Listener::drain()).
    BadSample,
}

/// A failure, with a message a user can act on (without the driver's name: the SDK adds it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Failed,
            message: message.into(),
        }
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Timeout,
            message: message.into(),
        }
    }
    pub fn bad_sample(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::BadSample,
            message: message.into(),
        }
    }
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What a panic's payload says, as an error message: "panic: <message>".
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_string()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::new(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::new(message)
    }
}

/// `fail!("cannot open {}", name)`: returns `Err(Error::new(format!(...)))` from the function.
#[macro_export]
macro_rules! fail {
    ($($arg:tt)*) => {
        return ::core::result::Result::Err($crate::Error::new(::std::format!($($arg)*)))
    };
}

/// `err!("...")`: an `Error` with a formatted message, e.g. for `map_err(|e| err!("x: {e:?}"))`.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::Error::new(::std::format!($($arg)*))
    };
}
