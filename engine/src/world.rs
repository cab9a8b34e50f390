//! The world and its step: a list of named stages, nothing else.
//!
//! One step of `dt` runs `n = ceil(dt / max_substep)` substeps of `h = dt / n`. Each substep:
//!
//! 1. `integrate_velocities`: `v += g h` for dynamic bodies, and with [`Settings::gyroscopic`]
//!    the gyroscopic term `w x I w` of their rotation (`rows::gyroscopic_lanes`);
//! 2. `prepare_rows`: world inverse inertia, then every joint's rows at the current poses
//!    (decoupled per joint, see `solver::decouple_lanes`), with the bias
//!    `error_reduction C / h` and last substep's impulses for warm start;
//! 3. warm start: apply those impulses (inside `prepare_rows`: each batch right after its
//!    rows are built, while they are in cache; the same bits as a stage of its own);
//! 4. `solve_velocities`: `velocity_iterations` passes (each: the hubs' joints solved exactly,
//!    then the chains' with the chain solve, then sequential impulses on the rest), the first
//!    `bias_iterations` of them (default: all) each fused with a pass of the error-reduction
//!    solve on the bias velocities (split impulses); after its
//!    last pass, each batch stores its impulses for the next warm start and its joint forces
//!    (5., fused while the rows are in cache);
//! 6. `integrate_positions`: `x += (v + u) h`, `q += 1/2 [(w + u_w) h, 0] q`, normalised,
//!    where `u` are the bias velocities, then discarded;
//! 7. `project_positions`: `position_iterations` passes that move the poses back onto the
//!    joint manifold, joint by joint (non-linear Gauss-Seidel; a joint's decoupled rows are
//!    applied together);
//! 8. `update_sleep` (only with [`Settings::sleeping`]): rest timers, and islands falling
//!    asleep or waking (see [`crate::schedule::islands`]); a change rebuilds the schedule
//!    before the next substep;
//! 9. `check_finite`: a non-finite state rolls the step back and names the body.
//!
//! Sleeping bodies are skipped by every stage: the schedule leaves out the joints of sleeping
//! islands, and the integration stages skip sleeping bodies (whose velocities are zero).
//!
//! Every stage that touches rows walks the [`crate::schedule`]: colours in order, the batches
//! of one colour in parallel (they share no dynamic body), then the overflow joints serially.
//! Per-body and per-joint stages run in fixed-size parallel chunks. Nothing depends on the
//! thread count, so results are bitwise identical for any [`Settings::threads`].

use crate::bodies::{inv_inertia_world, Bodies, BodyDesc, BodyId, BodyKind, BodyState};
use crate::diagnostics::{JointForce, COLUMN_COUNT};
use crate::error::{EngineError, Result};
use crate::joints::{self, JointDesc, JointId, Joints};
use crate::lanes::{
    BodyAccess, PoseAccess, Shared, SolverPose, SolverVelocity, Wide, Q, V3, WIDE_LANES,
};
use crate::parallel::{Exec, FlushDenormals};
use crate::rows::{
    gyroscopic_coupling_lanes, gyroscopic_lanes, integrate_rotation, MAX_ROWS_PER_JOINT,
};
use crate::schedule::{Islands, Schedule, ScheduleOptions};
use crate::settings::{Settings, SolverPath};
use crate::sleep::Sleep;
use crate::solver::{PrepareInput, Solver};
use glam::{Quat, Vec3};
use std::sync::Arc;
use tracing::trace_span;

/// Joints per parallel task of the diagnostics (a multiple of the lane width).
const DIAGNOSE_CHUNK: usize = 512;

/// Bodies per parallel task of the gyroscopic term (a multiple of the lane width).
const GYROSCOPIC_CHUNK: usize = 1024;

/// Whether a body's rotation has a gyroscopic term (its step and its coupling between
/// velocity passes): dynamic, awake, and of unequal principal moments (`inv_inertia_local`,
/// 1/(kg m^2)); for equal ones `w x I w` is zero.
fn has_gyroscopic_term(kind: BodyKind, asleep: bool, inv_inertia_local: Vec3) -> bool {
    let k = inv_inertia_local;
    kind == BodyKind::Dynamic && !asleep && !(k.x == k.y && k.y == k.z)
}

/// The solver storage of the selected path.
#[derive(Debug, Clone)]
enum PathSolver {
    Scalar(Solver<f32>),
    Wide(Solver<Wide>),
}

/// Runs `$body` with `$s` bound to the solver of whichever path is built.
macro_rules! on_path {
    ($solver:expr, $s:ident => $body:expr) => {
        match $solver {
            Some(PathSolver::Scalar($s)) => $body,
            Some(PathSolver::Wide($s)) => $body,
            None => unreachable!("the solver is built at the start of every step"),
        }
    };
}

/// Storage of a world, bytes per joint and per body (names' text excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryReport {
    /// Joint storage (description, warm-start impulses, forces, diagnostics, rollback copy)
    /// plus the solver's batches (padding included), per joint.
    pub bytes_per_joint: usize,
    /// Of which the solver's batches.
    pub solver_bytes_per_joint: usize,
    /// Body storage (state, mass properties, kernel and bias velocities, rollback copy), per
    /// body.
    pub bytes_per_body: usize,
}

/// A step observer, called after every substep.
pub type StepObserver<'a> = dyn FnMut(&World, SubstepInfo) + 'a;

/// What one call to [`World::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// Substeps run.
    pub substeps: u32,
    /// Length of each substep, s.
    pub substep_dt: f32,
    /// The step ended before its last substep because its `stop` asked
    /// ([`World::step_stoppable`]); `substeps` says how many ran.
    pub stopped_early: bool,
}

/// Where the world is after a substep, passed to step observers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubstepInfo {
    /// Global index of the substep just completed (0 for the first substep of the world).
    pub substep: u64,
    /// Simulation time after it, s.
    pub time: f64,
    /// Its length, s.
    pub dt: f32,
    /// False for a substep that went non-finite, which only
    /// [`World::step_observed_through_failure`] shows (the step is then rolled back).
    pub finite: bool,
}

/// With `threads = 0` (the default), a world of fewer joints than this (and fewer bodies
/// than [`AUTO_POOL_MIN_BODIES`]) steps on the calling thread instead of rayon's global pool:
/// waking the pool's threads and joining them at every stage cost more than they saved.
/// Measured on a 2-core VM (2026-12-05, `lavender run SCENE --threads 1` against `--threads
/// 2`): every shipped scene ran 1.0 to 5x slower on two threads (the 100-link chain 0.60 s
/// against 0.31 s for 20 s, the pendulum 8x with the kernel time of idle wake-ups); eight
/// 100-link chains (800 joints) ran 1.2x faster and a 20 x 20 grid (760) 1.05x slower, 30 x
/// 30 (1,740) the same, 40 x 40 1.1x faster, 60 x 60 1.8x faster. An explicit `threads >= 2`
/// always uses its pool.
pub const AUTO_POOL_MIN_JOINTS: usize = 1024;
/// See [`AUTO_POOL_MIN_JOINTS`]: bodies without joints cost only their integration.
pub const AUTO_POOL_MIN_BODIES: usize = 4096;

/// A rigid-body world: bodies, joints, settings and the solver's working storage.
#[derive(Debug, Clone)]
pub struct World {
    settings: Settings,
    bodies: Bodies,
    joints: Joints,
    diagnostics: Vec<[f32; COLUMN_COUNT]>,
    /// Colours, batches and islands; `None` after the scene changed until the next step.
    schedule: Option<Schedule>,
    solver: Option<PathSolver>,
    /// This world's thread pool when `settings.threads >= 2`.
    pool: Option<Arc<rayon::ThreadPool>>,
    backup: BodyState,
    impulse_backup: Vec<[f32; MAX_ROWS_PER_JOINT]>,
    /// The joints' forces before the step (`force_on_b`, `torque_on_a`, `torque_on_b`), put
    /// back with the rest when a step is rolled back.
    force_backup: [Vec<Vec3>; 3],
    time: f64,
    substeps_done: u64,
    /// The velocities the kernels work on during the velocity passes (copied from the bodies
    /// before warm start, back after the last pass).
    velocities: Vec<SolverVelocity>,
    /// Bias ("split") velocities: the corrective velocities the error-reduction bias asks
    /// for. They move the poses in the substep they are computed in, then are discarded, so
    /// the bias never adds kinetic energy nor enters the warm start.
    bias: Vec<SolverVelocity>,
    /// The poses and inverse masses as 32-byte blocks, which prepare and the projection
    /// gather by transposes: copied from the bodies before prepare; from the position
    /// integration to the end of the projection the working poses, which are then copied
    /// back (between steps the bodies' arrays are the state).
    poses: Vec<SolverPose>,
    /// Each body's angular velocity at the substep's start (world, rad/s), kept for the
    /// gyroscopic coupling between velocity passes ([`gyroscopic_coupling_lanes`]).
    omega_start: Vec<Vec3>,
    /// Each body's angular velocity without the joints' impulses: after the gyroscopic step,
    /// plus the couplings so far (world, rad/s).
    omega_free: Vec<Vec3>,
    /// Whether the gyroscopic step changed any body's angular velocity this substep (else the
    /// coupling is zero and the velocity passes run as one).
    gyroscopic_active: bool,
    /// Rest timers and sleep flags (see [`crate::schedule::islands`]).
    sleep: Sleep,
    /// Rollback copy of the timers and flags.
    sleep_backup: (Vec<f32>, Vec<bool>),
    /// Set by `update_sleep` when an island fell asleep or woke: the schedule is rebuilt
    /// before the next substep.
    sleep_changed: bool,
    /// The islands of the scene; `None` after a body or joint was added.
    island_cache: Option<Islands>,
    /// With sleeping on, [`World::solver_state`]: the impulses then the timers, refreshed
    /// whenever either changes.
    solver_state_buf: Vec<f32>,
    /// Whether small islands are solved in clusters ([`World::set_island_clusters`]).
    island_clusters: bool,
}

impl World {
    /// An empty world with these settings (validated).
    pub fn new(settings: Settings) -> Result<World> {
        settings.validate()?;
        Ok(World {
            settings,
            bodies: Bodies::default(),
            joints: Joints::default(),
            diagnostics: Vec::new(),
            schedule: None,
            solver: None,
            island_clusters: true,
            pool: None,
            backup: BodyState::default(),
            impulse_backup: Vec::new(),
            force_backup: Default::default(),
            time: 0.0,
            substeps_done: 0,
            velocities: Vec::new(),
            poses: Vec::new(),
            bias: Vec::new(),
            sleep: Sleep::default(),
            omega_start: Vec::new(),
            omega_free: Vec::new(),
            gyroscopic_active: false,
            sleep_backup: (Vec::new(), Vec::new()),
            sleep_changed: false,
            island_cache: None,
            solver_state_buf: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Replaces the settings (validated first; the world is unchanged on error). Changing
    /// any sleep setting or gravity wakes every island.
    pub fn set_settings(&mut self, settings: Settings) -> Result<()> {
        settings.validate()?;
        let old = self.settings;
        self.settings = settings;
        let sleep_key = |s: &Settings| {
            (
                s.sleeping,
                s.sleep_linear_speed,
                s.sleep_angular_speed,
                s.time_to_sleep,
            )
        };
        // Gravity moves resting bodies too (QA, 2026-12-06: a sleeping pendulum stayed put
        // when gravity turned sideways).
        if sleep_key(&old) != sleep_key(&settings) || old.gravity != settings.gravity {
            self.wake_all();
        }
        Ok(())
    }

    /// Adds a body (awake).
    pub fn add_body(&mut self, desc: BodyDesc) -> Result<BodyId> {
        let id = self.bodies.push(&desc)?;
        self.sleep.push();
        self.island_cache = None;
        self.invalidate_schedule();
        self.publish_solver_state();
        Ok(id)
    }

    /// Adds a joint between two existing bodies.
    pub fn add_joint(&mut self, desc: JointDesc) -> Result<JointId> {
        let n = self.bodies.len();
        for id in [desc.body_a, desc.body_b] {
            if id.index() >= n {
                return Err(EngineError::InvalidJoint {
                    joint: desc.name.clone(),
                    reason: format!(
                        "it names body index {} but the world has {n} bodies; add the body first",
                        id.0
                    ),
                });
            }
        }
        let (a, b) = (desc.body_a.index(), desc.body_b.index());
        if a == b {
            return Err(EngineError::InvalidJoint {
                joint: desc.name.clone(),
                reason: format!(
                    "it connects body `{}` to itself: a joint needs two different bodies",
                    self.bodies.name[a]
                ),
            });
        }
        if self.bodies.kind[a] != BodyKind::Dynamic && self.bodies.kind[b] != BodyKind::Dynamic {
            return Err(EngineError::InvalidJoint {
                joint: desc.name.clone(),
                reason: format!(
                    "both `{}` and `{}` are static or kinematic, so the joint can move nothing; \
                     make one of them dynamic",
                    self.bodies.name[a], self.bodies.name[b]
                ),
            });
        }
        let id = self
            .joints
            .push(&desc, self.bodies.rotation[a], self.bodies.rotation[b])?;
        if let Some(warning) = self.conditioning_warning(id.index()) {
            tracing::warn!("{warning}");
        }
        if let Some(warning) = self.slider_axis_warning(id.index()) {
            tracing::warn!("{warning}");
        }
        // A new joint touches its bodies: wake their islands before they merge.
        self.wake_touching(a);
        self.wake_touching(b);
        self.island_cache = None;
        self.diagnostics.push([0.0; COLUMN_COUNT]);
        self.sync_joint(id.index());
        self.invalidate_schedule();
        self.publish_solver_state();
        Ok(id)
    }

    /// Number of bodies.
    pub fn body_count(&self) -> usize {
        self.bodies.len()
    }
    /// Number of joints.
    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }
    /// Read-only body storage.
    pub fn bodies(&self) -> &Bodies {
        &self.bodies
    }
    /// Read-only joint storage.
    pub fn joints(&self) -> &Joints {
        &self.joints
    }
    /// Simulation time, s.
    pub fn time(&self) -> f64 {
        self.time
    }
    /// Substeps completed since the world was built.
    pub fn substeps_done(&self) -> u64 {
        self.substeps_done
    }
    /// Rows in the last prepared velocity solve.
    pub fn active_row_count(&self) -> usize {
        match &self.solver {
            Some(PathSolver::Scalar(s)) => s.active_rows(),
            Some(PathSolver::Wide(s)) => s.active_rows(),
            None => 0,
        }
    }

    /// Solve the small islands in clusters, each as one task through all the passes of a
    /// stage (on by default; see [`crate::schedule::Cluster`]), or every joint through the
    /// shared colours. A choice of speed alone: the results are bitwise identical either
    /// way (tested); off is there to measure what the clusters gain.
    pub fn set_island_clusters(&mut self, on: bool) {
        if self.island_clusters != on {
            self.island_clusters = on;
            self.invalidate_schedule();
        }
    }

    fn invalidate_schedule(&mut self) {
        self.schedule = None;
        self.solver = None;
    }

    /// Whether a body sleeps (always false for static and kinematic bodies, and with
    /// [`Settings::sleeping`] off).
    pub fn is_body_sleeping(&self, id: BodyId) -> Result<bool> {
        let i = self.check_body(id)?;
        Ok(self.sleep.asleep[i])
    }

    /// Number of sleeping bodies.
    pub fn sleeping_body_count(&self) -> usize {
        self.sleep.sleeping_bodies
    }

    /// Number of sleeping islands.
    pub fn sleeping_island_count(&self) -> usize {
        self.sleep.sleeping_islands
    }

    /// Seconds each body has rested below the sleep thresholds (frozen while its island
    /// sleeps; 0 for static and kinematic bodies and with sleeping off).
    pub fn sleep_timers(&self) -> &[f32] {
        &self.sleep.timer
    }

    /// Wakes every island and resets every rest timer.
    pub fn wake_all(&mut self) {
        if self.sleep.wake_all() {
            self.invalidate_schedule();
        }
        self.publish_solver_state();
    }

    /// The islands of the current scene, cached until a body or joint is added.
    fn cached_islands(&mut self) -> &Islands {
        if self.island_cache.is_none() {
            self.island_cache = Some(match &self.schedule {
                Some(s) => s.islands.clone(),
                None => Islands::build(&self.bodies.kind, &self.joint_bodies()),
            });
        }
        self.island_cache.as_ref().expect("just built")
    }

    /// With sleeping on, wakes what touching body `i` through the API disturbs: its island if
    /// it is dynamic, else every island jointed to it (a moved static or kinematic body
    /// drags its joints). Resets those islands' rest timers.
    fn wake_touching(&mut self, i: usize) {
        if !self.settings.sleeping {
            return;
        }
        self.cached_islands();
        let islands = self.island_cache.as_ref().expect("cached above");
        let mut which: Vec<u32> = Vec::new();
        if islands.island_of[i] != Islands::NONE {
            which.push(islands.island_of[i]);
        } else {
            for (&a, &b) in self.joints.body_a.iter().zip(&self.joints.body_b) {
                let other = if a as usize == i {
                    b
                } else if b as usize == i {
                    a
                } else {
                    continue;
                };
                let island = islands.island_of[other as usize];
                if island != Islands::NONE && !which.contains(&island) {
                    which.push(island);
                }
            }
        }
        let islands = self.island_cache.as_ref().expect("cached above");
        if self.sleep.wake_islands(islands, &which) {
            self.invalidate_schedule();
        }
        self.publish_solver_state();
    }

    /// With sleeping on, copies the impulses and the timers into the solver-state buffer.
    fn publish_solver_state(&mut self) {
        if self.settings.sleeping {
            self.solver_state_buf.clear();
            self.solver_state_buf
                .extend_from_slice(self.joints.impulse.as_flattened());
            self.solver_state_buf.extend_from_slice(&self.sleep.timer);
        }
    }

    /// The schedule (colours, batches, overflow, islands), built now if the scene changed
    /// since the last step.
    pub fn schedule(&mut self) -> &Schedule {
        self.ensure_solver();
        self.schedule.as_ref().expect("built by ensure_solver")
    }

    /// The island of a body: connected components of dynamic bodies through joints, numbered
    /// by their lowest body index; `None` for static and kinematic bodies. Uses the schedule
    /// of the last step (computing the islands afresh, O(bodies + joints), if the scene has
    /// changed since).
    pub fn island_of(&self, id: BodyId) -> Result<Option<u32>> {
        let i = self.check_body(id)?;
        let island = match &self.schedule {
            Some(s) => s.islands.island_of[i],
            None => self.islands().island_of[i],
        };
        Ok((island != Islands::NONE).then_some(island))
    }

    /// The islands of the current scene.
    pub fn islands(&self) -> Islands {
        match &self.schedule {
            Some(s) => s.islands.clone(),
            None => Islands::build(&self.bodies.kind, &self.joint_bodies()),
        }
    }

    fn joint_bodies(&self) -> Vec<(u32, u32)> {
        self.joints
            .body_a
            .iter()
            .zip(&self.joints.body_b)
            .map(|(&a, &b)| (a, b))
            .collect()
    }

    /// Builds the schedule and the solver storage of the selected path if missing, and the
    /// thread pool if `threads` asks for one. Allocates; a steady-state step does not.
    fn ensure_solver(&mut self) {
        let path = self.settings.solver_path;
        let chain_solve = self.settings.chain_solve;
        let current = matches!(
            (&self.solver, path),
            (Some(PathSolver::Scalar(_)), SolverPath::Scalar)
                | (Some(PathSolver::Wide(_)), SolverPath::Wide)
        ) && self.schedule.as_ref().map(|s| s.options.chain_solve)
            == Some(chain_solve);
        if !current {
            let width = match path {
                SolverPath::Scalar => 1,
                SolverPath::Wide => WIDE_LANES,
            };
            let limited: Vec<bool> = self.joints.limit.iter().map(Option::is_some).collect();
            let anchors: Vec<(Vec3, Vec3)> = (self.joints.anchor_a.iter())
                .zip(&self.joints.anchor_b)
                .map(|(&a, &b)| (a, b))
                .collect();
            let joint_bodies = self.joint_bodies();
            let light = crate::schedule::hubs::light_bodies(
                &self.bodies.inv_mass,
                &self.bodies.inv_inertia_local,
                &joint_bodies,
                &anchors,
                &self.joints.kind,
                chain_solve,
            );
            let schedule = Schedule::build_awake(
                width,
                &self.bodies.kind,
                &joint_bodies,
                &self.joints.kind,
                &limited,
                (&self.sleep.asleep, &light, &self.bodies.inv_mass),
                ScheduleOptions {
                    chain_solve,
                    clusters: self.island_clusters,
                },
            );
            self.log_hubs(&schedule, &light);
            if self.island_cache.is_none() {
                self.island_cache = Some(schedule.islands.clone());
            }
            self.solver = Some(match path {
                SolverPath::Scalar => {
                    PathSolver::Scalar(Solver::new(&schedule, &self.joints, &self.bodies))
                }
                SolverPath::Wide => {
                    PathSolver::Wide(Solver::new(&schedule, &self.joints, &self.bodies))
                }
            });
            self.schedule = Some(schedule);
        }
        let threads = self.settings.threads as usize;
        if threads < 2 {
            self.pool = None;
        } else if self.pool.as_ref().map(|p| p.current_num_threads()) != Some(threads) {
            // On failure (threads cannot be spawned) the global pool is used instead.
            self.pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .ok()
                .map(Arc::new);
        }
    }

    /// Logs (`tracing`, debug level) what the hub rules decided for a new schedule: each hub
    /// with the rule that made it one and its joints, and each light body left row by row.
    /// The rules depend on masses, anchors and joint types (`schedule::hubs`), so a user
    /// wondering why a scene's joints were or were not solved together can ask with
    /// `RUST_LOG=lavender_engine=debug`.
    fn log_hubs(&self, schedule: &Schedule, light: &[crate::schedule::hubs::Light]) {
        use crate::schedule::hubs::Light;
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return;
        }
        let names = &self.bodies.name;
        let rule = |light: Light| match light {
            Light::No => "a body with 5 or more joints",
            Light::Hub => "a light body with 3 or more joints to heavier ones",
            Light::Carrier => "a light link carrying a heavy body",
        };
        let mut hub_of = vec![false; names.len()];
        for hub in &schedule.hubs {
            let body = hub.body as usize;
            hub_of[body] = true;
            let joints: Vec<&str> = (hub.joints.iter())
                .map(|&j| self.joints.name[j as usize].as_str())
                .collect();
            tracing::debug!(
                "hub `{}` ({}): its {} joints solved exactly in every pass: {}",
                names[body],
                rule(light[body]),
                joints.len(),
                joints.join(", ")
            );
        }
        for (body, &light) in light.iter().enumerate() {
            if light != Light::No && !hub_of[body] {
                tracing::debug!(
                    "body `{}` is {}, but no hub: its joints are another hub's, asleep, or \
                     too few for the rule (engine/DESIGN.md, Hubs); those no hub took are solved row by row",
                    names[body],
                    rule(light)
                );
            }
        }
    }

    /// The warnings about how this world is built, each a sentence: for each joint
    /// [`World::conditioning_warning`], then [`World::conflict_warning`],
    /// [`World::start_error_warning`], [`World::locked_pair_warning`] and
    /// [`World::substep_warning`] for frames of `dt` s. What the Python module raises when a
    /// `Sim` is built; `add_joint` and `Scene::build` log them through `tracing`.
    pub fn setup_warnings(&self, dt: f32) -> Vec<String> {
        let conditioning = (0..self.joints.len()).flat_map(|j| {
            let slider = self.slider_axis_warning(j);
            self.conditioning_warning(j).into_iter().chain(slider)
        });
        let world = [
            self.conflict_warning(),
            self.start_error_warning(),
            self.locked_pair_warning(),
            self.free_fall_warning(),
            self.substep_warning(dt),
        ];
        conditioning.chain(world.into_iter().flatten()).collect()
    }

    /// Every warning about this world as it stands, each a sentence, in one list:
    /// [`World::setup_warnings`], then the settings' [`Settings::threads_warning`],
    /// [`World::far_from_origin_warning`], [`World::far_levers_warning`] (where it names a
    /// joint the conditioning warnings do not) and [`World::overflow_warning`]. Some of these
    /// are logged through `tracing`, heard only where a subscriber is set up; a world built
    /// in code should ask here after building it (and after a run, for the last three), so
    /// that no warning is lost (QA 2026-12-07: a library user saw none).
    pub fn warnings(&self, dt: f32) -> Vec<String> {
        // As built, the far levers and the conditioning judge the same anchors: the far
        // levers' sentence only where a joint has the one and not the other.
        let far_levers = (0..self.joints.len())
            .any(|j| self.far_lever(j).is_some() && self.conditioning_warning(j).is_none())
            .then(|| self.far_levers_warning())
            .flatten();
        let mut all = self.setup_warnings(dt);
        let state = [
            self.settings.threads_warning(),
            self.far_from_origin_warning(),
            far_levers,
            self.overflow_warning(),
        ];
        all.extend(state.into_iter().flatten());
        all
    }

    /// A sentence when prismatic joint `joint`'s `axis_b` is not its `axis_a` at the joint's
    /// locked relative rotation: a slider moves along `axis_a` (A's frame) and locks B's
    /// rotation, which fixes B's axis, so `axis_b` is not used and a different one says the
    /// scene meant something else (QA 2026-12-08: `axis_a = [1, 0, 0]` with `axis_b = [0, 1,
    /// 0]`, or one `axis` for a block turned on its rail, slid along A's axis without a word).
    /// Logged by `add_joint`; in [`World::setup_warnings`].
    pub fn slider_axis_warning(&self, joint: usize) -> Option<String> {
        if self.joints.kinds()[joint] != joints::JointKind::Prismatic {
            return None;
        }
        let (axis_a, axis_b) = self.joints.axes_of(joint);
        let b_in_a = self.joints.reference_of(joint) * axis_b;
        let cos = axis_a.dot(b_in_a).clamp(-1.0, 1.0);
        if cos >= joints::AXES_ALIGNED {
            return None;
        }
        let implied = self.joints.reference_of(joint).inverse() * axis_a;
        Some(format!(
            "prismatic joint `{}` slides along axis_a {:?} (body A's frame); its axis_b {:?} \
             (body B's frame) points {:.3} rad away from it at the joint's locked relative \
             rotation, and is not used: at that rotation the slide axis in B's frame is {:?}. \
             If B should slide along its own axis_b, turn B or A so that the two agree, or give \
             `axis_a` and `axis_b` that do",
            self.joints.names()[joint],
            axis_a.to_array(),
            axis_b.to_array(),
            cos.acos(),
            implied.to_array(),
        ))
    }

    /// Why f32 cannot hold joint `joint`, if it cannot: a body of the joint that is nearly a
    /// point mass at the end of a long lever. The body's share of the joint's
    /// `K = J M^-1 J^T` has the scales `1 / m` and `r^2 / I`, and at a ratio `m r^2 / I`
    /// beyond about 1e6 f32 keeps too few digits of the smaller one to hold the anchor (QA: a
    /// 1 kg bob on a 1 m arm with `I = 1e-8 kg m^2` fell freely, 4.5 m of anchor error in 1
    /// s, with no error). `add_joint` logs this as a `tracing` warning; the Python module
    /// raises it as a `RuntimeWarning`.
    pub fn conditioning_warning(&self, joint: usize) -> Option<String> {
        let (a, b) = self.joints.bodies_of(joint);
        let (anchor_a, anchor_b) = self.joints.anchors_of(joint);
        // Rows whose K is below `MIN_K` are skipped as immovable; bodies so heavy that the
        // joint's translational K, 1/m_a + 1/m_b, falls below it are not held at all (QA: a
        // 1e15 kg arm on a hinge fell freely, 4.9 m in 1 s, with no word; measured: 1e12 kg
        // holds 3.5e-7 m, 2e12 kg falls, 2.9 m).
        let (ia, ib) = (a.index(), b.index());
        let inv_mass = self.bodies.inv_mass[ia] + self.bodies.inv_mass[ib];
        if inv_mass > 0.0 && inv_mass < crate::rows::MIN_K {
            return Some(format!(
                "joint `{}`: its bodies are too heavy for single-precision rows (1/m_a + 1/m_b \
                 = {inv_mass:.1e} 1/kg, below the {:.0e} under which a row counts as \
                 immovable): the joint will not hold. Express masses in larger units (tonnes \
                 instead of kilograms) so that they come nearer 1",
                self.joints.names()[joint],
                crate::rows::MIN_K,
            ));
        }
        for (body, anchor) in [(a, anchor_a), (b, anchor_b)] {
            let i = body.index();
            let Some((ratio, across)) = self.lever_ratio(i, anchor) else {
                continue;
            };
            if ratio > MAX_LEVER_RATIO {
                return Some(format!(
                    "joint `{}`: body `{}` has m r^2 / I = {ratio:.1e} at this anchor (mass \
                     {:.3e} kg, anchor {:.3e} m from its centre, moment of inertia across it \
                     {:.3e} kg m^2); beyond about {MAX_LEVER_RATIO:.0e} single precision cannot \
                     hold the joint and it will drift. Give the body a realistic inertia (`box`) \
                     or put its centre nearer the anchor",
                    self.joints.names()[joint],
                    self.bodies.name[i],
                    1.0 / self.bodies.inv_mass[i],
                    anchor.as_dvec3().length(),
                    across,
                ));
            }
        }
        None
    }

    /// A sentence when joints are far from holding at the current poses (before a run: as
    /// built): more than [`START_ANCHOR_ERROR`] off their anchors, [`START_ANGULAR_ERROR`]
    /// off their axes or past their limits. The first substeps pull such bodies into place,
    /// a jump rather than motion, with energy to match (QA 2026-12-07: a weld between boxes
    /// 1 m apart snapped one across in a substep, with no word). How many, and the first.
    /// `Scene::build` logs it as a `tracing` warning; the Python module raises it as a
    /// `RuntimeWarning`. `None` when every joint starts near holding.
    pub fn start_error_warning(&self) -> Option<String> {
        // A slider's limit is in metres: held to the anchors' tolerance.
        let limit_tol = |j: usize| match self.joints.kind[j] {
            joints::JointKind::Prismatic => START_ANCHOR_ERROR,
            _ => START_ANGULAR_ERROR,
        };
        let far = |j: usize| {
            let d = &self.diagnostics[j];
            d[3] > START_ANCHOR_ERROR || d[4] > START_ANGULAR_ERROR || d[5] > limit_tol(j)
        };
        let mut far_joints = (0..self.joints.len()).filter(|&j| far(j));
        let first = far_joints.next()?;
        let d = self.diagnostics[first];
        let count = 1 + far_joints.count();
        let past_limit = match self.joints.kind[first] {
            _ if d[5] <= 0.0 => String::new(),
            joints::JointKind::Prismatic => format!(", {:.2e} m past its limit", d[5]),
            _ => format!(", {:.2e} rad past its limit", d[5]),
        };
        let (their, start) = if count == 1 {
            ("its", "1 joint starts".to_string())
        } else {
            ("their", format!("{count} joints start"))
        };
        Some(format!(
            "{start} far from holding as built (more than {START_ANCHOR_ERROR:.0e} m off \
             {their} anchors, {START_ANGULAR_ERROR} rad off {their} axes, or past {their} \
             limits by {START_ANGULAR_ERROR} rad or {START_ANCHOR_ERROR:.0e} m), so the first \
             substeps pull {their} bodies into place, a jump rather than motion; {}joint `{}`, \
             {:.2e} m off its anchor, {:.2e} rad off its axes{past_limit}. If that is not \
             meant, check the anchors, axes and the bodies' poses",
            if count == 1 { "" } else { "the first: " },
            self.joints.names()[first],
            d[3],
            d[4],
        ))
    }

    /// The small-swing period (s) under gravity of the dynamic body joint `j` holds to a
    /// static or kinematic one, as a pendulum about the joint's anchor: `T = 2 pi / w`,
    /// `w^2 = m g_perp r_perp / (I + m r_perp^2)`, where `r` runs from the body's centre to
    /// the anchor, `I` is the moment about the swing axis (a hinge's axis, with `r` and `g`
    /// across it; for a ball joint the least moment across `r`, the fastest swing).
    /// With the body and index. `None` for welds and sliders (no swing), joints between
    /// two dynamic bodies or two fixed ones, and a body hung at its centre or without
    /// gravity across its arm.
    fn pendulum_period(&self, j: usize) -> Option<(usize, f64)> {
        let b = &self.bodies;
        let (a, c) = (
            self.joints.body_a[j] as usize,
            self.joints.body_b[j] as usize,
        );
        let (body, anchor, axis) = match (b.inv_mass[a] > 0.0, b.inv_mass[c] > 0.0) {
            (false, true) => (c, self.joints.anchor_b[j], self.joints.axis_b[j]),
            (true, false) => (a, self.joints.anchor_a[j], self.joints.axis_a[j]),
            _ => return None,
        };
        let q = b.rotation[body];
        let r = (q * anchor).as_dvec3();
        let g = self.settings.gravity.as_dvec3();
        let mass = 1.0 / f64::from(b.inv_mass[body]);
        let inv_local = b.inv_inertia_local[body].as_dvec3();
        let (r_perp, g_perp, moment) = match self.joints.kind[j] {
            joints::JointKind::Revolute => {
                // The axis is in the body's frame (QA 2026-12-07: turned into it once more, a
                // rotated bob's period was read about another axis).
                let local = axis.as_dvec3().normalize_or_zero();
                let n = q.as_dquat() * local;
                // I about n: sum n_i^2 I_i over the principal axes (an infinite moment, 1/I =
                // 0, does not swing).
                let mut moment = 0.0;
                for (n_i, inv_i) in local.to_array().into_iter().zip(inv_local.to_array()) {
                    if n_i * n_i > 1e-12 {
                        if inv_i <= 0.0 {
                            return None;
                        }
                        moment += n_i * n_i / inv_i;
                    }
                }
                (r - n * r.dot(n), g - n * g.dot(n), moment)
            }
            joints::JointKind::Spherical => {
                // The fastest swing: about the axis across the arm of least moment (QA
                // 2026-12-07: the mean of the two missed a thin bar's fast swing).
                (r, g, least_moment_across(inv_local, anchor.as_dvec3()))
            }
            _ => return None,
        };
        let arm = r_perp.length();
        let omega2 = mass * g_perp.length() * arm / (moment + mass * arm * arm);
        (omega2.is_finite() && omega2 > 0.0)
            .then(|| (body, 2.0 * std::f64::consts::PI / omega2.sqrt()))
    }

    /// A sentence when a joint holds a body (to a static or kinematic one) that swings under
    /// gravity faster than the substeps of frames of `dt` resolve: fewer than
    /// [`MIN_SUBSTEPS_PER_SWING`] of them in its pendulum period about the joint
    /// (QA 2026-12-07: a pendulum run with `max_substep = dt = 1` s came apart, with no word).
    /// How many joints, and the one with the fewest. `Scene::build` logs it as a `tracing`
    /// warning; the Python module raises it as a `RuntimeWarning`. `None` when every swing is
    /// resolved.
    ///
    /// Also (a second sentence) when a light link between two dynamic bodies is pulled by a
    /// heavier one faster than the substeps follow ([`Self::light_link_swing`]).
    pub fn substep_warning(&self, dt: f32) -> Option<String> {
        // The substeps frames of `dt` run (QA 2026-12-07: `max_substep = 1` with frames of
        // 1/60 s runs substeps of 1/60 s, and was warned about as 1 s).
        let h = f64::from(dt / self.settings.substeps_for(dt) as f32);
        match (self.swing_warning(h), self.light_link_warning(h)) {
            (None, None) => None,
            (Some(w), None) | (None, Some(w)) => Some(w),
            (Some(a), Some(b)) => Some(format!("{a}. Also: {b}")),
        }
    }

    /// The pendulum half of [`Self::substep_warning`], for substeps of `h` s.
    fn swing_warning(&self, h: f64) -> Option<String> {
        let fast: Vec<(usize, usize, f64)> = (0..self.joints.len())
            .filter_map(|j| {
                self.pendulum_period(j)
                    .map(|(body, period)| (j, body, period))
            })
            .filter(|&(_, _, period)| period / h < MIN_SUBSTEPS_PER_SWING)
            .collect();
        let &(j, body, period) = fast.iter().min_by(|x, y| x.2.total_cmp(&y.2))?;
        Some(format!(
            "{} faster than the substeps resolve; {}joint `{}` \
             holds `{}` as a pendulum of period {period:.3e} s under gravity, and substeps of \
             {h:.3e} s give it {:.1} per swing; below \
             {MIN_SUBSTEPS_PER_SWING} its motion is wrong (the shipped pendulum, period 2.0 s, \
             gained 61 % of its swing's energy in 20 s with 0.25 s substeps and came apart with \
             1 s). Use `max_substep` at most {:.3e} s (20 per swing; `Settings::max_substep`, a \
             scene's `[world] max_substep`, `--max-substep` on `lavender run`)",
            if fast.len() == 1 {
                "1 joint holds a body that swings".to_string()
            } else {
                format!("{} joints hold bodies that swing", fast.len())
            },
            if fast.len() == 1 { "" } else { "the fastest: " },
            self.joints.names()[j],
            self.bodies.name[body],
            period / h,
            period / 20.0,
        ))
    }

    /// How fast a light link swings across the line of its pull: for a dynamic body with
    /// exactly two joints, both to dynamic bodies, and a heavier body `M` at one of them, the
    /// link (mass `m`, its joints' anchors `L` apart) pulled along its length by `M`'s weight
    /// `T = M g` swings across at `w = sqrt(2 T / (m L))` (rad/s) when it is turned off that
    /// line. The fastest such link: (link, joint to the heavy body, heavy body, `w`). A link
    /// with a joint to a static or kinematic body (a single link carrying a load) is a
    /// carrier, solved exactly (`schedule::hubs`), and not counted.
    pub fn light_link_swing(&self) -> Option<(usize, usize, usize, f64)> {
        let g = self.settings.gravity.as_dvec3().length();
        if !(g > 0.0 && g.is_finite()) {
            return None;
        }
        let inv_mass = &self.bodies.inv_mass;
        let (start, joints_at) = crate::schedule::joints_per_body(
            inv_mass.len(),
            &self.joint_bodies(),
            |_| true,
            |_| true,
        );
        // `link`'s anchor at joint `j` and the body at its other end.
        let far_end = |j: usize, link: usize| {
            if self.joints.body_a[j] as usize == link {
                (self.joints.anchor_a[j], self.joints.body_b[j] as usize)
            } else {
                (self.joints.anchor_b[j], self.joints.body_a[j] as usize)
            }
        };
        let mut fastest: Option<(usize, usize, usize, f64)> = None;
        for link in 0..inv_mass.len() {
            let &[j1, j2] = &joints_at[start[link]..start[link + 1]] else {
                continue;
            };
            let (j1, j2) = (j1 as usize, j2 as usize);
            let (anchor1, other1) = far_end(j1, link);
            let (anchor2, other2) = far_end(j2, link);
            if inv_mass[link] <= 0.0
                || inv_mass[other1] <= 0.0
                || inv_mass[other2] <= 0.0
                || other1 == link
                || other2 == link
            {
                continue;
            }
            let length = (anchor1 - anchor2).as_dvec3().length();
            if length.is_nan() || length <= 0.0 {
                continue;
            }
            let m = 1.0 / f64::from(inv_mass[link]);
            for (j, other) in [(j1, other1), (j2, other2)] {
                let load = 1.0 / f64::from(inv_mass[other]);
                if load <= m {
                    continue;
                }
                let w = (2.0 * load * g / (m * length)).sqrt();
                if w.is_finite() && fastest.is_none_or(|f| w > f.3) {
                    fastest = Some((link, j, other, w));
                }
            }
        }
        fastest
    }

    /// The light-link half of [`Self::substep_warning`]: a sentence when the fastest light
    /// link ([`Self::light_link_swing`]) turns more than [`MAX_LINK_SWING_PER_SUBSTEP`] in a
    /// substep of `h` s.
    fn light_link_warning(&self, h: f64) -> Option<String> {
        let (link, j, load, w) = self.light_link_swing()?;
        let per_substep = w * h;
        if per_substep <= MAX_LINK_SWING_PER_SUBSTEP {
            return None;
        }
        let b = &self.bodies;
        Some(format!(
            "light link `{}` ({:.3e} kg) is pulled through joint `{}` by `{}` ({:.3e} kg); \
             turned off the line of that pull it swings at about sqrt(2 M g / (m L)) = \
             {w:.3e} rad/s, {per_substep:.2} rad per substep of {h:.3e} s, and a chain of \
             light links swinging more than about {MAX_LINK_SWING_PER_SUBSTEP} rad per \
             substep comes apart (nine 1 kg, 0.2 m links under 1000 kg, 1.3 rad per \
             substep: 15.7 m of anchor error in 5 s). Use `max_substep` at most {:.3e} s \
             ({LINK_SWING_ADVISED} rad per substep; `Settings::max_substep`, a scene's `[world] \
             max_substep`, `--max-substep` on `lavender run`), or `--max-anchor-error` to stop \
             such a run",
            b.name[link],
            1.0 / b.inv_mass[link],
            self.joints.names()[j],
            b.name[load],
            1.0 / b.inv_mass[load],
            LINK_SWING_ADVISED / w,
        ))
    }

    /// A sentence when joints on one pair of bodies disagree at the current poses: no one
    /// small rigid motion of one body against the other would make them all hold, within
    /// [`CONFLICT_ANCHOR_ERROR`] and [`CONFLICT_ANGULAR_ERROR`] (`joints::agreement`: the
    /// joints' own errors fitted by one motion, a joint's residual being how far it is from
    /// agreeing). Such joints cannot all hold, and the solver trades the error between them
    /// every substep, which can pump energy into the pair (QA 2026-12-07: a 20 kg door on two
    /// hinges whose anchors were 1 cm out of line gained 32 J in 30 s; a body on two ball
    /// joints 0.5 m apart, 1.6 kJ). A pair whose joints are all off by the same motion (a
    /// body built a little off its joints) agrees. How many pairs, and the worst joint of the
    /// first. `Scene::build` logs it as a `tracing` warning; the Python module raises it as a
    /// `RuntimeWarning`; call it after adding joints by hand. `None` when every pair agrees.
    pub fn conflict_warning(&self) -> Option<String> {
        let pairs = self.joints_by_pair();
        let (anchor_tol, angle_tol) = (
            f64::from(CONFLICT_ANCHOR_ERROR),
            f64::from(CONFLICT_ANGULAR_ERROR),
        );
        let mut conflicts = pairs
            .into_iter()
            .filter(|(_, shared)| shared.len() > 1)
            .filter_map(|((a, b), shared)| {
                let d = joints::agreement::disagreement(
                    &self.bodies,
                    &self.joints,
                    &shared,
                    anchor_tol,
                    angle_tol,
                )?;
                // Disagreeing (a NaN, from a non-finite pose, other warnings name).
                (d.anchor > anchor_tol || d.angle > angle_tol).then_some((a, b, shared, d))
            });
        let (a, b, shared, worst) = conflicts.next()?;
        let names = self.joints.names();
        let others: Vec<String> = (shared.iter())
            .filter(|&&j| j != worst.joint)
            .map(|&j| format!("`{}`", names[j]))
            .collect();
        let others = match others.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let pairs = 1 + conflicts.count();
        Some(format!(
            "{} of bodies with joints that disagree: no motion of one body makes them all hold, \
             so the solver trades the error between them, which can pump energy into the pair; \
             place their anchors and axes so that they agree. The first: joint `{}` joins \
             `{}` and `{}`, as {others} {}; it is {:.2e} m and {:.2e} rad from holding as \
             built (its anchor, a locked slide; its axes, a locked angle), and still {:.2e} m \
             and {:.2e} rad with the body moved to suit all of them as well as it can",
            if pairs == 1 {
                "1 pair".to_string()
            } else {
                format!("{pairs} pairs")
            },
            names[worst.joint],
            self.bodies.name[a as usize],
            self.bodies.name[b as usize],
            if shared.len() == 2 { "does" } else { "do" },
            worst.built_anchor,
            worst.built_angle,
            worst.anchor,
            worst.angle,
        ))
    }

    /// The joints of every pair of bodies, by the pair's lower body index, then the other.
    fn joints_by_pair(&self) -> std::collections::BTreeMap<(u32, u32), Vec<usize>> {
        let mut pairs: std::collections::BTreeMap<(u32, u32), Vec<usize>> = Default::default();
        for j in 0..self.joints.len() {
            let (a, b) = self.joints.bodies_of(j);
            pairs
                .entry((a.0.min(b.0), a.0.max(b.0)))
                .or_default()
                .push(j);
        }
        pairs
    }

    /// A sentence when nothing holds a jointed world up: gravity on, joints, and every body
    /// dynamic, so the whole assembly falls freely (QA 2026-12-08: a pendulum whose pivot
    /// lacked `kind = "static"` fell with its bob, without a word). `Scene::build` logs it;
    /// in [`World::setup_warnings`].
    pub fn free_fall_warning(&self) -> Option<String> {
        let gravity = self.settings.gravity;
        let anchored = (self.bodies.kinds().iter()).any(|&k| k != BodyKind::Dynamic);
        if self.joints.is_empty() || gravity == Vec3::ZERO || anchored {
            return None;
        }
        Some(format!(
            "every body is dynamic, so nothing holds the jointed bodies up: under gravity {:?} \
             m/s^2 they all fall freely together. If a body should stay put (a ground, a \
             pivot), make it static (`kind = \"static\"`, `BodyDesc::fixed`); if the fall is \
             meant, ignore this",
            gravity.to_array()
        ))
    }

    /// A sentence when the joints on one pair of bodies, each of which alone lets the bodies
    /// move, together leave them no motion: every turn of one body against the other by 1
    /// rad, or slide by 1 m, strains some joint by more than [`LOCK_STRAIN`] m (angular rows
    /// weighed at [`LOCK_METRES_PER_RADIAN`]; `joints::agreement::lock_strain`). Such a pair is locked by
    /// accident (a door on two hinges whose lines are apart, a ball joint off a hinge's line,
    /// a hinge and a slider meant as a cylinder joint): the joints hold as built, but fight
    /// each other whenever the bodies move. A weld or a locked limit on the pair is a lock
    /// meant, never warned about. How many pairs, and the first. `Scene::build` logs it as a
    /// `tracing` warning; the Python module raises it as a `RuntimeWarning`. `None` when every
    /// pair of several joints keeps a common motion.
    pub fn locked_pair_warning(&self) -> Option<String> {
        let scale = LOCK_METRES_PER_RADIAN;
        let mut locked = self
            .joints_by_pair()
            .into_iter()
            .filter_map(|((a, b), shared)| {
                // Only pairs the solver moves.
                let dynamic = |i: u32| self.bodies.inv_mass[i as usize] > 0.0;
                if !(dynamic(a) || dynamic(b)) {
                    return None;
                }
                let strain =
                    joints::agreement::lock_strain(&self.bodies, &self.joints, &shared, scale)?;
                (strain > LOCK_STRAIN).then_some((a, b, shared, strain))
            });
        let (a, b, shared, strain) = locked.next()?;
        let names = self.joints.names();
        let listed: Vec<String> = shared.iter().map(|&j| format!("`{}`", names[j])).collect();
        let listed = match listed.split_last() {
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let pairs = 1 + locked.count();
        Some(format!(
            "{} of bodies locked by joints that each let them move: together they allow no \
             motion, and they fight each other whenever the bodies move (a door on two hinges \
             whose lines are 1 mm apart, spun at 1 rad/s, loses 95 % of its energy in 10 s). If the bodies should move, \
             give the joints a motion in common (hinges on one line, a ball joint on a hinge's \
             line, or a body between a hinge and a slider); if they should not, weld them with \
             one fixed joint. The first: {listed} join `{}` and `{}`; any turn of one against \
             the other by 1 rad, or slide by 1 m, strains them by at least {strain:.2e} m \
             (a radian of their axes weighed as {LOCK_METRES_PER_RADIAN} m)",
            if pairs == 1 {
                "1 pair".to_string()
            } else {
                format!("{pairs} pairs")
            },
            self.bodies.name[a as usize],
            self.bodies.name[b as usize],
        ))
    }

    /// `m r^2 / I` of dynamic body `i` at the point `r` of its own frame (m), with `I` the
    /// moment across `r`, and that moment (kg m^2); `None` for a static or kinematic body.
    fn lever_ratio(&self, i: usize, r: Vec3) -> Option<(f64, f64)> {
        let inv_mass = f64::from(self.bodies.inv_mass[i]);
        if inv_mass <= 0.0 {
            return None;
        }
        // In f64 (QA: an anchor 1e30 m out was reported with a moment of "NaN" in f32).
        let across = crate::bodies::inv_inertia_across(self.bodies.inv_inertia_local[i], r);
        Some((across / inv_mass, r.as_dvec3().length_squared() / across))
    }

    /// Like [`World::conditioning_warning`], at the current poses and for the point where
    /// joint `joint`'s rows act on each body: its own anchor, except for a slider's body A,
    /// on which the rows across the slide act at body B's anchor (a slider run far out acts
    /// far from A). What a step that went non-finite says about the state it rolled back to,
    /// and `lavender run` about a run's end.
    pub fn lever_warning(&self, joint: usize) -> Option<String> {
        let (body, distance, ratio) = self.far_lever(joint)?;
        Some(format!(
            "joint `{}` acts {distance:.3e} m from the centre of body `{}` (m r^2 / I = \
             {ratio:.1e}; beyond about {MAX_LEVER_RATIO:.0e} single precision cannot hold it): a \
             slider run far out, or an inertia too small for the body",
            self.joints.names()[joint],
            self.bodies.name[body],
        ))
    }

    /// A sentence when the diagnostics or the total energy are not finite while the bodies'
    /// state is (a step would have failed otherwise): a speed or distance whose square f32
    /// cannot hold, e.g. a free body sent at 3e38 m/s (QA 2026-12-06: inf with no word).
    /// What `lavender run` and Python's `Sim.run` say at a run's end; `None` otherwise.
    pub fn overflow_warning(&self) -> Option<String> {
        let overflowed = !self.total_energy().is_finite()
            || self.diagnostics.iter().flatten().any(|x| !x.is_finite());
        if !overflowed || self.bodies.first_non_finite().is_some() {
            return None;
        }
        let fastest = self
            .bodies
            .linear_velocity
            .iter()
            .map(|v| v.abs().max_element())
            .fold(0.0f32, f32::max);
        Some(format!(
            "diagnostics or the energy overflowed single precision (inf) while the bodies' \
             state stayed finite: a speed or distance too large to square in f32 (the fastest \
             body moves at {fastest:e} m/s); those values are not reliable: use larger units \
             or smaller speeds"
        ))
    }

    /// A sentence when a jointed dynamic body is so far from the origin that single
    /// precision resolves its position more coarsely than `FAR_FROM_ORIGIN_SPACING` (1 cm,
    /// from 2^17 m = 131 km on, where the spacing is 1.6 cm): its joints' errors and motions
    /// below that spacing are lost (QA 2026-12-06: a pendulum hung at x = 1e8 m never moved,
    /// its diagnostics all zero). What `lavender run` and Python's `Sim.run` say; `None`
    /// otherwise.
    pub fn far_from_origin_warning(&self) -> Option<String> {
        let far = |i: usize| {
            let d = self.bodies.position[i].abs().max_element();
            (self.bodies.inv_mass[i] > 0.0
                && d.is_finite()
                && spacing_at(d) > FAR_FROM_ORIGIN_SPACING)
                .then_some((i, d))
        };
        // The farthest such body among those a joint touches (a free body has no joint to
        // lose).
        let (i, distance) = (0..self.joints.len())
            .flat_map(|j| {
                let (a, b) = self.joints.bodies_of(j);
                [far(a.index()), far(b.index())]
            })
            .flatten()
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
        Some(format!(
            "body `{}` is {distance:.3e} m from the origin, where single precision resolves \
             positions only to {:.2e} m: joint errors and motions finer than that are lost; \
             place the scene near the origin",
            self.bodies.name[i],
            spacing_at(distance)
        ))
    }

    /// [`World::lever_warning`] over every joint the colours solve, as one sentence: how many
    /// act too far from a body's centre and the first of them; `None` when none does. What
    /// `lavender run` and Python's `Sim.run` say at a run's end. Joints the hub solve takes
    /// (as of the last step) are left out: its system is `f64`, and it holds them far beyond
    /// the bound (the 100-slider hub 3.2e-4 m at 20 s, its sliders 120 m out and `m r^2 / I`
    /// 2.3e6; the warning said "not reliable" from 4.3 s on, 2026-12-07).
    pub fn far_levers_warning(&self) -> Option<String> {
        let mut in_hub = vec![false; self.joints.len()];
        for hub in self.schedule.iter().flat_map(|s| &s.hubs) {
            for &j in &hub.joints {
                in_hub[j as usize] = true;
            }
        }
        let mut far = (0..self.joints.len()).filter(|&j| !in_hub[j] && self.far_lever(j).is_some());
        let first = self.lever_warning(far.next()?)?;
        Some(format!(
            "{} joint(s) act farther from a body's centre than single precision reliably holds, \
             so their errors may grow from here on; the first: {first}",
            1 + far.count()
        ))
    }

    /// The body, distance (m) and `m r^2 / I` of [`World::lever_warning`], where the ratio is
    /// beyond [`MAX_LEVER_RATIO`].
    fn far_lever(&self, joint: usize) -> Option<(usize, f64, f64)> {
        let (a, b) = self.joints.bodies_of(joint);
        let (anchor_a, anchor_b) = self.joints.anchors_of(joint);
        let world = |body: BodyId, anchor: Vec3| {
            let i = body.index();
            self.bodies.position[i] + self.bodies.rotation[i] * anchor
        };
        let slider = self.joints.kind[joint] == joints::JointKind::Prismatic;
        let point_b = world(b, anchor_b);
        let point_a = if slider { point_b } else { world(a, anchor_a) };
        [(a, point_a), (b, point_b)]
            .into_iter()
            .find_map(|(body, point)| {
                let i = body.index();
                let centre = self.bodies.position[i];
                let local = self.bodies.rotation[i].inverse() * (point - centre);
                let (ratio, _) = self.lever_ratio(i, local)?;
                (ratio > MAX_LEVER_RATIO).then_some((i, local.as_dvec3().length(), ratio))
            })
    }

    /// What [`World::far_lever`] finds among the joints touching the body named `body`, as a
    /// sentence (empty when nothing).
    /// A sentence when body `body` moved, at the state rolled back to, farther in one
    /// substep of `h` s than any scene spans (1e6 m or rad): then its velocity is the cause,
    /// not its mass (QA: a 1e30 rad/s initial spin was blamed on masses and inertia).
    fn too_fast(&self, body: &str, h: f32) -> String {
        let Some(i) = self.bodies.index_of(body) else {
            return String::new();
        };
        // In f64: the squares of such speeds overflow f32.
        let speed = |v: Vec3| v.as_dvec3().length();
        let (v, w) = (
            speed(self.bodies.linear_velocity[i]),
            speed(self.bodies.angular_velocity[i]),
        );
        let (dx, dtheta) = (v * f64::from(h), w * f64::from(h));
        if dx <= 1e6 && dtheta <= 1e6 {
            return String::new();
        }
        format!(
            "Before it, the body moved {dx:.1e} m and turned {dtheta:.1e} rad per substep of \
             {h:.2e} s (velocity {v:.1e} m/s, angular velocity {w:.1e} rad/s): far more than \
             a substep can integrate; check the velocities it was given. "
        )
    }

    fn lever_warnings_of(&self, body: &str) -> String {
        let Some(i) = self.bodies.index_of(body) else {
            return String::new();
        };
        let far: Vec<(usize, (usize, f64, f64))> = (0..self.joints.len())
            .filter(|&j| self.joints.body_a[j] as usize == i || self.joints.body_b[j] as usize == i)
            .filter_map(|j| self.far_lever(j).map(|f| (j, f)))
            .collect();
        if far.is_empty() {
            return String::new();
        }
        let listed: Vec<String> = (far.iter().take(3))
            .map(|&(j, (b, distance, ratio))| {
                format!(
                    "`{}` {distance:.2e} m from `{}` (m r^2 / I = {ratio:.1e})",
                    self.joints.names()[j],
                    self.bodies.name[b]
                )
            })
            .collect();
        let more = far.len() - listed.len();
        format!(
            "Before it, {} joint(s) acted farther from a body's centre than single precision can \
             hold (m r^2 / I above {MAX_LEVER_RATIO:.0e}): {}{}; a slider run far out, or an \
             inertia too small for the body. ",
            far.len(),
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    }

    /// Bytes per joint and per body, with the solver storage of the last step's path (none
    /// before the first step).
    pub fn memory_report(&self) -> MemoryReport {
        use std::mem::size_of;
        let solver = match &self.solver {
            Some(PathSolver::Scalar(s)) => s.bytes(),
            Some(PathSolver::Wide(s)) => s.bytes(),
            None => 0,
        };
        let joints = self.joints.len().max(1);
        let name = size_of::<String>() * 2 + size_of::<u32>(); // name, its map key, map value
        let joint = name
            + size_of::<joints::JointKind>()
            + 2 * size_of::<u32>()
            + 6 * size_of::<Vec3>() // anchors, axes, perpendiculars
            + size_of::<Quat>()
            + size_of::<Option<[f32; 2]>>()
            + 2 * size_of::<[f32; MAX_ROWS_PER_JOINT]>() // impulses and their rollback copy
            + 2 * 3 * size_of::<Vec3>() // force and torques, and their rollback copy
            + size_of::<[f32; COLUMN_COUNT]>()
            + joints::diagnose_group_bytes().div_ceil(WIDE_LANES); // packed diagnostic inputs
        let body = name
            + size_of::<BodyKind>()
            + 2 * (size_of::<Vec3>() * 3 + size_of::<Quat>()) // state and its rollback copy
            + size_of::<f32>()
            + size_of::<Vec3>()
            + size_of::<glam::Mat3>()
            + 2 * size_of::<SolverVelocity>() // kernel and bias velocities
            + size_of::<SolverPose>() // the kernels' pose blocks
            + Sleep::BYTES_PER_BODY;
        MemoryReport {
            bytes_per_joint: joint + solver.div_ceil(joints),
            solver_bytes_per_joint: solver.div_ceil(joints),
            bytes_per_body: body,
        }
    }

    /// Fills the padded lanes of the wide batches with NaN; returns how many lanes.
    #[cfg(test)]
    pub(crate) fn poison_padding(&mut self) -> usize {
        on_path!(&mut self.solver, s => s.poison_padding())
    }

    /// Joints the colours run as single scalar batches.
    #[cfg(test)]
    pub(crate) fn single_batches(&mut self) -> usize {
        on_path!(&mut self.solver, s => s.single_batches())
    }

    fn exec(&self) -> Exec {
        if self.on_calling_thread() {
            Exec::Serial
        } else {
            Exec::Parallel
        }
    }

    /// Whether the step runs on the calling thread alone: with `threads = 1`, and with
    /// `threads = 0` (the default) for a world smaller than [`AUTO_POOL_MIN_JOINTS`] joints
    /// and [`AUTO_POOL_MIN_BODIES`] bodies. The results are the same bits either way.
    pub fn on_calling_thread(&self) -> bool {
        match self.settings.threads {
            1 => true,
            0 => {
                self.joints.len() < AUTO_POOL_MIN_JOINTS && self.bodies.len() < AUTO_POOL_MIN_BODIES
            }
            _ => false,
        }
    }

    /// Runs `f` on the calling thread when [`World::on_calling_thread`], else on a worker of
    /// this world's pool (or of rayon's global pool when `threads == 0`), so that the
    /// parallel loops inside `f` push their jobs onto the worker's
    /// own deque. Entering a pool from outside goes through rayon's injector, a crossbeam queue
    /// that allocates a block per 63 jobs: entering once per step, not once per parallel
    /// loop, keeps that to one allocation per 63 steps (see `tests/no_alloc.rs`).
    ///
    /// `f` runs with denormals flushed to zero ([`FlushDenormals`]), as does every rayon task
    /// the engine starts.
    fn in_pool<R: Send>(&mut self, f: impl FnOnce(&mut World) -> R + Send) -> R {
        let f = |w: &mut World| {
            let _fpu = FlushDenormals::new();
            f(w)
        };
        if self.on_calling_thread() {
            return f(self);
        }
        if let Some(pool) = self.pool.clone() {
            return pool.install(|| f(self));
        }
        if self.settings.threads == 0 && rayon::current_thread_index().is_none() {
            let mut out = None;
            rayon::join(|| out = Some(f(self)), || ());
            return out.expect("join ran the closure");
        }
        f(self)
    }

    /// The body named `name`.
    pub fn body_id(&self, name: &str) -> Result<BodyId> {
        self.bodies
            .index_of(name)
            .map(|i| BodyId(i as u32))
            .ok_or_else(|| EngineError::NoSuchName {
                kind: "body",
                name: name.to_string(),
            })
    }

    /// The joint named `name`.
    pub fn joint_id(&self, name: &str) -> Result<JointId> {
        self.joints
            .index_of(name)
            .map(|i| JointId(i as u32))
            .ok_or_else(|| EngineError::NoSuchName {
                kind: "joint",
                name: name.to_string(),
            })
    }

    fn check_body(&self, id: BodyId) -> Result<usize> {
        if id.index() < self.bodies.len() {
            Ok(id.index())
        } else {
            Err(EngineError::NoSuchBody(id.index(), self.bodies.len()))
        }
    }

    /// Position (m) and orientation of a body.
    pub fn body_pose(&self, id: BodyId) -> Result<(Vec3, Quat)> {
        let i = self.check_body(id)?;
        Ok((self.bodies.position[i], self.bodies.rotation[i]))
    }

    /// Linear (m/s) and angular (rad/s, world) velocity of a body.
    pub fn body_velocity(&self, id: BodyId) -> Result<(Vec3, Vec3)> {
        let i = self.check_body(id)?;
        Ok((
            self.bodies.linear_velocity[i],
            self.bodies.angular_velocity[i],
        ))
    }

    /// Sets a body's pose without advancing time, then refreshes the diagnostics. The rotation
    /// is kept bit for bit when its length is 1 to f32 precision (within 4 `f32::EPSILON`; a
    /// pose read from [`World::body_pose`] always is), else divided by its length (which
    /// must be within 1e-3 of 1). With
    /// sleeping on, this wakes the body's island (or, for a static or kinematic body, every
    /// island jointed to it).
    pub fn set_body_pose(&mut self, id: BodyId, position: Vec3, rotation: Quat) -> Result<()> {
        let i = self.check_body(id)?;
        let name = &self.bodies.name[i];
        crate::bodies::check_position(position, name)?;
        let rotation = crate::bodies::check_unit_quat(rotation).map_err(|reason| {
            EngineError::InvalidBody {
                body: name.clone(),
                reason,
            }
        })?;
        self.bodies.position[i] = position;
        self.bodies.rotation[i] = rotation;
        self.bodies.refresh_inv_inertia_world(i);
        self.wake_touching(i);
        self.sync();
        Ok(())
    }

    /// Sets a body's velocity without advancing time, then refreshes the diagnostics. With
    /// sleeping on, this wakes the body's island (or, for a kinematic body, every island
    /// jointed to it) before setting the velocity, so the velocity is kept.
    pub fn set_body_velocity(&mut self, id: BodyId, linear: Vec3, angular: Vec3) -> Result<()> {
        let i = self.check_body(id)?;
        let name = &self.bodies.name[i];
        crate::bodies::check_vec(linear, "linear velocity", name)?;
        crate::bodies::check_vec(angular, "angular velocity", name)?;
        if self.bodies.kind[i] == BodyKind::Static
            && (linear != Vec3::ZERO || angular != Vec3::ZERO)
        {
            return Err(EngineError::InvalidBody {
                body: name.clone(),
                reason: "a static body cannot move; make it kinematic to prescribe its velocity"
                    .into(),
            });
        }
        self.wake_touching(i);
        self.bodies.linear_velocity[i] = linear;
        self.bodies.angular_velocity[i] = angular;
        self.sync();
        Ok(())
    }

    /// The diagnostics, one `[f32; 8]` row per joint (see [`crate::diagnostics`]) for the
    /// current state, without advancing time: every step, [`World::add_joint`] (the new
    /// joint's row), [`World::set_body_pose`], [`World::set_body_velocity`] and
    /// [`World::sync`] refresh them. Zero-copy.
    pub fn constraint_data(&self) -> &[[f32; COLUMN_COUNT]] {
        &self.diagnostics
    }

    /// The same buffer flattened, row-major `joints x 8`. Zero-copy.
    pub fn constraint_data_flat(&self) -> &[f32] {
        self.diagnostics.as_flattened()
    }

    /// An owned copy of the diagnostics.
    pub fn constraint_data_copy(&self) -> Vec<[f32; COLUMN_COUNT]> {
        self.diagnostics.clone()
    }

    /// Constraint force and torques of a joint over the last substep.
    pub fn joint_force(&self, id: JointId) -> Result<JointForce> {
        let j = id.index();
        if j >= self.joints.len() {
            return Err(EngineError::NoSuchJoint(j, self.joints.len()));
        }
        Ok(self.joint_force_at(j))
    }

    fn joint_force_at(&self, j: usize) -> JointForce {
        JointForce {
            force_on_b: self.joints.force_on_b[j],
            torque_on_b: self.joints.torque_on_b[j],
            torque_on_a: self.joints.torque_on_a[j],
        }
    }

    /// Constraint forces of every joint over the last substep.
    pub fn joint_forces(&self) -> Vec<JointForce> {
        (0..self.joints.len())
            .map(|j| self.joint_force_at(j))
            .collect()
    }

    /// Total mechanical energy, J: kinetic plus gravitational potential `-m g . x` of the
    /// dynamic bodies.
    pub fn total_energy(&self) -> f64 {
        let g = self.settings.gravity;
        (0..self.bodies.len())
            .map(|i| {
                let ke = self.bodies.kinetic_energy(i);
                if self.bodies.inv_mass[i] > 0.0 {
                    let m = 1.0 / self.bodies.inv_mass[i];
                    ke - f64::from(m) * f64::from(g.dot(self.bodies.position[i]))
                } else {
                    ke
                }
            })
            .sum()
    }

    /// The solver state that, with the poses and velocities, determines the next step: the
    /// warm-start impulses of every joint, 6 per joint (the sixth, a limit's, signed by the stop
    /// that gave it: `+` the lower, `-` the upper; `+-f32::MIN_POSITIVE` where the projection
    /// pushed the joint back from that stop and the velocity solve gave it no impulse, which
    /// gives the next substep that stop's row); with [`Settings::sleeping`] on, followed
    /// by every body's rest timer in seconds ([`World::sleep_timers`]), which also determine
    /// who sleeps. With sleeping off it is exactly the impulses, as before sleeping existed.
    /// The recorder stores it at keyframes and [`World::state_hash`] covers it.
    pub fn solver_state(&self) -> &[f32] {
        if self.settings.sleeping {
            &self.solver_state_buf
        } else {
            self.joints.impulse.as_flattened()
        }
    }

    /// Restores a state saved by [`World::solver_state`] (with the same sleeping setting).
    /// With sleeping on, the timers are restored and the islands whose timers have all
    /// reached `time_to_sleep` sleep (their velocities are zeroed, as they were when they fell
    /// asleep), the others are awake. Call it after [`World::restore_body_states`], which
    /// wakes everything.
    pub fn set_solver_state(&mut self, state: &[f32]) -> Result<()> {
        let impulses = self.joints.len() * MAX_ROWS_PER_JOINT;
        let timers = if self.settings.sleeping {
            self.bodies.len()
        } else {
            0
        };
        let bad_timer = state[impulses.min(state.len())..].iter().any(|&t| t < 0.0);
        if state.len() != impulses + timers || state.iter().any(|x| !x.is_finite()) || bad_timer {
            return Err(EngineError::InvalidSetting {
                name: "solver_state",
                value: format!("{} values", state.len()),
                reason: if self.settings.sleeping {
                    "with sleeping on it must hold 6 finite impulses per joint then one finite \
                     rest timer >= 0 per body, as World::solver_state gives; a state saved \
                     with sleeping off has no timers: restore it with sleeping off"
                } else {
                    "must hold 6 finite impulses per joint, as World::solver_state gives; a \
                     state saved with sleeping on also holds one timer per body: restore it \
                     with sleeping on"
                },
            });
        }
        self.joints
            .impulse
            .as_flattened_mut()
            .copy_from_slice(&state[..impulses]);
        if self.settings.sleeping {
            self.sleep.timer.copy_from_slice(&state[impulses..]);
            let kind = &self.bodies.kind;
            for (t, k) in self.sleep.timer.iter_mut().zip(kind) {
                if *k != BodyKind::Dynamic {
                    *t = 0.0;
                }
            }
            self.sleep.asleep.fill(false);
            self.cached_islands();
            let islands = self.island_cache.as_ref().expect("cached above");
            self.sleep
                .settle(&mut self.bodies, islands, self.settings.time_to_sleep);
            self.sleep.recount(islands);
            self.invalidate_schedule();
            self.publish_solver_state();
            self.sync();
        }
        Ok(())
    }

    /// Sets the clock (simulation time in s, substeps completed), for resuming a run.
    pub fn set_clock(&mut self, time: f64, substeps_done: u64) {
        self.time = time;
        self.substeps_done = substeps_done;
    }

    /// Restores every body's pose `[x y z qx qy qz qw]` and velocity `[vx vy vz wx wy wz]`
    /// exactly as given (bit for bit, also a quaternion whose length is not 1 to f32
    /// precision, which [`World::set_body_pose`] would divide by it), then refreshes the
    /// diagnostics once. For resuming a recorded run: with [`World::set_solver_state`] and
    /// [`World::set_clock`] it reproduces the recorded state hash. (Added by the replay
    /// crate's owner; `set_body_pose` per body re-syncs every joint per body.) With sleeping
    /// on it wakes every island and resets the rest
    /// timers; [`World::set_solver_state`], called after it, restores them.
    pub fn restore_body_states(
        &mut self,
        poses: &[[f32; 7]],
        velocities: &[[f32; 6]],
    ) -> Result<()> {
        let n = self.bodies.len();
        if poses.len() != n || velocities.len() != n {
            return Err(EngineError::InvalidSetting {
                name: "body states",
                value: format!("{} poses and {} velocities", poses.len(), velocities.len()),
                reason: "must hold one pose and one velocity per body of the world",
            });
        }
        for (i, (p, v)) in poses.iter().zip(velocities).enumerate() {
            let name = &self.bodies.name[i];
            let q = Quat::from_xyzw(p[3], p[4], p[5], p[6]);
            crate::bodies::check_vec(Vec3::new(p[0], p[1], p[2]), "position", name)?;
            crate::bodies::check_unit_quat(q).map_err(|reason| EngineError::InvalidBody {
                body: name.clone(),
                reason,
            })?;
            crate::bodies::check_vec(Vec3::new(v[0], v[1], v[2]), "linear velocity", name)?;
            crate::bodies::check_vec(Vec3::new(v[3], v[4], v[5]), "angular velocity", name)?;
        }
        for (i, (p, v)) in poses.iter().zip(velocities).enumerate() {
            self.bodies.position[i] = Vec3::new(p[0], p[1], p[2]);
            self.bodies.rotation[i] = Quat::from_xyzw(p[3], p[4], p[5], p[6]);
            self.bodies.linear_velocity[i] = Vec3::new(v[0], v[1], v[2]);
            self.bodies.angular_velocity[i] = Vec3::new(v[3], v[4], v[5]);
            self.bodies.refresh_inv_inertia_world(i);
        }
        if self.settings.sleeping {
            self.wake_all();
        }
        self.sync();
        Ok(())
    }

    /// The hash of the full simulation state: [`state_hash`] of the poses, velocities
    /// ([`World::gather_state`]) and warm-start impulses ([`World::solver_state`]). The
    /// recorder stores the same hash with every frame, so a world and a log compare directly.
    pub fn state_hash(&self) -> u64 {
        let (mut poses, mut velocities) = (Vec::new(), Vec::new());
        self.gather_state(&mut poses, &mut velocities);
        state_hash(&poses, &velocities, self.solver_state())
    }

    /// Copies the poses `[x y z qx qy qz qw]` and velocities `[vx vy vz wx wy wz]` of every
    /// body into `poses` and `velocities` (replacing their contents; the log's frame layout).
    pub fn gather_state(&self, poses: &mut Vec<[f32; 7]>, velocities: &mut Vec<[f32; 6]>) {
        let b = &self.bodies;
        poses.clear();
        poses.extend(
            b.position
                .iter()
                .zip(&b.rotation)
                .map(|(p, q)| [p.x, p.y, p.z, q.x, q.y, q.z, q.w]),
        );
        velocities.clear();
        velocities.extend(
            b.linear_velocity
                .iter()
                .zip(&b.angular_velocity)
                .map(|(v, w)| [v.x, v.y, v.z, w.x, w.y, w.z]),
        );
    }

    /// Refreshes the diagnostics from the current poses and velocities without advancing time.
    pub fn sync(&mut self) {
        self.in_pool(|w| w.sync_all());
    }

    fn sync_all(&mut self) {
        self.sync_diagnostics(false);
    }

    /// [`World::sync_all`] right after a substep that succeeded: from the solver's pose and
    /// velocity blocks, gathered by transposes, which then hold the bodies' values bit for
    /// bit (the solved velocities and the projected poses were copied from them). Not with
    /// sleeping on: the sleep update after the projection may change velocities.
    fn sync_after_substep(&mut self) {
        let n = self.bodies.len();
        let blocks = !self.settings.sleeping && self.poses.len() == n && self.velocities.len() == n;
        self.sync_diagnostics(blocks);
    }

    /// Every joint's diagnostics, the bodies' state read from the solver's blocks or not.
    fn sync_diagnostics(&mut self, from_blocks: bool) {
        let _s = trace_span!("sync").entered();
        let (bodies, joints) = (&self.bodies, &self.joints);
        let blocks = from_blocks.then_some((&self.poses[..], &self.velocities[..]));
        // Chunks of whole lane groups; the grouping does not change a joint's bits (see
        // `joints::diagnose_joint`), so neither does the thread count.
        self.exec()
            .for_each_chunk(&mut self.diagnostics, DIAGNOSE_CHUNK, &|first, rows| {
                for (k, group) in rows.chunks_mut(WIDE_LANES).enumerate() {
                    let g = first / WIDE_LANES + k;
                    joints::diagnose_packed_group(bodies, blocks, joints, g, group);
                }
            });
    }

    fn sync_joint(&mut self, j: usize) {
        self.diagnostics[j] = joints::diagnose_joint(&self.bodies, &self.joints, j);
    }

    /// Advances the world by `dt` seconds and refreshes the diagnostics.
    pub fn step(&mut self, dt: f32) -> Result<StepReport> {
        self.ensure_solver();
        self.in_pool(|w| {
            let report = w.run_substeps(dt, None, false, None)?;
            w.sync_after_substep();
            Ok(report)
        })
    }

    /// Advances by `dt` like [`World::step`], refreshing the diagnostics after every substep
    /// and calling `observer` with the world and where it is.
    pub fn step_observed(
        &mut self,
        dt: f32,
        mut observer: impl FnMut(&World, SubstepInfo),
    ) -> Result<StepReport> {
        self.run_substeps(
            dt,
            Some(&mut |w: &World, info| observer(w, info)),
            false,
            None,
        )
    }

    /// Like [`World::step_observed`], and when a substep goes non-finite, calls `observer`
    /// once more with that substep's state and diagnostics (`info.finite == false`) before
    /// the step is rolled back and the error returned: what a recorder keeps so that the
    /// log shows the first non-finite value (`scrub` reports it) instead of ending, healthy
    /// to look at, on the substep before.
    pub fn step_observed_through_failure(
        &mut self,
        dt: f32,
        mut observer: impl FnMut(&World, SubstepInfo),
    ) -> Result<StepReport> {
        self.run_substeps(
            dt,
            Some(&mut |w: &World, info| observer(w, info)),
            true,
            None,
        )
    }

    /// A step that can end between two substeps: before each substep after the first,
    /// `stop` is asked, and when it answers true the step ends there (a Ctrl-C in a frame of
    /// thousands of substeps). The world keeps the substeps it ran: a state at a substep
    /// boundary like any other (its `time` is then not a whole number of frames), with the
    /// diagnostics refreshed, so that a recording of it stays consistent and the next step
    /// goes on from there; the report says how many ran (`stopped_early`). `observer`, if
    /// any, is called as by [`World::step_observed`], and also for a substep that went
    /// non-finite when `observe_failure` is set (as by
    /// [`World::step_observed_through_failure`]). A step that is not stopped gives the same
    /// bits as the other step functions.
    pub fn step_stoppable(
        &mut self,
        dt: f32,
        observer: Option<&mut StepObserver>,
        observe_failure: bool,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<StepReport> {
        let observed = observer.is_some();
        let report = self.run_substeps(dt, observer, observe_failure, Some(stop))?;
        if !observed {
            self.in_pool(|w| w.sync_after_substep());
        }
        Ok(report)
    }

    fn run_substeps(
        &mut self,
        dt: f32,
        mut observer: Option<&mut StepObserver>,
        observe_failure: bool,
        mut stop: Option<&mut dyn FnMut() -> bool>,
    ) -> Result<StepReport> {
        // Below the smallest normal f32 the solver's flush-to-zero mode would read dt as 0.
        if !(dt.is_finite() && dt >= f32::MIN_POSITIVE) {
            return Err(EngineError::InvalidTimeStep(dt));
        }
        self.settings.check_substeps(dt)?;
        let _span = tracing::debug_span!("step", dt).entered();
        self.ensure_solver();
        let n = self.settings.substeps_for(dt);
        let h = dt / n as f32;
        self.bodies.save_state(&mut self.backup);
        self.impulse_backup.clone_from(&self.joints.impulse);
        self.joints.save_forces(&mut self.force_backup);
        let sleeping = self.settings.sleeping;
        if sleeping {
            self.sleep_backup.0.clone_from(&self.sleep.timer);
            self.sleep_backup.1.clone_from(&self.sleep.asleep);
        }
        let start = (self.time, self.substeps_done);
        let observed = observer.is_some();
        // The pool's thread does not inherit this thread's span: the stages' spans nest
        // under `step` only if it is entered there too.
        let step_span = tracing::Span::current();
        for i in 0..n {
            if i > 0 && stop.as_mut().is_some_and(|stop| stop()) {
                tracing::debug!(substeps = i, of = n, "step stopped early");
                return Ok(StepReport {
                    substeps: i,
                    substep_dt: h,
                    stopped_early: true,
                });
            }
            // One entry into the thread pool per substep: the stages, the finiteness check
            // and, for an observer, the diagnostics (entering the pool wakes its workers).
            let checked = self.in_pool(|w| {
                let _step = step_span.enter();
                w.substep(h);
                let checked = w.check_finite();
                if observed && (checked.is_ok() || observe_failure) {
                    w.sync_after_substep();
                }
                checked
            });
            if let Err(e) = checked {
                if let (Some(observer), true) = (observer.as_mut(), observe_failure) {
                    let info = SubstepInfo {
                        substep: self.substeps_done,
                        time: self.time + f64::from(h),
                        dt: h,
                        finite: false,
                    };
                    let _s = trace_span!("observe").entered();
                    observer(self, info);
                }
                self.bodies.restore_state(&self.backup);
                self.joints.impulse.clone_from(&self.impulse_backup);
                self.joints.restore_forces(&self.force_backup);
                if sleeping {
                    self.sleep.timer.clone_from(&self.sleep_backup.0);
                    if self.sleep.asleep != self.sleep_backup.1 {
                        self.sleep.asleep.clone_from(&self.sleep_backup.1);
                        self.invalidate_schedule();
                    }
                    self.sleep_changed = false;
                    self.cached_islands();
                    let islands = self.island_cache.as_ref().expect("cached above");
                    self.sleep.recount(islands);
                    self.publish_solver_state();
                }
                (self.time, self.substeps_done) = start;
                self.sync();
                let mut e = e;
                if let EngineError::NonFinite {
                    body, conditioning, ..
                } = &mut e
                {
                    *conditioning = self.lever_warnings_of(body) + &self.too_fast(body, h);
                }
                return Err(e);
            }
            self.time += f64::from(h);
            self.substeps_done += 1;
            if sleeping {
                if std::mem::take(&mut self.sleep_changed) {
                    // An island fell asleep or woke: the next substep solves the new set.
                    self.invalidate_schedule();
                    self.ensure_solver();
                }
                self.publish_solver_state();
            }
            if let Some(observer) = observer.as_mut() {
                let info = SubstepInfo {
                    substep: self.substeps_done - 1,
                    time: self.time,
                    dt: h,
                    finite: true,
                };
                let _s = trace_span!("observe").entered();
                observer(self, info);
            }
        }
        Ok(StepReport {
            substeps: n,
            substep_dt: h,
            stopped_early: false,
        })
    }

    /// One substep of length `h`: the stages, in order.
    fn substep(&mut self, h: f32) {
        self.integrate_velocities(h);
        self.prepare_rows_and_warm_start(h);
        self.solve_velocities_and_store(h);
        self.integrate_positions(h);
        self.project_positions();
        if self.settings.sleeping {
            self.update_sleep(h);
        }
    }

    fn integrate_velocities(&mut self, h: f32) {
        let _s = trace_span!("integrate_velocities").entered();
        let exec = self.exec();
        let dv = self.settings.gravity * h;
        let b = &mut self.bodies;
        let (kind, asleep) = (&b.kind, &self.sleep.asleep);
        exec.for_each_indexed(&mut b.linear_velocity, &|i, v| {
            if kind[i] == BodyKind::Dynamic && !asleep[i] {
                *v += dv;
            }
        });
        self.gyroscopic_active = false;
        if !self.settings.gyroscopic {
            return;
        }
        self.omega_start.clear();
        self.omega_start.extend_from_slice(&b.angular_velocity);
        // w x I w, eight bodies at a time in lanes; only dynamic, awake, spinning bodies with
        // unequal moments (for equal ones the term is zero) are written.
        let (rotation, inv_local) = (&b.rotation, &b.inv_inertia_local);
        let spins = |i: usize, w: Vec3| {
            has_gyroscopic_term(kind[i], asleep[i], inv_local[i]) && w != Vec3::ZERO
        };
        exec.for_each_chunk(
            &mut b.angular_velocity,
            GYROSCOPIC_CHUNK,
            &|first, chunk| {
                for (g, group) in chunk.chunks_mut(WIDE_LANES).enumerate() {
                    let start = first + g * WIDE_LANES;
                    let mut mask = [false; WIDE_LANES];
                    for (k, w) in group.iter().enumerate() {
                        mask[k] = spins(start + k, *w);
                    }
                    if !mask.contains(&true) {
                        continue;
                    }
                    let mut q = Q::<Wide>::identity();
                    let mut omega = V3::<Wide>::zero();
                    let mut inertia = V3::<Wide>::splat(Vec3::ONE);
                    for (k, w) in group.iter().enumerate() {
                        if mask[k] {
                            q.set_lane(k, rotation[start + k]);
                            omega.set_lane(k, *w);
                            inertia.set_lane(k, inv_local[start + k].recip());
                        }
                    }
                    let out = gyroscopic_lanes(q, omega, inertia, Wide::splat(h));
                    for (k, w) in group.iter_mut().enumerate() {
                        if mask[k] {
                            *w = out.lane(k);
                        }
                    }
                }
            },
        );
        self.omega_free.clear();
        self.omega_free.extend_from_slice(&b.angular_velocity);
        self.gyroscopic_active = self.omega_start != self.omega_free;
    }

    /// The gyroscopic coupling after a velocity pass: one Newton step of each spinning body's
    /// midpoint equation with the joints' impulses so far held ([`gyroscopic_coupling_lanes`]),
    /// on the solver's velocities. Eight bodies at a time in lanes, chunks of bodies in
    /// parallel; the same on both paths.
    fn couple_gyroscopic(&mut self, h: f32) {
        let exec = self.exec();
        let b = &self.bodies;
        let (kind, rotation, inv_local) = (&b.kind, &b.rotation, &b.inv_inertia_local);
        let (asleep, start) = (&self.sleep.asleep, &self.omega_start);
        let spins = |i: usize| has_gyroscopic_term(kind[i], asleep[i], inv_local[i]);
        let velocities = Shared::new(&mut self.velocities);
        exec.for_each_chunk(&mut self.omega_free, GYROSCOPIC_CHUNK, &|first, free| {
            // SAFETY: the chunks of `omega_free` are disjoint index ranges, and this task
            // alone touches the same range of the velocities (nothing else runs now).
            let v = unsafe { velocities.slice_mut(first..first + free.len()) };
            for (g, (free, v)) in free
                .chunks_mut(WIDE_LANES)
                .zip(v.chunks_mut(WIDE_LANES))
                .enumerate()
            {
                let at = first + g * WIDE_LANES;
                let mut mask = [false; WIDE_LANES];
                for (k, m) in mask.iter_mut().enumerate().take(free.len()) {
                    *m = spins(at + k);
                }
                if !mask.contains(&true) {
                    continue;
                }
                // Lanes left out keep the identity, zero velocities and unit moments.
                let mut q = Q::<Wide>::identity();
                let (mut w1, mut wf, mut w) =
                    (V3::<Wide>::zero(), V3::<Wide>::zero(), V3::<Wide>::zero());
                let mut inertia = V3::<Wide>::splat(Vec3::ONE);
                for k in (0..free.len()).filter(|&k| mask[k]) {
                    q.set_lane(k, rotation[at + k]);
                    w1.set_lane(k, start[at + k]);
                    wf.set_lane(k, free[k]);
                    w.set_lane(k, v[k].angular());
                    inertia.set_lane(k, inv_local[at + k].recip());
                }
                let delta = gyroscopic_coupling_lanes(q, (w1, wf, w), inertia, Wide::splat(h));
                for k in (0..free.len()).filter(|&k| mask[k]) {
                    let d = delta.lane(k);
                    v[k] = SolverVelocity::new(v[k].linear(), v[k].angular() + d);
                    free[k] += d;
                }
            }
        });
    }

    fn prepare_rows_and_warm_start(&mut self, h: f32) {
        let _s = trace_span!("prepare_rows").entered();
        let exec = self.exec();
        let b = &mut self.bodies;
        let (local, position, rotation, inv_mass) =
            (&b.inv_inertia_local, &b.position, &b.rotation, &b.inv_mass);
        self.poses.resize(b.len(), SolverPose::default());
        exec.for_each_pair(&mut b.inv_inertia_world, &mut self.poses, &|i, m, p| {
            *m = inv_inertia_world(local[i], rotation[i]);
            *p = SolverPose::new(position[i], rotation[i], inv_mass[i]);
        });
        let (linear, angular) = (&b.linear_velocity, &b.angular_velocity);
        self.velocities.resize(b.len(), SolverVelocity::default());
        self.bias.resize(b.len(), SolverVelocity::default());
        // The solver's copy of the velocities, and the bias velocities zeroed (split impulses
        // start from rest every substep), in one loop.
        exec.for_each_pair(&mut self.velocities, &mut self.bias, &|i, v, u| {
            *v = SolverVelocity::new(linear[i], angular[i]);
            *u = SolverVelocity::default();
        });
        let input = PrepareInput {
            bodies: &self.bodies,
            poses: &self.poses,
            joints: &self.joints,
            bias_rate: self.settings.error_reduction / h,
            inv_h: 1.0 / h,
            half_h: self.settings.curvature.then_some(0.5 * h),
            h,
            speculative_limits: self.settings.speculative_limits,
            warm_starting: self.settings.warm_starting,
        };
        let access = BodyAccess {
            velocities: Shared::new(&mut self.velocities),
        };
        on_path!(&mut self.solver, s => s.prepare_and_warm_start(exec, &input, access));
    }

    fn solve_velocities_and_store(&mut self, h: f32) {
        let _s = trace_span!("solve_velocities").entered();
        let exec = self.exec();
        // Split impulses: the bias acts on separate velocities that only move the poses.
        // Folding it into the real velocities (classic Baumgarte) let warm starting re-apply
        // last substep's bias impulse: with error_reduction = 0.02 a 10-box welded cantilever
        // gained 4.4 kJ in 3 s, and one bias-free "relax" pass did not take it back out.
        let with_bias = self.settings.error_reduction > 0.0;
        let passes = self.settings.velocity_iterations as usize;
        let bias_passes = if with_bias {
            self.settings.bias_passes() as usize
        } else {
            0
        };
        if !self.gyroscopic_active || passes < 2 {
            self.velocity_passes(exec, (passes, bias_passes), h);
        } else {
            // Spinning bodies: the passes one at a time, each followed by the gyroscopic
            // coupling (the same passes, bias passes and store as one call).
            for pass in 0..passes {
                self.velocity_passes(exec, (1, usize::from(pass < bias_passes)), h);
                if pass + 1 < passes {
                    self.couple_gyroscopic(h);
                }
            }
        }
        let v = &self.velocities;
        let b = &mut self.bodies;
        exec.for_each_pair(
            &mut b.linear_velocity,
            &mut b.angular_velocity,
            &|i, linear, angular| (*linear, *angular) = (v[i].linear(), v[i].angular()),
        );
    }

    /// `passes.0` velocity passes, the first `passes.1` of them with a bias pass, then the
    /// store (see `Solver::solve`).
    fn velocity_passes(&mut self, exec: Exec, (passes, bias_passes): (usize, usize), h: f32) {
        let access = BodyAccess {
            velocities: Shared::new(&mut self.velocities),
        };
        // The velocity and bias systems are independent: one fused pass per iteration reads
        // the rows once (bitwise the same as separate passes).
        let bias = (bias_passes > 0).then(|| BodyAccess {
            velocities: Shared::new(&mut self.bias),
        });
        let joints = &mut self.joints;
        let passes = (passes, bias_passes);
        on_path!(&mut self.solver, s => s.solve(exec, passes, (access, bias), joints, 1.0 / h));
    }

    fn integrate_positions(&mut self, h: f32) {
        let _s = trace_span!("integrate_positions").entered();
        let exec = self.exec();
        let b = &self.bodies;
        let (u, asleep) = (&self.bias, &self.sleep.asleep);
        let (kind, linear, angular) = (&b.kind, &b.linear_velocity, &b.angular_velocity);
        let (position, rotation, inv_mass) = (&b.position, &b.rotation, &b.inv_mass);
        // Into the pose blocks the projection works on; the bodies get them after it.
        exec.for_each_indexed(&mut self.poses, &|i, p| {
            let (mut x, mut q) = (position[i], rotation[i]);
            if kind[i] == BodyKind::Kinematic {
                // A prescribed motion is followed exactly: the rotation by the angle itself,
                // where the first-order update below turns by 2 atan(w h / 2) (1.4 % short at
                // 100 rad/s in 1/240 s substeps; QA).
                x += linear[i] * h;
                q = (Quat::from_scaled_axis(angular[i] * h) * q).normalize();
            } else if kind[i] != BodyKind::Static && !asleep[i] {
                x += (linear[i] + u[i].linear()) * h;
                q = integrate_rotation(q, (angular[i] + u[i].angular()) * h);
            }
            *p = SolverPose::new(x, q, inv_mass[i]);
        });
    }

    fn project_positions(&mut self) {
        let _s = trace_span!("project_positions").entered();
        let exec = self.exec();
        let factor = self.settings.projection_factor;
        let passes = self.settings.position_iterations as usize;
        let b = &mut self.bodies;
        // The carried impulses apart from the rest of the joints for the projection, which
        // marks in them the stops it pushes joints back from (`solver::PROJECTED_STOP`);
        // moved out and back, no copy.
        let mut impulses = std::mem::take(&mut self.joints.impulse);
        let poses = PoseAccess {
            poses: Shared::new(&mut self.poses),
            inv_inertia: &b.inv_inertia_world,
            impulses: Shared::new(&mut impulses),
        };
        let joints = &self.joints;
        on_path!(&mut self.solver, s => s.project(exec, passes, poses, joints, factor));
        self.joints.impulse = impulses;
        let projected = &self.poses;
        exec.for_each_pair(&mut b.position, &mut b.rotation, &|i, x, q| {
            (*x, *q) = (projected[i].position(), projected[i].rotation());
        });
    }

    fn update_sleep(&mut self, h: f32) {
        let _s = trace_span!("update_sleep").entered();
        let exec = self.exec();
        let schedule = self
            .schedule
            .as_ref()
            .expect("built at the start of the step");
        self.sleep_changed |= self.sleep.update(
            exec,
            &mut self.bodies,
            &schedule.islands,
            &schedule.driven,
            &self.settings,
            h,
        );
    }

    fn check_finite(&self) -> Result<()> {
        let _s = trace_span!("check_finite").entered();
        match self.bodies.first_non_finite() {
            None => Ok(()),
            Some((i, quantity)) => {
                let joints: Vec<&str> = (0..self.joints.len())
                    .filter(|&j| {
                        self.joints.body_a[j] as usize == i || self.joints.body_b[j] as usize == i
                    })
                    .map(|j| self.joints.name[j].as_str())
                    .collect();
                Err(EngineError::NonFinite {
                    body: self.bodies.name[i].clone(),
                    quantity,
                    substep: self.substeps_done,
                    joints: if joints.is_empty() {
                        "none".into()
                    } else {
                        joints.join(", ")
                    },
                    // Filled in from the state rolled back to (`run_substeps`).
                    conditioning: String::new(),
                })
            }
        }
    }
}

/// The f32 position spacing (m) beyond which [`World::far_from_origin_warning`] speaks.
const FAR_FROM_ORIGIN_SPACING: f32 = 1e-2;

/// The distance between `x` (> 0) and the next larger f32, m.
fn spacing_at(x: f32) -> f32 {
    f32::from_bits(x.to_bits() + 1) - x
}

/// Anchor error (m) beyond which a joint starts far from holding
/// ([`World::start_error_warning`]): a modelling slip, not rounding or a slight sag.
pub const START_ANCHOR_ERROR: f32 = 1e-2;

/// Angular error or a hinge's limit violation (rad) beyond which a joint starts far from
/// holding ([`World::start_error_warning`]; a slider's limit is held to
/// [`START_ANCHOR_ERROR`]).
pub const START_ANGULAR_ERROR: f32 = 0.1;

/// Anchor error (m) beyond which joints sharing their bodies disagree
/// ([`World::conflict_warning`]): well above the f32 rounding of scenes of metres, well
/// below a modelling slip.
pub const CONFLICT_ANCHOR_ERROR: f32 = 1e-4;

/// Angular error (rad) beyond which joints sharing their bodies disagree
/// ([`World::conflict_warning`]).
pub const CONFLICT_ANGULAR_ERROR: f32 = 1e-3;

/// The least moment of inertia (kg m^2) about an axis across the arm `r` (body frame), from
/// the inverse principal moments `inv_local` (1/(kg m^2); 0 for an infinite moment): the
/// smaller eigenvalue of the inertia restricted to the plane across `r`; 0 for `r = 0`.
fn least_moment_across(inv_local: glam::DVec3, r: glam::DVec3) -> f64 {
    let Some(axis) = r.try_normalize() else {
        return 0.0;
    };
    let moment = |i: f64| if i > 0.0 { 1.0 / i } else { 1e30 };
    let inertia = glam::DVec3::new(
        moment(inv_local.x),
        moment(inv_local.y),
        moment(inv_local.z),
    );
    let (e1, e2) = axis.any_orthonormal_pair();
    let (a, b, c) = (
        (e1 * e1).dot(inertia),
        (e1 * e2).dot(inertia),
        (e2 * e2).dot(inertia),
    );
    0.5 * (a + c) - (0.25 * (a - c) * (a - c) + b * b).sqrt()
}

/// Substeps per pendulum period below which a swing is not resolved
/// ([`World::substep_warning`]). The shipped pendulum (period 2.0 s, released at 0.1 rad,
/// swing energy 0.049 J) over 20 s: 480 substeps per period (the default 1/240 s) rose 3.2e-4
/// J above its start, 20 per period 9.0e-3 J, 10 per period 2.2e-2 J, 4 per period 0.17 J,
/// and with 2 it came apart (1.6 km of anchor error).
pub const MIN_SUBSTEPS_PER_SWING: f64 = 10.0;

/// Radians a light link may swing per substep ([`World::light_link_swing`]) before
/// [`World::substep_warning`] warns. QA's battery of 2026-12-07 (394 runs of 2 s: chains of
/// 1 to 9 links of 0.2 and 0.5 m on ball joints and hinges, loads of 1 to 30,000 times a
/// link's mass, released horizontally or hanging nudged, substeps of 1/120, 1/240 and 1/1020
/// s): no chain of two or more links came apart (errors of metres) below 0.90 rad per
/// substep, every one did at or above 1.23, in between it depends on the chain's length and
/// motion (the longer, the earlier); below, the error is a steady stretch of about 0.2 to
/// 0.6 (M/m) g h^2. Mass enters only as M/m (0.25 and 4 kg links the same bits).
const MAX_LINK_SWING_PER_SUBSTEP: f64 = 0.85;

/// The swing per substep [`World::substep_warning`] advises for light links: half a radian,
/// below the least at which a chain of the battery came apart (0.90) with a margin for runs
/// longer than its 2 s.
const LINK_SWING_ADVISED: f64 = 0.5;

/// Least strain (m, per turn of 1 rad or slide of 1 m) of the joints on one pair beyond
/// which they lock it ([`World::locked_pair_warning`]). Measured on a 20 kg door on two
/// hinges 1.8 m apart, spun at 1 rad/s without gravity for 10 s (`tests/bad_input.rs`): its
/// hinge lines 1e-5 m apart (least strain 7.0e-6 m) lost 0.02 % of its energy, 3e-5 m
/// (2.1e-5 m) 0.14 %, 1e-4 m 1.6 %, 1e-3 m 95 %; its lower hinge's axis tilted by 3e-6 rad
/// (1.1e-5 m) 0.12 %, 1e-5 rad 1.2 %, 2e-5 rad 4.8 %. Rounding of f32 anchors and axes leaves
/// pairs that can move orders of magnitude below it.
pub const LOCK_STRAIN: f64 = 1e-5;

/// Metres a radian of strain on a joint's angular rows counts as in [`LOCK_STRAIN`]: at 5 m
/// the door's tilts and gaps of equal least strain lose energy alike (to a factor of two; at
/// 0.1 m, as the conflict check weighs them, tilts up to 5e-5 rad, losing 27 %, went
/// unwarned while a 1e-4 m gap, losing 1.6 %, was warned: QA 2026-12-07).
pub const LOCK_METRES_PER_RADIAN: f64 = 5.0;

/// `m r^2 / I` above which single precision cannot hold a joint at lever arm `r`
/// ([`World::conditioning_warning`], [`World::lever_warning`]).
const MAX_LEVER_RATIO: f64 = 1e6;

/// A 64-bit hash of a frame's diagnostics: xxh3-64 over the bits of the rows (little-endian
/// builds). Logs keep it per frame so that `lavender diff` can tell two frames with the same
/// state but diagnostics from different builds apart without reading them.
pub fn diagnostics_hash(rows: &[[f32; COLUMN_COUNT]]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(rows))
}

/// A 64-bit hash of a simulation state: xxh3-64 over the bits of the poses and velocities in
/// the log's frame layout (see [`World::gather_state`]) and of the warm-start impulses, in
/// that order. Equal states hash equal on every little-endian build; the recorder stores it
/// with every frame, and `World::state_hash` is this function of the world's state.
pub fn state_hash(poses: &[[f32; 7]], velocities: &[[f32; 6]], solver_state: &[f32]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(bytemuck::cast_slice(poses));
    h.update(bytemuck::cast_slice(velocities));
    h.update(bytemuck::cast_slice(solver_state));
    h.digest()
}

#[cfg(test)]
mod sleep_tests {
    //! Island sleeping (see `schedule::islands`).
    use super::*;

    const DT: f32 = 1.0 / 60.0;

    fn sleepy(threads: u32, path: SolverPath) -> Settings {
        Settings {
            sleeping: true,
            threads,
            solver_path: path,
            ..Settings::default()
        }
    }

    /// Adds a chain of `links` 1 m links hanging from a static body at `top`; straight down
    /// (at rest) or straight out along +x (it swings). Returns the links.
    fn add_chain(w: &mut World, name: &str, top: Vec3, links: usize, swing: bool) -> Vec<BodyId> {
        let dir = if swing { Vec3::X } else { -Vec3::Y };
        let ground = w.add_body(BodyDesc::fixed(format!("{name}-ground")).position(top));
        let mut prev = ground.unwrap();
        let mut out = Vec::new();
        for k in 0..links {
            let p = top + dir * (k + 1) as f32;
            let body = w
                .add_body(BodyDesc::dynamic(format!("{name}-{k}")).position(p))
                .unwrap();
            let anchor_a = if k == 0 { Vec3::ZERO } else { dir * 0.5 };
            let joint = JointDesc::spherical(format!("{name}-j{k}"), prev, body)
                .anchors(anchor_a, -dir * if k == 0 { 1.0 } else { 0.5 });
            w.add_joint(joint).unwrap();
            prev = body;
            out.push(body);
        }
        out
    }

    fn bits(w: &World, id: BodyId) -> [u32; 13] {
        let (p, q) = w.body_pose(id).unwrap();
        let (v, a) = w.body_velocity(id).unwrap();
        let f = [
            p.x, p.y, p.z, q.x, q.y, q.z, q.w, v.x, v.y, v.z, a.x, a.y, a.z,
        ];
        f.map(f32::to_bits)
    }

    #[test]
    fn a_pendulum_at_rest_falls_asleep_after_time_to_sleep_and_is_skipped() {
        let mut w = World::new(sleepy(1, SolverPath::Wide)).unwrap();
        let bob = add_chain(&mut w, "p", Vec3::ZERO, 1, false)[0];
        let h = 1.0 / 240.0;
        let mut substeps = 0;
        while !w.is_body_sleeping(bob).unwrap() {
            w.step(h).unwrap();
            substeps += 1;
            assert!(substeps < 1000, "never slept");
        }
        // 0.5 s of 1/240 s substeps: the body rests from the first substep, and the f32 sum
        // of h is 0.49999 after 120 substeps and 0.50417 after 121, so it sleeps at 121.
        eprintln!("slept after {substeps} substeps");
        assert_eq!(substeps, 121, "slept after {substeps} substeps");
        assert_eq!((w.sleeping_body_count(), w.sleeping_island_count()), (1, 1));
        assert_eq!(w.body_velocity(bob).unwrap(), (Vec3::ZERO, Vec3::ZERO));
        let asleep = bits(&w, bob);
        let hash = w.state_hash();
        for _ in 0..100 {
            w.step(DT).unwrap();
        }
        assert_eq!(bits(&w, bob), asleep, "a sleeping body moved");
        assert_eq!(w.state_hash(), hash);
        assert_eq!(
            w.active_row_count(),
            0,
            "a sleeping island's rows were solved"
        );
        assert_eq!(w.schedule().sleeping_joints, 1);
        // The diagnostics stay those of the resting pose.
        let d = w.constraint_data()[0];
        assert!(d[3] < 1e-6 && d[6] == 0.0, "{d:?}");
    }

    #[test]
    fn a_swinging_island_is_unaffected_by_a_sleeping_one() {
        let run = |with_rest: bool, sleeping: bool| {
            let mut w = World::new(Settings {
                sleeping,
                ..sleepy(1, SolverPath::Wide)
            })
            .unwrap();
            let rest = with_rest.then(|| add_chain(&mut w, "rest", Vec3::ZERO, 3, false));
            let swing = add_chain(&mut w, "swing", Vec3::new(10.0, 0.0, 0.0), 3, true);
            let mut max_speed = 0.0f32;
            for _ in 0..240 {
                w.step(DT).unwrap();
                max_speed = max_speed.max(w.body_velocity(swing[2]).unwrap().0.length());
            }
            let awake = swing.iter().all(|&b| !w.is_body_sleeping(b).unwrap());
            let slept = rest.map(|r| r.iter().all(|&b| w.is_body_sleeping(b).unwrap()));
            let state: Vec<_> = swing.iter().map(|&b| bits(&w, b)).collect();
            (state, awake, slept, max_speed)
        };
        let (with_sleep, awake, slept, max_speed) = run(true, true);
        eprintln!("swinging chain: max speed of its end {max_speed} m/s");
        assert!(awake && max_speed > 3.0, "max speed {max_speed}");
        assert_eq!(slept, Some(true));
        let (alone, ..) = run(false, true);
        let (no_sleep, _, slept_off, _) = run(true, false);
        assert_eq!(slept_off, Some(false));
        assert_eq!(
            with_sleep, alone,
            "the swinging chain depends on a sleeping island"
        );
        assert_eq!(with_sleep, no_sleep, "sleeping changed the swinging chain");
    }

    #[test]
    fn set_body_velocity_wakes_the_whole_island() {
        let mut w = World::new(sleepy(1, SolverPath::Wide)).unwrap();
        let links = add_chain(&mut w, "c", Vec3::ZERO, 2, false);
        for _ in 0..60 {
            w.step(DT).unwrap();
        }
        assert_eq!(w.sleeping_body_count(), 2);
        let before = [links[0], links[1]].map(|b| w.body_pose(b).unwrap().0);
        w.set_body_velocity(links[0], Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO)
            .unwrap();
        assert!(!w.is_body_sleeping(links[0]).unwrap() && !w.is_body_sleeping(links[1]).unwrap());
        assert_eq!(w.sleep_timers()[1..], [0.0, 0.0]);
        assert_eq!(
            w.body_velocity(links[0]).unwrap().0,
            Vec3::new(1.0, 0.0, 0.0)
        );
        w.step(DT).unwrap();
        let moved = [0, 1].map(|k| (w.body_pose(links[k]).unwrap().0 - before[k]).length());
        eprintln!("woken links moved {moved:?} m in one frame");
        // The kicked link moves about 1 m/s x 1/60 s; the joint drags the lower one along.
        assert!(moved[0] > 1e-2 && moved[1] > 1e-4, "moved {moved:?} m");
        assert!(w.active_row_count() > 0);
        // Nothing damps the swing, so the chain stays awake.
        for _ in 0..60 {
            w.step(DT).unwrap();
        }
        assert_eq!(w.sleeping_body_count(), 0);
        // Touching the static anchor wakes the island jointed to it, too.
        w.wake_all();
        w.set_settings(Settings {
            sleep_linear_speed: 100.0,
            sleep_angular_speed: 100.0,
            ..*w.settings()
        })
        .unwrap();
        for _ in 0..31 {
            w.step(DT).unwrap();
        }
        assert_eq!(w.sleeping_body_count(), 2);
        let ground = w.body_id("c-ground").unwrap();
        w.set_body_pose(ground, Vec3::new(0.0, 0.1, 0.0), Quat::IDENTITY)
            .unwrap();
        assert_eq!(w.sleeping_body_count(), 0);
    }

    /// Ten chains of 1 to 3 links hanging at rest (ten islands that fall asleep) and two
    /// swinging chains (that stay awake).
    fn mixed(settings: Settings) -> World {
        let mut w = World::new(settings).unwrap();
        for i in 0..10 {
            add_chain(
                &mut w,
                &format!("r{i}"),
                Vec3::new(i as f32, 0.0, 0.0),
                1 + i % 3,
                false,
            );
        }
        add_chain(&mut w, "s0", Vec3::new(0.0, 10.0, 0.0), 4, true);
        add_chain(&mut w, "s1", Vec3::new(0.0, 20.0, 0.0), 2, true);
        w
    }

    #[test]
    fn sleeping_is_bitwise_identical_for_every_thread_count_and_path() {
        let runs = [
            (1, SolverPath::Wide),
            (2, SolverPath::Wide),
            (1, SolverPath::Scalar),
            (2, SolverPath::Scalar),
        ];
        let mut hashes: Vec<Vec<u64>> = Vec::new();
        let mut slept = 0;
        for (threads, path) in runs {
            let mut w = mixed(sleepy(threads, path));
            let mut h = Vec::new();
            for _ in 0..90 {
                w.step(DT).unwrap();
                h.push(w.state_hash());
            }
            slept = w.sleeping_island_count();
            hashes.push(h);
        }
        assert_eq!(slept, 10, "the ten resting islands sleep");
        for h in &hashes[1..] {
            assert_eq!(h, &hashes[0]);
        }
    }

    #[test]
    fn solver_state_carries_the_timers_and_resumes_bitwise() {
        for frames in [20, 45] {
            // 20 frames: timers running, nothing asleep; 45: the resting islands asleep.
            let mut a = mixed(sleepy(1, SolverPath::Wide));
            for _ in 0..frames {
                a.step(DT).unwrap();
            }
            assert_eq!(
                a.solver_state().len(),
                a.joint_count() * MAX_ROWS_PER_JOINT + a.body_count()
            );
            let (mut poses, mut velocities) = (Vec::new(), Vec::new());
            a.gather_state(&mut poses, &mut velocities);
            let solver = a.solver_state().to_vec();
            let mut b = mixed(sleepy(1, SolverPath::Wide));
            b.restore_body_states(&poses, &velocities).unwrap();
            b.set_solver_state(&solver).unwrap();
            b.set_clock(a.time(), a.substeps_done());
            assert_eq!(b.state_hash(), a.state_hash());
            assert_eq!(b.sleeping_body_count(), a.sleeping_body_count());
            assert_eq!(a.sleeping_island_count(), if frames == 45 { 10 } else { 0 });
            for _ in 0..60 {
                a.step(DT).unwrap();
                b.step(DT).unwrap();
                assert_eq!(b.state_hash(), a.state_hash());
            }
            // The wrong length is refused with a message saying why.
            let e = b.set_solver_state(&solver[..solver.len() - 1]).unwrap_err();
            assert!(e.to_string().contains("rest timer"), "{e}");
        }
    }

    #[test]
    fn with_sleeping_off_the_solver_state_is_the_impulses() {
        let mut w = mixed(Settings::default());
        w.step(DT).unwrap();
        assert_eq!(w.solver_state().len(), w.joint_count() * MAX_ROWS_PER_JOINT);
        assert_eq!(w.sleeping_body_count(), 0);
        assert!(w.sleep_timers().iter().all(|&t| t == 0.0));
    }

    #[test]
    fn a_moving_kinematic_body_keeps_its_island_awake() {
        let mut w = World::new(sleepy(1, SolverPath::Wide)).unwrap();
        let k = w
            .add_body(BodyDesc::kinematic("k").velocity(Vec3::new(0.01, 0.0, 0.0), Vec3::ZERO))
            .unwrap();
        let bob = w
            .add_body(BodyDesc::dynamic("bob").position(Vec3::new(0.0, -1.0, 0.0)))
            .unwrap();
        w.add_joint(JointDesc::spherical("j", k, bob).anchors(Vec3::ZERO, Vec3::Y))
            .unwrap();
        for _ in 0..120 {
            w.step(DT).unwrap();
        }
        // The kinematic body crawls at 0.01 m/s, below the threshold, yet drags the bob.
        assert!(!w.is_body_sleeping(bob).unwrap());
        w.set_body_velocity(k, Vec3::ZERO, Vec3::ZERO).unwrap();
        for _ in 0..60 {
            w.step(DT).unwrap();
        }
        assert!(w.is_body_sleeping(bob).unwrap());
    }
}

#[cfg(test)]
mod diagnostics_tests {
    //! The world's diagnostics: lane groups of one joint type, groups that mix types (joint by
    //! joint on one lane) and single joints all give the same bits, close to the scalar
    //! reference.
    use super::*;
    use crate::joints::{JointKind, PosePair, VelocityPair};

    #[test]
    fn sync_gives_every_joint_the_bits_of_its_one_lane_diagnostics_whatever_its_group() {
        for threads in [1, 2] {
            let mut w = World::new(Settings {
                threads,
                ..Settings::default()
            })
            .unwrap();
            let ground = w.add_body(BodyDesc::fixed("ground")).unwrap();
            // Nine revolute joints (one full lane group, then one more), then the four types
            // in turn (groups that mix types), some with limits; 29 joints.
            let kinds: Vec<JointKind> = (0..29)
                .map(|k| match k {
                    0..=8 => JointKind::Revolute,
                    _ => [
                        JointKind::Spherical,
                        JointKind::Fixed,
                        JointKind::Prismatic,
                        JointKind::Revolute,
                    ][k % 4],
                })
                .collect();
            let mut prev = ground;
            for (k, &kind) in kinds.iter().enumerate() {
                let x = k as f32 + 1.0;
                let body = w
                    .add_body(BodyDesc::dynamic(format!("b{k}")).position(Vec3::new(x, 0.0, 0.0)))
                    .unwrap();
                let name = format!("j{k}");
                let desc = match kind {
                    JointKind::Revolute => JointDesc::revolute(name, prev, body).axis(Vec3::Z),
                    JointKind::Spherical => JointDesc::spherical(name, prev, body),
                    JointKind::Fixed => JointDesc::fixed(name, prev, body),
                    JointKind::Prismatic => JointDesc::prismatic(name, prev, body).axis(Vec3::X),
                }
                .anchors(Vec3::new(0.5, 0.0, 0.0), Vec3::new(-0.5, 0.0, 0.0));
                let desc = if k % 3 == 0 && kind != JointKind::Spherical && kind != JointKind::Fixed
                {
                    desc.limit(-0.05, 0.05)
                } else {
                    desc
                };
                w.add_joint(desc).unwrap();
                prev = body;
            }
            // Move every body off its joints and give it a velocity.
            for k in 0..kinds.len() {
                let id = w.body_id(&format!("b{k}")).unwrap();
                let f = k as f32;
                let q =
                    Quat::from_euler(glam::EulerRot::XYZ, 0.1 * f.sin(), 0.2 * f.cos(), 0.05 * f);
                w.set_body_pose(id, Vec3::new(f + 1.0 + 0.01 * f, 0.02 * f.sin(), 0.0), q)
                    .unwrap();
                w.set_body_velocity(
                    id,
                    Vec3::new(0.1 * f.cos(), 0.2, -0.1),
                    Vec3::new(0.0, 0.3 * f.sin(), 1.0),
                )
                .unwrap();
            }
            w.sync();
            let (b, j) = (&w.bodies, &w.joints);
            let mut violated = 0;
            for (k, &kind) in kinds.iter().enumerate() {
                let one = joints::diagnose_joint(b, j, k);
                let got = w.constraint_data()[k];
                assert_eq!(
                    got.map(f32::to_bits),
                    one.map(f32::to_bits),
                    "joint {k} ({kind:?}), {threads} threads"
                );
                let (a, bb) = (j.body_a[k] as usize, j.body_b[k] as usize);
                let v = VelocityPair {
                    linear_a: b.linear_velocity[a],
                    angular_a: b.angular_velocity[a],
                    linear_b: b.linear_velocity[bb],
                    angular_b: b.angular_velocity[bb],
                };
                let reference = joints::diagnose(kind, &PosePair::of(b, a, bb), &v, &j.params(k));
                for c in 0..COLUMN_COUNT {
                    let err = (got[c] - reference[c]).abs() / (1.0 + reference[c].abs());
                    assert!(
                        err <= 4e-6,
                        "joint {k} column {c}: {} vs {}",
                        got[c],
                        reference[c]
                    );
                }
                violated += usize::from(got[5] > 0.0);
                assert!(
                    got[3] > 1e-3,
                    "joint {k}: the poses were moved off the joint"
                );
            }
            assert!(violated >= 2, "only {violated} limits violated");
        }
    }
}

#[cfg(test)]
mod lever_tests {
    //! What a step that went non-finite says about far levers (`World::lever_warning`).
    use super::*;
    use crate::{BodyDesc, JointDesc};

    #[test]
    fn warnings_gathers_what_a_world_built_in_code_would_not_hear() {
        let mut w = World::new(Settings::default()).unwrap();
        let pivot = w.add_body(BodyDesc::fixed("pivot")).unwrap();
        let bob = w
            .add_body(BodyDesc::dynamic("bob").position(Vec3::new(1.0, 0.0, 0.0)))
            .unwrap();
        let arm = Vec3::new(-1.0, 0.0, 0.0);
        w.add_joint(JointDesc::revolute("hinge", pivot, bob).anchors(Vec3::ZERO, arm))
            .unwrap();
        assert_eq!(w.warnings(1.0 / 60.0), Vec::<String>::new());
        // A 1 kg bob of 1e-8 kg m^2 on the 1 m arm: m r^2 / I = 1e8, beyond f32.
        let needle = w
            .add_body(
                BodyDesc::dynamic("needle")
                    .position(Vec3::new(0.0, 0.0, 1.0))
                    .inertia(Vec3::splat(1e-8)),
            )
            .unwrap();
        w.add_joint(
            JointDesc::spherical("ball", pivot, needle)
                .anchors(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0)),
        )
        .unwrap();
        let warnings = w.warnings(1.0 / 60.0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("`ball`"), "{warnings:?}");
        // Frames of 1 s with substeps of up to 1 s: the 1 m pendulum's 2 s swing in two.
        w.set_settings(Settings {
            max_substep: 1.0,
            ..Settings::default()
        })
        .unwrap();
        let warnings = w.warnings(1.0);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[1].contains("substep"), "{warnings:?}");
    }

    #[test]
    fn a_slider_run_far_out_is_named_and_a_near_one_is_not() {
        let mut w = World::new(Settings::default()).unwrap();
        let rail = w.add_body(BodyDesc::dynamic("rail")).unwrap();
        let block = w
            .add_body(BodyDesc::dynamic("block").position(Vec3::new(0.5, 0.0, 0.0)))
            .unwrap();
        let slider = JointDesc::prismatic("slider", rail, block).axis(Vec3::X);
        let j = w.add_joint(slider).unwrap().index();
        assert_eq!(w.lever_warning(j), None);
        assert_eq!(w.lever_warnings_of("rail"), "");
        // 2 km out along its axis: the rows across the slide act on the rail at the block's
        // anchor, 2 km from its centre, where a 1 kg, 0.1 m cube has m r^2 / I = 2.4e9. On
        // the block they act at its own anchor (its centre): nothing to say there.
        w.set_body_pose(block, Vec3::new(2000.0, 0.0, 0.0), Quat::IDENTITY)
            .unwrap();
        let warning = w.lever_warning(j).expect("a far lever");
        assert!(
            warning.contains("`slider` acts 2.000e3 m from the centre of body `rail`")
                && warning.contains("m r^2 / I = 2.4e9"),
            "{warning}"
        );
        let sentence = w.lever_warnings_of("block");
        assert!(sentence.starts_with("Before it, 1 joint(s)"), "{sentence}");
        assert!(
            sentence.contains("`slider` 2.00e3 m from `rail`"),
            "{sentence}"
        );
        // A block far along a static rail is no trouble: the rail does not move.
        let mut w = World::new(Settings::default()).unwrap();
        let ground = w.add_body(BodyDesc::fixed("ground")).unwrap();
        let block = w
            .add_body(BodyDesc::dynamic("block").position(Vec3::new(2000.0, 0.0, 0.0)))
            .unwrap();
        let slider = JointDesc::prismatic("slider", ground, block).axis(Vec3::X);
        let j = w.add_joint(slider).unwrap().index();
        assert_eq!(w.lever_warning(j), None);
    }
}
