//! Every shipped scene loads, round-trips through TOML, and runs within its stated bounds.

use lavender::engine::{builtin_scenes, ResidualMax, Scene};

#[test]
fn shipped_scenes_run_within_their_bounds() {
    // (scene, max anchor error over 2 s in m, max angular error in rad): measured values
    // with about 50 % headroom, so a regression in the solver trips them.
    let bounds = [
        ("pendulum", 1e-6, 1e-6),
        ("chain", 2e-2, 1e-6),
        ("grid", 1e-3, 1e-6),
        ("limited-revolute", 1e-6, 1e-6),
        ("fixed-stack", 8e-3, 8e-2),
        ("prismatic-slider", 1e-6, 1e-5),
        // Swinging on the hub solve: measured 6.1e-7 m (3.3e-5 m without curvature offsets;
        // row by row: non-finite within 1 s).
        ("hub", 2e-6, 1e-6),
    ];
    let names: Vec<&str> = builtin_scenes().iter().map(|(n, _)| *n).collect();
    assert_eq!(names.len(), bounds.len());
    for (name, anchor, angular) in bounds {
        assert!(names.contains(&name));
        let scene = Scene::builtin(name).unwrap();
        let mut world = scene.build().unwrap();
        let mut max = ResidualMax::default();
        for _ in 0..120 {
            world
                .step_observed(scene.frame_dt(), |w, _| max.fold(w.constraint_data()))
                .unwrap();
        }
        assert!(
            max.anchor_error < anchor,
            "{name}: anchor {}",
            max.anchor_error
        );
        assert!(
            max.angular_error < angular,
            "{name}: angular {}",
            max.angular_error
        );
    }
}

#[test]
fn scenes_round_trip_through_toml() {
    for (name, _) in builtin_scenes() {
        let scene = Scene::builtin(name).unwrap();
        let again = Scene::from_toml_str(&scene.to_toml_string(), name).unwrap();
        assert_eq!(scene, again, "{name}");
        assert_eq!(scene.hash(), again.hash());
    }
}

/// The scene hash is that of what the scene builds: its description and `[world]` settings
/// leave it alone (so `diff` compares runs of one scene with settings from the file or the
/// command line), its bodies and joints do not.
#[test]
fn the_scene_hash_covers_bodies_and_joints_not_settings_or_description() {
    let scene = Scene::builtin("chain").unwrap();
    let mut settings = scene.clone();
    settings.description = "my chain".into();
    settings.world.velocity_iterations = Some(9);
    settings.world.gravity = Some([0.0, -1.62, 0.0]);
    assert_eq!(settings.hash(), scene.hash());
    let mut longer = scene.clone();
    longer.chains[0].links += 1;
    assert_ne!(longer.hash(), scene.hash());
    let pendulum = Scene::builtin("pendulum").unwrap();
    let mut moved = pendulum.clone();
    moved.bodies[1].position[0] += 0.5;
    assert_ne!(moved.hash(), pendulum.hash());
}

#[test]
fn shipped_files_in_data_match_the_embedded_scenes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/scenes");
    for (name, _) in builtin_scenes() {
        let from_file = Scene::load(dir.join(format!("{name}.toml"))).unwrap();
        assert_eq!(from_file, Scene::builtin(name).unwrap());
    }
}

/// The recording benchmark's scene, shipped as a file (`cargo bench --bench record` loads
/// it; QA 2026-12-07: the README's 0.86 MB per substep could not be reproduced with `lavender
/// run`): 100 chains of 100 links.
#[test]
fn the_benchmark_chain_scene_file_builds_100_chains_of_100_links() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/benchmarks/chains-100x100.toml");
    let world = Scene::load(path).unwrap().build().unwrap();
    assert_eq!((world.body_count(), world.joint_count()), (10_100, 10_000));
}
