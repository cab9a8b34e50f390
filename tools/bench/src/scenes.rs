//! The benchmark scenes, built straight into a [`World`].
//!
//! | name | what | joints |
//! |---|---|---|
//! | `chain` | 100 chains of 100 revolute links (0.1 m, 0.1 kg) released horizontally | 10,000 |
//! | `grid` | 100 x 100 spherical grid linked right and down, top row static (Box2D v3 `joint_grid` in 3D) | 19,701 |
//! | `fixed-stack` | 500 cantilevers of ten 1 kg boxes welded end to end (the shipped `fixed-stack`) | 5,000 |
//! | `mixed` | 100 groups: a limited revolute chain (limits hit as it falls), a spherical chain, a prismatic slider running into its stop, a welded cantilever | 4,600 |
//! | `hubs` (not in the default run) | 100 light hubs, each the shipped `hub` scene: a 1 kg hub (a 0.1 m cube) pinned at its centre, twenty bobs on ball joints 0.8 m out, one of them heavier | 2,100 |

use crate::{BenchError, Result};
use lavender_engine::{
    BodyDesc, ChainSpec, GridSpec, JointDesc, JointKind, Quat, Settings, Vec3, World,
};

/// A benchmark scene and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchScene {
    /// `chains` horizontal revolute chains of `links` links.
    Chain {
        /// Number of chains.
        chains: u32,
        /// Links per chain.
        links: u32,
    },
    /// A `side x side` spherical grid.
    Grid {
        /// Bodies per side.
        side: u32,
    },
    /// `stacks` welded cantilevers of `boxes` boxes.
    FixedStack {
        /// Number of cantilevers.
        stacks: u32,
        /// Boxes per cantilever.
        boxes: u32,
    },
    /// `groups` groups of limited revolute, spherical, prismatic and fixed joints.
    Mixed {
        /// Number of groups (46 joints each).
        groups: u32,
    },
    /// `hubs` light hubs of twenty spokes (the shipped `hub` scene, side by side).
    Hubs {
        /// Number of hubs (21 joints each).
        hubs: u32,
    },
}

/// The default scenes, in report order.
pub const SCENE_NAMES: [&str; 4] = ["chain", "grid", "fixed-stack", "mixed"];

impl BenchScene {
    /// The full-size scene of this name.
    pub fn by_name(name: &str) -> Result<BenchScene> {
        Ok(match name {
            "chain" => BenchScene::Chain {
                chains: 100,
                links: 100,
            },
            "grid" => BenchScene::Grid { side: 100 },
            "fixed-stack" => BenchScene::FixedStack {
                stacks: 500,
                boxes: 10,
            },
            "mixed" => BenchScene::Mixed { groups: 100 },
            "hubs" => BenchScene::Hubs { hubs: 100 },
            other => return Err(BenchError::UnknownScene(other.to_string())),
        })
    }

    /// The chain scene with `joints` joints (chains of 100 links; at least one chain).
    pub fn chain_with_joints(joints: u32) -> BenchScene {
        BenchScene::Chain {
            chains: (joints / 100).max(1),
            links: 100,
        }
    }

    /// The scene's name.
    pub fn name(&self) -> &'static str {
        match self {
            BenchScene::Chain { .. } => "chain",
            BenchScene::Grid { .. } => "grid",
            BenchScene::FixedStack { .. } => "fixed-stack",
            BenchScene::Mixed { .. } => "mixed",
            BenchScene::Hubs { .. } => "hubs",
        }
    }

    /// Builds the scene into a new world with `settings`.
    pub fn build(&self, settings: Settings) -> Result<World> {
        let mut world = World::new(settings)?;
        match *self {
            BenchScene::Chain { chains, links } => {
                for c in 0..chains {
                    // Side by side along z; nothing collides, the spacing only keeps them apart.
                    let origin = Vec3::new(0.0, 0.0, 0.1 * c as f32);
                    ChainSpec::new(format!("c{c}"), links, origin).build_into(&mut world)?;
                }
            }
            BenchScene::Grid { side } => GridSpec {
                name: "g".into(),
                rows: side,
                cols: side,
                spacing: 0.1,
                origin: [0.0; 3],
                mass: 0.1,
                joint: JointKind::Spherical,
            }
            .build_into(&mut world)?,
            BenchScene::FixedStack { stacks, boxes } => {
                for s in 0..stacks {
                    cantilever(&mut world, &format!("s{s}"), boxes, 0.5 * s as f32)?;
                }
            }
            BenchScene::Mixed { groups } => {
                for g in 0..groups {
                    mixed_group(&mut world, g, 1.0 * g as f32)?;
                }
            }
            BenchScene::Hubs { hubs } => {
                for h in 0..hubs {
                    light_hub(&mut world, h, 2.0 * h as f32)?;
                }
            }
        }
        world.sync();
        Ok(world)
    }
}

/// `boxes` 1 kg cubes of 0.2 m welded end to end along +x from a static wall at `z`.
fn cantilever(world: &mut World, name: &str, boxes: u32, z: f32) -> Result<()> {
    let wall = world.add_body(BodyDesc::fixed(format!("{name}.wall")).position(Vec3::Z * z))?;
    let mut previous = wall;
    for i in 0..boxes {
        let b = world.add_body(
            BodyDesc::dynamic(format!("{name}.box{i}"))
                .position(Vec3::new(0.1 + 0.2 * i as f32, 0.0, z))
                .solid_box(1.0, Vec3::splat(0.1)),
        )?;
        let anchor_a = if i == 0 { Vec3::ZERO } else { Vec3::X * 0.1 };
        world.add_joint(
            JointDesc::fixed(format!("{name}.weld{i}"), previous, b)
                .anchors(anchor_a, -Vec3::X * 0.1),
        )?;
        previous = b;
    }
    Ok(())
}

/// One light hub at depth `z` (the shipped `hub` scene): a 1 kg hub with a 0.1 m cube's
/// inertia pinned at its centre, twenty bobs of 0.2 kg (the first 1 kg) on ball joints 0.8 m
/// out: 21 joints.
fn light_hub(world: &mut World, h: u32, z: f32) -> Result<()> {
    let centre = Vec3::Z * z;
    let wall = world.add_body(BodyDesc::fixed(format!("h{h}.wall")).position(centre))?;
    let hub = world.add_body(
        BodyDesc::dynamic(format!("h{h}.hub"))
            .position(centre)
            .solid_box(1.0, Vec3::splat(0.05)),
    )?;
    world.add_joint(JointDesc::spherical(format!("h{h}.hang"), wall, hub))?;
    for k in 0..20 {
        let angle = k as f32 * std::f32::consts::TAU / 20.0;
        let offset = Vec3::new(angle.cos() * 0.8, -0.4, angle.sin() * 0.8);
        let bob = world.add_body(
            BodyDesc::dynamic(format!("h{h}.bob{k}"))
                .position(centre + offset)
                .solid_box(if k == 0 { 1.0 } else { 0.2 }, Vec3::splat(0.05)),
        )?;
        world.add_joint(
            JointDesc::spherical(format!("h{h}.spoke{k}"), hub, bob).anchors(offset, Vec3::ZERO),
        )?;
    }
    Ok(())
}

/// One group of the mixed scene at depth `z`: 46 joints.
fn mixed_group(world: &mut World, g: u32, z: f32) -> Result<()> {
    // A revolute chain whose hinges stop at +-0.2 rad: released horizontally, every hinge
    // runs into its limit within the first second.
    let mut limited = ChainSpec::new(format!("m{g}.lim"), 20, Vec3::new(0.0, 0.0, z));
    limited.limit = Some([-0.2, 0.2]);
    limited.build_into(world)?;
    // A spherical chain.
    let mut ball = ChainSpec::new(format!("m{g}.ball"), 20, Vec3::new(0.0, 0.0, z + 0.3));
    ball.joint = JointKind::Spherical;
    ball.build_into(world)?;
    // A block sliding down a 30 degree rail into its 0.5 m stop (the shipped prismatic-slider).
    let tilt = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_6);
    let rail = world.add_body(
        BodyDesc::fixed(format!("m{g}.rail"))
            .position(Vec3::new(-2.0, 0.0, z + 0.6))
            .rotation(tilt),
    )?;
    let block = world.add_body(
        BodyDesc::dynamic(format!("m{g}.block"))
            .position(Vec3::new(-2.0, 0.0, z + 0.6))
            .rotation(tilt)
            .solid_box(1.0, Vec3::new(0.1, 0.05, 0.05)),
    )?;
    world.add_joint(JointDesc::prismatic(format!("m{g}.slide"), rail, block).limit(0.0, 0.5))?;
    // A welded cantilever of five boxes.
    cantilever(world, &format!("m{g}.weld"), 5, z + 0.9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_size_scenes_have_the_documented_joint_counts() {
        let joints = |name| {
            BenchScene::by_name(name)
                .unwrap()
                .build(Settings::default())
                .unwrap()
                .joint_count()
        };
        assert_eq!(joints("chain"), 10_000);
        assert_eq!(joints("grid"), 19_701);
        assert_eq!(joints("fixed-stack"), 5_000);
        assert_eq!(joints("mixed"), 4_600);
        assert_eq!(joints("hubs"), 2_100);
    }
}
