//! `lavender resume`: continue a recorded run from one of its substeps.

use crate::output::{emit, emit_json, progress};
use crate::run::{human_bytes, stopped_where, AnchorPeak, ToleranceExceeded};
use crate::scrub::open_log;
use anyhow::{bail, Context};
use lavender_replay::recorder::RecordOptions;
use lavender_replay::resume::resume;
use lavender_replay::LogReader;
use std::path::PathBuf;

/// Rebuild a recorded run from its log (scene and settings from the header), restore the
/// poses, velocities, warm-start impulses and clock after substep SUBSTEP, and continue. The
/// continued run reproduces the original frames bit for bit (checked through the state hash
/// of the restored substep). SUBSTEP may lie inside a frame: the rest of that frame is run
/// one substep at a time, then whole frames. Solver flags (`--velocity-iterations`,
/// `--chain-solve`, ...) make the continuation a variant: the moments before a spike re-run
/// with other settings, compared with `lavender diff` (its log records its settings); every
/// solver flag left out keeps the log's setting.
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    // The shared solver flags' defaults are a scene's; here what is left out is the log's.
    mut_arg("velocity_iterations", |a| a.help("Sequential-impulse velocity passes per substep (default: the log's)")),
    mut_arg("bias_iterations", |a| a.help("Split-impulse bias passes per substep, each run with one of the first velocity passes (default: the log's; at most --velocity-iterations). `all`: one per velocity pass")),
    mut_arg("position_iterations", |a| a.help("Positional projection passes per substep (default: the log's)")),
    mut_arg("no_warm_start", |a| a.help("Start each substep's velocity passes from zero impulses instead of the last substep's (default: the log's setting; see `lavender run --help`)")),
    // QA 2026-12-08: these said "off by default" / "on by default", `run`'s defaults.
    mut_arg("chain_solve", |a| a.help("Solve chains of hinges and ball joints directly from the resumed substep on (default: the log's setting; see `lavender run --help`)")),
    mut_arg("no_gyroscopic", |a| a.help("Leave out the gyroscopic term of rotating bodies (default: the log's setting; see `lavender run --help`)")),
    mut_arg("no_curvature", |a| a.help("Leave out the velocity rows' curvature offsets (default: the log's setting; see `lavender run --help`)")),
    mut_arg("speculative_limits", |a| a.help("Give a limited joint its stop's row as soon as it would reach the stop within the substep (default: the log's setting; see `lavender run --help`)")),
    mut_arg("sleep", |a| a.help("Let islands at rest sleep from the resumed substep on (default: the log's setting; see `lavender run --help`)")),
    after_help = "Examples:\n  lavender run chain --record run.lvlog                         5 s: substeps 0 to 1199\n  lavender scrub run.lvlog --spikes                             find the substep to resume from\n  lavender resume run.lvlog --from 600 --record again.lvlog     continue after substep 600 to the end\n  lavender diff run.lvlog again.lvlog                           identical over the common substeps\n  lavender resume run.lvlog --from 1000 --steps 30 --record detail.h5\n                                                                30 frames from substep 1000, to HDF5\n  lavender resume run.lvlog --from 1000 --velocity-iterations 32 --record v32.lvlog\n                                                                a variant: 32 passes from there on\n  lavender diff run.lvlog v32.lvlog                             where and how far it departs\n  lavender resume run.lvlog --from 1000 --velocity-iterations 32 --max-anchor-error 0.005\n                                                                exit code 1 if a joint still exceeds 5 mm"
)]
pub struct Args {
    /// The run log (written by `lavender run --record`).
    log: PathBuf,
    /// Substep whose end state to restore; the continued run starts with the next one.
    #[arg(long, value_name = "SUBSTEP", value_parser = crate::output::whole::<u64>)]
    from: u64,
    /// Frames to run (completing a partial frame counts as one). Default: up to the end of
    /// the original log.
    #[arg(long, value_name = "N", value_parser = crate::output::whole::<u64>)]
    steps: Option<u64>,
    /// Record the continued run (`.lvlog` or `.h5`); an existing file at PATH is replaced
    /// (by a new file, from the first recorded substep on).
    #[arg(long, value_name = "PATH")]
    record: Option<PathBuf>,
    /// Fail once any joint's anchor error exceeds METERS at a continued substep, as `run`'s:
    /// the run stops at that substep (a recording is finished there), the summary
    /// says which joint went over and when, and the exit code is 1. For checking that a
    /// variant holds where the original came apart.
    #[arg(long, value_name = "METERS", value_parser = crate::run::parse_tolerance)]
    max_anchor_error: Option<f64>,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Solver settings over the log's: the continued run is then a variant, not the
    /// original (except `--threads` and `--scalar`, which give the same bits).
    #[command(flatten)]
    solver: crate::solver_args::SolverArgs,
}

pub fn main(args: Args) -> anyhow::Result<()> {
    if let Some(path) = &args.record {
        lavender_replay::files::check_record_output(path, &[&args.log])?;
    }
    let reader = open_log(&args.log)?;
    let mut resumed = resume(&reader, args.from)
        .with_context(|| format!("resuming {} from substep {}", args.log.display(), args.from))?;
    // A variant: other solver settings from here on (the same substeps, so frames line up).
    let mut settings = *resumed.world.settings();
    args.solver
        .apply(&mut settings, &format!("the log {}", args.log.display()))?;
    settings.validate()?;
    resumed.world.set_settings(settings)?;
    let changed = resumed.changed_settings();
    for k in &resumed.corrupt_keyframes {
        eprintln!(
            "note: the keyframe at substep {k} is corrupt; restored from an earlier keyframe \
             (or the scene's start) and re-ran the substeps in between"
        );
    }
    let n = u64::from(resumed.substeps_per_frame);
    let last = reader.index().last().map_or(0, |m| m.summary.substep);
    let frames = args.steps.unwrap_or_else(|| {
        // Substeps after `from` up to the last recorded one, in frames (a partial one first).
        let left = last.saturating_sub(args.from);
        let partial = u64::from(resumed.substeps_to_frame_boundary()).min(left);
        u64::from(partial > 0) + (left - partial).div_ceil(n)
    });
    if args.steps == Some(0) {
        bail!("--steps 0 runs nothing: give at least one frame");
    }
    // The bound `run --steps` holds (QA 2026-12-07: `resume --steps 18446744073709551615`
    // ran until killed).
    if let Some(n) = args.steps.filter(|&n| n > lavender_engine::MAX_RUN_FRAMES) {
        bail!("--steps {n} is more frames than any run can step (at most 1e12); give fewer");
    }
    if frames == 0 {
        bail!(
            "nothing to run: substep {} is the last the log records, and --steps was not given \
             (pass --steps N to continue past the end)",
            args.from
        );
    }
    let mut recorder = match &args.record {
        Some(path) => Some(
            resumed
                .recorder(path, RecordOptions::default())
                .with_context(|| format!("cannot record to {}", path.display()))?,
        ),
        None => None,
    };
    let bar = progress(frames, "resuming");
    let start = std::time::Instant::now();
    // A Ctrl-C stops the run after the substep being stepped, the recording finished (as
    // `run`).
    crate::interrupt::stop_cleanly();
    if let Some(path) = &args.record {
        crate::interrupt::writing(path);
    }
    let (mut substeps, mut done) = (0u64, 0u64);
    // The first re-run substep whose state differs from the one the log records there: the
    // original run was changed from outside its steps (a Python `set_body_velocity` while
    // recording; a log records states, not such changes), or made by another build.
    let mut departed: Option<u64> = None;
    // Without --steps: exactly to the log's last substep, also where a killed writer's log
    // ends inside a frame (so that `diff` finds the two runs identical).
    let to_end = args.steps.is_none().then(|| last.saturating_sub(args.from));
    // The residuals over the continued substeps (compared below with the log's over the
    // same ones: what a variant changed), and the first over `--max-anchor-error`.
    let mut max = lavender_engine::ResidualMax::default();
    let mut peak: Option<AnchorPeak> = None;
    let mut exceeded: Option<AnchorPeak> = None;
    // Set at the substep that went over: the run stops there, inside a long frame too.
    let over_tolerance = std::cell::Cell::new(false);
    // Substeps of a frame a Ctrl-C ended early (a long frame): the world keeps them.
    let mut partial_frame = None;
    while done < frames && !crate::interrupt::requested() && exceeded.is_none() {
        let observer = |w: &lavender_engine::World, info: lavender_engine::SubstepInfo| {
            if info.finite {
                let before = max.anchor_error;
                max.fold(w.constraint_data());
                if max.anchor_error > before {
                    let p = AnchorPeak {
                        anchor_error: max.anchor_error,
                        joint: max.anchor_joint,
                        substep: info.substep,
                        time: info.time,
                    };
                    peak = Some(p);
                    let over = args
                        .max_anchor_error
                        .is_some_and(|m| f64::from(p.anchor_error) > m);
                    if over && exceeded.is_none() {
                        exceeded = Some(p);
                        over_tolerance.set(true);
                    }
                }
            }
            if departed.is_none() {
                if let Some(i) = reader.index_of_substep(info.substep) {
                    if reader.index()[i].state_hash != w.state_hash() {
                        departed = Some(info.substep);
                    }
                }
            }
            match recorder.as_mut() {
                Some(r) => r.record(w, info),
                None => Ok(()),
            }
        };
        // Between two substeps of a frame too, as at a frame's end (QA 2026-12-07: a Ctrl-C
        // in a frame of 24,000 substeps waited for all of them).
        let stop = &mut || crate::interrupt::requested() || over_tolerance.get();
        let frame = match u64::from(resumed.substeps_to_frame_boundary()) {
            0 => n,
            k => k,
        };
        let (stepped, asked) = match to_end {
            Some(total) => {
                let asked = frame.min(total - substeps);
                (resumed.run_substeps_stoppable(asked, observer, stop), asked)
            }
            None => (resumed.run_stoppable(1, observer, stop), frame),
        };
        let ran = match stepped {
            Ok(ran) => ran,
            Err(e) => {
                // As `run`: the log of the run up to the failure is kept, ending on the
                // substep that went non-finite (QA 2026-12-06: it stopped one before, so the
                // resumed log did not diff identical to the original).
                bar.finish_and_clear();
                if let Some(log) = recorder.take().and_then(|r| r.finish().ok()) {
                    eprintln!(
                        "the recording up to the failure is in {} ({}; the last is the \
                         substep that went non-finite, {})",
                        log.path.display(),
                        crate::output::count(log.frames as u64, "frame"),
                        crate::output::failure_viewer(&log.path),
                    );
                }
                return Err(e.into());
            }
        };
        substeps += ran;
        if ran < asked {
            partial_frame = Some(ran);
            break;
        }
        done += 1;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    let log = recorder.map(|r| r.finish()).transpose()?;
    let world = &resumed.world;
    let names = world.joints().names();
    // The log's largest anchor error over the substeps continued, where it records them.
    let recorded = log_peak(&reader, args.from + 1, world.substeps_done());
    let peak_json = |p: Option<AnchorPeak>| {
        p.map(|p| {
            serde_json::json!({
                "anchor_error": p.anchor_error,
                "joint": names[p.joint],
                "joint_index": p.joint,
                "substep": p.substep,
                "time": p.time,
            })
        })
    };
    let mut json = serde_json::json!({
        "from_substep": args.from,
        "keyframe_substep": resumed.keyframe_substep,
        "replayed_substeps": resumed.replayed,
        "substeps": substeps,
        "last_substep": world.substeps_done().checked_sub(1),
        "time": world.time(),
        "state_hash": world.state_hash(),
        // JSON readers that hold numbers as doubles (jq, JavaScript) round a 64-bit hash; the
        // hex string is exact (QA 2026-12-07).
        "state_hash_hex": crate::output::hex64(world.state_hash()),
        "wall_seconds": wall,
        "record": log.as_ref().map(|l| serde_json::json!({"path": l.path, "frames": l.frames, "bytes": l.bytes})),
        "departed_at_substep": departed,
        // Largest over the continued substeps (null: no joint had any), and the log's over
        // the same substeps (null where it records none of them).
        "max_anchor_error": peak_json(peak),
        "log_max_anchor_error": peak_json(recorded),
        "max_angular_error": max.angular_error,
        "max_limit_violation": max.limit_violation,
        "settings_changed": changed
            .iter()
            .map(|(name, log, now)| serde_json::json!({"setting": name, "log": log, "now": now}))
            .collect::<Vec<_>>(),
    });
    let variant = (!changed.is_empty()).then(|| {
        let list: Vec<String> = changed
            .iter()
            .map(|(name, log, now)| format!("{name} {log} -> {now}"))
            .collect();
        list.join(", ")
    });
    if let Some(list) = &variant {
        // Departing is what a variant does: say so, not that the log was changed.
        eprintln!(
            "note: a variant of {}: {list} from substep {} on{}{}",
            args.log.display(),
            args.from + 1,
            match departed {
                Some(s) => format!("; its state first differs from the log's at substep {s}"),
                None => "; its states equal the log's at every substep it shares".into(),
            },
            match &log {
                Some(l) => format!(
                    ". Its log records these settings: `lavender diff {} {}` compares the two",
                    args.log.display(),
                    l.path.display()
                ),
                None => String::new(),
            }
        );
    } else if let Some(s) = departed {
        // A keyframe to continue from, unless its state is the non-finite one a failed
        // substep left (QA 2026-12-06: the note recommended resuming from it, which fails).
        let keyframe = reader.index_of_substep(s).is_some_and(|i| {
            let meta = &reader.index()[i];
            meta.has_solver_state && !meta.summary.state_non_finite()
        });
        eprintln!(
            "note: the resumed run departs from the log at substep {s}: the state recorded \
             there is not the one the steps give. The original run was changed from outside \
             its steps just before it (a pose or velocity set from Python while recording; a \
             log records states, not such changes), or the log was made by another build.{}",
            if keyframe {
                format!(
                    " The log holds a keyframe there: `lavender resume {} --from {s}` \
                     continues from the recorded state",
                    args.log.display()
                )
            } else {
                String::new()
            }
        );
    }
    // Which joint went over --max-anchor-error, when and how far, in words (as `run`).
    let over = exceeded.map(|e| e.over(&names[e.joint], args.max_anchor_error.unwrap_or_default()));
    if let Some(tolerance) = args.max_anchor_error {
        json["max_anchor_error_tolerance"] = serde_json::json!(tolerance);
        json["tolerance_exceeded"] = match exceeded {
            Some(_) => peak_json(exceeded)
                .map(|mut e| {
                    e["frames_run"] = serde_json::json!(done);
                    e["frames_asked"] = serde_json::json!(frames);
                    e["substeps_into_next_frame"] = serde_json::json!(partial_frame.unwrap_or(0));
                    e
                })
                .unwrap_or_default(),
            None => serde_json::Value::Null,
        };
    }
    let interrupted = done < frames && exceeded.is_none();
    if interrupted {
        if args.json {
            // As `run`: the summary of what ran, marked interrupted.
            json["interrupted"] = serde_json::json!({
                "frames_run": done,
                "frames_asked": frames,
                "substeps_into_next_frame": partial_frame.unwrap_or(0),
            });
            emit_json(&json)?;
        }
        return Err(crate::interrupt::Interrupted(format!(
            "interrupted after {done} of {frames} frames{}, at substep {} (t = {:.6} s){}",
            partial_frame.map_or_else(String::new, |n| format!(
                " and {} of the next",
                crate::output::count(n, "substep")
            )),
            world.substeps_done().saturating_sub(1),
            world.time(),
            crate::output::interrupted_log(log.as_ref())
        ))
        .into());
    }
    let tolerance_failed = over.zip(exceeded).map(|(over, e)| {
        let scrub = e.scrub_hint(log.as_ref());
        (
            format!("{over}; {}", stopped_where(done, frames, partial_frame)),
            ToleranceExceeded(format!(
                "the resumed run failed its tolerance: {over}; {}{scrub}",
                stopped_where(done, frames, partial_frame)
            )),
        )
    });
    if args.json {
        emit_json(&json)?;
        return tolerance_failed.map_or(Ok(()), |(_, e)| Err(e.into()));
    }
    let mut out = format!(
        "resumed {} after substep {} (restored from {}{}), ran {} in {:.3} s; now at \
         substep {}, t = {:.6} s\n",
        args.log.display(),
        args.from,
        resumed
            .keyframe_substep
            .map_or("the scene's initial state".into(), |k| {
                format!("the keyframe at substep {k}")
            }),
        if resumed.replayed > 0 {
            format!(
                ", {} re-run",
                crate::output::count(resumed.replayed, "substep")
            )
        } else {
            String::new()
        },
        crate::output::count(substeps, "substep"),
        wall,
        world.substeps_done().saturating_sub(1),
        world.time()
    );
    if let Some(list) = &variant {
        out.push_str(&format!("settings changed: {list}\n"));
    }
    let said = |p: AnchorPeak| {
        format!(
            "{:.3e} m (joint `{}`, substep {})",
            p.anchor_error, names[p.joint], p.substep
        )
    };
    out.push_str(&format!(
        "max anchor error: {}{}\n",
        peak.map_or_else(|| "0 m".to_string(), said),
        match recorded {
            Some(r) => format!("; the log's over the same substeps: {}", said(r)),
            None => String::new(),
        }
    ));
    if let Some((text, _)) = &tolerance_failed {
        out.push_str(&format!("tolerance exceeded: {text}\n"));
    }
    if let Some(l) = &log {
        out.push_str(&format!(
            "recorded {} (one per substep), {} to {}\n",
            crate::output::count(l.frames as u64, "frame"),
            human_bytes(l.bytes),
            l.path.display()
        ));
    }
    emit(&out)?;
    tolerance_failed.map_or(Ok(()), |(_, e)| Err(e.into()))
}

/// The log's largest anchor error over substeps `from..to` (from its index's per-frame
/// summaries; a NaN frame is passed over, as the state that went non-finite is reported
/// apart), or `None` where it records none of them with a joint holding one.
fn log_peak(reader: &LogReader, from: u64, to: u64) -> Option<AnchorPeak> {
    reader
        .index()
        .iter()
        .map(|m| &m.summary)
        .filter(|s| (from..to).contains(&s.substep) && s.anchor_error.value.is_finite())
        .filter_map(|s| {
            s.anchor_error.joint.map(|j| AnchorPeak {
                anchor_error: s.anchor_error.value,
                joint: j as usize,
                substep: s.substep,
                time: s.time,
            })
        })
        .reduce(|a, b| {
            if b.anchor_error > a.anchor_error {
                b
            } else {
                a
            }
        })
}
