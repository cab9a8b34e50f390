//! Write bandwidth of the log: one frame of a 10,000-body, 10,000-joint scene per substep.
//!
//! `append/devnull` is the CPU cost (summary, rkyv encode, crc32, one `write` syscall);
//! `append/file` adds the page-cache copy of a real file; `append/file_background` is the
//! caller's cost with the writer thread doing the copy (back to back, so the queue is full
//! and it converges to the thread's speed; with a real step between frames it is the
//! `devnull` cost). Files are recreated every 256 frames (outside the timed region) so the
//! bench does not fill the disk.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lavender_replay::{FrameInput, Header, LogWriter, WriterOptions};

const BODIES: usize = 10_000;
const JOINTS: usize = 10_000;

struct Scene {
    poses: Vec<[f32; 7]>,
    velocities: Vec<[f32; 6]>,
    diagnostics: Vec<[f32; 8]>,
}

fn scene() -> Scene {
    Scene {
        poses: (0..BODIES)
            .map(|b| [b as f32, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0])
            .collect(),
        velocities: (0..BODIES)
            .map(|b| [0.0, -(b as f32), 0.0, 0.1, 0.2, 0.3])
            .collect(),
        diagnostics: (0..JOINTS)
            .map(|j| [1e-4, 0.0, 0.0, 1e-4 * j as f32, 1e-5, 0.0, 1e-3, 0.5])
            .collect(),
    }
}

fn header() -> Header {
    Header {
        body_count: BODIES,
        joint_count: JOINTS,
        ..Header::default()
    }
}

fn run(path: &std::path::Path, s: &Scene, iters: u64, background: bool) -> Duration {
    let mut total = Duration::ZERO;
    let mut substep = 0u64;
    let mut left = iters;
    while left > 0 {
        let chunk = left.min(256);
        let options = WriterOptions {
            background,
            ..WriterOptions::default()
        };
        let mut w = LogWriter::create_with(path, &header(), options).unwrap();
        let start = Instant::now();
        for _ in 0..chunk {
            w.append(&FrameInput {
                substep,
                time: substep as f64 * 1e-3,
                poses: &s.poses,
                velocities: &s.velocities,
                diagnostics: &s.diagnostics,
                solver_state: None,
                total_energy: 1.0,
                state_hash: substep,
            })
            .unwrap();
            substep += 1;
        }
        // The time the simulation thread spends in `append` (for a background writer the
        // final drain happens in `drop`, outside the timed region, as it would at the end of
        // a run).
        total += start.elapsed();
        drop(w);
        left -= chunk;
    }
    total
}

fn bench(c: &mut Criterion) {
    let s = scene();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.lvlog");
    let frame_bytes = (BODIES * (7 + 6) + JOINTS * 8) * 4;
    let mut g = c.benchmark_group("append");
    g.throughput(Throughput::Bytes(frame_bytes as u64));
    if cfg!(unix) {
        g.bench_function("devnull", |b| {
            b.iter_custom(|iters| run(std::path::Path::new("/dev/null"), &s, iters, false))
        });
    }
    g.bench_function("file", |b| {
        b.iter_custom(|iters| run(&file, &s, iters, false))
    });
    g.bench_function("file_background", |b| {
        b.iter_custom(|iters| run(&file, &s, iters, true))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
