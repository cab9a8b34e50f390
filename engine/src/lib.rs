//! Lavender's rigid-body constraint engine.
//!
//! Bodies and joints live in structure-of-arrays storage ([`Bodies`], [`Joints`]). Every joint
//! is a set of scalar constraint rows ([`rows`]). A [`World::step`] of `dt` runs
//! `ceil(dt / max_substep)` substeps (1/240 s cap by default), each a list of named stages:
//! integrate velocities, prepare rows, warm start, sequential-impulse velocity passes with an
//! error-reduction bias, integrate poses, positional projection passes (see [`world`]).
//!
//! Diagnostics are eight `f32` columns per joint ([`diagnostics`]), derived from the poses
//! and velocities by [`World::sync`] and refreshed by every step.
//!
//! The solver walks a [`schedule`]: joints graph-coloured so that no two joints of a colour
//! share a dynamic body, packed by type into batches of eight, with an overflow set solved
//! serially; the small islands in clusters, each solved as one task through all its passes;
//! the joints of hubs (bodies with many joints, or light bodies with a few) solved exactly in
//! every pass ([`schedule::hubs`]), and with [`Settings::chain_solve`] chains of joints too. The joint kernels are written once over a lane type ([`lanes`]) and run either
//! as the scalar reference ([`SolverPath::Scalar`]) or eight joints at a time
//! ([`SolverPath::Wide`], the default); both give bitwise identical results. Colours run in
//! order and the batches of a colour in parallel on `rayon` ([`Settings::threads`]); the
//! work split depends on the scene alone, so results are bitwise identical for any thread
//! count. A steady-state step allocates nothing ([`World::memory_report`] gives the bytes per
//! joint and per body).
//!
//! ```
//! use lavender_engine::{BodyDesc, JointDesc, Settings, World, Vec3};
//!
//! let mut world = World::new(Settings::default())?;
//! let ground = world.add_body(BodyDesc::fixed("ground"))?;
//! let bob = world.add_body(BodyDesc::dynamic("bob").position(Vec3::new(1.0, 0.0, 0.0)))?;
//! world.add_joint(
//!     JointDesc::revolute("hinge", ground, bob).anchors(Vec3::ZERO, Vec3::new(-1.0, 0.0, 0.0)),
//! )?;
//! for _ in 0..60 {
//!     world.step(1.0 / 60.0)?;
//! }
//! let diagnostics = world.constraint_data();
//! assert!(diagnostics[0][3] < 1e-3, "anchor error {} m", diagnostics[0][3]);
//! // Warnings (a joint f32 cannot hold, substeps too long for a swing, ...) are logged
//! // through `tracing` where a subscriber is set up; `warnings` gathers them all.
//! assert!(world.warnings(1.0 / 60.0).is_empty());
//! # Ok::<(), lavender_engine::EngineError>(())
//! ```
//!
//! Bad input (a NaN position, a joint to a missing body, a limit with its bounds swapped) is
//! an [`EngineError`] that says what to change. What is legal but will not hold well (a
//! 1e-8 kg m^2 bob on a 1 m arm, substeps too long for a pendulum's swing) is a warning:
//! logged through `tracing` by `add_joint` and [`scene::Scene::build`], and gathered, every
//! one, by [`World::warnings`].
#![deny(missing_docs)]

pub mod bodies;
pub mod diagnostics;
pub mod error;
pub mod joints;
pub mod lanes;
mod parallel;
pub mod rows;
pub mod scene;
pub mod schedule;
pub mod settings;
mod sleep;
mod snapshot;
mod solver;
pub mod world;

pub use bodies::{box_inertia, Bodies, BodyDesc, BodyId, BodyKind};
pub use diagnostics::{JointForce, ResidualMax, COLUMN_COUNT, COLUMN_NAMES, COLUMN_UNITS};
pub use error::{EngineError, Result};
pub use glam::{Quat, Vec3};
pub use joints::{JointDesc, JointId, JointKind, Joints};
pub use scene::{builtin_scenes, ChainSpec, GridSpec, Scene};
pub use settings::{Settings, SolverPath, MAX_RUN_FRAMES, MAX_SUBSTEPS_PER_FRAME, MAX_THREADS};
pub use solver::solver_bytes_per_joint;
pub use world::{
    diagnostics_hash, state_hash, MemoryReport, StepObserver, StepReport, SubstepInfo, World,
    AUTO_POOL_MIN_BODIES, AUTO_POOL_MIN_JOINTS,
};

/// The engine's version, as in Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The target features this build was compiled with (they change floating-point results,
/// e.g. FMA, so they are part of a run's identity).
pub fn target_features() -> String {
    let mut f = Vec::new();
    macro_rules! feature {
        ($($name:tt),*) => {$(
            if cfg!(target_feature = $name) {
                f.push($name);
            }
        )*};
    }
    feature!("sse2", "sse4.1", "avx", "avx2", "fma", "avx512f", "neon");
    format!("{}:{}", std::env::consts::ARCH, f.join("+"))
}
