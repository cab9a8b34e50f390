//! The same scene and settings give bitwise-identical results, run after run.

use crate::builtin;
use lavender::engine::World;

fn final_state(name: &str, steps: usize) -> (World, u64) {
    let (scene, mut world) = builtin(name);
    for _ in 0..steps {
        world.step(scene.frame_dt()).unwrap();
    }
    let hash = world.state_hash();
    (world, hash)
}

#[test]
fn repeated_runs_are_bitwise_identical() {
    for name in ["chain", "grid", "fixed-stack", "limited-revolute"] {
        let (a, ha) = final_state(name, 60);
        let (b, hb) = final_state(name, 60);
        assert_eq!(ha, hb, "{name}: state hashes differ");
        let bits = |w: &World| -> Vec<u32> {
            let bodies = w.bodies();
            bodies
                .positions()
                .iter()
                .flat_map(|p| p.to_array())
                .chain(bodies.rotations().iter().flat_map(|q| q.to_array()))
                .chain(w.constraint_data_flat().iter().copied())
                .map(f32::to_bits)
                .collect()
        };
        assert_eq!(bits(&a), bits(&b), "{name}: poses or diagnostics differ");
    }
}

#[test]
fn state_hash_sees_a_one_ulp_change() {
    let (mut world, h) = final_state("pendulum", 10);
    let id = world.body_id("bob").unwrap();
    let (p, q) = world.body_pose(id).unwrap();
    let nudged = lavender::engine::Vec3::new(f32::from_bits(p.x.to_bits() + 1), p.y, p.z);
    world.set_body_pose(id, nudged, q).unwrap();
    assert_ne!(world.state_hash(), h);
}
