//! The solver's flags, shared by `lavender run` and `lavender resume`: iteration counts,
//! threads, the solver path and the switches that a scene's `[world]` also sets (sleeping
//! among them).

use anyhow::bail;
use lavender_engine::{Settings, SolverPath};

/// Solver settings given on the command line, over a scene's or a log's.
#[derive(Debug, Clone, clap::Args)]
pub struct SolverArgs {
    /// Sequential-impulse velocity passes per substep (default 8).
    #[arg(long, value_parser = crate::output::whole::<u32>)]
    velocity_iterations: Option<u32>,
    /// Split-impulse bias passes per substep, each run with one of the first velocity passes
    /// (default: one per velocity pass; at most --velocity-iterations). Fewer cost less and
    /// leave more of the position error to the projection passes. `all`: one per velocity
    /// pass, whatever the scene file (or the log, for `resume`) says.
    #[arg(long, value_name = "N|all", value_parser = parse_bias_iterations)]
    bias_iterations: Option<BiasIterations>,
    /// Positional projection passes per substep (default 2).
    #[arg(long, value_parser = crate::output::whole::<u32>)]
    position_iterations: Option<u32>,
    /// Solve chains of joints directly (as `chain_solve = true` in the scene's `[world]`; off
    /// by default): each path of hinges and ball joints (limited ones too) is solved exactly
    /// in every velocity pass instead of row by row, so one or two passes do what
    /// Gauss-Seidel needs many for (a hanging net, a long chain). A recorded run keeps the
    /// setting.
    #[arg(long)]
    chain_solve: bool,
    /// Solve row by row even where the scene file (or the log, for `resume`) says
    /// `chain_solve = true`.
    #[arg(long, conflicts_with = "chain_solve")]
    no_chain_solve: bool,
    /// Worker threads (default 0: one per core for a scene of 1,024 joints or 4,096 bodies
    /// and more, the calling thread for a smaller one, where threads cost more than they
    /// save; 1 runs on the calling thread; 2 or more always use that many). Results are
    /// bitwise identical for every thread count.
    #[arg(long, value_parser = crate::output::whole::<u32>)]
    threads: Option<u32>,
    /// Start each substep's velocity passes from zero impulses instead of the last substep's
    /// (as `warm_starting = false` in the scene's `[world]`; on by default). The workaround
    /// for a light body jointed to much heavier ones, which warm starting can set spinning
    /// where the hub solve does not reach (engine/DESIGN.md: Hubs; a light link carrying a
    /// heavy body is solved directly whether warm-started or not). Nothing else should use
    /// it: without warm
    /// starting long chains and stacks come apart (the shipped 100-link chain reaches 9.9 m of
    /// anchor error in 5 s, 6.5 m even with 32 velocity passes). A recorded run keeps the
    /// setting.
    #[arg(long)]
    no_warm_start: bool,
    /// Warm-start the velocity passes even where the scene file (or the log, for `resume`) says
    /// `warm_starting = false`.
    #[arg(long, conflicts_with = "no_warm_start")]
    warm_start: bool,
    /// Leave out the gyroscopic term of rotating bodies (as `gyroscopic = false` in the scene's
    /// `[world]`; on by default): a free body then turns about a fixed world axis instead of
    /// keeping its angular momentum. For comparing with engines that leave the term out
    /// (bodies with three equal moments are the same either way). A recorded run keeps the
    /// setting.
    #[arg(long)]
    no_gyroscopic: bool,
    /// Integrate the gyroscopic term even where the scene file (or the log, for `resume`) says
    /// `gyroscopic = false`.
    #[arg(long, conflicts_with = "no_gyroscopic")]
    gyroscopic: bool,
    /// Leave out the velocity rows' curvature offsets (as `curvature = false` in the scene's
    /// `[world]`; on by default): each substep's velocity solve then aims along the
    /// constraints' tangents instead of their chords, and swinging or spinning bodies lose
    /// kinetic energy at first order in the substep. For comparing with engines that leave
    /// the term out. A recorded run keeps the setting.
    #[arg(long)]
    no_curvature: bool,
    /// Give the velocity rows their curvature offsets even where the scene file (or the log,
    /// for `resume`) says `curvature = false`.
    #[arg(long, conflicts_with = "no_curvature")]
    curvature: bool,
    /// Give a limited joint its stop's row as soon as it would reach the stop within the
    /// substep, with the speculative offset `C / h`, instead of once it has crossed it (as
    /// `speculative_limits = true` in the scene's `[world]`; off by default, the tutorial
    /// chapter's rule): a joint swinging fast into a stop then stops at it instead of passing
    /// it by up to a substep's motion. A recorded run keeps the setting.
    #[arg(long)]
    speculative_limits: bool,
    /// Limits add their rows only once crossed even where the scene file (or the log, for
    /// `resume`) says `speculative_limits = true`.
    #[arg(long, conflicts_with = "speculative_limits")]
    no_speculative_limits: bool,
    /// Run the scalar reference path (the same joint kernels one joint at a time instead of
    /// eight in SIMD lanes): the same results bit for bit, slower. For checking the wide path
    /// and for profiling against it.
    #[arg(long)]
    scalar: bool,
    /// Let islands at rest sleep (as `sleeping = true` in the scene's `[world]`; off by
    /// default). A recorded run keeps the setting, so `lavender resume` reproduces it; given
    /// to `resume`, islands may sleep from the resumed substep on (a variant).
    #[arg(long)]
    sleep: bool,
    /// Keep every island awake even where the scene file (or the log, for `resume`) says
    /// `sleeping = true`, waking those asleep: whether sleeping changed what followed.
    #[arg(long, conflicts_with = "sleep")]
    no_sleep: bool,
}

impl SolverArgs {
    /// Sets what was given over `settings`, which came from `source` (for messages: "the
    /// scene file F", "the log L"). Each switch's two forms (clap refuses both at once): the
    /// on form sets it, the off form clears it, neither leaves the value as it was.
    pub fn apply(&self, settings: &mut Settings, source: &str) -> anyhow::Result<()> {
        if let Some(n) = self.velocity_iterations {
            settings.velocity_iterations = n;
        }
        if let Some(BiasIterations(n)) = self.bias_iterations {
            settings.bias_iterations = n;
        }
        if let Some(n) = self.position_iterations {
            settings.position_iterations = n;
        }
        // The source's bias passes against fewer velocity passes given here: say where each
        // came from (QA 2026-12-07: "bias_iterations = 8 must be at most velocity_iterations"
        // named neither the scene file nor the way out).
        if let (Some(velocity), None, Some(bias)) = (
            self.velocity_iterations,
            self.bias_iterations,
            settings
                .bias_iterations
                .filter(|&b| b > settings.velocity_iterations),
        ) {
            bail!(
                "{source} sets `bias_iterations = {bias}`, more bias passes than the \
                 {velocity} velocity passes of --velocity-iterations (each bias pass runs with a \
                 velocity pass): add `--bias-iterations all` (one per velocity pass) or \
                 `--bias-iterations N` with N at most {velocity}"
            );
        }
        if let Some(n) = self.threads {
            settings.threads = n;
        }
        let switches = [
            (
                self.chain_solve,
                self.no_chain_solve,
                &mut settings.chain_solve,
            ),
            (
                self.warm_start,
                self.no_warm_start,
                &mut settings.warm_starting,
            ),
            (
                self.gyroscopic,
                self.no_gyroscopic,
                &mut settings.gyroscopic,
            ),
            (self.curvature, self.no_curvature, &mut settings.curvature),
            (
                self.speculative_limits,
                self.no_speculative_limits,
                &mut settings.speculative_limits,
            ),
            (self.sleep, self.no_sleep, &mut settings.sleeping),
        ];
        for (on, off, setting) in switches {
            if on || off {
                *setting = on;
            }
        }
        if self.scalar {
            settings.solver_path = SolverPath::Scalar;
        }
        Ok(())
    }
}

/// `--bias-iterations`: a number of bias passes, or `None` for one per velocity pass (`all`).
#[derive(Debug, Clone, Copy)]
struct BiasIterations(Option<u32>);

fn parse_bias_iterations(text: &str) -> Result<BiasIterations, String> {
    if text == "all" {
        return Ok(BiasIterations(None));
    }
    text.parse().map(|n| BiasIterations(Some(n))).map_err(|_| {
        format!(
            "`{text}` is not a number of passes: give a whole number >= 0, or `all` for one \
             bias pass per velocity pass"
        )
    })
}
