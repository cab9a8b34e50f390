//! Recording overhead on the 100 x 100 revolute chain scene (100 chains of 100 links: 10,100
//! bodies, 10,000 joints, default settings, 1/60 s frames of 4 substeps), and scrub speed.
//!
//! `cargo bench --bench record` prints, from one run:
//!
//! * `overhead`: one world stepped without recording and an identical world stepped while
//!   recording every substep to a `.lvlog`, in alternating blocks of 15 frames so that both
//!   see the same machine state (a recorded block ends when the recording thread has written
//!   all of it); the ratio of the summed step times recorded/unrecorded (and the median of
//!   the per-block-pair ratios, robust to other load on the machine), the time per recorded frame and the write bandwidth reached (log bytes /
//!   time spent in `Recorder::record` on the stepping thread, and log bytes / recorded run
//!   time); `default` is `RecordOptions::default()` (recording thread, keyframes every 16
//!   frames, spike index), `default_one_stepping_thread` the same with the engine on one
//!   thread (the recording thread then has the other core to itself), the others are the
//!   alternatives measured against the default;
//! * `breakdown`: the pieces of a recorded substep, timed alone;
//! * `scrub`: the time per GB of the log for the timeline (footer index only), the spikes
//!   from the log's spike index (footer only), the same spikes found by scanning every
//!   frame (what non-default settings cost; the two must be identical) and the worst joints
//!   (every frame), on the log just written;
//! * criterion's own timings of one frame, unrecorded and recorded.
//!
//! `LAVENDER_BENCH_FRAMES` (default 60) sets the frames of the overhead run; the log of 60
//! frames is about 210 MB and is deleted afterwards. `LAVENDER_BENCH_DIR` sets where the log
//! is written (default: cargo's target tmp directory, on disk).

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use lavender::engine::{Scene, World};
use lavender::replay::recorder::{RecordOptions, Recorder, DEFAULT_KEYFRAME_EVERY};
use lavender::replay::{scrub, LogReader, WriterOptions};

/// The 100 x 100 revolute chain scene: 100 horizontal chains of 100 links, 0.5 m apart in z
/// (`data/benchmarks/chains-100x100.toml`).
fn chains_scene() -> Scene {
    // The shipped file, so that `lavender run` records the same scene.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/benchmarks/chains-100x100.toml");
    Scene::load(path).expect("data/benchmarks/chains-100x100.toml")
}

struct Overhead {
    frames: u64,
    unrecorded: Duration,
    recorded: Duration,
    in_record: Duration,
    bytes: u64,
    /// recorded/unrecorded time of each adjacent pair of frames.
    pair_ratios: Vec<f64>,
    /// CPU time of the whole process in the unrecorded and recorded blocks, and of the
    /// recording threads (Linux `/proc`; zero elsewhere).
    cpu_unrecorded: Duration,
    cpu_recorded: Duration,
    cpu_recorder_threads: Duration,
}

/// CPU time consumed so far by this process's threads whose name starts with `prefix`
/// (all threads for ""), from `/proc/self/task/*/schedstat` (ns; Linux only, else zero).
/// Threads that have exited are not counted, so take differences within a thread's life.
fn thread_cpu(prefix: &str) -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let mut ns = 0u64;
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        ns += stat
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
    }
    Duration::from_nanos(ns)
}

/// Frames per timed block (see [`overhead`]).
const BLOCK: u64 = 15;

/// Steps two identical worlds in alternating blocks of [`BLOCK`] frames, recording one of
/// them. A recorded block ends with `Recorder::drain`, so the recording thread's work for the
/// block is inside the block's time (it runs behind the stepping thread; without the drain,
/// its last jobs would run during, and be charged to, the next unrecorded block), while
/// within a block it overlaps the later frames as in a real run.
fn overhead(path: &Path, frames: u64, options: RecordOptions, threads: u32) -> Overhead {
    let scene = chains_scene();
    let dt = scene.frame_dt();
    let mut plain = scene.build().unwrap();
    let mut recorded_world = scene.build().unwrap();
    for world in [&mut plain, &mut recorded_world] {
        let settings = lavender::engine::Settings {
            threads,
            ..*world.settings()
        };
        world.set_settings(settings).unwrap();
    }
    let mut rec = Recorder::create_with(path, &scene, &recorded_world, dt, options).unwrap();
    // Warm-up: one frame each (page faults of the solver's buffers).
    plain.step(dt).unwrap();
    recorded_world.step(dt).unwrap();
    let mut out = Overhead {
        frames,
        unrecorded: Duration::ZERO,
        recorded: Duration::ZERO,
        in_record: Duration::ZERO,
        bytes: 0,
        pair_ratios: Vec::new(),
        cpu_unrecorded: Duration::ZERO,
        cpu_recorded: Duration::ZERO,
        cpu_recorder_threads: Duration::ZERO,
    };
    let mut left = frames;
    while left > 0 {
        let block = left.min(BLOCK);
        left -= block;
        let cpu = thread_cpu("");
        let t = Instant::now();
        for _ in 0..block {
            plain.step(dt).unwrap();
        }
        let unrecorded = t.elapsed();
        out.unrecorded += unrecorded;
        let cpu_mid = thread_cpu("");
        out.cpu_unrecorded += cpu_mid - cpu;
        let recorder_cpu = thread_cpu("lavender-");
        let t = Instant::now();
        let mut in_record = Duration::ZERO;
        for _ in 0..block {
            recorded_world
                .step_observed(dt, |w, info| {
                    let r = Instant::now();
                    rec.record(w, info).unwrap();
                    in_record += r.elapsed();
                })
                .unwrap();
        }
        rec.drain().unwrap();
        let recorded = t.elapsed();
        out.cpu_recorded += thread_cpu("").saturating_sub(cpu_mid);
        out.cpu_recorder_threads += thread_cpu("lavender-").saturating_sub(recorder_cpu);
        out.recorded += recorded;
        out.in_record += in_record;
        out.pair_ratios
            .push(recorded.as_secs_f64() / unrecorded.as_secs_f64());
    }
    assert_eq!(plain.state_hash(), recorded_world.state_hash());
    out.bytes = rec.finish().unwrap().bytes;
    out
}

fn report_overhead(label: &str, o: &Overhead) {
    let per_substep = |d: Duration| d.as_secs_f64() * 1e3 / (o.frames * 4) as f64;
    let ratio = o.recorded.as_secs_f64() / o.unrecorded.as_secs_f64();
    let mut pairs = o.pair_ratios.clone();
    pairs.sort_by(f64::total_cmp);
    let median = pairs[pairs.len() / 2];
    println!(
        "record/{label}: {} frames ({} substeps) of the 100x100 chain: unrecorded {:.2} ms/frame, \
         recorded {:.2} ms/frame, ratio recorded/unrecorded = {ratio:.3} ({:+.1} %; median of \
         per-block-pair ratios {median:.3}), time in \
         Recorder::record {:.2} ms/frame, log {:.1} MB ({:.2} MB/frame), write bandwidth {:.2} GB/s \
         (bytes / time in record), {:.2} GB/s over the recorded run; CPU per substep: \
         unrecorded {:.3} ms, recorded {:.3} ms, of which recording threads {:.3} ms",
        o.frames,
        o.frames * 4,
        o.unrecorded.as_secs_f64() * 1e3 / o.frames as f64,
        o.recorded.as_secs_f64() * 1e3 / o.frames as f64,
        (ratio - 1.0) * 100.0,
        o.in_record.as_secs_f64() * 1e3 / o.frames as f64,
        o.bytes as f64 / 1e6,
        o.bytes as f64 / 1e6 / o.frames as f64,
        o.bytes as f64 / o.in_record.as_secs_f64() / 1e9,
        o.bytes as f64 / o.recorded.as_secs_f64() / 1e9,
        per_substep(o.cpu_unrecorded),
        per_substep(o.cpu_recorded),
        per_substep(o.cpu_recorder_threads),
    );
}

fn report_scrub(path: &Path) {
    let bytes = std::fs::metadata(path).unwrap().len() as f64;
    let gb = bytes / 1e9;
    let params = scrub::SpikeParams::default();
    // SAFETY: the bench's own file, not modified while read.
    let open = || unsafe { LogReader::open(path) }.unwrap();
    let t = Instant::now();
    let reader = open();
    let timeline = scrub::timeline(&reader);
    let t_timeline = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let reader = open();
    let (indexed, source) = scrub::spikes_with_source(&reader, &params).unwrap();
    let t_index = t.elapsed().as_secs_f64();
    assert_eq!(
        source,
        scrub::SpikeSource::Index,
        "the recorder writes a spike index"
    );
    let t = Instant::now();
    let reader = open();
    let scanned = scrub::scan_spikes(&reader, &params).unwrap();
    let t_scan = t.elapsed().as_secs_f64();
    assert_eq!(indexed, scanned, "index and scan disagree");
    let t = Instant::now();
    let worst = scrub::worst_joints(&reader, 10).unwrap();
    let t_worst = t.elapsed().as_secs_f64();
    println!(
        "scrub: {:.1} MB log, {} frames: open + timeline (footer index) {:.4} s = {:.3} s/GB; \
         open + spikes from the spike index {:.4} s = {:.3} s/GB; spikes by scanning (validates \
         and judges every frame; what other settings cost) {:.3} s = {:.2} s/GB ({} spikes, \
         identical); worst joints {:.3} s = {:.2} s/GB ({} listed)",
        bytes / 1e6,
        timeline.len(),
        t_timeline,
        t_timeline / gb,
        t_index,
        t_index / gb,
        t_scan,
        t_scan / gb,
        scanned.len(),
        t_worst,
        t_worst / gb,
        worst.len()
    );
}

/// Where the recording time goes, per substep (the pieces `Recorder::record` calls).
fn report_breakdown(dir: &Path) {
    let scene = chains_scene();
    let dt = scene.frame_dt();
    let mut world = scene.build().unwrap();
    for _ in 0..5 {
        world.step(dt).unwrap();
    }
    let n = 50u32;
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed().as_secs_f64() * 1e3 / f64::from(n)
    };
    let (mut poses, mut vels) = (Vec::new(), Vec::new());
    let gather =
        time(&mut || lavender::replay::recorder::gather_bodies(&world, &mut poses, &mut vels));
    let mut sink = 0u64;
    let hash = time(&mut || sink ^= world.state_hash());
    let xxh3 = time(&mut || {
        sink ^= lavender::replay::recorder::state_hash(&poses, &vels, world.solver_state())
    });
    let mut e = 0.0;
    let energy = time(&mut || e += world.total_energy());
    let energy_ours = time(&mut || e += lavender::replay::recorder::total_energy(&world));
    let frame = lavender::replay::FrameInput {
        substep: 0,
        time: 0.0,
        poses: &poses,
        velocities: &vels,
        diagnostics: world.constraint_data(),
        solver_state: None,
        total_energy: e,
        state_hash: sink,
    };
    let summary = time(&mut || sink ^= lavender::replay::FrameSummary::compute(&frame).substep);
    let params = scrub::SpikeParams::default();
    let mut finder = scrub::SpikeFinder::for_joints(world.joint_count(), &params).unwrap();
    let mut onsets = Vec::new();
    // The finder on real, changing data: the diagnostics of 80 consecutive substeps, judged
    // in order (`n` of them timed after the first 16 filled the windows in part).
    let mut history = Vec::new();
    let mut probe = world.clone();
    probe
        .step_observed(20.0 * dt, |w, _| history.push(w.constraint_data().to_vec()))
        .unwrap();
    assert!(history.len() >= 16 + n as usize);
    for (s, rows) in history[..16].iter().enumerate() {
        finder.judge_frame(s as u64, s as f64, rows, &mut onsets);
    }
    // In the recorder the frame's diagnostics are in cache (the summary just read them):
    // each frame is copied into one buffer first, and the copy's own time subtracted.
    let mut rows = history[0].clone();
    let mut s = 16usize;
    let copy = time(&mut || {
        rows.copy_from_slice(&history[s]);
        s += 1;
    });
    let mut s = 16usize;
    let spike_index = time(&mut || {
        rows.copy_from_slice(&history[s]);
        finder.judge_frame(s as u64, s as f64, &rows, &mut onsets);
        s += 1;
    }) - copy;
    let header = lavender::replay::recorder::header_for(&scene, &world, dt);
    let path = dir.join("breakdown.lvlog");
    let mut w = lavender::replay::LogWriter::create(&path, &header).unwrap();
    let mut substep = 0u64;
    let mut append = |solver: bool| {
        substep += 1;
        w.append(&lavender::replay::FrameInput {
            substep,
            time: substep as f64,
            poses: &poses,
            velocities: &vels,
            diagnostics: world.constraint_data(),
            solver_state: solver.then(|| world.solver_state()),
            total_energy: e,
            state_hash: sink,
        })
        .unwrap();
    };
    let append_key = time(&mut || append(true));
    let append_plain = time(&mut || append(false));
    drop(w);
    let frame_bytes = (std::fs::metadata(&path).unwrap().len() as f64) / (2.0 * f64::from(n));
    // The diagnostics after every substep: `step` refreshes them once per frame,
    // `step_observed` after every substep (a recorder needs them), in alternation.
    let (mut plain, mut observed) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..10 {
        let t = Instant::now();
        world.step(dt).unwrap();
        plain += t.elapsed();
        let t = Instant::now();
        world.step_observed(dt, |_, _| {}).unwrap();
        observed += t.elapsed();
    }
    let per_substep = |d: Duration| d.as_secs_f64() * 1e3 / 40.0;
    let t = Instant::now();
    for _ in 0..n {
        world.sync();
    }
    let sync = t.elapsed().as_secs_f64() * 1e3 / f64::from(n);
    println!(
        "record/breakdown per substep: step {:.3} ms, step_observed with an empty observer \
         {:.3} ms (per-substep diagnostics; World::sync alone {sync:.3} ms), gather poses+velocities {gather:.3} ms, \
         World::state_hash (gather + xxh3) {hash:.3} ms, state_hash of gathered arrays (xxh3) {xxh3:.3} ms, \
         World::total_energy (not used) {energy:.3} ms, recorder::total_energy (allocating \
         wrapper of the recorder's energy) {energy_ours:.3} ms, FrameSummary::compute \
         {summary:.3} ms, spike index (SpikeFinder::judge_frame) {spike_index:.3} ms, \
         LogWriter::append (summary, spike index, encode, crc32, write) with solver state \
         {append_key:.3} ms, without {append_plain:.3} ms (writer throughput {:.2} GB/s on \
         {:.2} MB frames)",
        per_substep(plain),
        per_substep(observed),
        frame_bytes / (0.5 * (append_key + append_plain) * 1e-3) / 1e9,
        frame_bytes / 1e6,
    );
}

fn criterion_frames(c: &mut Criterion) {
    let scene = chains_scene();
    let dt = scene.frame_dt();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("chain100x100_frame");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    let mut world: World = scene.build().unwrap();
    group.bench_function("unrecorded", |b| b.iter(|| world.step(dt).unwrap()));
    let mut world: World = scene.build().unwrap();
    let path = dir.path().join("criterion.lvlog");
    let mut rec = Some(Recorder::create(&path, &scene, &world, dt).unwrap());
    let mut frames = 0u32;
    group.bench_function("recorded", |b| {
        b.iter(|| {
            // Start a new file every 64 frames so the bench does not fill the disk.
            frames += 1;
            if frames.checked_rem(64) == Some(0) {
                rec.take().unwrap().finish().unwrap();
                rec = Some(Recorder::create(&path, &scene, &world, dt).unwrap());
            }
            rec.as_mut().unwrap().step(&mut world, dt).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, criterion_frames);

fn main() {
    let frames: u64 = std::env::var("LAVENDER_BENCH_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    // `LAVENDER_BENCH_DIR` puts the log elsewhere (e.g. /dev/shm to take the disk out).
    let base = std::env::var("LAVENDER_BENCH_DIR").unwrap_or(env!("CARGO_TARGET_TMPDIR").into());
    let dir = tempfile::tempdir_in(base).unwrap();
    let path = dir.path().join("chain100x100.lvlog");
    report_breakdown(dir.path());
    let default = overhead(&path, frames, RecordOptions::default(), 0);
    report_overhead("default", &default);
    report_scrub(&path);
    // The same with one stepping thread: the recording thread then has a core of its own
    // (what a machine with a spare core gives).
    report_overhead(
        "default_one_stepping_thread",
        &overhead(&path, frames, RecordOptions::default(), 1),
    );
    for (label, threaded, background, keyframe_every) in [
        ("caller_thread", false, false, DEFAULT_KEYFRAME_EVERY),
        (
            "caller_thread_background_write",
            false,
            true,
            DEFAULT_KEYFRAME_EVERY,
        ),
        ("threaded_keyframes_every_frame", true, false, 1),
    ] {
        let options = RecordOptions {
            keyframe_every,
            threaded,
            writer: WriterOptions {
                background,
                ..WriterOptions::default()
            },
        };
        report_overhead(label, &overhead(&path, frames, options, 0));
    }
    drop(dir);
    if std::env::args().any(|a| a == "--skip-criterion") {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
