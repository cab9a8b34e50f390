//! Regression replay: rerun every shipped scene and compare it with its golden log in
//! `data/golden/`, bit for bit (the engine is deterministic on one build).
//!
//! A deliberate change of results (a solver change, a new SIMD path) makes this fail; after
//! checking the change with `lavender diff`, regenerate every golden log with
//!
//! ```text
//! LAVENDER_REGENERATE_GOLDEN=1 cargo test --release --test tests golden
//! ```

use lavender::engine::Scene;
use lavender::replay::diff::{diff, Tolerance};
use lavender::replay::recorder::{RecordOptions, Recorder};
use lavender::replay::LogReader;
use std::path::{Path, PathBuf};

/// The command that rewrites the golden logs (printed by every failure).
pub const REGENERATE: &str =
    "LAVENDER_REGENERATE_GOLDEN=1 cargo test --release --test tests golden";

/// Shipped scene and number of frames recorded (every substep of them). Lengths keep all
/// golden logs together near 1.5 MB: the 760-joint grid runs 3 frames, the 100-link chain 15.
pub const GOLDEN: [(&str, u64); 7] = [
    ("pendulum", 60),
    ("limited-revolute", 60),
    ("fixed-stack", 30),
    ("prismatic-slider", 60),
    ("chain", 15),
    ("grid", 3),
    ("hub", 15),
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/golden")
}

/// Records `frames` frames of the shipped scene `name` to `path`, without solver state (the
/// state hash of every frame covers it).
pub fn record_golden(name: &str, frames: u64, path: &Path) {
    let scene = Scene::builtin(name).expect("shipped scene");
    let mut world = scene.build().expect("shipped scene builds");
    let dt = scene.frame_dt();
    let options = RecordOptions {
        keyframe_every: 0,
        ..RecordOptions::default()
    };
    let mut rec = Recorder::create_with(path, &scene, &world, dt, options).expect("recorder");
    for _ in 0..frames {
        rec.step(&mut world, dt).expect("step");
    }
    rec.finish().expect("finish");
}

#[test]
fn golden_runs_are_reproduced_bit_for_bit() {
    let regenerate = std::env::var_os("LAVENDER_REGENERATE_GOLDEN").is_some();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (name, frames) in GOLDEN {
        let golden = golden_dir().join(format!("{name}.lvlog"));
        if regenerate {
            std::fs::create_dir_all(golden_dir()).unwrap();
            record_golden(name, frames, &golden);
            eprintln!("regenerated {}", golden.display());
            continue;
        }
        let fresh = dir.path().join(format!("{name}.lvlog"));
        record_golden(name, frames, &fresh);
        // SAFETY: the golden logs and the temporary file are not modified during the test.
        let g = match unsafe { LogReader::open(&golden) } {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: cannot read {}: {e}", golden.display()));
                continue;
            }
        };
        // SAFETY: as above.
        let f = unsafe { LogReader::open(&fresh) }.unwrap();
        let report = diff(&g, &f, &Tolerance::EXACT).unwrap();
        // `diff` compares the recorded state and diagnostics; the per-frame summaries (the
        // maxima, the joints holding them, the energy) are the writer's and are checked too:
        // until 2026-12-05 a change in which joint a zero maximum names went unnoticed here.
        if let Some((a, b)) = g.summaries().zip(f.summaries()).find(|(a, b)| a != b) {
            failures.push(format!(
                "{name}: the frame summaries differ at substep {}: golden {a:?}, this build {b:?}",
                a.substep
            ));
        }
        if !report.identical || report.scene_hash_mismatch {
            failures.push(format!(
                "{name}: {} (golden: engine {} {}; this build: {} {}); report: {}",
                match (&report.first_divergent_substep, &report.where_) {
                    (Some(s), Some(w)) => format!(
                        "first differs at substep {s}, {} `{}` {}",
                        if w.kind == lavender::replay::diff::LocationKind::Body {
                            "body"
                        } else {
                            "joint"
                        },
                        w.name,
                        w.field
                    ),
                    (Some(s), None) => format!(
                        "first differs at substep {s}: equal recorded values, different state \
                         hash (warm-start impulses, or the hash itself changed)"
                    ),
                    (None, _) => "the scene changed (scene hash differs)".into(),
                },
                g.header().engine_version,
                g.header().target_features,
                lavender::engine::VERSION,
                lavender::engine::target_features(),
                serde_json::to_string(&report).unwrap()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the shipped scenes no longer reproduce their golden logs:\n  {}\n\
         If the change is intended (check it with `lavender diff data/golden/SCENE.lvlog NEW.lvlog`), \
         regenerate the golden logs with:\n\n    {REGENERATE}\n",
        failures.join("\n  ")
    );
}

#[test]
fn golden_logs_stay_small() {
    let total: u64 = GOLDEN
        .iter()
        .filter_map(|(name, _)| std::fs::metadata(golden_dir().join(format!("{name}.lvlog"))).ok())
        .map(|m| m.len())
        .sum();
    assert!(
        total < 2_500_000,
        "golden logs total {total} bytes; keep them under 2.5 MB"
    );
}
