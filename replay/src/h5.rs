//! HDF5 output, written by the reference C library (through `hdf5-metno`).
//!
//! ```text
//! /time                    f64  (N)         simulation time after each substep, s
//! /substep                 u64  (N)         substep index
//! /bodies/pose             f32  (N, B, 7)   x y z qx qy qz qw
//! /bodies/velocity         f32  (N, B, 6)   vx vy vz wx wy wz (world frame)
//! /joints/diagnostics      f32  (N, J, 8)   the eight diagnostic columns
//! /summary/total_energy    f64  (N)
//! /summary/state_hash      u64  (N)
//! /summary/max_anchor_error, max_angular_error, max_limit_violation          f32 (N)
//! /summary/max_anchor_error_joint, ..._angular_..., ..._limit_...      i64 (N, -1 = none)
//! /summary/first_non_finite_joint, first_non_finite_body                   i64 (N, -1 = none)
//! /summary/non_finite      u8   (N)         1 if anything in the frame is non-finite
//! ```
//!
//! Attributes: on `/`: `format`, `engine_version`, `target_features`, `scene_hash`, `scene`
//! (TOML), `dt`, `max_substep`, `velocity_iterations`, `bias_iterations` (the bias passes
//! per substep the run used), `position_iterations`, `chain_solve` (u8, 1 when chains of
//! joints were solved directly), `gravity`,
//! `columns`, `units`; on `/bodies`: `names`, `pose_fields`, `velocity_fields`; on `/joints`
//! and `/joints/diagnostics`: `names` (joints), `columns`, `units`.
//!
//! Every dataset is chunked by blocks of frames ([`Hdf5Writer::chunk_frames`]: as many as
//! 32 MiB of frames hold, at most 4,096; an export of fewer frames, that many:
//! [`Hdf5Writer::create_for_frames`]), the per-body and per-joint datasets also across
//! bodies or joints (about 1 MiB per chunk), filtered with shuffle + deflate level 2, and
//! unlimited along time: the writer buffers one block and appends it with a resize, so
//! recording streams, and one joint's series over the run reads only its own chunks. The
//! per-body and per-joint chunks of a block are filtered here on every core and written as
//! stored (the private `chunks` module); the rest goes through the library's filters.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, Group};
use ndarray::{s, ArrayView1, ArrayView3};

pub use crate::range::ExportRange;

use crate::error::{ReplayError, Result};
use crate::format::{
    FrameInput, FrameSummary, Header, DIAGNOSTIC_COLUMNS, POSE_FIELDS, VELOCITY_FIELDS,
};
use crate::reader::LogReader;
use crate::writer::LogSummary;

mod chunks;
use chunks::{ChunkShape, ChunkValue};

/// Units of the eight diagnostic columns (as the engine documents them).
pub const DIAGNOSTIC_UNITS: [&str; 8] = lavender_engine::COLUMN_UNITS;

/// Deflate level: 2. With the library's zlib, recording the shipped chain for 20 s to HDF5
/// took 0.92 s at level 1 and 1.20 s at level 4 (the run alone 0.31 s), for files of 21.1 and
/// 20.7 MB (2026-12-05, `lavender run chain --duration 20 --record c.h5`); shuffle does most
/// of the packing. With the chunks compressed here (`miniz_oxide`, [`chunks`]), an export
/// of a 620 MB log of the 100 x 100 chain scene gave 61.4 MB in 0.71 s at level 1, 55.3 MB
/// in 1.07 s at level 2, 53.6 MB in 1.58 s at level 3 (2026-12-07; the library's zlib at
/// level 1, one chunk at a time: 57.0 MB in 2.3 to 2.9 s): level 2 is smaller than before
/// and still more than twice as fast.
const DEFLATE_LEVEL: u8 = 2;
/// Target bytes per chunk of a per-body or per-joint dataset (the chunk spans
/// [`Hdf5Writer::chunk_frames`] frames and as many bodies or joints as fit).
const CHUNK_BYTES: usize = 1 << 20;
/// Bytes of whole frames the writer buffers before it writes a block: the frames per chunk.
const BUFFER_BYTES: usize = 32 << 20;
/// Cap on frames per chunk (small scenes).
const MAX_CHUNK_FRAMES: usize = 4096;

fn h5err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(hdf5::Error) -> ReplayError + 'a {
    move |e| ReplayError::Hdf5 {
        action,
        path: path.to_path_buf(),
        detail: library_detail(&e.to_string()),
    }
}

/// The part of an HDF5 library error a user acts on. A failed write comes as a dump of the
/// library's state (buffer addresses, sizes) around the system's message; keep that message
/// and say what to do about the common ones.
fn library_detail(error: &str) -> String {
    let system = error
        .split_once("error message = '")
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(message, _)| message);
    match system {
        Some(m) if error.contains("errno = 28") || m.contains("No space left") => {
            format!("{m}: the disk is full; free space or write to another file system")
        }
        Some(m) => {
            let call = error.split(':').next().unwrap_or(error).trim();
            format!("{call}: {m}")
        }
        None => error.to_string(),
    }
}

fn vlen(strings: &[impl AsRef<str>]) -> Vec<VarLenUnicode> {
    strings
        .iter()
        .map(|s| {
            // Names never contain NUL (TOML keys and generated names); replace defensively.
            s.as_ref()
                .replace('\0', " ")
                .parse()
                .expect("a string without NUL is valid UTF-8 HDF5 text")
        })
        .collect()
}

fn str_attr(loc: &hdf5::Location, name: &str, value: &str) -> hdf5::Result<()> {
    let v: VarLenUnicode = value.replace('\0', " ").parse().expect("no NUL");
    loc.new_attr::<VarLenUnicode>()
        .create(name)?
        .write_scalar(&v)
}

fn strs_attr(loc: &hdf5::Location, name: &str, values: &[impl AsRef<str>]) -> hdf5::Result<()> {
    let v = vlen(values);
    loc.new_attr_builder()
        .with_data(ArrayView1::from(&v[..]))
        .create(name)?;
    Ok(())
}

fn scalar_attr<T: hdf5::H5Type>(loc: &hdf5::Location, name: &str, value: T) -> hdf5::Result<()> {
    loc.new_attr::<T>().create(name)?.write_scalar(&value)
}

/// One per-frame dataset of `width x inner` values of `T` per frame, and its block buffer.
struct Column<T> {
    ds: Dataset,
    width: usize,
    inner: usize,
    /// The chunks of a per-body or per-joint dataset (whole ones are compressed here).
    chunk: Option<ChunkShape>,
    buf: Vec<T>,
}

/// A group without times in its header (see `create_inner`).
fn group(parent: &Group, name: &str) -> hdf5::Result<Group> {
    parent
        .create_group_builder()
        .obj_track_times(false)
        .create(name)
}

impl<T: hdf5::H5Type + ChunkValue> Column<T> {
    fn new(
        group: &Group,
        name: &str,
        width: usize,
        inner: usize,
        chunk: usize,
    ) -> hdf5::Result<Self> {
        let builder = group
            .new_dataset::<T>()
            .shuffle()
            .deflate(DEFLATE_LEVEL)
            .obj_track_times(false);
        let (ds, shape) = match (width, inner) {
            (0, 0) => (builder.chunk(chunk).shape(0..).create(name)?, None),
            // An empty body or joint axis: keep it resizable so the chunk fits.
            (0, _) | (_, 0) => (
                builder
                    .chunk((chunk, 1, inner.max(1)))
                    .shape((0.., 0.., inner))
                    .create(name)?,
                None,
            ),
            _ => {
                let shape = ChunkShape {
                    frames: chunk,
                    items: Self::chunk_items(width, inner, chunk),
                    inner,
                };
                let ds = builder
                    .chunk((shape.frames, shape.items, inner))
                    .shape((0.., width, inner))
                    .create(name)?;
                (ds, Some(shape))
            }
        };
        Ok(Column {
            ds,
            width,
            inner,
            chunk: shape,
            buf: Vec::new(),
        })
    }

    /// Bodies or joints per chunk of a `(frames, width, inner)` dataset chunked by `frames`
    /// frames: about [`CHUNK_BYTES`] per chunk. A chunk holding every joint made one joint's
    /// series over the run read (and inflate) the whole dataset (QA, 2026-12-05).
    fn chunk_items(width: usize, inner: usize, frames: usize) -> usize {
        let item_bytes = frames * inner * std::mem::size_of::<T>();
        (CHUNK_BYTES / item_bytes.max(1)).clamp(1, width.max(1))
    }

    fn push(&mut self, values: &[T]) {
        self.buf.extend_from_slice(values);
    }

    /// The buffered frames (`frames` of them, to go at row `at`) when they fill chunks of
    /// their own from a chunk boundary: those are compressed here ([`chunks`]); `None` for
    /// the library. A block shorter than a chunk is padded (the edge of the data); frames a
    /// later block adds to that chunk (after [`Hdf5Writer::flush`] mid-block) go through
    /// the library, which reads the chunk back as any reader would.
    fn whole_block(&self, at: usize, frames: usize) -> Option<chunks::Block<'_, T>> {
        let shape = self
            .chunk
            .filter(|s| frames > 0 && frames <= s.frames && at.is_multiple_of(s.frames))?;
        Some(chunks::Block {
            values: &self.buf,
            width: self.width,
            shape,
        })
    }

    /// Appends the buffered `frames` frames at row `at`: as `encoded`, the chunks of
    /// [`Self::whole_block`], or through the library's filters (the datasets of one value
    /// per frame, and those without bodies or joints).
    fn flush_encoded(
        &mut self,
        at: usize,
        frames: usize,
        encoded: Option<Vec<Vec<u8>>>,
    ) -> hdf5::Result<()> {
        if let (Some(chunks), Some(shape)) = (encoded, self.chunk) {
            self.ds.resize((at + frames, self.width, self.inner))?;
            chunks::write_chunks(&self.ds, shape, at, &chunks)?;
            self.buf.clear();
            return Ok(());
        }
        self.flush(at, frames)
    }

    /// Appends the buffered `frames` frames at row `at` through the library's filters.
    fn flush(&mut self, at: usize, frames: usize) -> hdf5::Result<()> {
        if frames == 0 {
            return Ok(());
        }
        let end = at + frames;
        if self.width == 0 && self.inner == 0 {
            self.ds.resize(end)?;
            self.ds
                .write_slice(ArrayView1::from(&self.buf[..]), s![at..end])?;
        } else {
            self.ds.resize((end, self.width, self.inner))?;
            let view = ArrayView3::from_shape((frames, self.width, self.inner), &self.buf[..])
                .expect("buffer holds whole frames");
            self.ds.write_slice(view, s![at..end, .., ..])?;
        }
        self.buf.clear();
        Ok(())
    }
}

/// The summary datasets.
struct Summary {
    total_energy: Column<f64>,
    state_hash: Column<u64>,
    maxima: [Column<f32>; 3],
    max_joints: [Column<i64>; 3],
    /// The first non-finite joint and body of the frame (-1 for none).
    first_non_finite: [Column<i64>; 2],
    non_finite: Column<u8>,
}

impl Summary {
    fn push(&mut self, s: &FrameSummary, state_hash: u64) {
        self.total_energy.push(&[s.total_energy]);
        self.state_hash.push(&[state_hash]);
        for (k, m) in [s.anchor_error, s.angular_error, s.limit_violation]
            .iter()
            .enumerate()
        {
            self.maxima[k].push(&[m.value]);
            self.max_joints[k].push(&[m.joint.map_or(-1, i64::from)]);
        }
        self.first_non_finite[0].push(&[s.first_non_finite_joint.map_or(-1, i64::from)]);
        self.first_non_finite[1].push(&[s.first_non_finite_body.map_or(-1, i64::from)]);
        self.non_finite.push(&[u8::from(s.non_finite)]);
    }

    fn flush(&mut self, at: usize, n: usize) -> hdf5::Result<()> {
        self.total_energy.flush(at, n)?;
        self.state_hash.flush(at, n)?;
        for c in &mut self.maxima {
            c.flush(at, n)?;
        }
        for c in self.max_joints.iter_mut().chain(&mut self.first_non_finite) {
            c.flush(at, n)?;
        }
        self.non_finite.flush(at, n)
    }
}

/// Where a finished [`Hdf5Writer`]'s temporary file goes.
struct Destination {
    /// The path asked for (reported).
    path: PathBuf,
    /// The file renamed over: `path`, or the target of a symbolic link there.
    target: PathBuf,
}

/// Streams frames into an HDF5 file with the layout in the [module docs](self).
pub struct Hdf5Writer {
    file: Option<hdf5::File>,
    /// The file being written (the temporary file).
    path: PathBuf,
    /// Set until `finish` renames the file there; a writer dropped before removes it.
    destination: Option<Destination>,
    /// A write failed: nothing more is written.
    failed: bool,
    body_count: usize,
    joint_count: usize,
    chunk: usize,
    written: usize,
    buffered: usize,
    last: Option<(u64, f64)>,
    time: Column<f64>,
    substep: Column<u64>,
    pose: Column<f32>,
    velocity: Column<f32>,
    diagnostics: Column<f32>,
    summary: Summary,
}

impl Hdf5Writer {
    /// Starts a file for `path` and writes the layout and the attributes.
    ///
    /// The file is written under a temporary name next to `path`
    /// ([`crate::files::partial_path`]) and renamed to `path` by [`finish`](Self::finish):
    /// an HDF5 file is readable only once closed, so a writer that fails (a full disk) or
    /// is dropped unfinished removes its temporary file and leaves an existing file at `path`
    /// as it was. The rename replaces the file's directory entry, so a reader still holding
    /// the old file keeps it. Temporary files of killed writers to `path` (their process
    /// gone; Linux) are removed first.
    pub fn create(path: impl AsRef<Path>, header: &Header) -> Result<Hdf5Writer> {
        Self::create_chunked(path.as_ref(), header, Self::chunk_frames(header))
    }

    /// [`create`](Self::create) for a file whose number of frames is known in advance (an
    /// export): chunks of at most `frames` frames, so that a short file is not a whole
    /// default chunk of mostly padding (QA 2026-12-07: one frame of 101 bodies took 226 kB,
    /// chunks of 3,940 frames). The datasets stay extendable: more frames may be appended.
    pub fn create_for_frames(
        path: impl AsRef<Path>,
        header: &Header,
        frames: usize,
    ) -> Result<Hdf5Writer> {
        let chunk = Self::chunk_frames(header).min(frames.max(1));
        Self::create_chunked(path.as_ref(), header, chunk)
    }

    fn create_chunked(path: &Path, header: &Header, chunk: usize) -> Result<Hdf5Writer> {
        header.validate().map_err(ReplayError::InvalidHeader)?;
        crate::files::check_output(path)?;
        // Through a symbolic link, the link's target is replaced (the link is kept).
        let target = crate::files::output_target(path);
        crate::files::remove_stale_partials(&target);
        let partial = crate::files::partial_path(&target);
        // Created here first so that a refusal reads as the operating system's reason, as for
        // a `.lvlog` (QA: HDF5 said only "H5Fcreate(): No such file or directory" for /proc);
        // HDF5 then truncates the empty file.
        if let Err(source) = std::fs::File::create(&partial) {
            return Err(ReplayError::Io {
                action: "creating",
                path: path.to_path_buf(),
                source,
            });
        }
        match Self::create_inner(&partial, header, chunk) {
            Ok(mut w) => {
                w.destination = Some(Destination {
                    path: path.to_path_buf(),
                    target,
                });
                Ok(w)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                Err(h5err("creating", path)(e))
            }
        }
    }

    /// Frames per chunk for a run of this shape.
    pub fn chunk_frames(header: &Header) -> usize {
        let frame = header.frame_value_bytes() + 64;
        (BUFFER_BYTES / frame).clamp(1, MAX_CHUNK_FRAMES)
    }

    fn create_inner(path: &Path, h: &Header, chunk: usize) -> hdf5::Result<Hdf5Writer> {
        // The 1.8 file format (readable by HDF5 1.8 and later: MATLAB, h5py, pandas) or
        // newer: the earliest format keeps attributes in the object header, 64 KiB in all,
        // and the body names of a 4,500-link chain did not fit (QA, 2026-12-05).
        // No creation and modification times in the object headers: the same run gives the
        // same bytes, whenever it is written (they made two exports of one log differ).
        let file = hdf5::File::with_options()
            .with_fapl(|p| p.libver_v18())
            .with_fcpl(|p| p.obj_track_times(false))
            .create(path)?;
        let (b, j) = (h.body_count, h.joint_count);
        str_attr(&file, "format", "lavender run (one frame per substep)")?;
        str_attr(&file, "engine_version", &h.engine_version)?;
        str_attr(&file, "target_features", &h.target_features)?;
        scalar_attr(&file, "scene_hash", h.scene_hash)?;
        str_attr(&file, "scene", &h.scene)?;
        scalar_attr(&file, "dt", h.world.dt)?;
        scalar_attr(&file, "max_substep", h.world.max_substep)?;
        scalar_attr(&file, "velocity_iterations", h.world.velocity_iterations)?;
        scalar_attr(&file, "bias_iterations", h.bias_passes())?;
        scalar_attr(&file, "chain_solve", u8::from(h.chain_solve()))?;
        scalar_attr(&file, "position_iterations", h.world.position_iterations)?;
        file.new_attr_builder()
            .with_data(ArrayView1::from(&h.world.gravity[..]))
            .create("gravity")?;
        // The rest of the settings that shape the results (QA, 2026-12-05: only the scene
        // text said them), booleans as 0/1.
        let settings = h.settings();
        scalar_attr(&file, "error_reduction", settings.error_reduction)?;
        scalar_attr(&file, "projection_factor", settings.projection_factor)?;
        scalar_attr(&file, "warm_starting", u8::from(settings.warm_starting))?;
        scalar_attr(&file, "gyroscopic", u8::from(settings.gyroscopic))?;
        scalar_attr(&file, "curvature", u8::from(settings.curvature))?;
        scalar_attr(
            &file,
            "speculative_limits",
            u8::from(settings.speculative_limits),
        )?;
        scalar_attr(&file, "sleeping", u8::from(settings.sleeping))?;
        scalar_attr(&file, "sleep_linear_speed", settings.sleep_linear_speed)?;
        scalar_attr(&file, "sleep_angular_speed", settings.sleep_angular_speed)?;
        scalar_attr(&file, "time_to_sleep", settings.time_to_sleep)?;
        scalar_attr(&file, "substep_length", h.substep_length())?;
        strs_attr(&file, "columns", &DIAGNOSTIC_COLUMNS)?;
        strs_attr(&file, "units", &DIAGNOSTIC_UNITS)?;

        let body_names: Vec<String> = (0..b).map(|i| h.body_name(i)).collect();
        let joint_names: Vec<String> = (0..j).map(|i| h.joint_name(i)).collect();
        let time = Column::new(&file, "time", 0, 0, chunk)?;
        str_attr(&time.ds, "units", "s")?;
        let substep = Column::new(&file, "substep", 0, 0, chunk)?;
        str_attr(&substep.ds, "units", "1")?;

        let bodies = group(&file, "bodies")?;
        strs_attr(&bodies, "names", &body_names)?;
        strs_attr(&bodies, "pose_fields", &POSE_FIELDS)?;
        strs_attr(&bodies, "velocity_fields", &VELOCITY_FIELDS)?;
        let pose = Column::new(&bodies, "pose", b, 7, chunk)?;
        strs_attr(&pose.ds, "fields", &POSE_FIELDS)?;
        strs_attr(&pose.ds, "units", &["m", "m", "m", "1", "1", "1", "1"])?;
        let velocity = Column::new(&bodies, "velocity", b, 6, chunk)?;
        strs_attr(&velocity.ds, "fields", &VELOCITY_FIELDS)?;
        strs_attr(
            &velocity.ds,
            "units",
            &["m/s", "m/s", "m/s", "rad/s", "rad/s", "rad/s"],
        )?;

        let joints = group(&file, "joints")?;
        strs_attr(&joints, "names", &joint_names)?;
        strs_attr(&joints, "columns", &DIAGNOSTIC_COLUMNS)?;
        strs_attr(&joints, "units", &DIAGNOSTIC_UNITS)?;
        // Which joints are hinges and which sliders, so that a reader resolves the `rad|m`
        // of columns 5 and 7 per joint (QA 2026-12-07: only the scene's TOML, generators
        // and all, told it).
        if let Some(kinds) = h.joint_kinds() {
            let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            strs_attr(&joints, "kinds", &names)?;
            let units: Vec<&str> = kinds.iter().map(|k| k.coordinate_unit()).collect();
            strs_attr(&joints, "coordinate_units", &units)?;
        }
        let diagnostics = Column::new(&joints, "diagnostics", j, 8, chunk)?;
        strs_attr(&diagnostics.ds, "columns", &DIAGNOSTIC_COLUMNS)?;
        strs_attr(&diagnostics.ds, "units", &DIAGNOSTIC_UNITS)?;

        let sg = group(&file, "summary")?;
        let summary = Summary {
            total_energy: Column::new(&sg, "total_energy", 0, 0, chunk)?,
            state_hash: Column::new(&sg, "state_hash", 0, 0, chunk)?,
            maxima: [
                Column::new(&sg, "max_anchor_error", 0, 0, chunk)?,
                Column::new(&sg, "max_angular_error", 0, 0, chunk)?,
                Column::new(&sg, "max_limit_violation", 0, 0, chunk)?,
            ],
            max_joints: [
                Column::new(&sg, "max_anchor_error_joint", 0, 0, chunk)?,
                Column::new(&sg, "max_angular_error_joint", 0, 0, chunk)?,
                Column::new(&sg, "max_limit_violation_joint", 0, 0, chunk)?,
            ],
            first_non_finite: [
                Column::new(&sg, "first_non_finite_joint", 0, 0, chunk)?,
                Column::new(&sg, "first_non_finite_body", 0, 0, chunk)?,
            ],
            non_finite: Column::new(&sg, "non_finite", 0, 0, chunk)?,
        };
        str_attr(&summary.total_energy.ds, "units", "J")?;
        for (column, unit) in summary.maxima.iter().zip(["m", "rad", "rad|m"]) {
            str_attr(&column.ds, "units", unit)?;
        }
        Ok(Hdf5Writer {
            file: Some(file),
            path: path.to_path_buf(),
            destination: None,
            failed: false,
            body_count: b,
            joint_count: j,
            chunk,
            written: 0,
            buffered: 0,
            last: None,
            time,
            substep,
            pose,
            velocity,
            diagnostics,
            summary,
        })
    }

    /// Frames appended so far.
    pub fn frames(&self) -> usize {
        self.written + self.buffered
    }

    /// Appends one frame (buffered; a block of frames is written per chunk).
    pub fn append(&mut self, f: &FrameInput<'_>) -> Result<()> {
        f.check_shape(self.body_count, self.joint_count)?;
        f.check_follows(self.last)?;
        self.last = Some((f.substep, f.time));
        let summary = FrameSummary::compute(f);
        self.append_with_summary(f, &summary)
    }

    fn append_with_summary(&mut self, f: &FrameInput<'_>, summary: &FrameSummary) -> Result<()> {
        self.time.push(&[f.time]);
        self.substep.push(&[f.substep]);
        self.pose.push(f.poses.as_flattened());
        self.velocity.push(f.velocities.as_flattened());
        self.diagnostics.push(f.diagnostics.as_flattened());
        self.summary.push(summary, f.state_hash);
        self.buffered += 1;
        if self.buffered == self.chunk {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered block.
    pub fn flush(&mut self) -> Result<()> {
        let (at, n) = (self.written, self.buffered);
        // Errors name the path asked for, not the temporary file.
        let path = self
            .destination
            .as_ref()
            .map_or_else(|| self.path.clone(), |d| d.path.clone());
        if self.failed {
            // A failed write leaves the datasets' extents and the buffers out of step:
            // writing again would only add the library's complaint about that.
            return Err(ReplayError::Hdf5 {
                action: "writing",
                path,
                detail: "an earlier write failed, so the file cannot be finished".into(),
            });
        }
        self.failed = true;
        // The per-body and per-joint datasets' whole chunks, all compressed at once on the
        // `rayon` pool (one block of a small scene is one chunk of each).
        let encode = |block: Option<chunks::Block<'_, f32>>| {
            block.map(|b| b.encode(DEFLATE_LEVEL)).transpose()
        };
        let (pose, (velocity, diagnostics)) = rayon::join(
            || encode(self.pose.whole_block(at, n)),
            || {
                rayon::join(
                    || encode(self.velocity.whole_block(at, n)),
                    || encode(self.diagnostics.whole_block(at, n)),
                )
            },
        );
        (|| -> hdf5::Result<()> {
            let compressing = |e: std::io::Error| format!("compressing a chunk: {e}");
            self.time.flush(at, n)?;
            self.substep.flush(at, n)?;
            self.pose.flush_encoded(at, n, pose.map_err(compressing)?)?;
            self.velocity
                .flush_encoded(at, n, velocity.map_err(compressing)?)?;
            self.diagnostics
                .flush_encoded(at, n, diagnostics.map_err(compressing)?)?;
            self.summary.flush(at, n)?;
            if let Some(file) = &self.file {
                file.flush()?;
            }
            Ok(())
        })()
        .map_err(h5err("writing", &path))?;
        self.failed = false;
        self.written += n;
        self.buffered = 0;
        Ok(())
    }

    /// Writes what is buffered, closes the file, renames it to its path and reports its
    /// size. On error the temporary file is removed.
    pub fn finish(mut self) -> Result<LogSummary> {
        self.flush()?;
        let frames = self.written;
        let partial = self.path.clone();
        let Some(destination) = self.destination.take() else {
            return Err(ReplayError::Encode(
                "the HDF5 writer has no destination".into(),
            ));
        };
        let closed = match self.file.take() {
            // Datasets hold the file open; close them before the file.
            Some(file) => {
                drop(self);
                file.close().map_err(h5err("closing", &destination.path))
            }
            None => Ok(()),
        };
        let renamed = closed.and_then(|()| {
            std::fs::rename(&partial, &destination.target).map_err(|source| ReplayError::Io {
                action: "renaming the finished file to",
                path: destination.path.clone(),
                source,
            })
        });
        if let Err(e) = renamed {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
        let path = destination.path;
        let bytes = std::fs::metadata(&path)
            .map_err(|source| ReplayError::Io {
                action: "reading metadata of",
                path: path.clone(),
                source,
            })?
            .len();
        Ok(LogSummary {
            frames,
            bytes,
            path,
        })
    }
}

impl Drop for Hdf5Writer {
    /// An unfinished writer's temporary file is not a readable HDF5 file: remove it.
    fn drop(&mut self) {
        if self.destination.is_some() {
            // Best effort; the error that dropped the writer is the one that matters.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Copies the frames of `reader` in `range` to a new HDF5 file at `path`, calling
/// `progress(frames_done_in_log)` now and then.
///
/// The file is written under a temporary name next to `path` and renamed to `path` only when
/// complete, so a failed export (a corrupt frame, a full disk) leaves an existing file at
/// `path` as it was and no partial file behind. Refuses, before any work, a `path` without an
/// HDF5 extension, one that is the log itself or cannot be written, and a range that holds no
/// frame of the log.
///
/// Temporary files that exports killed before they could clean up left next to `path`
/// (`.NAME.PID-N.partial` of a process that no longer runs; Linux) are removed first.
pub fn export(
    reader: &LogReader,
    path: impl AsRef<Path>,
    range: ExportRange,
    progress: impl FnMut(usize),
) -> Result<LogSummary> {
    export_interruptible(reader, path, range, progress, &AtomicBool::new(false))
}

/// [`export`], stopping with [`ReplayError::Interrupted`] (the temporary file removed, `path`
/// untouched) once `stop` is set (a Ctrl-C handler's flag); it is read before every frame.
pub fn export_interruptible(
    reader: &LogReader,
    path: impl AsRef<Path>,
    range: ExportRange,
    progress: impl FnMut(usize),
    stop: &AtomicBool,
) -> Result<LogSummary> {
    let path = path.as_ref();
    range.check_every()?;
    crate::files::check_hdf5_extension(path)?;
    crate::files::refuse_to_overwrite_input(reader.path(), path)?;
    crate::files::check_output(path)?;
    let frames = range.frames_of(reader)?;
    // The writer writes a temporary file and renames it when finished (see `create`).
    write_frames(reader, path, frames, range.every, progress, stop)
}

/// Writes frames `frames` (indices into the log), every `every`-th, to a new file at `path`.
fn write_frames(
    reader: &LogReader,
    path: &Path,
    frames: std::ops::Range<usize>,
    every: u64,
    mut progress: impl FnMut(usize),
    stop: &AtomicBool,
) -> Result<LogSummary> {
    let exported = frames.len().div_ceil(every as usize);
    let mut w = Hdf5Writer::create_for_frames(path, reader.header(), exported)?;
    let start = frames.start;
    for i in frames.clone().step_by(every as usize) {
        if stop.load(Ordering::Relaxed) {
            return Err(ReplayError::Interrupted {
                path: path.to_path_buf(),
            });
        }
        let f = reader.frame(i)?;
        let input = FrameInput {
            solver_state: None,
            ..f.input()
        };
        w.append_with_summary(&input, &f.summary())?;
        if (i - start).is_multiple_of(256) {
            progress(i - start);
        }
    }
    progress(frames.len());
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;

    /// An export's path is checked before any work: an HDF5 name, and never the log.
    #[cfg(unix)]
    #[test]
    fn export_needs_an_hdf5_name_and_never_writes_over_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("run.lvlog");
        testutil::write(
            &log,
            &testutil::header(3, 2),
            &testutil::frames(3, 2, 5, 0),
            true,
        );
        let before = std::fs::read(&log).unwrap();
        // SAFETY: a private temporary file, not modified while read.
        let reader = unsafe { LogReader::open(&log) }.unwrap();
        let same = dir.path().join("same.h5");
        std::os::unix::fs::symlink(&log, &same).unwrap();
        for (out, says) in [
            (dir.path().join("out.lvlog"), "NAME.h5"),
            (log.clone(), "NAME.h5"),
            (same, "is the file being read"),
        ] {
            let err = export(&reader, &out, ExportRange::default(), |_| {})
                .unwrap_err()
                .to_string();
            assert!(err.contains(says), "{}: {err}", out.display());
        }
        assert_eq!(std::fs::read(&log).unwrap(), before);
        export(
            &reader,
            dir.path().join("ok.h5"),
            ExportRange::default(),
            |_| {},
        )
        .unwrap();
    }

    /// A stopped export leaves the earlier file and no temporary one; an export removes the
    /// temporary files of killed exports to its path (their process gone), not live ones.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_interrupted_export_leaves_nothing_and_killed_ones_are_cleaned_up() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(3, 2);
        let frames = testutil::frames(3, 2, 50, 0);
        let reader = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let out = dir.path().join("out.h5");
        std::fs::write(&out, b"earlier").unwrap();
        let listing = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        let stop = AtomicBool::new(true);
        let err =
            export_interruptible(&reader, &out, ExportRange::default(), |_| {}, &stop).unwrap_err();
        assert!(
            matches!(&err, ReplayError::Interrupted { path } if path == &out),
            "{err}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"earlier");
        assert_eq!(listing(), vec!["out.h5".to_string()]);
        // A process id that runs (this one) and one that does not.
        let dead = (2..4_194_304u32)
            .rev()
            .find(|p| !Path::new(&format!("/proc/{p}")).exists())
            .unwrap();
        // (A writer number no export of this test binary reaches: `partial_path` counts them.)
        let live = format!(".out.h5.{}-999999.partial", std::process::id());
        let killed = format!(".out.h5.{dead}-0.partial");
        let other = format!(".other.h5.{dead}-0.partial");
        for name in [&live, &killed, &other] {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        export(&reader, &out, ExportRange::default(), |_| {}).unwrap();
        assert_eq!(listing(), vec![other, live, "out.h5".to_string()]);
    }

    /// A directory that refuses new files is named with the operating system's reason, as
    /// for a `.lvlog` (/proc exists and is a directory, but creating a file there fails).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_refused_file_says_why_in_the_systems_words() {
        let err = Hdf5Writer::create("/proc/lavender-test.h5", &testutil::header(3, 2))
            .err()
            .expect("/proc takes no new files");
        let ReplayError::Io { action, source, .. } = &err else {
            panic!("not an I/O error: {err}");
        };
        assert_eq!(*action, "creating");
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound, "{err}");
        assert!(err.to_string().contains("os error 2"), "{err}");
    }

    #[test]
    fn export_writes_the_layout_and_values() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(3, 2);
        let frames = testutil::frames(3, 2, 50, 0);
        let reader = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let path = dir.path().join("x.h5");
        let range = ExportRange {
            from: 10,
            to: 40,
            every: 3,
        };
        let summary = export(&reader, &path, range, |_| {}).unwrap();
        // Substeps 10, 13, ..., 40: 11 frames.
        assert_eq!(summary.frames, 11);
        let file = hdf5::File::open(&path).unwrap();
        let substeps: Vec<u64> = file.dataset("substep").unwrap().read_raw().unwrap();
        assert_eq!(substeps, (10..=40).step_by(3).collect::<Vec<u64>>());
        let pose = file.dataset("bodies/pose").unwrap();
        assert_eq!(pose.shape(), vec![11, 3, 7]);
        let poses: Vec<f32> = pose.read_raw().unwrap();
        for (k, i) in (10..=40).step_by(3).enumerate() {
            assert_eq!(&poses[k * 21..k * 21 + 21], frames[i].poses.as_flattened());
        }
        let diag = file.dataset("joints/diagnostics").unwrap();
        assert_eq!(diag.shape(), vec![11, 2, 8]);
        assert!(diag.is_chunked() && diag.is_resizable());
        let names: Vec<VarLenUnicode> = file
            .group("joints")
            .unwrap()
            .attr("names")
            .unwrap()
            .read_raw()
            .unwrap();
        assert_eq!(names[1].as_str(), "hinge1");
        let columns: Vec<VarLenUnicode> = file.attr("columns").unwrap().read_raw().unwrap();
        assert_eq!(columns[3].as_str(), "anchor_error_norm");
        let hashes: Vec<u64> = file
            .dataset("summary/state_hash")
            .unwrap()
            .read_raw()
            .unwrap();
        assert_eq!(hashes[0], frames[10].state_hash);
        let bias: u32 = file.attr("bias_iterations").unwrap().read_scalar().unwrap();
        assert_eq!(
            bias, 8,
            "one bias pass per velocity pass: the header's scene sets none"
        );
        let chain_solve: u8 = file.attr("chain_solve").unwrap().read_scalar().unwrap();
        assert_eq!(chain_solve, 0);
        // A run with fewer bias passes and the chain solve says so.
        let mut header = testutil::header(3, 2);
        header.scene =
            "[world]\nvelocity_iterations = 8\nbias_iterations = 2\nchain_solve = true\n\
                        gyroscopic = false\nerror_reduction = 0.3\nsleeping = true\n"
                .into();
        let reader = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let path = dir.path().join("bias.h5");
        export(&reader, &path, ExportRange::default(), |_| {}).unwrap();
        let file = hdf5::File::open(&path).unwrap();
        let bias: u32 = file.attr("bias_iterations").unwrap().read_scalar().unwrap();
        assert_eq!(bias, 2);
        let chain_solve: u8 = file.attr("chain_solve").unwrap().read_scalar().unwrap();
        assert_eq!(chain_solve, 1);
        // Every other setting too, named or default.
        let flag = |name: &str| file.attr(name).unwrap().read_scalar::<u8>().unwrap();
        let number = |name: &str| file.attr(name).unwrap().read_scalar::<f32>().unwrap();
        assert_eq!(
            (flag("gyroscopic"), flag("sleeping"), flag("warm_starting")),
            (0, 1, 1)
        );
        assert_eq!(
            (number("error_reduction"), number("projection_factor")),
            (0.3, 1.0)
        );
        let substep: f64 = file.attr("substep_length").unwrap().read_scalar().unwrap();
        assert_eq!(substep, header.substep_length());
    }

    /// QA (2026-12-05): the names of more than about 4,000 bodies did not fit an attribute
    /// in the earliest file format (64 KiB of object header), so large scenes could not be
    /// written at all.
    #[test]
    fn the_names_of_a_hundred_thousand_bodies_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(100_000, 99_999);
        let path = dir.path().join("big.h5");
        let w = Hdf5Writer::create(&path, &header).unwrap();
        assert_eq!(w.finish().unwrap().frames, 0);
        let file = hdf5::File::open(&path).unwrap();
        let names: Vec<VarLenUnicode> = file
            .group("bodies")
            .unwrap()
            .attr("names")
            .unwrap()
            .read_raw()
            .unwrap();
        assert_eq!(names.len(), 100_000);
        assert_eq!(names[99_999].as_str(), "link99999");
    }

    #[test]
    fn streaming_writer_spans_several_chunks() {
        let dir = tempfile::tempdir().unwrap();
        // 700,000 bodies: 36 MB of poses and velocities per frame, so one frame per chunk.
        let mut header = testutil::header(1, 1);
        header.body_count = 700_000;
        header.body_names.clear();
        assert_eq!(Hdf5Writer::chunk_frames(&header), 1);
        let header = testutil::header(2, 1);
        let chunk = Hdf5Writer::chunk_frames(&header);
        assert_eq!(chunk, MAX_CHUNK_FRAMES);
        let frames = testutil::frames(2, 1, 3, 0);
        let path = dir.path().join("s.h5");
        let mut w = Hdf5Writer::create(&path, &header).unwrap();
        for f in &frames {
            w.append(&f.input()).unwrap();
        }
        let err = w.append(&frames[0].input()).unwrap_err();
        assert!(matches!(err, ReplayError::OutOfOrder { .. }), "{err}");
        let s = w.finish().unwrap();
        assert_eq!(s.frames, 3);
        let file = hdf5::File::open(&path).unwrap();
        let t: Vec<f64> = file.dataset("time").unwrap().read_raw().unwrap();
        assert_eq!(t, frames.iter().map(|f| f.time).collect::<Vec<_>>());
    }

    /// QA (2026-12-07): an export of one frame of 101 bodies wrote 226 kB, its chunks sized
    /// for 3,940 frames. An export's chunks hold at most its frames; a recording's (length
    /// unknown) the default; both stay extendable.
    #[test]
    fn an_exports_chunks_hold_at_most_its_frames() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(101, 100);
        let default = Hdf5Writer::chunk_frames(&header);
        assert!(default > 1000, "{default}");
        let frames = testutil::frames(101, 100, 40, 0);
        let reader = LogReader::from_bytes(&testutil::log_bytes(&header, &frames, true)).unwrap();
        let chunks = |path: &Path| {
            let file = hdf5::File::open(path).unwrap();
            [
                "time",
                "bodies/pose",
                "bodies/velocity",
                "joints/diagnostics",
            ]
            .iter()
            .chain(&["summary/total_energy", "summary/non_finite"])
            .map(|name| {
                let ds = file.dataset(name).unwrap();
                assert!(ds.is_resizable(), "{name}");
                ds.chunk().unwrap()[0]
            })
            .collect::<Vec<usize>>()
        };
        // One frame; substeps 10 to 30 every 3 (7 frames); the whole log.
        let one = dir.path().join("one.h5");
        let cases = [
            (one.clone(), (5, 5, 1), 1),
            (dir.path().join("thin.h5"), (10, 30, 3), 7),
            (dir.path().join("all.h5"), (0, u64::MAX, 1), 40),
        ];
        for (path, (from, to, every), n) in &cases {
            let range = ExportRange {
                from: *from,
                to: *to,
                every: *every,
            };
            assert_eq!(export(&reader, path, range, |_| {}).unwrap().frames, *n);
            assert_eq!(chunks(path), vec![*n; 6], "{}", path.display());
        }
        // A recording of unknown length keeps the default chunks.
        let recorded = dir.path().join("recorded.h5");
        let mut w = Hdf5Writer::create(&recorded, &header).unwrap();
        w.append(&frames[5].input()).unwrap();
        w.finish().unwrap();
        assert_eq!(chunks(&recorded), vec![default; 6]);
        // The one-frame export is a fraction of the default-chunked file of the same frame
        // (62 kB against 221 kB, 2026-12-07, the library filtering the padded chunk; 64 kB
        // against 101 kB since the padding is compressed here with the frame, `chunks`;
        // most of the rest is names and attributes).
        let (small, large) = (
            std::fs::metadata(&one).unwrap().len(),
            std::fs::metadata(&recorded).unwrap().len(),
        );
        assert!(small * 3 < large * 2, "{small} bytes against {large}");
    }

    /// QA (2026-12-05): a chunk held every joint of a block of frames, so one joint's series
    /// over the run read and inflated the whole dataset.
    #[test]
    fn chunks_split_the_joints_and_one_joints_series_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let (bodies, joints) = (3000, 2999);
        let header = testutil::header(bodies, joints);
        let per_chunk = Hdf5Writer::chunk_frames(&header);
        assert_eq!(
            per_chunk,
            BUFFER_BYTES / ((bodies * 13 + joints * 8) * 4 + 64)
        );
        let n = 2 * per_chunk + 5;
        let frames = testutil::frames(bodies, joints, n, 0);
        let path = dir.path().join("wide.h5");
        let mut w = Hdf5Writer::create(&path, &header).unwrap();
        for f in &frames {
            w.append(&f.input()).unwrap();
        }
        w.finish().unwrap();
        let file = hdf5::File::open(&path).unwrap();
        let ds = file.dataset("joints/diagnostics").unwrap();
        let chunk = ds.chunk().unwrap();
        assert_eq!(chunk[0], per_chunk);
        assert_eq!(chunk[1], CHUNK_BYTES / (per_chunk * 8 * 4));
        assert!(
            chunk[1] < joints / 4,
            "{chunk:?}: a joint's series reads a quarter at most"
        );
        let pose = file.dataset("bodies/pose").unwrap().chunk().unwrap();
        assert!(pose[1] < bodies && pose[0] == per_chunk, "{pose:?}");
        // Joint 2,000's anchor error norm over the run, across frame blocks.
        let series: ndarray::Array1<f32> = ds.read_slice_1d(s![.., 2000, 3]).unwrap();
        let expected: Vec<f32> = frames.iter().map(|f| f.diagnostics[2000][3]).collect();
        assert_eq!(series.to_vec(), expected);
        // Every value, bit for bit: the two whole blocks were compressed here
        // (`chunks::write_block`, the edge chunks padded), the last 5 frames by the library.
        let bits = |name: &str| -> Vec<u32> {
            let v: Vec<f32> = file.dataset(name).unwrap().read_raw().unwrap();
            v.iter().map(|x| x.to_bits()).collect()
        };
        let flat = |f: &dyn Fn(&testutil::OwnedFrame) -> Vec<f32>| -> Vec<u32> {
            frames.iter().flat_map(f).map(f32::to_bits).collect()
        };
        assert_eq!(
            bits("bodies/pose"),
            flat(&|f| f.poses.as_flattened().to_vec())
        );
        assert_eq!(
            bits("bodies/velocity"),
            flat(&|f| f.velocities.as_flattened().to_vec())
        );
        assert_eq!(
            bits("joints/diagnostics"),
            flat(&|f| f.diagnostics.as_flattened().to_vec())
        );
        // Stored deflated: the (random) values in fewer bytes than raw.
        let stored = ds.storage_size() as usize;
        assert!(stored < n * joints * 8 * 4, "{stored} bytes stored");
    }

    /// The chunks compressed on the `rayon` pool are the same bytes, and the file the same,
    /// whatever the pool's thread count and whenever it is written: the object headers hold
    /// no times (HDF5 keeps them in whole seconds; the two writes are more than one apart).
    #[test]
    fn the_file_is_the_same_whatever_the_thread_count() {
        let dir = tempfile::tempdir().unwrap();
        let header = testutil::header(3000, 2999);
        let frames = testutil::frames(3000, 2999, Hdf5Writer::chunk_frames(&header) + 2, 0);
        let write = |threads: usize| {
            let path = dir.path().join(format!("t{threads}.h5"));
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut w = Hdf5Writer::create(&path, &header).unwrap();
                    for f in &frames {
                        w.append(&f.input()).unwrap();
                    }
                    w.finish().unwrap();
                });
            // The stored chunks (offset, filter mask, bytes), and the whole file.
            let bytes = std::fs::read(&path).unwrap();
            let ds = hdf5::File::open(&path)
                .unwrap()
                .dataset("bodies/pose")
                .unwrap();
            let chunks = (0..ds.num_chunks().unwrap())
                .map(|i| {
                    let c = ds.chunk_info(i).unwrap();
                    let at = c.addr as usize;
                    (
                        c.offset,
                        c.filter_mask,
                        bytes[at..at + c.size as usize].to_vec(),
                    )
                })
                .collect::<Vec<_>>();
            (chunks, bytes)
        };
        let (one, one_file) = write(1);
        assert_eq!(one.len(), 2 * 3000usize.div_ceil(one[1].0[1] as usize));
        assert!(one.iter().all(|c| c.1 == 0), "every filter applied");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let (three, three_file) = write(3);
        assert!(one == three, "chunks differ between 1 and 3 threads");
        assert_eq!(one_file.len(), three_file.len());
        let differ = one_file.iter().zip(&three_file).position(|(a, b)| a != b);
        assert_eq!(differ, None, "the files differ from this byte on");
    }
}
