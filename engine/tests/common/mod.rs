//! Helpers the engine's integration tests share.
#![allow(dead_code)] // each test binary uses some of them

use lavender_engine::{Scene, Settings, World};

/// `scene` built with `settings`, stepped `frames` frames of the scene's `dt`.
pub fn run(scene: &Scene, settings: Settings, frames: usize) -> World {
    let mut world = scene.build_with(settings).unwrap();
    for _ in 0..frames {
        world.step(scene.frame_dt()).unwrap();
    }
    world
}

/// The largest anchor error norm over the joints (column 3), m.
pub fn max_anchor_error(w: &World) -> f32 {
    w.constraint_data().iter().map(|r| r[3]).fold(0.0, f32::max)
}
