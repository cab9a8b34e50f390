//! Lavender's run log: every substep's poses and diagnostics, recorded and read back.
//!
//! The log format stores plain arrays and knows nothing about the engine. A [`LogWriter`]
//! appends one checksummed rkyv frame per substep and an index on [`LogWriter::finish`]; a
//! [`LogReader`] maps the file, recovers logs whose writer was killed, and serves frames in
//! place. [`scrub`] finds residual spikes and [`diff`] compares two runs. On top, the parts that
//! know the engine: [`recorder`] feeds a running world into a log (or HDF5), [`resume`]
//! rebuilds a recorded run at any substep and continues it bit for bit, and [`h5`] writes the
//! HDF5 layout (recording straight to it, or exporting a log).
//!
//! ```
//! use lavender_replay::{FrameInput, Header, LogReader, LogWriter};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("run.lvlog");
//! let header = Header { body_count: 1, joint_count: 1, ..Header::default() };
//! let mut writer = LogWriter::create(&path, &header).unwrap();
//! for substep in 0..10u64 {
//!     let y = 1.0 - 0.01 * substep as f32;
//!     writer.append(&FrameInput {
//!         substep,
//!         time: substep as f64 * 0.01,
//!         poses: &[[0.0, y, 0.0, 0.0, 0.0, 0.0, 1.0]],
//!         velocities: &[[0.0; 6]],
//!         diagnostics: &[[0.0, 0.0, 0.0, 1e-4, 0.0, 0.0, 0.0, 0.0]],
//!         solver_state: None,
//!         total_energy: 1.0,
//!         state_hash: substep,
//!     }).unwrap();
//! }
//! writer.finish().unwrap();
//!
//! // SAFETY: nothing else modifies or truncates the file while the reader is alive.
//! let reader = unsafe { LogReader::open(&path) }.unwrap();
//! assert_eq!(reader.len(), 10);
//! assert!(reader.recovery().is_none());
//! let frame = reader.frame(3).unwrap();
//! assert_eq!(frame.pose(0).unwrap()[1], 0.97);
//! let column: Vec<_> = reader.column(0, 3).unwrap().collect();
//! assert_eq!(column[9], (9, 1e-4));
//! ```
//!
//! With the engine: a world built in code, recorded ([`recorder::Recorder::for_world`]),
//! then one joint's anchor error found by name, the frame of a substep, and the HDF5 export.
//! Frame `i` is the state after substep `i`, at time `(i + 1) h`. The state before the first
//! substep is not a frame: the header's scene holds it (`Header::recorded_scene` builds that
//! world, whose `constraint_data` reads its diagnostics without a step) when the recording
//! started on the world the scene built.
//!
//! ```
//! use lavender_engine::{diagnostics::ANCHOR_ERROR_NORM, BodyDesc, JointDesc, Settings, Vec3, World};
//! use lavender_replay::{h5, recorder::Recorder, LogReader};
//!
//! let dir = tempfile::tempdir()?;
//! let mut world = World::new(Settings::default())?;
//! let ground = world.add_body(BodyDesc::fixed("ground"))?;
//! let bob = world.add_body(BodyDesc::dynamic("bob").position(Vec3::new(1.0, 0.0, 0.0)))?;
//! world.add_joint(
//!     JointDesc::revolute("hinge", ground, bob)
//!         .anchors(Vec3::ZERO, Vec3::new(-1.0, 0.0, 0.0))
//!         .axis(Vec3::Z),
//! )?;
//! let dt = 1.0 / 60.0;
//! let mut recorder = Recorder::for_world(dir.path().join("run.lvlog"), &world, dt)?;
//! for _ in 0..60 {
//!     recorder.step(&mut world, dt)?;
//! }
//! let summary = recorder.finish()?;
//! assert_eq!(summary.frames, 240); // 1 s of 1/240 s substeps
//!
//! // SAFETY: nothing else modifies or truncates the file while the reader is alive.
//! let log = unsafe { LogReader::open(&summary.path) }?;
//! let hinge = log.header().find_joint("hinge").expect("recorded by name");
//! let worst = log.column(hinge, ANCHOR_ERROR_NORM)?.map(|(_, e)| e).fold(0.0, f32::max);
//! assert!(worst < 1e-3, "{worst} m");
//! let frame = log.frame(log.index_of_substep(119).unwrap())?;
//! assert!((frame.time() - 0.5).abs() < 1e-6); // after substep 119: 120 substeps of 1/240 s
//! // The state before the first substep: the header's scene.
//! let start = log.header().recorded_scene()?.build()?;
//! assert_eq!(start.body_pose(bob)?.0, Vec3::new(1.0, 0.0, 0.0));
//! assert_eq!(start.constraint_data()[hinge][ANCHOR_ERROR_NORM], 0.0);
//! h5::export(&log, dir.path().join("run.h5"), h5::ExportRange::default(), |_| ())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod append;
pub mod copy;
pub mod diff;
mod error;
pub mod files;
pub mod format;
#[cfg(feature = "hdf5")]
pub mod h5;
mod range;
mod reader;
pub mod recorder;
pub mod resume;
pub mod scrub;
#[cfg(test)]
mod testutil;
mod writer;

pub use error::{ReplayError, Result};
pub use format::{ColumnMax, FrameInput, FrameMeta, FrameSummary, Header, WorldSettingsRecord};
pub use range::ExportRange;
pub use reader::{FrameView, LogReader, Recovery, RecoveryReason, SkippedRecord, StorageKeepAlive};
pub use writer::{
    FlushPolicy, LogSummary, LogWriter, WriterOptions, BACKGROUND_QUEUE, COMMIT_BYTES,
    COMMIT_INTERVAL,
};
