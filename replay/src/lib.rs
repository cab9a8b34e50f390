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
//! let path = dir.path().join("run.lavlog");
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
#![deny(missing_docs)]

mod append;
pub mod copy;
pub mod diff;
mod error;
pub mod files;
pub mod format;
pub mod h5;
mod reader;
pub mod recorder;
pub mod resume;
pub mod scrub;
#[cfg(test)]
mod testutil;
mod writer;

pub use error::{ReplayError, Result};
pub use format::{ColumnMax, FrameInput, FrameMeta, FrameSummary, Header, WorldSettingsRecord};
pub use reader::{FrameView, LogReader, Recovery, RecoveryReason, SkippedRecord, StorageKeepAlive};
pub use writer::{
    FlushPolicy, LogSummary, LogWriter, WriterOptions, BACKGROUND_QUEUE, COMMIT_BYTES,
    COMMIT_INTERVAL,
};
