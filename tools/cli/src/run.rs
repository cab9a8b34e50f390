//! `lavender run`: run a scene and summarise its residuals.

use crate::output::{emit, emit_json, progress};
use anyhow::{bail, Context};
use lavender_engine::{ResidualMax, Scene, World};
use std::path::Path;
use std::time::Instant;

/// Run a scene (a shipped scene's name or a TOML file) and print steps, substeps, wall time,
/// the largest and final anchor error, the largest angular error and limit violation, and the
/// joint that held the worst anchor error.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  lavender run                              the default scene: the 100-link chain\n  lavender run pendulum --duration 10\n  lavender run data/scenes/grid.toml --dt 0.008333 --velocity-iterations 16 --json\n  lavender scenes                           lists the shipped scene names"
)]
pub struct Args {
    /// A shipped scene's name (see `lavender scenes`) or a path to a scene TOML file.
    /// Default: the shipped `chain` scene.
    scene: Option<String>,
    /// Number of frames to run (default: the scene's duration / dt).
    #[arg(long, conflicts_with = "duration")]
    steps: Option<u64>,
    /// Simulated seconds to run (default: the scene's `duration`).
    #[arg(long)]
    duration: Option<f32>,
    /// Frame time step in seconds (default: the scene's `dt`, else 1/60); each frame runs
    /// ceil(dt / max_substep) substeps.
    #[arg(long)]
    dt: Option<f32>,
    /// Sequential-impulse velocity passes per substep (default 8).
    #[arg(long)]
    velocity_iterations: Option<u32>,
    /// Positional projection passes per substep (default 2).
    #[arg(long)]
    position_iterations: Option<u32>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Loads a scene by shipped name or path.
pub fn load_scene(name: Option<&str>) -> anyhow::Result<Scene> {
    let name = name.unwrap_or("chain");
    let path = Path::new(name);
    if path.exists() || name.ends_with(".toml") {
        Ok(Scene::load(path)?)
    } else {
        Scene::builtin(name).with_context(|| {
            format!("`{name}` is neither a file nor a shipped scene (see `lavender scenes`)")
        })
    }
}

pub fn main(args: Args) -> anyhow::Result<()> {
    let scene = load_scene(args.scene.as_deref())?;
    let mut settings = scene.settings();
    if let Some(n) = args.velocity_iterations {
        settings.velocity_iterations = n;
    }
    if let Some(n) = args.position_iterations {
        settings.position_iterations = n;
    }
    let dt = args.dt.unwrap_or_else(|| scene.frame_dt());
    if !(dt.is_finite() && dt > 0.0) {
        bail!("--dt {dt} is not a positive number of seconds");
    }
    let steps = match (args.steps, args.duration) {
        (Some(n), _) => n,
        (None, Some(d)) if d.is_finite() && d >= 0.0 => (d / dt).round() as u64,
        (None, Some(d)) => bail!("--duration {d} is not a non-negative number of seconds"),
        (None, None) => (scene.duration() / dt).round() as u64,
    };
    let mut world = scene.build_with(settings)?;
    let name = args.scene.clone().unwrap_or_else(|| "chain".into());
    tracing::info!(scene = %name, steps, dt, "running");
    let bar = progress(steps, &format!("running {name}"));
    let start = Instant::now();
    let mut max = ResidualMax::default();
    let mut substeps = 0u64;
    for _ in 0..steps {
        let report = world.step_observed(dt, |w, _| max.fold(w.constraint_data()))?;
        substeps += u64::from(report.substeps);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    let summary = Summary::of(&name, &world, steps, substeps, dt, wall, &max);
    if args.json {
        emit_json(&summary.json())
    } else {
        emit(&summary.text())
    }
}

/// What a run reports.
struct Summary {
    scene: String,
    steps: u64,
    substeps: u64,
    dt: f32,
    wall_seconds: f64,
    bodies: usize,
    joints: usize,
    max: ResidualMax,
    final_anchor_error: f32,
    worst_joint: Option<String>,
}

impl Summary {
    fn of(
        scene: &str,
        world: &World,
        steps: u64,
        substeps: u64,
        dt: f32,
        wall_seconds: f64,
        max: &ResidualMax,
    ) -> Summary {
        let final_anchor_error = world
            .constraint_data()
            .iter()
            .map(|r| r[3])
            .fold(0.0f32, f32::max);
        Summary {
            scene: scene.to_string(),
            steps,
            substeps,
            dt,
            wall_seconds,
            bodies: world.body_count(),
            joints: world.joint_count(),
            max: *max,
            final_anchor_error,
            worst_joint: (world.joint_count() > 0)
                .then(|| world.joints().names()[max.anchor_joint].clone()),
        }
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "scene": self.scene,
            "bodies": self.bodies,
            "joints": self.joints,
            "steps": self.steps,
            "substeps": self.substeps,
            "dt": self.dt,
            "wall_seconds": self.wall_seconds,
            "max_anchor_error": self.max.anchor_error,
            "final_anchor_error": self.final_anchor_error,
            "max_angular_error": self.max.angular_error,
            "max_limit_violation": self.max.limit_violation,
            "worst_joint": self.worst_joint,
        })
    }

    fn text(&self) -> String {
        format!(
            "scene              {}\n\
             bodies, joints     {}, {}\n\
             steps              {} of {:.6} s ({} substeps)\n\
             wall time          {:.3} s\n\
             max anchor error   {:.3e} m (worst joint: {})\n\
             final anchor error {:.3e} m\n\
             max angular error  {:.3e} rad\n\
             max limit violation {:.3e}\n",
            self.scene,
            self.bodies,
            self.joints,
            self.steps,
            self.dt,
            self.substeps,
            self.wall_seconds,
            self.max.anchor_error,
            self.worst_joint.as_deref().unwrap_or("none"),
            self.final_anchor_error,
            self.max.angular_error,
            self.max.limit_violation,
        )
    }
}
