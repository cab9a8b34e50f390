//! The constraints tutorial, runnable.
#![deny(missing_docs)]
