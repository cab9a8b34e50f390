//! Criterion benchmarks of one 60 Hz step (4 substeps, 8 velocity and 2 position passes) on
//! the benchmark scenes of `lavender-bench`: the wide path and the scalar reference on one
//! thread, the wide path on two. `lavender bench` reports the same runs as tables and JSON.
//!
//! `cargo bench --bench solver`; the peer: `cargo bench --features peer --bench peer`.

use criterion::{criterion_group, criterion_main, Criterion};
use lavender_bench::measure::{RunConfig, FRAME_DT};
use lavender_bench::scenes::BenchScene;
use lavender_engine::SolverPath;
use std::time::Duration;

fn solver(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for name in ["chain", "grid", "fixed-stack", "mixed"] {
        let scene = BenchScene::by_name(name).unwrap();
        for (path, threads) in [
            (SolverPath::Wide, 1),
            (SolverPath::Scalar, 1),
            (SolverPath::Wide, 2),
        ] {
            let config = RunConfig {
                path,
                threads,
                ..RunConfig::default()
            };
            let mut world = scene.build(config.settings()).unwrap();
            world.step(FRAME_DT).unwrap();
            let id = format!("{name}/{}/{threads}t", path.name());
            group.bench_function(id, |b| b.iter(|| world.step(FRAME_DT).unwrap()));
        }
    }
    group.finish();
}

criterion_group!(benches, solver);
criterion_main!(benches);
