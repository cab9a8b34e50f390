//! Lavender: a data-oriented constraint-dynamics engine with record/replay tooling.
//!
//! This facade re-exports the workspace's library crates so that one dependency
//! gives the whole product:
//!
//! - [`engine`]: the rigid-body world, joints, the substepped solver and its
//!   diagnostics;
//! - [`replay`]: the per-substep log, its reader and the replay tools.
//!
//! ```
//! use lavender::engine::{World, Settings};
//! let world = World::new(Settings::default()).unwrap();
//! assert_eq!(world.body_count(), 0);
//! ```
#![deny(missing_docs)]

pub use lavender_engine as engine;
pub use lavender_replay as replay;
