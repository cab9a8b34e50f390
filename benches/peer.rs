//! Criterion benchmarks of one 60 Hz step of the chain and grid scenes in rapier3d, at the
//! settings matching Lavender's defaults (see `lavender_bench::peer`).
//!
//! `cargo bench --features peer --bench peer`

use criterion::{criterion_group, criterion_main, Criterion};
use lavender_bench::measure::RunConfig;
use lavender_bench::peer::RapierScene;
use lavender_bench::scenes::BenchScene;
use std::time::Duration;

fn peer(c: &mut Criterion) {
    let mut group = c.benchmark_group("rapier3d-step");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for name in ["chain", "grid", "fixed-stack", "mixed"] {
        let scene = BenchScene::by_name(name).unwrap();
        let mut rapier = RapierScene::new(&scene, &RunConfig::default()).unwrap();
        rapier.step();
        group.bench_function(name, |b| b.iter(|| rapier.step()));
    }
    group.finish();
}

criterion_group!(benches, peer);
criterion_main!(benches);
