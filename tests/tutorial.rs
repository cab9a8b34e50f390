//! The constraints tutorial at `--quick` resolution: each experiment's claimed relationships,
//! read from the JSON a user gets from `lavender tutorial constraints NAME --json`.

use lavender_tutorial::{experiments, run, Options};
use serde_json::Value;

fn quick(name: &str) -> Value {
    let out = std::env::temp_dir().join(format!("lavender-tests-tutorial-{name}"));
    let report = run(
        name,
        &Options {
            quick: true,
            out_dir: Some(out),
            progress: false,
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    for file in &report.files {
        let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        assert!(len > 1000, "{name}: plot {} is {len} bytes", file.display());
    }
    report.json
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn every_listed_experiment_runs() {
    assert_eq!(experiments().len(), 8);
}

#[test]
fn particle_circle_relationships() {
    let j = quick("particle-circle");
    let m = &j["methods"];
    assert!(
        num(&m["unconstrained"]["final_abs_c"]) > 32.0,
        "the tangent escapes"
    );
    // The multiplier drifts: its final |C| is well above zero and above Baumgarte's.
    assert!(num(&m["multiplier"]["final_abs_c"]) > 0.01);
    // Baumgarte bounds the error at order 0.003 (within a factor of 2).
    let b = num(&m["baumgarte"]["final_abs_c"]);
    assert!((0.0015..0.006).contains(&b), "baumgarte {b}");
    assert!(
        num(&m["projection"]["max_abs_c"]) < 3e-16,
        "projection at f64 precision"
    );
    assert!(num(&m["projection"]["final_abs_cdot"]) < 3e-16);
}

#[test]
fn circle_multiplier_matches_the_closed_form() {
    let j = quick("circle-multiplier-force");
    assert!(num(&j["max_abs_lambda_difference"]) < 1e-12);
    assert!(num(&j["states_compared"]) > 1000.0);
}

#[test]
fn baumgarte_map_separates_stable_and_unstable_gains() {
    let j = quick("baumgarte-stability");
    let f = num(&j["stable_fraction"]);
    assert!(f > 0.05 && f < 0.95, "both regions present: {f}");
    assert!(num(&j["agreement_with_prediction"]) > 0.99);
    for ex in j["examples"].as_array().unwrap() {
        let label = ex["label"].as_str().unwrap();
        let verdict = ex["verdict"].as_str().unwrap();
        // "diverged" (non-finite) and "unstable" (growing) both count as unstable.
        let stable = verdict == "stable";
        assert_eq!(stable, !label.contains("too large"), "{ex}");
    }
    // The map is a row per beta (`stable_index`): (alpha, beta) = (10, 10) /s is stable,
    // (10, 250) /s diverges.
    let at = |key: &str, v: f64| {
        (j[key].as_array().unwrap().iter())
            .position(|x| num(x) == v)
            .unwrap()
    };
    let stable = |alpha: f64, beta: f64| {
        j["stable"][at("beta_per_s", beta)][at("alpha_per_s", alpha)]
            .as_bool()
            .unwrap()
    };
    assert!(stable(10.0, 10.0) && !stable(10.0, 250.0));
    assert_eq!(
        j["stable"].as_array().unwrap().len(),
        j["beta_per_s"].as_array().unwrap().len()
    );
    assert!(j["stable_index"]
        .as_str()
        .unwrap()
        .contains("a row per beta"));
}

#[test]
fn projection_energy_budget_adds_up() {
    let j = quick("projection-energy");
    for case in ["circle", "pendulum"] {
        let b = &j["cases"][case]["budget"];
        let sum = num(&b["integration_total"]) + num(&b["projection_total"]);
        assert!((sum - num(&b["net_drift"])).abs() < 1e-9, "{case}: {b}");
        assert!(num(&b["max_abs_c"]) < 3e-16);
    }
    // On the circle projection only removes energy, a little every step.
    let c = &j["cases"]["circle"]["budget"];
    assert!(num(&c["projection_total"]) < 0.0);
    assert_eq!(num(&c["projection_removing_fraction"]), 1.0);
}

#[test]
fn diagnostics_experiment_matches_the_hand_calculation() {
    let j = quick("diagnostics");
    assert_eq!(j["columns"].as_array().unwrap().len(), 8);
    let row: Vec<f64> = j["row"].as_array().unwrap().iter().map(num).collect();
    assert!((row[0] - 0.02).abs() < 1e-6 && (row[1] - 0.03).abs() < 1e-6 && row[2].abs() < 1e-6);
    assert!((row[3] - 0.036_055_5).abs() < 1e-6);
    assert!((num(&j["expected_norm"]) - 0.036_055_5).abs() < 1e-6);
    // Resolution at 1 m from the origin (measured 2026-12-07): within 10 % from 2.2e-7 m up,
    // the y component alone (0.832 of the offset) at 1 nm.
    let r = &j["resolution"];
    let from = num(&r["resolved_from_m"]);
    assert!((1e-7..5e-7).contains(&from), "{r}");
    assert!((num(&r["ratio_at_1nm"]) - 0.832).abs() < 0.005, "{r}");
    assert!(
        num(&r["max_abs_difference_from_1um_m"]) <= f64::from(f32::EPSILON),
        "{r}"
    );
}

#[test]
fn sweep_shows_iterations_help_and_the_substep_cap() {
    let j = quick("sweep");
    let substeps: Vec<f64> = j["substeps"].as_array().unwrap().iter().map(num).collect();
    assert_eq!(substeps, [8.0, 4.0, 2.0, 1.0]);
    let anchor = j["max_anchor_error"].as_array().unwrap();
    let angular = j["max_angular_error"].as_array().unwrap();
    for (a, w) in anchor.iter().zip(angular) {
        let (a, w) = (a.as_array().unwrap(), w.as_array().unwrap());
        assert!(
            num(&a[3]) < num(&a[0]),
            "4 -> 32 iterations reduces the anchor residual"
        );
        assert!(
            num(&w[3]) < num(&w[0]),
            "4 -> 32 iterations reduces the angular residual"
        );
    }
    // 1/120 s frames are two 1/240 s substeps: those rows agree.
    assert_eq!(anchor[2], anchor[3]);
    // Every maximum came at the first substep while the final error is far smaller.
    let early = j["early_spikes"].as_array().unwrap();
    assert!(!early.is_empty());
    let fin = num(&j["final_anchor_error"][0][0]);
    assert!(fin < 0.1 * num(&anchor[0][0]), "final {fin} vs max");
    // The substep, not the frame, sets the accuracy: the mean error through the run grows
    // with the substep cap.
    let study = j["substep_study"]["cells"].as_array().unwrap();
    let mean: Vec<f64> = study.iter().map(|c| num(&c["mean_anchor_error"])).collect();
    assert!(mean.windows(2).all(|w| w[1] > 2.0 * w[0]), "{mean:?}");
    // Velocity passes do not replace projection: 32 of them with no projection pass leave
    // more of the twist after the first substep than 4 with the default 2 passes.
    let first = &j["projection_study"]["first_angular_error"];
    assert_eq!(
        j["projection_study"]["position_iterations"],
        serde_json::json!([0, 2, 8])
    );
    assert!(num(&first[0][3]) > 2.5 * num(&first[1][0]), "{first}");
}

#[test]
fn revolute_limit_column_five_only_while_crossed() {
    let j = quick("revolute-limit");
    assert_eq!(num(&j["inconsistent_substeps"]), 0.0);
    assert!(
        num(&j["max_limit_violation_rad"]) > 0.0,
        "the bound was crossed"
    );
}

#[test]
fn spherical_vs_fixed_twist() {
    let j = quick("spherical-vs-fixed");
    let rows = j["rows"].as_array().unwrap();
    assert!(rows.len() >= 3);
    for r in rows {
        assert_eq!(num(&r["spherical_angular_error"]), 0.0, "{r}");
        let twist = num(&r["twist_rad"]);
        assert!((num(&r["fixed_angular_error"]) - twist).abs() < 1e-5, "{r}");
    }
    // Over a whole turn: min(t, 2 pi - t), measured within 2.4e-7 rad.
    let turn = &j["whole_turn"];
    assert_eq!(turn["twists"], 181);
    assert!(
        num(&turn["max_fixed_error_from_shortest_rad"]) < 1e-6,
        "{turn}"
    );
}
