//! The wide path against the scalar reference, and thread counts against each other.
//!
//! Both paths run the same kernels (see `lavender_engine::lanes`) in the same per-joint order,
//! and the batches of one colour share no dynamic body, so every comparison here is bit for
//! bit: poses, velocities, warm-start impulses (the state hash) and the diagnostics.

use lavender_engine::{builtin_scenes, GridSpec, Scene, Settings, SolverPath, World};

mod common;
use common::*;

/// Every bit of the state and the diagnostics.
fn bits(w: &World) -> Vec<u32> {
    let b = w.bodies();
    b.positions()
        .iter()
        .flat_map(|p| p.to_array())
        .chain(b.rotations().iter().flat_map(|q| q.to_array()))
        .chain(b.linear_velocities().iter().flat_map(|v| v.to_array()))
        .chain(b.angular_velocities().iter().flat_map(|v| v.to_array()))
        .chain(w.constraint_data_flat().iter().copied())
        .chain(w.solver_state().iter().copied())
        .map(f32::to_bits)
        .collect()
}

/// `base` on each solver path and thread count of `paths`.
fn on_paths(base: Settings, paths: &[(SolverPath, u32)]) -> impl Iterator<Item = Settings> + '_ {
    paths.iter().map(move |&(solver_path, threads)| Settings {
        solver_path,
        threads,
        ..base
    })
}

/// Whether `scene` with `settings` gives the same bits on the wide and the scalar path after
/// `frames` frames.
fn paths_agree(scene: &Scene, settings: Settings, frames: usize) -> bool {
    let on = |solver_path| Settings {
        solver_path,
        ..settings
    };
    bits(&run(scene, on(SolverPath::Wide), frames))
        == bits(&run(scene, on(SolverPath::Scalar), frames))
}

#[test]
fn wide_and_scalar_paths_agree_bit_for_bit_on_every_shipped_scene() {
    for (name, _) in builtin_scenes() {
        let scene = Scene::builtin(name).unwrap();
        let wide = Settings {
            solver_path: SolverPath::Wide,
            ..scene.settings()
        };
        let scalar = Settings {
            solver_path: SolverPath::Scalar,
            ..wide
        };
        let (a, b) = (run(&scene, wide, 60), run(&scene, scalar, 60));
        assert_eq!(a.state_hash(), b.state_hash(), "{name}");
        assert!(bits(&a) == bits(&b), "{name}: states differ");
        assert_eq!(a.active_row_count(), b.active_row_count(), "{name}");
    }
}

#[test]
fn whole_projection_groups_of_many_islands_agree_bit_for_bit() {
    // 20 separate chains: the projection gives each island a lane, so the groups are full
    // (8 + 8 + 4 lanes, or 16 + 4 with `lanes16` on AVX-512), which the shipped scenes never
    // fill.
    // A full group of 16 once wrote nothing back (its lane mask overflowed).
    let mut text = String::from("[world]\ndt = 0.016666667\n");
    for i in 0..20 {
        text += &format!(
            "\n[[chain]]\nname = \"c{i}\"\nlinks = 6\norigin = [0.0, 0.0, {}]\n",
            i as f32
        );
    }
    let scene = Scene::from_toml_str(&text, "twenty chains").unwrap();
    let path = |solver_path| Settings {
        solver_path,
        ..scene.settings()
    };
    let wide = run(&scene, path(SolverPath::Wide), 30);
    let scalar = run(&scene, path(SolverPath::Scalar), 30);
    assert!(bits(&wide) == bits(&scalar), "states differ");
    // The projection ran: without it the anchors drift further.
    let unprojected = run(
        &scene,
        Settings {
            position_iterations: 0,
            ..path(SolverPath::Wide)
        },
        30,
    );
    assert_ne!(wide.state_hash(), unprojected.state_hash());
}

#[test]
fn diagnostics_after_a_step_are_those_of_the_bodies() {
    // After a substep the diagnostics come from the solver's pose and velocity blocks
    // (`World::sync_after_substep`); `World::sync` computes them from the bodies' arrays.
    let bits_of = |w: &World| -> Vec<u32> {
        w.constraint_data_flat()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    for (name, _) in builtin_scenes() {
        let scene = Scene::builtin(name).unwrap();
        for sleeping in [false, true] {
            let settings = Settings {
                sleeping,
                ..scene.settings()
            };
            let mut world = scene.build_with(settings).unwrap();
            for frame in 0..20 {
                if frame % 2 == 0 {
                    world.step(scene.frame_dt()).unwrap();
                } else {
                    let mut observed = Vec::new();
                    world
                        .step_observed(scene.frame_dt(), |w, _| observed = bits_of(w))
                        .unwrap();
                    assert_eq!(observed, bits_of(&world), "{name}: the last substep's");
                }
                let after_step = bits_of(&world);
                world.sync();
                assert!(after_step == bits_of(&world), "{name} frame {frame}");
            }
        }
    }
}

#[test]
fn switching_the_path_mid_run_changes_nothing() {
    let scene = Scene::builtin("limited-revolute").unwrap();
    let reference = run(&scene, scene.settings(), 40);
    let mut world = scene.build().unwrap();
    for frame in 0..40 {
        let mut s = *world.settings();
        s.solver_path = if frame % 2 == 0 {
            SolverPath::Scalar
        } else {
            SolverPath::Wide
        };
        world.set_settings(s).unwrap();
        world.step(scene.frame_dt()).unwrap();
    }
    assert_eq!(world.state_hash(), reference.state_hash());
}

fn chain_and_grid() -> Scene {
    let mut scene = Scene::builtin("chain").unwrap();
    for i in 0..5 {
        let mut c = scene.chains[0].clone();
        c.name = format!("chain{i}");
        c.origin = [0.0, 0.0, 0.3 * (i + 1) as f32];
        scene.chains.push(c);
    }
    scene.grids.push(GridSpec {
        name: "grid".into(),
        rows: 30,
        cols: 30,
        spacing: 0.1,
        origin: [0.0, 5.0, 0.0],
        mass: 0.1,
        joint: lavender_engine::JointKind::Spherical,
    });
    scene
}

/// Twenty limited chains of six links released horizontally, ten limited to +-0.3 rad
/// (running into their stops: the projection marks them, `solver::PROJECTED_STOP`)
/// and ten locked at 0.1 rad (an equality row, which pulls): whole projection groups and colour batches of
/// limited lanes, with and without the chain solve and speculative limits.
fn limited_and_locked_chains() -> Scene {
    let mut text = String::from("[world]\ndt = 0.016666667\n");
    for i in 0..20 {
        // The locked chains' hinge axes point the other way: their sag raises the coordinate
        // past the lock, which the lower stop's row then pulls back.
        let (limit, axis) = if i % 2 == 0 {
            ("[-0.3, 0.3]", "1.0")
        } else {
            ("[0.1, 0.1]", "-1.0")
        };
        text += &format!(
            "\n[[chain]]\nname = \"c{i}\"\nlinks = 6\norigin = [0.0, 0.0, {}]\n\
             direction = [1.0, 0.0, 0.0]\naxis = [0.0, 0.0, {axis}]\nlimit = {limit}\n",
            i as f32
        );
    }
    Scene::from_toml_str(&text, "limited and locked chains").unwrap()
}

#[test]
fn limited_and_locked_joints_agree_on_both_paths_and_any_thread_count() {
    let scene = limited_and_locked_chains();
    for (chain_solve, speculative_limits) in [(false, false), (true, false), (false, true)] {
        let base = Settings {
            chain_solve,
            speculative_limits,
            ..scene.settings()
        };
        let paths = [
            (SolverPath::Wide, 1),
            (SolverPath::Wide, 2),
            (SolverPath::Wide, 4),
            (SolverPath::Scalar, 1),
        ];
        let worlds: Vec<World> = on_paths(base, &paths)
            .map(|settings| run(&scene, settings, 40))
            .collect();
        let case = format!("chain solve {chain_solve}, speculative limits {speculative_limits}");
        for w in &worlds[1..] {
            assert!(bits(w) == bits(&worlds[0]), "{case}");
        }
        // The free chains ran into their stops (coordinate, column 7, at -0.3 rad) and the
        // locked ones pull (a negative limit impulse: their rows are equalities).
        let data = worlds[0].constraint_data();
        let reached = (0..20)
            .filter(|c| c % 2 == 0)
            .any(|c| data[c * 6..c * 6 + 6].iter().any(|r| r[7] < -0.29));
        assert!(reached, "{case}: no stop reached");
        let state = worlds[0].solver_state();
        let pulls = (0..120)
            .filter(|j| (j / 6) % 2 == 1)
            .any(|j| state[j * 6 + 5] < 0.0);
        assert!(pulls, "{case}: no lock pulls");
    }
}

#[test]
fn one_two_and_four_threads_give_identical_bits() {
    let scene = chain_and_grid();
    for path in [SolverPath::Wide, SolverPath::Scalar] {
        let worlds: Vec<World> = [1, 2, 4]
            .into_iter()
            .map(|threads| {
                let settings = Settings {
                    threads,
                    solver_path: path,
                    ..scene.settings()
                };
                run(&scene, settings, 30)
            })
            .collect();
        for w in &worlds[1..] {
            assert_eq!(w.state_hash(), worlds[0].state_hash(), "{path:?}");
            assert!(bits(w) == bits(&worlds[0]), "{path:?}");
        }
    }
}

#[test]
fn the_default_steps_small_worlds_on_the_calling_thread_and_large_ones_in_the_pool() {
    // Every shipped scene is below the size where the pool pays (`AUTO_POOL_MIN_JOINTS`):
    // with `threads = 0` it steps on the calling thread, with the bits of two threads.
    for (name, _) in builtin_scenes() {
        let scene = Scene::builtin(name).unwrap();
        let with = |threads| Settings {
            threads,
            ..scene.settings()
        };
        let auto = scene.build_with(with(0)).unwrap();
        assert!(
            auto.joint_count() < lavender_engine::AUTO_POOL_MIN_JOINTS,
            "{name}"
        );
        assert!(auto.on_calling_thread(), "{name}");
        assert!(
            !scene.build_with(with(2)).unwrap().on_calling_thread(),
            "{name}"
        );
        let (auto, two) = (run(&scene, with(0), 10), run(&scene, with(2), 10));
        assert!(bits(&auto) == bits(&two), "{name}");
    }
    let scene = chain_and_grid();
    let world = scene.build().unwrap();
    assert!(world.joint_count() >= lavender_engine::AUTO_POOL_MIN_JOINTS);
    assert_eq!(world.settings().threads, 0);
    assert!(!world.on_calling_thread());
    let one = Settings {
        threads: 1,
        ..scene.settings()
    };
    assert!(scene.build_with(one).unwrap().on_calling_thread());
}

#[test]
fn the_global_pool_gives_the_same_bits_as_one_thread() {
    let scene = chain_and_grid();
    let one = run(
        &scene,
        Settings {
            threads: 1,
            ..scene.settings()
        },
        10,
    );
    let global = run(
        &scene,
        Settings {
            threads: 0,
            ..scene.settings()
        },
        10,
    );
    assert_eq!(one.state_hash(), global.state_hash());
}

#[test]
fn islands_are_the_chains_and_the_grid() {
    let scene = chain_and_grid();
    let mut world = scene.build().unwrap();
    let islands = world.islands();
    assert_eq!(islands.count, 7);
    let anchor = world.body_id("chain.anchor").unwrap();
    assert_eq!(world.island_of(anchor).unwrap(), None);
    let a = world.body_id("chain3.link0").unwrap();
    let b = world.body_id("chain3.link99").unwrap();
    assert_eq!(world.island_of(a).unwrap(), world.island_of(b).unwrap());
    let c = world.body_id("chain4.link0").unwrap();
    assert_ne!(world.island_of(a).unwrap(), world.island_of(c).unwrap());
    // The schedule's islands are the same as those computed without one.
    assert_eq!(world.schedule().islands, islands);
}

/// What joins a hub of [`hubs`] to its bobs.
#[derive(Clone, Copy, PartialEq)]
enum Spokes {
    /// Ball joints, which the hub solve takes.
    Ball,
    /// Hinges limited to +-0.3 rad, reached as the bobs swing: the hub solve takes them
    /// with their limits moving in and out of its system.
    Limited,
    /// 30 limited hinges from the hub to one bob (a hub takes one joint per other body, so
    /// no hub): past the 17 colours, 13 of them are overflow joints.
    Parallel,
}

/// Two hubs, each a dynamic body with 30 spokes ([`Spokes`]), the first hanging from a
/// static body, the second falling.
fn hubs(settings: Settings, spokes: Spokes) -> World {
    use lavender_engine::{BodyDesc, JointDesc, Vec3};
    let mut w = World::new(settings).unwrap();
    let wall = w.add_body(BodyDesc::fixed("wall")).unwrap();
    for h in 0..2 {
        let x = 3.0 * h as f32;
        let hub = w
            .add_body(
                BodyDesc::dynamic(format!("hub{h}"))
                    .position(Vec3::new(x, 0.0, 0.0))
                    .mass(5.0)
                    .inertia(Vec3::splat(2.0)),
            )
            .unwrap();
        if h == 0 {
            w.add_joint(JointDesc::spherical("hang", wall, hub).anchors(Vec3::ZERO, Vec3::ZERO))
                .unwrap();
        }
        let mut first_bob = None;
        for k in 0..30 {
            let angle = k as f32 * std::f32::consts::TAU / 30.0;
            let offset = Vec3::new(angle.cos(), -0.5, angle.sin()) * 0.8;
            let (bob, bob_anchor) = match first_bob {
                Some((bob, first)) if spokes == Spokes::Parallel => (bob, offset - first),
                _ => {
                    // Limited hinges: the bob 0.3 m further out, so that gravity swings it.
                    let lever = match spokes {
                        Spokes::Limited => Vec3::new(angle.cos(), 0.0, angle.sin()) * 0.3,
                        _ => Vec3::ZERO,
                    };
                    let bob = w
                        .add_body(
                            BodyDesc::dynamic(format!("bob{h}.{k}"))
                                .position(Vec3::new(x, 0.0, 0.0) + offset + lever)
                                .mass(0.2),
                        )
                        .unwrap();
                    first_bob.get_or_insert((bob, offset));
                    (bob, -lever)
                }
            };
            let name = format!("spoke{h}.{k}");
            // Hinge axes tangent to the hub, so that the bobs swing out and in.
            let tangent = Vec3::new(-angle.sin(), 0.0, angle.cos());
            let joint = match spokes {
                Spokes::Ball => JointDesc::spherical(name, hub, bob),
                Spokes::Limited | Spokes::Parallel => JointDesc::revolute(name, hub, bob)
                    .axis(tangent)
                    .limit(-0.3, 0.3),
            };
            w.add_joint(joint.anchors(offset, bob_anchor)).unwrap();
        }
    }
    w
}

#[test]
fn island_clusters_change_no_bit() {
    // Clusters (small islands solved one task through all passes) are a scheduling choice:
    // on and off must give the same bits on both paths, on one and two threads, with the
    // large islands shared, overflow joints inside clusters, sleeping islands and the chain
    // solve (whose islands stay shared).
    let mut scenes: Vec<(String, Scene)> = builtin_scenes()
        .iter()
        .map(|(name, _)| (name.to_string(), Scene::builtin(name).unwrap()))
        .collect();
    scenes.push(("chains and grid".into(), chain_and_grid()));
    let frames = 30;
    for (name, scene) in &scenes {
        for path in [SolverPath::Wide, SolverPath::Scalar] {
            for threads in [1, 2] {
                for (sleeping, chain_solve) in [(false, false), (true, false), (false, true)] {
                    let settings = Settings {
                        solver_path: path,
                        threads,
                        sleeping,
                        chain_solve,
                        ..scene.settings()
                    };
                    let mut worlds = [true, false].map(|clusters| {
                        let mut w = scene.build_with(settings).unwrap();
                        w.set_island_clusters(clusters);
                        for _ in 0..frames {
                            w.step(scene.frame_dt()).unwrap();
                        }
                        w
                    });
                    let what = format!("{name} {path:?} {threads} threads {settings:?}");
                    assert!(bits(&worlds[0]) == bits(&worlds[1]), "{what}");
                    if !sleeping && !chain_solve && worlds[0].schedule().hubs.is_empty() {
                        assert!(!worlds[0].schedule().clusters.is_empty(), "{what}");
                        assert!(worlds[1].schedule().clusters.is_empty(), "{what}");
                    }
                }
            }
        }
    }
    // The mixed scene exercises both parts at once: six small chains in clusters, the 30 x
    // 30 grid (1,740 joints) in the shared colours.
    let mut world = chain_and_grid().build().unwrap();
    let s = world.schedule();
    assert_eq!(s.clusters.iter().map(|c| c.joints).sum::<usize>(), 600);
    let shared: usize = s.colors.iter().map(|r| r.len()).sum();
    assert!(shared > 0);

    // Overflow joints inside clusters: two hubs of 30 hinges to one body each.
    for path in [SolverPath::Wide, SolverPath::Scalar] {
        for threads in [1, 2] {
            let settings = Settings {
                solver_path: path,
                threads,
                ..Settings::default()
            };
            let mut worlds = [true, false].map(|clusters| {
                let mut w = hubs(settings, Spokes::Parallel);
                w.set_island_clusters(clusters);
                for _ in 0..60 {
                    w.step(1.0 / 60.0).unwrap();
                }
                w
            });
            let s = worlds[0].schedule();
            assert!(s.hubs.is_empty());
            assert_eq!(s.clusters.len(), 1);
            assert_eq!(s.clusters[0].overflow.len(), 13);
            assert!(
                bits(&worlds[0]) == bits(&worlds[1]),
                "hubs {path:?} {threads}"
            );
            // The free hub falls (the test compares a run, not a rest state).
            let hub = worlds[0].body_id("hub1").unwrap();
            let y = worlds[0].bodies().positions()[hub.index()].y;
            assert!(y < -1.0, "{y}");
        }
    }
}

#[test]
fn the_hub_solve_gives_the_same_bits_on_both_paths_and_any_thread_count() {
    // Two 30-spoke hubs of ball joints, each solved directly (scalar on both paths), with
    // and without the chain solve and sleeping; and of limited hinges, whose limits move in
    // and out of the hub solve's system.
    let cases = [
        (Spokes::Ball, false, false, false),
        (Spokes::Ball, true, false, false),
        (Spokes::Ball, false, true, false),
        (Spokes::Limited, false, false, false),
        (Spokes::Limited, false, false, true),
    ];
    for (spokes, chain_solve, sleeping, speculative_limits) in cases {
        let base = Settings {
            chain_solve,
            sleeping,
            speculative_limits,
            ..Settings::default()
        };
        let paths = [
            (SolverPath::Wide, 1),
            (SolverPath::Scalar, 1),
            (SolverPath::Wide, 2),
        ];
        let worlds: Vec<World> = on_paths(base, &paths)
            .map(|settings| {
                let mut w = hubs(settings, spokes);
                for _ in 0..60 {
                    w.step(1.0 / 60.0).unwrap();
                }
                w
            })
            .collect();
        // Both hubs at the start (with sleeping on, the hanging one may sleep later).
        let mut fresh = hubs(*worlds[0].settings(), spokes);
        let found: Vec<(u32, usize)> = (fresh.schedule().hubs.iter())
            .map(|h| (h.body, h.joints.len()))
            .collect();
        assert_eq!(found, vec![(1, 31), (32, 30)]);
        for w in &worlds[1..] {
            assert!(
                bits(w) == bits(&worlds[0]),
                "chain solve {chain_solve}, sleeping {sleeping}"
            );
        }
        if spokes == Spokes::Limited {
            // The limits were reached (column 7: the hinge angle, rad).
            let reached = (worlds[0].constraint_data().iter())
                .filter(|r| r[7].abs() > 0.29)
                .count();
            assert!(reached > 0, "no limit reached");
        }
    }
}

/// `n` light arms (0.01 kg) hinged at pivots, each carrying a 10 kg box (welded, or on a ball
/// joint every third), released from 30 to 60 degrees: each arm a carrier, a hub of its two
/// joints (`schedule::hubs::Light::Carrier`).
fn carriers(n: usize) -> Scene {
    let mut text = String::from("[world]\ndt = 0.016666667\n");
    for k in 0..n {
        let angle = (30.0 + 30.0 * k as f32 / n as f32).to_radians();
        let (s, c) = angle.sin_cos();
        let q = [0.0, 0.0, (angle / 2.0).sin(), (angle / 2.0).cos()];
        let x = 2.0 * k as f32;
        let kind = if k % 3 == 2 { "spherical" } else { "fixed" };
        text += &format!(
            "[[body]]\nname = \"pivot{k}\"\nkind = \"static\"\nposition = [{x}, 0, 0]\n\
             [[body]]\nname = \"arm{k}\"\nposition = [{}, {}, 0]\nrotation = {q:?}\n\
             mass = 0.01\nbox = [0.05, 0.05, 0.05]\n\
             [[body]]\nname = \"box{k}\"\nposition = [{}, {}, 0]\nrotation = {q:?}\n\
             mass = 10.0\nbox = [0.1, 0.05, 0.05]\n\
             [[joint]]\nname = \"hinge{k}\"\nkind = \"revolute\"\nbody_a = \"pivot{k}\"\n\
             body_b = \"arm{k}\"\nanchor_b = [0, 0.5, 0]\naxis = [0, 0, 1]\n\
             [[joint]]\nname = \"link{k}\"\nkind = \"{kind}\"\nbody_a = \"arm{k}\"\n\
             body_b = \"box{k}\"\nanchor_a = [0, -0.25, 0]\nanchor_b = [0, 0.25, 0]\n",
            x + 0.5 * s,
            -0.5 * c,
            x + s,
            -c,
        );
    }
    Scene::from_toml_str(&text, "carriers").unwrap()
}

#[test]
fn carriers_give_the_same_bits_on_both_paths_and_any_thread_count() {
    let scene = carriers(24);
    let paths = [
        (SolverPath::Wide, 1),
        (SolverPath::Scalar, 1),
        (SolverPath::Wide, 2),
        (SolverPath::Wide, 4),
    ];
    let mut worlds: Vec<World> = on_paths(Settings::default(), &paths)
        .map(|settings| run(&scene, settings, 60))
        .collect();
    let found: Vec<usize> = (worlds[0].schedule().hubs.iter())
        .map(|h| h.joints.len())
        .collect();
    assert_eq!(found, vec![2; 24], "every arm a carrier");
    for w in &worlds[1..] {
        assert!(bits(w) == bits(&worlds[0]), "{:?}", w.settings().threads);
    }
    // The pairs hold: a rigid pendulum's anchors stay put.
    let worst = (worlds[0].constraint_data().iter())
        .map(|r| r[3])
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "{worst}");
}

/// The six joint signatures (the four types; hinges and sliders with a limit or without) as
/// scene-file fragments: kind, then axis and limit.
fn signatures() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for (kind, axis, limit) in [
        (
            "revolute",
            "axis = [0.0, 0.0, 1.0]\n",
            "limit = [-0.3, 0.3]\n",
        ),
        (
            "prismatic",
            "axis = [0.0, 1.0, 0.0]\n",
            "limit = [-0.05, 0.02]\n",
        ),
        ("spherical", "", ""),
        ("fixed", "", ""),
    ] {
        out.push((kind, axis));
        if !limit.is_empty() {
            // Leaked: a test's few bytes, to keep the fragments `&'static str`.
            out.push((kind, Box::leak(format!("{axis}{limit}").into_boxed_str())));
        }
    }
    out
}

/// Joints `first..first + n` of a straight run of bodies along x from `origin`, each joint
/// of signature `sig`, the first one to the static `ground`.
fn run_of_joints(text: &mut String, name: &str, origin: [f32; 3], n: usize, sig: (&str, &str)) {
    let (kind, extra) = sig;
    for k in 0..n {
        let [x, y, z] = origin;
        *text += &format!(
            "\n[[body]]\nname = \"{name}{k}\"\nposition = [{}, {y}, {z}]\nmass = 1.0\nbox = [0.04, 0.01, 0.01]\n",
            x + 0.1 * (k + 1) as f32
        );
        let parent = if k == 0 {
            "ground".to_string()
        } else {
            format!("{name}{}", k - 1)
        };
        let anchor_a = if k == 0 {
            format!("[{}, {y}, {z}]", x + 0.05)
        } else {
            "[0.05, 0.0, 0.0]".to_string()
        };
        *text += &format!(
            "\n[[joint]]\nname = \"{name}j{k}\"\nkind = \"{kind}\"\nbody_a = \"{parent}\"\nbody_b = \"{name}{k}\"\nanchor_a = {anchor_a}\nanchor_b = [-0.05, 0.0, 0.0]\n{extra}"
        );
    }
}

/// Islands of equal size and different joint signatures share projection groups only by
/// signature: a limited hinge and a limited slider (the same row slots, different rows) once
/// shared one, and the wide path projected the slider as a hinge, holding its body in place
/// while its velocity grew (the scalar path, one lane per group, was right).
#[test]
fn islands_of_every_signature_pair_project_as_on_the_scalar_path() {
    for n in 1..=3 {
        for copies in [1, 2] {
            let mut text = String::from(
                "[world]\ndt = 0.016666667\n\n[[body]]\nname = \"ground\"\nkind = \"static\"\n",
            );
            for (s, sig) in signatures().into_iter().enumerate() {
                for c in 0..copies {
                    let origin = [0.0, -(s as f32), c as f32];
                    run_of_joints(&mut text, &format!("s{s}c{c}b"), origin, n, sig);
                }
            }
            let scene = Scene::from_toml_str(&text, "every signature").unwrap();
            assert!(
                paths_agree(&scene, scene.settings(), 30),
                "{n} joints per island, {copies} of each signature: states differ"
            );
        }
    }
    // The physics the bug broke: a limited slider alone beside a limited hinge falls to its
    // stop (0.05 m below its start, less its small stop error).
    let mut text = String::from(
        "[world]\ndt = 0.016666667\n\n[[body]]\nname = \"ground\"\nkind = \"static\"\n",
    );
    let sigs = signatures();
    run_of_joints(&mut text, "arm", [0.0, 0.0, 0.0], 1, sigs[1]);
    run_of_joints(&mut text, "slider", [5.0, 0.0, 0.0], 1, sigs[3]);
    assert_eq!(sigs[3].0, "prismatic");
    let scene = Scene::from_toml_str(&text, "hinge and slider").unwrap();
    let world = run(&scene, scene.settings(), 60);
    let y = world.bodies().positions()[2].y;
    assert!(
        (y + 0.05).abs() < 1e-3,
        "slider at y = {y}, its stop at -0.05 m"
    );
}

/// The same in one island too large for serial projection, projected by colours: each
/// colour's lanes hold joints of one signature.
#[test]
fn a_colour_projected_island_of_mixed_signatures_agrees_bit_for_bit() {
    let sigs = signatures();
    let mut text = String::from(
        "[world]\ndt = 0.016666667\n\n[[body]]\nname = \"ground\"\nkind = \"static\"\n",
    );
    // 4,200 joints, more than `SERIAL_PROJECTION_MAX_JOINTS` (4,096), their signatures cycling.
    let joints = 4200;
    let mut parent = "ground".to_string();
    for k in 0..joints {
        let (kind, extra) = sigs[k % sigs.len()];
        text += &format!(
            "\n[[body]]\nname = \"b{k}\"\nposition = [{}, 0.0, 0.0]\nmass = 1.0\nbox = [0.04, 0.01, 0.01]\n",
            0.1 * (k + 1) as f32
        );
        // The ground sits at the origin, each body 0.1 m after its parent: the anchor halfway.
        text += &format!(
            "\n[[joint]]\nname = \"j{k}\"\nkind = \"{kind}\"\nbody_a = \"{parent}\"\nbody_b = \"b{k}\"\nanchor_a = [0.05, 0.0, 0.0]\nanchor_b = [-0.05, 0.0, 0.0]\n{extra}"
        );
        parent = format!("b{k}");
    }
    let scene = Scene::from_toml_str(&text, "one long mixed chain").unwrap();
    assert!(paths_agree(&scene, scene.settings(), 3), "states differ");
}

mod random_scenes {
    use super::*;
    use proptest::prelude::*;

    /// One island: joint `k` joins body `k` (after the island's first) to `parents[k]`, an
    /// earlier body of the island or the ground (`None`), with signature `sigs[k]`.
    #[derive(Debug, Clone)]
    struct Island {
        parents: Vec<Option<usize>>,
        sigs: Vec<usize>,
    }

    fn island() -> impl Strategy<Value = Island> {
        (1usize..=8).prop_flat_map(|n| {
            let parents = (0..n)
                .map(|k| {
                    if k == 0 {
                        Just(None).boxed()
                    } else {
                        // Mostly a chain, sometimes a branch (five or more make a hub).
                        prop_oneof![3 => Just(Some(k - 1)), 1 => (0..k).prop_map(Some)].boxed()
                    }
                })
                .collect::<Vec<_>>();
            (parents, proptest::collection::vec(0..signatures().len(), n))
                .prop_map(|(parents, sigs)| Island { parents, sigs })
        })
    }

    fn scene_text(islands: &[Island]) -> String {
        let sigs = signatures();
        let mut text = String::from(
            "[world]\ndt = 0.016666667\n\n[[body]]\nname = \"ground\"\nkind = \"static\"\n",
        );
        for (i, island) in islands.iter().enumerate() {
            for (k, (&parent, &sig)) in island.parents.iter().zip(&island.sigs).enumerate() {
                // Body k at (0.1 (k + 1), -i, 0); its joint's anchor halfway to the parent.
                let (x, y) = (0.1 * (k + 1) as f32, -(i as f32));
                text += &format!(
                    "\n[[body]]\nname = \"i{i}b{k}\"\nposition = [{x}, {y}, 0.0]\nmass = 1.0\nbox = [0.04, 0.01, 0.01]\n"
                );
                let (parent_name, parent_position) = match parent {
                    None => ("ground".to_string(), [0.0, 0.0]),
                    Some(p) => (format!("i{i}b{p}"), [0.1 * (p + 1) as f32, y]),
                };
                // Anchors at the midpoint, each in its body's frame (rotations are identity).
                let mid = [
                    (x + parent_position[0]) / 2.0,
                    (y + parent_position[1]) / 2.0,
                ];
                let (kind, extra) = sigs[sig];
                text += &format!(
                    "\n[[joint]]\nname = \"i{i}j{k}\"\nkind = \"{kind}\"\nbody_a = \"{parent_name}\"\nbody_b = \"i{i}b{k}\"\nanchor_a = [{}, {}, 0.0]\nanchor_b = [{}, {}, 0.0]\n{extra}",
                    mid[0] - parent_position[0],
                    mid[1] - parent_position[1],
                    mid[0] - x,
                    mid[1] - y,
                );
            }
        }
        text
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Any mix of joint types, limits, island sizes, chains, branches and hubs gives the
        /// same bits on both paths, with any solver settings.
        #[test]
        fn random_scenes_give_the_same_bits_on_both_paths(
            islands in proptest::collection::vec(island(), 1..10),
            velocity_iterations in 1u32..=8,
            position_iterations in 0u32..=3,
            chain_solve in any::<bool>(),
            speculative_limits in any::<bool>(),
        ) {
            let text = scene_text(&islands);
            let scene = Scene::from_toml_str(&text, "random")
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let settings = Settings {
                velocity_iterations,
                position_iterations,
                chain_solve,
                speculative_limits,
                ..scene.settings()
            };
            prop_assert!(paths_agree(&scene, settings, 10), "states differ:\n{text}");
        }
    }
}
