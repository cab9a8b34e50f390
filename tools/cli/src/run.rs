//! `lavender run`: run a scene and summarise its residuals.

use crate::output::{count, emit, emit_json, progress};
use anyhow::{bail, Context};
use lavender_engine::{ResidualMax, Scene, SubstepInfo, World};
use lavender_replay::recorder::{OutputKind, Recorder};
use lavender_replay::scrub::EnergySummary;
use std::path::Path;
use std::time::Instant;

/// Run a scene (a shipped scene's name or a TOML file) and print steps, substeps, wall time,
/// the largest and final anchor error, the largest angular error and limit violation, the
/// joint that held the worst anchor error, and the total energy at the start and the end
/// with how far it rose above the start.
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:\n  lavender run                              the default scene: the 100-link chain\n  lavender run pendulum --duration 10\n  lavender run data/scenes/grid.toml --dt 0.008333 --velocity-iterations 16 --json\n                                            a scene file (this one: from the repository's root)\n  lavender run chain --duration 2 --record run.lvlog\n                                            record every substep (then: lavender scrub run.lvlog)\n  lavender run pendulum --record run.h5     record straight to HDF5\n  lavender run grid --sleep --duration 6    let islands at rest sleep (off by default)\n  lavender run grid --bias-iterations 2     8 velocity passes, 2 of them with a bias pass\n  lavender run SCENE --bias-iterations all  a bias pass with every velocity pass (the default), whatever SCENE sets\n  lavender run chain --scalar               the scalar reference path (same bits, slower)\n  lavender run hub                          a light hub among heavy parts, solved directly\n  lavender run grid --chain-solve --velocity-iterations 1 --position-iterations 1\n                                            the net's columns solved directly, one pass\n  lavender run chain --no-warm-start --max-anchor-error 0.01\n                                            exit 1 (stopping there) once a joint is 1 cm apart\n  lavender scenes                           lists the shipped scene names"
)]
pub struct Args {
    /// A shipped scene's name (see `lavender scenes`) or a path to a scene TOML file.
    /// Default: the shipped `chain` scene.
    #[arg(value_parser = utf8_scene())]
    scene: Option<String>,
    /// Number of frames to run (default: the scene's duration / dt).
    #[arg(long, conflicts_with = "duration", value_parser = crate::output::whole::<u64>)]
    steps: Option<u64>,
    /// Simulated seconds to run (default: the scene's `duration`).
    #[arg(long, value_parser = crate::output::number::<f64>)]
    duration: Option<f64>,
    /// Frame time step in seconds (default: the scene's `dt`, else 1/60); each frame runs
    /// ceil(dt / max_substep) substeps.
    #[arg(long, value_parser = crate::output::number::<f64>)]
    dt: Option<f64>,
    /// The longest substep in seconds (default: the scene's `[world] max_substep`, else
    /// 1/240): each frame runs ceil(dt / max_substep) equal substeps. Shorter substeps are what
    /// holds light links under heavy loads and fast swings (the build's warnings name the
    /// value to use), e.g. `--max-substep 0.001`. A recorded run keeps it.
    #[arg(long, value_name = "SECONDS", value_parser = parse_max_substep)]
    max_substep: Option<f32>,
    #[command(flatten)]
    solver: crate::solver_args::SolverArgs,
    /// Record every substep to this file: a Lavender log (`.lvlog`) or HDF5 (`.h5`, `.hdf5`).
    /// An existing file at PATH is replaced (by a new file, from the first recorded substep
    /// on). Ctrl-C stops the run after the substep being stepped (inside a frame too) with the
    /// log finished (exit code 130).
    #[arg(long, value_name = "PATH")]
    record: Option<std::path::PathBuf>,
    /// Fail once any joint's anchor error exceeds METERS at any substep: the run stops at
    /// that substep (a recording is finished there, its last frame the one that went over), the summary says which joint
    /// went over, when and how far, and the exit code is 1. For batch runs and CI: a run
    /// whose joints came apart fails even where every value stayed finite (a non-finite
    /// state is an error, exit code 2, either way).
    #[arg(long, value_name = "METERS", value_parser = parse_tolerance)]
    max_anchor_error: Option<f64>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

/// `--max-substep`: a duration in seconds, positive and a normal number in single precision.
fn parse_max_substep(text: &str) -> Result<f32, String> {
    match text.parse::<f64>() {
        Ok(h) if h.is_finite() && h as f32 >= f32::MIN_POSITIVE && (h as f32).is_finite() => {
            Ok(h as f32)
        }
        _ => Err(format!(
            "`{text}` is not a positive number of seconds within single precision: give e.g. \
             0.004166667 (1/240 s, the default) or 0.001"
        )),
    }
}

/// `--max-anchor-error`: a distance in metres, finite and not negative.
pub(crate) fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "`{text}` is not a distance in metres (a finite number, 0 or more, e.g. 0.001)"
        )),
    }
}

/// A joint's anchor error at one substep: the largest over a run, or the first over
/// `--max-anchor-error` (`run` and `resume`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnchorPeak {
    pub substep: u64,
    /// s.
    pub time: f64,
    pub joint: usize,
    /// m.
    pub anchor_error: f32,
}

impl AnchorPeak {
    /// The peak as the first over `--max-anchor-error` `tolerance` (m), in words.
    pub fn over(&self, joint_name: &str, tolerance: f64) -> String {
        format!(
            "joint `{joint_name}` reached an anchor error of {:.3e} m at substep {} (t = {:.4} \
             s), over --max-anchor-error {tolerance:.3e} m",
            self.anchor_error, self.substep, self.time,
        )
    }

    /// Where to look at it: the `scrub` command for its substep, where `log` is a Lavender log.
    pub fn scrub_hint(&self, log: Option<&lavender_replay::LogSummary>) -> String {
        match log {
            Some(log) if OutputKind::of(&log.path) == OutputKind::Log => format!(
                " (`lavender scrub {} --at {}` shows that substep)",
                log.path.display(),
                self.substep
            ),
            _ => String::new(),
        }
    }
}

/// Where a run that went over `--max-anchor-error` stopped: after `done` of `asked` frames,
/// and `partial` substeps into the next where it went over inside a frame.
pub(crate) fn stopped_where(done: u64, asked: u64, partial: Option<u64>) -> String {
    format!(
        "stopped after frame {done} of {asked}{}",
        partial.map_or_else(String::new, |n| format!(
            " and {} of the next",
            count(n, "substep")
        ))
    )
}

/// A run that went over `--max-anchor-error`: `output::finish` exits with code 1 on it.
#[derive(Debug)]
pub struct ToleranceExceeded(pub String);

impl std::fmt::Display for ToleranceExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToleranceExceeded {}

/// The scene argument as text, or an error that names it (clap's own says only that some
/// argument was not UTF-8): the name is kept in the summary and the log's header as text.
fn utf8_scene() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().try_map(|scene| {
        scene.into_string().map_err(|scene| {
            format!(
                "the scene path {} is not valid UTF-8: rename the file (or link to it from a \
                 UTF-8 name); a run keeps its scene's name as text",
                std::path::Path::new(&scene).display()
            )
        })
    })
}

/// Loads a scene by shipped name or path; returns it with the file it comes from. As in the
/// Python `Sim`, an argument that looks like a path (a `/` or `\` in it, or a `.toml` ending)
/// is one; otherwise a shipped scene's name wins (a file of that name in the working
/// directory, such as the output of `lavender run chain > chain`, does not hide it; `./name`
/// reads the file), and a file is read when no shipped scene has the name.
pub fn load_scene(name: Option<&str>) -> anyhow::Result<(Scene, String)> {
    let name = name.unwrap_or("chain");
    let path = Path::new(name);
    let from_file = || -> anyhow::Result<_> { Ok((Scene::load(path)?, name.to_string())) };
    if name.contains(['/', '\\']) || name.ends_with(".toml") {
        // `pendulum.toml` where no such file is: the shipped scene of that name, if there is
        // one, is what was meant (QA 2026-12-07).
        let stem = name.strip_suffix(".toml").filter(|_| !path.exists());
        return match stem.filter(|s| Scene::builtin(s).is_ok()) {
            Some(stem) => from_file().with_context(|| {
                format!("no file {name}; the shipped scene is `lavender run {stem}`")
            }),
            None => from_file(),
        };
    }
    match Scene::builtin(name) {
        Ok(scene) => Ok((scene, format!("data/scenes/{name}.toml"))),
        Err(_) if path.is_file() => from_file(),
        Err(e) => Err(e).with_context(|| {
            format!("`{name}` is neither a file nor a shipped scene (see `lavender scenes`)")
        }),
    }
}

pub fn main(args: Args) -> anyhow::Result<()> {
    if let Some(path) = &args.record {
        // The scene file, if one was named, must survive the run.
        let scene_file = args.scene.as_deref().map(Path::new);
        lavender_replay::files::check_record_output(path, scene_file.as_slice())?;
    }
    let (scene, file) = load_scene(args.scene.as_deref())?;
    let mut settings = scene.settings();
    args.solver
        .apply(&mut settings, &format!("the scene file {file}"))?;
    if let Some(h) = args.max_substep {
        settings.max_substep = h;
    }
    if let Some(dt) = scene.world.dt.filter(|dt| !(dt.is_finite() && *dt > 0.0)) {
        bail!(
            "the scene file {file} sets `[world] dt = {dt}`, which is not a positive number of \
             seconds: set it to e.g. 0.016666667 (1/60 s), or remove it for that default"
        );
    }
    // Checked as given (f64), then as the engine will use it (f32, a normal number).
    if let Some(given) = args.dt {
        let single = given as f32;
        if !(given.is_finite() && single.is_finite() && single >= f32::MIN_POSITIVE) {
            let shown = if given != 0.0 && !(1e-4..1e9).contains(&given.abs()) {
                format!("{given:e}")
            } else {
                given.to_string()
            };
            bail!(
                "--dt {shown} is not a positive number of seconds within single precision \
                 (1.2e-38 to 3.4e38): give e.g. --dt 0.016666667 (1/60 s)"
            );
        }
    }
    let dt = args.dt.map_or_else(|| scene.frame_dt(), |d| d as f32);
    settings.validate()?;
    settings.check_substeps(dt)?;
    let steps = match (args.steps, args.duration) {
        // The bound a duration is held to (QA 2026-12-06: `--steps 1e12` ran on unchecked).
        (Some(n), _) if n > lavender_engine::MAX_RUN_FRAMES => {
            bail!("--steps {n} is more frames than any run can step (at most 1e12); give fewer")
        }
        (Some(n), _) => n,
        // Checked as given (a 1e39 read as f32 would be reported as inf), then in f32.
        (None, Some(d)) if d.is_finite() && (0.0..=f64::from(f32::MAX)).contains(&d) => {
            let frames = d / f64::from(dt);
            // Beyond this a run would not end in any lifetime (QA: 1e30 s saturated to 2^64
            // frames and ran on).
            if frames > lavender_engine::MAX_RUN_FRAMES as f64 {
                bail!(
                    "--duration {d:e} s is {frames:.1e} frames of {dt} s, more than any run can \
                     step (at most 1e12 frames); give a shorter duration"
                );
            }
            (d as f32 / dt).round() as u64
        }
        (None, Some(d)) => bail!(
            "--duration {d:?} is not a finite, non-negative number of seconds (single precision: \
             at most 3.4e38)"
        ),
        (None, None) => {
            // The scene's duration over a tiny dt (QA, 2026-12-06: `--dt 1e-30` ran 2^64
            // frames) is held to the same bound.
            let frames = f64::from(scene.duration()) / f64::from(dt);
            if frames > lavender_engine::MAX_RUN_FRAMES as f64 {
                bail!(
                    "the scene's duration of {} s is {frames:.1e} frames of {dt:e} s, more than \
                     any run can step (at most 1e12 frames); give a larger --dt, or --steps N \
                     or --duration S",
                    scene.duration()
                );
            }
            (scene.duration() / dt).round() as u64
        }
    };
    // A duration that is not a whole number of frames runs the nearest whole number: say so.
    if let (None, Some(d)) = (args.steps, args.duration) {
        let ran = steps as f64 * f64::from(dt);
        if steps > 0 && (ran - d).abs() > 1e-6 * d.max(f64::from(dt)) {
            eprintln!(
                "note: --duration {d} s is {:.4} frames of {dt} s; running {} ({ran:.6} s)",
                d / f64::from(dt),
                crate::output::count(steps, "frame")
            );
        }
    }
    if steps == 0 {
        let why = match (args.steps, args.duration) {
            (Some(_), _) => "--steps 0".to_string(),
            (None, d) => format!(
                "a duration of {} s is less than half a frame of {dt} s",
                d.map_or_else(|| scene.duration(), |d| d as f32)
            ),
        };
        // A recording of nothing would still replace an existing file.
        if let Some(path) = &args.record {
            bail!(
                "nothing to record to {}: 0 frames to run ({why}); pass --steps N or --duration S",
                path.display()
            );
        }
        eprintln!("note: 0 frames to run ({why}); pass --steps N or --duration S");
    }
    // The substeps judged against each swing are those of the frames run (`--dt`).
    let mut world = scene.build_for(settings, dt)?;
    if let Some(warning) = world.settings().threads_warning() {
        eprintln!("warning: {warning}");
    }
    let far_from_origin = world.far_from_origin_warning();
    if let Some(warning) = &far_from_origin {
        eprintln!("warning: {warning}");
    }
    let name = args.scene.clone().unwrap_or_else(|| "chain".into());
    if world.body_count() == 0 {
        // Valid (an empty world steps), but most often the wrong file (QA 2026-12-06).
        eprintln!(
            "note: {name} has no bodies (an empty or comments-only scene file?): nothing moves"
        );
    }
    tracing::info!(scene = %name, steps, dt, "running");
    let bar = progress(steps, &format!("running {name}"));
    let start = Instant::now();
    let mut max = ResidualMax::default();
    // Checked at the end of every frame (at every substep it cost 4 % of the 100 x 100
    // chain's step, O(bodies) on one thread): a run without drives should not gain energy.
    let mut energy = EnergySummary::starting_at(world.total_energy());
    let mut substeps = 0u64;
    let mut recorder = match &args.record {
        Some(path) => Some(
            Recorder::create(path, &scene, &world, dt)
                .with_context(|| format!("cannot record to {}", path.display()))?,
        ),
        None => None,
    };
    // A Ctrl-C stops the run after the substep being stepped (a frame can be thousands of
    // substeps, `--dt 100`): the log is finished (footer, index) and the summary covers the
    // frames and substeps run.
    crate::interrupt::stop_cleanly();
    if let Some(path) = &args.record {
        crate::interrupt::writing(path);
    }
    let mut done = 0u64;
    // The first frame (of every 16th: O(joints) each) whose joints act farther from a body's
    // centre than single precision holds: a run can come apart there and end back within it
    // (QA, 2026-12-06: `hub-100-sliders.toml` reached 82 m of anchor error at 4.4 s, its
    // sliders 90 m out, and ended without a word; its hub system in `f64` holds it now, and
    // joints the hub solve takes are not counted).
    let mut far_from = None;
    let mut exceeded: Option<AnchorPeak> = None;
    // Set by the observer at the substep that went over: the step stops there (a frame can
    // be thousands of substeps, `--dt 100`).
    let over_tolerance = std::cell::Cell::new(false);
    let mut direct = DirectSolves::default();
    // Substeps of a frame a Ctrl-C ended early (a long `--dt`): the world keeps them.
    let mut partial_frame = None;
    if world.settings().sleeping {
        // Before the first step every island is awake (the schedule is the first step's).
        direct.fold(&mut world);
    }
    for _ in 0..steps {
        if crate::interrupt::requested() || exceeded.is_some() {
            break;
        }
        let mut record_error = None;
        // The substep that goes non-finite is recorded (scrub shows where), not summarised.
        let mut observer = |w: &World, info: SubstepInfo| {
            if info.finite {
                max.fold(w.constraint_data());
                // The maxima are the first over it, so the joint holding the maximum is the
                // one that went over, at this substep.
                if let (Some(tolerance), None) = (args.max_anchor_error, &exceeded) {
                    if f64::from(max.anchor_error) > tolerance {
                        exceeded = Some(AnchorPeak {
                            substep: info.substep,
                            time: info.time,
                            joint: max.anchor_joint,
                            anchor_error: max.anchor_error,
                        });
                        over_tolerance.set(true);
                    }
                }
            }
            if let (Some(r), None) = (recorder.as_mut(), &record_error) {
                record_error = r.record(w, info).err();
            }
        };
        // Between two substeps of a frame too (a long `--dt`).
        let stepped = world.step_stoppable(dt, Some(&mut observer), true, &mut || {
            crate::interrupt::requested() || over_tolerance.get()
        });
        let report = match stepped {
            Ok(report) => report,
            Err(e) => {
                // Keep the log of the run up to the failure: it is what `scrub` is for.
                let kept = recorder.take().and_then(|r| r.finish().ok());
                match &kept {
                    Some(log) if log.frames == 0 => eprintln!(
                        "nothing was recorded (the first substep failed); {} was left as it was",
                        log.path.display()
                    ),
                    Some(log) => {
                        // Substeps of the failed step recorded before it failed.
                        let rolled_back = (log.frames as u64).saturating_sub(substeps);
                        eprintln!(
                            "the recording up to the failure is in {} ({}{})",
                            log.path.display(),
                            crate::output::count(log.frames as u64, "frame"),
                            match rolled_back {
                                0 => String::new(),
                                1 => format!(
                                    "; the last is the substep that went non-finite, {}",
                                    crate::output::failure_viewer(&log.path)
                                ),
                                n => format!(
                                    "; the last {n} are from the failed step, which the world \
                                     rolled back, the last of them the substep that went \
                                     non-finite ({})",
                                    crate::output::failure_viewer(&log.path)
                                ),
                            }
                        )
                    }
                    None => {}
                }
                let e = anyhow::Error::from(e);
                if args.json {
                    // The run up to the failure, and the failure, as one object.
                    let wall = start.elapsed().as_secs_f64();
                    let mut json =
                        Summary::of(&name, &world, done, substeps, dt, wall, (&max, &energy))
                            .json();
                    json["error"] = crate::output::error_json(&e, 2)["error"].take();
                    if let Some(log) = kept.filter(|l| l.frames > 0) {
                        json["record"] = serde_json::json!({
                            "path": log.path,
                            "frames": log.frames,
                            "bytes": log.bytes,
                        });
                    }
                    emit_json(&json)?;
                }
                return Err(e);
            }
        };
        if let Some(e) = record_error {
            let recorded = recorder.as_ref().map(|r| r.frames());
            // The recording ends here (its thread stopped at the error; a log that failed a
            // write gets no footer), then the log says how many frames it kept.
            drop(recorder.take().map(Recorder::finish));
            let kept = what_a_failed_recording_kept(args.record.as_deref(), recorded);
            let e = anyhow::Error::from(e).context(format!("recording failed{kept}"));
            if args.json {
                // As for a failed step: the run up to the failure, and the failure, as one
                // object (QA 2026-12-08: a full disk's run printed only the error).
                let wall = start.elapsed().as_secs_f64();
                // The frame whose substep failed to record was run: the world is past it.
                substeps += u64::from(report.substeps);
                let frames = done + 1;
                let mut json =
                    Summary::of(&name, &world, frames, substeps, dt, wall, (&max, &energy)).json();
                json["error"] = crate::output::error_json(&e, 2)["error"].take();
                emit_json(&json)?;
            }
            return Err(e);
        }
        substeps += u64::from(report.substeps);
        if report.stopped_early {
            energy.fold(world.total_energy(), world.substeps_done() - 1);
            partial_frame = Some(report.substeps);
            break;
        }
        // At the end of every frame (at every substep it cost 4 % of the 100 x 100 chain's
        // step, O(bodies) on one thread).
        energy.fold(world.total_energy(), world.substeps_done() - 1);
        if world.settings().sleeping {
            direct.fold(&mut world);
        }
        if far_from.is_none() && done.is_multiple_of(16) {
            far_from = world
                .far_levers_warning()
                .map(|warning| (done + 1, world.time(), warning));
        }
        done += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    // A run can end finite and still past what f32 holds (a slider run far out): say so, and
    // from when.
    if let Some((frame, time, warning)) = far_from {
        eprintln!(
            "warning: from frame {frame} (t = {time:.3} s) on, {warning}; results from there on \
             are not reliable"
        );
    }
    if let Some(warning) = world.far_levers_warning() {
        eprintln!("warning: at the end of the run {warning}");
    }
    if far_from_origin.is_none() {
        if let Some(warning) = world.far_from_origin_warning() {
            eprintln!("warning: at the end of the run {warning}");
        }
    }
    // The state stays finite, so the step goes on, but a square of a speed or distance
    // beyond what f32 holds is inf; so is an anchor error that was inf at any frame.
    if let Some(warning) = world.overflow_warning() {
        eprintln!("warning: {warning}");
    } else if !max.anchor_error.is_finite() {
        eprintln!(
            "warning: an anchor error overflowed single precision (inf) during the run; \
             those values are not reliable"
        );
    }
    let frames_recorded = recorder.as_ref().map(|r| r.frames());
    // HDF5 writes most of a short run at the end (blocks of 32 MB): a full disk shows here
    // (QA 2026-12-08: the bare HDF5 error, without what became of the file).
    let log = match recorder.map(|r| r.finish()).transpose() {
        Ok(log) => log,
        Err(e) => {
            let kept = what_a_failed_recording_kept(args.record.as_deref(), frames_recorded);
            return Err(e).context(format!(
                "the run finished but finishing its recording failed{kept}"
            ));
        }
    };
    direct.fold(&mut world);
    let mut summary = Summary::of(&name, &world, done, substeps, dt, wall, (&max, &energy));
    // With the chain solve: how many chains, and joints in them, the schedule found.
    summary.chains = world.settings().chain_solve.then_some(direct.chains);
    // Hubs (bodies with many joints) the schedule solves directly, if any.
    summary.hubs = (direct.hubs.most.0 > 0).then_some(direct.hubs);
    let interrupted = done < steps && exceeded.is_none();
    // Which joint went over --max-anchor-error, when and how far, in words.
    let over = exceeded.map(|e| {
        e.over(
            &world.joints().names()[e.joint],
            args.max_anchor_error.unwrap_or_default(),
        )
    });
    let emitted = if args.json {
        let mut json = summary.json();
        // Both keys always (null without the flag), so a script reads them whatever was asked
        // (QA 2026-12-08: absent without `--max-anchor-error`).
        json["max_anchor_error_tolerance"] = serde_json::json!(args.max_anchor_error);
        json["tolerance_exceeded"] = serde_json::Value::Null;
        if args.max_anchor_error.is_some() {
            json["tolerance_exceeded"] = match exceeded {
                Some(e) => serde_json::json!({
                    "joint": world.joints().names()[e.joint],
                    "joint_index": e.joint,
                    "substep": e.substep,
                    "time": e.time,
                    "anchor_error": e.anchor_error,
                    "frames_run": done,
                    "frames_asked": steps,
                    "substeps_into_next_frame": partial_frame.unwrap_or(0),
                }),
                None => serde_json::Value::Null,
            };
        }
        if let Some(log) = &log {
            json["record"] = serde_json::json!({
                "path": log.path,
                "frames": log.frames,
                "bytes": log.bytes,
            });
        }
        if interrupted {
            json["interrupted"] = serde_json::json!({
                "frames_run": done,
                "frames_asked": steps,
                "substeps_into_next_frame": partial_frame.unwrap_or(0),
            });
        }
        emit_json(&json)
    } else {
        let mut text = summary.text();
        if let Some(over) = &over {
            text.push_str(&format!(
                "tolerance           exceeded: {over}; {}\n",
                stopped_where(done, steps, partial_frame.map(u64::from))
            ));
        }
        if let Some(log) = &log {
            text.push_str(&format!(
                "recorded            {} (one per substep), {} to {}\n",
                crate::output::count(log.frames as u64, "frame"),
                human_bytes(log.bytes),
                log.path.display()
            ));
        }
        emit(&text)
    };
    emitted?;
    if interrupted {
        let kept = crate::output::interrupted_log(log.as_ref());
        return Err(crate::interrupt::Interrupted(format!(
            "interrupted after {done} of {steps} frames{} (t = {:.4} s){kept}",
            partial_frame.map_or_else(String::new, |n| format!(
                " and {} of the next",
                count(u64::from(n), "substep")
            )),
            world.time()
        ))
        .into());
    }
    if let (Some(over), Some(e)) = (over, exceeded) {
        let scrub = e.scrub_hint(log.as_ref());
        return Err(ToleranceExceeded(format!(
            "the run failed its tolerance: {over}; {}{scrub}",
            stopped_where(done, steps, partial_frame.map(u64::from))
        ))
        .into());
    }
    Ok(())
}

/// `1234567` -> `"1.2 MB (1234567 bytes)"`.
pub fn human_bytes(bytes: u64) -> String {
    let units = [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    let b = bytes as f64;
    match units.iter().find(|(_, s)| b >= *s) {
        Some((u, s)) => format!("{:.1} {u} ({bytes} bytes)", b / s),
        None => format!("{bytes} bytes"),
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
    /// Total energy at the start (before the first frame) and after each frame, J.
    energy: EnergySummary,
    final_anchor_error: f32,
    worst_joint: Option<String>,
    /// `"wide"` or `"scalar"`.
    solver_path: &'static str,
    /// With sleeping on: sleeping bodies, sleeping islands and all islands, at the end.
    sleeping: Option<(usize, usize, usize)>,
    /// With the chain solve on: chains and the joints in them.
    chains: Option<Solved>,
    /// Hubs solved directly and their joints (`None` without hubs).
    hubs: Option<Solved>,
    /// The settings the run used (a saved summary says what it was made with).
    settings: lavender_engine::Settings,
}

/// How many groups (chains, hubs) and joints in them the schedule solved directly: the most
/// at the end of any frame, and at the end of the run. With sleeping on the schedule holds
/// the awake islands only, so a run that comes to rest ends with none (QA 2026-12-07: "0
/// chains, 0 of 741 joints solved directly" for a net that ran 20 chains, then slept).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Solved {
    /// Groups and joints when the most joints were.
    most: (usize, usize),
    /// Groups and joints at the end.
    at_end: (usize, usize),
}

impl Solved {
    fn fold(&mut self, now: (usize, usize)) {
        if now.1 > self.most.1 {
            self.most = now;
        }
        self.at_end = now;
    }

    fn json(&self, group: &str) -> serde_json::Value {
        serde_json::json!({
            group: self.most.0,
            "joints": self.most.1,
            "at_end": { group: self.at_end.0, "joints": self.at_end.1 },
        })
    }

    /// " (the most at once; N and M at the end, the rest asleep)" where the end had fewer.
    fn at_end_text(&self, group: &str) -> String {
        if self.at_end == self.most {
            String::new()
        } else {
            format!(
                " (the most at once; {} and {} at the end, the rest asleep)",
                count(self.at_end.0 as u64, group),
                count(self.at_end.1 as u64, "joint")
            )
        }
    }
}

/// The chains and the hubs the schedule solves directly over a run ([`Solved`]).
#[derive(Default)]
struct DirectSolves {
    chains: Solved,
    hubs: Solved,
}

impl DirectSolves {
    /// Takes in the schedule now (between steps it is the one the next substep solves).
    fn fold(&mut self, world: &mut World) {
        let s = world.schedule();
        let chains = s.chain_groups.iter().map(|g| g.lanes as usize).sum();
        self.chains.fold((chains, s.chain_joints.len()));
        let hub_joints = s.hubs.iter().map(|h| h.joints.len()).sum();
        self.hubs.fold((s.hubs.len(), hub_joints));
    }
}

impl Summary {
    fn of(
        scene: &str,
        world: &World,
        steps: u64,
        substeps: u64,
        dt: f32,
        wall_seconds: f64,
        (max, energy): (&ResidualMax, &EnergySummary),
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
            energy: *energy,
            final_anchor_error,
            solver_path: world.settings().solver_path.name(),
            // A joint is worst only if it was measured with an error at all.
            worst_joint: (world.joint_count() > 0 && substeps > 0 && max.anchor_error > 0.0)
                .then(|| world.joints().names()[max.anchor_joint].clone()),
            sleeping: world.settings().sleeping.then(|| {
                (
                    world.sleeping_body_count(),
                    world.sleeping_island_count(),
                    world.islands().count,
                )
            }),
            chains: None,
            hubs: None,
            settings: *world.settings(),
        }
    }

    /// The solver passes and every setting that differs from its default, in words.
    fn settings_text(&self) -> String {
        let s = &self.settings;
        let d = lavender_engine::Settings::default();
        let bias = match s.bias_iterations {
            Some(b) if b != s.velocity_iterations => format!(" ({b} with a bias pass)"),
            _ => String::new(),
        };
        let switches: String = [
            (s.chain_solve != d.chain_solve, ", chain solve"),
            (
                s.speculative_limits != d.speculative_limits,
                ", speculative limits",
            ),
            (s.sleeping != d.sleeping, ", sleeping"),
            (s.warm_starting != d.warm_starting, ", no warm start"),
            (s.gyroscopic != d.gyroscopic, ", no gyroscopic term"),
            (s.curvature != d.curvature, ", no curvature offsets"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
        // The numbers a scene or a flag changed (QA, 2026-12-06: they were left out).
        let mut numbers = String::new();
        if s.max_substep != d.max_substep {
            numbers += &format!(", substeps of at most {:e} s", s.max_substep);
        }
        if s.error_reduction != d.error_reduction {
            numbers += &format!(", error reduction {}", s.error_reduction);
        }
        if s.projection_factor != d.projection_factor {
            numbers += &format!(", projection factor {}", s.projection_factor);
        }
        if s.gravity != d.gravity {
            numbers += &format!(", gravity {:?} m/s^2", s.gravity.to_array());
        }
        if s.threads != d.threads {
            numbers += &format!(", threads {}", s.threads);
        }
        format!(
            "{}{bias}, {}{numbers}{switches}",
            crate::output::count(s.velocity_iterations, "velocity pass"),
            crate::output::count(s.position_iterations, "projection pass")
        )
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
            "total_energy": {
                "start": self.energy.first,
                "end": self.energy.last,
                "max_rise": self.energy.max_rise,
                "max_rise_substep": self.energy.max_rise_substep,
                "max_regain": self.energy.max_regain,
                "max_regain_from_substep": self.energy.max_regain_from_substep,
                "max_regain_substep": self.energy.max_regain_substep,
                "non_finite_substep": self.energy.non_finite_substep,
            },
            "solver_path": self.solver_path,
            "settings": serde_json::to_value(self.settings).unwrap_or_default(),
            "sleeping": self.sleeping.map(|(bodies, islands, of)| serde_json::json!({
                "bodies": bodies,
                "islands": islands,
                "of_islands": of,
            })),
            "chain_solve": self.chains.map(|c| c.json("chains")),
            "hub_solve": self.hubs.map(|h| h.json("hubs")),
        })
    }

    fn text(&self) -> String {
        format!(
            "scene               {}\n\
             bodies, joints      {}, {}\n\
             steps               {} of {} s ({} substeps)\n\
             wall time           {:.3} s\n\
             max anchor error    {:.3e} m (worst joint: {})\n\
             final anchor error  {:.3e} m\n\
             max angular error   {:.3e} rad\n\
             max limit violation {:.3e} (rad for hinges, m for sliders)\n\
             total energy        {:.6e} J at the start, {:.6e} J at the end{}\n\
             settings            {}\n",
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
            self.energy.first,
            self.energy.last,
            self.energy.rise_text("the start"),
            self.settings_text(),
        ) + &self
            .sleeping
            .map(|(bodies, islands, of)| {
                format!(
                    "sleeping at end     {islands} of {} ({})\n",
                    count(of as u64, "island"),
                    count(bodies as u64, "body")
                )
            })
            .unwrap_or_default()
            + &self
                .chains
                .map(|c| {
                    format!(
                        "chain solve         {}, {} of {} solved directly{}\n",
                        count(c.most.0 as u64, "chain"),
                        c.most.1,
                        count(self.joints as u64, "joint"),
                        c.at_end_text("chain")
                    )
                })
                .unwrap_or_default()
            + &self
                .hubs
                .map(|h| {
                    format!(
                        "hub solve           {}, {} solved directly{}\n",
                        count(h.most.0 as u64, "hub"),
                        count(h.most.1 as u64, "joint"),
                        h.at_end_text("hub")
                    )
                })
                .unwrap_or_default()
            + if self.solver_path == "scalar" {
                "solver path         scalar (the reference: the same bits as the wide path)\n"
            } else {
                ""
            }
    }
}

/// What a recording that failed left at its path, as a clause for the error: an HDF5 file is
/// readable only once finished, so nothing (a `.lvlog` keeps every frame written).
fn what_a_failed_recording_kept(path: Option<&std::path::Path>, frames: Option<u64>) -> String {
    match (path, frames) {
        (Some(path), _) if OutputKind::of(path) == OutputKind::Hdf5 => format!(
            "; {} was left as it was (HDF5 is written to a temporary file and moved into place \
             when finished): record to a .lvlog, which keeps every frame written before a \
             failure, and `lavender export` it",
            path.display()
        ),
        (Some(path), Some(0)) => format!(
            "; nothing was recorded, so {} was left as it was",
            path.display()
        ),
        (Some(path), Some(frames)) => {
            // What a reader recovers from the file (the last frames handed to the recording
            // thread may not have reached it).
            let kept = crate::scrub::open_quietly(path).map(|log| log.len());
            match kept {
                Ok(kept) => format!(
                    "; {} keeps {} of the {frames} recorded, readable by scrub and export",
                    path.display(),
                    count(kept as u64, "frame")
                ),
                Err(_) => format!(
                    "; {} keeps the frames written before the failure (of {frames} recorded), \
                     readable by scrub and export",
                    path.display()
                ),
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_recording_says_what_its_file_kept() {
        let h5 = what_a_failed_recording_kept(Some(Path::new("run.h5")), Some(300));
        assert!(h5.contains("run.h5 was left as it was"), "{h5}");
        assert!(h5.contains("record to a .lvlog"), "{h5}");
        // A log that cannot be read says what it would have kept.
        let log = what_a_failed_recording_kept(Some(Path::new("no-such-run.lvlog")), Some(300));
        assert!(
            log.contains("keeps the frames written before the failure (of 300"),
            "{log}"
        );
        let none = what_a_failed_recording_kept(Some(Path::new("run.lvlog")), Some(0));
        assert!(none.contains("nothing was recorded"), "{none}");
        assert_eq!(what_a_failed_recording_kept(None, None), "");
    }
}
