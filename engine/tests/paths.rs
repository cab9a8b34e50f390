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
