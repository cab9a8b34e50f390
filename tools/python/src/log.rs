//! `lavender.Log` and `lavender.Frame`: a recorded run, memory-mapped, with frames and
//! columns as NumPy arrays (read in place where the layout allows), spike finding and diff.

use std::path::PathBuf;

use lavender_replay::diff::{self, DiffReport, Location, LocationKind, Tolerance};
use lavender_replay::scrub::{self, SkippedFrame, SpikeParams};
use lavender_replay::{h5, resume};
use lavender_replay::{ColumnMax, FrameView, LogReader, ReplayError, StorageKeepAlive};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::{Arc, PoisonError, RwLock};

use crate::convert;
use crate::errors;
use crate::sim::Sim;

/// A recorded run, opened read-only through a memory map.
///
/// ``Log(path)`` opens a log written by ``Sim.record`` or ``lavender run --record``; a log whose
/// writer was killed opens too (``recovery`` says what was dropped). Frames are one per
/// substep::
///
///     log = lavender.Log("run.lvlog")
///     len(log), log.joint_names
///     log[-1].diagnostics           # (joints, 8) float32, read in place from the file
///     log.column("hinge", "anchor_error_norm")   # one joint's column over time
///
/// Arrays read in place (``Frame.diagnostics``, ``poses``, ``velocities``,
/// ``solver_state``, ``Log.diagnostics``) are read-only and keep the memory map they were read
/// from alive (also after ``refresh`` re-maps a growing file). While a Log
/// or any such array exists, the file must not be modified or truncated by another program
/// (Lavender's own writers only append, and ``Sim.record`` replaces a file by unlinking it
/// first, which is safe). A file truncated or written over in place (``cp other.lvlog
/// run.lvlog``) between two calls is an OSError at the next call that reads a frame (each
/// frame's record head is checked against the checksum it was validated with); while a
/// call reads it, or under an array read in place, the process dies of SIGBUS (truncated)
/// or reads the other file's bytes (written over): keep copies (``np.array(a)``) of arrays
/// you keep across such a change.
#[pyclass(module = "lavender", name = "Log", frozen)]
pub struct Log {
    /// The reader; [`Log::refresh`] replaces it in place (only when no other thread holds a
    /// clone of the `Arc`), `close` drops it.
    reader: RwLock<Option<Arc<LogReader>>>,
    /// The path it was opened with (also after `close`).
    path: PathBuf,
}

/// The base object of the arrays read in place: it keeps the bytes they lie in (the log's
/// memory map as it was when they were made) mapped, also after ``Log.refresh`` re-maps the
/// file and after the Log is gone.
#[pyclass(module = "lavender", name = "_LogBytes", frozen)]
struct LogBytes {
    _keep: StorageKeepAlive,
}

/// One substep of a recorded run (from ``Log.frame``, ``log[i]``, ``Log.frame_at_substep``
/// or ``Log.frame_at_time``). Its arrays are read in place from the log's memory map.
/// What a [`Frame`] pickles as: `operator.getitem` and its arguments, the log and the index.
type FrameReduced<'py> = (Bound<'py, PyAny>, (Py<Log>, usize));

#[pyclass(module = "lavender", name = "Frame", frozen)]
pub struct Frame {
    log: Py<Log>,
    index: usize,
    substep: u64,
    time: f64,
    total_energy: f64,
    state_hash: u64,
    has_solver_state: bool,
}

fn path_arg(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    obj.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "path must be a str or os.PathLike, got {}",
            convert::describe(obj)
        ))
    })
}

/// `Some(joint)` as an int, `None` as -1 (for integer arrays).
fn joint_or_minus_one(j: Option<u32>) -> i64 {
    j.map_or(-1, i64::from)
}

/// Frame `index` of `reader`, as a Python error when it is corrupt.
fn frame_of(reader: &LogReader, index: usize) -> PyResult<FrameView<'_>> {
    reader.frame(index).map_err(errors::replay)
}

/// One `RuntimeWarning` naming the corrupt frames a call passed over, if any.
fn warn_skipped(
    py: Python<'_>,
    reader: &LogReader,
    skipped: &[SkippedFrame],
    what: &str,
) -> PyResult<()> {
    if skipped.is_empty() {
        return Ok(());
    }
    let listed: Vec<String> = skipped
        .iter()
        .take(5)
        .map(|f| format!("{} (substep {})", f.index, f.substep))
        .collect();
    let more = skipped.len().saturating_sub(5);
    let text = format!(
        "{}: {} corrupt frame{} passed over {what}: {}{} (they fail their checksums)",
        reader.path().display(),
        skipped.len(),
        if skipped.len() == 1 { " was" } else { "s were" },
        listed.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
    );
    crate::sim::runtime_warning(py, text)
}

/// A whole-log read's error; a corrupt frame's says how to read past it.
fn whole_log_error(py: Python<'_>, e: ReplayError) -> PyErr {
    let corrupt = matches!(e, ReplayError::CorruptFrame { .. });
    let err = errors::replay(e);
    if !corrupt {
        return err;
    }
    let text = format!(
        "{}; pass skip_corrupt=True to read the other frames (NaN for the corrupt ones, with \
         a warning naming them)",
        err.value(py)
    );
    PyErr::from_type(err.get_type(py), text)
}

impl Log {
    /// The current reader (a clone of the `Arc`; cheap).
    fn reader(&self) -> PyResult<Arc<LogReader>> {
        let reader = self
            .reader
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| self.closed())?;
        // A file truncated in place since the last call (`cp` over it) is an OSError here,
        // not a SIGBUS at the next read (QA, 2026-12-05).
        reader.check_length().map_err(errors::replay)?;
        Ok(reader)
    }

    /// The error of a call on a closed Log.
    fn closed(&self) -> PyErr {
        errors::value(format!(
            "the log {} is closed (Log.close() or the end of its with block); open it again \
             with lavender.Log(path)",
            self.path.display()
        ))
    }

    /// `index`, where a negative index counts from the end, checked.
    fn position(&self, index: i64) -> PyResult<usize> {
        let n = self.reader()?.len() as i64;
        let i = if index < 0 { index + n } else { index };
        if (0..n).contains(&i) {
            Ok(i as usize)
        } else {
            Err(PyIndexError::new_err(format!(
                "frame {index} is out of range: the log has {n} frames"
            )))
        }
    }

    fn make_frame(slf: &Bound<'_, Self>, index: usize) -> PyResult<Frame> {
        let reader = slf.get().reader()?;
        let f = frame_of(&reader, index)?;
        Ok(Frame {
            log: slf.clone().unbind(),
            index,
            substep: f.substep(),
            time: f.time(),
            total_energy: f.total_energy(),
            state_hash: f.state_hash(),
            has_solver_state: f.has_solver_state(),
        })
    }

    fn body(&self, body: &Bound<'_, PyAny>) -> PyResult<usize> {
        let reader = self.reader()?;
        let h = reader.header();
        let names: Vec<String> = (0..h.body_count).map(|i| h.body_name(i)).collect();
        convert::select(body, &names, "body")
    }

    /// One row per frame, from `row` (which returns `None` only past the frame's arrays,
    /// impossible for an index checked against the header, whose counts every frame has).
    fn rows_over_time<const N: usize>(
        reader: &LogReader,
        skip_corrupt: bool,
        skipped: &mut Vec<SkippedFrame>,
        row: impl Fn(&FrameView<'_>) -> Option<[f32; N]>,
    ) -> lavender_replay::Result<Vec<[f32; N]>> {
        (0..reader.len())
            .map(|i| match reader.frame(i) {
                Ok(f) => Ok(row(&f).unwrap_or([f32::NAN; N])),
                Err(ReplayError::CorruptFrame { index, substep, .. }) if skip_corrupt => {
                    skipped.push(SkippedFrame { index, substep });
                    Ok([f32::NAN; N])
                }
                Err(e) => Err(e),
            })
            .collect()
    }

    fn joint(&self, joint: &Bound<'_, PyAny>) -> PyResult<usize> {
        let reader = self.reader()?;
        let h = reader.header();
        let names: Vec<String> = (0..h.joint_count).map(|j| h.joint_name(j)).collect();
        convert::select(joint, &names, "joint")
    }
}

#[cfg(target_endian = "little")]
mod in_place {
    //! On little-endian targets the archived floats are native floats: arrays read the
    //! memory map in place.
    use super::*;

    /// The base object for arrays read from `reader`'s bytes.
    fn base<'py>(py: Python<'py>, reader: &LogReader) -> Bound<'py, PyAny> {
        Bound::new(
            py,
            LogBytes {
                _keep: reader.keep_alive(),
            },
        )
        .expect("allocating a small Python object")
        .into_any()
    }

    /// # Safety
    /// `rows` must lie in `reader`'s bytes.
    unsafe fn view<'py, const N: usize>(
        py: Python<'py>,
        rows: &[[f32; N]],
        reader: &LogReader,
    ) -> Bound<'py, PyArray2<f32>> {
        // SAFETY: the rows lie in the reader's bytes, which the base object keeps mapped and
        // unmoved for as long as the array lives (`LogReader::keep_alive`, also across a
        // refresh), and `LogReader::open`'s contract (no truncation or modification of the
        // file) is documented on `Log`.
        unsafe { convert::view2(rows, base(py, reader)) }
    }

    pub fn diagnostics<'py>(
        py: Python<'py>,
        reader: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        // SAFETY: `f` was read from `reader`.
        unsafe { view(py, f.diagnostics(), reader) }
    }

    pub fn poses<'py>(
        py: Python<'py>,
        reader: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        // SAFETY: as above.
        unsafe { view(py, f.poses(), reader) }
    }

    pub fn velocities<'py>(
        py: Python<'py>,
        reader: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        // SAFETY: as above.
        unsafe { view(py, f.velocities(), reader) }
    }

    pub fn solver_state<'py>(
        py: Python<'py>,
        reader: &LogReader,
        f: &FrameView<'_>,
    ) -> Option<Bound<'py, PyArray1<f32>>> {
        // SAFETY: the solver state lies in the reader's bytes, as above.
        f.solver_state()
            .map(|s| unsafe { convert::view1(s, base(py, reader)) })
    }
}

#[cfg(not(target_endian = "little"))]
mod in_place {
    //! On big-endian targets the archived little-endian floats must be converted: copies.
    use super::*;
    use crate::convert::copy2;

    pub fn diagnostics<'py>(
        py: Python<'py>,
        _: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        copy2(py, &f.diagnostic_rows().collect::<Vec<_>>())
    }
    pub fn poses<'py>(
        py: Python<'py>,
        _: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        copy2(py, &f.pose_rows().collect::<Vec<_>>())
    }
    pub fn velocities<'py>(
        py: Python<'py>,
        _: &LogReader,
        f: &FrameView<'_>,
    ) -> Bound<'py, PyArray2<f32>> {
        copy2(py, &f.velocity_rows().collect::<Vec<_>>())
    }
    pub fn solver_state<'py>(
        py: Python<'py>,
        reader: &LogReader,
        f: &FrameView<'_>,
    ) -> Option<Bound<'py, PyArray1<f32>>> {
        let _ = (py, reader, f);
        None
    }
}

fn column_max<'py>(
    py: Python<'py>,
    values: &[ColumnMax],
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let v: Vec<f32> = values.iter().map(|c| c.value).collect();
    let j: Vec<i64> = values.iter().map(|c| joint_or_minus_one(c.joint)).collect();
    Ok((
        PyArray1::from_vec(py, v).into_any(),
        PyArray1::from_vec(py, j).into_any(),
    ))
}

fn location<'py>(py: Python<'py>, loc: &Option<Location>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(loc) = loc else { return Ok(None) };
    let d = PyDict::new(py);
    d.set_item(
        "kind",
        match loc.kind {
            LocationKind::Body => "body",
            LocationKind::Joint => "joint",
        },
    )?;
    d.set_item("index", loc.index)?;
    d.set_item("name", &loc.name)?;
    d.set_item("field", &loc.field)?;
    Ok(Some(d))
}

/// A frame index as Python gives it: an int too large for 64 bits is out of range (an
/// IndexError, as for a list), anything but an int a TypeError.
fn frame_index(index: &Bound<'_, PyAny>, log: &Log) -> PyResult<i64> {
    // A bool is never meant as an index (QA 2026-12-07: `log[True]` was frame 1).
    if index.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(
            "a frame index is an int (negative counts from the end), not bool",
        ));
    }
    if let Ok(i) = index.extract::<i64>() {
        return Ok(i);
    }
    if python_int(index).is_some() {
        let n = log.reader()?.len();
        return Err(PyIndexError::new_err(format!(
            "frame {index} is out of range: the log has {n} frames"
        )));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "a frame index is an int (negative counts from the end) or a slice, not {}",
        index.get_type().name()?
    )))
}

/// A substep bound from Python: an int beyond 64 bits is beyond every log (u64::MAX, not
/// an OverflowError: QA 2026-12-06), a negative one a ValueError naming it.
fn substep_bound(name: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name} is an int, not bool"
        )));
    }
    let e = match v.extract::<i64>() {
        Ok(s) => return non_negative(name, s),
        Err(e) => e,
    };
    match python_int(v) {
        Some(v) if v.lt(0)? => Err(errors::value(format!("{name} = {v}: must be >= 0"))),
        Some(v) => Ok(v.extract::<u64>().unwrap_or(u64::MAX)),
        None => Err(e),
    }
}

/// `v` as a Python int where it is an integer of any kind (a Python int, or a NumPy integer
/// through `__index__`: QA 2026-12-07, `np.uint64(2**63 + 5)` was "not uint64"), not a bool.
fn python_int<'py>(v: &Bound<'py, PyAny>) -> Option<Bound<'py, PyAny>> {
    use pyo3::types::{PyBool, PyInt};
    if v.is_instance_of::<PyInt>() {
        return (!v.is_instance_of::<PyBool>()).then(|| v.clone());
    }
    let numpy_int = v
        .getattr("dtype")
        .and_then(|d| d.getattr("kind"))
        .and_then(|k| k.extract::<String>())
        .is_ok_and(|k| k == "i" || k == "u");
    numpy_int
        .then(|| v.call_method0("__index__").ok())
        .flatten()
        .filter(|i| i.is_instance_of::<PyInt>())
}

/// A whole-number argument named `name`: any Python int (beyond 64 bits a ValueError that
/// names the argument and gives the number, not the bare OverflowError of the conversion;
/// QA 2026-12-07), not True or False.
pub(crate) fn whole(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{name} must be a whole number, not {obj}"
        )));
    }
    if !obj.is_instance_of::<pyo3::types::PyInt>() {
        // NumPy integers and other `__index__` types convert; anything else is pyo3's
        // TypeError, which names the type.
        return obj.extract::<i64>().map_err(|e| {
            match obj.is_instance_of::<pyo3::types::PyFloat>() {
                true => pyo3::exceptions::PyTypeError::new_err(format!(
                    "{name} must be a whole number, got {obj}"
                )),
                false => e,
            }
        });
    }
    obj.extract::<i64>().map_err(|_| {
        let why = match obj.lt(0).unwrap_or(false) {
            true => "must be >= 0".to_string(),
            false => format!("is too large (at most {})", i64::MAX),
        };
        errors::value(format!("{name} = {obj}: {why}"))
    })
}

/// Named [`whole`] extractors for `#[pyo3(from_py_with = ...)]`.
pub(crate) mod whole_arg {
    use pyo3::prelude::*;
    macro_rules! named {
        ($($f:ident),*) => {$(
            pub(crate) fn $f(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
                super::whole(stringify!($f), obj)
            }
        )*};
    }
    named!(n, window, min_history, every, keyframe_every);
}

/// A substep or count from Python: a ValueError naming it when negative (instead of the
/// OverflowError of an unsigned conversion).
pub(crate) fn non_negative(name: &str, v: i64) -> PyResult<u64> {
    u64::try_from(v).map_err(|_| errors::value(format!("{name} = {v}: must be >= 0")))
}

fn diff_dict<'py>(py: Python<'py>, r: &DiffReport) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("identical", r.identical)?;
    d.set_item("first_divergent_substep", r.first_divergent_substep)?;
    let reason = r.reason.map(|why| match why {
        diff::Divergence::Values => "values",
        diff::Divergence::HiddenState => "hidden_state",
        diff::Divergence::LogEnds => "log_ends",
        diff::Divergence::SubstepNumbering => "substep_numbering",
    });
    d.set_item("reason", reason)?;
    d.set_item("where", location(py, &r.where_)?)?;
    let max = PyDict::new(py);
    max.set_item("value", r.max_deviation.value)?;
    max.set_item("substep", r.max_deviation.substep)?;
    max.set_item("location", location(py, &r.max_deviation.location)?)?;
    d.set_item("max_deviation", max)?;
    d.set_item("frames_compared", r.frames_compared)?;
    d.set_item(
        "extent",
        match r.extent {
            diff::Extent::Whole => "whole",
            diff::Extent::Overlap => "overlap",
        },
    )?;
    d.set_item("first_common_substep", r.first_common_substep)?;
    d.set_item("last_common_substep", r.last_common_substep)?;
    d.set_item("frames_a", r.frames_a)?;
    d.set_item("frames_b", r.frames_b)?;
    d.set_item("scene_hash_mismatch", r.scene_hash_mismatch)?;
    d.set_item("substep_lengths", r.substep_lengths.to_vec())?;
    d.set_item("substep_lengths_differ", r.substep_lengths_differ)?;
    Ok(d)
}

#[pymethods]
impl Log {
    #[new]
    fn new(py: Python<'_>, path: &Bound<'_, PyAny>) -> PyResult<Log> {
        let path = path_arg(path)?;
        // SAFETY: `LogReader::open` requires that the file is not truncated or modified while
        // the reader or anything borrowed from it lives. Lavender's writers only append, and
        // every writer unlinks an existing file before creating a new one; the requirement
        // for other programs is documented on the class.
        let reader = py
            .detach(|| unsafe { LogReader::open(&path) })
            .map_err(errors::replay)?;
        Ok(Log {
            reader: RwLock::new(Some(Arc::new(reader))),
            path,
        })
    }

    /// Closes the log: its memory map is released once no array read in place from it is
    /// left (each keeps the bytes it lies in mapped), and every later call on this Log
    /// raises ValueError. Closing twice is fine. ``with lavender.Log(path) as log:`` closes
    /// it at the end of the block::
    ///
    ///     with lavender.Log("run.lvlog") as log:
    ///         err = log.column("hinge", "anchor_error_norm")
    ///
    /// Raises RuntimeError if another thread is inside a call on this Log that released
    /// the GIL; close once it has returned.
    fn close(&self) -> PyResult<()> {
        let mut current = self.reader.write().unwrap_or_else(PoisonError::into_inner);
        if current.as_mut().is_some_and(|r| Arc::get_mut(r).is_none()) {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the log is being read by another thread (a Log call that released the GIL \
                 is still running); close it once that call has returned",
            ));
        }
        *current = None;
        Ok(())
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.reader()?.len())
    }

    /// Picks up the frames a writer appended since the log was opened or last refreshed
    /// (a run still being recorded) and returns how many; 0 once the log is finished.
    /// Raises OSError when the path now holds another file (a new recording to the same
    /// path): this Log keeps the run it opened; open the path again for the new one.
    /// Frames and arrays taken before stay valid: an array keeps the mapping it was read
    /// from. Raises RuntimeError if another thread is inside a call on this Log that
    /// released the GIL (``column``, ``spikes``, ...); refresh once it has returned. The GIL
    /// is held while the new frames are checked. ::
    ///
    ///     log = lavender.Log("live.lvlog")   # while the run is still recording
    ///     while not log.finished:
    ///         if log.refresh():
    ///             print(len(log), log.summaries()["max_anchor_error"][-1])
    ///         time.sleep(1.0)
    fn refresh(&self) -> PyResult<usize> {
        let mut current = self.reader.write().unwrap_or_else(PoisonError::into_inner);
        let Some(current) = current.as_mut() else {
            return Err(self.closed());
        };
        let Some(reader) = Arc::get_mut(current) else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the log is being read by another thread (a Log call that released the GIL \
                 is still running); refresh once it has returned",
            ));
        };
        if reader.replaced() {
            return Err(pyo3::exceptions::PyOSError::new_err(format!(
                "{} now holds another file (a new recording to the same path replaced it); \
                 this Log keeps reading the run it opened: open the path again with \
                 lavender.Log(path) for the new one",
                reader.path().display()
            )));
        }
        // With the GIL held (QA 2026-12-07): released here, the write guard stayed held while
        // taking the GIL back, and another thread holding the GIL and waiting to read this
        // Log (`len(log)` beside a follower's `refresh`) deadlocked the process. Holding it,
        // no thread can wait for the lock: each takes it only with the GIL.
        reader.refresh().map_err(errors::replay)
    }

    /// ``log[i]`` is frame ``i`` (as ``frame``); ``log[a:b:k]`` a list of the frames of that
    /// slice, as a list's slice picks them (QA 2026-12-07: a slice was a TypeError).
    fn __getitem__<'py>(
        slf: &Bound<'py, Self>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        if let Ok(slice) = index.cast::<pyo3::types::PySlice>() {
            let len = slf.get().reader()?.len();
            let picked = slice.indices(len as isize)?;
            let frames = PyList::empty(py);
            let mut i = picked.start;
            for _ in 0..picked.slicelength {
                frames.append(Log::make_frame(slf, i as usize)?)?;
                i += picked.step;
            }
            return Ok(frames.into_any());
        }
        Ok(Bound::new(py, Log::frame(slf, index)?)?.into_any())
    }

    /// Frame ``index`` (0-based position in the log; negative counts from the end). Same as
    /// ``log[index]``. Raises IndexError when out of range, OSError when the frame is
    /// corrupt.
    fn frame(slf: &Bound<'_, Self>, index: &Bound<'_, PyAny>) -> PyResult<Frame> {
        let i = slf.get().position(frame_index(index, slf.get())?)?;
        Log::make_frame(slf, i)
    }

    /// The frame recording global substep ``substep`` (ValueError if the log has none).
    fn frame_at_substep(slf: &Bound<'_, Self>, substep: &Bound<'_, PyAny>) -> PyResult<Frame> {
        // An int beyond 64 bits is beyond every log (QA 2026-12-06: a bare OverflowError).
        let shown = substep.to_string();
        let substep = substep_bound("substep", substep)?;
        let r = slf.get().reader()?;
        let i = r.index_of_substep(substep).ok_or_else(|| {
            let range = match (r.index().first(), r.index().last()) {
                (Some(a), Some(b)) => format!(
                    "it holds substeps {} to {}",
                    a.summary.substep, b.summary.substep
                ),
                _ => "it is empty".into(),
            };
            errors::value(format!("the log has no frame for substep {shown}: {range}"))
        })?;
        Log::make_frame(slf, i)
    }

    /// The frame nearest ``time`` seconds: between two frames the nearer (a tie the
    /// earlier), after the last frame the last, and ``time = 0`` the first substep's
    /// (ValueError if ``time`` is not finite, as for ``lavender scrub --time``, or precedes
    /// the first frame by more than a substep).
    fn frame_at_time(slf: &Bound<'_, Self>, time: &Bound<'_, PyAny>) -> PyResult<Frame> {
        // A bool is no time (QA 2026-12-07: `frame_at_time(True)` was t = 1 s).
        let time = crate::sim::seconds("time", time)?;
        if !time.is_finite() {
            return Err(errors::value(format!(
                "time = {time}: give a finite number of seconds"
            )));
        }
        let r = slf.get().reader()?;
        let i = r.index_at_time(time).ok_or_else(|| {
            let first = r
                .index()
                .first()
                .map_or("the log is empty".to_string(), |m| {
                    format!(
                        "it precedes the first frame (at {} s) by more than a substep",
                        m.summary.time
                    )
                });
            errors::value(format!("no frame near t = {time} s: {first}"))
        })?;
        Log::make_frame(slf, i)
    }

    /// The ``(joints, 8)`` diagnostics of frame ``index``, read in place (read-only). Same
    /// as ``log[index].diagnostics``.
    fn diagnostics<'py>(
        slf: &Bound<'py, Self>,
        index: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let log = slf.get();
        let position = log.position(frame_index(index, log)?)?;
        let reader = log.reader()?;
        let f = frame_of(&reader, position)?;
        Ok(in_place::diagnostics(slf.py(), &reader, &f))
    }

    /// One joint's diagnostic column over the whole log, a float32 array with one value per
    /// frame (pair it with ``substeps()`` or ``times()``). ``joint`` is a name or index,
    /// ``column`` an index 0-7 (negative from the end) or a name from
    /// ``lavender.COLUMN_NAMES``. Validates every frame on first use; the GIL is released
    /// while reading. A frame that fails its
    /// checksum is an error, unless ``skip_corrupt=True``: then its value is NaN and a
    /// RuntimeWarning names it (as ``lavender scrub`` passes over such frames).
    #[pyo3(signature = (joint, column, *, skip_corrupt = false))]
    fn column<'py>(
        &self,
        py: Python<'py>,
        joint: &Bound<'py, PyAny>,
        column: &Bound<'py, PyAny>,
        skip_corrupt: bool,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let j = self.joint(joint)?;
        let c = convert::column_index(column)?;
        let reader = &*self.reader()?;
        let mut skipped = Vec::new();
        let values = py
            .detach(|| {
                if !skip_corrupt {
                    return reader
                        .column(j, c)
                        .map(|it| it.map(|(_, v)| v).collect::<Vec<f32>>());
                }
                Log::rows_over_time(reader, true, &mut skipped, |f| {
                    Some([f.diagnostics()[j][c]])
                })
                .map(|rows| rows.into_iter().map(|[v]| v).collect())
            })
            .map_err(|e| whole_log_error(py, e))?;
        warn_skipped(py, reader, &skipped, "reading the column")?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// One joint's eight diagnostic columns over the whole log, a ``(frames, 8)`` float32
    /// array (``lavender scrub --joint``'s data; one pass over the log where eight
    /// ``column`` calls make eight); ``joint`` is a name or index. ``skip_corrupt`` as for
    /// ``column``.
    #[pyo3(signature = (joint, *, skip_corrupt = false))]
    fn joint_diagnostics<'py>(
        &self,
        py: Python<'py>,
        joint: &Bound<'py, PyAny>,
        skip_corrupt: bool,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let j = self.joint(joint)?;
        let reader = self.reader()?;
        let mut skipped = Vec::new();
        let rows = py
            .detach(|| {
                Log::rows_over_time(&reader, skip_corrupt, &mut skipped, |f| f.diagnostic(j))
            })
            .map_err(|e| whole_log_error(py, e))?;
        warn_skipped(py, &reader, &skipped, "reading the joint's diagnostics")?;
        Ok(convert::copy2(py, &rows))
    }

    /// One body's poses over the whole log, a ``(frames, 7)`` float32 array of
    /// ``[x, y, z, qx, qy, qz, qw]``; ``body`` is a name or index. The GIL is released while
    /// reading. ``skip_corrupt`` as for ``column``.
    #[pyo3(signature = (body, *, skip_corrupt = false))]
    fn body_poses<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
        skip_corrupt: bool,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let b = self.body(body)?;
        let reader = self.reader()?;
        let mut skipped = Vec::new();
        let rows = py
            .detach(|| Log::rows_over_time(&reader, skip_corrupt, &mut skipped, |f| f.pose(b)))
            .map_err(|e| whole_log_error(py, e))?;
        warn_skipped(py, &reader, &skipped, "reading the poses")?;
        Ok(convert::copy2(py, &rows))
    }

    /// One body's velocities over the whole log, a ``(frames, 6)`` float32 array of
    /// ``[vx, vy, vz, wx, wy, wz]``; ``body`` is a name or index. ``skip_corrupt`` as for
    /// ``column``.
    #[pyo3(signature = (body, *, skip_corrupt = false))]
    fn body_velocities<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
        skip_corrupt: bool,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let b = self.body(body)?;
        let reader = self.reader()?;
        let mut skipped = Vec::new();
        let rows = py
            .detach(|| Log::rows_over_time(&reader, skip_corrupt, &mut skipped, |f| f.velocity(b)))
            .map_err(|e| whole_log_error(py, e))?;
        warn_skipped(py, &reader, &skipped, "reading the velocities")?;
        Ok(convert::copy2(py, &rows))
    }

    /// The substep number of every frame, a uint64 array (from the index: no frame is read).
    fn substeps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        Ok(PyArray1::from_iter(
            py,
            self.reader()?.summaries().map(|s| s.substep),
        ))
    }

    /// The simulation time after every frame's substep, a float64 array, s.
    fn times<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(PyArray1::from_iter(
            py,
            self.reader()?.summaries().map(|s| s.time),
        ))
    }

    /// The per-frame summaries the writer stored, as a dict of arrays with one entry per
    /// frame, named as the HDF5 export's ``/summary`` datasets: ``substep`` (uint64),
    /// ``time``, ``total_energy`` (float64), ``state_hash`` (uint64), ``max_anchor_error``,
    /// ``max_angular_error``, ``max_limit_violation`` (float32: the frame's largest value of
    /// columns 3, 4, 5) with ``max_anchor_error_joint``, ``max_angular_error_joint``,
    /// ``max_limit_violation_joint`` (int64: the joint holding it, -1 for none: no joints,
    /// or a maximum of 0), ``first_non_finite_joint``, ``first_non_finite_body`` (int64, -1
    /// for none) and ``non_finite`` (bool).
    fn summaries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let reader = self.reader()?;
        let s: Vec<_> = reader.summaries().copied().collect();
        let d = PyDict::new(py);
        d.set_item(
            "substep",
            PyArray1::from_iter(py, s.iter().map(|x| x.substep)),
        )?;
        d.set_item("time", PyArray1::from_iter(py, s.iter().map(|x| x.time)))?;
        d.set_item(
            "total_energy",
            PyArray1::from_iter(py, s.iter().map(|x| x.total_energy)),
        )?;
        d.set_item(
            "state_hash",
            PyArray1::from_iter(py, reader.index().iter().map(|m| m.state_hash)),
        )?;
        // The names of the HDF5 export's `/summary` datasets (QA, 2026-12-05: they differed).
        for (name, get) in [
            (
                "max_anchor_error",
                (|x| x.anchor_error) as fn(&lavender_replay::FrameSummary) -> ColumnMax,
            ),
            ("max_angular_error", |x| x.angular_error),
            ("max_limit_violation", |x| x.limit_violation),
        ] {
            let maxima: Vec<ColumnMax> = s.iter().map(get).collect();
            let (values, joints) = column_max(py, &maxima)?;
            d.set_item(name, values)?;
            d.set_item(format!("{name}_joint"), joints)?;
        }
        d.set_item(
            "first_non_finite_joint",
            PyArray1::from_iter(
                py,
                s.iter()
                    .map(|x| joint_or_minus_one(x.first_non_finite_joint)),
            ),
        )?;
        d.set_item(
            "first_non_finite_body",
            PyArray1::from_iter(
                py,
                s.iter()
                    .map(|x| joint_or_minus_one(x.first_non_finite_body)),
            ),
        )?;
        d.set_item(
            "non_finite",
            PyArray1::from_iter(py, s.iter().map(|x| x.non_finite)),
        )?;
        Ok(d)
    }

    /// Onsets of residual spikes, earliest first (then by joint, then column): the same
    /// finder and defaults as ``lavender scrub``. A value is a spike when its robust score
    /// ``(v - median) / max(1.4826 MAD, rel_floor |median|, abs_floor)`` over the previous
    /// ``window`` substeps of that joint and column exceeds ``k`` and ``v > abs_threshold``;
    /// it is reported once, until the score falls below ``k / 2``. Non-finite values are
    /// always spikes. ``columns`` (one column or a list; indices 0-7 or names) defaults to
    /// 3, 4, 5 (anchor error norm, angular error, limit violation). ``k``,
    /// ``abs_threshold`` and ``window`` are the command's ``--k``, ``--threshold`` and
    /// ``--window``; ``window`` is at least ``min_history`` (the earlier values a value needs
    /// before it is judged, at least 1), and one longer than the log is cut to it (the same
    /// spikes).
    /// With the defaults, a finished log recorded by Lavender answers from its spike index
    /// (the footer: milliseconds whatever the log's size); otherwise every frame is judged.
    /// Both give the same spikes. Frames that fail their checksums are passed over with a
    /// RuntimeWarning naming them, as ``lavender scrub`` does.
    ///
    /// Returns a list of dicts: ``substep``, ``time``, ``joint``, ``joint_name``,
    /// ``column``, ``column_name``, ``value``, ``baseline`` (the median before the onset).
    #[pyo3(signature = (
        columns = None,
        window = 32,
        min_history = 2,
        k = 8.0,
        abs_threshold = 1e-3,
        rel_floor = 0.05,
        abs_floor = 1e-6,
    ))]
    #[allow(clippy::too_many_arguments)] // the finder's parameters, as keyword arguments
    fn spikes<'py>(
        &self,
        py: Python<'py>,
        columns: Option<Bound<'py, PyAny>>,
        #[pyo3(from_py_with = whole_arg::window)] window: i64,
        #[pyo3(from_py_with = whole_arg::min_history)] min_history: i64,
        k: f32,
        abs_threshold: f32,
        rel_floor: f32,
        abs_floor: f32,
    ) -> PyResult<Bound<'py, PyList>> {
        let window = non_negative("window", window)? as usize;
        // Below 1 is one mistake whatever its sign: the engine's message names the bound.
        let min_history = usize::try_from(min_history).unwrap_or(0);
        let defaults = SpikeParams::default();
        let columns = match columns {
            None => defaults.columns,
            // One column (a name or an index), or a sequence of them (QA, 2026-12-05:
            // `columns="anchor_error_norm"` was a bare TypeError about `Vec`).
            Some(c)
                if c.is_instance_of::<pyo3::types::PyString>() || c.extract::<i64>().is_ok() =>
            {
                vec![convert::column_index(&c)?]
            }
            Some(cs) => {
                let not_columns = || {
                    errors::value(format!(
                        "columns is a column (an index 0-7 or a name such as \
                         \"anchor_error_norm\") or a list of them, got {}",
                        convert::describe(&cs)
                    ))
                };
                // A dict iterates over its keys, which were taken as the columns (QA
                // 2026-12-07: `columns={3: 1}`).
                if cs.is_instance_of::<PyDict>() {
                    return Err(not_columns());
                }
                cs.try_iter()
                    .map_err(|_| not_columns())?
                    .map(|c| convert::column_index(&c?))
                    .collect::<PyResult<Vec<_>>>()?
            }
        };
        if columns.is_empty() {
            // QA (2026-12-06): an empty list watched nothing and found no spikes, silently.
            return Err(errors::value(
                "columns is empty: give at least one column to watch (an index 0-7 or a name; \
                 default [\"anchor_error_norm\", \"angular_error\", \"limit_violation\"])",
            ));
        }
        let params = SpikeParams {
            columns,
            window,
            min_history,
            k,
            abs_threshold,
            rel_floor,
            abs_floor,
        };
        let reader = &*self.reader()?;
        // Corrupt frames are passed over with a warning, as `lavender scrub` does.
        let (found, _, skipped) = py
            .detach(|| scrub::spikes_skipping(reader, &params))
            .map_err(errors::replay)?;
        warn_skipped(py, reader, &skipped, "judging spikes")?;
        let header = reader.header();
        let out = PyList::empty(py);
        for s in found {
            let d = PyDict::new(py);
            d.set_item("substep", s.substep)?;
            d.set_item("time", s.time)?;
            d.set_item("joint", s.joint)?;
            d.set_item("joint_name", header.joint_name(s.joint as usize))?;
            d.set_item("column", s.column)?;
            d.set_item(
                "column_name",
                lavender_engine::COLUMN_NAMES[s.column as usize],
            )?;
            d.set_item("value", s.value)?;
            d.set_item("baseline", s.baseline)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The total energy over the run, as ``lavender scrub`` prints it (from the index: no
    /// frame is read): a dict with ``first`` and ``last`` (J, after the first and the last
    /// frame's substep), ``max_rise`` (the largest rise above ``first``, J; 0 when it never
    /// rose: a run without drives should not gain energy), ``max_rise_substep`` (or None),
    /// ``max_regain`` (the largest rise above an earlier low, J: the energy counts no joint
    /// stretch, so a large regain after a dip is the joints giving back what they stretched,
    /// springs where they should be rigid), ``max_regain_from_substep`` and
    /// ``max_regain_substep`` (the low's substep and the regain's; None without a regain)
    /// and ``non_finite_substep``, the first substep whose energy is not finite (inf or NaN;
    /// no rise is judged from there on), or None. None for a log without frames.
    fn energy<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let reader = self.reader()?;
        let Some(e) = scrub::EnergySummary::of(&scrub::timeline(&reader)) else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("first", e.first)?;
        d.set_item("last", e.last)?;
        d.set_item("max_rise", e.max_rise)?;
        d.set_item("max_rise_substep", e.max_rise_substep)?;
        d.set_item("max_regain", e.max_regain)?;
        d.set_item("max_regain_from_substep", e.max_regain_from_substep)?;
        d.set_item("max_regain_substep", e.max_regain_substep)?;
        d.set_item("non_finite_substep", e.non_finite_substep)?;
        Ok(Some(d))
    }

    /// The ``n`` joints with the largest peak anchor error over the run (joints that went
    /// non-finite first), as ``lavender scrub`` lists them: dicts with ``joint``, ``name``,
    /// ``peak_anchor_error``, ``anchor_error_substep``, ``peak_angular_error``,
    /// ``angular_error_substep``, ``peak_limit_violation``, ``limit_violation_substep``,
    /// ``first_non_finite_substep`` (a substep is ``None`` where there is none: a column that
    /// never rose above 0, a joint that stayed finite; a peak is ``None`` where its column
    /// never held a finite value). Corrupt frames are passed over with a
    /// RuntimeWarning naming them, as ``lavender scrub`` does.
    #[pyo3(signature = (n = 10))]
    fn worst_joints<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = whole_arg::n)] n: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = non_negative("n", n)? as usize;
        let reader = &*self.reader()?;
        let (worst, skipped) = py
            .detach(|| scrub::worst_joints_skipping(reader, n))
            .map_err(errors::replay)?;
        warn_skipped(py, reader, &skipped, "finding the worst joints")?;
        let out = PyList::empty(py);
        for w in worst {
            let d = PyDict::new(py);
            d.set_item("joint", w.joint)?;
            d.set_item("name", w.name)?;
            // -inf where the column never held a finite value: None, as the JSON's null (QA
            // 2026-12-07: -inf for a header-only log).
            let peak = |v: f32| (v != f32::NEG_INFINITY).then_some(v);
            d.set_item("peak_anchor_error", peak(w.peak_anchor_error))?;
            d.set_item("anchor_error_substep", w.anchor_error_substep)?;
            d.set_item("peak_angular_error", peak(w.peak_angular_error))?;
            d.set_item("angular_error_substep", w.angular_error_substep)?;
            d.set_item("peak_limit_violation", peak(w.peak_limit_violation))?;
            d.set_item("limit_violation_substep", w.limit_violation_substep)?;
            d.set_item("first_non_finite_substep", w.first_non_finite_substep)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Compares this run with ``other`` frame by frame, as ``lavender diff`` does. Values
    /// agree when ``|a - b| <= atol + rtol * max(|a|, |b|)`` (default: bitwise). Frames are
    /// paired by substep from the later first substep; a log that ends first has diverged
    /// there unless ``overlap=True`` (then only the substeps both record are compared).
    /// Frames with equal state and diagnostics hashes are not compared value by value
    /// (their checksums are checked).
    ///
    /// Returns a dict: ``identical``, ``first_divergent_substep`` (or None), ``reason``
    /// (``"values"``, ``"hidden_state"``, ``"log_ends"``, ``"substep_numbering"`` or None),
    /// ``where`` (the most deviating value in that frame: dict with ``kind``, ``index``,
    /// ``name``, ``field``; or None), ``max_deviation`` (dict ``value``, ``substep``,
    /// ``location``), ``frames_compared``, ``first_common_substep``,
    /// ``last_common_substep``, ``frames_a``, ``frames_b``, ``scene_hash_mismatch``,
    /// ``substep_lengths`` (the two logs', s), ``substep_lengths_differ`` and ``extent``
    /// (``"whole"``, or ``"overlap"`` with ``overlap=True``).
    ///
    /// With ``series=True`` the dict also holds ``series``: a dict of arrays with one entry
    /// per compared frame pair, ``substep`` (uint64), ``time`` (s) and the pair's largest
    /// deviations by kind, ``position`` (m), ``rotation`` (quaternion components),
    /// ``velocity`` (m/s, rad/s) and ``diagnostics`` (the columns' units), float64, 0 where
    /// equal: how the runs drift apart (``lavender diff --plot`` draws it).
    ///
    /// ``other`` is a ``Log`` or the path of one (opened as ``Log(path)`` does).
    ///
    /// Raises ValueError when the logs have different body or joint counts, share no
    /// substep, and, unless ``force=True``, when they come from different scenes (different
    /// scene hashes); OSError when a frame is corrupt or ``other`` cannot be opened.
    #[pyo3(signature = (other, atol = 0.0, rtol = 0.0, force = false, overlap = false, series = false))]
    #[allow(clippy::too_many_arguments)]
    fn diff<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyAny>,
        atol: f64,
        rtol: f64,
        force: bool,
        overlap: bool,
        series: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        if !(atol.is_finite() && atol >= 0.0 && rtol.is_finite() && rtol >= 0.0) {
            return Err(errors::value(format!(
                "atol = {atol}, rtol = {rtol}: tolerances must be finite and >= 0"
            )));
        }
        // A path is opened here (QA 2026-12-08: `log.diff("b.lvlog")` was a bare TypeError).
        let opened;
        let other = match other.cast::<Log>() {
            Ok(log) => log.get(),
            Err(_) => {
                opened = Log::new(py, other)?;
                &opened
            }
        };
        let (a, b) = (&*self.reader()?, &*other.reader()?);
        diff::check_shapes(a, b).map_err(errors::replay)?;
        if !force && a.header().scene_hash != b.header().scene_hash {
            return Err(errors::value(format!(
                "the logs come from different scenes (scene hashes {:016x} and {:016x}); \
                 pass force=True to compare them anyway",
                a.header().scene_hash,
                b.header().scene_hash
            )));
        }
        let tol = Tolerance { atol, rtol };
        let (report, deviations) = py
            .detach(|| {
                let extent = if overlap {
                    diff::Extent::Overlap
                } else {
                    diff::Extent::Whole
                };
                if series {
                    diff::diff_series(a, b, &tol, extent, |_, _| {})
                } else {
                    diff::diff_with_progress(a, b, &tol, extent, |_, _| {}).map(|r| (r, Vec::new()))
                }
            })
            .map_err(errors::replay)?;
        let d = diff_dict(py, &report)?;
        if series {
            let arrays = PyDict::new(py);
            let column = |get: fn(&diff::FrameDeviation) -> f64| {
                PyArray1::from_iter(py, deviations.iter().map(get))
            };
            arrays.set_item(
                "substep",
                PyArray1::from_iter(py, deviations.iter().map(|d| d.substep)),
            )?;
            arrays.set_item("time", column(|d| d.time))?;
            arrays.set_item("position", column(|d| d.position))?;
            arrays.set_item("rotation", column(|d| d.rotation))?;
            arrays.set_item("velocity", column(|d| d.velocity))?;
            arrays.set_item("diagnostics", column(|d| d.diagnostics))?;
            d.set_item("series", arrays)?;
        }
        Ok(d)
    }

    /// Copies frames to a new HDF5 file at ``path`` (as ``lavender export`` does): the
    /// substeps ``from_substep`` to ``to_substep`` (inclusive; default: all), keeping every
    /// ``every``-th frame. Layout: ``/time``, ``/substep``, ``/bodies/pose`` (N, B, 7),
    /// ``/bodies/velocity`` (N, B, 6), ``/joints/diagnostics`` (N, J, 8), ``/summary/*``.
    /// Returns ``{"path", "frames", "bytes"}``. The GIL is released while copying; a
    /// KeyboardInterrupt (Ctrl-C) stops the copy, leaving ``path`` as it was.
    #[pyo3(signature = (path, from_substep = None, to_substep = None, every = 1))]
    fn export_hdf5<'py>(
        &self,
        py: Python<'py>,
        path: &Bound<'py, PyAny>,
        from_substep: Option<&Bound<'py, PyAny>>,
        to_substep: Option<&Bound<'py, PyAny>>,
        #[pyo3(from_py_with = whole_arg::every)] every: i64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let from_substep = from_substep
            .map(|f| substep_bound("from_substep", f))
            .transpose()?
            .unwrap_or(0);
        let to_substep = to_substep
            .map(|t| substep_bound("to_substep", t))
            .transpose()?;
        // As `lavender export` (QA 2026-12-06: this said "no frame to export from substep 10
        // to substep 5", as if the log were to blame).
        if let Some(to) = to_substep.filter(|&to| to < from_substep) {
            return Err(errors::value(format!(
                "to_substep = {to} is before from_substep = {from_substep}"
            )));
        }
        let every = u64::try_from(every)
            .ok()
            .filter(|&e| e >= 1)
            .ok_or_else(|| errors::value(format!("every = {every}: must be at least 1")))?;
        let path = path_arg(path)?;
        let range = h5::ExportRange {
            from: from_substep,
            to: to_substep.unwrap_or(u64::MAX),
            every,
        };
        let reader = &*self.reader()?;
        // Ctrl-C (and any Python signal handler) is heard every 256 frames: the export then
        // stops, its temporary file removed and `path` untouched, and the handler's exception
        // (KeyboardInterrupt) is raised.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut interrupted: Option<PyErr> = None;
        let result = py.detach(|| {
            let hear_signals = |_| {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    interrupted = Some(e);
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            };
            h5::export_interruptible(reader, &path, range, hear_signals, &stop)
        });
        if let Some(e) = interrupted {
            return Err(e);
        }
        let summary = result.map_err(errors::replay)?;
        let d = PyDict::new(py);
        d.set_item("path", summary.path.display().to_string())?;
        d.set_item("frames", summary.frames)?;
        d.set_item("bytes", summary.bytes)?;
        Ok(d)
    }

    /// A ``Sim`` in the state after ``substep`` of this run: the world is rebuilt from the
    /// scene in the header (every setting the run used) and restored from the nearest
    /// keyframe at or before it, re-running the substeps in between; its state hash is
    /// checked against the log. Stepping it with the run's frame dt (the Sim's default; a
    /// run resumed mid-frame first needs ``sim.step(sim.frame_dt / n)`` for the substeps
    /// left in that frame) reproduces the recorded frames bit for bit. ValueError when the
    /// run cannot be resumed there.
    fn resume(&self, py: Python<'_>, substep: &Bound<'_, PyAny>) -> PyResult<Sim> {
        let given = substep.to_string();
        let substep = substep_bound("substep", substep)?;
        if substep == u64::MAX && given != u64::MAX.to_string() {
            // Beyond 64 bits: say the number given (QA 2026-12-07: it said 2^64 - 1).
            return Err(errors::value(format!(
                "substep {given} is not in the log: it is beyond any substep a run records"
            )));
        }
        let reader = &*self.reader()?;
        let resumed = py
            .detach(|| resume::resume(reader, substep))
            .map_err(errors::replay)?;
        Ok(Sim::resumed(resumed))
    }

    /// The file's path.
    #[getter]
    fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// The header as a dict: ``body_count``, ``body_names``, ``joint_count``,
    /// ``joint_names``, ``world`` (dt, max_substep, iterations, gravity), ``settings``
    /// (every setting of the run, as ``Sim.settings`` names them: ``dt``,
    /// ``substep_length``, ``gravity``, the iteration counts (``bias_iterations`` None for
    /// one bias pass per velocity pass), ``chain_solve``, ``error_reduction``, ``projection_factor``,
    /// ``warm_starting``, ``gyroscopic``, ``curvature``, ``speculative_limits``, ``sleeping``
    /// and its thresholds), ``scene_hash``,
    /// ``engine_version``, ``target_features``, ``scene`` (the scene TOML with every
    /// setting written out).
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let reader = self.reader()?;
        let h = reader.header();
        let bad = |e: serde_json::Error| errors::value(format!("header: {e}"));
        let mut value = serde_json::to_value(h).map_err(bad)?;
        // Every setting of the run, not only those `world` keeps (QA, 2026-12-05).
        let mut settings = serde_json::to_value(h.settings()).map_err(bad)?;
        if let Some(map) = settings.as_object_mut() {
            map.remove("threads");
            map.remove("solver_path");
            map.insert("dt".into(), h.world.dt.into());
            map.insert("substep_length".into(), h.substep_length().into());
            // `bias_iterations` as `Sim.settings` gives it: None for one bias pass per
            // velocity pass (QA 2026-12-07: 8 here and None there for the same run).
        }
        value["settings"] = settings;
        let text = serde_json::to_string(&value).map_err(bad)?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// Body names, in index order (``body<i>`` when the log has none).
    #[getter]
    fn body_names(&self) -> PyResult<Vec<String>> {
        let reader = self.reader()?;
        let h = reader.header();
        Ok((0..h.body_count).map(|i| h.body_name(i)).collect())
    }

    /// Joint names, in index order (``joint<j>`` when the log has none).
    #[getter]
    fn joint_names(&self) -> PyResult<Vec<String>> {
        let reader = self.reader()?;
        let h = reader.header();
        Ok((0..h.joint_count).map(|j| h.joint_name(j)).collect())
    }

    /// Number of bodies in every frame.
    #[getter]
    fn body_count(&self) -> PyResult<usize> {
        Ok(self.reader()?.header().body_count)
    }

    /// Number of joints in every frame.
    #[getter]
    fn joint_count(&self) -> PyResult<usize> {
        Ok(self.reader()?.header().joint_count)
    }

    /// True when the log was closed by its writer (footer present).
    #[getter]
    fn finished(&self) -> PyResult<bool> {
        Ok(self.reader()?.is_finished())
    }

    /// None for a finished log; otherwise a dict saying what recovery did:
    /// ``dropped_bytes`` (at the end), ``reason`` (a sentence), ``kind`` (as the command
    /// line's JSON: ``"no_footer"``, ``"torn_tail"``, ``"corrupt"`` or ``"unusable_footer"``),
    /// ``offset`` (the byte where it stopped; None for ``no_footer``) and ``skipped``: the
    /// damaged stretches passed over between recovered frames, each a dict ``{"offset",
    /// "bytes", "detail", "after_frame", "after_substep", "before_substep"}`` (the index of
    /// the recovered frame before the gap, None before the first; the substeps between those
    /// two are missing). The command line's JSON holds the same keys, with ``reason`` there an
    /// object ``{"kind", "offset"}`` and no sentence.
    #[getter]
    fn recovery<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        use lavender_replay::RecoveryReason;
        let reader = self.reader()?;
        let Some(r) = reader.recovery() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("dropped_bytes", r.dropped_bytes)?;
        d.set_item("reason", r.reason.described(reader.path()))?;
        let (kind, offset) = match &r.reason {
            RecoveryReason::NoFooter => ("no_footer", None),
            RecoveryReason::TornTail { offset } => ("torn_tail", Some(*offset)),
            RecoveryReason::Corrupt { offset, .. } => ("corrupt", Some(*offset)),
            RecoveryReason::UnusableFooter { offset, .. } => ("unusable_footer", Some(*offset)),
        };
        d.set_item("kind", kind)?;
        d.set_item("offset", offset)?;
        let skipped = pyo3::types::PyList::empty(py);
        for g in &r.skipped {
            let item = PyDict::new(py);
            item.set_item("offset", g.offset)?;
            item.set_item("bytes", g.bytes)?;
            item.set_item("detail", &g.detail)?;
            item.set_item("after_frame", g.after_frame)?;
            item.set_item("after_substep", g.after_substep)?;
            item.set_item("before_substep", g.before_substep)?;
            skipped.append(item)?;
        }
        d.set_item("skipped", skipped)?;
        Ok(Some(d))
    }

    /// The file's format version ``(major, minor)``.
    #[getter]
    fn version(&self) -> PyResult<(u16, u16)> {
        Ok(self.reader()?.version())
    }

    /// Pickled (and copied) as its path: unpickling opens the file again, e.g. to hand a log
    /// to a ``multiprocessing`` worker (a memory map cannot travel; QA 2026-12-07: "cannot
    /// pickle", with no advice).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, (PathBuf,))> {
        Ok((slf.get_type(), (slf.get().path.clone(),)))
    }

    fn __repr__(&self) -> String {
        let Ok(reader) = self.reader() else {
            // Closed, or the file shrank under it (QA 2026-12-07: both read "closed").
            let open = self
                .reader
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some();
            return format!(
                "<lavender.Log {}: {}>",
                self.path.display(),
                if open {
                    "unreadable: the file changed under it; open it again"
                } else {
                    "closed"
                }
            );
        };
        format!(
            "<lavender.Log {}: {} frames, {} bodies, {} joints{}>",
            reader.path().display(),
            reader.len(),
            reader.header().body_count,
            reader.header().joint_count,
            if reader.is_finished() {
                ""
            } else {
                ", recovered"
            }
        )
    }
}

#[pymethods]
impl Frame {
    /// Position of the frame in the log.
    #[getter]
    fn index(&self) -> usize {
        self.index
    }

    /// Global substep number.
    #[getter]
    fn substep(&self) -> u64 {
        self.substep
    }

    /// Simulation time after the substep, s.
    #[getter]
    fn time(&self) -> f64 {
        self.time
    }

    /// Total energy after the substep, J.
    #[getter]
    fn total_energy(&self) -> f64 {
        self.total_energy
    }

    /// Hash of the full simulation state after the substep.
    #[getter]
    fn state_hash(&self) -> u64 {
        self.state_hash
    }

    /// True if the frame stores the solver state (a keyframe).
    #[getter]
    fn has_solver_state(&self) -> bool {
        self.has_solver_state
    }

    /// The ``(joints, 8)`` float32 diagnostics, read in place (read-only).
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let reader = self.log.bind(py).get().reader()?;
        let f = frame_of(&reader, self.index)?;
        Ok(in_place::diagnostics(py, &reader, &f))
    }

    /// The ``(bodies, 7)`` float32 poses ``[x, y, z, qx, qy, qz, qw]``, read in place.
    #[getter]
    fn poses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let reader = self.log.bind(py).get().reader()?;
        let f = frame_of(&reader, self.index)?;
        Ok(in_place::poses(py, &reader, &f))
    }

    /// The ``(bodies, 6)`` float32 velocities ``[vx, vy, vz, wx, wy, wz]``, read in place.
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let reader = self.log.bind(py).get().reader()?;
        let f = frame_of(&reader, self.index)?;
        Ok(in_place::velocities(py, &reader, &f))
    }

    /// The solver state (warm-start impulses, 6 per joint) of a keyframe, read in place, or
    /// None.
    #[getter]
    fn solver_state<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray1<f32>>>> {
        let reader = self.log.bind(py).get().reader()?;
        let f = frame_of(&reader, self.index)?;
        Ok(in_place::solver_state(py, &reader, &f))
    }

    /// The writer's summary of this frame, as a dict (see ``Log.summaries``; here the values
    /// are scalars and a missing joint is None).
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let reader = self.log.bind(py).get().reader()?;
        let s = frame_of(&reader, self.index)?.summary();
        let d = PyDict::new(py);
        d.set_item("substep", s.substep)?;
        d.set_item("time", s.time)?;
        d.set_item("total_energy", s.total_energy)?;
        d.set_item("state_hash", self.state_hash)?;
        for (name, m) in [
            ("max_anchor_error", s.anchor_error),
            ("max_angular_error", s.angular_error),
            ("max_limit_violation", s.limit_violation),
        ] {
            d.set_item(name, m.value)?;
            d.set_item(format!("{name}_joint"), m.joint)?;
        }
        d.set_item("first_non_finite_joint", s.first_non_finite_joint)?;
        d.set_item("first_non_finite_body", s.first_non_finite_body)?;
        d.set_item("non_finite", s.non_finite)?;
        Ok(d)
    }

    /// Pickled (and copied) as its log and index: unpickling opens the log again and takes
    /// the frame from it (see ``Log.__reduce__``).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<FrameReduced<'py>> {
        let getitem = py.import("operator")?.getattr("getitem")?;
        Ok((getitem, (self.log.clone_ref(py), self.index)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<lavender.Frame {}: substep {}, t = {:.6} s>",
            self.index, self.substep, self.time
        )
    }
}
