//! Engine and log errors as Python exceptions, with the library's message unchanged.
//!
//! | Rust error | Python exception |
//! |---|---|
//! | `EngineError::NonFinite` | `lavender.NonFiniteError` (a `ValueError`) |
//! | any other `EngineError` (bad setting, body, joint, scene, dt) | `ValueError` |
//! | `ReplayError::Io` | `OSError`, or its subclass for the OS error kind (`FileNotFoundError`, ...), with `errno` when the system gave one |
//! | a file that is not a log, of another major version, corrupt, shrunk; HDF5 | `OSError` |
//! | `ReplayError::FrameOutOfRange` | `IndexError` |
//! | every other `ReplayError` (out-of-range joint or column, shape mismatch, ...) | `ValueError` |

use lavender_engine::EngineError;
use lavender_replay::ReplayError;
use pyo3::exceptions::{
    PyFileExistsError, PyFileNotFoundError, PyIndexError, PyIsADirectoryError,
    PyNotADirectoryError, PyOSError, PyPermissionError, PyValueError,
};
use pyo3::types::PyAnyMethods;
use pyo3::PyErr;

pyo3::create_exception!(
    lavender,
    NonFiniteError,
    PyValueError,
    "A step produced a non-finite position, orientation or velocity.\n\n\
     The world was rolled back to its state before the step; the message names the body, \
     the substep and the joints touching the body. A subclass of ValueError: the cause is \
     almost always an input (masses, inertia, anchors, dt)."
);

/// An engine error as a Python exception.
pub fn engine(e: EngineError) -> PyErr {
    match e {
        EngineError::NonFinite { .. } => NonFiniteError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// An I/O failure of kind `kind` as the matching `OSError` subclass, with `message`.
pub fn io(kind: std::io::ErrorKind, message: String) -> PyErr {
    use std::io::ErrorKind as K;
    match kind {
        K::NotFound => PyFileNotFoundError::new_err(message),
        K::PermissionDenied => PyPermissionError::new_err(message),
        K::AlreadyExists => PyFileExistsError::new_err(message),
        K::IsADirectory => PyIsADirectoryError::new_err(message),
        K::NotADirectory => PyNotADirectoryError::new_err(message),
        _ => PyOSError::new_err(message),
    }
}

/// [`io`] with `errno` set to the system's error number, when the system gave one (QA
/// 2026-12-07: it was None). `filename` stays None: set, it would turn `str(e)` into
/// "[Errno 2] None: 'path'" in place of the library's message, which names the file.
pub fn io_errno(kind: std::io::ErrorKind, message: String, errno: Option<i32>) -> PyErr {
    let err = io(kind, message);
    if let Some(errno) = errno {
        pyo3::Python::attach(|py| {
            // Best effort: an attribute that cannot be set leaves the exception as it is.
            let _ = err.value(py).setattr("errno", errno);
        });
    }
    err
}

/// A log error as a Python exception.
pub fn replay(e: ReplayError) -> PyErr {
    let message = e.to_string();
    match e {
        ReplayError::Io { source, .. } => io_errno(source.kind(), message, source.raw_os_error()),
        ReplayError::NotALog { .. }
        | ReplayError::UnsupportedVersion { .. }
        | ReplayError::CorruptHeader { .. }
        | ReplayError::CorruptFrame { .. }
        | ReplayError::SkippedRecord { .. }
        | ReplayError::FileShrank { .. }
        | ReplayError::Hdf5 { .. } => PyOSError::new_err(message),
        ReplayError::FrameOutOfRange { .. } => PyIndexError::new_err(message),
        ReplayError::Engine(inner) => engine(inner),
        _ => PyValueError::new_err(message),
    }
}

/// A `ValueError` with `message`.
pub fn value(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}
