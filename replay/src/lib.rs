//! Lavender's run log: every substep's poses and diagnostics, recorded and read back.
#![deny(missing_docs)]
