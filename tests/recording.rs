//! Recording a real engine run, reading it back, resuming it and exporting it to HDF5.

use lavender::engine::{Scene, World};
use lavender::replay::diff::{diff, Tolerance};
use lavender::replay::recorder::{world_state_hash, RecordOptions, Recorder};
use lavender::replay::resume::{resume, Resumed};
use lavender::replay::{LogReader, LogSummary};
use std::path::Path;

/// Records `frames` frames of `scene` to `path` and returns the world afterwards.
fn record(scene: &Scene, path: &Path, frames: u64, options: RecordOptions) -> (World, LogSummary) {
    let mut world = scene.build().expect("scene builds");
    let dt = scene.frame_dt();
    let mut rec = Recorder::create_with(path, scene, &world, dt, options).expect("recorder");
    for _ in 0..frames {
        rec.step(&mut world, dt).expect("step");
    }
    let summary = rec.finish().expect("finish");
    (world, summary)
}

fn open(path: &Path) -> LogReader {
    // SAFETY: test-private files, never modified while read.
    unsafe { LogReader::open(path) }.expect("log opens")
}

/// Asserts that frames of `b` equal the frames of `a` with the same substeps, bit for bit.
/// Runs `resumed` for `frames` frames (the first finishes the frame it starts in),
/// recording every substep to `out`; the log it wrote.
fn record_resumed(resumed: &mut Resumed, out: &Path, frames: u64) -> LogReader {
    let mut rec = resumed.recorder(out, RecordOptions::default()).unwrap();
    resumed.run(frames, |w, info| rec.record(w, info)).unwrap();
    rec.finish().unwrap();
    open(out)
}

fn assert_frames_bitwise_equal(a: &LogReader, b: &LogReader) {
    assert!(!b.is_empty());
    let offset = a
        .index_of_substep(b.index()[0].summary.substep)
        .expect("b's first substep is in a");
    for i in 0..b.len() {
        let (fa, fb) = (a.frame(offset + i).unwrap(), b.frame(i).unwrap());
        let s = fb.substep();
        assert_eq!(fa.substep(), s);
        assert_eq!(fa.time().to_bits(), fb.time().to_bits(), "time at {s}");
        assert_eq!(fa.state_hash(), fb.state_hash(), "state hash at {s}");
        assert_eq!(fa.total_energy().to_bits(), fb.total_energy().to_bits());
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(fa.poses().as_flattened()),
            bits(fb.poses().as_flattened()),
            "poses at {s}"
        );
        assert_eq!(
            bits(fa.velocities().as_flattened()),
            bits(fb.velocities().as_flattened()),
            "velocities at {s}"
        );
        assert_eq!(
            bits(fa.diagnostics().as_flattened()),
            bits(fb.diagnostics().as_flattened()),
            "diagnostics at {s}"
        );
    }
}

#[test]
fn recorder_round_trip_through_the_engine_keeps_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.lvlog");
    let scene = Scene::builtin("chain").unwrap();
    // Record 0.5 s and, alongside, copy what the observer saw.
    let mut world = scene.build().unwrap();
    let dt = scene.frame_dt();
    let mut rec = Recorder::create(&path, &scene, &world, dt).unwrap();
    let mut seen = Vec::new();
    for _ in 0..30 {
        world
            .step_observed(dt, |w, info| {
                rec.record(w, info).unwrap();
                seen.push((info.substep, world_state_hash(w), w.constraint_data_copy()));
            })
            .unwrap();
    }
    let summary = rec.finish().unwrap();
    assert_eq!(summary.frames, 120, "30 frames of 4 substeps");
    assert_eq!(summary.bytes, std::fs::metadata(&path).unwrap().len());
    let r = open(&path);
    assert!(r.is_finished() && r.recovery().is_none());
    assert_eq!(r.header().joint_count, 100);
    assert_eq!(r.header().joint_names[0], "chain.joint0");
    for (i, (substep, hash, diags)) in seen.iter().enumerate() {
        let f = r.frame(i).unwrap();
        assert_eq!(f.substep(), *substep);
        assert_eq!(f.state_hash(), *hash);
        assert_eq!(f.diagnostics(), &diags[..]);
    }
    // The final frame is the world's final state.
    let last = r.frame(119).unwrap();
    let b = world.bodies();
    for i in 0..world.body_count() {
        let (p, q) = (b.positions()[i], b.rotations()[i]);
        assert_eq!(last.pose(i).unwrap(), [p.x, p.y, p.z, q.x, q.y, q.z, q.w]);
    }
}

#[test]
fn resume_reproduces_every_later_frame_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("chain").unwrap();
    let original = dir.path().join("orig.lvlog");
    // 2 s of the chain: 120 frames, 480 substeps.
    record(&scene, &original, 120, RecordOptions::default());
    let a = open(&original);
    assert_eq!(a.len(), 480);

    // From a frame boundary (substep 239 ends frame 59) and from inside a frame (241).
    for from in [239u64, 241] {
        let mut resumed = resume(&a, from).expect("resume");
        assert_eq!(resumed.world.substeps_done(), from + 1);
        // Keyframes every 16 substeps by default: the rest is re-run from the last one.
        assert_eq!(resumed.keyframe_substep, Some(from / 16 * 16));
        assert_eq!(resumed.replayed, from % 16);
        let out = dir.path().join(format!("resumed-{from}.lvlog"));
        let mut rec = resumed.recorder(&out, RecordOptions::default()).unwrap();
        let frames_left = 120 - (from + 1) / 4;
        let substeps = resumed
            .run(frames_left, |w, info| rec.record(w, info))
            .unwrap();
        assert_eq!(substeps, 479 - from);
        rec.finish().unwrap();
        let b = open(&out);
        assert_eq!(b.len() as u64, 479 - from);
        assert_eq!(b.index()[0].summary.substep, from + 1);
        assert_frames_bitwise_equal(&a, &b);
        // The continued run is logged as the same scene, and `diff` pairs it from its start.
        assert_eq!(b.header().scene_hash, a.header().scene_hash);
        let report = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert!(report.identical, "{report:?}");
        assert_eq!(report.first_common_substep, Some(from + 1));
    }
}

/// A stretch cut out of a run between two keyframes (QA 2026-12-07: it could not be resumed
/// from its own first substeps, "no readable frame ... carries solver state") resumes from its
/// first substep, bit for bit with the original; the copy's other frames are as recorded.
#[test]
fn a_stretch_copied_between_keyframes_resumes_from_its_first_substep() {
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("chain").unwrap();
    let original = dir.path().join("orig.lvlog");
    record(&scene, &original, 100, RecordOptions::default());
    let a = open(&original);
    // Keyframes every 16 substeps: 350 to 360 holds 352, 358 is past the last (352).
    for (from, to) in [(350u64, 360u64), (353, 362)] {
        let copy = dir.path().join(format!("stretch-{from}.lvlog"));
        let range = lavender::replay::h5::ExportRange { from, to, every: 1 };
        let stop = std::sync::atomic::AtomicBool::new(false);
        lavender::replay::copy::copy_interruptible(&a, &copy, range, |_| {}, &stop).unwrap();
        let c = open(&copy);
        assert_eq!(c.len() as u64, to - from + 1);
        let first = c.frame(0).unwrap();
        assert_eq!(first.substep(), from);
        // The re-derived state is the original run's at that substep.
        let original_state = resume(&a, from).unwrap();
        assert_eq!(
            first.solver_state(),
            Some(original_state.world.solver_state()),
            "from {from}"
        );
        // Only the first frame gains one; the rest carry what the original carried.
        for i in 1..c.len() {
            let f = c.frame(i).unwrap();
            let o = a.frame(a.index_of_substep(f.substep()).unwrap()).unwrap();
            assert_eq!(
                f.solver_state(),
                o.solver_state(),
                "substep {}",
                f.substep()
            );
        }
        assert_frames_bitwise_equal(&a, &c);
        let mut resumed = resume(&c, from).unwrap();
        assert_eq!(resumed.keyframe_substep, Some(from));
        assert_eq!(resumed.replayed, 0);
        let out = dir.path().join(format!("resumed-{from}.lvlog"));
        let b = record_resumed(&mut resumed, &out, 5);
        assert_frames_bitwise_equal(&a, &b);
    }
}

/// 60 frames (240 substeps) of the limited revolute with a keyframe every 50 substeps, in
/// `dir/sparse.lvlog`.
fn record_sparse(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("sparse.lvlog");
    let options = RecordOptions {
        keyframe_every: 50,
        ..RecordOptions::default()
    };
    record(
        &Scene::builtin("limited-revolute").unwrap(),
        &path,
        60,
        options,
    );
    path
}

#[test]
fn resume_between_keyframes_replays_from_the_last_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = record_sparse(dir.path());
    let a = open(&path);
    let mut resumed = resume(&a, 173).unwrap();
    assert_eq!(resumed.keyframe_substep, Some(150));
    assert_eq!(resumed.replayed, 23);
    let out = dir.path().join("r.lvlog");
    let b = record_resumed(&mut resumed, &out, 10);
    // 2 substeps to finish frame 43, then 9 frames of 4.
    assert_eq!(b.len(), 2 + 36);
    assert_frames_bitwise_equal(&a, &b);

    let err = resume(&a, 10_000).unwrap_err().to_string();
    assert!(err.contains("substeps 0 to 239"), "{err}");
}

#[test]
fn every_keyframe_of_every_shipped_scene_restores_exactly() {
    // Regression guard: restoring through World::set_body_pose re-normalised quaternions and
    // failed here (fixed-stack, substep 5); World::restore_body_states restores bits exactly.
    // `resume` checks the recorded state hash, so any inexact restore fails this test.
    let dir = tempfile::tempdir().unwrap();
    for (name, _) in lavender::engine::builtin_scenes() {
        let scene = Scene::builtin(name).unwrap();
        let path = dir.path().join(format!("{name}.lvlog"));
        let every_frame = RecordOptions {
            keyframe_every: 1,
            ..RecordOptions::default()
        };
        record(&scene, &path, 45, every_frame);
        let r = open(&path);
        for i in (0..r.len()).step_by(5) {
            let substep = r.index()[i].summary.substep;
            let resumed = resume(&r, substep)
                .unwrap_or_else(|e| panic!("{name}: resume from substep {substep}: {e}"));
            assert_eq!(resumed.replayed, 0, "{name} at {substep}");
            assert_eq!(world_state_hash(&resumed.world), r.index()[i].state_hash);
        }
    }
}

#[test]
fn diff_finds_a_perturbation_at_its_substep_in_a_real_run() {
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("chain").unwrap();
    let original = dir.path().join("orig.lvlog");
    record(&scene, &original, 100, RecordOptions::default());
    let a = open(&original);
    // Identical rerun: identical, exit-0 semantics.
    let same = dir.path().join("same.lvlog");
    record(&scene, &same, 100, RecordOptions::default());
    let r = diff(&a, &open(&same), &Tolerance::EXACT).unwrap();
    assert!(r.identical && r.first_divergent_substep.is_none(), "{r:?}");
    assert_eq!(r.max_deviation.value, 0.0);

    // Perturb link 50's velocity by 1e-4 m/s after substep 299; substep 300 is the first
    // that differs, and the link itself (or a neighbour it drags) is named.
    let mut resumed = resume(&a, 299).unwrap();
    let id = resumed.world.body_id("chain.link50").unwrap();
    let (v, w) = resumed.world.body_velocity(id).unwrap();
    resumed
        .world
        .set_body_velocity(id, v + lavender::engine::Vec3::new(0.0, 1e-4, 0.0), w)
        .unwrap();
    let out = dir.path().join("perturbed.lvlog");
    let b = record_resumed(&mut resumed, &out, 25);
    let r = diff(&a, &b, &Tolerance::EXACT).unwrap();
    assert!(!r.identical);
    assert_eq!(r.first_divergent_substep, Some(300));
    let w = r.where_.expect("a value differs");
    assert_eq!(w.kind, lavender::replay::diff::LocationKind::Body, "{w:?}");
    assert!(r.max_deviation.value > 0.0);
    // A tolerance above the perturbation's effect over the compared frames hides it: the
    // largest deviation bounds it.
    let loose = Tolerance {
        atol: r.max_deviation.value * 1.01,
        rtol: 0.0,
    };
    assert!(diff(&a, &b, &loose).unwrap().identical);
}

#[test]
fn spike_finder_flags_a_knock_in_a_real_run_at_its_substep() {
    use lavender::replay::scrub::{scan_spikes, spikes_with_source, SpikeParams, SpikeSource};
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("chain").unwrap();
    let mut world = scene.build().unwrap();
    let dt = scene.frame_dt();
    let path = dir.path().join("knock.lvlog");
    let mut rec = Recorder::create(&path, &scene, &world, dt).unwrap();
    for frame in 0..90 {
        if frame == 20 {
            // Knock link 30 5 cm sideways after substep 79 (out of the chain's plane).
            let id = world.body_id("chain.link30").unwrap();
            let (p, q) = world.body_pose(id).unwrap();
            world
                .set_body_pose(id, p + lavender::engine::Vec3::new(0.0, 0.0, 0.05), q)
                .unwrap();
        }
        rec.step(&mut world, dt).unwrap();
    }
    rec.finish().unwrap();
    let r = open(&path);
    // The recorder wrote a spike index: the footer alone answers, and it holds exactly what
    // judging every frame finds.
    let (found, source) = spikes_with_source(&r, &SpikeParams::default()).unwrap();
    assert_eq!(source, SpikeSource::Index);
    assert_eq!(found, scan_spikes(&r, &SpikeParams::default()).unwrap());
    assert!(!found.is_empty());
    // Nothing before the knock; at substep 80 several joints around the link jump, the
    // largest at the link's own joints (30: link29-link30, 31: link30-link31).
    assert_eq!(found[0].substep, 80, "{:?}", found[0]);
    let at_knock: Vec<_> = found.iter().filter(|s| s.substep == 80).collect();
    let worst = at_knock
        .iter()
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .unwrap();
    let name = r.header().joint_name(worst.joint as usize);
    assert!(
        name == "chain.joint30" || name == "chain.joint31",
        "{name}: {worst:?}"
    );
    // Measured: angular error 0.265 rad against a baseline of 0.
    assert!(worst.value > 0.1, "{worst:?}");
    // The spike decayed (measured: 5.6e-3 at the last substep, 47x below the spike): a check
    // of the final frame alone would miss it.
    let last = r.index().last().unwrap().summary;
    let final_worst = last.angular_error.value.max(last.anchor_error.value);
    assert!(
        final_worst < 0.1 * worst.value,
        "final residual {final_worst}"
    );
}

#[test]
fn a_run_with_sleeping_islands_resumes_bit_for_bit() {
    // The shipped pendulum (swinging, stays awake) and two chains hanging at rest (they fall
    // asleep after 0.5 s = 121 substeps), with sleeping on. The rest timers are part of the
    // solver state at keyframes and of every frame's state hash.
    let mut scene = Scene::builtin("pendulum").unwrap();
    scene.world.sleeping = Some(true);
    let resting = Scene::from_toml_str(
        r#"
[[chain]]
name = "rest-a"
links = 3
origin = [5.0, 0.0, 0.0]
direction = [0.0, -1.0, 0.0]
axis = [0.0, 0.0, 1.0]

[[chain]]
name = "rest-b"
links = 1
origin = [8.0, 0.0, 0.0]
direction = [0.0, -1.0, 0.0]
axis = [0.0, 0.0, 1.0]
"#,
        "<test>",
    )
    .unwrap();
    scene.chains = resting.chains;
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("sleepy.lvlog");
    let (world, _) = record(&scene, &original, 60, RecordOptions::default());
    assert_eq!(world.sleeping_island_count(), 2);
    assert!(!world
        .is_body_sleeping(world.body_id("bob").unwrap())
        .unwrap());
    let a = open(&original);
    assert!(
        a.header().scene.contains("sleeping = true"),
        "{}",
        a.header().scene
    );
    // Before the chains sleep (timers running), just after, and later, between keyframes.
    for from in [63u64, 123, 200] {
        let mut resumed = resume(&a, from).expect("resume");
        let asleep = resumed.world.sleeping_island_count();
        assert_eq!(asleep, if from < 120 { 0 } else { 2 }, "at {from}");
        let out = dir.path().join(format!("resumed-{from}.lvlog"));
        let mut rec = resumed.recorder(&out, RecordOptions::default()).unwrap();
        let frames_left = 60 - (from + 1) / 4;
        resumed
            .run(frames_left, |w, info| rec.record(w, info))
            .unwrap();
        rec.finish().unwrap();
        assert_frames_bitwise_equal(&a, &open(&out));
    }
}

#[test]
fn a_run_with_fewer_bias_passes_records_the_setting_and_resumes_bit_for_bit() {
    // The 100-link chain, where the bias passes matter (a single joint's decoupled rows are
    // solved exactly by the first pass, so fewer passes change nothing there).
    let mut scene = Scene::builtin("chain").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let default_run = record(
        &scene,
        &dir.path().join("default.lvlog"),
        30,
        RecordOptions::default(),
    )
    .0;
    scene.world.bias_iterations = Some(2);
    let original = dir.path().join("bias.lvlog");
    let (world, _) = record(&scene, &original, 30, RecordOptions::default());
    assert_ne!(
        world.state_hash(),
        default_run.state_hash(),
        "2 bias passes change the run"
    );
    let a = open(&original);
    assert_eq!(a.header().bias_passes(), 2);
    assert!(
        a.header().scene.contains("bias_iterations = 2"),
        "{}",
        a.header().scene
    );
    let mut resumed = resume(&a, 37).expect("resume");
    assert_eq!(resumed.world.settings().bias_iterations, Some(2));
    let out = dir.path().join("bias-resumed.lvlog");
    assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 30 - (37 + 1) / 4));
}

#[test]
fn a_run_with_the_chain_solve_records_the_setting_and_resumes_bit_for_bit() {
    // The 20 x 20 grid: its columns are chains, its rows stay with the colours.
    let mut scene = Scene::builtin("grid").unwrap();
    let dir = tempfile::tempdir().unwrap();
    scene.world.chain_solve = Some(true);
    scene.world.velocity_iterations = Some(2);
    let original = dir.path().join("chains.lvlog");
    record(&scene, &original, 20, RecordOptions::default());
    let a = open(&original);
    assert!(a.header().chain_solve());
    assert!(
        a.header().scene.contains("chain_solve = true"),
        "{}",
        a.header().scene
    );
    // Keyframes every 16 frames: substep 64 is one.
    let mut resumed = resume(&a, 64).expect("resume");
    assert!(resumed.world.settings().chain_solve);
    let out = dir.path().join("chains-resumed.lvlog");
    assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 20 - (64 + 1) / 4));
    // A run without the setting records none (its header is as before the setting existed).
    let plain = dir.path().join("plain.lvlog");
    record(
        &Scene::builtin("grid").unwrap(),
        &plain,
        2,
        RecordOptions::default(),
    );
    assert!(!open(&plain).header().scene.contains("chain_solve"));
    assert!(!open(&plain).header().chain_solve());
}

/// Recording again to the path of a log that is open for reading replaces the file without
/// touching the one being read: the reader keeps every frame it had (a truncation in place
/// would fault its memory map).
#[test]
fn recording_over_a_log_being_read_leaves_the_reader_its_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.lvlog");
    let scene = Scene::builtin("pendulum").unwrap();
    record(&scene, &path, 30, RecordOptions::default());
    let old = open(&path);
    let hashes: Vec<u64> = old.index().iter().map(|m| m.state_hash).collect();
    let other = Scene::builtin("fixed-stack").unwrap();
    record(&other, &path, 2, RecordOptions::default());
    old.validate_all()
        .expect("the old frames are all still there");
    assert_eq!(old.len(), 120);
    for (i, h) in hashes.iter().enumerate() {
        assert_eq!(old.frame(i).unwrap().state_hash(), *h);
    }
    let new = open(&path);
    assert_eq!(new.header().body_count, other.build().unwrap().body_count());
    assert!(new.len() < old.len());
}

/// A keyframe whose frame is damaged is passed over for the one before it; the resumed run
/// is still checked against the target's recorded state hash.
#[test]
fn resume_passes_over_a_corrupt_keyframe() {
    let dir = tempfile::tempdir().unwrap();
    let path = record_sparse(dir.path());
    let offset = open(&path).index()[150].offset as usize;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[offset + 64] ^= 0x10;
    let damaged = dir.path().join("damaged.lvlog");
    std::fs::write(&damaged, &bytes).unwrap();
    let d = open(&damaged);
    let resumed = resume(&d, 173).unwrap();
    assert_eq!(resumed.keyframe_substep, Some(100));
    assert_eq!(resumed.corrupt_keyframes, vec![150]);
    assert_eq!(resumed.replayed, 73);
    assert_eq!(
        world_state_hash(&resumed.world),
        open(&path).frame(173).unwrap().state_hash()
    );
    // From the corrupt frame itself: refused, naming the substeps next to it that resume
    // (QA 2026-12-07: "checksum mismatch" and no way on).
    let err = resume(&d, 150).unwrap_err().to_string();
    assert!(
        err.contains("the frame of substep 150 is corrupt (checksum mismatch)")
            && err.ends_with("resume from substep 149 or 151"),
        "{err}"
    );
    assert!(resume(&d, 151).is_ok());
}

/// A world built in code, stepped a while, then recorded with the scene written from it
/// (`Scene::from_world`): its log resumes bit for bit, as a scene file's does. Before, such a
/// world had no scene to put in the header, and its logs could not be resumed.
#[test]
fn a_world_built_in_code_records_and_resumes_bit_for_bit() {
    use lavender::engine::{BodyDesc, JointDesc, Quat, Settings, Vec3};
    let mut world = World::new(Settings::default()).unwrap();
    let ground = world.add_body(BodyDesc::fixed("ground")).unwrap();
    let mut previous = ground;
    for i in 0..12 {
        let x = 0.25 * (i + 1) as f32;
        let link = world
            .add_body(
                BodyDesc::dynamic(format!("link{i}"))
                    .position(Vec3::new(x, 0.0, 0.0))
                    .rotation(Quat::from_rotation_y(0.1 * i as f32))
                    .solid_box(0.3 + 0.05 * i as f32, Vec3::new(0.12, 0.02, 0.03)),
            )
            .unwrap();
        let desc = match i % 3 {
            0 => JointDesc::revolute(format!("j{i}"), previous, link)
                .axis(Vec3::new(0.1, 0.2, 1.0))
                .limit(-0.7, 0.4),
            1 => JointDesc::spherical(format!("j{i}"), previous, link),
            _ => JointDesc::prismatic(format!("j{i}"), previous, link)
                .axis(Vec3::new(1.0, 0.3, 0.0))
                .limit(-0.02, 0.02),
        };
        let half = if previous == ground { 0.0 } else { 0.125 };
        world
            .add_joint(desc.anchors(Vec3::new(half, 0.0, 0.0), Vec3::new(-0.125, 0.0, 0.0)))
            .unwrap();
        previous = link;
    }
    let dt = 1.0 / 60.0;
    // Steps before the recording starts: the scene holds the state at that moment.
    for _ in 0..7 {
        world.step(dt).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("built.lvlog");
    let scene = Scene::from_world(&world, dt).unwrap();
    let mut rec = Recorder::create(&original, &scene, &world, dt).unwrap();
    for _ in 0..40 {
        rec.step(&mut world, dt).unwrap();
    }
    rec.finish().unwrap();
    let a = open(&original);
    assert_eq!(a.len(), 160);
    // The first recorded substep is the world's 29th (7 frames of 4 before).
    assert_eq!(a.index()[0].summary.substep, 28);
    for from in [28u64 + 63, 28 + 101] {
        let mut resumed = resume(&a, from).expect("a hand-built world's log resumes");
        let out = dir.path().join(format!("resumed-{from}.lvlog"));
        let mut rec = resumed.recorder(&out, RecordOptions::default()).unwrap();
        // To the log's last substep, 28 + 159.
        resumed
            .run_substeps(28 + 159 - from, |w, info| rec.record(w, info))
            .unwrap();
        rec.finish().unwrap();
        let b = open(&out);
        assert_eq!(b.index().last().unwrap().summary.substep, 28 + 159);
        assert_frames_bitwise_equal(&a, &b);
        let report = diff(&a, &b, &Tolerance::EXACT).unwrap();
        assert!(report.identical, "{report:?}");
    }
}

/// A run without the gyroscopic term records the setting and resumes bit for bit; one with it
/// (the default) writes nothing, so its header is as before the setting existed.
#[test]
fn a_run_without_the_gyroscopic_term_records_the_setting_and_resumes_bit_for_bit() {
    let text = "[world]\ngravity = [0.0, -1.0, 0.0]\n\n[[body]]\nname = \"top\"\n\
                inertia = [0.01, 0.02, 0.03]\nangular_velocity = [3.0, 1.0, 0.5]\n\n\
                [[body]]\nname = \"pin\"\nkind = \"static\"\nposition = [0.0, 0.5, 0.0]\n\n\
                [[joint]]\nname = \"ball\"\nkind = \"spherical\"\nbody_a = \"pin\"\n\
                body_b = \"top\"\nanchor_b = [0.0, 0.5, 0.0]\n";
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    for gyroscopic in [false, true] {
        let mut scene = Scene::from_toml_str(text, "test").unwrap();
        if !gyroscopic {
            scene.world.gyroscopic = Some(false);
        }
        let original = dir.path().join(format!("gyro-{gyroscopic}.lvlog"));
        record(&scene, &original, 20, RecordOptions::default());
        let a = open(&original);
        assert_eq!(a.header().gyroscopic(), gyroscopic);
        assert_eq!(a.header().scene.contains("gyroscopic"), !gyroscopic);
        let mut resumed = resume(&a, 64).expect("resume");
        assert_eq!(resumed.world.settings().gyroscopic, gyroscopic);
        let out = dir.path().join(format!("gyro-{gyroscopic}-resumed.lvlog"));
        assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 20 - (64 + 1) / 4));
        logs.push(a);
    }
    // The term changes this body's motion (it is what the setting is for).
    let report = diff(&logs[0], &logs[1], &Tolerance::EXACT).unwrap();
    assert!(!report.identical);
}

/// A run records whether its rows had curvature offsets and resumes with the same setting,
/// bit for bit, either way; the setting changes the motion.
#[test]
fn a_run_records_its_curvature_setting_and_resumes_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let mut logs = Vec::new();
    for curvature in [false, true] {
        let mut scene = Scene::builtin("limited-revolute").unwrap();
        scene.world.curvature = Some(curvature);
        let original = dir.path().join(format!("curvature-{curvature}.lvlog"));
        record(&scene, &original, 20, RecordOptions::default());
        let a = open(&original);
        assert_eq!(a.header().curvature(), curvature);
        assert_eq!(a.header().settings().curvature, curvature);
        let mut resumed = resume(&a, 37).expect("resume");
        assert_eq!(resumed.world.settings().curvature, curvature);
        let out = dir
            .path()
            .join(format!("curvature-{curvature}-resumed.lvlog"));
        assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 10));
        logs.push(a);
    }
    let report = diff(&logs[0], &logs[1], &Tolerance::EXACT).unwrap();
    assert!(!report.identical);
}

/// A run with speculative limits records the setting (a run without it records none, as
/// before the setting existed) and resumes with it, bit for bit; the setting changes the
/// motion (the ten limited ropes, solved directly, hit their stops in the first frames).
#[test]
fn a_run_with_speculative_limits_records_the_setting_and_resumes_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regressions");
    let mut logs = Vec::new();
    for speculative in [false, true] {
        let mut scene = Scene::load(root.join("limited-ropes.toml")).unwrap();
        scene.world.chain_solve = Some(true);
        if speculative {
            scene.world.speculative_limits = Some(true);
        }
        let original = dir.path().join(format!("speculative-{speculative}.lvlog"));
        record(&scene, &original, 20, RecordOptions::default());
        let a = open(&original);
        assert_eq!(a.header().speculative_limits(), speculative);
        assert_eq!(a.header().settings().speculative_limits, speculative);
        assert_eq!(
            a.header().scene.contains("speculative_limits"),
            speculative,
            "{}",
            a.header().scene
        );
        let mut resumed = resume(&a, 37).expect("resume");
        assert_eq!(resumed.world.settings().speculative_limits, speculative);
        let out = dir
            .path()
            .join(format!("speculative-{speculative}-resumed.lvlog"));
        assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 10));
        logs.push(a);
    }
    let report = diff(&logs[0], &logs[1], &Tolerance::EXACT).unwrap();
    assert!(!report.identical);
}

/// A log recorded before curvature offsets existed (the pendulum's golden log of
/// 2026-12-05, `data/golden/legacy/`) has no `curvature` in its header's scene: it was run
/// without them, and it resumes without them, bit for bit.
#[test]
fn a_log_from_before_curvature_offsets_resumes_without_them_bit_for_bit() {
    let legacy = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/golden/legacy/pendulum-before-curvature.lvlog");
    let a = open(&legacy);
    assert!(!a.header().scene.contains("curvature"));
    assert!(!a.header().curvature());
    assert!(!a.header().settings().curvature);
    let dir = tempfile::tempdir().unwrap();
    let mut resumed = resume(&a, 101).expect("resume");
    assert!(!resumed.world.settings().curvature);
    let out = dir.path().join("legacy-resumed.lvlog");
    assert_frames_bitwise_equal(&a, &record_resumed(&mut resumed, &out, 20));
    // Today's pendulum golden log records the setting.
    let today = open(
        &legacy
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("pendulum.lvlog"),
    );
    assert!(today.header().curvature());
}

/// A run recorded on one thread and on two writes the same bytes, to a log and to HDF5 (the
/// engine's work split is fixed by the scene; the HDF5 headers hold no times).
#[test]
fn logs_and_hdf5_files_are_the_same_bytes_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("grid").unwrap();
    let dt = scene.frame_dt();
    let mut files = Vec::new();
    for threads in [1, 2] {
        for name in ["run.lvlog", "run.h5"] {
            let path = dir.path().join(format!("{threads}-{name}"));
            let mut world = scene.build().unwrap();
            let mut settings = *world.settings();
            settings.threads = threads;
            world.set_settings(settings).unwrap();
            let mut rec =
                Recorder::create_with(&path, &scene, &world, dt, RecordOptions::default()).unwrap();
            for _ in 0..40 {
                rec.step(&mut world, dt).unwrap();
            }
            assert_eq!(rec.finish().unwrap().frames, 160);
            files.push(std::fs::read(&path).unwrap());
        }
    }
    assert!(
        files[0] == files[2],
        "the logs differ between 1 and 2 threads"
    );
    assert!(
        files[1] == files[3],
        "the HDF5 files differ between 1 and 2 threads"
    );
}

/// A resumed run that `stop` ends between two substeps (Ctrl-C in a long frame) keeps the
/// substeps run, each the original's state, and goes on from there bit for bit.
#[test]
fn a_resumed_run_stops_between_substeps_and_goes_on_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let scene = Scene::builtin("chain").unwrap();
    let original = dir.path().join("orig.lvlog");
    record(&scene, &original, 30, RecordOptions::default());
    let a = open(&original);
    let state_at = |substep: u64| a.index()[a.index_of_substep(substep).unwrap()].state_hash;
    // From inside a frame: two lone substeps to its end, then whole frames of four.
    let mut resumed = resume(&a, 41).unwrap();
    assert_eq!(resumed.substeps_to_frame_boundary(), 2);
    let mut seen = Vec::new();
    let mut asked = 0;
    // Asked before the second lone substep, before the next frame, and inside it before its
    // second and third substeps: the fourth answer stops after 2 + 2 substeps.
    let ran = resumed
        .run_stoppable(
            3,
            |w, info| {
                seen.push(info.substep);
                assert_eq!(w.state_hash(), state_at(info.substep));
                Ok(())
            },
            &mut || {
                asked += 1;
                asked == 4
            },
        )
        .unwrap();
    assert_eq!((ran, asked), (4, 4));
    assert_eq!(seen, [42, 43, 44, 45]);
    assert_eq!(resumed.world.substeps_done(), 46);
    assert_eq!(resumed.world.state_hash(), state_at(45));
    // Inside a frame now: it goes on, lone substeps to the boundary then whole frames.
    let ran = resumed
        .run_substeps_stoppable(10, |_, _| Ok(()), &mut || false)
        .unwrap();
    assert_eq!(ran, 10);
    assert_eq!(resumed.world.state_hash(), state_at(55));
    // And a stop asked at once ends after one substep.
    let ran = resumed
        .run_substeps_stoppable(10, |_, _| Ok(()), &mut || true)
        .unwrap();
    assert_eq!(ran, 1);
    assert_eq!(resumed.world.state_hash(), state_at(56));
}
