//! Cross-crate scenarios, one module per theme. Tolerances are stated next to each assert.

mod bad_input;
mod determinism;
mod diagnostics;
mod docs;
mod dynamics;
mod golden;
mod limits;
mod recording;
mod scenes;
mod tutorial;

use lavender::engine::{Scene, World};

/// Runs `scene` for `seconds` at its frame dt, calling `each` after every substep.
pub fn run_observed(
    world: &mut World,
    dt: f32,
    seconds: f32,
    mut each: impl FnMut(&World, lavender::engine::SubstepInfo),
) {
    let steps = (seconds / dt).round() as usize;
    for _ in 0..steps {
        world.step_observed(dt, &mut each).expect("step");
    }
}

/// A shipped scene's world.
pub fn builtin(name: &str) -> (Scene, World) {
    let scene = Scene::builtin(name).expect("shipped scene parses");
    let world = scene.build().expect("shipped scene builds");
    (scene, world)
}
