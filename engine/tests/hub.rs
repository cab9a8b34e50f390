//! Hubs: one body jointed to many heavier ones at long lever arms, the hard case for
//! sequential impulses, which the hub solve takes out of Gauss-Seidel (README: *Hubs*).
//! Ten 0.2 kg bobs hang 0.8 m out from a 1 kg hub pinned at its centre; the bobs' inertia
//! about the hub (about 1 kg m^2) is what the hub's own inertia is measured against.

use lavender_engine::{BodyDesc, BodyId, JointDesc, Settings, Vec3, World};

/// The hub with `spokes` bobs, spoke `k` made by `spoke(k, angle, hub, bob, offset)` (the
/// bob's position relative to the hub); `inertia`: the hub's principal moments, kg m^2
/// (`None`: a 0.1 m cube's, 1.7e-3).
fn hub_with(
    settings: Settings,
    spokes: usize,
    inertia: Option<f32>,
    spoke: impl Fn(usize, f32, BodyId, BodyId, Vec3) -> JointDesc,
) -> World {
    let mut w = World::new(settings).unwrap();
    let wall = w.add_body(BodyDesc::fixed("wall")).unwrap();
    let mut desc = BodyDesc::dynamic("hub");
    if let Some(i) = inertia {
        desc = desc.inertia(Vec3::splat(i));
    }
    let hub = w.add_body(desc).unwrap();
    w.add_joint(JointDesc::spherical("hang", wall, hub))
        .unwrap();
    for k in 0..spokes {
        let angle = k as f32 * std::f32::consts::TAU / spokes as f32;
        let offset = Vec3::new(angle.cos(), -0.5, angle.sin()) * 0.8;
        let bob = w
            .add_body(
                BodyDesc::dynamic(format!("bob{k}"))
                    .position(offset)
                    .mass(0.2),
            )
            .unwrap();
        w.add_joint(spoke(k, angle, hub, bob, offset)).unwrap();
    }
    w
}

/// The hub with `spokes` ball joints.
fn hub(settings: Settings, spokes: usize, inertia: Option<f32>) -> World {
    hub_with(settings, spokes, inertia, |k, _, hub, bob, offset| {
        JointDesc::spherical(format!("spoke{k}"), hub, bob).anchors(offset, Vec3::ZERO)
    })
}

/// Steps `seconds` at 60 Hz; the largest anchor error (m) and hub angular speed (rad/s) seen.
fn run(mut w: World, seconds: f32) -> (f32, f32) {
    let (mut error, mut spin) = (0.0f32, 0.0f32);
    for _ in 0..(seconds * 60.0) as usize {
        w.step(1.0 / 60.0).unwrap();
        error = w
            .constraint_data()
            .iter()
            .map(|r| r[3])
            .fold(error, f32::max);
        spin = spin.max(w.bodies().angular_velocities()[1].length());
    }
    (error, spin)
}

/// The largest anchor relative speed (column 6) over the joints, m/s.
fn max_anchor_speed(w: &World) -> f32 {
    w.constraint_data().iter().map(|r| r[6]).fold(0.0, f32::max)
}

#[test]
fn one_velocity_pass_solves_a_hub_exactly() {
    // No bias, no projection, one pass: what is left of J v after the step is the solve's
    // residual. Gauss-Seidel leaves most of it on a light hub; the hub solve leaves round-off.
    let settings = Settings {
        velocity_iterations: 1,
        position_iterations: 0,
        error_reduction: 0.0,
        ..Settings::default()
    };
    for spokes in [4, 10, 30] {
        let mut w = hub(settings, spokes, None);
        assert_eq!(w.schedule().hubs.len(), 1);
        let mut speed = 0.0f32;
        for _ in 0..60 {
            w.step(1.0 / 60.0).unwrap();
            speed = speed.max(max_anchor_speed(&w));
        }
        println!("{spokes} spokes, one pass: anchor speed {speed:.3e} m/s");
        // Round-off: measured 9e-12, 2e-10 and 2.1e-9 m/s, against the 0.04 m/s gravity adds
        // in a substep (one Gauss-Seidel pass leaves most of that).
        assert!(speed < 1e-8, "{spokes} spokes: {speed}");
    }
}

#[test]
fn a_light_hub_holds_together() {
    // A 0.1 m cube's inertia (1.7e-3 kg m^2), 600 times less than what hangs on it: with
    // Gauss-Seidel alone it spun up to 1e4 rad/s (ten spokes) or went non-finite within a
    // second (twenty, thirty).
    for spokes in [10, 30] {
        let (error, spin) = run(hub(Settings::default(), spokes, None), 10.0);
        println!("{spokes} spokes: error {error:.3e} m, spin {spin:.3e} rad/s");
        // Measured 1.1e-7 m for both, 4.3e-6 and 3.9e-6 rad/s.
        assert!(error < 1e-6, "{spokes} spokes: {error}");
        assert!(spin < 1e-4, "{spokes} spokes: {spin}");
    }
    // Three arms and a support on a hub of 1e-4 kg m^2: light (6,401 times as mobile at each
    // arm as its bob), so a hub from three joints on (row by row: 0.29 m errors).
    let mut three = hub(Settings::default(), 3, Some(1e-4));
    assert_eq!(three.schedule().hubs[0].joints.len(), 4);
    let (error, spin) = run(three, 10.0);
    println!("3 spokes on 1e-4 kg m^2: error {error:.3e} m, spin {spin:.3e} rad/s");
    // Measured 4.3e-8 m and 1.3e-6 rad/s.
    assert!(error < 2e-7, "{error}");
    assert!(spin < 1e-4, "{spin}");
    // Four arms and a support on a hub of 1e-4 kg m^2 (five joints: a hub whatever the masses).
    let (error, spin) = run(hub(Settings::default(), 4, Some(1e-4)), 10.0);
    println!("4 spokes on 1e-4 kg m^2: error {error:.3e} m, spin {spin:.3e} rad/s");
    // Measured 3.9e-8 m and 1.6e-6 rad/s.
    assert!(error < 3e-7, "{error}");
    assert!(spin < 1e-4, "{spin}");
}

#[test]
fn a_hub_with_a_fifth_of_its_bobs_inertia_holds_together() {
    let (error, spin) = run(hub(Settings::default(), 10, Some(0.2)), 10.0);
    println!("inertia 0.2: error {error:.3e} m, spin {spin:.3e} rad/s");
    // Measured 7.5e-8 m and 9.7e-7 rad/s.
    assert!(error < 5e-7, "{error}");
    assert!(spin < 1e-5, "{spin}");
}

#[test]
fn a_hub_of_every_joint_type_holds_together() {
    // Twelve spokes in turn ball, hinge (the hub as body B), weld and slider (a horizontal
    // axis, so gravity does not run the bobs out) on the light hub: one hub of 13 joints whose
    // blocks have 3, 5 and 6 rows.
    let mut w = hub_with(
        Settings::default(),
        12,
        None,
        |k, angle, hub, bob, offset| {
            let tangent = Vec3::new(-angle.sin(), 0.0, angle.cos());
            match k % 4 {
                0 => JointDesc::spherical(format!("ball{k}"), hub, bob).anchors(offset, Vec3::ZERO),
                1 => JointDesc::revolute(format!("hinge{k}"), bob, hub)
                    .axis(tangent)
                    .anchors(Vec3::ZERO, offset),
                2 => JointDesc::fixed(format!("weld{k}"), hub, bob).anchors(offset, Vec3::ZERO),
                _ => JointDesc::prismatic(format!("slider{k}"), hub, bob)
                    .axis(tangent)
                    .anchors(offset, Vec3::ZERO),
            }
        },
    );
    let rows: Vec<usize> = (w.schedule().hubs.iter()).map(|h| h.joints.len()).collect();
    assert_eq!(rows, vec![13]);
    let (mut anchor, mut angular) = (0.0f32, 0.0f32);
    for _ in 0..600 {
        w.step(1.0 / 60.0).unwrap();
        let d = w.constraint_data();
        anchor = d.iter().map(|r| r[3]).fold(anchor, f32::max);
        angular = d.iter().map(|r| r[4]).fold(angular, f32::max);
    }
    println!("every type: anchor {anchor:.3e} m, angular {angular:.3e} rad");
    // Measured 1.7e-7 m and 2.1e-7 rad over 10 s.
    assert!(anchor < 1e-6, "{anchor}");
    assert!(angular < 1e-6, "{angular}");
}

#[test]
fn a_hub_with_a_redundant_support_holds() {
    // A second ball joint to the wall at the hub's centre repeats the first: the rows of the
    // two fixed-body joints depend on each other, a pivot drops, and the dense factors (which
    // drop the repeated row as the decoupling does) take over.
    let mut w = hub(Settings::default(), 10, None);
    let wall = w.body_id("wall").unwrap();
    let centre = w.body_id("hub").unwrap();
    w.add_joint(JointDesc::spherical("hang again", wall, centre))
        .unwrap();
    assert_eq!(w.schedule().hubs[0].joints.len(), 12);
    let (error, spin) = run(w, 10.0);
    println!("redundant support: error {error:.3e} m, spin {spin:.3e} rad/s");
    // Measured 1.0e-7 m and 4.4e-6 rad/s.
    assert!(error < 1e-6, "{error}");
    assert!(spin < 1e-4, "{spin}");
}

/// The largest anchor error over `seconds` of the scene file `name` in `data/regressions/`,
/// with `settings` applied to its own.
fn regression(name: &str, seconds: f32, settings: impl Fn(Settings) -> Settings) -> f32 {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/regressions");
    let scene = lavender_engine::Scene::load(root.join(name)).unwrap();
    let mut world = scene.build_with(settings(scene.settings())).unwrap();
    let mut worst = 0.0f32;
    for _ in 0..(seconds / scene.frame_dt()).round() as usize {
        world.step(scene.frame_dt()).unwrap();
        worst = (world.constraint_data().iter()).fold(worst, |m, r| m.max(r[3]));
    }
    worst
}

/// A hub of 40 sliders is solved whole (QA, 2026-12-04: with 32 joints per hub solve, the 9
/// left row by row beside it took it apart, 909 m of anchor error in 3 s).
#[test]
fn a_hub_of_forty_sliders_is_solved_whole_and_holds() {
    let worst = regression("hub-40-sliders.toml", 3.0, |s| s);
    assert!(worst < 1e-4, "max anchor error {worst} m");
}

/// Known, not fixed (README, *Hubs*): a hub's joints beyond `HUB_MAX_JOINTS` are solved row
/// by row beside it, and with sliders among them it comes apart.
#[test]
#[ignore = "known failure: a hub of 100 sliders, the 36 beyond the hub solve's 64 row by row (296 m)"]
fn a_hub_of_a_hundred_sliders_holds() {
    let worst = regression("hub-100-sliders.toml", 3.0, |s| s);
    assert!(worst < 1e-3, "max anchor error {worst} m");
}

/// Known, not fixed (README, *Hubs*): a hub of many limited spokes is not solved directly, and
/// with warm starting it comes apart (without, it holds).
#[test]
#[ignore = "known failure: 40 limited spokes on one hub with warm starting (269 m; 1.7e-2 m without)"]
fn a_hub_of_forty_limited_spokes_holds_with_warm_starting() {
    let without = regression("hub-40-limited.toml", 3.0, |s| Settings {
        warm_starting: false,
        ..s
    });
    assert!(without < 0.05, "without warm starting: {without} m");
    let worst = regression("hub-40-limited.toml", 3.0, |s| s);
    assert!(worst < 0.05, "max anchor error {worst} m");
}
