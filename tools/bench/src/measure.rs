//! One timed run: a scene on one engine, path and thread count, at 60 Hz frames of 4 substeps.
//!
//! Timing covers `World::step` only (the step includes refreshing the diagnostics once per
//! frame); the max anchor error is read from the diagnostics after every frame, outside the
//! timed region, for both engines (Rapier's poses are copied into a Lavender world with the same
//! joints and measured with the same diagnostics code).

use crate::scenes::BenchScene;
use crate::Result;
use lavender_engine::{Settings, SolverPath, World};
use std::time::Instant;

/// Frame time step, s (60 Hz).
pub const FRAME_DT: f32 = 1.0 / 60.0;
/// Substeps per frame (the 1/240 s substep cap at 60 Hz).
pub const SUBSTEPS: u32 = 4;

/// How to run a scene.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunConfig {
    /// Scalar reference or wide path.
    pub path: SolverPath,
    /// Worker threads (1: serial; the engine's `Settings::threads`).
    pub threads: u32,
    /// Timed frames.
    pub frames: u32,
    /// Velocity passes per substep (Rapier: PGS iterations per substep).
    pub velocity_iterations: u32,
    /// Position passes per substep (Rapier: stabilisation iterations per substep).
    pub position_iterations: u32,
    /// Lavender's split-impulse bias passes per substep (`Settings::bias_iterations`; `None`:
    /// one per velocity pass). Rapier has no separate count: its rows ignore it.
    pub bias_iterations: Option<u32>,
    /// Lavender's direct chain solve (`Settings::chain_solve`). Rapier's rows ignore it.
    pub chain_solve: bool,
    /// Lavender's island clusters (`World::set_island_clusters`, on by default; the same
    /// results either way). Rapier's rows ignore it.
    pub island_clusters: bool,
    /// Time each stage of the step ([`crate::stages`]; the binary must have installed the
    /// stage layer). Rapier's rows ignore it.
    pub stages: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        let s = Settings::default();
        RunConfig {
            path: SolverPath::Wide,
            threads: 1,
            frames: 60,
            velocity_iterations: s.velocity_iterations,
            position_iterations: s.position_iterations,
            bias_iterations: s.bias_iterations,
            chain_solve: s.chain_solve,
            island_clusters: true,
            stages: false,
        }
    }
}

impl RunConfig {
    /// The engine settings of this configuration.
    pub fn settings(&self) -> Settings {
        Settings {
            max_substep: FRAME_DT / SUBSTEPS as f32,
            velocity_iterations: self.velocity_iterations,
            bias_iterations: self.bias_iterations,
            position_iterations: self.position_iterations,
            chain_solve: self.chain_solve,
            threads: self.threads,
            solver_path: self.path,
            ..Settings::default()
        }
    }
}

/// One measured row (one JSON line of `lavender bench --json`).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRow {
    /// Scene name.
    pub scene: String,
    /// `"lavender"` or `"rapier3d"`.
    pub engine: &'static str,
    /// `"wide"` or `"scalar"` (Rapier: `"wide"` when built with its SIMD feature, else
    /// `"scalar"`).
    pub path: &'static str,
    /// Lanes per batch.
    pub simd_width: usize,
    /// Target features of this build.
    pub target_features: String,
    /// The machine's processor ([`host_cpu`]): the same build gains differently on different
    /// processors, so a row names where it ran.
    pub cpu: String,
    /// Worker threads.
    pub threads: usize,
    /// Bodies.
    pub bodies: usize,
    /// Joints.
    pub joints: usize,
    /// Substeps per frame.
    pub substeps: u32,
    /// Velocity passes (Rapier: PGS iterations) per substep.
    pub velocity_iterations: u32,
    /// Position passes (Rapier: stabilisation iterations) per substep.
    pub position_iterations: u32,
    /// Lavender's bias passes per substep when fewer than the velocity passes (`None`: one
    /// per velocity pass; always `None` for Rapier).
    pub bias_iterations: Option<u32>,
    /// Lavender's direct chain solve (always false for Rapier).
    pub chain_solve: bool,
    /// Lavender's island clusters (always false for Rapier).
    pub island_clusters: bool,
    /// Timed frames.
    pub frames: u32,
    /// Mean wall time of one 60 Hz frame, ms.
    pub ms_per_step: f64,
    /// With rounds ([`crate::suite::SuiteOptions::rounds`]): every round's `ms_per_step` in
    /// measurement order, of which `ms_per_step` is the median; empty for a row measured once.
    pub ms_per_step_rounds: Vec<f64>,
    /// `ms_per_step / (joints * substeps)`, ns.
    pub ns_per_joint_substep: f64,
    /// Row solves per second: active rows x (velocity passes + bias passes) x substeps per
    /// frame, over the frame time (Lavender only).
    pub row_solves_per_second: Option<f64>,
    /// Solver and joint storage per joint, bytes (Lavender only).
    pub bytes_per_joint: Option<usize>,
    /// Body storage per body, bytes (Lavender only).
    pub bytes_per_body: Option<usize>,
    /// Largest anchor error norm over every joint and frame, m.
    pub max_anchor_error: f32,
    /// Time per stage over the timed frames (Lavender with `RunConfig::stages` only).
    pub stages: Option<crate::stages::StageTimes>,
}

impl BenchRow {
    /// The iteration setting as the tables print it: `velocity/position`, with `bN` after
    /// the velocity passes when only N of them run a bias pass (`8b1/2`) and `c` with the
    /// direct chain solve (`1c/1`).
    pub fn settings(&self) -> String {
        let chain = if self.chain_solve { "c" } else { "" };
        let bias = self
            .bias_iterations
            .map_or(String::new(), |b| format!("b{b}"));
        format!(
            "{}{chain}{bias}/{}",
            self.velocity_iterations, self.position_iterations
        )
    }

    /// The row as a JSON object.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "scene": self.scene,
            "engine": self.engine,
            "path": self.path,
            "simd_width": self.simd_width,
            "target_features": self.target_features,
            "cpu": self.cpu,
            "threads": self.threads,
            "bodies": self.bodies,
            "joints": self.joints,
            "substeps": self.substeps,
            "velocity_iterations": self.velocity_iterations,
            "position_iterations": self.position_iterations,
            "bias_iterations": self.bias_iterations,
            "chain_solve": self.chain_solve,
            "island_clusters": self.island_clusters,
            "frames": self.frames,
            "ms_per_step": self.ms_per_step,
            "ms_per_step_rounds": if self.ms_per_step_rounds.is_empty() {
                vec![self.ms_per_step]
            } else {
                self.ms_per_step_rounds.clone()
            },
            "ns_per_joint_substep": self.ns_per_joint_substep,
            "row_solves_per_second": self.row_solves_per_second,
            "bytes_per_joint": self.bytes_per_joint,
            "bytes_per_body": self.bytes_per_body,
            "max_anchor_error": self.max_anchor_error,
            "stage_ms_per_substep": self.stages.map(|t| {
                crate::stages::STAGES
                    .iter()
                    .zip(t.ms_per_substep())
                    .map(|(name, ms)| (name.to_string(), serde_json::json!(ms)))
                    .collect::<serde_json::Map<_, _>>()
            }),
        })
    }
}

/// Largest anchor error norm of the world's current diagnostics, m.
pub fn max_anchor_error(world: &World) -> f32 {
    world
        .constraint_data()
        .iter()
        .map(|row| row[lavender_engine::diagnostics::ANCHOR_ERROR_NORM])
        .fold(0.0, f32::max)
}

/// Runs `scene` on Lavender with `config`: one untimed frame (it builds the schedule and the
/// batches), then `config.frames` timed frames.
pub fn run_lavender(scene: &BenchScene, config: &RunConfig) -> Result<BenchRow> {
    let mut world = scene.build(config.settings())?;
    world.set_island_clusters(config.island_clusters);
    let mut max_error = max_anchor_error(&world);
    world.step(FRAME_DT)?;
    max_error = max_error.max(max_anchor_error(&world));
    let mut seconds = 0.0;
    crate::stages::reset();
    for _ in 0..config.frames {
        let start = Instant::now();
        world.step(FRAME_DT)?;
        seconds += start.elapsed().as_secs_f64();
        max_error = max_error.max(max_anchor_error(&world));
    }
    let stages = config.stages.then(crate::stages::take);
    let frames = config.frames.max(1);
    let per_step = seconds / f64::from(frames);
    let memory = world.memory_report();
    let threads = match config.threads {
        0 => rayon::current_num_threads(),
        n => n as usize,
    };
    let rows = world.active_row_count() as f64;
    Ok(BenchRow {
        scene: scene.name().to_string(),
        engine: "lavender",
        path: config.path.name(),
        simd_width: match config.path {
            SolverPath::Wide => lavender_engine::lanes::WIDE_LANES,
            SolverPath::Scalar => 1,
        },
        target_features: lavender_engine::target_features(),
        cpu: host_cpu(),
        threads,
        bodies: world.body_count(),
        joints: world.joint_count(),
        substeps: SUBSTEPS,
        velocity_iterations: config.velocity_iterations,
        position_iterations: config.position_iterations,
        bias_iterations: config.bias_iterations,
        chain_solve: config.chain_solve,
        island_clusters: config.island_clusters,
        frames,
        ms_per_step: per_step * 1e3,
        ms_per_step_rounds: Vec::new(),
        ns_per_joint_substep: per_step * 1e9
            / (world.joint_count().max(1) as f64 * f64::from(SUBSTEPS)),
        row_solves_per_second: Some({
            let passes = config.velocity_iterations + world.settings().bias_passes();
            rows * f64::from(passes) * f64::from(SUBSTEPS) / per_step
        }),
        bytes_per_joint: Some(memory.bytes_per_joint),
        bytes_per_body: Some(memory.bytes_per_body),
        max_anchor_error: max_error,
        stages,
    })
}

/// The processor this process runs on, as `/proc/cpuinfo` names it, with its x86 family and
/// model numbers (a VM's model name can be as vague as "AMD EPYC") and the logical CPUs this
/// process may use: `AMD EPYC (family 25, model 17), 2 logical CPUs`. `"unknown"` parts
/// where the system does not say.
pub fn host_cpu() -> String {
    static CPU: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CPU.get_or_init(|| {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let logical = std::thread::available_parallelism().map_or(0, |n| n.get());
        describe_cpu(&cpuinfo, logical)
    })
    .clone()
}

/// [`host_cpu`] from the text of `/proc/cpuinfo` and a logical CPU count.
fn describe_cpu(cpuinfo: &str, logical: usize) -> String {
    // The first processor's fields ("key<tabs>: value").
    let field = |key: &str| {
        cpuinfo
            .lines()
            .take_while(|line| !line.trim().is_empty())
            .find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
    };
    let name = field("model name").unwrap_or_else(|| "unknown processor".into());
    let numbers = match (field("cpu family"), field("model")) {
        (Some(family), Some(model)) => format!(" (family {family}, model {model})"),
        _ => String::new(),
    };
    let logical = if logical == 0 {
        "unknown logical CPUs".to_string()
    } else {
        format!(
            "{logical} logical CPU{}",
            if logical == 1 { "" } else { "s" }
        )
    };
    format!("{name}{numbers}, {logical}")
}

#[cfg(test)]
mod tests {
    use super::describe_cpu;

    #[test]
    fn the_cpu_is_named_with_its_family_model_and_logical_count() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n\
                       model\t\t: 17\nmodel name\t: AMD EPYC\n\nprocessor\t: 1\n\
                       model name\t: something else\n";
        assert_eq!(
            describe_cpu(cpuinfo, 2),
            "AMD EPYC (family 25, model 17), 2 logical CPUs"
        );
        assert_eq!(describe_cpu("", 1), "unknown processor, 1 logical CPU");
        assert_eq!(
            describe_cpu("model name : X\n", 0),
            "X, unknown logical CPUs"
        );
    }
}
