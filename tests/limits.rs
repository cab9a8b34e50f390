//! Joint limits: the unilateral row appears while the bound is crossed.

use crate::{builtin, run_observed};

#[test]
fn limit_violation_column_is_the_distance_past_the_bound() {
    let (scene, mut world) = builtin("limited-revolute");
    let [lo, hi] = world.joints().limit_of(0).unwrap();
    let mut reached = f32::INFINITY;
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, _| {
        let row = w.constraint_data()[0];
        let expected = (lo - row[7]).max(row[7] - hi).max(0.0);
        assert_eq!(
            row[5], expected,
            "column 5 is nonzero only while the bound is crossed"
        );
        reached = reached.min(row[7]);
        // With the default two projection passes the bound holds to 1e-5 rad every substep.
        assert!(row[5] < 1e-5, "violation {} rad", row[5]);
    });
    // The pendulum released at +1 rad really swings into the -0.6 rad stop.
    assert!((reached - lo).abs() < 1e-3, "lowest angle {reached}");
}

/// The substep a joint crosses its stop, the projection pushes it back, and, where the
/// velocity solve gave that stop no impulse, marks it in the carried limit impulse
/// (`solver::PROJECTED_STOP`, signed by the stop), so that the next substep has the stop's row
/// wherever the projection left the joint. The pendulum swinging into its -0.6 rad stop at
/// 2.37 rad/s: the mark after the substep it reaches the stop, at rest on it one substep later.
#[test]
fn the_projection_marks_the_stop_it_pushes_a_joint_back_from() {
    let (scene, mut world) = builtin("limited-revolute");
    let [lo, _] = world.joints().limit_of(0).unwrap();
    let bob = world.body_id("bob").unwrap();
    let mut seen = Vec::new();
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, info| {
        let x = w.constraint_data()[0][7];
        let (_, omega) = w.body_velocity(bob).unwrap();
        let carried = w.solver_state()[5];
        seen.push((info.substep, x, omega.z, carried));
    });
    let reach = seen
        .iter()
        .position(|&(_, x, _, _)| x <= lo + 1e-5)
        .expect("the pendulum reaches its stop");
    let (substep, _, omega, carried) = seen[reach];
    println!(
        "substep {substep}: {omega} rad/s, carried {carried:e}; then {:?}",
        seen[reach + 1]
    );
    assert!(omega < -2.0, "{omega} rad/s at substep {substep}");
    // The lower stop (`+`), marked: no impulse of its own.
    assert_eq!(carried, f32::MIN_POSITIVE, "substep {substep}");
    let (_, x, omega, carried) = seen[reach + 1];
    assert!((x - lo).abs() < 1e-5, "{x}");
    assert!(omega.abs() < 1e-4, "{omega} rad/s a substep later");
    // Now the stop's row pushed: a real impulse.
    assert!(carried > 1e-3, "{carried}");
}

/// The mark's effect alone: a 1 m arm 2e-5 rad inside its upper stop (beyond the 1e-5 slop)
/// turning into it at 1 rad/s, no gravity. Unmarked, its substep has no limit row: it passes
/// the stop, the projection puts it back, and it still turns into the stop at 1 rad/s. With
/// the upper stop marked in its carried impulse (`-f32::MIN_POSITIVE`, as the projection
/// leaves it), the row exists with its speculative offset `C / h`: the arm ends the substep
/// on the stop turning at most `C / h` = 4.8e-3 rad/s, and the row's impulse is real.
#[test]
fn a_marked_stop_has_its_row_beyond_the_slop() {
    use lavender::engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World};
    let hi = 0.5f32;
    let start = hi - 2e-5;
    let substep = |mark: bool| {
        let settings = Settings {
            gravity: Vec3::ZERO,
            ..Settings::default()
        };
        let mut w = World::new(settings).unwrap();
        let ground = w.add_body(BodyDesc::fixed("ground")).unwrap();
        let turn = Quat::from_rotation_z(start);
        let arm = w
            .add_body(
                BodyDesc::dynamic("arm")
                    .solid_box(1.0, Vec3::new(0.5, 0.05, 0.05))
                    .position(turn * Vec3::new(0.5, 0.0, 0.0))
                    .rotation(turn)
                    .velocity(turn * Vec3::new(0.0, 0.5, 0.0), Vec3::new(0.0, 0.0, 1.0)),
            )
            .unwrap();
        w.add_joint(
            JointDesc::revolute("hinge", ground, arm)
                .anchors(Vec3::ZERO, Vec3::new(-0.5, 0.0, 0.0))
                .reference_rotation(Quat::IDENTITY)
                .limit(-1.0, hi),
        )
        .unwrap();
        assert!((w.constraint_data()[0][7] - start).abs() < 1e-6);
        if mark {
            let mut state = w.solver_state().to_vec();
            state[5] = -f32::MIN_POSITIVE;
            w.set_solver_state(&state).unwrap();
        }
        w.step(1.0 / 240.0).unwrap();
        let (_, omega) = w.body_velocity(arm).unwrap();
        (w.constraint_data()[0][7], omega.z, w.solver_state()[5])
    };
    let (x, omega, carried) = substep(false);
    println!("unmarked: coordinate {x}, {omega} rad/s, carried {carried:e}");
    assert!((x - hi).abs() < 1e-5 && omega > 0.99, "{x} {omega}");
    // The projection pushed it back from the upper stop: now marked.
    assert_eq!(carried, -f32::MIN_POSITIVE);
    let (x, omega, carried) = substep(true);
    println!("marked: coordinate {x}, {omega} rad/s, carried {carried:e}");
    assert!((x - hi).abs() < 1e-5, "{x}");
    assert!((0.0..5e-3).contains(&omega), "{omega} rad/s");
    // The upper stop's real impulse (stored negative: the upper's sign).
    assert!(carried < -1e-3, "{carried}");
}

#[test]
fn crossed_limit_lights_column_five_and_the_bias_brings_it_back() {
    // Without projection only the velocity solve and its error-reduction bias act, so the
    // impact overshoots the bound and is then corrected over a few substeps.
    let (scene, world) = builtin("limited-revolute");
    let mut settings = *world.settings();
    settings.position_iterations = 0;
    let mut world = scene.build_with(settings).unwrap();
    let mut history = Vec::new();
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, info| {
        history.push((info.substep, w.constraint_data()[0][5]));
    });
    let first = history
        .iter()
        .position(|&(_, v)| v > 0.0)
        .expect("the bound is crossed");
    let peak = history[first..first + 40]
        .iter()
        .map(|&(_, v)| v)
        .fold(0.0f32, f32::max);
    assert!(peak > 1e-3, "impact overshoot {peak} rad");
    // Error reduction 0.2 per substep: below 1e-4 rad within 40 substeps of the crossing.
    let settled = history[first..]
        .iter()
        .position(|&(_, v)| v < 1e-4)
        .expect("violation corrected");
    assert!(settled < 40, "took {settled} substeps; peak {peak}");
}

#[test]
fn prismatic_block_comes_to_rest_on_its_stop() {
    let (scene, mut world) = builtin("prismatic-slider");
    let e0 = world.total_energy();
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |_, _| {});
    let row = world.constraint_data()[0];
    // At rest at the 0.5 m stop: coordinate within 1e-5 m, anchor speed below 1e-3 m/s.
    assert!((row[7] - 0.5).abs() < 1e-5, "{row:?}");
    assert!(row[5] < 1e-5);
    let block = world.body_id("block").unwrap();
    let (v, _) = world.body_velocity(block).unwrap();
    assert!(v.length() < 1e-3, "block velocity {v}");
    // It slid 0.5 m down a 30 degree slope: the inelastic stop took all of the
    // m g 0.5 sin(30 deg) = 4.905 J (1e-2 J for the solver's residuals).
    let lost = e0 - world.total_energy();
    assert!((lost - 4.905).abs() < 1e-2, "lost {lost} J");
}

/// A hinge limited to `[lo, hi]` with `hi` near +pi, spun into that stop at `omega` rad/s
/// without gravity; returns the smallest and largest coordinate seen after any substep and
/// the final angular velocity about the hinge axis.
fn spin_into_a_stop_near_pi(lo: f32, hi: f32, omega: f32) -> (f32, f32, f32) {
    spin_into_a_stop(lo, hi, omega, false, 2)
}

/// [`spin_into_a_stop_near_pi`] with `Settings::speculative_limits` and the projection passes
/// as given.
fn spin_into_a_stop(
    lo: f32,
    hi: f32,
    omega: f32,
    speculative_limits: bool,
    position_iterations: u32,
) -> (f32, f32, f32) {
    use lavender::engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World};
    let settings = Settings {
        gravity: Vec3::ZERO,
        speculative_limits,
        position_iterations,
        ..Settings::default()
    };
    let mut w = World::new(settings).unwrap();
    let ground = w.add_body(BodyDesc::fixed("ground")).unwrap();
    // The arm starts 0.2 rad short of the stop, turning towards it about +z.
    let start = hi - 0.2;
    let arm = w
        .add_body(
            BodyDesc::dynamic("arm")
                .solid_box(1.0, Vec3::new(0.5, 0.05, 0.05))
                .rotation(Quat::from_rotation_z(start))
                .velocity(Vec3::ZERO, Vec3::new(0.0, 0.0, omega)),
        )
        .unwrap();
    w.add_joint(
        JointDesc::revolute("hinge", ground, arm)
            .reference_rotation(Quat::IDENTITY)
            .limit(lo, hi),
    )
    .unwrap();
    let (mut min, mut max) = (f32::INFINITY, f32::NEG_INFINITY);
    for _ in 0..60 {
        w.step_observed(1.0 / 60.0, |w, _| {
            let theta = w.constraint_data()[0][7];
            (min, max) = (min.min(theta), max.max(theta));
        })
        .unwrap();
    }
    (min, max, w.bodies().angular_velocities()[arm.0 as usize].z)
}

/// QA (2026-12-05): a hinge spun into a stop near +pi passed through it: once past pi its
/// angle read as near -pi, below the lower limit, and that row pushed it on round. Read
/// within pi of the middle of the limits, the angle stays past the stop it crossed.
#[test]
fn a_fast_hinge_stops_at_a_limit_near_pi_instead_of_passing_through() {
    for (lo, hi, omega) in [
        (-1.0, 3.0, 60.0),
        (-1.0, 3.0, 100.0),
        (-2.0, 3.1, 90.0),
        (0.5, 3.13, 120.0),
    ] {
        let (min, max, final_omega) = spin_into_a_stop_near_pi(lo, hi, omega);
        // 0.25 to 0.5 rad a substep: the first substep past the stop overshoots it by up to
        // one substep's turn before the projection (without speculative limits, below); the
        // stop then holds.
        assert!(
            max < hi + omega / 240.0 && max > hi - 0.01,
            "[{lo}, {hi}] at {omega}: max {max}"
        );
        assert!(
            min > lo - 0.01,
            "[{lo}, {hi}] at {omega}: wrapped round to {min}"
        );
        assert!(
            final_omega <= 1e-3,
            "[{lo}, {hi}] at {omega}: still turning at {final_omega} rad/s"
        );
    }
}

/// Worst limit violation per joint (rad) of the shipped limited chain over its run, with
/// `chain_solve` and `passes` (velocity, projection; `None`: the scene's), and the worst
/// anchor error of any joint at any substep (m).
fn limited_chain_run(chain_solve: bool, passes: Option<(u32, u32)>) -> (Vec<f32>, f32) {
    limited_chain_run_with(100, chain_solve, passes)
}

/// [`limited_chain_run`] with the scene's chain `links` long.
fn limited_chain_run_with(
    links: u32,
    chain_solve: bool,
    passes: Option<(u32, u32)>,
) -> (Vec<f32>, f32) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/regressions/limited-chain-100.toml");
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(text.matches("links = 100\n").count(), 1);
    let text = text.replace("links = 100\n", &format!("links = {links}\n"));
    let mut scene = lavender::engine::Scene::from_toml_str(&text, "limited chain").unwrap();
    scene.world.chain_solve = Some(chain_solve);
    if let Some((velocity, position)) = passes {
        scene.world.velocity_iterations = Some(velocity);
        scene.world.position_iterations = Some(position);
    }
    let mut world = scene.build().unwrap();
    let mut worst = vec![0.0f32; world.joint_count()];
    let mut anchor = 0.0f32;
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, _| {
        for (m, row) in worst.iter_mut().zip(w.constraint_data()) {
            *m = m.max(row[5]);
            anchor = anchor.max(row[3]);
        }
    });
    (worst, anchor)
}

/// [`limited_chain_run`]'s violations at the scene's settings.
fn limited_chain_violations(chain_solve: bool) -> Vec<f32> {
    limited_chain_run(chain_solve, None).0
}

/// Asserts the root's and the worst stop's violations (rad) of [`limited_chain_run`].
fn assert_stops_exceeded(worst: &[f32], root: std::ops::Range<f32>, overall: std::ops::Range<f32>) {
    let max = worst.iter().copied().fold(0.0f32, f32::max);
    println!(
        "the root's stop exceeded by {} rad, the worst by {max} rad",
        worst[0]
    );
    assert!(
        root.contains(&worst[0]),
        "the root's stop: {} rad",
        worst[0]
    );
    assert!(overall.contains(&max), "max limit violation {max} rad");
}

/// The chain solve takes the limited chain as one chain, its limit rows in or out of the
/// direct system by an active-set solve, so the torque the root's stop must hold reaches
/// it in one pass: the root's stop is exceeded by 0.24 rad (colours: 0.67) and the worst,
/// in the whip, by 0.27 rad (colours: 1.12) at 8 velocity and 2 projection passes. The
/// whip's figure is chaotic in any change of the step: since the projection marks the stops
/// it pushes joints back from and moves held hinges onto their stops (2026-12-07) chains of
/// 60 to 120 links give 0.19 to 0.57 rad, 0.32 to 0.61 before (0.32 at 100 links; 0.20 and
/// 0.57 before joints running into a stop lost their curvature offsets, 2026-12-06; 0.50
/// before joints held on their stops kept them). What is left comes from the substep: a stop
/// is a row only once crossed (speculative limits, below, cut it further).
#[test]
fn the_chain_solve_holds_a_long_limited_chain_closer_to_its_stops() {
    assert_stops_exceeded(&limited_chain_violations(true), 0.2..0.3, 0.22..0.32);
}

/// A known limit, measured (README, "Known limit: limits along long chains"): every hinge of
/// the shipped chain limited to +-0.3 rad. The root's stop (which holds the whole chain) is
/// exceeded by 0.67 rad and the stops near the free end (in the whip) by 1.12 rad at the
/// default settings (1.22 before the projection marked the stops it pushes joints back from
/// and moved held hinges onto their stops, 2026-12-07) (row by row; the chain solve cuts both, above). (Without curvature
/// offsets the whip keeps less of its energy and the worst stop is exceeded by 0.69 rad.)
/// The bounds bracket today's numbers: when the solver learns to hold them, this test says
/// so; lower them and the README's.
#[test]
fn a_long_limited_chain_exceeds_its_stops_a_known_limit() {
    assert_stops_exceeded(&limited_chain_violations(false), 0.6..0.75, 1.05..1.25);
}

/// A known limit, measured: the chain solve at one velocity pass and no projection (the
/// benchmarks' `1c/0`) is a knife edge on the whipping limited chain. Of chains of 94 to 106
/// links, those of 100 links and more come apart in the whip (1.5 to 3.1 m of anchor error;
/// 100 links: 2.5 m) and the shorter ones hold to 4.4 cm. Before joints running into a stop
/// lost their curvature offsets (2026-12-06) 100 links came apart (2.5 m); with that rule
/// alone 100 held (3.3e-2 m) and 97, 98 and 103 to 106 came apart; keeping the offsets of
/// joints held on their stops (2026-12-07) gives the figures above. One pass without projection is no setting for
/// a whipping chain (README, *Known limit: limits along long chains*).
#[test]
fn one_direct_pass_without_projection_is_a_knife_edge_on_the_limited_chain_a_known_limit() {
    let mut apart = Vec::new();
    let mut held = 0.0f32;
    for links in 94..=106 {
        let (_, anchor) = limited_chain_run_with(links, true, Some((1, 0)));
        println!("1c/0, {links} links: max anchor error {anchor} m");
        if anchor > 0.5 {
            apart.push(links);
        } else {
            held = held.max(anchor);
        }
    }
    println!("1c/0: apart at {apart:?}; the others within {held} m");
    assert!((5..=9).contains(&apart.len()), "apart at {apart:?}");
    assert!(held < 0.06, "the chains that hold: {held} m");
}

/// The worst limit violation of any joint after any substep of the regression scene `file`
/// (`data/regressions/`), rad or m, with the chain solve and speculative limits as given.
fn worst_violation(file: &str, chain_solve: bool, speculative_limits: bool) -> f32 {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regressions");
    let mut scene = lavender::engine::Scene::load(root.join(file)).unwrap();
    scene.world.chain_solve = Some(chain_solve);
    scene.world.speculative_limits = Some(speculative_limits);
    let mut world = scene.build().unwrap();
    let mut worst = 0.0f32;
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, _| {
        worst = (w.constraint_data().iter()).fold(worst, |m, row| m.max(row[5]));
    });
    worst
}

/// Speculative limits (`Settings::speculative_limits`): the hinge spun into its stop at 60 to
/// 120 rad/s (0.25 to 0.5 rad a substep) without projection passes (which otherwise put it
/// back on the stop within the substep), passes the stop by up to a substep's turn without
/// them and stops at it with them.
#[test]
fn speculative_limits_stop_a_fast_hinge_at_its_stop_not_past_it() {
    for (lo, hi, omega) in [(-1.0, 3.0, 60.0), (-2.0, 3.1, 90.0), (0.5, 3.13, 120.0)] {
        let (_, plain, _) = spin_into_a_stop(lo, hi, omega, false, 0);
        let (min, max, final_omega) = spin_into_a_stop(lo, hi, omega, true, 0);
        println!(
            "[{lo}, {hi}] at {omega} rad/s: past the stop by {} rad, speculative {} rad",
            plain - hi,
            max - hi
        );
        assert!(
            plain - hi > 0.02,
            "[{lo}, {hi}] at {omega}: plain max {plain}"
        );
        assert!(
            max - hi < 1e-4,
            "[{lo}, {hi}] at {omega}: speculative max {max}"
        );
        assert!(
            min > lo - 0.01 && final_omega <= 1e-3,
            "{min} {final_omega}"
        );
    }
}

/// Speculative limits where a solve can hold a stop exactly: the hub solve (twenty light
/// limited hinges on one hub) and the chain solve (ten limited ropes) both stop joints at
/// their stops instead of one substep past them. Measured (worst violation without and with):
/// light hub 1.7e-2 and 8.4e-5 rad, forty hinges 1.4e-2 and 1.5e-5 rad, ropes 0.086 and 0.050
/// rad (3.8e-5, 6.6e-6 and 0.044 before joints held on their stops kept their curvature
/// offsets, 2026-12-07, the ropes 0.133 and 0.054 before the projection marked the stops it
/// pushes joints back from and moved held hinges onto their stops, the same day; the ropes' figure is chaotic in small changes of
/// the step: variants of that rule gave 0.039 to 0.054).
#[test]
fn speculative_limits_hold_hubs_and_directly_solved_ropes_at_their_stops() {
    for (file, chain_solve, plain_min, speculative_max) in [
        ("light-hub-limited-hinges.toml", false, 1e-2, 1e-3),
        ("hub-40-limited.toml", false, 1e-2, 1e-4),
        ("limited-ropes.toml", true, 0.07, 0.06),
    ] {
        let plain = worst_violation(file, chain_solve, false);
        let speculative = worst_violation(file, chain_solve, true);
        println!("{file}: worst violation {plain} without speculative limits, {speculative} with");
        assert!(plain > plain_min, "{file}: {plain}");
        assert!(speculative < speculative_max, "{file}: {speculative}");
    }
}

/// With speculative limits a limited joint always has its limit row, but a stop it never
/// comes near gets no impulse: the limited pendulum with its stops moved out to +-3 rad
/// swings through 10 s with the same bits either way.
#[test]
fn a_stop_never_reached_changes_no_bit_with_speculative_limits() {
    let (mut scene, _) = builtin("limited-revolute");
    scene.joints[0].limit = Some([-3.0, 3.0]);
    let mut hashes = |speculative: bool| {
        scene.world.speculative_limits = Some(speculative);
        let mut world = scene.build().unwrap();
        let mut out = Vec::new();
        run_observed(&mut world, scene.frame_dt(), 10.0, |w, _| {
            out.push(w.state_hash())
        });
        out
    };
    let (plain, speculative) = (hashes(false), hashes(true));
    assert_eq!(plain.len(), 2400);
    assert!(plain == speculative, "the runs part");
}

/// The limited chain with speculative limits: with the chain solve its worst stop is
/// exceeded by less (0.23 rad, the root's; 0.27 without); row by row the
/// whip's overshoot comes from Gauss-Seidel over 100 links in eight passes, which
/// speculation does not change (1.13 rad, 1.12 without; the root's 0.66 to 0.67).
/// (0.25 and 1.08 before joints held on their stops kept their curvature offsets,
/// 2026-12-07: the whip is chaotic in such changes.)
#[test]
fn speculative_limits_cut_the_limited_chains_overshoot_with_the_chain_solve() {
    let run = |chain_solve: bool| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regressions");
        let mut scene = lavender::engine::Scene::load(root.join("limited-chain-100.toml")).unwrap();
        scene.world.chain_solve = Some(chain_solve);
        scene.world.speculative_limits = Some(true);
        let mut world = scene.build().unwrap();
        let mut worst = vec![0.0f32; world.joint_count()];
        run_observed(&mut world, scene.frame_dt(), scene.duration(), |w, _| {
            for (m, row) in worst.iter_mut().zip(w.constraint_data()) {
                *m = m.max(row[5]);
            }
        });
        worst
    };
    assert_stops_exceeded(&run(true), 0.22..0.3, 0.22..0.3);
    assert_stops_exceeded(&run(false), 0.6..0.75, 1.05..1.2);
}

/// A 1 m, 1 kg arm hinged at its end, no gravity, started at coordinate 0 turning at `omega`
/// rad/s about the hinge, run 1 s with `limit`, speculative limits and projection passes as
/// given; returns the worst limit violation after any substep (rad).
fn arm_spun_into(limit: [f32; 2], omega: f32, speculative_limits: bool, projection: u32) -> f32 {
    use lavender::engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World};
    let settings = Settings {
        gravity: Vec3::ZERO,
        speculative_limits,
        position_iterations: projection,
        ..Settings::default()
    };
    let mut w = World::new(settings).unwrap();
    let ground = w.add_body(BodyDesc::fixed("ground")).unwrap();
    let arm = w
        .add_body(
            BodyDesc::dynamic("arm")
                .solid_box(1.0, Vec3::new(0.5, 0.05, 0.05))
                .position(Vec3::new(0.5, 0.0, 0.0))
                .velocity(Vec3::new(0.0, 0.5 * omega, 0.0), Vec3::new(0.0, 0.0, omega)),
        )
        .unwrap();
    w.add_joint(
        JointDesc::revolute("hinge", ground, arm)
            .anchors(Vec3::ZERO, Vec3::new(-0.5, 0.0, 0.0))
            .reference_rotation(Quat::IDENTITY)
            .limit(limit[0], limit[1]),
    )
    .unwrap();
    let mut worst = 0.0f32;
    for _ in 0..60 {
        w.step_observed(1.0 / 60.0, |w, _| {
            worst = worst.max(w.constraint_data()[0][5])
        })
        .unwrap();
    }
    worst
}

/// QA (2026-12-06): the speculative offsets were taken from the decoupled limit row's error,
/// which counts the anchor rows' position errors as corrected within the substep; a 1 m arm
/// at 120 rad/s (0.5 rad a substep, centimetres of anchor error) then passed a stop at 0.5
/// rad by 0.018 rad, and at 100 rad/s passed a stop at 3.1 rad by more than half the
/// forbidden arc, whose angle then read as past the other stop. From the distance to the stop
/// itself (measured: 6e-8 and 0 rad; 0.43 and 0.012 rad without speculative limits, where
/// the second went round through the gap), without projection passes.
#[test]
fn speculative_limits_hold_a_long_arm_with_anchor_error_at_its_stop() {
    for (limit, omega) in [
        ([-0.5, 0.5], 120.0),
        ([-3.1, 3.1], 100.0),
        ([-0.5, 0.5], 60.0),
    ] {
        let plain = arm_spun_into(limit, omega, false, 0);
        let speculative = arm_spun_into(limit, omega, true, 0);
        println!("{limit:?} at {omega} rad/s: {plain} rad past a stop, speculative {speculative}");
        assert!(plain > 0.01, "{limit:?} at {omega}: {plain}");
        assert!(speculative < 1e-3, "{limit:?} at {omega}: {speculative}");
    }
}

/// QA (2026-12-06): a locked hinge (`lo == hi`) turned upward passed its stop by a whole
/// substep's turn: within the slop of both bounds it always got the lower stop's row, which
/// cannot push down. It now gets the row of the stop it moves into, either way, with or
/// without speculative limits and projection.
#[test]
fn a_locked_hinge_holds_turned_either_way() {
    for omega in [10.0, -10.0, 60.0, -60.0] {
        for speculative in [false, true] {
            for projection in [0, 2] {
                let worst = arm_spun_into([0.0, 0.0], omega, speculative, projection);
                assert!(
                    worst < 1e-6,
                    "{omega} rad/s, speculative {speculative}, {projection} projection \
                     passes: {worst} rad"
                );
            }
        }
    }
}

/// Energy lost in the run of scene `text` (1 - end / start), at the substep cap
/// `max_substep` (`None`: the scene's).
fn energy_lost(text: &str, max_substep: Option<f32>) -> f64 {
    let mut scene = lavender::engine::Scene::from_toml_str(text, "scene").unwrap();
    scene.world.max_substep = max_substep.or(scene.world.max_substep);
    let mut world = scene.build().unwrap();
    let start = world.total_energy();
    run_observed(&mut world, scene.frame_dt(), scene.duration(), |_, _| {});
    1.0 - world.total_energy() / start
}

/// Scene `text` with its one joint, of `kind`, welded: a fixed joint, its axis and limit gone.
fn welded(text: &str, kind: &str) -> String {
    let joint = format!("kind = \"{kind}\"");
    assert_eq!(text.matches(&joint).count(), 1, "one {kind} joint");
    text.replace(&joint, "kind = \"fixed\"")
        .lines()
        .filter(|l| !l.starts_with("limit =") && !l.starts_with("axis"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The regression scene `file`'s text and the same scene with its one limited joint welded.
fn scene_and_welded(file: &str, kind: &str) -> (String, String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/regressions")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let welded = welded(&text, kind);
    (text, welded)
}

/// QA 2026-12-06 (`data/regressions/spinning-pair-on-stop.toml`, `spinning-slider-on-stop.toml`):
/// a 3 kg and a 1 kg box spinning freely at 2 rad/s, held on a joint's stop by the centrifugal
/// load, move as one rigid body. With the hinge, it lost 9.45 % of its energy in 10 s (2.58 %
/// at 1/960 s substeps: first order) while a joint resting on its stop lost its curvature
/// offsets as if it ran into the stop; with the slider on its outer stop 11.4 %, its stop's own
/// row also having no offset (the slide along an axis turning with A has `Jdot v != 0` even
/// where the two bodies turn together). Since joints held on their stops keep them and their
/// stops' rows get one (2026-12-07): the hinge 0.014 % (1/960 s: 0.045 %), the slider 0.034 %
/// (1/960 s: 0.11 %, rounding over four times the substeps); welded 1e-5. Since a hinge held
/// on its stop is projected onto it from either side (the same day): the hinge 0.0027 %
/// (1/960 s: 0.013 %).
#[test]
fn a_pair_spinning_on_a_stop_keeps_its_energy() {
    for (file, kind, bound, bound_fine) in [
        ("spinning-pair-on-stop.toml", "revolute", 6e-5, 3e-4),
        ("spinning-slider-on-stop.toml", "prismatic", 1e-3, 2e-3),
    ] {
        let (text, welded) = scene_and_welded(file, kind);
        let (on_stop, rigid) = (energy_lost(&text, None), energy_lost(&welded, None));
        let on_stop_fine = energy_lost(&text, Some(1.0 / 960.0));
        println!(
            "{kind}: energy lost in 10 s on the stop {on_stop} (1/960 s: {on_stop_fine}), \
             welded {rigid}"
        );
        assert!(on_stop.abs() < bound, "{kind}: {on_stop}");
        assert!(on_stop_fine.abs() < bound_fine, "{kind}: {on_stop_fine}");
        assert!(rigid.abs() < 1e-4, "{kind}: {rigid}");
    }
}

/// `spinning-pair-on-stop.toml` with every velocity scaled by `spin` (2 rad/s times it) and
/// the hinge's limit `limit`, as TOML.
fn pair_spun(spin: f32, limit: [f32; 2]) -> String {
    pair_spun_with(spin, limit, false)
}

/// [`pair_spun`] with speculative limits on or off.
fn pair_spun_with(spin: f32, limit: [f32; 2], speculative_limits: bool) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/regressions/spinning-pair-on-stop.toml");
    let mut scene = lavender::engine::Scene::load(path).unwrap();
    for b in &mut scene.bodies {
        b.linear_velocity = b.linear_velocity.map(|v| v * spin);
        b.angular_velocity = b.angular_velocity.map(|w| w * spin);
    }
    scene.joints[0].limit = Some(limit);
    scene.world.speculative_limits = Some(speculative_limits);
    scene.to_toml_string()
}

/// QA 2026-12-07: spun at 10 rad/s, the pair's hinge drifted more than the 1e-5 slop off its
/// stop, lost the stop's row for a substep, and then counted as running into it: a cycle that
/// lost 24.8 % of the energy in 10 s (and 73 % before joints held on their stops kept their
/// offsets). A joint held on its stop now keeps the stop's row: 1.1 % (welded: 0.08 %), and
/// since a held hinge is projected onto its stop from either side (the same day), 0.085 %. A
/// locked hinge (`limit = [0, 0]`) at 3 rad/s: its row changed stops with the sign of its
/// rate and was warm-started with the other stop's impulse, pushing the wrong way, and it
/// counted as running into a stop: the QA's scene lost 0.90 % in 10 s (23 % before the held
/// rule), then 0.48 % with the held rule and signed impulses (welded 0.003 %). Its row was
/// one stop's at a time, pushing only, and the projection's at both bounds the lower stop's:
/// mirrored (y to -y, so held on the upper side of `[0, 0]`) the pair at 5 rad/s lost 20 %
/// in 10 s, against 0.17 % unmirrored. A locked joint's limit row is now the lower stop's,
/// bilateral, in the velocity and bias passes, the projection and the direct solves
/// (`solver::LOCKED_FLOOR`): the locked pair keeps its energy as the welded one does, either
/// side.
#[test]
fn a_pair_spun_fast_or_locked_keeps_most_of_its_energy() {
    let weld = |text: &str| welded(text, "revolute");
    let fast = pair_spun(5.0, [0.0, 1.0]);
    let (on_stop, welded) = (energy_lost(&fast, None), energy_lost(&weld(&fast), None));
    let locked = pair_spun(1.5, [0.0, 0.0]);
    let (locked_loss, locked_welded) = (
        energy_lost(&locked, None),
        energy_lost(&weld(&locked), None),
    );
    println!(
        "energy lost in 10 s: at 10 rad/s on the stop {on_stop} (welded {welded}); locked at 3 \
         rad/s {locked_loss} (welded {locked_welded})"
    );
    assert!((0.0005..0.0012).contains(&on_stop), "{on_stop}");
    // With speculative limits, in a range narrow enough for the drift to pass its middle
    // (QA 2026-12-07: the row jumped to the far stop, 22 % lost; a held joint keeps its
    // stop's row there too): 1.1 %, and 0.085 % with the held hinge's projection.
    let narrow = energy_lost(&pair_spun_with(5.0, [0.0, 2.1e-5], true), None);
    println!("narrow range, speculative limits: {narrow}");
    assert!((0.0005..0.0012).contains(&narrow), "{narrow}");
    assert!(welded.abs() < 2e-3, "{welded}");
    // Measured: the locked pair's bits are the welded pair's (a 6-row equality either way).
    assert!((locked_loss - locked_welded).abs() < 1e-5, "{locked_loss}");
    let mirrored = |spin: f32| {
        let mut scene =
            lavender::engine::Scene::from_toml_str(&pair_spun(spin, [0.0, 0.0]), "pair").unwrap();
        for b in &mut scene.bodies {
            b.position[1] = -b.position[1];
            b.linear_velocity[1] = -b.linear_velocity[1];
            b.angular_velocity = [
                -b.angular_velocity[0],
                b.angular_velocity[1],
                -b.angular_velocity[2],
            ];
        }
        for j in &mut scene.joints {
            j.anchor_a[1] = -j.anchor_a[1];
            j.anchor_b[1] = -j.anchor_b[1];
        }
        scene.to_toml_string()
    };
    let (lower, upper) = (
        energy_lost(&pair_spun(2.5, [0.0, 0.0]), None),
        energy_lost(&mirrored(2.5), None),
    );
    println!("locked at 5 rad/s: held on the lower side {lower}, on the upper {upper}");
    assert!(lower.abs() < 1e-4, "{lower}");
    assert!(upper.abs() < 1e-4, "{upper}");
    assert!(locked_welded.abs() < 1e-4, "{locked_welded}");
}

/// QA 2026-12-07 (`data/regressions/narrow-hinge-tumbling.toml`): a tumbling pair on a hinge
/// with 2.1e-5 rad of play, less than the joint moves in a substep, rattled between its stops
/// and lost 81 % of its energy in 10 s (locked 5.4 %, welded 4.5 %). A hinge held on its stop
/// is now projected onto it from either side: 6.8 %, with speculative limits too (8.3 %
/// before). The slider version (`narrow-slider-tumbling.toml`) is a known limit, measured:
/// sliders are not projected so, and it loses 64 %. The bounds bracket today's numbers.
#[test]
fn a_hinge_with_less_play_than_a_substeps_motion_loses_about_what_a_locked_one_does() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/regressions");
    let text = std::fs::read_to_string(root.join("narrow-hinge-tumbling.toml")).unwrap();
    let play = "\nlimit = [0, 2.1e-5]\n";
    assert_eq!(text.matches(play).count(), 1);
    let rattling = energy_lost(&text, None);
    let locked = energy_lost(&text.replace(play, "\nlimit = [0, 0]\n"), None);
    let welded = energy_lost(&welded(&text, "revolute"), None);
    let speculative = energy_lost(
        &text.replace("[world]\n", "[world]\nspeculative_limits = true\n"),
        None,
    );
    let slider = std::fs::read_to_string(root.join("narrow-slider-tumbling.toml")).unwrap();
    let slider = energy_lost(&slider, None);
    println!(
        "energy lost in 10 s: {rattling} (locked {locked}, welded {welded}, speculative limits \
         {speculative}); the slider {slider}"
    );
    assert!((0.05..0.09).contains(&rattling), "{rattling}");
    assert!((0.03..0.07).contains(&locked), "{locked}");
    assert!((0.03..0.06).contains(&welded), "{welded}");
    assert!((0.05..0.09).contains(&speculative), "{speculative}");
    // The known limit: the slider rattles.
    assert!((0.55..0.72).contains(&slider), "{slider}");
}

/// Locked joints solved directly (`data/regressions/locked-hub-spinning.toml`, the hub solve):
/// six spokes on hinges locked at 0.2 rad on a spinning hub. With the lock one stop's row at
/// a time, pushing only (before 2026-12-07), the spokes wobbled up to 9.2e-4 rad off it and
/// the energy drifted 0.014 % in 5 s (0.16 rad and 0.18 % before that morning's held-joint
/// changes); as a bilateral row: 7e-6 rad and 0.006 % (the welded hub 0.006 %), with or
/// without speculative limits.
#[test]
fn locked_spokes_on_a_spinning_hub_hold_their_lock() {
    for speculative in [false, true] {
        let worst = worst_violation("locked-hub-spinning.toml", false, speculative);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/regressions/locked-hub-spinning.toml");
        let mut text = std::fs::read_to_string(path).unwrap();
        if speculative {
            text = text.replace("[world]\n", "[world]\nspeculative_limits = true\n");
        }
        let lost = energy_lost(&text, None);
        println!(
            "speculative limits {speculative}: worst violation {worst} rad, energy lost {lost}"
        );
        assert!(worst < 2e-5, "{worst} rad");
        assert!(lost.abs() < 2e-4, "{lost}");
    }
}

/// QA 2026-12-07 (`data/regressions/tumbling-slider-on-stop.toml`): a tumbling pair whose
/// slider runs onto its upper stop gained energy without bound at the default projection
/// (factor 1, two passes), 1.97 J to 58.9 J in 10 s: the projection left the slider 2e-5 m
/// off its stop, beyond the slop, so no substep had the stop's row, and the slider ran into
/// the stop at 1.8 m/s for the rest of the run, pushed back by the projection every substep.
/// The projection now marks the stop it pushes a joint back from in the carried limit impulse
/// (`solver::PROJECTED_STOP`), and the next substep has that stop's row, which takes the
/// approach out: every setting loses the slide's two inelastic impacts, 16 %.
#[test]
fn a_slider_on_its_stop_in_a_tumbling_pair_loses_only_its_impacts() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/regressions/tumbling-slider-on-stop.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let with =
        |line: &str| text.replace("duration = 10.0\n", &format!("duration = 10.0\n{line}\n"));
    let lost = energy_lost(&text, None);
    let factor = energy_lost(&with("projection_factor = 0.99"), None);
    let one_pass = energy_lost(&with("position_iterations = 1"), None);
    let speculative = energy_lost(&with("speculative_limits = true"), None);
    println!(
        "energy lost in 10 s: {lost} (projection factor 0.99: {factor}, one pass: {one_pass}, \
         speculative limits: {speculative})"
    );
    // Measured: 0.1625 at the defaults, factor 0.99 and one pass, 0.158 with speculative
    // limits (the welded pair keeps its energy to 1e-5).
    for loss in [lost, factor, one_pass, speculative] {
        assert!((0.15..0.17).contains(&loss), "{loss}");
    }
}
