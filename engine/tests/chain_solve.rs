//! `Settings::chain_solve`: chains of joints solved exactly, one block-tridiagonal sweep per
//! velocity pass.

use lavender_engine::{BodyDesc, JointDesc, JointKind, Scene, Settings, SolverPath, Vec3, World};

mod common;
use common::*;

fn chain_solve(scene: &Scene, velocity_iterations: u32, position_iterations: u32) -> Settings {
    Settings {
        chain_solve: true,
        velocity_iterations,
        position_iterations,
        ..scene.settings()
    }
}

/// Every body's velocity `[v, w]`, m/s and rad/s.
fn velocities(w: &World) -> Vec<[f32; 6]> {
    let (mut poses, mut velocities) = (Vec::new(), Vec::new());
    w.gather_state(&mut poses, &mut velocities);
    velocities
}

/// The largest difference of any velocity component between `a` and `b`.
fn max_deviation(a: &[[f32; 6]], b: &[[f32; 6]]) -> f32 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f32::max)
}

/// A horizontal chain of `links` revolute links from a static anchor.
fn chain_scene(links: u32) -> Scene {
    Scene::from_toml_str(
        &format!(
            "[world]\ndt = 0.0041666667\n\n[[chain]]\nname = \"c\"\nlinks = {links}\n\
             origin = [0.0, 0.0, 0.0]\n"
        ),
        "test",
    )
    .unwrap()
}

/// Ten horizontal revolute chains of 3 to 12 links, released: uniform chains of different
/// lengths, which share lanes (longest first).
fn ropes_scene() -> Scene {
    let mut text = String::from("[world]\ndt = 0.016666667\n");
    for i in 0..10 {
        text += &format!(
            "\n[[chain]]\nname = \"rope{i}\"\nlinks = {}\norigin = [0.0, 0.0, {}]\n",
            3 + i,
            0.5 * i as f32
        );
    }
    Scene::from_toml_str(&text, "test").unwrap()
}

/// `(lanes, joints)` of the groups that `chains` chains, longest first, fill in the build's
/// lane width; `joints(k)`: the length of the `k`-th longest chain.
fn lane_groups(chains: usize, joints: impl Fn(usize) -> usize) -> Vec<(u32, usize)> {
    let width = lavender_engine::lanes::WIDE_LANES;
    (0..chains)
        .step_by(width)
        .map(|first| (width.min(chains - first) as u32, joints(first)))
        .collect()
}

#[test]
fn chains_of_different_lengths_share_lanes_and_one_pass_stays_exact() {
    let scene = ropes_scene();
    let mut world = scene.build_with(chain_solve(&scene, 1, 0)).unwrap();
    let groups: Vec<(u32, usize)> = world
        .schedule()
        .chain_groups
        .iter()
        .map(|g| (g.lanes, g.len()))
        .collect();
    // Longest first, in groups of the lane width: with 8 lanes, 12 down to 5 links in one
    // group, 4 and 3 in the next (16 lanes: all ten in one).
    assert_eq!(groups, lane_groups(10, |first| 12 - first));
    // One substep, no bias, no projection: one pass against 3,000 Gauss-Seidel passes.
    let run = |chain_solve, velocity_iterations| {
        let mut w = scene
            .build_with(Settings {
                chain_solve,
                velocity_iterations,
                error_reduction: 0.0,
                position_iterations: 0,
                ..scene.settings()
            })
            .unwrap();
        w.step(1.0 / 240.0).unwrap();
        velocities(&w)
    };
    let exact = run(false, 3000);
    let off = |v: &[[f32; 6]]| max_deviation(v, &exact);
    let (direct, one) = (off(&run(true, 1)), off(&run(false, 1)));
    eprintln!("ropes: chain solve off by {direct:e} m/s, one Gauss-Seidel pass by {one:e}");
    assert!(direct < 1e-5, "{direct:e}");
    assert!(one > 100.0 * direct, "{one:e}");
    world.step(scene.frame_dt()).unwrap();
}

/// A horizontal chain of 12 hinges stopping at +-0.2 rad, released: its hinges reach their
/// stops within the first second.
fn limited_chain_scene() -> Scene {
    limited_chain(12)
}

/// A horizontal chain of `links` hinges stopping at +-0.2 rad, released.
fn limited_chain(links: u32) -> Scene {
    Scene::from_toml_str(
        &format!(
            "[world]\ndt = 0.016666667\n\n[[chain]]\nname = \"c\"\nlinks = {links}\n\
             origin = [0.0, 0.0, 0.0]\nlimit = [-0.2, 0.2]\n"
        ),
        "test",
    )
    .unwrap()
}

#[test]
fn one_pass_gives_the_velocities_gauss_seidel_converges_to() {
    // One substep from rest (no warm start to help either solver), no bias, no projection:
    // the velocity system alone. The chain solve's single pass against 2,000 Gauss-Seidel
    // passes on a 12-link chain (converged: 1,000 passes give the same to 1e-7 m/s).
    let scene = chain_scene(12);
    let base = Settings {
        error_reduction: 0.0,
        position_iterations: 0,
        ..scene.settings()
    };
    let direct = run(
        &scene,
        Settings {
            chain_solve: true,
            velocity_iterations: 1,
            ..base
        },
        1,
    );
    let converged = run(
        &scene,
        Settings {
            velocity_iterations: 2000,
            ..base
        },
        1,
    );
    let one_pass = run(
        &scene,
        Settings {
            velocity_iterations: 1,
            ..base
        },
        1,
    );
    let exact = velocities(&converged);
    let deviation = |w: &World| max_deviation(&velocities(w), &exact);
    let speed = exact
        .iter()
        .flat_map(|v| v.iter().map(|x| x.abs()))
        .fold(0.0, f32::max);
    let (direct, gauss_seidel) = (deviation(&direct), deviation(&one_pass));
    eprintln!("max speed {speed:e} m/s; deviation: chain solve {direct:e}, one Gauss-Seidel pass {gauss_seidel:e}");
    assert!(speed > 0.01, "the chain falls: {speed}");
    assert!(
        direct < 1e-6 * speed.max(1.0) * 10.0,
        "chain solve off by {direct:e} m/s"
    );
    assert!(
        gauss_seidel > 100.0 * direct,
        "one Gauss-Seidel pass: {gauss_seidel:e}"
    );
}

#[test]
fn paths_and_thread_counts_agree_bit_for_bit() {
    // Chains of hinges and ball joints, limited or not (a single chain, and limited chains
    // sharing lanes), and welds and sliders, which stay with the colours.
    for name in [
        "chain",
        "grid",
        "fixed-stack",
        "prismatic-slider",
        "limited-revolute",
        "limited-chain",
        "ropes",
        "limited-ropes",
    ] {
        let scene = match name {
            "limited-chain" => limited_chain_scene(),
            "ropes" => ropes_scene(),
            "limited-ropes" => limited_ropes_scene(),
            _ => Scene::builtin(name).unwrap(),
        };
        let settings = |threads, path| Settings {
            threads,
            solver_path: path,
            ..chain_solve(&scene, 2, 1)
        };
        let reference = run(&scene, settings(1, SolverPath::Scalar), 30);
        for (threads, path) in [
            (1, SolverPath::Wide),
            (2, SolverPath::Wide),
            (3, SolverPath::Wide),
            (2, SolverPath::Scalar),
        ] {
            let w = run(&scene, settings(threads, path), 30);
            assert_eq!(
                w.state_hash(),
                reference.state_hash(),
                "{name}: {threads} threads, {path:?}"
            );
            assert_eq!(w.constraint_data(), reference.constraint_data(), "{name}");
        }
    }
}

#[test]
fn the_shipped_scenes_are_cut_into_the_chains_that_carry_their_load() {
    let chains = |name: &str| {
        let scene = Scene::builtin(name).unwrap();
        let mut world = scene.build_with(chain_solve(&scene, 1, 1)).unwrap();
        let s = world.schedule();
        let lanes: Vec<(u32, usize)> = s.chain_groups.iter().map(|g| (g.lanes, g.len())).collect();
        (lanes, s.batches.len(), s.overflow.len())
    };
    // The 100-link chain: one chain of 100 joints, nothing left to the colours.
    assert_eq!(chains("chain"), (vec![(1, 100)], 0, 0));
    // The 20 x 20 grid hanging from its top row: its 20 columns of 19 joints in groups of
    // the lane width (8, 8 and 4 with 8 lanes); the rows' joints stay with the colours.
    let (groups, batches, _) = chains("grid");
    assert_eq!(groups, lane_groups(20, |_| 19));
    assert!(batches > 0);
    // Without the setting, no chains.
    let scene = Scene::builtin("chain").unwrap();
    let mut world = scene.build().unwrap();
    assert!(world.schedule().chain_groups.is_empty());
    // Turning it on rebuilds the schedule.
    world
        .set_settings(Settings {
            chain_solve: true,
            ..*world.settings()
        })
        .unwrap();
    assert_eq!(world.schedule().chain_groups.len(), 1);
}

/// The largest anchor error of any joint at the end of any of `frames` frames, m.
fn peak_anchor_error(scene: &Scene, settings: Settings, frames: usize) -> f32 {
    let mut world = scene.build_with(settings).unwrap();
    let mut peak: f32 = 0.0;
    for _ in 0..frames {
        world.step(scene.frame_dt()).unwrap();
        peak = peak.max(max_anchor_error(&world));
    }
    peak
}

#[test]
fn one_direct_pass_leaves_less_anchor_error_than_eight_gauss_seidel_passes() {
    // Peaks over the first 0.5 s of the shipped scenes, one direct pass and one projection
    // against the default 8 Gauss-Seidel passes and 2 projections. Measured (m): chain
    // 8.64e-6 against 1.014e-3, grid 6.42e-7 against 4.44e-4. (Without curvature offsets
    // the chain's direct pass left 2.431e-4: solved exactly, a row aimed at the tangent
    // still drifts by h^2/2 Jdot v per substep; aimed at the chord, the drift is O(h^3).)
    for (name, expected) in [("chain", 8.64e-6), ("grid", 6.42e-7)] {
        let scene = Scene::builtin(name).unwrap();
        let default = peak_anchor_error(&scene, scene.settings(), 30);
        let direct = peak_anchor_error(&scene, chain_solve(&scene, 1, 1), 30);
        eprintln!("{name}: default {default:e} m, chain solve 1/1 {direct:e} m");
        assert!(
            direct * 4.0 < default,
            "{name}: {direct:e} against {default:e}"
        );
        assert!(
            (direct - expected).abs() < 0.05 * expected,
            "{name}: {direct:e}, measured {expected:e}"
        );
    }
}

#[test]
fn the_whipping_chain_stays_together() {
    // The shipped chain's free end whips at 1.2 to 2 s. Solving the bias system exactly too
    // tore it apart there (1.7 m anchor errors at 3 s, see `ChainLanes::bias_sweep`); with
    // the bias swept row by row its peak over 3 s is 6.90e-3 m (the default 8/2: 7.61e-3 m;
    // without curvature offsets 9.50e-3 m and 7.82e-3 m).
    let scene = Scene::builtin("chain").unwrap();
    let peak = peak_anchor_error(&scene, chain_solve(&scene, 1, 1), 180);
    let default = peak_anchor_error(&scene, scene.settings(), 180);
    eprintln!("chain solve 1/1, 3 s: peak {peak:e} m, default {default:e} m");
    assert!(peak < 1.2e-2, "peak anchor error {peak:e} m");
    assert!((peak - 6.90e-3).abs() < 0.05 * 6.90e-3, "{peak:e}");
}

/// Links `0..n` of 0.2 m along x from the origin, each a 1 kg box, joined in a line by joints
/// of the kinds in `kinds` (cycled), every other joint naming its bodies B-first; the first
/// joint to `root` (static, kinematic or none: the first link is then free).
fn line_world(settings: Settings, n: usize, kinds: &[JointKind], root: Option<BodyDesc>) -> World {
    let mut world = World::new(settings).unwrap();
    let mut previous = root.map(|r| world.add_body(r).unwrap());
    for i in 0..n {
        let x = 0.2 * i as f32 + 0.1;
        let link = world
            .add_body(
                BodyDesc::dynamic(format!("link{i}"))
                    .position(Vec3::new(x, 0.0, 0.0))
                    .solid_box(1.0, Vec3::new(0.1, 0.02, 0.03))
                    .velocity(
                        Vec3::new(0.0, 0.3 * i as f32, 0.1),
                        Vec3::new(0.2, 0.0, 0.5),
                    ),
            )
            .unwrap();
        if let Some(p) = previous {
            let kind = kinds[i % kinds.len()];
            let name = format!("j{i}");
            let joint_at = Vec3::new(x - 0.1, 0.0, 0.0);
            let (a, b) = if i.is_multiple_of(2) {
                (p, link)
            } else {
                (link, p)
            };
            let pa = world.bodies().positions()[a.index()];
            let pb = world.bodies().positions()[b.index()];
            let desc = match kind {
                JointKind::Revolute => JointDesc::revolute(name, a, b).axis(Vec3::Z),
                JointKind::Spherical => JointDesc::spherical(name, a, b),
                JointKind::Fixed => JointDesc::fixed(name, a, b),
                JointKind::Prismatic => JointDesc::prismatic(name, a, b).axis(Vec3::Y),
            };
            world
                .add_joint(desc.anchors(joint_at - pa, joint_at - pb))
                .unwrap();
        }
        previous = Some(link);
    }
    world
}

#[test]
fn one_pass_is_exact_for_mixed_joint_types_either_body_order_and_any_root() {
    // One substep, no bias, no projection: the velocity system alone. Chains of both joint
    // types a chain takes in turn (blocks of 5 and 3 rows in one chain; welds and sliders
    // stay with the colours, see below), half the joints naming their bodies the other way
    // round, hanging from a static body, from a kinematic one, and free. Without the
    // gyroscopic term: its coupling between passes (engine/DESIGN.md, step 4) makes the
    // 3000-pass reference the solution of the coupled system, which one pass does not reach.
    use JointKind::*;
    for root in [
        Some(BodyDesc::fixed("ground")),
        Some(BodyDesc::kinematic("crane").velocity(Vec3::new(0.5, 0.0, 0.0), Vec3::ZERO)),
        None,
    ] {
        let label = format!("{:?}", root.as_ref().map(|r| r.kind));
        let settings = |chain_solve, velocity_iterations| Settings {
            chain_solve,
            velocity_iterations,
            error_reduction: 0.0,
            position_iterations: 0,
            max_substep: 1.0 / 240.0,
            gyroscopic: false,
            ..Settings::default()
        };
        let step = |mut w: World| {
            w.step(1.0 / 240.0).unwrap();
            let v = velocities(&w);
            (w, v)
        };
        let kinds = [Revolute, Spherical];
        let (mut direct, v_direct) = step(line_world(settings(true, 1), 9, &kinds, root.clone()));
        let (_, v_exact) = step(line_world(settings(false, 3000), 9, &kinds, root.clone()));
        let (_, v_one) = step(line_world(settings(false, 1), 9, &kinds, root));
        assert!(
            !direct.schedule().chain_groups.is_empty(),
            "{label}: a chain was found"
        );
        let off = |v: &[[f32; 6]]| max_deviation(v, &v_exact);
        let (d, g) = (off(&v_direct), off(&v_one));
        eprintln!("{label}: chain solve off by {d:e}, one Gauss-Seidel pass by {g:e}");
        assert!(d < 1e-4, "{label}: chain solve off by {d:e} m/s");
        assert!(g > 100.0 * d, "{label}: one Gauss-Seidel pass off by {g:e}");
    }
}

#[test]
fn a_branching_tree_converges_faster_with_chains_as_blocks() {
    // A Y of revolute links: a trunk of 12 from a static anchor, two branches of 12 from its
    // end. The trunk and one branch make a chain; the other branch is a chain of its own but
    // its first joint (to the trunk's end) stays with the colours: block Gauss-Seidel, not
    // one exact solve. Velocities after one substep (no bias, no projection) against 3,000
    // Gauss-Seidel passes, after 8 passes of each solver.
    let build = |chain_solve, velocity_iterations| {
        let mut world = World::new(Settings {
            chain_solve,
            velocity_iterations,
            error_reduction: 0.0,
            position_iterations: 0,
            ..Settings::default()
        })
        .unwrap();
        let ground = world.add_body(BodyDesc::fixed("ground")).unwrap();
        // Links start moving up and down alternately: the joints must stop all of it.
        let kick = |i: usize| Vec3::new(0.0, if i.is_multiple_of(2) { 1.0 } else { -1.0 }, 0.0);
        let link = |world: &mut World, name: String, at: Vec3, i: usize| {
            world
                .add_body(
                    BodyDesc::dynamic(name)
                        .position(at)
                        .velocity(kick(i), Vec3::ZERO)
                        .solid_box(0.1, Vec3::new(0.05, 0.01, 0.01)),
                )
                .unwrap()
        };
        let mut end = (ground, Vec3::ZERO);
        for i in 0..12 {
            let at = end.1 + Vec3::new(0.05, 0.0, 0.0);
            let b = link(&mut world, format!("trunk{i}"), at, i);
            let pa = world.bodies().positions()[end.0.index()];
            world
                .add_joint(
                    JointDesc::revolute(format!("t{i}"), end.0, b)
                        .axis(Vec3::Z)
                        .anchors(end.1 - pa, Vec3::new(-0.05, 0.0, 0.0)),
                )
                .unwrap();
            end = (b, at + Vec3::new(0.05, 0.0, 0.0));
        }
        let fork = end;
        for (side, dir) in [
            ("up", Vec3::new(0.6, 0.8, 0.0)),
            ("down", Vec3::new(0.6, -0.8, 0.0)),
        ] {
            let mut end = fork;
            for i in 0..12 {
                let at = end.1 + dir * 0.05;
                let b = world
                    .add_body(
                        BodyDesc::dynamic(format!("{side}{i}"))
                            .position(at)
                            .velocity(kick(i), Vec3::ZERO)
                            .rotation(lavender_engine::Quat::from_rotation_arc(Vec3::X, dir))
                            .solid_box(0.1, Vec3::new(0.05, 0.01, 0.01)),
                    )
                    .unwrap();
                let pa = world.bodies().positions()[end.0.index()];
                let qb = world.bodies().rotations()[b.index()];
                world
                    .add_joint(
                        JointDesc::revolute(format!("{side}{i}"), end.0, b)
                            .axis(Vec3::Z)
                            .anchors(
                                world.bodies().rotations()[end.0.index()].inverse() * (end.1 - pa),
                                qb.inverse() * (-dir * 0.05),
                            ),
                    )
                    .unwrap();
                end = (b, at + dir * 0.05);
            }
        }
        world.step(1.0 / 240.0).unwrap();
        let v = velocities(&world);
        (world, v)
    };
    let (_, exact) = build(false, 3000);
    let off = |v: &[[f32; 6]]| max_deviation(v, &exact);
    let (mut tree, direct) = build(true, 8);
    let groups: Vec<(u32, usize)> = tree
        .schedule()
        .chain_groups
        .iter()
        .map(|g| (g.lanes, g.len()))
        .collect();
    // The trunk with the first-found branch (24 joints) and the other branch less its first
    // joint (11), in two lanes of one group.
    assert_eq!(groups, vec![(2, 24)]);
    assert_eq!(tree.schedule().chain_joints.len(), 35);
    let (_, rows) = build(false, 8);
    let (d, g) = (off(&direct), off(&rows));
    eprintln!("8 passes: chains as blocks off by {d:e} m/s, row by row by {g:e} m/s");
    // Measured: 0.107 m/s against 1.17 m/s (the links start at 1 m/s).
    assert!(d < 0.12, "chains as blocks off by {d:e}");
    assert!(10.0 * d < g, "row by row {g:e}, chains {d:e}");
}

#[test]
fn islands_sleep_and_the_run_stays_bitwise_with_the_chain_solve() {
    // The 20 x 20 grid comes to rest and sleeps (as `lavender run grid --sleep --duration 6`);
    // its chains leave the schedule with it. One thread and two give the same bits.
    let scene = Scene::builtin("grid").unwrap();
    let settings = |threads| Settings {
        sleeping: true,
        threads,
        ..chain_solve(&scene, 2, 1)
    };
    let (mut one, two) = (run(&scene, settings(1), 360), run(&scene, settings(2), 360));
    assert_eq!(one.state_hash(), two.state_hash());
    assert_eq!(one.sleeping_body_count(), 380, "every dynamic body asleep");
    assert!(one.schedule().chain_groups.is_empty());
}

/// `data/regressions/limited-ropes.toml`: ten horizontal chains of 3 to 12 hinges stopping
/// at +-0.10 to +-0.28 rad, released: limited chains of different lengths and limits that
/// share lanes, whose limits come on and go off at different substeps in different lanes.
fn limited_ropes_scene() -> Scene {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/regressions");
    Scene::load(root.join("limited-ropes.toml")).unwrap()
}

/// The limit row's impulse (slot 5 of six per joint) of each of `w`'s joints in the last
/// substep, N s (N m s for a hinge), signed by the stop that gave it (`+` the lower, `-` the
/// upper).
fn limit_impulses(w: &World) -> Vec<f32> {
    w.solver_state().chunks(6).map(|rows| rows[5]).collect()
}

/// Every stop pushes and none pulls: a joint's limit impulse is positive only at its lower
/// stop (here -0.2 rad) and negative only at its upper (+0.2 rad).
fn assert_stops_push(w: &World) {
    for (impulse, row) in limit_impulses(w).iter().zip(w.constraint_data()) {
        let angle = row[7];
        assert!(
            *impulse == 0.0 || (*impulse > 0.0) == (angle < 0.0),
            "impulse {impulse} at {angle} rad"
        );
    }
}

/// `scene`'s world after 0.5 s of default steps, then one substep with `velocity_iterations`
/// passes (the chain solve or not), no bias, no projection, no warm start and no gyroscopic
/// coupling between passes: the velocity system with its limits alone, a linear
/// complementarity problem with one solution.
fn one_limited_substep(scene: &Scene, chain_solve: bool, velocity_iterations: u32) -> World {
    let mut w = run(scene, scene.settings(), 30);
    w.set_settings(Settings {
        chain_solve,
        velocity_iterations,
        error_reduction: 0.0,
        position_iterations: 0,
        warm_starting: false,
        gyroscopic: false,
        ..scene.settings()
    })
    .unwrap();
    w.step(1.0 / 240.0).unwrap();
    w
}

#[test]
fn limited_chains_are_solved_directly_and_one_pass_meets_the_limits_exactly() {
    // Six links after 0.5 s: three stops pushing (measured). Gauss-Seidel converges here
    // (1,000 and 10,000 passes agree to the bit), and the chain solve's one pass, an
    // active-set solve, lands on the same solution: measured 1.6e-5 m/s apart.
    let scene = limited_chain(6);
    let mut direct = one_limited_substep(&scene, true, 1);
    let converged = one_limited_substep(&scene, false, 10_000);
    let one_pass = one_limited_substep(&scene, false, 1);
    let groups = direct.schedule().chain_groups.clone();
    assert_eq!(groups.len(), 1, "the limited chain is one chain");
    assert!(groups[0].limited.iter().all(|&l| l));
    let pushing = (limit_impulses(&converged).iter())
        .filter(|&&x| x != 0.0)
        .count();
    let off = max_deviation(&velocities(&direct), &velocities(&converged));
    let gs = max_deviation(&velocities(&one_pass), &velocities(&converged));
    eprintln!(
        "6 limited links: {pushing} stops pushing; chain solve off by {off:e} m/s, one \
         Gauss-Seidel pass by {gs:e}"
    );
    assert_eq!(pushing, 3, "the stops in use");
    assert!(off < 1e-4, "{off:e}");
    assert!(gs > 1000.0 * off, "{gs:e}");
    // The limits push and never pull.
    assert_stops_push(&direct);
    for (d, c) in limit_impulses(&direct)
        .iter()
        .zip(limit_impulses(&converged))
    {
        assert!((d - c).abs() <= 1e-3 * c.abs().max(1.0), "{d} against {c}");
    }
}

#[test]
fn on_a_stiff_limited_chain_gauss_seidel_crawls_towards_the_direct_solve() {
    // Ten links after 0.5 s, every stop pushing: the stopped hinges make the chain a
    // near-rigid lever, and Gauss-Seidel carries its load one joint per pass. Measured: the
    // root's limit impulse 7.6, 15.8 and 29.0 N m s after 1,000, 3,000 and 10,000 passes, the
    // chain solve's one pass 36.1 (two passes agree with one to 1e-5). (35.9 before
    // 2026-12-06, when joints running into a stop lost their curvature offsets, and 36.4
    // before 2026-12-07, when joints held on their stops got them back: the 0.5 s before the
    // substep ran differently.)
    let scene = limited_chain(10);
    let direct = one_limited_substep(&scene, true, 1);
    let twice = one_limited_substep(&scene, true, 2);
    let root = |w: &World| limit_impulses(w)[0].abs();
    assert_stops_push(&direct);
    let pushing = (limit_impulses(&direct).iter())
        .filter(|&&x| x != 0.0)
        .count();
    assert_eq!(pushing, 10);
    assert!((root(&direct) - 36.14).abs() < 0.2, "{}", root(&direct));
    assert!((root(&twice) - root(&direct)).abs() < 1e-3 * root(&direct));
    let mut gap = f32::INFINITY;
    for passes in [1_000, 3_000, 10_000] {
        let gs = one_limited_substep(&scene, false, passes);
        let next = max_deviation(&velocities(&gs), &velocities(&direct));
        eprintln!(
            "{passes} passes: root impulse {}, {next:e} m/s off",
            root(&gs)
        );
        assert!(
            next < gap && root(&gs) < root(&direct),
            "{passes}: {next:e}"
        );
        gap = next;
    }
}

#[test]
fn limited_chains_hold_their_stops_and_anchors_better_than_the_colours() {
    // Chaining limited joints with the limit row relaxed before or after each direct solve
    // of the other rows made this chain unstable at one pass: 1.26 m anchor errors at 1c/1
    // over 2 s. With the limits in the chain's system as they are active, peaks at the ends
    // of frames measured 3.4e-3 m and 0.072 rad at 1c/1 (the colours' one pass: 3.1e-2 m,
    // 0.61 rad), 2.4e-3 m and 0.050 rad at the default 8/2 (the colours: 1.16e-2 m, 0.226
    // rad); before joints running into a stop lost their curvature offsets (2026-12-06),
    // 4.7e-3 m and 0.091 rad, 2.7e-3 m and 0.057 rad.
    let scene = limited_chain_scene();
    let peaks = |settings: Settings| {
        let mut world = scene.build_with(settings).unwrap();
        let (mut anchor, mut limit) = (0.0f32, 0.0f32);
        for _ in 0..120 {
            world.step(scene.frame_dt()).unwrap();
            anchor = anchor.max(max_anchor_error(&world));
            limit = (world.constraint_data().iter()).fold(limit, |m, r| m.max(r[5]));
        }
        (anchor, limit)
    };
    let colours = |v, p| Settings {
        velocity_iterations: v,
        position_iterations: p,
        ..scene.settings()
    };
    for (label, (v, p), (anchor_bound, limit_bound)) in [
        ("1/1", (1, 1), (6e-3, 0.11)),
        ("8/2", (8, 2), (3.5e-3, 0.07)),
    ] {
        let direct = peaks(chain_solve(&scene, v, p));
        let gs = peaks(colours(v, p));
        eprintln!("limited chain at {label}: chain solve {direct:?}, colours {gs:?}");
        assert!(
            direct.0 < anchor_bound && direct.1 < limit_bound,
            "{label}: {direct:?}"
        );
        assert!(
            direct.0 < 0.3 * gs.0 && direct.1 < 0.3 * gs.1,
            "{label}: {direct:?} {gs:?}"
        );
    }
}

/// Welds and sliders are left to the colours: solved directly, chains through them came
/// apart (QA, 2026-12-04: a hinge then a slider carrying a block 40 m out reached 4.5e10 m of
/// anchor error in 3 s, a 13-joint chain of every type 4.2e13 m, a hanging beam of 100 welded
/// cubes went non-finite at the first substep). A slider's block of `K` grows ill-conditioned
/// with the square of its extension and a welded beam's `K` like `n^4`: beyond f32, where
/// Gauss-Seidel, which inverts nothing, holds. With the chain solve on, the three scenes stay
/// within a centimetre, as row by row, and no weld or slider joins a chain.
#[test]
fn chains_through_welds_and_sliders_stay_with_the_colours_and_hold() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/regressions");
    for (file, bound) in [
        ("slider-far-out.toml", 1e-3),
        ("mixed-chain-13.toml", 1e-3),
        ("welded-beam-100.toml", 1e-2),
    ] {
        let scene = Scene::load(root.join(file)).unwrap();
        let settings = Settings {
            chain_solve: true,
            ..scene.settings()
        };
        let mut world = scene.build_with(settings).unwrap();
        let mut worst = 0.0f32;
        for _ in 0..180 {
            world.step(scene.frame_dt()).unwrap();
            worst = worst.max(max_anchor_error(&world));
        }
        assert!(worst < bound, "{file}: max anchor error {worst} m over 3 s");
        let kinds = world.joints().kinds().to_vec();
        let schedule = world.schedule();
        if file == "mixed-chain-13.toml" {
            // Its hinges, ball joints and welds still form chains between the sliders.
            assert!(!schedule.chain_joints.is_empty(), "{file}: no chain found");
        }
        assert!(
            (schedule.chain_joints.iter()).all(|&j| matches!(
                kinds[j as usize],
                JointKind::Revolute | JointKind::Spherical
            )),
            "{file}: a weld or slider was chained"
        );
    }
}
