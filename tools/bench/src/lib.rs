//! Lavender's benchmarks as a library: the benchmark scenes ([`scenes`]), a timed run of one
//! scene on one engine ([`measure`]), and the tables, JSON lines and plots ([`report`]).
//! With the `peer` feature, the `peer` module builds the same scenes in `rapier3d` and runs them at
//! matched settings. The `lavender bench` subcommand and the criterion benches in `benches/`
//! are thin callers of this crate.
//!
//! ```
//! use lavender_bench::{measure::{run_lavender, RunConfig}, scenes::BenchScene};
//! let scene = BenchScene::Chain { chains: 2, links: 10 };
//! let row = run_lavender(&scene, &RunConfig { frames: 2, ..RunConfig::default() }).unwrap();
//! assert_eq!(row.joints, 20);
//! assert!(row.ms_per_step > 0.0 && row.max_anchor_error < 0.1);
//! ```
#![deny(missing_docs)]

pub mod measure;
#[cfg(feature = "peer")]
pub mod peer;
pub mod report;
pub mod scenes;
pub mod stages;
pub mod suite;

/// Whether this build can run the rapier3d peer (the `peer` feature).
pub const PEER_BUILT: bool = cfg!(feature = "peer");

/// What can go wrong in a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The engine refused the scene or a step.
    #[error(transparent)]
    Engine(#[from] lavender_engine::EngineError),
    /// No benchmark scene has this name.
    #[error(
        "no benchmark scene is named `{0}`; scenes: chain, grid, fixed-stack, mixed, hubs \
         (benchmark scenes of their own, larger than those `lavender scenes` lists: `lavender \
         bench --help` gives their sizes; time a scene file with `lavender run FILE`)"
    )]
    UnknownScene(String),
    /// A plot could not be written.
    #[error("cannot write the plot: {0}")]
    Plot(String),
    /// The peer was asked for but not built.
    #[error(
        "this build has no rapier3d peer; rebuild with the `peer` feature: \
         cargo build --release -p lavender-cli --features peer"
    )]
    PeerNotBuilt,
}

/// Runs `scene` on rapier3d at the settings matching `config` (see the `peer` module).
#[cfg(feature = "peer")]
pub fn run_peer(
    scene: &scenes::BenchScene,
    config: &measure::RunConfig,
) -> Result<measure::BenchRow> {
    peer::run_rapier(scene, config)
}

/// Fails with [`BenchError::PeerNotBuilt`]: this build has no `peer` feature.
#[cfg(not(feature = "peer"))]
pub fn run_peer(
    _scene: &scenes::BenchScene,
    _config: &measure::RunConfig,
) -> Result<measure::BenchRow> {
    Err(BenchError::PeerNotBuilt)
}

/// Result alias.
pub type Result<T> = std::result::Result<T, BenchError>;
