//! Resuming a recorded run from any substep, reproducing the original frames bit for bit.
//!
//! The world is rebuilt from the header's scene TOML (which holds every setting the run
//! used and its frame `dt`), then the poses, velocities, warm-start impulses and clock of the
//! nearest keyframe at or before the requested substep are restored (through
//! `World::restore_body_states`, which sets the bits exactly; `set_body_pose` re-normalises). If that keyframe is
//! earlier, the substeps in between are re-run. The world's state hash must then equal the
//! one recorded for the requested substep, or resuming fails (a different engine build, or
//! a log whose scene cannot be rebuilt exactly).
//!
//! Substeps inside a frame. A frame of `dt` runs `n` substeps of `h = dt / n`, and the state
//! after a substep (poses, velocities, impulses) fully determines the next one; stepping the
//! world by `h` runs exactly one substep of length `h` (checked: `substeps_for(h) == 1`).
//! So a run resumed mid-frame first completes the current frame one substep at a time and
//! then continues with whole frames: the substeps are the same computations as in the
//! original run, and no engine API beyond `World::step` is needed.

use lavender_engine::{Scene, SubstepInfo, World};

use std::path::Path;

use crate::error::{ReplayError, Result};
use crate::format::Header;
use crate::reader::{FrameView, LogReader};
use crate::recorder::{world_state_hash, RecordOptions, Recorder};

/// A world rebuilt from a log and restored to the state after one of its substeps.
#[derive(Debug)]
pub struct Resumed {
    /// The scene, as recorded in the header (every setting written out).
    pub scene: Scene,
    /// The world, in the state after substep [`from_substep`](Resumed::from_substep).
    pub world: World,
    /// Frame time step of the original run, s.
    pub dt: f32,
    /// Substeps per frame.
    pub substeps_per_frame: u32,
    /// The substep whose end state was restored.
    pub from_substep: u64,
    /// The keyframe the state came from (equal to `from_substep` when it is a keyframe).
    pub keyframe_substep: Option<u64>,
    /// Substeps re-run between the keyframe (or the start) and `from_substep`.
    pub replayed: u64,
    /// The original run's header.
    pub header: Header,
    /// The log the run was resumed from (a recording of the continued run may not replace
    /// it).
    pub source: std::path::PathBuf,
    /// Substeps of keyframes passed over because their frames are corrupt, latest first.
    pub corrupt_keyframes: Vec<u64>,
}

fn restore_frame(world: &mut World, f: &FrameView<'_>, solver: &[f32]) -> Result<()> {
    world.restore_body_states(f.poses(), f.velocities())?;
    world.set_solver_state(solver)?;
    world.set_clock(f.time(), f.substep() + 1);
    Ok(())
}

/// Nearest frame-boundary substeps around `substep` (the last substeps of frames).
fn boundaries(substep: u64, n: u64) -> (Option<u64>, u64) {
    let before = ((substep + 1) / n * n).checked_sub(1);
    let after = ((substep + 1).div_ceil(n)) * n - 1;
    (before, after)
}

/// Rebuilds the run recorded in `reader` and restores it to the state after `from_substep`.
pub fn resume(reader: &LogReader, from_substep: u64) -> Result<Resumed> {
    let header = reader.header();
    if header.scene.is_empty() {
        return Err(ReplayError::Resume(
            "the log's header holds no scene (it was not written by a Lavender recorder); \
             record with `lavender run SCENE --record run.lvlog`"
                .into(),
        ));
    }
    let scene = header.recorded_scene()?;
    let mut world = scene.build()?;
    if world.body_count() != header.body_count || world.joint_count() != header.joint_count {
        return Err(ReplayError::Resume(format!(
            "the header's scene builds {} bodies and {} joints but the log has {} and {}",
            world.body_count(),
            world.joint_count(),
            header.body_count,
            header.joint_count
        )));
    }
    // A log of a world its scene does not build (a hand-built world recorded under another
    // scene's header) would resume as another world (QA, 2026-12-05).
    let names = |w: &World| (w.bodies().names().to_vec(), w.joints().names().to_vec());
    if names(&world) != (header.body_names.clone(), header.joint_names.clone()) {
        return Err(ReplayError::Resume(
            "the header's scene does not build the world this log recorded (its body or joint \
             names differ): the run was recorded with another scene than the one its world \
             was built from, and cannot be resumed"
                .into(),
        ));
    }
    let dt = header.world.dt as f32;
    let n = world.settings().substeps_for(dt);
    let h = dt / n as f32;
    let single = world.settings().substeps_for(h);
    let Some(target) = reader.index_of_substep(from_substep) else {
        let (first, last) = match (reader.index().first(), reader.index().last()) {
            (Some(a), Some(b)) => (a.summary.substep, b.summary.substep),
            _ => return Err(ReplayError::Resume("the log has no frames".into())),
        };
        if let Some(g) = reader.gap_holding(from_substep) {
            return Err(ReplayError::Resume(format!(
                "substep {from_substep} is not in the log: {g}; resume from a substep the log \
                 still has (before or after that stretch)"
            )));
        }
        return Err(ReplayError::Resume(format!(
            "substep {from_substep} is not in the log, which records substeps {first} to {last}"
        )));
    };
    // By the state, not `non_finite`: an energy or a diagnostic that overflowed f32 leaves
    // the state finite and the run going (QA 2026-12-07: a run whose energy was inf
    // throughout could not be resumed from any substep).
    if reader.index()[target].summary.state_non_finite() {
        // QA 2026-12-07: re-running up to it failed with "the step produced a non-finite
        // position at substep S", which read as if the resume itself had blown up.
        let earlier = match from_substep.checked_sub(1) {
            Some(s) if single == 1 => Some(s),
            Some(s) => boundaries(s, u64::from(n)).0,
            None => None,
        };
        let instead = match earlier {
            Some(s) => format!(
                "; resume from substep {s} to re-run the steps into it (`--record` keeps them, \
                 the failing one included; a run changed from outside its steps there, such \
                 as by Python's `set_body_velocity`, departs from the log instead)"
            ),
            None => String::new(),
        };
        return Err(ReplayError::Resume(format!(
            "substep {from_substep} is where the recorded run went non-finite, and no run can \
             continue from a non-finite state{instead}"
        )));
    }
    let at_boundary = (from_substep + 1).checked_rem(u64::from(n)) == Some(0);
    if !at_boundary && single != 1 {
        let (before, after) = boundaries(from_substep, u64::from(n));
        let nearest = match before {
            Some(b) => format!("substep {b} or {after}"),
            None => format!("substep {after}"),
        };
        return Err(ReplayError::Resume(format!(
            "substep {from_substep} is inside a frame and a lone substep of {h} s cannot be \
             run exactly with these settings; resume from a frame boundary: {nearest}"
        )));
    }

    // The target's own frame must read: its state is what the resume checks against. Where
    // it fails its checksum, name the nearest substeps that can be resumed from (QA
    // 2026-12-07: "is corrupt: checksum mismatch" with no way on).
    if let Err(ReplayError::CorruptFrame { detail, .. }) = reader.frame(target) {
        let resumable = |&i: &usize| {
            let m = &reader.index()[i];
            (single == 1 || (m.summary.substep + 1).is_multiple_of(u64::from(n)))
                && !m.summary.state_non_finite()
                && reader.frame(i).is_ok()
        };
        let substep = |i: usize| reader.index()[i].summary.substep;
        let near: Vec<String> = [
            (0..target).rev().find(resumable).map(substep),
            (target + 1..reader.len()).find(resumable).map(substep),
        ]
        .into_iter()
        .flatten()
        .map(|s| s.to_string())
        .collect();
        let instead = match near.as_slice() {
            [] => "; no other frame of the log can be resumed from".to_string(),
            [one] => format!("; resume from substep {one}"),
            [before, after] => format!("; resume from substep {before} or {after}"),
            _ => unreachable!("two candidates at most"),
        };
        return Err(ReplayError::Resume(format!(
            "the frame of substep {from_substep} is corrupt ({detail}), so its state cannot be \
             checked{instead}"
        )));
    }

    // Start from the last readable keyframe at or before the target (a keyframe whose frame
    // fails its checksum is passed over for the one before it), else from the scene's start.
    let mut corrupt_keyframes = Vec::new();
    let mut keyframe = reader.last_keyframe_at_or_before(target);
    while let Some(k) = keyframe {
        match reader.frame(k) {
            Err(ReplayError::CorruptFrame { .. }) => {
                corrupt_keyframes.push(reader.index()[k].summary.substep);
                keyframe = k
                    .checked_sub(1)
                    .and_then(|k| reader.last_keyframe_at_or_before(k));
            }
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    let (start_substep, keyframe_substep) = match keyframe {
        Some(k) => {
            let f = reader.frame(k)?;
            let solver = f.solver_state().expect("a keyframe carries solver state");
            restore_frame(&mut world, &f, solver)?;
            if world_state_hash(&world) != f.state_hash() {
                return Err(ReplayError::Resume(format!(
                    "restoring substep {} did not reproduce its recorded state hash \
                     ({:#018x} recorded, {:#018x} restored); the engine cannot restore this \
                     state exactly",
                    f.substep(),
                    f.state_hash(),
                    world_state_hash(&world)
                )));
            }
            (f.substep() + 1, Some(f.substep()))
        }
        None if reader.index()[0].summary.substep == 0 => (0, None),
        None => {
            // Where the log has a keyframe later on (a stretch cut from a longer log starts
            // between two), say where resuming works (QA 2026-12-07: it advised recording
            // with keyframes, which the log had).
            // The first keyframe that reads (a corrupt one cannot be resumed from either).
            let first = (reader.index().iter().enumerate())
                .find(|&(i, m)| m.has_solver_state && reader.frame(i).is_ok())
                .map(|(_, m)| m);
            let advice = match first {
                Some(m) => format!(
                    "resume from substep {} (the log's first keyframe) or later",
                    m.summary.substep
                ),
                None => "record with keyframes (the default)".into(),
            };
            // The corrupt keyframes passed over, if any (QA 2026-12-07: "(0 corrupt)").
            let listed: Vec<String> = corrupt_keyframes.iter().map(u64::to_string).collect();
            let corrupt = match listed.len() {
                0 => String::new(),
                1 => format!(" (the keyframe at substep {} is corrupt)", listed[0]),
                _ => format!(
                    " (the keyframes at substeps {} are corrupt)",
                    listed.join(", ")
                ),
            };
            return Err(ReplayError::Resume(format!(
                "no readable frame at or before substep {from_substep} carries solver \
                 state{corrupt}, and the log does not start at substep 0; {advice}"
            )));
        }
    };
    let mut replayed = 0;
    let mut substep = start_substep;
    while substep <= from_substep {
        world.step(h)?;
        substep += 1;
        replayed += 1;
    }
    let f = reader.frame(target)?;
    if world_state_hash(&world) != f.state_hash() {
        let (version, features) = (&header.engine_version, &header.target_features);
        let this = (lavender_engine::VERSION, lavender_engine::target_features());
        let cause = if (version.as_str(), features.as_str()) != (this.0, this.1.as_str()) {
            format!(
                "the log was recorded by a different engine build ({version} {features}, this \
                 is {} {})",
                this.0, this.1
            )
        } else if keyframe_substep.is_none() {
            "the run did not start from the scene's initial state (a body was moved or set \
             moving before recording), and no keyframe at or before it holds the state to \
             restore; record with keyframes (the default) to resume such a run"
                .into()
        } else {
            // The version is the package's, the same for every commit of a release: a log an
            // earlier commit recorded (before a change of results, such as the curvature
            // offsets of joints held on their stops, 2026-12-07) lands here too.
            format!(
                "this engine ({version} {features}, as recorded) re-ran them differently: \
                 either the log was recorded by an earlier build of {version} whose results \
                 differ (rerun the scene with this build: `lavender run SCENE --record` makes \
                 a log it can resume, and `lavender diff` compares the two), or, if this very \
                 build recorded it, please report it with the log"
            )
        };
        return Err(ReplayError::Resume(format!(
            "re-running substeps {start_substep}..={from_substep} did not reproduce the \
             recorded state hash of substep {from_substep}: {cause}"
        )));
    }
    Ok(Resumed {
        scene,
        world,
        dt,
        substeps_per_frame: n,
        from_substep,
        keyframe_substep,
        replayed,
        header: header.clone(),
        source: reader.path().to_path_buf(),
        corrupt_keyframes,
    })
}

impl Resumed {
    /// The settings the world now runs with that differ from the log's and change results
    /// (set with `world.set_settings` after the resume: more velocity passes to see whether
    /// a spike goes away, say), as [`lavender_engine::Settings::result_changes`]: the name,
    /// the log's value, the world's. Empty when the continued run reproduces the log's bits.
    pub fn changed_settings(&self) -> Vec<(&'static str, String, String)> {
        self.scene.settings().result_changes(self.world.settings())
    }

    /// A recorder for the continued run, under the original run's header (same scene hash,
    /// names and settings), so that `diff` compares the two logs directly. A variant (settings
    /// changed since the resume, [`Resumed::changed_settings`]) is recorded under a header of
    /// its own settings instead, so that its log resumes as the variant it is (the scene
    /// hash leaves settings out, so `lavender diff` compares the two as one scene).
    ///
    /// Refuses `path` when it is the log the run was resumed from, which recording would
    /// replace.
    pub fn recorder(&self, path: impl AsRef<Path>, options: RecordOptions) -> Result<Recorder> {
        crate::files::refuse_to_overwrite_input(&self.source, path.as_ref())?;
        if self.changed_settings().is_empty() {
            Recorder::create_with_header(path, &self.header, &self.world, options)
        } else {
            Recorder::create_with(path, &self.scene, &self.world, self.dt, options)
        }
    }

    /// Substep length, s.
    pub fn substep_dt(&self) -> f32 {
        self.dt / self.substeps_per_frame as f32
    }

    /// Substeps left to complete the frame the resumed substep is in (0 at a boundary).
    pub fn substeps_to_frame_boundary(&self) -> u32 {
        let n = u64::from(self.substeps_per_frame);
        ((n - (self.world.substeps_done() % n)) % n) as u32
    }

    /// Continues the run for `substeps` substeps: the rest of the current frame and whole
    /// frames as the original run stepped them, then, if `substeps` ends inside a frame, its
    /// first substeps one at a time (what a log whose writer was killed mid-frame holds).
    /// Calls `observer` after every substep and returns the number run. The substeps are
    /// the original run's bit for bit: one of a frame of `n` is `dt / n` whether the frame
    /// or a lone substep runs it. A substep that goes non-finite is observed too (its
    /// `info.finite` false, as [`World::step_observed_through_failure`] does), so that a
    /// recording of the resumed run ends on it as the original's did, before the error.
    pub fn run_substeps(
        &mut self,
        substeps: u64,
        observer: impl FnMut(&World, SubstepInfo) -> Result<()>,
    ) -> Result<u64> {
        self.run_substeps_stoppable(substeps, observer, &mut || false)
    }

    /// [`Resumed::run_substeps`] that `stop` can end between two substeps (asked before
    /// each after the first, as [`World::step_stoppable`] does): returns the number run,
    /// fewer than `substeps` when it stopped. The world keeps the substeps run.
    pub fn run_substeps_stoppable(
        &mut self,
        substeps: u64,
        mut observer: impl FnMut(&World, SubstepInfo) -> Result<()>,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<u64> {
        let per_frame = u64::from(self.substeps_per_frame);
        let mut left = substeps;
        while left > 0 {
            let to_boundary = match u64::from(self.substeps_to_frame_boundary()) {
                0 => per_frame,
                n => n,
            };
            let (whole, asked) = if to_boundary == per_frame && left >= per_frame {
                (true, per_frame)
            } else {
                (false, to_boundary.min(left))
            };
            if left < substeps && stop() {
                break;
            }
            let n = if whole {
                self.run_stoppable(1, &mut observer, stop)?
            } else {
                self.run_lone_substeps(asked, &mut observer, stop)?
            };
            left -= n;
            if n < asked {
                break;
            }
        }
        Ok(substeps - left)
    }

    /// Runs `n` substeps one at a time (`n` at most the substeps to the frame boundary),
    /// asking `stop` before each after the first; returns the number run.
    fn run_lone_substeps(
        &mut self,
        n: u64,
        mut observer: impl FnMut(&World, SubstepInfo) -> Result<()>,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<u64> {
        let h = self.substep_dt();
        let mut first_error: Option<ReplayError> = None;
        for i in 0..n {
            if i > 0 && stop() {
                return Ok(i);
            }
            self.world.step_observed_through_failure(h, |w, info| {
                if first_error.is_none() {
                    first_error = observer(w, info).err();
                }
            })?;
            if let Some(e) = first_error {
                return Err(e);
            }
        }
        Ok(n)
    }

    /// Continues the run for `frames` frames (completing the current frame first counts as
    /// one), calling `observer` after every substep like
    /// [`World::step_observed_through_failure`] (a substep that goes non-finite is observed
    /// before the error). Returns the number of substeps run.
    pub fn run(
        &mut self,
        frames: u64,
        observer: impl FnMut(&World, SubstepInfo) -> Result<()>,
    ) -> Result<u64> {
        self.run_stoppable(frames, observer, &mut || false)
    }

    /// [`Resumed::run`] that `stop` can end between two substeps (asked before each after
    /// the first, inside a frame as between frames): returns the number of substeps run;
    /// the world keeps them.
    pub fn run_stoppable(
        &mut self,
        frames: u64,
        mut observer: impl FnMut(&World, SubstepInfo) -> Result<()>,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<u64> {
        let mut first_error: Option<ReplayError> = None;
        let mut substeps = 0u64;
        let mut frames_left = frames;
        let partial = self.substeps_to_frame_boundary();
        if partial > 0 && frames_left > 0 {
            substeps = self.run_lone_substeps(u64::from(partial), &mut observer, stop)?;
            if substeps < u64::from(partial) {
                return Ok(substeps);
            }
            frames_left -= 1;
        }
        for _ in 0..frames_left {
            if first_error.is_some() || (substeps > 0 && stop()) {
                break;
            }
            let mut observe = |w: &World, info| {
                if first_error.is_none() {
                    first_error = observer(w, info).err();
                }
            };
            let r = self
                .world
                .step_stoppable(self.dt, Some(&mut observe), true, stop)?;
            substeps += u64::from(r.substeps);
            if r.stopped_early {
                break;
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(substeps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (2026-12-05): a hand-built world recorded under a shipped scene's header resumed
    /// as the shipped scene's world (or failed with "should not happen").
    #[test]
    fn a_log_of_a_world_its_scene_does_not_build_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.lvlog");
        let scene = Scene::builtin("pendulum").unwrap();
        let mut world = World::new(lavender_engine::Settings::default()).unwrap();
        let g = world
            .add_body(lavender_engine::BodyDesc::fixed("g"))
            .unwrap();
        let b = world
            .add_body(lavender_engine::BodyDesc::dynamic("b"))
            .unwrap();
        world
            .add_joint(lavender_engine::JointDesc::spherical("j", g, b))
            .unwrap();
        let dt = 1.0 / 60.0;
        // `Recorder::create` refuses such a log now (its scene check); a header made
        // directly, or a log written before that check, still reaches resume.
        assert!(Recorder::create(&path, &scene, &world, dt).is_err());
        let header = crate::recorder::header_for(&scene, &world, dt);
        let rec = Recorder::create_with_header(&path, &header, &world, Default::default()).unwrap();
        crate::recorder::run_recorded(&mut world, dt, 5, rec).unwrap();
        // SAFETY: private temporary file.
        let reader = unsafe { LogReader::open(&path) }.unwrap();
        for from in [15, 16] {
            let err = resume(&reader, from).map(|_| ()).unwrap_err().to_string();
            assert!(err.contains("does not build the world"), "{from}: {err}");
        }
    }

    /// A pendulum and a free body thrown at 1e20 m/s: its kinetic energy overflows f32 (the
    /// total energy is inf from the first substep on) while every pose and velocity stays
    /// finite, and the run goes on.
    const ENERGY_OVERFLOWS: &str = r#"
[world]
dt = 0.016666667
[[body]]
name = "pivot"
kind = "static"
[[body]]
name = "bob"
position = [1.0, 0.0, 0.0]
mass = 1.0
[[body]]
name = "free"
position = [5.0, 0.0, 0.0]
linear_velocity = [1.0e20, 0.0, 0.0]
mass = 1.0
[[joint]]
name = "hinge"
kind = "revolute"
body_a = "pivot"
body_b = "bob"
anchor_b = [-1.0, 0.0, 0.0]
"#;

    /// QA (2026-12-07): resume judged "the run went non-finite here" by the frame summary's
    /// `non_finite`, which the infinite energy sets, and refused every substep.
    #[test]
    fn a_run_whose_energy_overflowed_but_state_stayed_finite_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("overflow.lvlog");
        let scene = Scene::from_toml_str(ENERGY_OVERFLOWS, "test").unwrap();
        let mut world = scene.build().unwrap();
        let dt = 1.0 / 60.0;
        let rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        crate::recorder::run_recorded(&mut world, dt, 10, rec).unwrap();
        // SAFETY: private temporary file.
        let reader = unsafe { LogReader::open(&path) }.unwrap();
        assert_eq!(reader.len(), 40);
        for m in reader.index() {
            let s = &m.summary;
            // The premise: the energy is inf, the state finite.
            assert!(s.total_energy.is_infinite(), "{s:?}");
            assert!(s.non_finite && !s.state_non_finite(), "{s:?}");
        }
        // A keyframe (16), a substep re-run to from one (23), the last substep (39).
        for from in [16, 23, 39] {
            let resumed = resume(&reader, from).unwrap_or_else(|e| panic!("{from}: {e}"));
            let i = reader.index_of_substep(from).unwrap();
            assert_eq!(
                resumed.world.state_hash(),
                reader.index()[i].state_hash,
                "{from}"
            );
            assert_eq!(resumed.world.substeps_done(), from + 1);
        }
        // The continued run reproduces the recorded frames after 23.
        let mut resumed = resume(&reader, 23).unwrap();
        let mut hashes = Vec::new();
        resumed
            .run(2, |w, info| {
                hashes.push((info.substep, w.state_hash()));
                Ok(())
            })
            .unwrap();
        assert_eq!(hashes.len(), 8);
        for (substep, hash) in hashes {
            let i = reader.index_of_substep(substep).unwrap();
            assert_eq!(hash, reader.index()[i].state_hash, "substep {substep}");
        }
    }

    /// A run that did go non-finite (a body's state) is still refused at that substep, and
    /// the error names the one to resume from instead.
    #[test]
    fn the_substep_whose_state_went_non_finite_is_refused_naming_the_one_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blown.lvlog");
        let text = ENERGY_OVERFLOWS.replace("1.0e20", "3.0e38");
        let scene = Scene::from_toml_str(&text, "test").unwrap();
        let mut world = scene.build().unwrap();
        let dt = 1.0 / 60.0;
        let rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        let mut rec = Some(rec);
        for _ in 0..200 {
            if rec.as_mut().unwrap().step(&mut world, dt).is_err() {
                break;
            }
        }
        rec.take().unwrap().finish().unwrap();
        // SAFETY: private temporary file.
        let reader = unsafe { LogReader::open(&path) }.unwrap();
        let last = reader.index().last().unwrap().summary;
        assert_eq!(last.first_non_finite_body, Some(2), "{last:?}");
        assert!(last.state_non_finite());
        let err = resume(&reader, last.substep).map(|_| ()).unwrap_err();
        let before = last.substep - 1;
        let says = format!(
            "substep {} is where the recorded run went non-finite, and no run can continue \
             from a non-finite state; resume from substep {before}",
            last.substep
        );
        assert!(err.to_string().contains(&says), "{err}");
    }

    /// A stretch of a log that starts between two keyframes, without the solver state
    /// `export` now gives its first frame, resumes from its first readable keyframe on; the error before it says so, and names corrupt keyframes only when there
    /// are some (QA 2026-12-07: "(0 corrupt)").
    #[test]
    fn a_stretch_before_its_first_keyframe_names_where_to_resume_and_corrupt_keyframes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lvlog");
        let scene = Scene::builtin("pendulum").unwrap();
        let mut world = scene.build().unwrap();
        let dt = 1.0 / 60.0;
        let rec = Recorder::create(&path, &scene, &world, dt).unwrap();
        crate::recorder::run_recorded(&mut world, dt, 48, rec).unwrap();
        // SAFETY: private temporary file.
        let whole = unsafe { LogReader::open(&path) }.unwrap();
        let keyframes: Vec<u64> = (whole.index().iter())
            .filter(|m| m.has_solver_state)
            .map(|m| m.summary.substep)
            .collect();
        assert!(keyframes.len() >= 3, "{keyframes:?}");
        let (k1, k2, k3) = (keyframes[0], keyframes[1], keyframes[2]);
        // The frames from k1 + 1 on as recorded (as a copy made before `export` re-derived a
        // stretch's first solver state, or another tool's): no keyframe before k2.
        let stretch = dir.path().join("stretch.lvlog");
        let mut w = crate::LogWriter::create(&stretch, whole.header()).unwrap();
        for i in whole.index_of_substep(k1 + 1).unwrap()..whole.len() {
            w.append(&whole.frame(i).unwrap().input()).unwrap();
        }
        w.finish().unwrap();
        let bytes = std::fs::read(&stretch).unwrap();
        let reader = LogReader::from_bytes(&bytes).unwrap();
        let err = resume(&reader, k2 - 1).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "no readable frame at or before substep {} carries solver state, and the log \
                 does not start at substep 0; resume from substep {k2} (the log's first \
                 keyframe) or later",
                k2 - 1
            )),
            "{err}"
        );
        assert!(!err.contains("corrupt"), "{err}");
        resume(&reader, k2).unwrap();
        // The keyframe at k2 damaged: resuming after it names it, and the next keyframe.
        let mut damaged = bytes.clone();
        let meta = reader.index()[reader.index_of_substep(k2).unwrap()];
        damaged[(meta.offset + meta.len) as usize] ^= 0x40;
        let reader = LogReader::from_bytes(&damaged).unwrap();
        let err = resume(&reader, k2 + 1).map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains(&format!(
                "carries solver state (the keyframe at substep {k2} is corrupt), and the log \
                 does not start at substep 0; resume from substep {k3} (the log's first \
                 keyframe)"
            )),
            "{err}"
        );
    }

    #[test]
    fn boundaries_name_the_frame_ends_around_a_substep() {
        // 4 substeps per frame: frames end at substeps 3, 7, 11, ...
        assert_eq!(boundaries(5, 4), (Some(3), 7));
        assert_eq!(boundaries(1, 4), (None, 3));
        assert_eq!(boundaries(7, 4), (Some(7), 7));
    }
}
