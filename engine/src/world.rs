//! The world and its step: a list of named stages, nothing else.
//!
//! One step of `dt` runs `n = ceil(dt / max_substep)` substeps of `h = dt / n`. Each substep:
//!
//! 1. `integrate_velocities`: `v += g h` for dynamic bodies;
//! 2. `prepare_rows`: world inverse inertia, then every joint's rows at the current poses
//!    (decoupled per joint, see `solver::decouple_lanes`), with the bias
//!    `error_reduction C / h` and last substep's impulses for warm start;
//! 3. `warm_start`: apply those impulses;
//! 4. `solve_velocities`: `velocity_iterations` sequential-impulse passes, each fused with a
//!    pass of the error-reduction solve on the bias velocities (split impulses);
//! 5. `store_impulses`: keep the impulses for the next warm start and the joint forces;
//! 6. `integrate_positions`: `x += (v + u) h`, `q += 1/2 [(w + u_w) h, 0] q`, normalised,
//!    where `u` are the bias velocities, then discarded;
//! 7. `project_positions`: `position_iterations` passes that move the poses back onto the
//!    joint manifold, joint by joint (non-linear Gauss-Seidel; a joint's decoupled rows are
//!    applied together);
//! 8. `check_finite`: a non-finite state rolls the step back and names the body.
//!
//! Every stage that touches rows walks the [`crate::schedule`]: colours in order, the batches
//! of one colour in parallel (they share no dynamic body), then the overflow joints serially.
//! Per-body and per-joint stages run in fixed-size parallel chunks. Nothing depends on the
//! thread count, so results are bitwise identical for any [`Settings::threads`].

use crate::bodies::{inv_inertia_world, Bodies, BodyDesc, BodyId, BodyKind, BodyState};
use crate::diagnostics::{JointForce, COLUMN_COUNT};
use crate::error::{EngineError, Result};
use crate::joints::{self, JointDesc, JointId, Joints};
use crate::lanes::{BodyAccess, PoseAccess, Shared, SolverVelocity, Wide, WIDE_LANES};
use crate::rows::{integrate_rotation, MAX_ROWS_PER_JOINT};
use crate::schedule::{Islands, Schedule};
use crate::settings::{Settings, SolverPath};
use crate::solver::{Exec, PrepareInput, Solver};
use glam::{Quat, Vec3};
use std::sync::Arc;
use tracing::trace_span;

/// Joints per parallel task of the diagnostics (a multiple of the lane width).
const DIAGNOSE_CHUNK: usize = 512;

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
type Observer<'a> = dyn FnMut(&World, SubstepInfo) + 'a;

/// What one call to [`World::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// Substeps run.
    pub substeps: u32,
    /// Length of each substep, s.
    pub substep_dt: f32,
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
}

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
    time: f64,
    substeps_done: u64,
    /// The velocities the kernels work on during the velocity passes (copied from the bodies
    /// before warm start, back after the last pass).
    velocities: Vec<SolverVelocity>,
    /// Bias ("split") velocities: the corrective velocities the error-reduction bias asks
    /// for. They move the poses in the substep they are computed in, then are discarded, so
    /// the bias never adds kinetic energy nor enters the warm start.
    bias: Vec<SolverVelocity>,
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
            pool: None,
            backup: BodyState::default(),
            impulse_backup: Vec::new(),
            time: 0.0,
            substeps_done: 0,
            velocities: Vec::new(),
            bias: Vec::new(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Replaces the settings (validated first; the world is unchanged on error).
    pub fn set_settings(&mut self, settings: Settings) -> Result<()> {
        settings.validate()?;
        self.settings = settings;
        Ok(())
    }

    /// Adds a body.
    pub fn add_body(&mut self, desc: BodyDesc) -> Result<BodyId> {
        let id = self.bodies.push(&desc)?;
        self.invalidate_schedule();
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
        self.diagnostics.push([0.0; COLUMN_COUNT]);
        self.sync_joint(id.index());
        self.invalidate_schedule();
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

    fn invalidate_schedule(&mut self) {
        self.schedule = None;
        self.solver = None;
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
        let current = matches!(
            (&self.solver, path),
            (Some(PathSolver::Scalar(_)), SolverPath::Scalar)
                | (Some(PathSolver::Wide(_)), SolverPath::Wide)
        );
        if !current {
            let width = match path {
                SolverPath::Scalar => 1,
                SolverPath::Wide => WIDE_LANES,
            };
            let limited: Vec<bool> = self.joints.limit.iter().map(Option::is_some).collect();
            let schedule = Schedule::build(
                width,
                &self.bodies.kind,
                &self.joint_bodies(),
                &self.joints.kind,
                &limited,
            );
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
            + 4 * size_of::<Vec3>()
            + size_of::<Quat>()
            + size_of::<Option<[f32; 2]>>()
            + 2 * size_of::<[f32; MAX_ROWS_PER_JOINT]>() // impulses and their rollback copy
            + 3 * size_of::<Vec3>() // force and torques
            + size_of::<[f32; COLUMN_COUNT]>();
        let body = name
            + size_of::<BodyKind>()
            + 2 * (size_of::<Vec3>() * 3 + size_of::<Quat>()) // state and its rollback copy
            + size_of::<f32>()
            + size_of::<Vec3>()
            + size_of::<glam::Mat3>()
            + 2 * size_of::<SolverVelocity>(); // kernel and bias velocities
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

    fn exec(&self) -> Exec {
        if self.settings.threads == 1 {
            Exec::Serial
        } else {
            Exec::Parallel
        }
    }

    /// Runs `f` on a worker of this world's pool (or of rayon's global pool when
    /// `threads == 0`), so that the parallel loops inside `f` push their jobs onto the worker's
    /// own deque. Entering a pool from outside goes through rayon's injector, a crossbeam queue
    /// that allocates a block per 63 jobs: entering once per step, not once per parallel
    /// loop, keeps that to one allocation per 63 steps (see `tests/no_alloc.rs`).
    fn in_pool<R: Send>(&mut self, f: impl FnOnce(&mut World) -> R + Send) -> R {
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

    /// Sets a body's pose without advancing time, then refreshes the diagnostics.
    pub fn set_body_pose(&mut self, id: BodyId, position: Vec3, rotation: Quat) -> Result<()> {
        let i = self.check_body(id)?;
        let name = &self.bodies.name[i];
        crate::bodies::check_vec(position, "position", name)?;
        let rotation = crate::bodies::check_unit_quat(rotation).map_err(|reason| {
            EngineError::InvalidBody {
                body: name.clone(),
                reason,
            }
        })?;
        self.bodies.position[i] = position;
        self.bodies.rotation[i] = rotation;
        self.bodies.refresh_inv_inertia_world(i);
        self.sync();
        Ok(())
    }

    /// Sets a body's velocity without advancing time, then refreshes the diagnostics.
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
        self.bodies.linear_velocity[i] = linear;
        self.bodies.angular_velocity[i] = angular;
        self.sync();
        Ok(())
    }

    /// The diagnostics, one `[f32; 8]` row per joint (see [`crate::diagnostics`]), as of the
    /// last step or [`World::sync`]. Zero-copy.
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
    pub fn joint_force(&self, id: JointId) -> JointForce {
        let j = id.index();
        JointForce {
            force_on_b: self.joints.force_on_b[j],
            torque_on_b: self.joints.torque_on_b[j],
            torque_on_a: self.joints.torque_on_a[j],
        }
    }

    /// Constraint forces of every joint over the last substep.
    pub fn joint_forces(&self) -> Vec<JointForce> {
        (0..self.joints.len())
            .map(|j| self.joint_force(JointId(j as u32)))
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

    /// Warm-start impulses of every joint, 6 per joint: the solver state that, with the poses
    /// and velocities, determines the next step.
    pub fn solver_state(&self) -> &[f32] {
        self.joints.impulse.as_flattened()
    }

    /// Restores warm-start impulses saved by [`World::solver_state`].
    pub fn set_solver_state(&mut self, state: &[f32]) -> Result<()> {
        let want = self.joints.len() * MAX_ROWS_PER_JOINT;
        if state.len() != want || state.iter().any(|x| !x.is_finite()) {
            return Err(EngineError::InvalidSetting {
                name: "solver_state",
                value: format!("{} values", state.len()),
                reason: "must hold 6 finite impulses per joint, as World::solver_state gives",
            });
        }
        self.joints
            .impulse
            .as_flattened_mut()
            .copy_from_slice(state);
        Ok(())
    }

    /// Sets the clock (simulation time in s, substeps completed), for resuming a run.
    pub fn set_clock(&mut self, time: f64, substeps_done: u64) {
        self.time = time;
        self.substeps_done = substeps_done;
    }

    /// Restores every body's pose `[x y z qx qy qz qw]` and velocity `[vx vy vz wx wy wz]`
    /// exactly as given (bit for bit; no re-normalisation, unlike [`World::set_body_pose`]),
    /// then refreshes the diagnostics once. For resuming a recorded run: with
    /// [`World::set_solver_state`] and [`World::set_clock`] it reproduces the recorded state
    /// hash. (Added by the replay crate's owner; `set_body_pose` per body re-normalises the
    /// quaternion, which changes the last bit of about one rotation in three, and re-syncs
    /// every joint per body.)
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
        let _s = trace_span!("sync").entered();
        let (bodies, joints) = (&self.bodies, &self.joints);
        // Chunks of whole lane groups; the grouping does not change a joint's bits (see
        // `joints::diagnose_group`), so neither does the thread count.
        self.exec()
            .for_each_chunk(&mut self.diagnostics, DIAGNOSE_CHUNK, &|first, rows| {
                for (k, group) in rows.chunks_mut(WIDE_LANES).enumerate() {
                    joints::diagnose_group::<Wide>(bodies, joints, first + k * WIDE_LANES, group);
                }
            });
    }

    fn sync_joint(&mut self, j: usize) {
        let row = std::slice::from_mut(&mut self.diagnostics[j]);
        joints::diagnose_group::<f32>(&self.bodies, &self.joints, j, row);
    }

    /// Advances the world by `dt` seconds and refreshes the diagnostics.
    pub fn step(&mut self, dt: f32) -> Result<StepReport> {
        self.ensure_solver();
        self.in_pool(|w| {
            let report = w.run_substeps(dt, None)?;
            w.sync_all();
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
        self.run_substeps(dt, Some(&mut |w: &World, info| observer(w, info)))
    }

    fn run_substeps(&mut self, dt: f32, mut observer: Option<&mut Observer>) -> Result<StepReport> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(EngineError::InvalidTimeStep(dt));
        }
        let _span = tracing::debug_span!("step", dt).entered();
        self.ensure_solver();
        let n = self.settings.substeps_for(dt);
        let h = dt / n as f32;
        self.bodies.save_state(&mut self.backup);
        self.impulse_backup.clone_from(&self.joints.impulse);
        let start = (self.time, self.substeps_done);
        let observed = observer.is_some();
        for _ in 0..n {
            // One entry into the thread pool per substep: the stages, the finiteness check
            // and, for an observer, the diagnostics (entering the pool wakes its workers).
            let checked = self.in_pool(|w| {
                w.substep(h);
                let checked = w.check_finite();
                if checked.is_ok() && observed {
                    w.sync_all();
                }
                checked
            });
            if let Err(e) = checked {
                self.bodies.restore_state(&self.backup);
                self.joints.impulse.clone_from(&self.impulse_backup);
                (self.time, self.substeps_done) = start;
                self.sync();
                return Err(e);
            }
            self.time += f64::from(h);
            self.substeps_done += 1;
            if let Some(observer) = observer.as_mut() {
                let info = SubstepInfo {
                    substep: self.substeps_done - 1,
                    time: self.time,
                    dt: h,
                };
                let _s = trace_span!("observe").entered();
                observer(self, info);
            }
        }
        Ok(StepReport {
            substeps: n,
            substep_dt: h,
        })
    }

    /// One substep of length `h`: the stages, in order.
    fn substep(&mut self, h: f32) {
        self.integrate_velocities(h);
        self.prepare_rows(h);
        self.warm_start();
        self.solve_velocities();
        self.store_impulses(h);
        self.integrate_positions(h);
        self.project_positions();
    }

    fn integrate_velocities(&mut self, h: f32) {
        let _s = trace_span!("integrate_velocities").entered();
        let dv = self.settings.gravity * h;
        let kind = &self.bodies.kind;
        self.exec()
            .for_each_indexed(&mut self.bodies.linear_velocity, &|i, v| {
                if kind[i] == BodyKind::Dynamic {
                    *v += dv;
                }
            });
    }

    fn prepare_rows(&mut self, h: f32) {
        let _s = trace_span!("prepare_rows").entered();
        let exec = self.exec();
        let b = &mut self.bodies;
        let (local, rotation) = (&b.inv_inertia_local, &b.rotation);
        exec.for_each_indexed(&mut b.inv_inertia_world, &|i, m| {
            *m = inv_inertia_world(local[i], rotation[i]);
        });
        let input = PrepareInput {
            bodies: &self.bodies,
            joints: &self.joints,
            bias_rate: self.settings.error_reduction / h,
            inv_h: 1.0 / h,
            warm_starting: self.settings.warm_starting,
        };
        on_path!(&mut self.solver, s => s.prepare(exec, &input));
    }

    fn warm_start(&mut self) {
        let _s = trace_span!("warm_start").entered();
        let exec = self.exec();
        let b = &self.bodies;
        let (linear, angular) = (&b.linear_velocity, &b.angular_velocity);
        self.velocities.resize(b.len(), SolverVelocity::default());
        exec.for_each_indexed(&mut self.velocities, &|i, v| {
            *v = SolverVelocity::new(linear[i], angular[i]);
        });
        let access = BodyAccess {
            velocities: Shared::new(&mut self.velocities),
        };
        on_path!(&mut self.solver, s => s.warm_start(exec, access));
    }

    fn solve_velocities(&mut self) {
        let _s = trace_span!("solve_velocities").entered();
        let exec = self.exec();
        // Split impulses: the bias acts on separate velocities that only move the poses.
        // Folding it into the real velocities (classic Baumgarte) let warm starting re-apply
        // last substep's bias impulse: with error_reduction = 0.02 a 10-box welded cantilever
        // gained 4.4 kJ in 3 s, and one bias-free "relax" pass did not take it back out.
        self.bias.clear();
        self.bias
            .resize(self.bodies.len(), SolverVelocity::default());
        let with_bias = self.settings.error_reduction > 0.0;
        for _ in 0..self.settings.velocity_iterations {
            let access = BodyAccess {
                velocities: Shared::new(&mut self.velocities),
            };
            if with_bias {
                // The velocity and bias systems are independent: one fused pass per
                // iteration reads the rows once (bitwise the same as separate passes).
                let bias = BodyAccess {
                    velocities: Shared::new(&mut self.bias),
                };
                on_path!(&mut self.solver, s => s.solve_with_bias(exec, access, bias));
            } else {
                on_path!(&mut self.solver, s => s.solve(exec, access));
            }
        }
        let v = &self.velocities;
        let b = &mut self.bodies;
        exec.for_each_indexed(&mut b.linear_velocity, &|i, x| *x = v[i].linear());
        exec.for_each_indexed(&mut b.angular_velocity, &|i, x| *x = v[i].angular());
    }

    fn store_impulses(&mut self, h: f32) {
        let _s = trace_span!("store_impulses").entered();
        let exec = self.exec();
        let joints = &mut self.joints;
        on_path!(&self.solver, s => s.store(exec, joints, 1.0 / h));
    }

    fn integrate_positions(&mut self, h: f32) {
        let _s = trace_span!("integrate_positions").entered();
        let exec = self.exec();
        let b = &mut self.bodies;
        let u = &self.bias;
        let (kind, linear, angular) = (&b.kind, &b.linear_velocity, &b.angular_velocity);
        exec.for_each_indexed(&mut b.position, &|i, x| {
            if kind[i] != BodyKind::Static {
                *x += (linear[i] + u[i].linear()) * h;
            }
        });
        exec.for_each_indexed(&mut b.rotation, &|i, q| {
            if kind[i] != BodyKind::Static {
                *q = integrate_rotation(*q, (angular[i] + u[i].angular()) * h);
            }
        });
    }

    fn project_positions(&mut self) {
        let _s = trace_span!("project_positions").entered();
        let exec = self.exec();
        let factor = self.settings.projection_factor;
        for _ in 0..self.settings.position_iterations {
            let b = &mut self.bodies;
            let poses = PoseAccess {
                position: Shared::new(&mut b.position),
                rotation: Shared::new(&mut b.rotation),
                inv_mass: &b.inv_mass,
                inv_inertia: &b.inv_inertia_world,
            };
            let joints = &self.joints;
            on_path!(&self.solver, s => s.project(exec, poses, joints, factor));
        }
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
                })
            }
        }
    }
}

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
