//! Lavender engine.
