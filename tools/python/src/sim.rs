//! `lavender.Sim`: a world built from a scene, stepped from Python, with its diagnostics as
//! NumPy arrays (copies or a zero-copy view) and optional recording to a log.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use lavender_engine::{BodyId, Scene, Settings, SolverPath, World};
use lavender_replay::files::check_record_output;
use lavender_replay::recorder::{header_for, RecordOptions, Recorder};
use lavender_replay::resume::Resumed;
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{self, copy2, view2};
use crate::errors;

/// A recording in progress. The recorder sits behind a mutex only to make `Sim` `Sync` (as
/// every pyclass must be); `&mut Sim` reaches it without locking.
struct Recording {
    recorder: Mutex<Recorder>,
    path: PathBuf,
}

/// A simulation: a world built from a scene, stepped from Python.
///
/// Construct it from a scene file path (``os.PathLike``, or a ``str`` with a ``/`` or a
/// ``.toml`` ending; a bare name is a shipped scene if there is one, else a file), a shipped
/// scene name (see
/// ``lavender.shipped_scenes()``), a scene dict with the scene file's structure, a
/// ``lavender.SceneBuilder``, or nothing (an empty world). Keyword arguments override the
/// scene's ``[world]`` settings (``dt`` is the default frame step of ``step()``)::
///
///     sim = lavender.Sim("pendulum", velocity_iterations=16)
///     sim.step(1 / 60)
///     sim.constraint_data()[:, 3]      # anchor error norm of every joint, m
///
/// The bodies and joints are fixed when the Sim is built, so the zero-copy view from
/// ``constraint_data(copy=False)`` stays valid as long as the array lives (the array keeps
/// the Sim alive).
///
/// ``bias_iterations=N`` runs the split-impulse bias pass with only the first ``N`` velocity
/// passes (cheaper, more position error left to the projection); unset (``None`` in
/// ``settings``), one per velocity pass; ``bias_iterations="all"`` restores that where a
/// scene file set a number. ``chain_solve=True`` solves chains of joints (a long
/// chain, a hanging net's columns) exactly in every velocity pass, so one pass does what
/// Gauss-Seidel needs many for. A keyword given as ``None`` leaves a setting as it is.
///
/// Threads: ``step`` and ``run`` release the GIL, so other Python threads run meanwhile, and
/// Sims in different threads step in parallel. One Sim serves one thread at a time: a call on
/// it from another thread while it steps raises ``RuntimeError`` (PyO3's "Already borrowed"
/// for calls that step or change it, "Already mutably borrowed" for reads). Give each thread
/// its own Sim, or guard a shared one with a ``threading.Lock``.
///
/// Island sleeping is off by default; with ``sleeping=True`` an island whose bodies stay
/// below ``sleep_linear_speed`` (m/s) and ``sleep_angular_speed`` (rad/s) for
/// ``time_to_sleep`` (s) stops moving until ``wake_all()`` or a ``set_body_*`` call wakes it
/// (see ``is_body_sleeping``, ``sleeping_body_count``, ``sleep_timers``).
#[pyclass(module = "lavender", name = "Sim")]
pub struct Sim {
    world: World,
    scene: Scene,
    frame_dt: f32,
    /// The longest substep, s, judged so far against each joint's swing
    /// (`World::substep_warning`): a frame or setting that makes substeps longer is judged again.
    judged_substep: f32,
    /// `step()` has said that diagnostics or the energy overflowed f32 (once per Sim;
    /// `run()` says it at each run's end).
    overflow_warned: bool,
    recording: Option<Recording>,
    /// Where a Sim resumed from a log came from.
    origin: Option<Origin>,
    /// The scene file the Sim was built from, if any (a recording may not replace it).
    scene_file: Option<PathBuf>,
}

/// The run a resumed Sim continues: its recordings keep that run's scene hash (so that
/// `diff` compares them with the original directly) and may not replace its log.
struct Origin {
    scene_hash: u64,
    log: PathBuf,
}

/// The keyword arguments that set solver settings, in the order the docs list them.
pub(crate) const SETTING_NAMES: [&str; 19] = [
    "dt",
    "gravity",
    "max_substep",
    "velocity_iterations",
    "bias_iterations",
    "position_iterations",
    "chain_solve",
    "error_reduction",
    "projection_factor",
    "warm_starting",
    "gyroscopic",
    "curvature",
    "speculative_limits",
    "threads",
    "solver_path",
    "sleeping",
    "sleep_linear_speed",
    "sleep_angular_speed",
    "time_to_sleep",
];

/// Settings given as keyword arguments (``**settings``), parsed; the engine validates the
/// values when they are applied.
#[derive(Default)]
struct Overrides {
    dt: Option<f32>,
    gravity: Option<lavender_engine::Vec3>,
    max_substep: Option<f32>,
    velocity_iterations: Option<u32>,
    /// `Some(None)`: one bias pass per velocity pass (`"all"`), whatever the scene says.
    bias_iterations: Option<Option<u32>>,
    position_iterations: Option<u32>,
    chain_solve: Option<bool>,
    error_reduction: Option<f32>,
    projection_factor: Option<f32>,
    warm_starting: Option<bool>,
    gyroscopic: Option<bool>,
    curvature: Option<bool>,
    speculative_limits: Option<bool>,
    threads: Option<u32>,
    solver_path: Option<SolverPath>,
    sleeping: Option<bool>,
    sleep_linear_speed: Option<f32>,
    sleep_angular_speed: Option<f32>,
    time_to_sleep: Option<f32>,
}

fn bad_setting(name: &'static str, value: &Bound<'_, PyAny>, reason: &'static str) -> PyErr {
    errors::engine(lavender_engine::EngineError::InvalidSetting {
        name,
        value: convert::describe(value),
        reason,
    })
}

fn setting_f64(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    convert::not_bool(value)
        .ok_or_else(|| bad_setting(name, value, "must be a number, not True or False"))?
        .extract()
        .map_err(|_| bad_setting(name, value, "must be a number"))
}

/// A number within `f32`'s range (a finite 1e39 reached the engine as inf and was reported as
/// one; NaN and inf go on to the engine's check, which says what the setting needs).
fn setting_f32(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<f32> {
    let v = setting_f64(name, value)?;
    if v.is_finite() && v.abs() > f64::from(f32::MAX) {
        return Err(bad_setting(
            name,
            value,
            "is beyond single precision (the engine's f32: at most 3.4e38 in magnitude)",
        ));
    }
    Ok(v as f32)
}

fn setting_bool(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    value
        .extract()
        .map_err(|_| bad_setting(name, value, "must be True or False"))
}

fn setting_u32(name: &'static str, value: &Bound<'_, PyAny>) -> PyResult<u32> {
    // The smallest value the setting takes, as the engine checks it (QA 2026-12-07: -1 was
    // told ">= 0", then 0 "at least one velocity pass").
    let negative = match name {
        "velocity_iterations" => "must be a whole number >= 1 (the default is 8)",
        _ => "must be a whole number >= 0",
    };
    let v: i64 = convert::not_bool(value)
        .ok_or_else(|| bad_setting(name, value, "must be a whole number, not True or False"))?
        .extract()
        .map_err(|_| {
            // An int beyond 64 bits is a whole number, just too large (QA 2026-12-06).
            let why = match value.is_instance_of::<pyo3::types::PyInt>() {
                true if value.lt(0).unwrap_or(false) => negative,
                true => "is too large (at most 4294967295)",
                false => "must be a whole number",
            };
            bad_setting(name, value, why)
        })?;
    u32::try_from(v).map_err(|_| {
        let why = if v < 0 {
            negative
        } else {
            "is too large (at most 4294967295)"
        };
        bad_setting(name, value, why)
    })
}

impl Overrides {
    /// Parses ``**settings``; an unknown name is a TypeError, as for any Python call.
    fn parse(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Overrides> {
        let mut o = Overrides::default();
        let Some(kwargs) = kwargs else {
            return Ok(o);
        };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            if value.is_none() {
                continue;
            }
            let v = &value;
            match key.as_str() {
                "dt" => o.dt = Some(frame_dt(setting_f64("dt", v)?)?),
                "gravity" => o.gravity = Some(convert::vec3(v, "gravity")?),
                "max_substep" => o.max_substep = Some(setting_f32("max_substep", v)?),
                "velocity_iterations" => {
                    o.velocity_iterations = Some(setting_u32("velocity_iterations", v)?)
                }
                "bias_iterations" => {
                    // "all": one bias pass per velocity pass, the default a scene may override.
                    o.bias_iterations = Some(match v.extract::<String>() {
                        Ok(t) if t == "all" => None,
                        Ok(_) => {
                            return Err(bad_setting(
                                "bias_iterations",
                                v,
                                "must be a whole number or \"all\" (one per velocity pass)",
                            ))
                        }
                        Err(_) => Some(setting_u32("bias_iterations", v)?),
                    })
                }
                "position_iterations" => {
                    o.position_iterations = Some(setting_u32("position_iterations", v)?)
                }
                "chain_solve" => o.chain_solve = Some(setting_bool("chain_solve", v)?),
                "error_reduction" => o.error_reduction = Some(setting_f32("error_reduction", v)?),
                "projection_factor" => {
                    o.projection_factor = Some(setting_f32("projection_factor", v)?)
                }
                "warm_starting" => o.warm_starting = Some(setting_bool("warm_starting", v)?),
                "gyroscopic" => o.gyroscopic = Some(setting_bool("gyroscopic", v)?),
                "curvature" => o.curvature = Some(setting_bool("curvature", v)?),
                "speculative_limits" => {
                    o.speculative_limits = Some(setting_bool("speculative_limits", v)?)
                }
                "threads" => o.threads = Some(setting_u32("threads", v)?),
                "solver_path" => {
                    let path: String = v.extract().unwrap_or_default();
                    o.solver_path = Some(match path.as_str() {
                        "wide" => SolverPath::Wide,
                        "scalar" => SolverPath::Scalar,
                        _ => {
                            return Err(bad_setting(
                                "solver_path",
                                v,
                                "must be \"wide\" (lane-parallel, the default) or \"scalar\"",
                            ))
                        }
                    })
                }
                "sleeping" => o.sleeping = Some(setting_bool("sleeping", v)?),
                "sleep_linear_speed" => {
                    o.sleep_linear_speed = Some(setting_f32("sleep_linear_speed", v)?)
                }
                "sleep_angular_speed" => {
                    o.sleep_angular_speed = Some(setting_f32("sleep_angular_speed", v)?)
                }
                "time_to_sleep" => o.time_to_sleep = Some(setting_f32("time_to_sleep", v)?),
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "unexpected keyword argument {key:?}; the settings are {}",
                        SETTING_NAMES.join(", ")
                    )))
                }
            }
        }
        Ok(o)
    }

    /// `base` with the overrides applied (validated by the engine when it is used).
    fn apply(&self, base: Settings) -> Settings {
        let mut s = base;
        s.gravity = self.gravity.unwrap_or(s.gravity);
        s.max_substep = self.max_substep.unwrap_or(s.max_substep);
        s.velocity_iterations = self.velocity_iterations.unwrap_or(s.velocity_iterations);
        s.bias_iterations = self.bias_iterations.unwrap_or(s.bias_iterations);
        s.position_iterations = self.position_iterations.unwrap_or(s.position_iterations);
        s.chain_solve = self.chain_solve.unwrap_or(s.chain_solve);
        s.error_reduction = self.error_reduction.unwrap_or(s.error_reduction);
        s.projection_factor = self.projection_factor.unwrap_or(s.projection_factor);
        s.warm_starting = self.warm_starting.unwrap_or(s.warm_starting);
        s.gyroscopic = self.gyroscopic.unwrap_or(s.gyroscopic);
        s.curvature = self.curvature.unwrap_or(s.curvature);
        s.speculative_limits = self.speculative_limits.unwrap_or(s.speculative_limits);
        s.threads = self.threads.unwrap_or(s.threads);
        s.solver_path = self.solver_path.unwrap_or(s.solver_path);
        s.sleeping = self.sleeping.unwrap_or(s.sleeping);
        s.sleep_linear_speed = self.sleep_linear_speed.unwrap_or(s.sleep_linear_speed);
        s.sleep_angular_speed = self.sleep_angular_speed.unwrap_or(s.sleep_angular_speed);
        s.time_to_sleep = self.time_to_sleep.unwrap_or(s.time_to_sleep);
        s
    }
}

/// A frame time step, checked as the engine checks it.
fn frame_dt(dt: f64) -> PyResult<f32> {
    let dt32 = dt as f32;
    if dt32.is_finite() && dt32 >= f32::MIN_POSITIVE {
        Ok(dt32)
    } else if dt.is_finite() && dt > 0.0 {
        // Positive, but not a normal f32: say what was given, not what it rounds to.
        Err(errors::value(format!(
            "invalid time step dt = {dt:e}: it must be a finite number of seconds from 1.2e-38 \
             (the smallest normal f32) to 3.4e38"
        )))
    } else {
        Err(errors::engine(
            lavender_engine::EngineError::InvalidTimeStep(dt32),
        ))
    }
}

/// Reads and parses a scene file; I/O failures are `OSError`s, parse errors `ValueError`s.
fn load_scene_file(path: &Path) -> PyResult<Scene> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        errors::io(
            e.kind(),
            format!("scene {origin}: cannot read the file: {e}"),
        )
    })?;
    Scene::from_toml_str(&text, &origin).map_err(errors::engine)
}

/// The first count in a scene dict given a negative number, as (`world.velocity_iterations`,
/// the value): the fields a scene counts with.
fn negative_count(value: &serde_json::Value, path: &str) -> Option<(String, i64)> {
    const COUNTS: [&str; 7] = [
        "velocity_iterations",
        "bias_iterations",
        "position_iterations",
        "threads",
        "links",
        "rows",
        "cols",
    ];
    match value {
        serde_json::Value::Object(map) => map.iter().find_map(|(key, v)| {
            let here = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            match v.as_i64() {
                Some(n) if n < 0 && COUNTS.contains(&key.as_str()) => Some((here, n)),
                _ => negative_count(v, &here),
            }
        }),
        serde_json::Value::Array(items) => {
            (items.iter().enumerate()).find_map(|(i, v)| negative_count(v, &format!("{path}[{i}]")))
        }
        _ => None,
    }
}

/// The scene described by the constructor's first argument, and the file it came from.
///
/// A str without a path separator and not ending in `.toml` names a shipped scene when there
/// is one of that name (a file of the same name in the working directory does not hide it:
/// `./name` reads the file), else a file; anything else is a path.
fn scene_from(obj: Option<&Bound<'_, PyAny>>) -> PyResult<(Scene, Option<PathBuf>)> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok((Scene::default(), None));
    };
    if let Ok(dict) = obj.cast::<PyDict>() {
        let json = convert::to_json(dict.as_any(), "scene")?;
        let json_for_errors = json.clone();
        return serde_json::from_value(json)
            .map(|scene| (scene, None))
            .map_err(|e| match negative_count(&json_for_errors, "") {
                // serde names no field (QA 2026-12-07): the first negative count, by path.
                Some((path, value)) => errors::value(format!(
                    "scene dict: `{path}` = {value} must be a whole number >= {}",
                    if path.ends_with("velocity_iterations") || path.ends_with("links") {
                        "1"
                    } else if path.ends_with("rows") {
                        "2"
                    } else {
                        "0"
                    }
                )),
                None => {
                    let message = e.to_string();
                    let hint = lavender_engine::scene::count_hint(&message);
                    errors::value(format!("scene dict: {message}{hint}"))
                }
            });
    }
    if obj.hasattr("to_dict")? && !obj.is_instance_of::<PyString>() {
        return scene_from(Some(&obj.call_method0("to_dict")?));
    }
    let is_str = obj.is_instance_of::<PyString>();
    let os = obj.py().import("os")?;
    let text: String = os
        .call_method1("fspath", (obj,))
        .and_then(|p| p.extract())
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "a scene is a file path, a shipped scene name, a dict or a SceneBuilder, got {}",
                convert::describe(obj)
            ))
        })?;
    let path = Path::new(&text);
    let from_file = || load_scene_file(path).map(|scene| (scene, Some(path.to_path_buf())));
    let path_like = !is_str || text.contains(['/', '\\']) || text.ends_with(".toml");
    if path_like {
        return from_file();
    }
    match Scene::builtin(&text) {
        Ok(scene) => Ok((scene, None)),
        Err(_) if path.is_file() => from_file(),
        Err(e) => Err(errors::value(format!(
            "{e}; no file of that name exists either"
        ))),
    }
}

impl Sim {
    /// The world was changed from outside its steps (a pose, a velocity, a wake-up): a log
    /// records states, not such changes, so the recording's next frame is a keyframe, from
    /// which a resume reproduces the rest (`Recorder::keyframe_next`).
    fn changed_by_hand(&mut self) {
        if let Some(r) = &mut self.recording {
            r.recorder
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .keyframe_next();
        }
    }

    /// A Sim around an existing world (from `resume`): `scene` is what the world was built
    /// from, `frame_dt` the default step.
    /// The Sim of a run resumed from a log.
    pub(crate) fn resumed(r: Resumed) -> Sim {
        Sim {
            judged_substep: substep_of(&r.world, r.dt),
            overflow_warned: false,
            world: r.world,
            scene: r.scene,
            frame_dt: r.dt,
            recording: None,
            origin: Some(Origin {
                scene_hash: r.header.scene_hash,
                log: r.source,
            }),
            scene_file: None,
        }
    }

    fn build(
        (scene, scene_file): (Scene, Option<PathBuf>),
        overrides: &Overrides,
    ) -> PyResult<Sim> {
        let settings = overrides.apply(scene.settings());
        let frame_dt = frame_dt(f64::from(overrides.dt.unwrap_or(scene.frame_dt())))?;
        // Each setting's own message first (a NaN max_substep is not "NaN substeps").
        settings.validate().map_err(errors::engine)?;
        settings.check_substeps(frame_dt).map_err(errors::engine)?;
        let world = scene.build_with(settings).map_err(errors::engine)?;
        warn_ill_conditioned(&world, frame_dt)?;
        if let Some(warning) = world.settings().threads_warning() {
            Python::attach(|py| runtime_warning(py, warning))?;
        }
        Ok(Sim {
            judged_substep: substep_of(&world, frame_dt),
            overflow_warned: false,
            world,
            scene,
            frame_dt,
            recording: None,
            origin: None,
            scene_file,
        })
    }

    fn body(&self, body: &Bound<'_, PyAny>) -> PyResult<BodyId> {
        let i = convert::select(body, self.world.bodies().names(), "body")?;
        Ok(BodyId(i as u32))
    }

    /// Steps `frames` frames of `dt` with the GIL released, recording if a recording is on.
    /// Every `SIGNAL_CHECK` of stepping the GIL is taken back to run signal handlers, so
    /// Ctrl-C stops a long `run` between two frames.
    fn advance(&mut self, py: Python<'_>, dt: f32, frames: u64) -> PyResult<u64> {
        self.advance_watching(py, dt, frames, &mut None)
    }

    /// Judges frames of `dt` against each joint's swing (`World::substep_warning`, a
    /// `RuntimeWarning`) when their substeps are longer than any judged before: at build the
    /// scene's frames were, but `step(dt)`, `run(dt=...)` and `set_settings` may run longer ones.
    fn judge_substeps(&mut self, dt: f32) -> PyResult<()> {
        let h = substep_of(&self.world, dt);
        if h > self.judged_substep {
            self.judged_substep = h;
            if let Some(warning) = self.world.substep_warning(dt) {
                Python::attach(|py| runtime_warning(py, warning))?;
            }
        }
        Ok(())
    }

    /// [`Sim::advance`], noting in `far_from` (while `None`) the first frame of this call, of
    /// every 16th, whose joints act farther from a body's centre than single precision holds:
    /// its number (from 1), the time and [`World::far_levers_warning`] (as `lavender run`).
    /// What this call recorded is in the file when it returns, also when interrupted (a
    /// `Log` of it, or a follower, sees every frame; the writer stages small frames).
    fn drain_recording(&mut self) -> PyResult<()> {
        if let Some(r) = &mut self.recording {
            r.recorder
                .get_mut()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .drain()
                .map_err(errors::replay)?;
        }
        Ok(())
    }

    fn advance_watching(
        &mut self,
        py: Python<'_>,
        dt: f32,
        frames: u64,
        far_from: &mut Option<(u64, f64, String)>,
    ) -> PyResult<u64> {
        const SIGNAL_CHECK: std::time::Duration = std::time::Duration::from_millis(50);
        self.judge_substeps(dt)?;
        let mut substeps = 0u64;
        let mut left = frames;
        // A Ctrl-C seen inside a frame (a long `step(dt)`): the frame ended there.
        let mut interrupt: Option<PyErr> = None;
        let result = loop {
            let Sim {
                world, recording, ..
            } = &mut *self;
            let mut recorder = recording.as_mut().map(|r| {
                r.recorder
                    .get_mut()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            });
            let seen = &mut interrupt;
            let chunk = py.detach(|| -> Result<(u64, u64), (PyErrKind, String, Failed)> {
                let start = std::time::Instant::now();
                // Between two substeps of a frame longer than the signal check: take the
                // GIL back to see a Ctrl-C (the frame then ends there, the world keeping
                // the substeps run).
                let mut checked = start;
                let mut stop = || {
                    if checked.elapsed() < SIGNAL_CHECK {
                        return false;
                    }
                    checked = std::time::Instant::now();
                    *seen = Python::attach(|py| py.check_signals()).err();
                    seen.is_some()
                };
                let (mut done, mut subs) = (0u64, 0u64);
                while done < left && (done == 0 || start.elapsed() < SIGNAL_CHECK) {
                    let report = match recorder.as_deref_mut() {
                        None => world
                            .step_stoppable(dt, None, false, &mut stop)
                            .map_err(|e| engine_failure(&e))?,
                        Some(rec) => rec
                            .step_stoppable(world, dt, &mut stop)
                            .map_err(|e| replay_failure(&e))?,
                    };
                    if report.stopped_early {
                        subs += u64::from(report.substeps);
                        break;
                    }
                    let frame = frames - left + done;
                    if far_from.is_none() && frame.is_multiple_of(16) {
                        *far_from = world
                            .far_levers_warning()
                            .map(|warning| (frame + 1, world.time(), warning));
                    }
                    done += 1;
                    subs += u64::from(report.substeps);
                }
                Ok((done, subs))
            });
            match chunk {
                Ok((done, subs)) => {
                    left -= done;
                    substeps += subs;
                    if let Some(interrupt) = interrupt.take() {
                        // Inside a frame: it ended at a substep boundary, recorded so far.
                        self.drain_recording()?;
                        return Err(interrupt);
                    }
                    if left == 0 {
                        break Ok(substeps);
                    }
                    if let Err(interrupt) = py.check_signals() {
                        // Ctrl-C: what this call recorded is in the file before the
                        // exception rises, as at a normal return (a failed write wins).
                        self.drain_recording()?;
                        return Err(interrupt);
                    }
                }
                Err(failure) => break Err(failure),
            }
        };
        match result {
            Ok(n) => {
                self.drain_recording()?;
                Ok(n)
            }
            Err((kind, message, failed)) => {
                let ends_recording = failed != Failed::Refused;
                let message = if let Some(r) = self.recording.take_if(|_| ends_recording) {
                    // A failed step leaves substeps of the rolled-back step in the log and a
                    // failed write leaves it unusable for appending: either way the recording
                    // ends here, with a footer so the log opens without recovery.
                    let ended = match r.recorder.into_inner() {
                        Ok(rec) => rec.finish(),
                        Err(p) => p.into_inner().finish(),
                    };
                    let cause = match failed {
                        Failed::Recording => "writing the log failed",
                        _ => "the step failed",
                    };
                    let hdf5 = lavender_replay::recorder::OutputKind::of(&r.path)
                        == lavender_replay::recorder::OutputKind::Hdf5;
                    match ended {
                        Err(_) if hdf5 => format!(
                            "{message} (recording to {} stopped because {cause}; HDF5 is \
                             written under a temporary name and moved into place when \
                             finished, so {} was left as it was)",
                            r.path.display(),
                            r.path.display()
                        ),
                        Ok(log) if log.frames == 0 => format!(
                            "{message} (recording to {} stopped because {cause}; nothing was \
                             recorded, and a file already there was left as it was)",
                            r.path.display()
                        ),
                        Ok(_) if matches!(kind, PyErrKind::NonFinite) => format!(
                            "{message} (recording to {} stopped because {cause}; the log holds \
                             the substeps up to the failure, the last of them the one that went \
                             non-finite: Log.spikes() names the joints)",
                            r.path.display()
                        ),
                        Ok(_) | Err(lavender_replay::ReplayError::RecordingStopped(_)) => format!(
                            "{message} (recording to {} stopped because {cause}; the log holds \
                             the substeps before the failure)",
                            r.path.display()
                        ),
                        Err(e) => format!(
                            "{message} (recording to {} stopped because {cause}, and closing the \
                             log failed too: {e})",
                            r.path.display()
                        ),
                    }
                } else {
                    message
                };
                Err(kind.into_err(message))
            }
        }
    }
}

/// Which Python exception a failure inside a GIL-free section becomes (the `PyErr` itself is
/// built after the GIL is taken back).
#[derive(Clone, Copy)]
enum PyErrKind {
    NonFinite,
    Value,
    /// The kind and the system's error number, if any.
    Os(std::io::ErrorKind, Option<i32>),
}

impl PyErrKind {
    fn into_err(self, message: String) -> PyErr {
        match self {
            PyErrKind::NonFinite => errors::NonFiniteError::new_err(message),
            PyErrKind::Value => errors::value(message),
            PyErrKind::Os(kind, errno) => errors::io_errno(kind, message, errno),
        }
    }
}

/// What failed in a step call, which decides whether a recording ends with it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Failed {
    /// The step (rolled back; a non-finite substep is the log's last frame).
    Step,
    /// Writing the log: the file cannot take more frames.
    Recording,
    /// Nothing: the call was refused before the world moved (a `dt` whose substeps are not
    /// the recording's), so the recording goes on.
    Refused,
}

fn engine_failure(e: &lavender_engine::EngineError) -> (PyErrKind, String, Failed) {
    let kind = match e {
        lavender_engine::EngineError::NonFinite { .. } => PyErrKind::NonFinite,
        _ => PyErrKind::Value,
    };
    (kind, e.to_string(), Failed::Step)
}

fn replay_failure(e: &lavender_replay::ReplayError) -> (PyErrKind, String, Failed) {
    use lavender_replay::ReplayError as R;
    match e {
        R::Engine(inner) => engine_failure(inner),
        // QA (2026-12-05): `step(0.01)` on a recording of 1/60 s frames raised OSError and
        // ended the recording; it is a bad argument, refused before stepping.
        R::InvalidArgument(_) => (PyErrKind::Value, e.to_string(), Failed::Refused),
        R::Io { source, .. } => (
            PyErrKind::Os(source.kind(), source.raw_os_error()),
            e.to_string(),
            Failed::Recording,
        ),
        _ => (
            PyErrKind::Os(std::io::ErrorKind::Other, None),
            e.to_string(),
            Failed::Recording,
        ),
    }
}

/// A time argument in seconds: a number, never a bool (`step(True)` ran a 1 s frame).
pub(crate) fn seconds(name: &str, value: &Bound<'_, PyAny>) -> PyResult<f64> {
    let wrong = || {
        errors::value(format!(
            "{name} must be a number of seconds, got {}",
            convert::describe(value)
        ))
    };
    convert::not_bool(value)
        .and_then(|v| v.extract().ok())
        .ok_or_else(wrong)
}

/// The substep, s, frames of `dt` run under the world's settings.
fn substep_of(world: &World, dt: f32) -> f32 {
    dt / world.settings().substeps_for(dt) as f32
}

/// A `RuntimeWarning` for each of `World::setup_warnings`: joints f32 cannot hold, pairs of
/// bodies whose joints disagree, joints far from holding at the start, pairs their joints
/// lock by accident and swings the substeps do not resolve; the command line logs the same
/// through `tracing`.
fn warn_ill_conditioned(world: &World, frame_dt: f32) -> PyResult<()> {
    Python::attach(|py| {
        for warning in world.setup_warnings(frame_dt) {
            runtime_warning(py, warning)?;
        }
        Ok(())
    })
}

/// The `RuntimeWarning`s of a `run`'s end, as `lavender run` says them: joints acting farther
/// from a body's centre than f32 reliably holds (`World::far_levers_warning`), a jointed body
/// too far from the origin (`World::far_from_origin_warning`), and an energy or diagnostic
/// that overflowed f32 while the state stayed finite (`World::overflow_warning`).
fn warn_at_run_end(py: Python<'_>, world: &World) -> PyResult<()> {
    let at_end = [world.far_levers_warning(), world.far_from_origin_warning()]
        .into_iter()
        .flatten()
        .map(|warning| format!("at the end of the run {warning}"));
    for text in at_end.chain(world.overflow_warning()) {
        runtime_warning(py, text)?;
    }
    Ok(())
}

/// Issues `text` as a Python `RuntimeWarning`.
pub(crate) fn runtime_warning(py: Python<'_>, text: String) -> PyResult<()> {
    let message =
        std::ffi::CString::new(text).map_err(|e| errors::value(format!("warning text: {e}")))?;
    let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
    PyErr::warn(py, &category, &message, 1)
}

/// Two arrays returned together, a Python tuple.
type ArrayPair<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<f32>>);

fn vec3_array<'py>(
    py: Python<'py>,
    v: impl ExactSizeIterator<Item = [f32; 3]>,
) -> Bound<'py, PyArray2<f32>> {
    copy2(py, &v.collect::<Vec<_>>())
}

/// Seconds for a message: plain where that is short, `{:e}` for the tiny and the huge.
fn shown_seconds(x: f64) -> String {
    if x == 0.0 || (1e-4..1e6).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[pymethods]
impl Sim {
    #[new]
    #[pyo3(
        signature = (scene = None, **settings),
        text_signature = "(scene=None, *, dt=None, gravity=None, max_substep=None, \
                          velocity_iterations=None, bias_iterations=None, position_iterations=None, \
                          chain_solve=None, error_reduction=None, projection_factor=None, warm_starting=None, \
                          gyroscopic=None, curvature=None, speculative_limits=None, threads=None, solver_path=None, sleeping=None, \
                          sleep_linear_speed=None, sleep_angular_speed=None, \
                          time_to_sleep=None)"
    )]
    fn new(
        scene: Option<&Bound<'_, PyAny>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Sim> {
        let overrides = Overrides::parse(settings)?;
        Sim::build(scene_from(scene)?, &overrides)
    }

    /// A Sim from scene TOML text (the format of ``data/scenes/*.toml``), with the same
    /// keyword settings as the constructor.
    #[staticmethod]
    #[pyo3(
        signature = (text, **settings),
        text_signature = "(text, *, dt=None, gravity=None, max_substep=None, \
                          velocity_iterations=None, bias_iterations=None, position_iterations=None, \
                          chain_solve=None, error_reduction=None, projection_factor=None, warm_starting=None, \
                          gyroscopic=None, curvature=None, speculative_limits=None, threads=None, solver_path=None, sleeping=None, \
                          sleep_linear_speed=None, sleep_angular_speed=None, \
                          time_to_sleep=None)"
    )]
    fn from_toml(text: &str, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Sim> {
        let overrides = Overrides::parse(settings)?;
        let scene = Scene::from_toml_str(text, "<string>").map_err(errors::engine)?;
        Sim::build((scene, None), &overrides)
    }

    /// Advances the world by ``dt`` seconds (default: the scene's frame dt) and refreshes the
    /// diagnostics. The engine splits the frame into ``ceil(dt / max_substep)`` equal
    /// substeps. Returns the number of substeps run. The GIL is released while stepping.
    /// Ctrl-C in a long frame (taken every 50 ms; recording to ``.h5``, after the block of
    /// frames being compressed, up to about 0.25 s) ends it between two substeps: the world
    /// keeps the substeps run, a recording holds them, and KeyboardInterrupt rises.
    /// Substeps longer than any run before are judged against each joint's swing, as at
    /// build (a RuntimeWarning when a swing holds fewer than 10 of them).
    ///
    /// The first step after which the energy or a diagnostic overflowed single precision
    /// (inf) while the state stayed finite says so (a RuntimeWarning, once per Sim; ``run``
    /// says it at the end of each run).
    ///
    /// Raises ValueError for a bad dt and NonFiniteError (a ValueError) when the state went
    /// non-finite (the world is rolled back to before the step).
    #[pyo3(signature = (dt = None))]
    fn step(&mut self, py: Python<'_>, dt: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        let dt = match dt {
            Some(dt) => frame_dt(seconds("dt", dt)?)?,
            None => self.frame_dt,
        };
        let substeps = self.advance(py, dt, 1)?;
        // QA 2026-12-07: only `run()` said it, so a loop of `step()` read inf unwarned.
        if !self.overflow_warned {
            if let Some(warning) = self.world.overflow_warning() {
                self.overflow_warned = true;
                runtime_warning(py, warning)?;
            }
        }
        Ok(substeps)
    }

    /// Steps ``round(duration / dt)`` frames (defaults: the scene's duration and frame dt)
    /// with the GIL released (taken back every 50 ms, so that Ctrl-C stops the run between
    /// two frames, or inside a long frame between two substeps, as ``step``). Returns the
    /// number of substeps run. A RuntimeWarning says when joints
    /// end the run farther from a body's centre than single precision reliably holds (a
    /// slider run far out), when the energy or a diagnostic overflowed it (inf) while the
    /// state stayed finite, and when a jointed body ends so far from the origin that
    /// positions are resolved more coarsely than 1 cm.
    #[pyo3(signature = (duration = None, dt = None))]
    fn run(
        &mut self,
        py: Python<'_>,
        duration: Option<&Bound<'_, PyAny>>,
        dt: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let dt = match dt {
            Some(dt) => frame_dt(seconds("dt", dt)?)?,
            None => self.frame_dt,
        };
        let duration = match duration {
            Some(d) => seconds("duration", d)?,
            None => f64::from(self.scene.duration()),
        };
        if !(duration.is_finite() && duration >= 0.0) {
            // `{:e}` for the tiny and the huge (QA 2026-12-07: run(-1e-300) printed 300 digits).
            return Err(errors::value(format!(
                "duration = {}: it must be a finite number of seconds >= 0",
                shown_seconds(duration)
            )));
        }
        let frames = (duration / f64::from(dt)).round();
        if frames > lavender_engine::MAX_RUN_FRAMES as f64 {
            // As `lavender run --duration` (QA 2026-12-06: run(1e30) stepped until Ctrl-C).
            return Err(errors::value(format!(
                "run({duration:e} s) is {frames:.1e} frames of {dt} s, more than any run can \
                 step (at most 1e12 frames); give a shorter duration"
            )));
        }
        let frames = frames as u64;
        if frames == 0 && duration > 0.0 {
            // QA (2026-12-06): a run shorter than half a frame did nothing without a word.
            runtime_warning(
                py,
                format!(
                    "run({duration} s) is less than half a frame of {dt} s: no frame was run; \
                     pass a smaller dt or a longer duration"
                ),
            )?;
        }
        let ran = frames as f64 * f64::from(dt);
        if frames > 0 && (ran - duration).abs() > 1e-6 * duration.max(f64::from(dt)) {
            // As `lavender run --duration` notes it (QA: run(1.0, dt=0.4) ran 0.8 s unsaid).
            runtime_warning(
                py,
                format!(
                    "run({duration} s) is {:.4} frames of {dt} s: running the nearest whole \
                     number, {frames} ({ran:.6} s); pass a dt that divides the duration",
                    duration / f64::from(dt)
                ),
            )?;
        }
        let mut far_from = None;
        let substeps = self.advance_watching(py, dt, frames, &mut far_from)?;
        if let Some((frame, time, warning)) = far_from {
            runtime_warning(
                py,
                format!(
                    "from frame {frame} of this run (t = {time:.3} s) on, {warning}; results \
                     from there on are not reliable"
                ),
            )?;
        }
        warn_at_run_end(py, &self.world)?;
        Ok(substeps)
    }

    /// Refreshes the diagnostics from the current poses and velocities without advancing
    /// time. (``step``, ``set_body_pose`` and ``set_body_velocity`` already do this.)
    fn sync(&mut self) {
        self.world.sync();
    }

    /// The diagnostics, a ``(joints, 8)`` float32 array: one row per joint, columns as in
    /// ``lavender.COLUMN_NAMES`` (anchor error x, y, z and norm in m, angular error in rad,
    /// limit violation, anchor relative speed in m/s, joint coordinate).
    ///
    /// With ``copy=True`` (default) an independent copy. With ``copy=False`` a read-only
    /// zero-copy view of the engine's buffer: it keeps the Sim alive, stays valid as long as
    /// it exists, and always shows the latest step or sync. Do not read a view while another
    /// thread steps the same Sim.
    #[pyo3(signature = (copy = true))]
    fn constraint_data<'py>(
        slf: &Bound<'py, Self>,
        copy: bool,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let py = slf.py();
        let this = slf.try_borrow()?;
        let rows = this.world.constraint_data();
        if copy {
            return Ok(copy2(py, rows));
        }
        // SAFETY: the rows live in the world's diagnostics Vec, inside this Sim object, which
        // the array keeps alive as its base. The Vec is pushed to only by `World::add_joint`,
        // which a Sim never calls after it is built (bodies and joints are fixed), and the
        // World is never replaced, so the buffer is neither moved nor freed while the Sim
        // lives. Steps write the rows in place; Python only reads them.
        Ok(unsafe { view2(rows, slf.clone().into_any()) })
    }

    /// Constraint forces over the last substep, as a dict of ``(joints, 3)`` float32 arrays:
    /// ``force_on_b`` and ``force_on_a`` (N, world frame), ``torque_on_b`` and
    /// ``torque_on_a`` (N m, about each body's centre of mass).
    fn joint_forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let forces = self.world.joint_forces();
        let out = PyDict::new(py);
        out.set_item(
            "force_on_b",
            vec3_array(py, forces.iter().map(|f| f.force_on_b.to_array())),
        )?;
        out.set_item(
            "force_on_a",
            vec3_array(py, forces.iter().map(|f| f.force_on_a().to_array())),
        )?;
        out.set_item(
            "torque_on_b",
            vec3_array(py, forces.iter().map(|f| f.torque_on_b.to_array())),
        )?;
        out.set_item(
            "torque_on_a",
            vec3_array(py, forces.iter().map(|f| f.torque_on_a.to_array())),
        )?;
        Ok(out)
    }

    /// Body centres of mass, a ``(bodies, 3)`` float32 array (copy), m.
    fn positions<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let b = self.world.bodies();
        vec3_array(py, b.positions().iter().map(|v| v.to_array()))
    }

    /// Each joint's two bodies, ``(a, b)`` body indices, in joint order.
    #[getter]
    fn joint_bodies(&self) -> Vec<(usize, usize)> {
        let joints = self.world.joints();
        (0..joints.len())
            .map(|j| {
                let (a, b) = joints.bodies_of(j);
                (a.index(), b.index())
            })
            .collect()
    }

    /// Where each joint's anchors are, in world coordinates (m): ``(on_a, on_b)``, two
    /// ``(joints, 3)`` float32 arrays, the anchor on body A and on body B at the current poses.
    /// ``on_b - on_a`` is the anchor error of ``constraint_data()``'s columns 0 to 2 for
    /// revolute, spherical and fixed joints (for a prismatic joint it also holds the slide
    /// along the axis, which columns 0 to 2 leave out).
    fn joint_anchors<'py>(&self, py: Python<'py>) -> PyResult<ArrayPair<'py>> {
        let joints = self.world.joints();
        let (mut on_a, mut on_b) = (Vec::new(), Vec::new());
        for j in 0..joints.len() {
            let (a, b) = joints.bodies_of(j);
            let (local_a, local_b) = joints.anchors_of(j);
            let (pa, qa) = self.world.body_pose(a).map_err(errors::engine)?;
            let (pb, qb) = self.world.body_pose(b).map_err(errors::engine)?;
            on_a.push((pa + qa * local_a).to_array());
            on_b.push((pb + qb * local_b).to_array());
        }
        Ok((copy2(py, &on_a), copy2(py, &on_b)))
    }

    /// Body orientations, a ``(bodies, 4)`` float32 array of unit quaternions ``[x, y, z, w]``.
    fn rotations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let rows: Vec<[f32; 4]> = self
            .world
            .bodies()
            .rotations()
            .iter()
            .map(|q| q.to_array())
            .collect();
        copy2(py, &rows)
    }

    /// Body linear velocities, a ``(bodies, 3)`` float32 array, m/s.
    fn linear_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let b = self.world.bodies();
        vec3_array(py, b.linear_velocities().iter().map(|v| v.to_array()))
    }

    /// Body angular velocities (world frame), a ``(bodies, 3)`` float32 array, rad/s.
    fn angular_velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let b = self.world.bodies();
        vec3_array(py, b.angular_velocities().iter().map(|v| v.to_array()))
    }

    /// Poses as a log frame stores them: a ``(bodies, 7)`` float32 array of
    /// ``[x, y, z, qx, qy, qz, qw]``.
    fn poses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let (mut poses, mut velocities) = (Vec::new(), Vec::new());
        lavender_replay::recorder::gather_bodies(&self.world, &mut poses, &mut velocities);
        copy2(py, &poses)
    }

    /// Velocities as a log frame stores them: a ``(bodies, 6)`` float32 array of
    /// ``[vx, vy, vz, wx, wy, wz]``.
    fn velocities<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let (mut poses, mut velocities) = (Vec::new(), Vec::new());
        lavender_replay::recorder::gather_bodies(&self.world, &mut poses, &mut velocities);
        copy2(py, &velocities)
    }

    /// ``(position, rotation)`` of a body (by name or index): float32 arrays of 3 (m) and
    /// 4 (quaternion ``[x, y, z, w]``).
    fn body_pose<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (p, q) = self
            .world
            .body_pose(self.body(body)?)
            .map_err(errors::engine)?;
        let np = py.import("numpy")?;
        Ok((
            np.call_method1("array", (p.to_array(), "float32"))?,
            np.call_method1("array", (q.to_array(), "float32"))?,
        ))
    }

    /// ``(linear, angular)`` velocity of a body (by name or index): float32 arrays of 3, in
    /// m/s and rad/s (world frame).
    fn body_velocity<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (v, w) = self
            .world
            .body_velocity(self.body(body)?)
            .map_err(errors::engine)?;
        let np = py.import("numpy")?;
        Ok((
            np.call_method1("array", (v.to_array(), "float32"))?,
            np.call_method1("array", (w.to_array(), "float32"))?,
        ))
    }

    /// Moves a body (by name or index) without advancing time and refreshes the diagnostics.
    /// ``position`` is 3 numbers (m), ``rotation`` a unit quaternion ``[x, y, z, w]``; an
    /// omitted one keeps its current value.
    #[pyo3(signature = (body, position = None, rotation = None))]
    fn set_body_pose(
        &mut self,
        body: &Bound<'_, PyAny>,
        position: Option<&Bound<'_, PyAny>>,
        rotation: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = self.body(body)?;
        let (p0, q0) = self.world.body_pose(id).map_err(errors::engine)?;
        let p = position
            .map(|p| convert::vec3(p, "position"))
            .transpose()?
            .unwrap_or(p0);
        let q = rotation
            .map(|q| convert::quat(q, "rotation"))
            .transpose()?
            .unwrap_or(q0);
        self.world.set_body_pose(id, p, q).map_err(errors::engine)?;
        self.changed_by_hand();
        Ok(())
    }

    /// Sets a body's (by name or index) linear (m/s) and angular (rad/s, world frame)
    /// velocity without advancing time and refreshes the diagnostics; an omitted one keeps
    /// its current value.
    #[pyo3(signature = (body, linear = None, angular = None))]
    fn set_body_velocity(
        &mut self,
        body: &Bound<'_, PyAny>,
        linear: Option<&Bound<'_, PyAny>>,
        angular: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let id = self.body(body)?;
        let (v0, w0) = self.world.body_velocity(id).map_err(errors::engine)?;
        let v = linear
            .map(|v| convert::vec3(v, "linear"))
            .transpose()?
            .unwrap_or(v0);
        let w = angular
            .map(|w| convert::vec3(w, "angular"))
            .transpose()?
            .unwrap_or(w0);
        self.world
            .set_body_velocity(id, v, w)
            .map_err(errors::engine)?;
        self.changed_by_hand();
        Ok(())
    }

    /// Changes solver settings (``gravity``, ``max_substep``, ``velocity_iterations``,
    /// ``bias_iterations``, ``position_iterations``, ``chain_solve``, ``error_reduction``,
    /// ``projection_factor``,
    /// ``warm_starting``, ``gyroscopic``, ``curvature``, ``speculative_limits``, ``threads``,
    /// ``solver_path``, ``sleeping``,
    /// ``sleep_linear_speed``,
    /// ``sleep_angular_speed``, ``time_to_sleep``) and the default frame ``dt``.
    /// Validated first: on error nothing changes. Refused while recording (the log's header
    /// holds the settings).
    #[pyo3(
        signature = (**settings),
        text_signature = "($self, *, dt=None, gravity=None, max_substep=None, \
                          velocity_iterations=None, bias_iterations=None, position_iterations=None, \
                          chain_solve=None, error_reduction=None, projection_factor=None, warm_starting=None, \
                          gyroscopic=None, curvature=None, speculative_limits=None, threads=None, solver_path=None, sleeping=None, \
                          sleep_linear_speed=None, sleep_angular_speed=None, \
                          time_to_sleep=None)"
    )]
    fn set_settings(&mut self, settings: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        if let Some(r) = &self.recording {
            return Err(errors::value(format!(
                "cannot change settings while recording to {}: call stop_recording() first",
                r.path.display()
            )));
        }
        let overrides = Overrides::parse(settings)?;
        let settings = overrides.apply(*self.world.settings());
        // Each setting's own message first, then the frame step must fit the substep limit
        // under the new settings.
        settings.validate().map_err(errors::engine)?;
        settings
            .check_substeps(overrides.dt.unwrap_or(self.frame_dt))
            .map_err(errors::engine)?;
        self.world.set_settings(settings).map_err(errors::engine)?;
        if let Some(warning) = self.world.settings().threads_warning() {
            Python::attach(|py| runtime_warning(py, warning))?;
        }
        if let Some(dt) = overrides.dt {
            self.frame_dt = dt;
        }
        self.judge_substeps(self.frame_dt)
    }

    /// The solver settings as a dict (gravity, max_substep, velocity_iterations,
    /// bias_iterations (None: one per velocity pass), position_iterations, chain_solve,
    /// error_reduction, projection_factor, warm_starting, gyroscopic, curvature,
    /// speculative_limits, threads,
    /// solver_path, sleeping, sleep_linear_speed, sleep_angular_speed, time_to_sleep) plus the
    /// default frame ``dt``.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.world.settings();
        let d = PyDict::new(py);
        d.set_item("dt", self.frame_dt)?;
        d.set_item("gravity", s.gravity.to_array().to_vec())?;
        d.set_item("max_substep", s.max_substep)?;
        d.set_item("velocity_iterations", s.velocity_iterations)?;
        d.set_item("bias_iterations", s.bias_iterations)?;
        d.set_item("position_iterations", s.position_iterations)?;
        d.set_item("chain_solve", s.chain_solve)?;
        d.set_item("error_reduction", s.error_reduction)?;
        d.set_item("projection_factor", s.projection_factor)?;
        d.set_item("warm_starting", s.warm_starting)?;
        d.set_item("gyroscopic", s.gyroscopic)?;
        d.set_item("curvature", s.curvature)?;
        d.set_item("speculative_limits", s.speculative_limits)?;
        d.set_item("threads", s.threads)?;
        d.set_item("solver_path", s.solver_path.name())?;
        d.set_item("sleeping", s.sleeping)?;
        d.set_item("sleep_linear_speed", s.sleep_linear_speed)?;
        d.set_item("sleep_angular_speed", s.sleep_angular_speed)?;
        d.set_item("time_to_sleep", s.time_to_sleep)?;
        Ok(d)
    }

    /// How many substeps a frame of ``dt`` seconds runs: ``ceil(dt / max_substep)``, with a
    /// relative tolerance of 1e-5 for rounding (a typed ``0.0166667`` is four 1/240 s
    /// substeps, not five). ValueError where ``step(dt)`` would refuse the frame (more than
    /// 100,000 substeps).
    fn substeps_for(&self, dt: f64) -> PyResult<u32> {
        let dt = frame_dt(dt)?;
        let settings = self.world.settings();
        settings.check_substeps(dt).map_err(errors::engine)?;
        Ok(settings.substeps_for(dt))
    }

    /// Starts recording every following substep to ``path``: a Lavender log (``.lvlog``;
    /// open it with ``lavender.Log``), or HDF5 for ``.h5``/``.hdf5``. Keyframes (the solver
    /// state, needed to resume) are stored every ``keyframe_every`` frames (0: never).
    ///
    /// The file is created with the first recorded substep: an existing file at ``path`` is
    /// then replaced by a new file (unlinked first, so a ``lavender.Log`` still reading the
    /// old one is unaffected), and left as it was if nothing gets recorded. A path another
    /// recording is writing (this process or another) is refused (OSError). While recording,
    /// ``step(dt)`` takes any frame length whose substeps are the recording's (``resume``
    /// replays with them); another substep length is refused. A Sim from ``Log.resume``
    /// records under the original run's scene hash, so ``Log.diff`` compares the two
    /// directly, and refuses to record over the log it was resumed from (ValueError).
    /// The recording ends with
    /// ``stop_recording()`` or when the Sim is garbage-collected; both write the footer. A
    /// step that goes non-finite ends it too, with the substep that did as its last frame
    /// (the NonFiniteError names the log); ``stop_recording()`` then returns None.
    /// An array read in place from the Sim (``constraint_data(copy=False)``, ...) keeps it
    /// alive, so ``del sim`` alone leaves the log unfinished while such an array exists:
    /// call ``stop_recording()``.
    #[pyo3(signature = (path, keyframe_every = 16))]
    fn record(
        &mut self,
        path: &Bound<'_, PyAny>,
        #[pyo3(from_py_with = crate::log::whole_arg::keyframe_every)] keyframe_every: i64,
    ) -> PyResult<()> {
        let keyframe_every = crate::log::non_negative("keyframe_every", keyframe_every)?;
        if let Some(r) = &self.recording {
            return Err(errors::value(format!(
                "already recording to {}: call stop_recording() first",
                r.path.display()
            )));
        }
        let path: PathBuf = path.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "path must be a str or os.PathLike, got {}",
                convert::describe(path)
            ))
        })?;
        let options = RecordOptions {
            keyframe_every,
            ..RecordOptions::default()
        };
        // The writer unlinks an existing file rather than truncating it, so a `Log` still
        // mapping it keeps reading the old contents.
        // Never over the scene file or the log the Sim was resumed from.
        let inputs: Vec<&Path> = self
            .scene_file
            .iter()
            .chain(self.origin.as_ref().map(|o| &o.log))
            .map(PathBuf::as_path)
            .collect();
        check_record_output(&path, &inputs).map_err(errors::replay)?;
        let mut header = header_for(&self.scene, &self.world, self.frame_dt);
        if let Some(origin) = &self.origin {
            header.scene_hash = origin.scene_hash;
        }
        let recorder = Recorder::create_with_header(&path, &header, &self.world, options)
            .map_err(errors::replay)?;
        self.recording = Some(Recording {
            recorder: Mutex::new(recorder),
            path,
        });
        Ok(())
    }

    /// Ends the recording: writes the footer index and closes the file. Returns a dict
    /// ``{"path", "frames", "bytes"}``, or None when not recording. With no substep recorded
    /// there is no file: ``frames`` and ``bytes`` are 0, with a RuntimeWarning. A step that
    /// raised (NonFiniteError, a failed write) has already ended the recording, its error
    /// saying where the file is and what it holds; ``stop_recording()`` then returns None.
    fn stop_recording<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = self.recording.take() else {
            return Ok(None);
        };
        let recorder = r
            .recorder
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let summary = py.detach(|| recorder.finish()).map_err(errors::replay)?;
        if summary.frames == 0 {
            runtime_warning(
                py,
                format!(
                    "nothing was recorded (no substep ran since record()); {} was not created \
                     and a file already there was left as it was",
                    summary.path.display()
                ),
            )?;
        }
        let d = PyDict::new(py);
        d.set_item("path", summary.path.display().to_string())?;
        d.set_item("frames", summary.frames)?;
        d.set_item("bytes", summary.bytes)?;
        Ok(Some(d))
    }

    /// The path being recorded to, or None.
    #[getter]
    fn recording(&self) -> Option<String> {
        self.recording
            .as_ref()
            .map(|r| r.path.display().to_string())
    }

    /// Simulation time, s.
    #[getter]
    fn time(&self) -> f64 {
        self.world.time()
    }

    /// Substeps completed since the Sim was built.
    #[getter]
    fn substeps_done(&self) -> u64 {
        self.world.substeps_done()
    }

    /// The default frame dt of ``step()``, s.
    #[getter]
    fn frame_dt(&self) -> f32 {
        self.frame_dt
    }

    /// The scene's run length (``run()``'s default), s.
    #[getter]
    fn duration(&self) -> f32 {
        self.scene.duration()
    }

    /// The scene's one-line description.
    #[getter]
    fn description(&self) -> &str {
        &self.scene.description
    }

    /// Body names, in index order.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.world.bodies().names().to_vec()
    }

    /// Joint names, in index order (the rows of ``constraint_data()``).
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        self.world.joints().names().to_vec()
    }

    /// Joint kinds (``"revolute"``, ``"spherical"``, ``"fixed"``, ``"prismatic"``), in index
    /// order.
    #[getter]
    fn joint_kinds(&self) -> Vec<&'static str> {
        self.world
            .joints()
            .kinds()
            .iter()
            .map(|k| k.name())
            .collect()
    }

    /// Number of bodies.
    #[getter]
    fn body_count(&self) -> usize {
        self.world.body_count()
    }

    /// Number of joints.
    #[getter]
    fn joint_count(&self) -> usize {
        self.world.joint_count()
    }

    /// Number of sleeping bodies (always 0 unless the ``sleeping`` setting is on).
    #[getter]
    fn sleeping_body_count(&self) -> usize {
        self.world.sleeping_body_count()
    }

    /// Number of sleeping islands (connected groups of dynamic bodies through joints).
    #[getter]
    fn sleeping_island_count(&self) -> usize {
        self.world.sleeping_island_count()
    }

    /// Whether a body (by name or index) sleeps: its island has rested for
    /// ``time_to_sleep`` seconds, so its velocities are zero and steps leave its pose
    /// unchanged. Always False for static and kinematic bodies and with ``sleeping`` off.
    fn is_body_sleeping(&self, body: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.world
            .is_body_sleeping(self.body(body)?)
            .map_err(errors::engine)
    }

    /// Per-body rest timers, a ``(bodies,)`` float32 array (copy), s: how long each body
    /// has stayed below both ``sleep_linear_speed`` (m/s) and ``sleep_angular_speed``
    /// (rad/s). An island sleeps once every timer in it reaches ``time_to_sleep``; the timers
    /// of a sleeping island are frozen. 0 for static and kinematic bodies and with
    /// ``sleeping`` off.
    fn sleep_timers<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        PyArray1::from_slice(py, self.world.sleep_timers())
    }

    /// Wakes every sleeping island and resets every rest timer to 0, without advancing time.
    /// (``set_body_pose`` and ``set_body_velocity`` already wake the island they touch.)
    fn wake_all(&mut self) {
        self.world.wake_all();
        self.changed_by_hand();
    }

    /// Kinetic plus gravitational potential energy of the dynamic bodies, J, computed as
    /// the recorder computes it for a log frame's ``total_energy`` (equal to the engine's
    /// ``World::total_energy`` within 1e-7 relative).
    fn total_energy(&self) -> f64 {
        lavender_replay::recorder::total_energy(&self.world)
    }

    /// The solver state that, with the poses and velocities, determines the next substep: a
    /// float32 array (copy) of the warm-start impulses, 6 per joint in row-slot order (N s or
    /// N m s; the sixth a limit's, signed by its stop: ``+`` the lower, ``-`` the upper,
    /// and +-``numpy.finfo(numpy.float32).tiny`` where the projection pushed the joint back
    /// from that stop without an impulse of the velocity solve, which gives the next substep
    /// that stop's row), then, with ``sleeping`` on, each body's rest timer. What a log's
    /// keyframes store (``Frame.solver_state``) and ``state_hash`` covers.
    fn solver_state<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        PyArray1::from_slice(py, self.world.solver_state())
    }

    /// A 64-bit hash of the full state (poses, velocities, warm-start impulses), the one a
    /// log frame stores as ``state_hash``: equal states hash equal on every build.
    fn state_hash(&self) -> u64 {
        lavender_replay::recorder::world_state_hash(&self.world)
    }

    /// The scene the Sim was built from, as TOML text (settings overrides not included); with
    /// `current=True`, the world as it is now: every body in its current pose and velocity and
    /// every joint as explicit tables, with the settings in force and the frame `dt`, such
    /// that `Sim.from_toml` of the text builds the same world bit for bit (without the
    /// warm-start impulses, the sleep state and the clock: a run continued from it departs
    /// from the original; `Log.resume` continues a recorded run bit for bit).
    #[pyo3(signature = (current = false))]
    fn scene_toml(&self, current: bool) -> PyResult<String> {
        if current {
            let scene = Scene::from_world(&self.world, self.frame_dt).map_err(errors::engine)?;
            Ok(scene.to_toml_string())
        } else {
            Ok(self.scene.to_toml_string())
        }
    }

    /// A Sim is not copied (its world, recording and thread pool are one run's): says what
    /// to do instead (QA 2026-12-06: `copy.copy` said "cannot pickle").
    fn __copy__(&self) -> PyResult<()> {
        Err(not_copyable())
    }

    /// See `__copy__`.
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(not_copyable())
    }

    /// See `__copy__`: pickling refuses with the same advice.
    fn __reduce__(&self) -> PyResult<()> {
        Err(not_copyable())
    }

    /// Never raises: a Sim another thread is stepping says so (a debugger shows it).
    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let Ok(this) = slf.try_borrow() else {
            return "<lavender.Sim: busy, another thread is stepping it>".to_string();
        };
        format!(
            "<lavender.Sim: {} bodies, {} joints, t = {:.6} s, {} substeps{}>",
            this.world.body_count(),
            this.world.joint_count(),
            this.world.time(),
            this.world.substeps_done(),
            match &this.recording {
                Some(r) => format!(", recording to {}", r.path.display()),
                None => String::new(),
            }
        )
    }
}

/// Why a Sim cannot be copied or pickled, and what to do instead.
fn not_copyable() -> PyErr {
    pyo3::exceptions::PyTypeError::new_err(
        "a lavender.Sim cannot be copied or pickled: build a second one from the scene as it is \
         now, lavender.Sim.from_toml(sim.scene_toml(current=True)) (the same world bit for bit, \
         without the warm-start impulses), or record the run and continue it exactly with \
         lavender.Log(path).resume(substep)",
    )
}

impl Drop for Sim {
    /// Closes a recording still in progress, so that the log has its footer.
    fn drop(&mut self) {
        if let Some(r) = self.recording.take() {
            let recorder = r
                .recorder
                .into_inner()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Err(e) = recorder.finish() {
                eprintln!(
                    "lavender: closing the recording {} failed: {e}",
                    r.path.display()
                );
            }
        }
    }
}
