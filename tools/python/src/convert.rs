//! Conversions between Python values and the engine's: vectors, scene dicts, selectors by
//! name or index, and NumPy arrays (copies and read-only zero-copy views).

use lavender_engine::{Quat, Vec3, COLUMN_COUNT, COLUMN_NAMES};
use numpy::ndarray::{Array2, ArrayView1, ArrayView2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors;

/// `n` floats from a sequence (list, tuple, NumPy array), named `what` in errors.
pub fn floats<const N: usize>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[f32; N]> {
    // A bool is not a component (QA 2026-12-07: `gravity=[True, 0, 0]` was [1, 0, 0], while
    // `dt=True` is refused); Python's and NumPy's bools are both named `bool`.
    let is_bool = |x: &Bound<'_, PyAny>| {
        x.get_type()
            .name()
            .is_ok_and(|n| n == "bool" || n == "bool_")
    };
    // Nor is a complex number (QA 2026-12-07: NumPy's complex vectors were taken with only
    // NumPy's ComplexWarning, their imaginary parts dropped).
    let is_complex = |x: &Bound<'_, PyAny>| {
        x.is_instance_of::<pyo3::types::PyComplex>()
            || x.get_type()
                .name()
                .is_ok_and(|n| n.to_str().is_ok_and(|n| n.starts_with("complex")))
    };
    if !obj.is_instance_of::<PyString>() {
        if let Ok(items) = obj.try_iter() {
            for item in items.take(N + 1).flatten() {
                if is_bool(&item) {
                    return Err(errors::value(format!(
                        "{what} must be a sequence of {N} numbers, not bools; got {}",
                        describe(obj)
                    )));
                }
                if is_complex(&item) {
                    return Err(errors::value(format!(
                        "{what} must be a sequence of {N} real numbers, not complex ones; got {}",
                        describe(obj)
                    )));
                }
            }
        }
    }
    let values: Vec<f64> = obj.extract().map_err(|_| {
        errors::value(format!(
            "{what} must be a sequence of {N} numbers, got {}",
            describe(obj)
        ))
    })?;
    let array: [f64; N] = values.as_slice().try_into().map_err(|_| {
        errors::value(format!(
            "{what} must have {N} components, got {}",
            values.len()
        ))
    })?;
    // A finite number beyond f32 would reach the engine as inf and be reported as one.
    if let Some((i, v)) =
        (array.iter().enumerate()).find(|(_, v)| v.is_finite() && v.abs() > f64::from(f32::MAX))
    {
        return Err(errors::value(format!(
            "{what}[{i}] = {v:e} is beyond single precision (the engine's f32: at most 3.4e38 in \
             magnitude)"
        )));
    }
    Ok(array.map(|v| v as f32))
}

/// `obj` unless it is a bool: `True == 1` to Python, but never meant as a number or an index
/// here.
pub fn not_bool<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<&'a Bound<'py, PyAny>> {
    (!obj.is_instance_of::<PyBool>()).then_some(obj)
}

/// A 3-vector from a sequence.
pub fn vec3(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec3> {
    floats::<3>(obj, what).map(Vec3::from)
}

/// A quaternion `[x, y, z, w]` from a sequence (the engine checks it is unit length).
pub fn quat(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Quat> {
    floats::<4>(obj, what).map(Quat::from_array)
}

/// `repr(obj)` shortened, for error messages.
pub fn describe(obj: &Bound<'_, PyAny>) -> String {
    let text = obj
        .repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<unprintable>".into());
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    if text.chars().count() > 60 {
        format!(
            "{}... ({type_name})",
            text.chars().take(57).collect::<String>()
        )
    } else {
        format!("{text} ({type_name})")
    }
}

/// A Python value (dicts, lists, tuples, numbers, strings, booleans, None, NumPy arrays and
/// scalars) as JSON, so that a scene dict goes through the same serde definitions as a scene
/// file. `path` names the position in errors, e.g. `scene["body"][1]["mass"]`.
pub fn to_json(obj: &Bound<'_, PyAny>, path: &str) -> PyResult<serde_json::Value> {
    to_json_within(obj, path, MAX_SCENE_DEPTH)
}

/// How deep a scene dict may nest: a scene's deepest value is a number in a list in a table
/// in a list of tables (4 levels). Beyond this, a dict or list that contains itself recursed
/// until the stack overflowed (QA 2026-12-07: a segfault).
const MAX_SCENE_DEPTH: usize = 32;

/// [`to_json`] with `depth` levels of dicts and lists left.
fn to_json_within(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    let nested = obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>();
    if nested && depth == 0 {
        return Err(errors::value(format!(
            "{}...: the scene nests dicts and lists more than {MAX_SCENE_DEPTH} levels deep \
             (a dict or list that contains itself?); a scene needs 4",
            path.chars().take(80).collect::<String>()
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        // QA (2026-12-06): `links = 2**70` was a bare OverflowError.
        let v: i64 = obj.extract().map_err(|_| {
            errors::value(format!(
                "{path} = {obj}: too large for any scene value (at most {})",
                i64::MAX
            ))
        })?;
        return Ok(Value::from(v));
    }
    if obj.is_instance_of::<PyFloat>() {
        let v: f64 = obj.extract()?;
        return serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| {
                errors::value(format!("{path} = {v}: scene values must be finite numbers"))
            });
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            let key: String = k.extract().map_err(|_| {
                errors::value(format!(
                    "{path}: keys must be strings, got {}",
                    describe(&k)
                ))
            })?;
            let value = to_json_within(&v, &format!("{path}[{key:?}]"), depth - 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            items.push(to_json_within(&item?, &format!("{path}[{i}]"), depth - 1)?);
        }
        return Ok(Value::Array(items));
    }
    // NumPy arrays and scalars (and anything else with `tolist`, e.g. array-likes).
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        // Counted as a level: a `tolist` that returns another such object ends too.
        if !plain.is(obj) && depth > 0 {
            return to_json_within(&plain, path, depth - 1);
        }
    }
    Err(errors::value(format!(
        "{path}: cannot use {} in a scene; use dicts, lists, numbers, strings and booleans",
        describe(obj)
    )))
}

/// A diagnostic column given by index (0-7) or by name (`"anchor_error_norm"`; the dotted
/// `"anchor_error.x"` that logs before 2026-12-04 used is accepted too).
pub fn column_index(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(name) = obj.extract::<String>() {
        return COLUMN_NAMES
            .iter()
            .position(|n| *n == name)
            .or_else(|| {
                ["anchor_error.x", "anchor_error.y", "anchor_error.z"]
                    .iter()
                    .position(|n| *n == name)
            })
            .ok_or_else(|| {
                errors::value(format!(
                    "no diagnostic column named {name:?}; the columns are {}",
                    COLUMN_NAMES.join(", ")
                ))
            });
    }
    let index: i64 = not_bool(obj)
        .and_then(|o| o.extract().ok())
        .ok_or_else(|| {
            errors::value(format!(
                "a column is an index 0-7 or a name such as \"anchor_error_norm\", got {}",
                describe(obj)
            ))
        })?;
    // A negative index counts from the end, as for bodies, joints and frames (QA,
    // 2026-12-06: -1 was refused here alone).
    let count = COLUMN_COUNT as i64;
    (-count..count)
        .contains(&index)
        .then(|| index.rem_euclid(count) as usize)
        .ok_or_else(|| {
            errors::value(format!(
                "column {index} is out of range: there are {COLUMN_COUNT} columns (0-7, or -8 to \
                 -1 from the end)"
            ))
        })
}

/// The plural of `kind`: "body" -> "bodies", "joint" -> "joints".
fn plural(kind: &str) -> String {
    match kind.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{kind}s"),
    }
}

/// An index into `names` given as an int (negative counts from the end) or a name.
pub fn select(obj: &Bound<'_, PyAny>, names: &[String], kind: &str) -> PyResult<usize> {
    let kinds = plural(kind);
    if let Ok(name) = obj.extract::<String>() {
        return names.iter().position(|n| *n == name).ok_or_else(|| {
            // As `lavender scrub --joint`: names containing it, ignoring case (QA 2026-12-07).
            let like = lavender_replay::format::names_like_clause(names, &name, 5);
            errors::value(format!(
                "no {kind} named {name:?} ({} {kinds}){like}",
                names.len(),
            ))
        });
    }
    let index: i64 = match not_bool(obj).map(|o| o.extract::<i64>()) {
        Some(Ok(index)) => index,
        // An int beyond i64: out of range whatever the count.
        Some(Err(_)) if obj.is_instance_of::<PyInt>() => {
            return Err(errors::value(format!(
                "{kind} index {} is out of range: there are {} {kinds}",
                describe(obj),
                names.len()
            )))
        }
        // The wrong type (None, a bool, a float): TypeError, as `log[1.5]` (QA 2026-12-07:
        // ValueError here and TypeError there for the same mistake).
        _ => {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "a {kind} is an index or a name, got {}",
                describe(obj)
            )))
        }
    };
    let n = names.len() as i64;
    let i = if index < 0 { index + n } else { index };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(errors::value(format!(
            "{kind} index {index} is out of range: there are {n} {kinds}"
        )))
    }
}

/// An owned `(rows, N)` float32 array copied from `rows`.
pub fn copy2<'py, const N: usize>(py: Python<'py>, rows: &[[f32; N]]) -> Bound<'py, PyArray2<f32>> {
    Array2::from_shape_vec((rows.len(), N), rows.as_flattened().to_vec())
        .expect("the shape matches the data")
        .into_pyarray(py)
}

/// A read-only `(rows, N)` float32 array that reads `rows` in place, with `owner` as its
/// base object (kept alive by the array).
///
/// # Safety
///
/// `rows` must live inside memory that `owner` keeps alive and that is neither freed,
/// reallocated nor written through a path that could race with readers for as long as
/// `owner` lives. The array cannot be made writeable from Python (its base is not an array
/// and exposes no buffer), so nothing writes through it.
pub unsafe fn view2<'py, const N: usize>(
    rows: &[[f32; N]],
    owner: Bound<'py, PyAny>,
) -> Bound<'py, PyArray2<f32>> {
    let view = ArrayView2::from_shape((rows.len(), N), rows.as_flattened())
        .expect("the shape matches the data");
    // SAFETY: forwarded to the caller (see `# Safety`).
    let array = unsafe { PyArray2::borrow_from_array(&view, owner) };
    array.readwrite().make_nonwriteable();
    array
}

/// A read-only float32 array that reads `values` in place, with `owner` as its base object.
///
/// # Safety
///
/// As for [`view2`].
pub unsafe fn view1<'py>(values: &[f32], owner: Bound<'py, PyAny>) -> Bound<'py, PyArray1<f32>> {
    let view = ArrayView1::from(values);
    // SAFETY: forwarded to the caller (see `# Safety`).
    let array = unsafe { PyArray1::borrow_from_array(&view, owner) };
    array.readwrite().make_nonwriteable();
    array
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn plurals_are_english() {
        assert_eq!(plural("body"), "bodies");
        assert_eq!(plural("joint"), "joints");
    }
}
