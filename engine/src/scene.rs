//! Scenes as data: the TOML scene format, the shipped scenes, and generators for chains and
//! grids.
//!
//! A scene file has an optional `[world]` table, any number of `[[body]]` and `[[joint]]`
//! tables, and generator tables `[[chain]]` and `[[grid]]` that expand into bodies and joints.
//! Unknown fields are errors. See `data/scenes/*.toml` and the README for the full format.
//!
//! ```
//! let scene = lavender_engine::Scene::from_toml_str(r#"
//! [world]
//! dt = 0.016666667
//!
//! [[body]]
//! name = "ground"
//! kind = "static"
//!
//! [[body]]
//! name = "bob"
//! position = [1.0, 0.0, 0.0]
//! mass = 1.0
//! box = [0.05, 0.05, 0.05]
//!
//! [[joint]]
//! name = "hinge"
//! kind = "revolute"
//! body_a = "ground"
//! body_b = "bob"
//! anchor_b = [-1.0, 0.0, 0.0]
//! axis = [0.0, 0.0, 1.0]
//! "#, "<doc>").unwrap();
//! let mut world = scene.build().unwrap();
//! world.step(scene.frame_dt()).unwrap();
//! assert!(world.constraint_data()[0][3] < 1e-3);
//! ```

use crate::bodies::{box_inertia, BodyDesc, BodyId, BodyKind};
use crate::error::{EngineError, Result};
use crate::joints::{JointDesc, JointKind};
use crate::settings::Settings;
use crate::world::World;
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// A scene: world settings, run length, bodies, joints and generators.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// One line saying what the scene shows.
    #[serde(default)]
    pub description: String,
    /// Settings and run length.
    #[serde(default)]
    pub world: SceneWorld,
    /// Bodies, in order.
    #[serde(default, rename = "body")]
    pub bodies: Vec<SceneBody>,
    /// Joints, in order, after the bodies.
    #[serde(default, rename = "joint")]
    pub joints: Vec<SceneJoint>,
    /// Chain generators, expanded after the explicit joints.
    #[serde(default, rename = "chain")]
    pub chains: Vec<ChainSpec>,
    /// Grid generators, expanded after the chains.
    #[serde(default, rename = "grid")]
    pub grids: Vec<GridSpec>,
}

/// The `[world]` table: settings (defaults as [`Settings::default`]) and run length.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneWorld {
    /// Gravity, m/s^2 (default `[0, -9.81, 0]`).
    pub gravity: Option<[f32; 3]>,
    /// Frame time step, s (default 1/60).
    pub dt: Option<f32>,
    /// Run length, s (default 5).
    pub duration: Option<f32>,
    /// Substep cap, s (default 1/240).
    pub max_substep: Option<f32>,
    /// Velocity passes per substep (default 8).
    pub velocity_iterations: Option<u32>,
    /// Split-impulse bias passes per substep, at most `velocity_iterations` (default: one per
    /// velocity pass; see [`Settings::bias_iterations`]).
    pub bias_iterations: Option<u32>,
    /// Projection passes per substep (default 2).
    pub position_iterations: Option<u32>,
    /// Solve chains of joints directly (default false; see [`Settings::chain_solve`]).
    pub chain_solve: Option<bool>,
    /// Error-reduction factor (default 0.2).
    pub error_reduction: Option<f32>,
    /// Projection factor (default 1).
    pub projection_factor: Option<f32>,
    /// Warm starting (default true).
    pub warm_starting: Option<bool>,
    /// Let islands at rest sleep (default false; see [`Settings::sleeping`]).
    pub sleeping: Option<bool>,
    /// Rest threshold on a body's linear speed, m/s (default 0.05).
    pub sleep_linear_speed: Option<f32>,
    /// Rest threshold on a body's angular speed, rad/s (default 0.05).
    pub sleep_angular_speed: Option<f32>,
    /// Rest time before an island sleeps, s (default 0.5).
    pub time_to_sleep: Option<f32>,
}

/// A `[[body]]` table.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneBody {
    /// Unique name.
    pub name: String,
    /// `"dynamic"` (default), `"static"` or `"kinematic"`.
    #[serde(default)]
    pub kind: BodyKind,
    /// Centre of mass, m.
    #[serde(default)]
    pub position: [f32; 3],
    /// Unit quaternion `[x, y, z, w]` (default identity).
    pub rotation: Option<[f32; 4]>,
    /// Linear velocity, m/s.
    #[serde(default)]
    pub linear_velocity: [f32; 3],
    /// Angular velocity, rad/s.
    #[serde(default)]
    pub angular_velocity: [f32; 3],
    /// Mass, kg (dynamic bodies; default 1).
    pub mass: Option<f32>,
    /// Principal moments of inertia, kg m^2 (or give `box`).
    pub inertia: Option<[f32; 3]>,
    /// Half extents of a solid box, m, from which the inertia follows.
    #[serde(rename = "box")]
    pub box_half_extents: Option<[f32; 3]>,
}

/// A `[[joint]]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneJoint {
    /// Unique name.
    pub name: String,
    /// `"revolute"`, `"spherical"`, `"fixed"` or `"prismatic"`.
    pub kind: JointKind,
    /// Name of body A.
    pub body_a: String,
    /// Name of body B.
    pub body_b: String,
    /// Anchor in A's frame, m.
    #[serde(default)]
    pub anchor_a: [f32; 3],
    /// Anchor in B's frame, m.
    #[serde(default)]
    pub anchor_b: [f32; 3],
    /// Axis for both bodies (revolute default z, prismatic default x).
    pub axis: Option<[f32; 3]>,
    /// Axis in A's frame (overrides `axis`).
    pub axis_a: Option<[f32; 3]>,
    /// Axis in B's frame (overrides `axis`).
    pub axis_b: Option<[f32; 3]>,
    /// Limit `[lo, hi]`, rad or m.
    pub limit: Option<[f32; 2]>,
    /// Reference relative orientation `q_A^-1 q_B`, `[x, y, z, w]`; default: initial poses.
    pub reference_rotation: Option<[f32; 4]>,
}

/// A `[[chain]]` generator: `links` boxes in a row, each hinged to the previous one, the first
/// hinged to a static anchor body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    /// Prefix of the generated names: `<name>.anchor`, `<name>.link<i>`, `<name>.joint<i>`.
    pub name: String,
    /// Number of links (>= 1).
    pub links: u32,
    /// `"revolute"` (default) or `"spherical"`.
    #[serde(default = "default_chain_joint")]
    pub joint: JointKind,
    /// Position of the first joint, m.
    #[serde(default)]
    pub origin: [f32; 3],
    /// Direction the chain is laid out in (normalised; default `[1, 0, 0]`, horizontal).
    #[serde(default = "default_direction")]
    pub direction: [f32; 3],
    /// Hinge axis (default `[0, 0, 1]`).
    #[serde(default = "default_axis")]
    pub axis: [f32; 3],
    /// Joint-to-joint length of a link, m (default 0.1).
    #[serde(default = "default_link_length")]
    pub link_length: f32,
    /// Half thickness of a link, m (default 0.01).
    #[serde(default = "default_link_half_width")]
    pub link_half_width: f32,
    /// Mass of a link, kg (default 0.1).
    #[serde(default = "default_link_mass")]
    pub link_mass: f32,
    /// Optional revolute limit for every joint, rad.
    pub limit: Option<[f32; 2]>,
}

/// A `[[grid]]` generator: `rows x cols` bodies in the x-y plane, spaced `spacing` apart, each
/// linked to its right and lower neighbour by spherical joints at the midpoint; the top row is
/// static (the Box2D v3 `joint_grid` layout in 3D).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridSpec {
    /// Prefix of the generated names: `<name>.r<i>c<k>`, joints `<name>.r<i>c<k>.right/down`.
    pub name: String,
    /// Number of rows (>= 2).
    pub rows: u32,
    /// Number of columns (>= 1).
    pub cols: u32,
    /// Distance between neighbours, m (default 0.1).
    #[serde(default = "default_link_length")]
    pub spacing: f32,
    /// Position of the top-left body, m.
    #[serde(default)]
    pub origin: [f32; 3],
    /// Mass of a body, kg (default 0.1).
    #[serde(default = "default_link_mass")]
    pub mass: f32,
    /// `"spherical"` (default) or `"revolute"` (about z).
    #[serde(default = "default_grid_joint")]
    pub joint: JointKind,
}

fn default_chain_joint() -> JointKind {
    JointKind::Revolute
}
fn default_grid_joint() -> JointKind {
    JointKind::Spherical
}
fn default_direction() -> [f32; 3] {
    [1.0, 0.0, 0.0]
}
fn default_axis() -> [f32; 3] {
    [0.0, 0.0, 1.0]
}
fn default_link_length() -> f32 {
    0.1
}
fn default_link_half_width() -> f32 {
    0.01
}
fn default_link_mass() -> f32 {
    0.1
}

impl ChainSpec {
    /// A horizontal revolute chain of `links` links named `name`, starting at `origin`.
    pub fn new(name: impl Into<String>, links: u32, origin: Vec3) -> Self {
        ChainSpec {
            name: name.into(),
            links,
            joint: JointKind::Revolute,
            origin: origin.to_array(),
            direction: default_direction(),
            axis: default_axis(),
            link_length: default_link_length(),
            link_half_width: default_link_half_width(),
            link_mass: default_link_mass(),
            limit: None,
        }
    }

    /// Adds the chain to `world`: a static anchor body, the links and their joints.
    pub fn build_into(&self, world: &mut World) -> Result<()> {
        let bad = |m: String| EngineError::Scene {
            origin: format!("chain `{}`", self.name),
            message: m,
        };
        if self.links == 0 {
            return Err(bad("links must be at least 1".into()));
        }
        if !matches!(self.joint, JointKind::Revolute | JointKind::Spherical) {
            return Err(bad(format!(
                "joint must be revolute or spherical, not {}",
                self.joint.name()
            )));
        }
        if !(self.link_length > 0.0 && self.link_half_width > 0.0) {
            return Err(bad("link_length and link_half_width must be > 0 m".into()));
        }
        let dir = Vec3::from(self.direction);
        if !dir.is_finite() || dir.length() < 1e-6 {
            return Err(bad("direction must be a finite non-zero vector".into()));
        }
        let dir = dir.normalize();
        let origin = Vec3::from(self.origin);
        let length = self.link_length;
        let half = (dir.abs() * (0.5 * length)).max(Vec3::splat(self.link_half_width));
        let anchor =
            world.add_body(BodyDesc::fixed(format!("{}.anchor", self.name)).position(origin))?;
        let mut previous = anchor;
        for i in 0..self.links {
            let centre = origin + dir * (length * (i as f32 + 0.5));
            let link = world.add_body(
                BodyDesc::dynamic(format!("{}.link{i}", self.name))
                    .position(centre)
                    .solid_box(self.link_mass, half),
            )?;
            let (anchor_a, anchor_b) = if i == 0 {
                (Vec3::ZERO, -dir * (0.5 * length))
            } else {
                (dir * (0.5 * length), -dir * (0.5 * length))
            };
            let name = format!("{}.joint{i}", self.name);
            let mut joint = match self.joint {
                JointKind::Spherical => JointDesc::spherical(name, previous, link),
                _ => JointDesc::revolute(name, previous, link).axis(Vec3::from(self.axis)),
            }
            .anchors(anchor_a, anchor_b);
            if let Some([lo, hi]) = self.limit {
                joint = joint.limit(lo, hi);
            }
            world.add_joint(joint)?;
            previous = link;
        }
        Ok(())
    }
}

impl GridSpec {
    /// Adds the grid to `world`.
    pub fn build_into(&self, world: &mut World) -> Result<()> {
        let bad = |m: String| EngineError::Scene {
            origin: format!("grid `{}`", self.name),
            message: m,
        };
        if self.rows < 2 || self.cols < 1 {
            return Err(bad("a grid needs rows >= 2 and cols >= 1".into()));
        }
        if !matches!(self.joint, JointKind::Revolute | JointKind::Spherical) {
            return Err(bad("joint must be spherical or revolute".into()));
        }
        let s = self.spacing;
        let origin = Vec3::from(self.origin);
        let half = Vec3::splat(0.25 * s);
        let mut ids = Vec::with_capacity((self.rows * self.cols) as usize);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let name = format!("{}.r{i}c{k}", self.name);
                let p = origin + Vec3::new(k as f32 * s, -(i as f32) * s, 0.0);
                let desc = if i == 0 {
                    BodyDesc::fixed(name)
                } else {
                    BodyDesc::dynamic(name).solid_box(self.mass, half)
                };
                ids.push(world.add_body(desc.position(p))?);
            }
        }
        let at = |i: u32, k: u32| ids[(i * self.cols + k) as usize];
        for i in 0..self.rows {
            for k in 0..self.cols {
                let here = at(i, k);
                let mut links = Vec::new();
                if k + 1 < self.cols && i > 0 {
                    links.push(("right", at(i, k + 1), Vec3::new(0.5 * s, 0.0, 0.0)));
                }
                if i + 1 < self.rows {
                    links.push(("down", at(i + 1, k), Vec3::new(0.0, -0.5 * s, 0.0)));
                }
                for (tag, other, offset) in links {
                    let name = format!("{}.r{i}c{k}.{tag}", self.name);
                    let joint = match self.joint {
                        JointKind::Revolute => JointDesc::revolute(name, here, other),
                        _ => JointDesc::spherical(name, here, other),
                    };
                    world.add_joint(joint.anchors(offset, -offset))?;
                }
            }
        }
        Ok(())
    }
}

fn vec3(v: [f32; 3]) -> Vec3 {
    Vec3::from(v)
}

fn quat(q: [f32; 4]) -> Quat {
    Quat::from_array(q)
}

impl Scene {
    /// Parses a scene from TOML text; `origin` names the source in error messages.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Scene> {
        toml::from_str(text).map_err(|e| EngineError::Scene {
            origin: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and parses a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| EngineError::Scene {
            origin: path.display().to_string(),
            message: format!("cannot read the file: {e}"),
        })?;
        Scene::from_toml_str(&text, &path.display().to_string())
    }

    /// A shipped scene by name (see [`builtin_scenes`]).
    pub fn builtin(name: &str) -> Result<Scene> {
        let (_, _, text) =
            BUILTIN
                .iter()
                .find(|(n, _, _)| *n == name)
                .ok_or_else(|| EngineError::Scene {
                    origin: name.to_string(),
                    message: format!(
                        "no shipped scene has this name; shipped scenes: {}",
                        BUILTIN
                            .iter()
                            .map(|(n, _, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })?;
        Scene::from_toml_str(text, &format!("data/scenes/{name}.toml"))
    }

    /// The scene as TOML text.
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).expect("a scene always serialises")
    }

    /// A 64-bit FNV-1a hash of the scene's canonical TOML form: equal scenes hash equal.
    pub fn hash(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in self.to_toml_string().bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    /// Frame time step, s (default 1/60).
    pub fn frame_dt(&self) -> f32 {
        self.world.dt.unwrap_or(1.0 / 60.0)
    }

    /// Run length, s (default 5).
    pub fn duration(&self) -> f32 {
        self.world.duration.unwrap_or(5.0)
    }

    /// The world settings the scene asks for.
    pub fn settings(&self) -> Settings {
        let d = Settings::default();
        let w = &self.world;
        Settings {
            gravity: w.gravity.map(vec3).unwrap_or(d.gravity),
            max_substep: w.max_substep.unwrap_or(d.max_substep),
            velocity_iterations: w.velocity_iterations.unwrap_or(d.velocity_iterations),
            bias_iterations: w.bias_iterations.or(d.bias_iterations),
            position_iterations: w.position_iterations.unwrap_or(d.position_iterations),
            chain_solve: w.chain_solve.unwrap_or(d.chain_solve),
            error_reduction: w.error_reduction.unwrap_or(d.error_reduction),
            projection_factor: w.projection_factor.unwrap_or(d.projection_factor),
            warm_starting: w.warm_starting.unwrap_or(d.warm_starting),
            sleeping: w.sleeping.unwrap_or(d.sleeping),
            sleep_linear_speed: w.sleep_linear_speed.unwrap_or(d.sleep_linear_speed),
            sleep_angular_speed: w.sleep_angular_speed.unwrap_or(d.sleep_angular_speed),
            time_to_sleep: w.time_to_sleep.unwrap_or(d.time_to_sleep),
            ..d
        }
    }

    /// Builds a world from the scene with its own settings.
    pub fn build(&self) -> Result<World> {
        self.build_with(self.settings())
    }

    /// Builds a world from the scene with the given settings.
    pub fn build_with(&self, settings: Settings) -> Result<World> {
        if let Some(dt) = self.world.dt {
            if !(dt.is_finite() && dt > 0.0) {
                return Err(EngineError::InvalidTimeStep(dt));
            }
        }
        if let Some(d) = self.world.duration {
            if !(d.is_finite() && d >= 0.0) {
                return Err(EngineError::InvalidSetting {
                    name: "duration",
                    value: d.to_string(),
                    reason: "must be a finite number of seconds >= 0",
                });
            }
        }
        let mut world = World::new(settings)?;
        let mut by_name: HashMap<&str, BodyId> = HashMap::new();
        for b in &self.bodies {
            let mut desc = match b.kind {
                BodyKind::Static => BodyDesc::fixed(b.name.clone()),
                BodyKind::Kinematic => BodyDesc::kinematic(b.name.clone()),
                BodyKind::Dynamic => BodyDesc::dynamic(b.name.clone()),
            }
            .position(vec3(b.position))
            .rotation(b.rotation.map(quat).unwrap_or(Quat::IDENTITY))
            .velocity(vec3(b.linear_velocity), vec3(b.angular_velocity));
            let mass = b.mass.unwrap_or(1.0);
            desc.mass = mass;
            match (b.inertia, b.box_half_extents) {
                (Some(_), Some(_)) => {
                    return Err(EngineError::InvalidBody {
                        body: b.name.clone(),
                        reason: "give either `inertia` or `box`, not both".into(),
                    })
                }
                (Some(i), None) => desc.inertia = vec3(i),
                (None, Some(h)) => desc.inertia = box_inertia(mass, vec3(h)),
                (None, None) => {}
            }
            let id = world.add_body(desc)?;
            by_name.insert(&b.name, id);
        }
        let lookup = |joint: &str, which: &str, name: &str| -> Result<BodyId> {
            by_name.get(name).copied().ok_or_else(|| EngineError::InvalidJoint {
                joint: joint.to_string(),
                reason: format!(
                    "{which} names body `{name}`, which the scene does not define; defined bodies: {}",
                    if self.bodies.is_empty() {
                        "none".to_string()
                    } else {
                        self.bodies.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(", ")
                    }
                ),
            })
        };
        for j in &self.joints {
            let a = lookup(&j.name, "body_a", &j.body_a)?;
            let b = lookup(&j.name, "body_b", &j.body_b)?;
            let mut desc = match j.kind {
                JointKind::Revolute => JointDesc::revolute(j.name.clone(), a, b),
                JointKind::Spherical => JointDesc::spherical(j.name.clone(), a, b),
                JointKind::Fixed => JointDesc::fixed(j.name.clone(), a, b),
                JointKind::Prismatic => JointDesc::prismatic(j.name.clone(), a, b),
            }
            .anchors(vec3(j.anchor_a), vec3(j.anchor_b));
            if let Some(axis) = j.axis {
                desc = desc.axis(vec3(axis));
            }
            if let Some(axis) = j.axis_a {
                desc.axis_a = vec3(axis);
            }
            if let Some(axis) = j.axis_b {
                desc.axis_b = vec3(axis);
            }
            desc.limit = j.limit;
            desc.reference_rotation = j.reference_rotation.map(quat);
            world.add_joint(desc)?;
        }
        for c in &self.chains {
            c.build_into(&mut world)?;
        }
        for g in &self.grids {
            g.build_into(&mut world)?;
        }
        world.sync();
        Ok(world)
    }
}

/// The shipped scenes: (name, description, TOML text), from `data/scenes/`.
const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "pendulum",
        "one revolute pendulum released from 0.1 rad",
        include_str!("../../data/scenes/pendulum.toml"),
    ),
    (
        "chain",
        "100-link revolute chain released horizontally",
        include_str!("../../data/scenes/chain.toml"),
    ),
    (
        "grid",
        "20 x 20 spherical grid linked right and down, top row static",
        include_str!("../../data/scenes/grid.toml"),
    ),
    (
        "limited-revolute",
        "revolute pendulum swinging into its angle limit",
        include_str!("../../data/scenes/limited-revolute.toml"),
    ),
    (
        "fixed-stack",
        "ten boxes welded into a cantilever by fixed joints",
        include_str!("../../data/scenes/fixed-stack.toml"),
    ),
    (
        "prismatic-slider",
        "a block sliding down an inclined prismatic rail into its stop",
        include_str!("../../data/scenes/prismatic-slider.toml"),
    ),
    (
        "hub",
        "a light hub with twenty heavy spokes, solved directly",
        include_str!("../../data/scenes/hub.toml"),
    ),
];

/// Names and descriptions of the shipped scenes.
pub fn builtin_scenes() -> Vec<(&'static str, &'static str)> {
    BUILTIN.iter().map(|(n, d, _)| (*n, *d)).collect()
}
