//! Lavender's Python module, `lavender._lavender` (re-exported by the `lavender` package in
//! `python/lavender/`): the engine as `Sim`, recorded runs as `Log` and `Frame`, the
//! diagnostics' column names, and the error types.
//!
//! Arrays come out as NumPy arrays through the `numpy` crate. The diagnostics of a `Sim` and
//! the arrays of a log frame can be read without copying: the array's base object is the
//! `Sim` or `Log`, which keeps the memory alive (see `convert::view2`). The GIL is released
//! while stepping and while scanning a log.
//!
//! Build with maturin (`python3 -m pip install ./tools/python`), which turns on the
//! `extension-module` feature. Without it the crate links libpython like any program, so
//! `cargo test --workspace` and `cargo clippy --workspace` build it normally.
#![deny(missing_docs)]

mod convert;
mod errors;
mod log;
mod sim;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The scenes shipped with the engine, as a dict ``{name: description}``; pass a name to
/// ``lavender.Sim``.
#[pyfunction]
fn shipped_scenes(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, description) in lavender_engine::builtin_scenes() {
        d.set_item(name, description)?;
    }
    Ok(d)
}

/// The native module.
#[pymodule]
fn _lavender(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<sim::Sim>()?;
    m.add_class::<log::Log>()?;
    m.add_class::<log::Frame>()?;
    m.add_function(wrap_pyfunction!(shipped_scenes, m)?)?;
    m.add("NonFiniteError", py.get_type::<errors::NonFiniteError>())?;
    m.add(
        "COLUMN_NAMES",
        PyTuple::new(py, lavender_engine::COLUMN_NAMES)?,
    )?;
    m.add(
        "COLUMN_UNITS",
        PyTuple::new(py, lavender_engine::COLUMN_UNITS)?,
    )?;
    m.add("COLUMN_COUNT", lavender_engine::COLUMN_COUNT)?;
    m.add("ENGINE_VERSION", lavender_engine::VERSION)?;
    m.add("TARGET_FEATURES", lavender_engine::target_features())?;
    m.add("SIMD_LANES", lavender_engine::lanes::WIDE_LANES)?;
    Ok(())
}
