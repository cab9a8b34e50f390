//! Recording a running [`World`]: one frame per substep, to a `.lvlog` or straight to HDF5.
//!
//! A [`Recorder`] is created from the scene and the world it was built into, then fed from
//! the step observer:
//!
//! ```no_run
//! use lavender_engine::Scene;
//! use lavender_replay::recorder::Recorder;
//!
//! let scene = Scene::builtin("pendulum")?;
//! let mut world = scene.build()?;
//! let dt = scene.frame_dt();
//! let mut recorder = Recorder::create("run.lvlog", &scene, &world, dt)?;
//! for _ in 0..120 {
//!     recorder.step(&mut world, dt)?; // world.step_observed + one frame per substep
//! }
//! let summary = recorder.finish()?;
//! println!("{} frames, {} bytes in {}", summary.frames, summary.bytes, summary.path.display());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A world built in code has no scene file: [`Scene::from_world`] writes one from it (every
//! body in its current state and every joint, explicit, rebuilding the same world bit for
//! bit), and that scene is the one to record with, so that the log resumes like any other:
//! [`Recorder::for_world`]`("run.lvlog", &world, dt)?` does that. A scene that did not build
//! the world (other names, kinds or counts) is refused ([`Scene::check_describes`]).
//!
//! The header carries the scene as TOML with every world setting written out (the run's
//! effective settings, including command-line overrides, and the frame `dt`), so that
//! [`crate::resume`] can rebuild the exact world. The scene hash is the hash of the scene as
//! given (before overrides): two runs of one scene with different settings compare without
//! `--force`.
//!
//! Each frame holds the poses `[x y z qx qy qz qw]`, the velocities `[vx vy vz wx wy wz]`, the
//! eight diagnostic columns, the total energy, the state hash ([`state_hash`]) and, at keyframes
//! ([`RecordOptions::keyframe_every`], default every 16th frame), the warm-start impulses.

use std::path::Path;

use lavender_engine::lanes::{Lane, Wide, Q, V3, WIDE_LANES};
use lavender_engine::{Quat, Scene, StepReport, SubstepInfo, Vec3, World};

use crate::error::{ReplayError, Result};
use crate::format::{FrameInput, Header, WorldSettingsRecord};
#[cfg(feature = "hdf5")]
use crate::h5::Hdf5Writer;
use crate::writer::{LogSummary, LogWriter, WriterOptions};

/// How a [`Recorder`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordOptions {
    /// Store the solver state (warm-start impulses) every this many frames (1 = every frame,
    /// 0 = never; default [`DEFAULT_KEYFRAME_EVERY`]). Resuming from a frame without it
    /// replays from the last keyframe before it, bit for bit.
    pub keyframe_every: u64,
    /// Writer options for `.lvlog` output (ignored for HDF5).
    pub writer: WriterOptions,
    /// Hand each frame to a recording thread (`.lvlog` output only): the caller copies the
    /// world's arrays (about 0.1 ms per MB) and the thread computes the energy, the state
    /// hash, the summary, encodes, checksums and writes. At most [`PIPELINE_QUEUE`] frames
    /// are in flight (then `record` waits for the thread). Frames smaller than
    /// [`PIPELINE_MIN_FRAME_BYTES`] are recorded on the caller's thread either way.
    pub threaded: bool,
}

/// Default keyframe spacing, in frames (substeps): a resume replays at most 15 substeps, and
/// the solver state (6 floats per joint, 24 % of a 10,000-joint chain frame) is written for
/// one frame in 16, which `benches/record.rs` measures against every frame.
pub const DEFAULT_KEYFRAME_EVERY: u64 = 16;

/// Frames in flight between [`Recorder::record`] and the recording thread.
pub const PIPELINE_QUEUE: usize = 3;

impl Default for RecordOptions {
    /// Keyframes every [`DEFAULT_KEYFRAME_EVERY`] frames, frames encoded and written by a
    /// recording thread (measured the cheapest for the stepping thread: see
    /// `benches/record.rs`).
    fn default() -> Self {
        RecordOptions {
            keyframe_every: DEFAULT_KEYFRAME_EVERY,
            writer: WriterOptions::default(),
            threaded: true,
        }
    }
}

/// Where a recording goes, chosen by the file extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// Lavender's own log (`.lvlog`, or any extension other than the HDF5 ones).
    Log,
    /// HDF5 (`.h5`, `.hdf5`, `.he5`).
    Hdf5,
}

impl OutputKind {
    /// The kind for a path: HDF5 for `.h5`, `.hdf5` and `.he5`, the log format otherwise.
    pub fn of(path: &Path) -> OutputKind {
        match crate::files::extension(path) {
            Some(e) if crate::files::HDF5_EXTENSIONS.contains(&e.as_str()) => OutputKind::Hdf5,
            _ => OutputKind::Log,
        }
    }
}

enum Sink {
    Log(Box<LogWriter>),
    #[cfg(feature = "hdf5")]
    Hdf5(Box<Hdf5Writer>),
    Threaded(Pipeline),
}

/// What the energy needs besides poses and velocities (constant over a run).
#[derive(Clone, Debug, Default)]
struct Masses {
    /// Mass per body, kg (0 for static and kinematic bodies, which add no energy).
    mass: Vec<f32>,
    /// Principal moments of inertia in the body frame, kg m^2 (0 where the inverse is 0).
    inertia: Vec<[f32; 3]>,
    gravity: [f32; 3],
}

impl Masses {
    fn of(world: &World) -> Masses {
        let b = world.bodies();
        let inv = |k: f32| if k > 0.0 { 1.0 / k } else { 0.0 };
        Masses {
            mass: b.inv_masses().iter().map(|&k| inv(k)).collect(),
            inertia: b
                .inv_inertia_local()
                .iter()
                .map(|k| [inv(k.x), inv(k.y), inv(k.z)])
                .collect(),
            gravity: world.settings().gravity.to_array(),
        }
    }

    /// The energy of the state in the frame layout (see [`total_energy`]):
    /// `sum m (|v|^2 / 2 - g . x) + w_b . I w_b / 2` over dynamic bodies, with `w_b = q^-1 w`
    /// the angular velocity in the body frame. Per-body terms in f32, eight bodies at a time
    /// in lanes (the engine's lane types, so it reads as the formula), summed in f64 body by
    /// body: the bits of the one-body-at-a-time loop (`energy_reference`, tested), at a
    /// third of its cost.
    fn energy(&self, poses: &[[f32; 7]], velocities: &[[f32; 6]]) -> f64 {
        let g = V3::splat(Vec3::from_array(self.gravity));
        let mut e = 0.0f64;
        for start in (0..poses.len()).step_by(WIDE_LANES) {
            let lanes = (poses.len() - start).min(WIDE_LANES);
            // Lanes past the end stay zero (their terms are never summed).
            let mut position = V3::<Wide>::zero();
            let mut rotation = Q::<Wide>::identity();
            let (mut linear, mut angular) = (V3::<Wide>::zero(), V3::<Wide>::zero());
            let mut inertia = V3::<Wide>::zero();
            for lane in 0..lanes {
                let i = start + lane;
                let (p, v) = (&poses[i], &velocities[i]);
                position.set_lane(lane, Vec3::new(p[0], p[1], p[2]));
                rotation.set_lane(lane, Quat::from_xyzw(p[3], p[4], p[5], p[6]));
                linear.set_lane(lane, Vec3::new(v[0], v[1], v[2]));
                angular.set_lane(lane, Vec3::new(v[3], v[4], v[5]));
                inertia.set_lane(lane, Vec3::from_array(self.inertia[i]));
            }
            // w_b = q^-1 w; I w_b . w_b; |v|^2; g . x.
            let b = rotation.conjugate().rotate(angular);
            let rot = inertia.x * b.x * b.x + inertia.y * b.y * b.y + inertia.z * b.z * b.z;
            let lin = linear.dot(linear);
            let height = g.dot(position);
            for lane in 0..lanes {
                let m = self.mass[start + lane];
                if m == 0.0 {
                    continue;
                }
                let (lin, rot, height) = (lin.lane(lane), rot.lane(lane), height.lane(lane));
                e += 0.5 * f64::from(m) * f64::from(lin) + 0.5 * f64::from(rot)
                    - f64::from(m) * f64::from(height);
            }
        }
        e
    }

    /// [`Masses::energy`] one body at a time, in scalar arithmetic: the reference.
    #[cfg(test)]
    fn energy_reference(&self, poses: &[[f32; 7]], velocities: &[[f32; 6]]) -> f64 {
        let [gx, gy, gz] = self.gravity;
        let mut e = 0.0f64;
        for (((p, v), &m), i) in poses
            .iter()
            .zip(velocities)
            .zip(&self.mass)
            .zip(&self.inertia)
        {
            if m == 0.0 {
                continue;
            }
            // w_b = w + 2 s (u x w) + 2 u x (u x w), with u = -q.xyz (the inverse rotation).
            let (ux, uy, uz, s) = (-p[3], -p[4], -p[5], p[6]);
            let (wx, wy, wz) = (v[3], v[4], v[5]);
            let (cx, cy, cz) = (uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx);
            let (dx, dy, dz) = (uy * cz - uz * cy, uz * cx - ux * cz, ux * cy - uy * cx);
            let bx = wx + 2.0 * (s * cx + dx);
            let by = wy + 2.0 * (s * cy + dy);
            let bz = wz + 2.0 * (s * cz + dz);
            let rot = i[0] * bx * bx + i[1] * by * by + i[2] * bz * bz;
            let lin = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            let height = gx * p[0] + gy * p[1] + gz * p[2];
            e += 0.5 * f64::from(m) * f64::from(lin) + 0.5 * f64::from(rot)
                - f64::from(m) * f64::from(height);
        }
        e
    }
}

/// One frame's arrays, copied from the world for the recording thread.
#[derive(Default)]
struct Job {
    substep: u64,
    time: f64,
    poses: Vec<[f32; 7]>,
    velocities: Vec<[f32; 6]>,
    diagnostics: Vec<[f32; 8]>,
    solver: Vec<f32>,
    keyframe: bool,
}

/// The recording thread and its two queues (filled jobs out, empty buffers back).
struct Pipeline {
    full: Option<std::sync::mpsc::SyncSender<Job>>,
    empty: std::sync::mpsc::Receiver<Job>,
    /// Written jobs taken back by [`Pipeline::drain`], reused before `empty`.
    spare: Vec<Job>,
    allocated: usize,
    bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    thread: Option<std::thread::JoinHandle<Result<LogSummary>>>,
    /// The error the thread stopped at, once [`Pipeline::join`] returned it.
    failure: Option<String>,
}

impl Pipeline {
    fn spawn(mut writer: LogWriter, masses: Masses) -> Pipeline {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Job>(PIPELINE_QUEUE);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel();
        let bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(writer.bytes()));
        let written = bytes.clone();
        let thread = std::thread::Builder::new()
            .name("lavender-recorder".into())
            .spawn(move || {
                use std::sync::mpsc::TryRecvError;
                let mut next = full_rx.recv().ok();
                while let Some(job) = next {
                    writer.append(&FrameInput {
                        substep: job.substep,
                        time: job.time,
                        poses: &job.poses,
                        velocities: &job.velocities,
                        diagnostics: &job.diagnostics,
                        solver_state: job.keyframe.then_some(&job.solver[..]),
                        total_energy: masses.energy(&job.poses, &job.velocities),
                        state_hash: state_hash(&job.poses, &job.velocities, &job.solver),
                    })?;
                    // Nothing more queued: out with what is staged (a follower sees it, and
                    // `drain` returns only after it), before the buffer goes back.
                    next = match full_rx.try_recv() {
                        Ok(job) => Some(job),
                        Err(TryRecvError::Empty) => {
                            writer.flush()?;
                            None
                        }
                        Err(TryRecvError::Disconnected) => None,
                    };
                    written.store(writer.bytes(), std::sync::atomic::Ordering::Relaxed);
                    // The recorder may be gone (finish); then the buffer is just freed.
                    let _ = empty_tx.send(job);
                    if next.is_none() {
                        next = full_rx.recv().ok();
                    }
                }
                writer.finish()
            })
            .expect("spawning the recording thread");
        Pipeline {
            full: Some(full_tx),
            empty: empty_rx,
            spare: Vec::new(),
            allocated: 0,
            bytes,
            thread: Some(thread),
            failure: None,
        }
    }

    /// Stops the thread after it wrote everything queued and returns what it returned.
    fn join(&mut self) -> Result<LogSummary> {
        self.full.take();
        let result = match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(ReplayError::Encode("the recording thread panicked".into())),
            // Joined before: its error was returned then (QA 2026-12-08: a full disk's error
            // was followed by "could not encode a frame: the recording thread already
            // stopped").
            None => Err(ReplayError::RecordingStopped(
                self.failure.clone().unwrap_or_else(|| "unknown".into()),
            )),
        };
        if let Err(e) = &result {
            self.failure.get_or_insert_with(|| e.to_string());
        }
        result
    }

    /// Waits until the thread has written every job handed to it.
    fn drain(&mut self) -> Result<()> {
        while self.spare.len() < self.allocated {
            match self.empty.recv() {
                Ok(job) => self.spare.push(job),
                Err(_) => {
                    return Err(self.join().err().unwrap_or_else(|| {
                        ReplayError::Encode("the recording thread stopped early".into())
                    }))
                }
            }
        }
        Ok(())
    }

    fn record(&mut self, world: &World, info: SubstepInfo, keyframe: bool) -> Result<()> {
        let job = match self.spare.pop().map_or_else(|| self.empty.try_recv(), Ok) {
            Ok(job) => Some(job),
            Err(_) if self.allocated < PIPELINE_QUEUE + 1 => {
                self.allocated += 1;
                Some(Job::default())
            }
            Err(_) => self.empty.recv().ok(),
        };
        let sent = match (job, self.full.as_ref()) {
            (Some(mut job), Some(tx)) => {
                job.substep = info.substep;
                job.time = info.time;
                job.keyframe = keyframe;
                gather_bodies(world, &mut job.poses, &mut job.velocities);
                job.diagnostics.clear();
                job.diagnostics.extend_from_slice(world.constraint_data());
                job.solver.clear();
                job.solver.extend_from_slice(world.solver_state());
                tx.send(job).is_ok()
            }
            _ => false,
        };
        if sent {
            Ok(())
        } else {
            // The thread stopped: it hit an error; report it.
            Err(self.join().err().unwrap_or_else(|| {
                ReplayError::Encode("the recording thread stopped early".into())
            }))
        }
    }
}

impl Drop for Pipeline {
    /// Without `finish`, the thread still writes what was queued and the footer.
    fn drop(&mut self) {
        if self.thread.is_some() {
            if let Err(e) = self.join() {
                tracing::warn!(error = %e, "recorder dropped with an error");
            }
        }
    }
}

/// The smallest frame (poses, velocities and diagnostics, bytes) recorded on a thread of its
/// own ([`RecordOptions::threaded`]); smaller ones are recorded on the stepping thread, where
/// waking the recording thread for each cost more than recording it (QA, 2026-12-05: the
/// pendulum's 300-byte frames made a recorded run 8x the unrecorded one). Measured on a
/// 2-core VM (`lavender run CHAIN --duration 120 --record x.lvlog`, chains of 25, 50 and 100
/// of the shipped links): frames of 2.1 KB took 1.45 s threaded against 0.80 s on the
/// stepping thread, 4.2 KB 1.40 s against 1.40 s, 8.4 KB (the shipped chain, 60 s) 1.15 s
/// against 1.32 s.
pub const PIPELINE_MIN_FRAME_BYTES: usize = 8 * 1024;

/// The output a [`Recorder`] writes once it has a frame.
struct Plan {
    path: std::path::PathBuf,
    header: Header,
    options: RecordOptions,
    /// The header's substep length, s (what every step must run).
    substep_length: f64,
}

impl Plan {
    fn open(&self, masses: &Masses) -> Result<Sink> {
        let (path, header, options) = (&self.path, &self.header, &self.options);
        Ok(match OutputKind::of(path) {
            OutputKind::Log
                if options.threaded && header.frame_value_bytes() >= PIPELINE_MIN_FRAME_BYTES =>
            {
                Sink::Threaded(Pipeline::spawn(
                    LogWriter::create_with(path, header, options.writer)?,
                    masses.clone(),
                ))
            }
            OutputKind::Log => Sink::Log(Box::new(LogWriter::create_with(
                path,
                header,
                options.writer,
            )?)),
            #[cfg(feature = "hdf5")]
            OutputKind::Hdf5 => Sink::Hdf5(Box::new(Hdf5Writer::create(path, header)?)),
            #[cfg(not(feature = "hdf5"))]
            OutputKind::Hdf5 => return Err(no_hdf5(path)),
        })
    }
}

/// Appends one frame per substep of a world to a log or an HDF5 file.
///
/// The file is created with the first frame: a recorder that records nothing (a run of no
/// frames, a first substep that fails) leaves any file at its path as it was.
pub struct Recorder {
    plan: Plan,
    /// The open output, from the first frame on.
    sink: Option<Sink>,
    masses: Masses,
    poses: Vec<[f32; 7]>,
    velocities: Vec<[f32; 6]>,
    keyframe_every: u64,
    recorded: u64,
    /// The next frame is a keyframe whatever its number ([`Recorder::keyframe_next`]).
    keyframe_next: bool,
}

/// The scene with every world setting written out: the world's settings and the frame `dt`.
pub fn effective_scene(scene: &Scene, world: &World, dt: f32) -> Scene {
    let s = world.settings();
    let mut out = scene.clone();
    let w = &mut out.world;
    w.gravity = Some(s.gravity.to_array());
    w.dt = Some(dt);
    w.max_substep = Some(s.max_substep);
    w.velocity_iterations = Some(s.velocity_iterations);
    // None (one bias pass per velocity pass) is left out, so that runs without the setting
    // record the same header as before it existed (and the golden logs stay valid).
    w.bias_iterations = s.bias_iterations;
    w.position_iterations = Some(s.position_iterations);
    // Written when on (or named by the scene), for the same reason.
    if s.chain_solve || w.chain_solve.is_some() {
        w.chain_solve = Some(s.chain_solve);
    }
    w.error_reduction = Some(s.error_reduction);
    w.projection_factor = Some(s.projection_factor);
    w.warm_starting = Some(s.warm_starting);
    // Written when off (or named by the scene): runs with the default keep their header.
    if !s.gyroscopic || w.gyroscopic.is_some() {
        w.gyroscopic = Some(s.gyroscopic);
    }
    // Always written: a header without it is a log recorded before the curvature offsets
    // existed, which resumes without them (`Header::curvature`).
    w.curvature = Some(s.curvature);
    // Written when on (or named by the scene): runs without it keep their header.
    if s.speculative_limits || w.speculative_limits.is_some() {
        w.speculative_limits = Some(s.speculative_limits);
    }
    // Written when on (or named by the scene), so that a run without sleeping records the
    // same header as before sleeping existed (and the golden logs stay valid).
    if s.sleeping || w.sleeping.is_some() {
        w.sleeping = Some(s.sleeping);
        w.sleep_linear_speed = Some(s.sleep_linear_speed);
        w.sleep_angular_speed = Some(s.sleep_angular_speed);
        w.time_to_sleep = Some(s.time_to_sleep);
    }
    out
}

/// The log header for a run of `scene` built into `world`, stepped with frames of `dt`.
pub fn header_for(scene: &Scene, world: &World, dt: f32) -> Header {
    let s = world.settings();
    Header {
        body_count: world.body_count(),
        body_names: world.bodies().names().to_vec(),
        joint_count: world.joint_count(),
        joint_names: world.joints().names().to_vec(),
        world: WorldSettingsRecord {
            dt: f64::from(dt),
            max_substep: f64::from(s.max_substep),
            velocity_iterations: s.velocity_iterations,
            position_iterations: s.position_iterations,
            gravity: s.gravity.to_array(),
        },
        scene_hash: scene.hash(),
        engine_version: lavender_engine::VERSION.to_string(),
        target_features: lavender_engine::target_features(),
        scene: effective_scene(scene, world, dt).to_toml_string(),
        spike_index: Some(crate::scrub::SpikeParams::default()),
    }
}

/// Copies the world's poses and velocities into the frame layout (reusing the buffers):
/// [`World::gather_state`].
pub fn gather_bodies(world: &World, poses: &mut Vec<[f32; 7]>, velocities: &mut Vec<[f32; 6]>) {
    world.gather_state(poses, velocities);
}

/// The state hash stored with every frame: the engine's [`lavender_engine::state_hash`]
/// (xxh3-64 over the bits of the poses, the velocities in the frame layout and the warm-start
/// impulses), so `World::state_hash` of a world equals the hash of its recorded frame.
pub use lavender_engine::state_hash;

/// Total mechanical energy, J, as `World::total_energy` defines it (kinetic plus
/// gravitational potential `-m g . x` of the dynamic bodies), computed without building each
/// body's world inertia matrix: `1/2 w.I w = 1/2 sum_k I_k (q^-1 w)_k^2` in the body frame.
/// 0.26 ms per substep on the 100 x 100 chain through the engine, a fraction of that here; a
/// test holds it to the engine's value within 1e-7 relative (measured: 6.5e-9).
pub fn total_energy(world: &World) -> f64 {
    let (mut poses, mut velocities) = (Vec::new(), Vec::new());
    gather_bodies(world, &mut poses, &mut velocities);
    Masses::of(world).energy(&poses, &velocities)
}

/// [`state_hash`] of a world's current state.
pub fn world_state_hash(world: &World) -> u64 {
    world.state_hash()
}

/// Recording to HDF5 in a build without the `hdf5` feature.
#[cfg(not(feature = "hdf5"))]
fn no_hdf5(path: &Path) -> ReplayError {
    ReplayError::InvalidArgument(format!(
        "{} is an HDF5 name, and this build of lavender-replay has no HDF5 (its `hdf5` \
         feature, on by default, is off): record to a .lvlog, or build with the feature \
         (it needs the HDF5 C library: `bash .ci/setup`)",
        path.display()
    ))
}

/// A frame time step as the engine accepts one ([`EngineError::InvalidTimeStep`] otherwise),
/// judged before the header or the substep length is: a negative `dt` read as a header
/// problem or a substep mismatch (QA 2026-12-08).
fn check_time_step(dt: f32) -> Result<()> {
    if dt.is_finite() && dt >= f32::MIN_POSITIVE {
        Ok(())
    } else {
        Err(lavender_engine::EngineError::InvalidTimeStep(dt).into())
    }
}

impl Recorder {
    /// Creates the output (a log, or HDF5 for `.h5`/`.hdf5`; any other name is a log) with
    /// default options. `scene` is the scene `world` was built from, stored in the header
    /// for `resume` and `diff`; for a world built in code, `Scene::from_world(&world, dt)`
    /// describes it. A scene that builds other numbers of bodies or joints is refused.
    pub fn create(path: impl AsRef<Path>, scene: &Scene, world: &World, dt: f32) -> Result<Self> {
        Self::create_with(path, scene, world, dt, RecordOptions::default())
    }

    /// [`create`](Recorder::create) for a world built in code: the header's scene is
    /// `Scene::from_world(world, dt)`, which rebuilds the world as it is now, so a resume
    /// from the log rebuilds it too. Fails as `Scene::from_world` does (a `dt` that is not a
    /// positive time step).
    pub fn for_world(path: impl AsRef<Path>, world: &World, dt: f32) -> Result<Self> {
        let scene = Scene::from_world(world, dt)?;
        Self::create(path, &scene, world, dt)
    }

    /// Like [`create`](Recorder::create) with explicit options.
    pub fn create_with(
        path: impl AsRef<Path>,
        scene: &Scene,
        world: &World,
        dt: f32,
        options: RecordOptions,
    ) -> Result<Self> {
        // The header's scene is what `resume` rebuilds: one that builds another world made
        // a log that only failed there (QA 2026-12-07).
        check_time_step(dt)?;
        // Counts alone let a scene of another world with as many bodies and joints through
        // (QA 2026-12-08); names and kinds are checked too.
        if let Err(what) = scene.check_describes(world) {
            return Err(ReplayError::InvalidArgument(format!(
                "the scene is not the one the recorded world was built from ({what}): record \
                 the world built from this scene, or use `Recorder::for_world` for a world \
                 built in code"
            )));
        }
        Self::create_with_header(path, &header_for(scene, world, dt), world, options)
    }

    /// Records `world` under a given header (see [`header_for`]); a resumed run uses the
    /// original run's header so that the two logs compare as the same scene.
    pub fn create_with_header(
        path: impl AsRef<Path>,
        header: &Header,
        world: &World,
        options: RecordOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        if header.body_count != world.body_count() || header.joint_count != world.joint_count() {
            return Err(ReplayError::InvalidHeader(format!(
                "the header declares {} bodies and {} joints but the world has {} and {}",
                header.body_count,
                header.joint_count,
                world.body_count(),
                world.joint_count()
            )));
        }
        // Everything that can be judged before the first frame is judged now.
        header.validate().map_err(ReplayError::InvalidHeader)?;
        #[cfg(not(feature = "hdf5"))]
        if OutputKind::of(path) == OutputKind::Hdf5 {
            return Err(no_hdf5(path));
        }
        crate::files::check_output(path)?;
        Ok(Recorder {
            plan: Plan {
                path: path.to_path_buf(),
                header: header.clone(),
                options,
                substep_length: header.substep_length(),
            },
            sink: None,
            masses: Masses::of(world),
            poses: Vec::with_capacity(world.body_count()),
            velocities: Vec::with_capacity(world.body_count()),
            keyframe_every: options.keyframe_every,
            keyframe_next: false,
            recorded: 0,
        })
    }

    /// Records the world as it is after the substep `info` describes (call it from the
    /// observer of [`World::step_observed`]).
    pub fn record(&mut self, world: &World, info: SubstepInfo) -> Result<()> {
        // A body or joint added since `create` would not fit the header's arrays.
        let header = &self.plan.header;
        if (world.body_count(), world.joint_count()) != (header.body_count, header.joint_count) {
            return Err(ReplayError::InvalidHeader(format!(
                "the world has {} bodies and {} joints, the recording {} and {}: a world that \
                 changes shape needs a new recording (finish this one and create another)",
                world.body_count(),
                world.joint_count(),
                header.body_count,
                header.joint_count
            )));
        }
        // `checked_rem` is None when keyframes are off (0).
        let keyframe = self.recorded.checked_rem(self.keyframe_every) == Some(0)
            || std::mem::take(&mut self.keyframe_next);
        let sink = match &mut self.sink {
            Some(sink) => sink,
            None => self.sink.insert(self.plan.open(&self.masses)?),
        };
        if let Sink::Threaded(p) = sink {
            p.record(world, info, keyframe)?;
            self.recorded += 1;
            return Ok(());
        }
        gather_bodies(world, &mut self.poses, &mut self.velocities);
        let frame = FrameInput {
            substep: info.substep,
            time: info.time,
            poses: &self.poses,
            velocities: &self.velocities,
            diagnostics: world.constraint_data(),
            solver_state: keyframe.then(|| world.solver_state()),
            total_energy: self.masses.energy(&self.poses, &self.velocities),
            state_hash: state_hash(&self.poses, &self.velocities, world.solver_state()),
        };
        match sink {
            Sink::Log(w) => w.append(&frame)?,
            #[cfg(feature = "hdf5")]
            Sink::Hdf5(w) => w.append(&frame)?,
            Sink::Threaded(_) => unreachable!("handled above"),
        }
        self.recorded += 1;
        Ok(())
    }

    /// Makes the next recorded frame a keyframe. For a world changed from outside its steps
    /// while it is recorded (a pose or velocity set by hand): a log records states, not such
    /// changes, so a run resumed from before one departs from the log there (`lavender resume`
    /// says where); with a keyframe right after the change, a resume from that substep on
    /// starts from the changed state and reproduces the rest bit for bit.
    pub fn keyframe_next(&mut self) {
        self.keyframe_next = true;
    }

    /// Steps `world` by `dt` and records every substep; the first recording error stops
    /// recording and is returned after the step (the world has advanced). A step that goes
    /// non-finite records the substep that did (`SubstepInfo::finite` false, its non-finite
    /// poses and diagnostics) before its error is returned, and the world rolls back to the
    /// step's start: end the recording then (the next step would record substeps again).
    /// Refused before stepping: a `dt` whose substeps are not the recording's length (a resume replays the
    /// log with them; single substeps of that length are fine) and, before the first frame,
    /// a path another writer has taken since `create`. A world that gained bodies or joints
    /// since `create` is an error at its next frame.
    pub fn step(&mut self, world: &mut World, dt: f32) -> Result<StepReport> {
        self.step_stoppable(world, dt, &mut || false)
    }

    /// [`Recorder::step`] that `stop` can end between two substeps
    /// ([`World::step_stoppable`]): the world keeps the substeps it ran, and the recording
    /// holds them, so that it stays the world's history and can go on.
    pub fn step_stoppable(
        &mut self,
        world: &mut World,
        dt: f32,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<StepReport> {
        check_time_step(dt)?;
        // Frames of any length may be recorded, but their substeps must be the header's:
        // a resumed run replays the log with substeps of that length (QA: frames of 0.01 s,
        // 1/300 s substeps, on a recording of 1/60 s frames did not resume).
        let h = f64::from(dt / world.settings().substeps_for(dt) as f32);
        let recorded = self.plan.substep_length;
        if (h - recorded).abs() > 1e-6 * recorded {
            return Err(ReplayError::InvalidArgument(format!(
                "a step of {dt} s runs substeps of {h:.6e} s, the recording's are {recorded:.6e} \
                 s: step with frames that split into the recording's substeps (its dt {} s, or \
                 one substep at a time), or start a new recording",
                self.plan.header.world.dt
            )));
        }
        // Before the first frame, whether the file can still be created is judged before
        // the world moves (another recording may have taken the path since `create`).
        if self.sink.is_none() {
            crate::files::check_output(&self.plan.path)?;
        }
        let mut first_error = None;
        // A substep that goes non-finite is recorded too (the step then fails and is rolled
        // back): the log ends on the first non-finite values, which `scrub` reports.
        let mut observer = |w: &World, info| {
            if first_error.is_none() {
                first_error = self.record(w, info).err();
            }
        };
        let report = world.step_stoppable(dt, Some(&mut observer), true, stop)?;
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// Waits until every substep recorded so far is written to the file (the recording
    /// thread works behind the stepping thread by up to [`PIPELINE_QUEUE`] substeps). A
    /// follower then sees them all; `finish` does this too.
    pub fn drain(&mut self) -> Result<()> {
        match &mut self.sink {
            Some(Sink::Threaded(p)) => p.drain(),
            Some(Sink::Log(w)) => w.flush(),
            #[cfg(feature = "hdf5")]
            Some(Sink::Hdf5(_)) => Ok(()),
            None => Ok(()),
        }
    }

    /// Frames recorded so far.
    pub fn frames(&self) -> u64 {
        self.recorded
    }

    /// Bytes written so far (the log's length, behind by the frames still queued for the
    /// recording thread; for HDF5, 0 until finished; 0 before the first frame).
    pub fn bytes(&self) -> u64 {
        match &self.sink {
            Some(Sink::Log(w)) => w.bytes(),
            #[cfg(feature = "hdf5")]
            Some(Sink::Hdf5(_)) => 0,
            None => 0,
            Some(Sink::Threaded(p)) => p.bytes.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The path the recording goes to.
    pub fn path(&self) -> &Path {
        &self.plan.path
    }

    /// Closes the output (footer index for a log) and reports where it went and its size.
    /// Without a frame recorded nothing was created: 0 frames and 0 bytes, and a file
    /// already at the path is left as it was.
    pub fn finish(self) -> Result<LogSummary> {
        match self.sink {
            Some(Sink::Log(w)) => (*w).finish(),
            #[cfg(feature = "hdf5")]
            Some(Sink::Hdf5(w)) => w.finish(),
            Some(Sink::Threaded(mut p)) => p.join(),
            None => Ok(LogSummary {
                frames: 0,
                bytes: 0,
                path: self.plan.path,
            }),
        }
    }
}

/// Steps `world` `steps` frames of `dt`, recording every substep, and closes the recorder.
pub fn run_recorded(
    world: &mut World,
    dt: f32,
    steps: u64,
    mut recorder: Recorder,
) -> Result<LogSummary> {
    for _ in 0..steps {
        recorder.step(world, dt)?;
    }
    recorder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LogReader;

    #[test]
    fn records_every_substep_of_a_pendulum_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.lvlog");
        let scene = Scene::builtin("pendulum").unwrap();
        let mut world = scene.build().unwrap();
        let dt = scene.frame_dt();
        let mut rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        let mut expected = Vec::new();
        for _ in 0..10 {
            let mut exp = Vec::new();
            world
                .step_observed(dt, |w, info| {
                    rec.record(w, info).unwrap();
                    exp.push((
                        info,
                        world_state_hash(w),
                        total_energy(w),
                        w.solver_state().to_vec(),
                    ));
                })
                .unwrap();
            expected.extend(exp);
        }
        let n = world.settings().substeps_for(dt) as usize;
        assert_eq!(expected.len(), 10 * n);
        let summary = rec.finish().unwrap();
        assert_eq!(summary.frames, 10 * n);
        // SAFETY: private temporary file, not modified while read.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 10 * n);
        let h = r.header();
        assert_eq!(h.scene_hash, scene.hash());
        assert_eq!(h.engine_version, lavender_engine::VERSION);
        assert_eq!(h.body_names, world.bodies().names());
        assert_eq!(h.joint_names, world.joints().names());
        assert_eq!(h.world.dt, f64::from(dt));
        let rebuilt = Scene::from_toml_str(&h.scene, "header").unwrap();
        assert_eq!(rebuilt.settings(), *world.settings());
        assert_eq!(rebuilt.frame_dt(), dt);
        for (i, (info, hash, energy, solver)) in expected.iter().enumerate() {
            let f = r.frame(i).unwrap();
            assert_eq!(f.substep(), info.substep);
            assert_eq!(f.time(), info.time);
            assert_eq!(f.state_hash(), *hash);
            assert_eq!(f.total_energy(), *energy);
            // Solver state at keyframes only (every 16th frame by default).
            let keyframe = (i as u64).is_multiple_of(DEFAULT_KEYFRAME_EVERY);
            assert_eq!(
                f.solver_state(),
                keyframe.then_some(&solver[..]),
                "frame {i}"
            );
        }
        // The last frame is the world as it is now.
        let last = r.frame(r.len() - 1).unwrap();
        let (p, q) = world.body_pose(lavender_engine::BodyId(1)).unwrap();
        assert_eq!(last.pose(1).unwrap(), [p.x, p.y, p.z, q.x, q.y, q.z, q.w]);
        assert_eq!(last.diagnostics(), world.constraint_data());
    }

    #[test]
    fn a_scene_that_builds_another_world_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wrong.lvlog");
        let world = Scene::builtin("chain").unwrap().build().unwrap();
        let pendulum = Scene::builtin("pendulum").unwrap();
        let e = Recorder::create(&path, &pendulum, &world, 1.0 / 60.0)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("the scene builds 2 bodies and 1 joints")
                && e.contains("Recorder::for_world"),
            "{e}"
        );
        assert!(!path.exists(), "nothing is created");
        // The world described by itself is recorded.
        let own = Scene::from_world(&world, 1.0 / 60.0).unwrap();
        Recorder::create(&path, &own, &world, 1.0 / 60.0)
            .unwrap()
            .finish()
            .unwrap();
    }

    /// QA (2026-12-08): a scene of another world with as many bodies and joints was
    /// recorded, so the log's names and its scene disagreed and a resume rebuilt the wrong
    /// world.
    #[test]
    fn a_scene_of_another_world_with_the_same_counts_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wrong.lvlog");
        let dt = 1.0 / 60.0;
        let hinge = Scene::builtin("pendulum").unwrap().build().unwrap();
        let slider = Scene::builtin("prismatic-slider").unwrap();
        assert_eq!(
            slider.counts(),
            (hinge.body_count() as u64, hinge.joint_count() as u64)
        );
        let e = Recorder::create(&path, &slider, &hinge, dt)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("is not the one the recorded world was built from"),
            "{e}"
        );
        assert!(
            e.contains("in the scene and the") && e.contains("in the world"),
            "{e}"
        );
        assert!(!path.exists(), "nothing is created");
        // A generated chain against a world whose bodies are named otherwise.
        let chain = Scene::builtin("chain").unwrap();
        let mut renamed = chain.clone();
        renamed.chains[0].name = "rope".into();
        let world = renamed.build().unwrap();
        let e = Recorder::create(&path, &chain, &world, dt)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("is `rope.anchor` in the world"), "{e}");
        assert!(e.contains("generator `chain`"), "{e}");
        // The scene the world was built from, run since, is still its scene.
        let mut world = chain.build().unwrap();
        world.step(dt).unwrap();
        Recorder::create(&path, &chain, &world, dt)
            .unwrap()
            .finish()
            .unwrap();
    }

    /// `Recorder::for_world` records a world built in code with the scene written from it,
    /// which rebuilds it: the log's names, and a resume's world, are the world's.
    #[test]
    fn a_world_built_in_code_is_recorded_with_its_own_scene() {
        use lavender_engine::{BodyDesc, JointDesc, Settings, World};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("code.lvlog");
        let dt = 1.0 / 60.0;
        let mut world = World::new(Settings::default()).unwrap();
        let ground = world.add_body(BodyDesc::fixed("ground")).unwrap();
        let bob = world
            .add_body(BodyDesc::dynamic("bob").position(Vec3::new(1.0, 0.0, 0.0)))
            .unwrap();
        let swing = JointDesc::spherical("swing", ground, bob)
            .anchors(Vec3::ZERO, Vec3::new(-1.0, 0.0, 0.0));
        world.add_joint(swing).unwrap();
        let mut rec = Recorder::for_world(&path, &world, dt).unwrap();
        for _ in 0..3 {
            rec.step(&mut world, dt).unwrap();
        }
        rec.finish().unwrap();
        let log = LogReader::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(log.header().body_names, ["ground", "bob"]);
        assert_eq!(log.header().joint_names, ["swing"]);
        let rebuilt = log.header().recorded_scene().unwrap().build().unwrap();
        assert_eq!(rebuilt.joints().names(), ["swing"]);
        assert!(matches!(
            Recorder::for_world(&path, &world, -dt),
            Err(ReplayError::Engine(_))
        ));
    }

    /// Without the `hdf5` feature, a `.h5` recording is refused at `create`, before the world
    /// moves or a file is touched, with what to do.
    #[cfg(not(feature = "hdf5"))]
    #[test]
    fn a_build_without_hdf5_refuses_an_hdf5_recording() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("pendulum").unwrap();
        let world = scene.build().unwrap();
        let path = dir.path().join("run.h5");
        let e = Recorder::create(&path, &scene, &world, 1.0 / 60.0)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("run.h5 is an HDF5 name"), "{e}");
        assert!(
            e.contains("record to a .lvlog, or build with the feature"),
            "{e}"
        );
        assert!(!path.exists());
    }

    /// QA (2026-12-08): a negative `dt` to `create` read "invalid header: dt =
    /// -0.009999999776482582 s", and to `step` as substeps of another length.
    #[test]
    fn a_time_step_that_is_not_positive_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dt.lvlog");
        let scene = Scene::builtin("pendulum").unwrap();
        let mut world = scene.build().unwrap();
        let says = |e: ReplayError| e.to_string();
        for dt in [-0.01, 0.0, f32::NAN] {
            let e = says(Recorder::create(&path, &scene, &world, dt).err().unwrap());
            assert!(e.starts_with("invalid time step dt = "), "{e}");
            assert!(!e.contains("header"), "{e}");
        }
        let e = says(
            Recorder::create(&path, &scene, &world, -0.01)
                .err()
                .unwrap(),
        );
        assert!(e.contains("dt = -0.01:"), "{e}");
        let mut rec = Recorder::create(&path, &scene, &world, 1.0 / 60.0).unwrap();
        let e = says(rec.step(&mut world, -1.0 / 60.0).err().unwrap());
        assert!(e.starts_with("invalid time step dt = -0.016666668:"), "{e}");
        assert_eq!(world.substeps_done(), 0, "the world did not move");
        rec.step(&mut world, 1.0 / 60.0).unwrap();
        assert_eq!(rec.finish().unwrap().frames, 4);
    }

    #[test]
    fn energy_in_lanes_has_the_bits_of_the_body_by_body_loop() {
        // Bodies in every lane position and partial last chunks, static ones (mass 0, even
        // with non-finite state, which is never summed), extreme and signed-zero values.
        let mut rng = crate::testutil::XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_signed();
        for n in [0usize, 1, 7, 8, 9, 23, 100] {
            let mut masses = Masses {
                mass: Vec::new(),
                inertia: Vec::new(),
                gravity: [0.3, -9.81, 0.1],
            };
            let (mut poses, mut velocities) = (Vec::new(), Vec::new());
            for i in 0..n {
                let q = Quat::from_xyzw(next(), next(), next(), next()).normalize();
                let scale = if i % 5 == 0 { 1e4 } else { 1.0 };
                poses.push([scale * next(), next(), -0.0, q.x, q.y, q.z, q.w]);
                velocities.push([next(), scale * next(), next(), next(), 0.0, next() * 30.0]);
                let stat = i % 7 == 3;
                masses
                    .mass
                    .push(if stat { 0.0 } else { 1.0 + next().abs() });
                masses.inertia.push([next().abs(), next().abs(), 0.1]);
                if stat {
                    poses[i][0] = f32::NAN;
                }
            }
            let (lanes, reference) = (
                masses.energy(&poses, &velocities),
                masses.energy_reference(&poses, &velocities),
            );
            assert_eq!(
                lanes.to_bits(),
                reference.to_bits(),
                "{n} bodies: {lanes} vs {reference}"
            );
        }
    }

    #[test]
    fn total_energy_matches_the_engine() {
        for (name, _) in lavender_engine::builtin_scenes() {
            let scene = Scene::builtin(name).unwrap();
            let mut world = scene.build().unwrap();
            for frame in 0..30 {
                let (ours, engine) = (total_energy(&world), world.total_energy());
                // f32 per-body terms by different formulas, summed in f64: measured at most
                // 6.5e-9 relative over the shipped scenes; 1e-7 relative (+1e-9 J for scenes
                // whose energy is near zero) is the stated tolerance.
                let tol = 1e-7 * engine.abs() + 1e-9;
                assert!(
                    (ours - engine).abs() <= tol,
                    "{name} frame {frame}: {ours} vs engine {engine}"
                );
                world.step(scene.frame_dt()).unwrap();
            }
        }
    }

    #[test]
    fn keyframes_are_spaced_as_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.lvlog");
        let scene = Scene::builtin("pendulum").unwrap();
        let mut world = scene.build().unwrap();
        let options = RecordOptions {
            keyframe_every: 3,
            ..RecordOptions::default()
        };
        let rec = Recorder::create_with(&path, &scene, &world, 1.0 / 60.0, options).unwrap();
        run_recorded(&mut world, 1.0 / 60.0, 5, rec).unwrap();
        // SAFETY: private temporary file.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        let keys: Vec<bool> = r.index().iter().map(|m| m.has_solver_state).collect();
        assert_eq!(keys.len(), 20);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(*k, i % 3 == 0, "frame {i}");
        }
    }

    #[test]
    fn drain_makes_every_recorded_substep_visible_to_a_follower() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("live.lvlog");
        let scene = Scene::builtin("chain").unwrap();
        let mut world = scene.build().unwrap();
        let dt = scene.frame_dt();
        let mut rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        for _ in 0..5 {
            rec.step(&mut world, dt).unwrap();
        }
        rec.drain().unwrap();
        // SAFETY: the writer only appends; nothing truncates the file while it is read.
        let live = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(live.len(), 20, "all 5 x 4 substeps written before finish");
        assert!(!live.is_finished());
        assert_eq!(rec.finish().unwrap().frames, 20);
    }

    #[test]
    fn the_recording_thread_writes_the_same_bytes_as_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("fixed-stack").unwrap();
        let mut files = Vec::new();
        for threaded in [false, true] {
            let path = dir.path().join(format!("t{threaded}.lvlog"));
            let mut world = scene.build().unwrap();
            let options = RecordOptions {
                threaded,
                keyframe_every: 3,
                ..RecordOptions::default()
            };
            let rec = Recorder::create_with(&path, &scene, &world, 1.0 / 60.0, options).unwrap();
            let summary = run_recorded(&mut world, 1.0 / 60.0, 40, rec).unwrap();
            assert_eq!(summary.frames, 160);
            files.push(std::fs::read(&path).unwrap());
        }
        assert_eq!(files[0].len(), files[1].len());
        assert!(files[0] == files[1], "threaded and direct logs differ");
        // A recorder dropped without `finish` still leaves every queued frame and the footer.
        let path = dir.path().join("dropped.lvlog");
        let mut world = scene.build().unwrap();
        let mut rec = Recorder::create(&path, &scene, &world, 1.0 / 60.0).unwrap();
        for _ in 0..5 {
            rec.step(&mut world, 1.0 / 60.0).unwrap();
        }
        drop(rec);
        // SAFETY: private temporary file.
        let r = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(r.len(), 20);
    }

    /// QA (2026-12-05): a recorder took a world that grew after its creation (a panic in
    /// the energy) and steps whose substeps resume could not replay.
    #[test]
    fn a_recorder_refuses_what_its_log_could_not_hold_or_replay() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("pendulum").unwrap();
        let dt = 1.0 / 60.0;
        for threaded in [false, true] {
            let options = RecordOptions {
                threaded,
                ..RecordOptions::default()
            };
            let path = dir.path().join(format!("grow-{threaded}.lvlog"));
            let mut world = scene.build().unwrap();
            let mut rec = Recorder::create_with(&path, &scene, &world, dt, options).unwrap();
            rec.step(&mut world, dt).unwrap();
            // Single substeps are the recording's substeps: fine.
            rec.step(&mut world, 1.0 / 240.0).unwrap();
            let err = rec.step(&mut world, 0.01).unwrap_err().to_string();
            assert!(err.contains("substeps of"), "{err}");
            world
                .add_body(lavender_engine::BodyDesc::dynamic("extra"))
                .unwrap();
            let err = rec.step(&mut world, dt).unwrap_err().to_string();
            assert!(err.contains("needs a new recording"), "{err}");
        }
    }

    /// QA (2026-12-05): a recording that never got a frame replaced the file at its path by
    /// an empty log; now the file is created with the first frame.
    #[test]
    fn a_recording_of_nothing_leaves_the_file_there_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("pendulum").unwrap();
        let world = scene.build().unwrap();
        let names: &[&str] = if cfg!(feature = "hdf5") {
            &["kept.lvlog", "kept.h5"]
        } else {
            &["kept.lvlog"]
        };
        for name in names {
            let path = dir.path().join(name);
            std::fs::write(&path, b"an earlier run").unwrap();
            for threaded in [false, true] {
                let options = RecordOptions {
                    threaded,
                    ..RecordOptions::default()
                };
                let rec =
                    Recorder::create_with(&path, &scene, &world, 1.0 / 60.0, options).unwrap();
                assert_eq!((rec.frames(), rec.bytes()), (0, 0));
                let summary = rec.finish().unwrap();
                assert_eq!((summary.frames, summary.bytes), (0, 0));
                assert_eq!(summary.path, path);
                assert_eq!(std::fs::read(&path).unwrap(), b"an earlier run", "{name}");
            }
        }
        // Nor is a missing file created.
        let path = dir.path().join("none.lvlog");
        drop(Recorder::create(&path, &scene, &world, 1.0 / 60.0).unwrap());
        assert!(!path.exists());
    }

    /// QA (2026-12-05): a second recording to the path of one still running unlinked its file,
    /// and the first reported frames that were gone. Now it is refused, for logs and HDF5.
    #[cfg(feature = "hdf5")]
    #[test]
    fn a_path_being_recorded_is_refused_to_a_second_recording_and_to_exports() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("pendulum").unwrap();
        let dt = 1.0 / 60.0;
        for name in ["busy.lvlog", "busy.h5"] {
            let path = dir.path().join(name);
            let mut world = scene.build().unwrap();
            let mut first = Recorder::create(&path, &scene, &world, dt).unwrap();
            first.step(&mut world, dt).unwrap();
            let err = match Recorder::create(&path, &scene, &world, dt) {
                Ok(_) => panic!("{name}: a second recorder was accepted"),
                Err(e) => e.to_string(),
            };
            assert!(err.contains("still writing it"), "{name}: {err}");
            // A second recorder created before the first's file existed fails at its first
            // frame instead, and the first keeps its file.
            let other = dir.path().join(format!("late-{name}"));
            let mut world2 = scene.build().unwrap();
            let mut early = Recorder::create(&other, &scene, &world2, dt).unwrap();
            let mut late = Recorder::create(&other, &scene, &world2, dt).unwrap();
            early.step(&mut world2, dt).unwrap();
            let before = world2.substeps_done();
            let err = late.step(&mut world2, dt).unwrap_err().to_string();
            assert!(err.contains("still writing it"), "{name}: {err}");
            assert_eq!(
                world2.substeps_done(),
                before,
                "refused before the world moved"
            );
            assert_eq!(early.finish().unwrap().frames, 4);
            // Once finished, the path is free again.
            first.step(&mut world, dt).unwrap();
            assert_eq!(first.finish().unwrap().frames, 8);
            let again = Recorder::create(&path, &scene, &world, dt).unwrap();
            drop(again);
        }
        // An export to a log's path being recorded is refused too.
        let log = dir.path().join("done.lvlog");
        let mut world = scene.build().unwrap();
        let rec = Recorder::create(&log, &scene, &world, dt).unwrap();
        run_recorded(&mut world, dt, 2, rec).unwrap();
        // SAFETY: private temporary file, not modified while read.
        let reader = unsafe { LogReader::open(&log) }.unwrap();
        let target = dir.path().join("target.h5");
        let mut rec = Recorder::create(&target, &scene, &world, dt).unwrap();
        rec.step(&mut world, dt).unwrap();
        let err = crate::h5::export(&reader, &target, Default::default(), |_| {}).unwrap_err();
        assert!(err.to_string().contains("still writing it"), "{err}");
        rec.finish().unwrap();
    }

    /// An HDF5 recording is written to a temporary file and renamed when finished: one that
    /// fails or is dropped unfinished leaves the earlier file and no temporary file.
    #[cfg(feature = "hdf5")]
    #[test]
    fn an_unfinished_hdf5_recording_leaves_the_earlier_file() {
        let dir = tempfile::tempdir().unwrap();
        let scene = Scene::builtin("pendulum").unwrap();
        let dt = 1.0 / 60.0;
        let path = dir.path().join("run.h5");
        std::fs::write(&path, b"an earlier run").unwrap();
        let mut world = scene.build().unwrap();
        let mut rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        rec.step(&mut world, dt).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"an earlier run");
        drop(rec);
        assert_eq!(std::fs::read(&path).unwrap(), b"an earlier run");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary file was left: {names:?}");
        // Finished, it replaces the file.
        let rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        let summary = run_recorded(&mut world, dt, 3, rec).unwrap();
        assert_eq!(
            (summary.frames, summary.path.as_path()),
            (12, path.as_path())
        );
        assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn output_kind_follows_the_extension() {
        assert_eq!(OutputKind::of(Path::new("a/run.lvlog")), OutputKind::Log);
        assert_eq!(OutputKind::of(Path::new("run.H5")), OutputKind::Hdf5);
        assert_eq!(OutputKind::of(Path::new("run.hdf5")), OutputKind::Hdf5);
        assert_eq!(OutputKind::of(Path::new("run")), OutputKind::Log);
    }
}
