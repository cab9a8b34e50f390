//! Scenes as data: the TOML scene format, the shipped scenes, and generators for chains and
//! grids.
//!
//! A scene file has an optional `[world]` table, any number of `[[body]]` and `[[joint]]`
//! tables, and generator tables `[[chain]]` and `[[grid]]` that expand into bodies and joints
//! (which a `[[joint]]` may name). Unknown fields, arrays of the wrong length and fields a body
//! or joint of that kind would ignore are errors. See `data/scenes/*.toml` and the README for
//! the full format.
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
use std::path::Path;

/// The most bodies, and the most joints, one scene may have, counting those its `[[chain]]`
/// and `[[grid]]` tables generate.
pub const MAX_SCENE_ITEMS: u64 = 50_000_000;

/// Bytes a built and stepped world holds per body and per joint: measured peaks of `lavender
/// run` on one step of a 1,000,000-link chain (1.54 to 1.55 GB, about 1,540 bytes per body and
/// revolute joint), of a 1000 x 1000 spherical grid (2.33 GB: about 740 per body and 790 per
/// joint) and of a 700 x 700 grid (1.16 GB), rounded down a little: a scene the check passes
/// needs at most about 5 % more.
const MIN_BYTES_PER_BODY: u64 = 730;
const MIN_BYTES_PER_JOINT: u64 = 780;

/// Refuses a scene of `bodies` and `joints` that needs more than `available` bytes (at the
/// least per item above): building it would end in the kernel killing the process.
fn check_fits_in_memory(
    bodies: u64,
    joints: u64,
    available: u64,
) -> std::result::Result<(), String> {
    let needed = bodies
        .saturating_mul(MIN_BYTES_PER_BODY)
        .saturating_add(joints.saturating_mul(MIN_BYTES_PER_JOINT));
    if needed > available {
        return Err(format!(
            "{bodies} bodies and {joints} joints need at least {:.1} GB ({MIN_BYTES_PER_BODY} \
             bytes per body, {MIN_BYTES_PER_JOINT} per joint), more than the {:.1} GB of memory \
             available on this machine; use fewer or smaller generators, or free memory",
            needed as f64 * 1e-9,
            available as f64 * 1e-9
        ));
    }
    Ok(())
}

/// How much of a scene file is looked at before the rest is read: enough to tell a binary
/// file (a log, HDF5, a device of zeros) from text.
const BINARY_PROBE_BYTES: usize = 64 * 1024;

/// Why `bytes` (a `whole` file, or its first bytes) are not a scene, if they are not: most
/// often a run's log or HDF5 file given where a scene goes.
fn not_a_scene(bytes: &[u8], whole: bool) -> Option<String> {
    const A_SCENE: &str = "a scene is a TOML text file, see `lavender scenes`";
    // A UTF-8 character cut at the end of the first bytes is not an error (`error_len` None)
    // until the file ends there.
    let invalid_utf8 =
        matches!(std::str::from_utf8(bytes), Err(e) if whole || e.error_len().is_some());
    match bytes {
        // QA (2026-12-06): an HDF5 file was pointed to the log tools, which refuse it.
        b if b.starts_with(b"\x89HDF\r\n") => Some(format!(
            "this is an HDF5 file, not a scene ({A_SCENE}); open it with h5py, MATLAB or \
             pandas, or record a `.lvlog` for `lavender scrub`, `diff` and `resume`"
        )),
        b if b.starts_with(b"LAVLOG\0\0") => Some(format!(
            "this is a Lavender run log, not a scene ({A_SCENE}); a run's log is read by \
             `lavender scrub`, `diff`, `resume` and `export`"
        )),
        // NUL bytes are valid UTF-8 but never text (a file of zeros, a device).
        b if invalid_utf8 || b.contains(&0) => Some(format!(
            "this is not a text file, so not a scene ({A_SCENE})"
        )),
        _ => None,
    }
}

/// Bytes of memory parsing a scene file takes per byte of its text, rounded down: measured
/// 2026-12-05, an explicit 17.8 MB file of 100,000 bodies and joints peaked at 678 MB with its
/// world built (151 MB of it the world), about 30 bytes per byte for the parse (QA: a 22 MB
/// file, 880 MB).
const MIN_PARSE_BYTES_PER_BYTE: u64 = 25;

/// Checks that parsing `text_len` bytes of scene text fits in `available` bytes: the size
/// check after parsing cannot catch a file whose parse alone is too big.
fn check_parse_fits(text_len: u64, available: u64) -> std::result::Result<(), String> {
    let needed = text_len.saturating_mul(MIN_PARSE_BYTES_PER_BYTE);
    if needed > available {
        return Err(format!(
            "parsing this {:.1} MB scene takes at least {:.1} GB ({MIN_PARSE_BYTES_PER_BYTE} \
             bytes per byte of text), more than the {:.1} GB of memory available on this \
             machine; write long chains and grids as `[[chain]]` and `[[grid]]` generators, or \
             free memory",
            text_len as f64 * 1e-6,
            needed as f64 * 1e-9,
            available as f64 * 1e-9
        ));
    }
    Ok(())
}

/// What to write instead when a parse error points at a table header with the wrong
/// brackets (QA 2026-12-06: `[[world]]` read as "`gravity`: invalid type: map, expected a
/// sequence", `[body]` as "invalid type: map, expected a sequence").
fn table_bracket_hint(text: &str, at: usize) -> &'static str {
    let line = text
        .get(at..)
        .and_then(|rest| rest.lines().next())
        .unwrap_or("");
    let header = line.trim();
    let name = header.trim_start_matches('[').trim_end_matches(']').trim();
    let double = header.starts_with("[[");
    match (name, double) {
        ("world", true) => "\n(`[world]` is one table: write it with single brackets, `[world]`)",
        ("body", false) | ("joint", false) | ("chain", false) | ("grid", false) => {
            "\n(bodies, joints, chains and grids are lists of tables: write each with double \
             brackets, e.g. `[[body]]`)"
        }
        _ => "",
    }
}

/// A hint for a parse error that refused a negative number where a count goes (serde says
/// only "invalid value: integer `-1`, expected u32"; QA 2026-12-07): what the field takes.
/// Empty for any other error.
pub fn count_hint(message: &str) -> &'static str {
    let unsigned = message.contains("expected u32") || message.contains("expected u64");
    if unsigned && message.contains("integer `-") {
        "\n(a count or pass number is a whole number >= 0: `velocity_iterations` and a chain's \
         `links` at least 1, a grid's `rows` at least 2 and `cols` at least 1)"
    } else {
        ""
    }
}

/// A parse error quotes the offending line: one of megabytes (a file with no line breaks)
/// is cut to its first 200 characters. The message lines are cut only past 2,000 (a huge
/// string value it quotes): QA 2026-12-07, a typo in `[world]` cut the list of the keys it
/// could have meant after `projection_f`, hiding `warm_starting` and the rest.
fn shorten_lines(message: &str) -> String {
    const MAX_QUOTE: usize = 200;
    const MAX_MESSAGE: usize = 2_000;
    // The quote: `12 | ...` and its `   | ^^^` marker.
    let quotes_the_file = |line: &str| {
        line.trim_start_matches(|c: char| c == ' ' || c.is_ascii_digit())
            .starts_with('|')
    };
    message
        .lines()
        .map(|line| {
            let max = if quotes_the_file(line) {
                MAX_QUOTE
            } else {
                MAX_MESSAGE
            };
            match line.char_indices().nth(max) {
                Some((cut, _)) => {
                    format!("{} ... ({} characters)", &line[..cut], line.chars().count())
                }
                None => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Memory this process may still take, in bytes: the kernel's estimate of memory available
/// without swapping (`MemAvailable`), plus free swap, and no more than its memory cgroup's
/// limit leaves ([`cgroup_room`]). `None` where the system does not say (not Linux).
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    let mut available = field("MemAvailable:")?.saturating_add(field("SwapFree:").unwrap_or(0));
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    if let Some(room) = cgroup_room(&own, |path| std::fs::read_to_string(path).ok()) {
        available = available.min(room);
    }
    Some(available)
}

/// Room under the memory limit of the cgroup `self_cgroup` (the text of `/proc/self/cgroup`)
/// names, bytes, reading files through `read`: cgroup v2 (`0::/path`; `memory.max` less the
/// `anon` of `memory.stat`: page cache can be reclaimed) and v1 (`N:memory:/path`;
/// `memory.limit_in_bytes` less `total_rss`). Both the process's own directory under the
/// mount and the mount's root are read (inside a cgroup namespace or a container the own
/// cgroup is the root); the smallest room wins. `None` without a limit.
fn cgroup_room(self_cgroup: &str, read: impl Fn(&str) -> Option<String>) -> Option<u64> {
    let number = |path: &str| read(path)?.trim().parse::<u64>().ok();
    let stat = |path: &str, key: &str| -> Option<u64> {
        let text = read(path)?;
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let mut room: Option<u64> = None;
    for line in self_cgroup.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (mount, limit_file, used_key) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "anon")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "total_rss",
            )
        } else {
            continue;
        };
        for dir in [
            format!("{mount}{}", path.trim_end_matches('/')),
            mount.to_string(),
        ] {
            // "max" (v2, no limit) is not a number: no limit there.
            if let Some(limit) = number(&format!("{dir}/{limit_file}")) {
                let used = stat(&format!("{dir}/memory.stat"), used_key).unwrap_or(0);
                let here = limit.saturating_sub(used);
                room = Some(room.map_or(here, |r| r.min(here)));
            }
        }
    }
    room
}

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
    #[serde(default, deserialize_with = "checked::gravity")]
    pub gravity: Option<[f32; 3]>,
    /// Frame time step, s (default 1/60).
    #[serde(default, deserialize_with = "checked::dt")]
    pub dt: Option<f32>,
    /// Run length, s (default 5).
    #[serde(default, deserialize_with = "checked::duration")]
    pub duration: Option<f32>,
    /// Substep cap, s (default 1/240); a frame may run at most
    /// [`crate::settings::MAX_SUBSTEPS_PER_FRAME`] substeps.
    #[serde(default, deserialize_with = "checked::max_substep")]
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
    #[serde(default, deserialize_with = "checked::error_reduction")]
    pub error_reduction: Option<f32>,
    /// Projection factor (default 1).
    #[serde(default, deserialize_with = "checked::projection_factor")]
    pub projection_factor: Option<f32>,
    /// Warm starting (default true).
    pub warm_starting: Option<bool>,
    /// The gyroscopic term of rotating bodies (default true; see [`Settings::gyroscopic`]).
    pub gyroscopic: Option<bool>,
    /// The velocity rows' curvature offsets (default true; see [`Settings::curvature`]).
    pub curvature: Option<bool>,
    /// Speculative limit rows (default false; see [`Settings::speculative_limits`]).
    pub speculative_limits: Option<bool>,
    /// Let islands at rest sleep (default false; see [`Settings::sleeping`]).
    pub sleeping: Option<bool>,
    /// Rest threshold on a body's linear speed, m/s (default 0.05).
    #[serde(default, deserialize_with = "checked::sleep_linear_speed")]
    pub sleep_linear_speed: Option<f32>,
    /// Rest threshold on a body's angular speed, rad/s (default 0.05).
    #[serde(default, deserialize_with = "checked::sleep_angular_speed")]
    pub sleep_angular_speed: Option<f32>,
    /// Rest time before an island sleeps, s (default 0.5).
    #[serde(default, deserialize_with = "checked::time_to_sleep")]
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
    #[serde(default, deserialize_with = "checked::position")]
    pub position: [f32; 3],
    /// Unit quaternion `[x, y, z, w]` (default identity).
    #[serde(default, deserialize_with = "checked::rotation")]
    pub rotation: Option<[f32; 4]>,
    /// Linear velocity, m/s.
    #[serde(default, deserialize_with = "checked::linear_velocity")]
    pub linear_velocity: [f32; 3],
    /// Angular velocity, rad/s.
    #[serde(default, deserialize_with = "checked::angular_velocity")]
    pub angular_velocity: [f32; 3],
    /// Mass, kg (dynamic bodies only; default 1).
    #[serde(default, deserialize_with = "checked::mass")]
    pub mass: Option<f32>,
    /// Principal moments of inertia, kg m^2 (dynamic bodies only; or give `box`; with neither,
    /// those of a 0.1 m cube of the body's mass).
    #[serde(default, deserialize_with = "checked::inertia")]
    pub inertia: Option<[f32; 3]>,
    /// Half extents (> 0) of a solid box, m, from which the inertia follows (dynamic bodies
    /// only).
    #[serde(
        rename = "box",
        default,
        deserialize_with = "checked::box_half_extents"
    )]
    pub box_half_extents: Option<[f32; 3]>,
}

/// Half extent of the cube a dynamic body without `box` or `inertia` has, m.
pub const DEFAULT_HALF_EXTENT: f32 = 0.05;

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
    #[serde(default, deserialize_with = "checked::anchor_a")]
    pub anchor_a: [f32; 3],
    /// Anchor in B's frame, m.
    #[serde(default, deserialize_with = "checked::anchor_b")]
    pub anchor_b: [f32; 3],
    /// Axis for both bodies (revolute and prismatic joints; revolute default z, prismatic
    /// default x).
    #[serde(default, deserialize_with = "checked::axis")]
    pub axis: Option<[f32; 3]>,
    /// Axis in A's frame (instead of `axis`, together with `axis_b`).
    #[serde(default, deserialize_with = "checked::axis_a")]
    pub axis_a: Option<[f32; 3]>,
    /// Axis in B's frame (instead of `axis`, together with `axis_a`).
    #[serde(default, deserialize_with = "checked::axis_b")]
    pub axis_b: Option<[f32; 3]>,
    /// Limit `[lo, hi]`, rad or m.
    #[serde(default, deserialize_with = "checked::limit")]
    pub limit: Option<[f32; 2]>,
    /// Reference relative orientation `q_A^-1 q_B`, `[x, y, z, w]`; default: initial poses.
    #[serde(default, deserialize_with = "checked::reference_rotation")]
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
    #[serde(default, deserialize_with = "checked::origin")]
    pub origin: [f32; 3],
    /// Direction the chain is laid out in (normalised; default `[1, 0, 0]`, horizontal).
    #[serde(default = "default_direction", deserialize_with = "checked::direction")]
    pub direction: [f32; 3],
    /// Hinge axis (default `[0, 0, 1]`).
    #[serde(default = "default_axis", deserialize_with = "checked::chain_axis")]
    pub axis: [f32; 3],
    /// Joint-to-joint length of a link, m (default 0.1).
    #[serde(
        default = "default_link_length",
        deserialize_with = "checked::link_length"
    )]
    pub link_length: f32,
    /// Half thickness of a link, m (default 0.01).
    #[serde(
        default = "default_link_half_width",
        deserialize_with = "checked::link_half_width"
    )]
    pub link_half_width: f32,
    /// Mass of a link, kg (default 0.1).
    #[serde(default = "default_link_mass", deserialize_with = "checked::link_mass")]
    pub link_mass: f32,
    /// Optional revolute limit for every joint, rad.
    #[serde(default, deserialize_with = "checked::limit")]
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
    /// Distance between neighbours, m (> 0; default 0.1).
    #[serde(default = "default_link_length", deserialize_with = "checked::spacing")]
    pub spacing: f32,
    /// Position of the top-left body, m.
    #[serde(default, deserialize_with = "checked::origin")]
    pub origin: [f32; 3],
    /// Mass of a body, kg (default 0.1).
    #[serde(default = "default_link_mass", deserialize_with = "checked::grid_mass")]
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

/// Deserialisers for the scene file's numbers that name their field in errors: fixed-length
/// arrays must have exactly their length (serde's `[f32; N]` ignores extra elements), and a
/// finite number beyond the f32 range is refused as written instead of becoming infinite.
mod checked {
    use serde::de::{DeserializeOwned, Error};
    use serde::{Deserialize, Deserializer};

    /// A field's value as read (f64s), then checked and narrowed to f32.
    trait Checked: Sized {
        type Raw: DeserializeOwned;
        fn check<E: Error>(raw: Self::Raw, field: &str) -> Result<Self, E>;
    }

    impl Checked for f32 {
        type Raw = f64;
        fn check<E: Error>(v: f64, field: &str) -> Result<f32, E> {
            if v.is_finite() && v.abs() > f64::from(f32::MAX) {
                return Err(E::custom(format!(
                    "`{field}`: {v:e} is beyond the f32 range (max 3.4e38); give a smaller number"
                )));
            }
            // Below the smallest normal f32 a value would be flushed to 0 by the solver (or
            // rounded to 0 here): refused as written.
            if v != 0.0 && v.abs() < f64::from(f32::MIN_POSITIVE) {
                return Err(E::custom(format!(
                    "`{field}`: {v:e} is below the f32 range (smallest 1.2e-38); give a \
                     larger number (or 0 where the field allows it)"
                )));
            }
            Ok(v as f32)
        }
    }

    impl<const N: usize> Checked for [f32; N] {
        type Raw = Vec<f64>;
        fn check<E: Error>(raw: Vec<f64>, field: &str) -> Result<[f32; N], E> {
            if raw.len() != N {
                let layout = match N {
                    2 => "[lo, hi]",
                    3 => "[x, y, z]",
                    _ => "[x, y, z, w]",
                };
                let fix = if raw.len() > N {
                    "remove the extra ones"
                } else {
                    "give every element"
                };
                return Err(E::custom(format!(
                    "`{field}` has {} elements, expected an array of length {N} {layout}; {fix}",
                    raw.len()
                )));
            }
            let mut out = [0.0; N];
            for (o, v) in out.iter_mut().zip(raw) {
                *o = f32::check(v, field)?;
            }
            Ok(out)
        }
    }

    impl<T: Checked> Checked for Option<T> {
        type Raw = Option<T::Raw>;
        fn check<E: Error>(raw: Self::Raw, field: &str) -> Result<Self, E> {
            raw.map(|r| T::check(r, field)).transpose()
        }
    }

    fn read<'de, D: Deserializer<'de>, T: Checked>(d: D, field: &str) -> Result<T, D::Error> {
        let raw =
            T::Raw::deserialize(d).map_err(|e| D::Error::custom(format!("`{field}`: {e}")))?;
        T::check(raw, field)
    }

    /// One deserialiser per field: `function: type = "field name"`.
    macro_rules! fields {
        ($($f:ident: $t:ty = $name:literal,)*) => {$(
            pub(super) fn $f<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                read(d, $name)
            }
        )*};
    }

    fields! {
        gravity: Option<[f32; 3]> = "gravity",
        dt: Option<f32> = "dt",
        duration: Option<f32> = "duration",
        max_substep: Option<f32> = "max_substep",
        error_reduction: Option<f32> = "error_reduction",
        projection_factor: Option<f32> = "projection_factor",
        sleep_linear_speed: Option<f32> = "sleep_linear_speed",
        sleep_angular_speed: Option<f32> = "sleep_angular_speed",
        time_to_sleep: Option<f32> = "time_to_sleep",
        position: [f32; 3] = "position",
        rotation: Option<[f32; 4]> = "rotation",
        linear_velocity: [f32; 3] = "linear_velocity",
        angular_velocity: [f32; 3] = "angular_velocity",
        mass: Option<f32> = "mass",
        inertia: Option<[f32; 3]> = "inertia",
        box_half_extents: Option<[f32; 3]> = "box",
        anchor_a: [f32; 3] = "anchor_a",
        anchor_b: [f32; 3] = "anchor_b",
        axis: Option<[f32; 3]> = "axis",
        axis_a: Option<[f32; 3]> = "axis_a",
        axis_b: Option<[f32; 3]> = "axis_b",
        limit: Option<[f32; 2]> = "limit",
        reference_rotation: Option<[f32; 4]> = "reference_rotation",
        origin: [f32; 3] = "origin",
        direction: [f32; 3] = "direction",
        chain_axis: [f32; 3] = "axis",
        link_length: f32 = "link_length",
        link_half_width: f32 = "link_half_width",
        link_mass: f32 = "link_mass",
        spacing: f32 = "spacing",
        grid_mass: f32 = "mass",
    }
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
        let ids = self.add_bodies(world)?;
        self.add_joints(world, &ids)
    }

    fn error(&self, message: String) -> EngineError {
        EngineError::Scene {
            origin: format!("chain `{}`", self.name),
            message,
        }
    }

    /// Bodies and joints the chain generates.
    fn counts(&self) -> (u64, u64) {
        (u64::from(self.links) + 1, u64::from(self.links))
    }

    /// Checks the fields and the size.
    fn check(&self) -> Result<()> {
        if self.links == 0 {
            return Err(self.error("links must be at least 1".into()));
        }
        let (bodies, joints) = self.counts();
        if bodies > MAX_SCENE_ITEMS {
            return Err(self.error(format!(
                "links = {} would generate {bodies} bodies and {joints} joints, more than the \
                 {MAX_SCENE_ITEMS} of each a scene may have; use fewer links",
                self.links
            )));
        }
        if !matches!(self.joint, JointKind::Revolute | JointKind::Spherical) {
            return Err(self.error(format!(
                "joint must be revolute or spherical, not {}",
                self.joint.name()
            )));
        }
        if !(self.link_length.is_finite()
            && self.link_length > 0.0
            && self.link_half_width.is_finite()
            && self.link_half_width > 0.0)
        {
            return Err(
                self.error("link_length and link_half_width must be finite and > 0 m".into())
            );
        }
        if !(self.link_mass.is_finite() && self.link_mass > 0.0) {
            return Err(self.error(format!(
                "link_mass = {} is not allowed: give a finite mass > 0 kg (default 0.1)",
                self.link_mass
            )));
        }
        if self.name.trim().is_empty() {
            return Err(
                self.error("a chain needs a name: its bodies and joints are named after it".into())
            );
        }
        let dir = Vec3::from(self.direction);
        if !dir.is_finite() || dir.length() < 1e-6 {
            return Err(self.error("direction must be a finite non-zero vector".into()));
        }
        Ok(())
    }

    /// Checks the chain, then adds the anchor and the links; returns their ids in that order.
    fn add_bodies(&self, world: &mut World) -> Result<Vec<BodyId>> {
        self.check()?;
        let dir = Vec3::from(self.direction).normalize();
        let origin = Vec3::from(self.origin);
        let length = self.link_length;
        let half = (dir.abs() * (0.5 * length)).max(Vec3::splat(self.link_half_width));
        // The links' inertia is derived: name what was written, not an inertia the file never
        // gave (a moment f32 cannot invert is refused by `add_body`).
        let inertia = box_inertia(self.link_mass, half);
        let invertible = |v: f32| v.is_normal() && v.recip().is_normal();
        if !inertia.to_array().into_iter().all(invertible) {
            return Err(self.error(format!(
                "links of link_length = {} m, link_half_width = {} m and link_mass = {} kg have \
                 the inertia {:?} kg m^2 (a solid box's), which single precision cannot hold: \
                 use units in which the links' sizes and mass are nearer 1 (mm or km, g or t)",
                self.link_length,
                self.link_half_width,
                self.link_mass,
                inertia.to_array()
            )));
        }
        let mut ids = Vec::with_capacity(self.counts().0 as usize);
        ids.push(
            world.add_body(BodyDesc::fixed(format!("{}.anchor", self.name)).position(origin))?,
        );
        for i in 0..self.links {
            let centre = origin + dir * (length * (i as f32 + 0.5));
            ids.push(
                world.add_body(
                    BodyDesc::dynamic(format!("{}.link{i}", self.name))
                        .position(centre)
                        .solid_box(self.link_mass, half),
                )?,
            );
        }
        Ok(ids)
    }

    /// Adds the joints between the bodies `ids` of [`ChainSpec::add_bodies`].
    fn add_joints(&self, world: &mut World, ids: &[BodyId]) -> Result<()> {
        let dir = Vec3::from(self.direction).normalize();
        let length = self.link_length;
        for (i, pair) in ids.windows(2).enumerate() {
            let (previous, link) = (pair[0], pair[1]);
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
        }
        Ok(())
    }
}

impl GridSpec {
    /// Adds the grid to `world`.
    pub fn build_into(&self, world: &mut World) -> Result<()> {
        let ids = self.add_bodies(world)?;
        self.add_joints(world, &ids)
    }

    fn error(&self, message: String) -> EngineError {
        EngineError::Scene {
            origin: format!("grid `{}`", self.name),
            message,
        }
    }

    /// Bodies and joints the grid generates: `rows cols` bodies, `(rows - 1) cols` joints down
    /// and `(rows - 1) (cols - 1)` to the right.
    fn counts(&self) -> (u64, u64) {
        let (rows, cols) = (u64::from(self.rows), u64::from(self.cols));
        let joints = rows
            .saturating_sub(1)
            .saturating_mul((2 * cols).saturating_sub(1));
        (rows * cols, joints)
    }

    /// Checks the fields and the size.
    fn check(&self) -> Result<()> {
        if self.rows < 2 || self.cols < 1 {
            return Err(self.error("a grid needs rows >= 2 and cols >= 1".into()));
        }
        if self.name.trim().is_empty() {
            return Err(
                self.error("a grid needs a name: its bodies and joints are named after it".into())
            );
        }
        let (bodies, joints) = self.counts();
        if bodies > MAX_SCENE_ITEMS || joints > MAX_SCENE_ITEMS {
            return Err(self.error(format!(
                "rows x cols = {} x {} would generate {bodies} bodies and {joints} joints, more \
                 than the {MAX_SCENE_ITEMS} of each a scene may have; use fewer rows or columns",
                self.rows, self.cols
            )));
        }
        if !matches!(self.joint, JointKind::Revolute | JointKind::Spherical) {
            return Err(self.error("joint must be spherical or revolute".into()));
        }
        if !(self.spacing.is_finite() && self.spacing > 0.0) {
            return Err(self.error(format!(
                "spacing = {} is not allowed: give a finite distance > 0 m between neighbours \
                 (default 0.1)",
                self.spacing
            )));
        }
        if !(self.mass.is_finite() && self.mass > 0.0) {
            return Err(self.error(format!(
                "mass = {} is not allowed: give a finite mass > 0 kg (default 0.1)",
                self.mass
            )));
        }
        Ok(())
    }

    /// Checks the grid, then adds its bodies row by row; returns their ids in that order.
    fn add_bodies(&self, world: &mut World) -> Result<Vec<BodyId>> {
        self.check()?;
        let s = self.spacing;
        let origin = Vec3::from(self.origin);
        let half = Vec3::splat(0.25 * s);
        let mut ids = Vec::with_capacity(self.counts().0 as usize);
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
        Ok(ids)
    }

    /// Adds the joints between the bodies `ids` of [`GridSpec::add_bodies`].
    fn add_joints(&self, world: &mut World, ids: &[BodyId]) -> Result<()> {
        let s = self.spacing;
        let cols = self.cols as usize;
        let at = |i: u32, k: u32| ids[i as usize * cols + k as usize];
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

impl SceneBody {
    /// The body's description, after the checks that need to know which fields were given.
    fn desc(&self) -> Result<BodyDesc> {
        let bad = |reason: String| EngineError::InvalidBody {
            body: self.name.clone(),
            reason,
        };
        if self.kind != BodyKind::Dynamic {
            let given = [
                ("mass", self.mass.is_some()),
                ("inertia", self.inertia.is_some()),
                ("box", self.box_half_extents.is_some()),
            ];
            if let Some((field, _)) = given.into_iter().find(|&(_, given)| given) {
                let kind = self.kind.name();
                return Err(bad(format!(
                    "a {kind} body has infinite mass, so its `{field}` would be ignored: remove \
                     `{field}`, or make the body dynamic"
                )));
            }
        }
        if self.kind == BodyKind::Static {
            let moving = [
                ("linear_velocity", self.linear_velocity),
                ("angular_velocity", self.angular_velocity),
            ];
            if let Some((field, _)) = moving.into_iter().find(|(_, v)| *v != [0.0; 3]) {
                return Err(bad(format!(
                    "a static body never moves, so its `{field}` would be ignored: remove \
                     `{field}`, or make the body kinematic (it moves with its velocity)"
                )));
            }
        }
        if let Some(h) = self.box_half_extents {
            if !(vec3(h).is_finite() && vec3(h).min_element() > 0.0) {
                return Err(bad(format!(
                    "`box` {h:?} m is not allowed: every half extent (half the side) must be \
                     finite and > 0 m"
                )));
            }
        }
        let mut desc = match self.kind {
            BodyKind::Static => BodyDesc::fixed(self.name.clone()),
            BodyKind::Kinematic => BodyDesc::kinematic(self.name.clone()),
            BodyKind::Dynamic => BodyDesc::dynamic(self.name.clone()),
        }
        .position(vec3(self.position))
        .rotation(self.rotation.map(quat).unwrap_or(Quat::IDENTITY))
        .velocity(vec3(self.linear_velocity), vec3(self.angular_velocity));
        let mass = self.mass.unwrap_or(1.0);
        desc.mass = mass;
        match (self.inertia, self.box_half_extents) {
            (Some(_), Some(_)) => {
                return Err(bad("give either `inertia` or `box`, not both".into()));
            }
            (Some(i), None) => desc.inertia = vec3(i),
            (None, Some(h)) => {
                desc.inertia = box_inertia(mass, vec3(h));
                // The inertia is derived: name what was written (QA 2026-12-06: a box of
                // 1e-30 m was "inertia [0, 0, 0] is not allowed").
                let held = desc.inertia.is_finite() && desc.inertia.min_element() > 0.0;
                if mass.is_finite() && mass > 0.0 && !held {
                    return Err(bad(format!(
                        "`box` {h:?} m with `mass` = {mass} kg gives the inertia {:?} kg m^2 \
                         (m (a^2 + b^2) / 3 about each axis), which single precision cannot \
                         hold: use units in which the box's sides and mass are nearer 1 (mm \
                         or km, g or t)",
                        desc.inertia.to_array()
                    )));
                }
            }
            // The default shape, a 0.1 m cube, of the body's mass. (The inertia of a 1 kg cube
            // whatever the mass made `mass = 1e6` a needle a hinge could not hold in f32.)
            (None, None) => desc.inertia = box_inertia(mass, Vec3::splat(DEFAULT_HALF_EXTENT)),
        }
        Ok(desc)
    }
}

impl SceneJoint {
    /// The joint's description between bodies `a` and `b`, after the checks that need to know
    /// which fields were given.
    fn desc(&self, a: BodyId, b: BodyId) -> Result<JointDesc> {
        let bad = |reason: String| EngineError::InvalidJoint {
            joint: self.name.clone(),
            reason,
        };
        let has_axis = matches!(self.kind, JointKind::Revolute | JointKind::Prismatic);
        let axes = [
            ("axis", self.axis),
            ("axis_a", self.axis_a),
            ("axis_b", self.axis_b),
        ];
        if let Some((field, _)) = axes.into_iter().find(|(_, v)| !has_axis && v.is_some()) {
            return Err(bad(format!(
                "a {} joint has no axis; axes apply to revolute and prismatic joints: remove \
                 `{field}`",
                self.kind.name()
            )));
        }
        if self.kind == JointKind::Spherical && self.reference_rotation.is_some() {
            return Err(bad(
                "a spherical joint has no angle to measure from a reference, so its \
                 `reference_rotation` would be ignored: remove it"
                    .into(),
            ));
        }
        match (self.axis, self.axis_a, self.axis_b) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err(bad(
                    "give either `axis` (the same axis in both bodies' frames) or `axis_a` and \
                     `axis_b`, not both"
                        .into(),
                ))
            }
            (None, Some(_), None) | (None, None, Some(_)) => {
                let (given, missing) = if self.axis_a.is_some() {
                    ("axis_a", "axis_b")
                } else {
                    ("axis_b", "axis_a")
                };
                return Err(bad(format!(
                    "`{given}` is given without `{missing}`: give both (each in its body's \
                     frame), or `axis` for both"
                )));
            }
            _ => {}
        }
        let mut desc = match self.kind {
            JointKind::Revolute => JointDesc::revolute(self.name.clone(), a, b),
            JointKind::Spherical => JointDesc::spherical(self.name.clone(), a, b),
            JointKind::Fixed => JointDesc::fixed(self.name.clone(), a, b),
            JointKind::Prismatic => JointDesc::prismatic(self.name.clone(), a, b),
        }
        .anchors(vec3(self.anchor_a), vec3(self.anchor_b));
        if let Some(axis) = self.axis {
            // Named as written: the joint itself would name the `axis_a` it fills from it.
            if !(vec3(axis).is_finite() && vec3(axis).length_squared() > 0.0) {
                return Err(bad(format!(
                    "`axis` {axis:?} is not a usable direction: give a finite, non-zero axis"
                )));
            }
            desc = desc.axis(vec3(axis));
        }
        if let (Some(axis_a), Some(axis_b)) = (self.axis_a, self.axis_b) {
            desc = desc.axes(vec3(axis_a), vec3(axis_b));
        }
        desc.limit = self.limit;
        desc.reference_rotation = self.reference_rotation.map(quat);
        Ok(desc)
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
        if let Some(available) = available_memory() {
            check_parse_fits(text.len() as u64, available).map_err(|message| {
                EngineError::Scene {
                    origin: origin.to_string(),
                    message,
                }
            })?;
        }
        toml::from_str(text).map_err(|e: toml::de::Error| {
            let hint = e
                .span()
                .map_or("", |span| table_bracket_hint(text, span.start));
            let message = e.to_string();
            EngineError::Scene {
                origin: origin.to_string(),
                message: shorten_lines(&message) + hint + count_hint(&message),
            }
        })
    }

    /// Reads and parses a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene> {
        let path = path.as_ref();
        let scene_error = |message: String| EngineError::Scene {
            origin: path.display().to_string(),
            message,
        };
        // Read no more than a parse could take (QA 2026-12-06: `/dev/zero`, whose size reads
        // as 0, was read until memory ran out): the byte past the bound makes
        // `from_toml_str`'s check refuse it.
        let limit = available_memory().map_or(u64::MAX, |a| a / MIN_PARSE_BYTES_PER_BYTE);
        use std::io::Read;
        let cannot_read = |e: std::io::Error| scene_error(format!("cannot read the file: {e}"));
        let mut file = std::fs::File::open(path)
            .map_err(cannot_read)?
            .take(limit.saturating_add(1));
        // The first bytes first: a binary file is refused from them, not after reading it all
        // (`/dev/zero` was read to the parse bound, a gigabyte, before it was refused).
        let mut bytes = Vec::new();
        {
            (&mut file)
                .take(BINARY_PROBE_BYTES as u64)
                .read_to_end(&mut bytes)
                .map_err(cannot_read)?;
            if let Some(message) = not_a_scene(&bytes, false) {
                return Err(scene_error(message));
            }
            file.read_to_end(&mut bytes).map_err(cannot_read)?;
        }
        if let Some(message) = not_a_scene(&bytes, true) {
            return Err(scene_error(message));
        }
        let text = String::from_utf8(bytes).expect("checked above");
        Scene::from_toml_str(&text, &path.display().to_string())
    }

    /// A shipped scene by name (see [`builtin_scenes`]).
    pub fn builtin(name: &str) -> Result<Scene> {
        let (_, _, text) =
            BUILTIN
                .iter()
                .find(|(n, _, _)| *n == name)
                .ok_or_else(|| EngineError::Scene {
                    // QA (2026-12-06): an empty name read as "scene : no shipped scene ...".
                    origin: if name.is_empty() {
                        "\"\" (an empty name)".to_string()
                    } else {
                        name.to_string()
                    },
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

    /// A 64-bit FNV-1a hash of what the scene builds: the canonical TOML form of its bodies,
    /// joints and generators, without its description and its `[world]` settings. Runs of one
    /// scene with other settings (given in the file or as overrides) or another description
    /// hash equal, so `diff` compares them without `--force`; a scene with other bodies or
    /// joints (or other initial poses) hashes differently. (Before 2026-12-05 the whole text
    /// was hashed, and `velocity_iterations = 9` written in the file made a different scene
    /// from `--velocity-iterations 9`; QA.)
    pub fn hash(&self) -> u64 {
        let built = Scene {
            description: String::new(),
            world: SceneWorld::default(),
            ..self.clone()
        };
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in built.to_toml_string().bytes() {
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
            gyroscopic: w.gyroscopic.unwrap_or(d.gyroscopic),
            curvature: w.curvature.unwrap_or(d.curvature),
            speculative_limits: w.speculative_limits.unwrap_or(d.speculative_limits),
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
    ///
    /// Bodies come first, in order: the `[[body]]` tables, then those the chains and grids
    /// generate, so that a `[[joint]]` may name any of them; then the joints, in the same
    /// order.
    pub fn build_with(&self, settings: Settings) -> Result<World> {
        self.build_for(settings, self.frame_dt())
    }

    /// [`Scene::build_with`] for a run of frames of `dt` seconds other than the scene's own
    /// (`lavender run --dt`): the substeps such frames run are the ones judged against each
    /// swing ([`World::substep_warning`]).
    pub fn build_for(&self, settings: Settings, dt: f32) -> Result<World> {
        if let Some(scene_dt) = self.world.dt {
            if !(scene_dt.is_finite() && scene_dt > 0.0) {
                return Err(EngineError::InvalidTimeStep(scene_dt));
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
        world.settings().check_substeps(dt)?;
        self.check_size()?;
        for b in &self.bodies {
            world.add_body(b.desc()?)?;
        }
        let chains = self
            .chains
            .iter()
            .map(|c| c.add_bodies(&mut world))
            .collect::<Result<Vec<_>>>()?;
        let grids = self
            .grids
            .iter()
            .map(|g| g.add_bodies(&mut world))
            .collect::<Result<Vec<_>>>()?;
        for j in &self.joints {
            let a = self.body_id(&world, j, "body_a", &j.body_a)?;
            let b = self.body_id(&world, j, "body_b", &j.body_b)?;
            world.add_joint(j.desc(a, b)?)?;
        }
        for (c, ids) in self.chains.iter().zip(&chains) {
            c.add_joints(&mut world, ids)?;
        }
        for (g, ids) in self.grids.iter().zip(&grids) {
            g.add_joints(&mut world, ids)?;
        }
        world.sync();
        // Judged only where a warning is heard (Python asks the world itself).
        if tracing::enabled!(tracing::Level::WARN) {
            if let Some(warning) = world.conflict_warning() {
                tracing::warn!("{warning}");
            }
            if let Some(warning) = world.start_error_warning() {
                tracing::warn!("{warning}");
            }
            if let Some(warning) = world.free_fall_warning() {
                tracing::warn!("{warning}");
            }
            if let Some(warning) = world.locked_pair_warning() {
                tracing::warn!("{warning}");
            }
            if let Some(warning) = world.substep_warning(dt) {
                tracing::warn!("{warning}");
            }
        }
        Ok(world)
    }

    /// The numbers of bodies and joints the scene builds, with those its `[[chain]]` and
    /// `[[grid]]` tables generate (saturating at `u64::MAX`).
    pub fn counts(&self) -> (u64, u64) {
        let own = (self.bodies.len() as u64, self.joints.len() as u64);
        let generated =
            (self.chains.iter().map(|c| c.counts())).chain(self.grids.iter().map(|g| g.counts()));
        generated.fold(own, |(b, j), (gb, gj)| {
            (b.saturating_add(gb), j.saturating_add(gj))
        })
    }

    /// Whether this scene could have built `world`: the same numbers of bodies and joints,
    /// the `[[body]]` and `[[joint]]` tables' names and kinds in their places, and each
    /// generated body and joint named after its `[[chain]]` or `[[grid]]` (built in the order
    /// [`Scene::build_with`] gives). Poses and velocities are not compared: a world may have
    /// run since it was built. Cheap (no build), for a recording's header, whose scene is what
    /// a resume rebuilds (QA 2026-12-08: a scene of another world with the same counts was
    /// recorded and resumed the wrong world). The error says what differs.
    pub fn check_describes(&self, world: &World) -> std::result::Result<(), String> {
        let (bodies, joints) = self.counts();
        let counts = (world.body_count() as u64, world.joint_count() as u64);
        if (bodies, joints) != counts {
            return Err(format!(
                "the scene builds {bodies} bodies and {joints} joints, the world has {} and {}",
                counts.0, counts.1
            ));
        }
        let (names, kinds) = (world.bodies().names(), world.bodies().kinds());
        for (i, b) in self.bodies.iter().enumerate() {
            if names[i] != b.name || kinds[i] != b.kind {
                return Err(format!(
                    "body {i} is the {} body `{}` in the scene and the {} body `{}` in the \
                     world",
                    b.kind.name(),
                    b.name,
                    kinds[i].name(),
                    names[i]
                ));
            }
        }
        let (joint_names, joint_kinds) = (world.joints().names(), world.joints().kinds());
        for (i, j) in self.joints.iter().enumerate() {
            if joint_names[i] != j.name || joint_kinds[i] != j.kind {
                return Err(format!(
                    "joint {i} is the {} joint `{}` in the scene and the {} joint `{}` in \
                     the world",
                    j.kind.name(),
                    j.name,
                    joint_kinds[i].name(),
                    joint_names[i]
                ));
            }
        }
        // Generated items, generator by generator: each name starts with the generator's.
        let generators = (self.chains.iter().map(|c| (&c.name, c.counts())))
            .chain(self.grids.iter().map(|g| (&g.name, g.counts())));
        let (mut body, mut joint) = (self.bodies.len(), self.joints.len());
        for (generator, (gen_bodies, gen_joints)) in generators {
            let prefix = format!("{generator}.");
            let body_end = body + gen_bodies as usize;
            let joint_end = joint + gen_joints as usize;
            let stranger = (body..body_end)
                .map(|i| ("body", i, &names[i]))
                .chain((joint..joint_end).map(|i| ("joint", i, &joint_names[i])))
                .find(|(_, _, name)| !name.starts_with(&prefix));
            if let Some((what, i, name)) = stranger {
                return Err(format!(
                    "{what} {i} is `{name}` in the world, where the scene's generator \
                     `{generator}` builds one named `{generator}.…`"
                ));
            }
            (body, joint) = (body_end, joint_end);
        }
        Ok(())
    }

    /// Checks every generator, then the scene's total numbers of bodies and joints against
    /// [`MAX_SCENE_ITEMS`].
    fn check_size(&self) -> Result<()> {
        for c in &self.chains {
            c.check()?;
        }
        for g in &self.grids {
            g.check()?;
        }
        let (bodies, joints) = self.counts();
        if bodies > MAX_SCENE_ITEMS || joints > MAX_SCENE_ITEMS {
            return Err(EngineError::Scene {
                origin: "size".into(),
                message: format!(
                    "{bodies} bodies and {joints} joints (with those the [[chain]] and [[grid]] \
                     tables generate), more than the {MAX_SCENE_ITEMS} of each a scene may have; \
                     use fewer or smaller generators"
                ),
            });
        }
        if let Some(available) = available_memory() {
            check_fits_in_memory(bodies, joints, available).map_err(|message| {
                EngineError::Scene {
                    origin: "size".into(),
                    message,
                }
            })?;
        }
        Ok(())
    }

    /// The body named `name` by field `which` of joint `j`.
    fn body_id(&self, world: &World, j: &SceneJoint, which: &str, name: &str) -> Result<BodyId> {
        match world.bodies().index_of(name) {
            Some(i) => Ok(BodyId(i as u32)),
            None => Err(EngineError::InvalidJoint {
                joint: j.name.clone(),
                reason: format!(
                    "{which} names body `{name}`, which the scene does not define; defined \
                     bodies: {}",
                    self.defined_bodies(world.body_count())
                ),
            }),
        }
    }

    /// The names a joint may use, abbreviated: the first `[[body]]` names, then what each
    /// generator makes, and with generators or many bodies the count (`total`).
    fn defined_bodies(&self, total: usize) -> String {
        const SHOWN: usize = 8;
        let mut items: Vec<String> = self
            .bodies
            .iter()
            .take(SHOWN)
            .map(|b| b.name.clone())
            .collect();
        if self.bodies.len() > SHOWN {
            items.push(format!("... ({} [[body]] tables)", self.bodies.len()));
        }
        let generated = self.chains.len() + self.grids.len();
        let chains = self.chains.iter().map(|c| match c.links {
            1 => format!("{0}.anchor, {0}.link0 (chain)", c.name),
            n => format!(
                "{0}.anchor, {0}.link0 .. {0}.link{1} (chain)",
                c.name,
                n.saturating_sub(1)
            ),
        });
        let grids = self.grids.iter().map(|g| {
            format!(
                "{0}.r0c0 .. {0}.r{1}c{2} (grid)",
                g.name,
                g.rows.saturating_sub(1),
                g.cols.saturating_sub(1)
            )
        });
        items.extend(chains.chain(grids).take(SHOWN));
        if generated > SHOWN {
            items.push(format!("... ({generated} generators)"));
        }
        if items.is_empty() {
            "none".into()
        } else if generated == 0 && self.bodies.len() <= SHOWN {
            items.join(", ")
        } else {
            format!("{} ({total} in all)", items.join(", "))
        }
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

#[cfg(test)]
mod tests {
    use super::{available_memory, cgroup_room, check_fits_in_memory, check_parse_fits};

    /// The memory cgroup's room, v2 and v1, in the process's own directory or at the mount's
    /// root (a container), the smallest winning; no limit, no room figure.
    #[test]
    fn the_cgroup_limit_is_read_for_v2_and_v1_in_the_own_cgroup_or_at_the_root() {
        let files = |entries: &'static [(&'static str, &'static str)]| {
            move |path: &str| {
                (entries.iter())
                    .find(|(p, _)| *p == path)
                    .map(|(_, text)| text.to_string())
            }
        };
        // v2, the limit in the process's own cgroup (no namespace): 2 GB less 0.5 GB of anon.
        let v2 = files(&[
            (
                "/sys/fs/cgroup/user.slice/run.scope/memory.max",
                "2000000000\n",
            ),
            (
                "/sys/fs/cgroup/user.slice/run.scope/memory.stat",
                "anon 500000000\nfile 900\n",
            ),
            ("/sys/fs/cgroup/memory.max", "max\n"),
        ]);
        assert_eq!(
            cgroup_room("0::/user.slice/run.scope\n", v2),
            Some(1_500_000_000)
        );
        // v1 in a container: its own path is not mounted, the root is its cgroup.
        let v1 = files(&[
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "2147483648\n",
            ),
            (
                "/sys/fs/cgroup/memory/memory.stat",
                "rss 1\ntotal_rss 147483648\n",
            ),
        ]);
        let own = "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n";
        assert_eq!(cgroup_room(own, v1), Some(2_000_000_000));
        // Unlimited v2, or no memory controller at all: no figure.
        let unlimited = files(&[("/sys/fs/cgroup/memory.max", "max\n")]);
        assert_eq!(cgroup_room("0::/\n", unlimited), None);
        assert_eq!(cgroup_room("3:cpu:/x\n", files(&[])), None);
    }

    /// A body given only a mass is a 0.1 m cube of that mass, not a 1 kg cube's inertia on
    /// any mass: a 1e6 kg bob on a hinge then kept its anchor (QA: it fell 4.7 m in 1 s).
    #[test]
    fn a_mass_without_box_or_inertia_is_a_cube_of_that_mass() {
        for mass in [1e-6f32, 1.0, 1e6] {
            let text = format!(
                "[world]\ngravity = [0.0, -9.81, 0.0]\n[[body]]\nname = \"pivot\"\nkind = \"static\"\n\
                 [[body]]\nname = \"bob\"\nposition = [1.0, 0.0, 0.0]\nmass = {mass:e}\n\
                 [[joint]]\nname = \"hinge\"\nkind = \"revolute\"\nbody_a = \"pivot\"\n\
                 body_b = \"bob\"\nanchor_b = [-1.0, 0.0, 0.0]\naxis = [0.0, 0.0, 1.0]\n"
            );
            let scene = super::Scene::from_toml_str(&text, "bob").unwrap();
            let mut world = scene.build().unwrap();
            let cube = crate::bodies::box_inertia(mass, glam::Vec3::splat(0.05));
            let inertia = world.bodies().inertia_world(1);
            assert!(
                (inertia.x_axis.x - cube.x).abs() <= 1e-6 * cube.x,
                "mass {mass}: {inertia:?} against {cube:?}"
            );
            // The same swing whatever the mass: after 1 s the hinge holds its anchor.
            for _ in 0..60 {
                world.step(1.0 / 60.0).unwrap();
            }
            let error = world.constraint_data()[0][3];
            assert!(error < 1e-4, "mass {mass}: anchor error {error} m");
        }
    }

    /// A scene that cannot fit is refused with what it needs and what there is; one that fits
    /// passes, and the sums saturate instead of wrapping.
    #[test]
    fn a_scene_file_whose_parse_would_not_fit_is_refused_before_parsing() {
        // 17.8 MB of text fits in 1 GB; 100 MB does not (2.5 GB to parse).
        check_parse_fits(17_800_000, 1_000_000_000).unwrap();
        let e = check_parse_fits(100_000_000, 1_000_000_000).unwrap_err();
        assert!(e.contains("100.0 MB") && e.contains("[[chain]]"), "{e}");
    }

    #[test]
    fn a_scene_larger_than_the_available_memory_is_refused_before_building() {
        let message = check_fits_in_memory(40_000_001, 40_000_000, 24_000_000_000).unwrap_err();
        assert!(
            message.contains("40000001 bodies and 40000000 joints need at least 60.4 GB")
                && message.contains("24.0 GB of memory available"),
            "{message}"
        );
        // 1,000 bodies and joints need 1.51 MB.
        assert!(check_fits_in_memory(1_000, 1_000, 1_510_000).is_ok());
        assert!(check_fits_in_memory(1_000, 1_000, 1_509_999).is_err());
        assert!(check_fits_in_memory(u64::MAX, u64::MAX, u64::MAX - 1).is_err());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn linux_says_how_much_memory_is_available() {
        let available = available_memory().expect("/proc/meminfo has MemAvailable");
        // This process runs, so something is available; and no machine of ours has 1 PB.
        assert!(available > 10_000_000 && available < 1 << 50, "{available}");
    }

    use super::*;

    /// The error of parsing and building `text`.
    fn error(text: &str) -> String {
        match Scene::from_toml_str(text, "s.toml").and_then(|s| s.build()) {
            Ok(_) => panic!("the scene was accepted:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    const BOB: &str = "[[body]]\nname = \"bob\"\n";

    #[test]
    fn arrays_of_the_wrong_length_are_refused_with_the_field_and_length() {
        let cases = [
            (
                "[[body]]\nname = \"a\"\nposition = [1.0, 0.0, 0.0, 2.0]",
                "position",
                4,
                3,
            ),
            (
                "[[body]]\nname = \"a\"\nrotation = [0, 0, 0.05, 0.9987, 5]",
                "rotation",
                5,
                4,
            ),
            ("[world]\ngravity = [0, -9.81, 0, 100]", "gravity", 4, 3),
            (
                "[[body]]\nname = \"a\"\nbox = [0.1, 0.1, 0.1, 0.1]",
                "box",
                4,
                3,
            ),
            (
                "[[chain]]\nname = \"c\"\nlinks = 2\nlimit = [-0.5, 0.2, 0.5]",
                "limit",
                3,
                2,
            ),
            (
                "[[grid]]\nname = \"g\"\nrows = 2\ncols = 2\norigin = [0, 0]",
                "origin",
                2,
                3,
            ),
        ];
        for (text, field, found, expected) in cases {
            let e = error(text);
            assert!(
                e.contains(&format!("`{field}` has {found} elements"))
                    && e.contains(&format!("expected an array of length {expected}")),
                "{e}"
            );
        }
        let joint = format!(
            "{BOB}[[body]]\nname = \"b\"\n[[joint]]\nname = \"j\"\nkind = \"revolute\"\n\
             body_a = \"bob\"\nbody_b = \"b\"\nlimit = [-0.5, 0.2, 0.5]\n"
        );
        assert!(error(&joint).contains("`limit` has 3 elements"));
        // Arrays of the right length keep their values, integers included.
        let s = Scene::from_toml_str(
            "[world]\ngravity = [0, -9.81, 0]\n[[body]]\nname = \"a\"\nposition = [1, 2.5, -3]\n",
            "s.toml",
        )
        .unwrap();
        assert_eq!(s.world.gravity, Some([0.0, -9.81, 0.0]));
        assert_eq!(s.bodies[0].position, [1.0, 2.5, -3.0]);
    }

    #[test]
    fn numbers_beyond_f32_are_reported_as_written() {
        let e = error("[[body]]\nname = \"a\"\nposition = [1e39, 0, 0]\n");
        assert!(
            e.contains("`position`: 1e39 is beyond the f32 range (max 3.4e38)")
                && !e.contains("inf"),
            "{e}"
        );
        let e = error("[[body]]\nname = \"a\"\nmass = -2.5e40\n");
        assert!(e.contains("`mass`: -2.5e40 is beyond the f32 range"), "{e}");
        // The largest f32 itself is still a number.
        let s = Scene::from_toml_str("[world]\nduration = 3.4e38\n", "s.toml").unwrap();
        assert_eq!(s.world.duration, Some(3.4e38));
    }

    #[test]
    fn joints_can_name_generated_bodies() {
        let text = format!(
            "{BOB}position = [0.6, 0.0, 0.0]\n\
             [[chain]]\nname = \"c\"\nlinks = 5\n\
             [[grid]]\nname = \"g\"\nrows = 3\ncols = 2\norigin = [0, -1, 0]\n\
             [[joint]]\nname = \"tip\"\nkind = \"spherical\"\nbody_a = \"c.link4\"\nbody_b = \"bob\"\n\
             [[joint]]\nname = \"net\"\nkind = \"spherical\"\nbody_a = \"bob\"\nbody_b = \"g.r2c1\"\n"
        );
        let world = Scene::from_toml_str(&text, "s.toml")
            .unwrap()
            .build()
            .unwrap();
        // Bodies: bob, the chain's anchor and 5 links, the grid's 6; joints: the two named
        // ones first, then the chain's 5 and the grid's (rows - 1)(2 cols - 1) = 6.
        assert_eq!((world.body_count(), world.joint_count()), (13, 2 + 5 + 6));
        let names = world.bodies().names();
        assert_eq!((names[0].as_str(), names[6].as_str()), ("bob", "c.link4"));
        assert_eq!(names[12], "g.r2c1");
        let joints = world.joints().names();
        assert_eq!((joints[0].as_str(), joints[1].as_str()), ("tip", "net"));
        assert_eq!(joints[2], "c.joint0");

        let e = error(&text.replace("\"c.link4\"", "\"c.link5\""));
        assert!(
            e.contains("`c.link5`")
                && e.contains(
                    "defined bodies: bob, c.anchor, c.link0 .. c.link4 (chain), \
                     g.r0c0 .. g.r2c1 (grid) (13 in all)"
                ),
            "{e}"
        );
        // A long list is cut short.
        let many: String = (0..20)
            .map(|i| format!("[[body]]\nname = \"b{i}\"\n"))
            .collect();
        let e = error(&format!(
            "{many}[[joint]]\nname = \"j\"\nkind = \"fixed\"\nbody_a = \"b0\"\nbody_b = \"x\"\n"
        ));
        assert!(
            e.contains("defined bodies: b0, b1, b2, b3, b4, b5, b6, b7, ... (20 [[body]] tables) (20 in all)"),
            "{e}"
        );
    }

    #[test]
    fn contradictory_or_invalid_values_are_refused() {
        let cases: [(String, &[&str]); 12] = [
            (
                format!("{BOB}box = [0, 0, 0]\n"),
                &["`box` [0.0, 0.0, 0.0] m", "> 0 m"],
            ),
            (
                format!("{BOB}box = [0.1, -0.1, 0.1]\n"),
                &["`box` [0.1, -0.1, 0.1] m"],
            ),
            (
                "[[grid]]\nname = \"g\"\nrows = 2\ncols = 2\nspacing = 0.0\n".into(),
                &["grid `g`", "spacing = 0", "> 0 m"],
            ),
            (
                "[[grid]]\nname = \"g\"\nrows = 2\ncols = 2\nspacing = -0.1\n".into(),
                &["spacing = -0.1"],
            ),
            (
                "[[grid]]\nname = \"g\"\nrows = 2\ncols = 2\nspacing = nan\n".into(),
                &["spacing = NaN"],
            ),
            (
                "[[grid]]\nname = \"g\"\nrows = 2\ncols = 2\nspacing = inf\n".into(),
                &["spacing = inf"],
            ),
            (
                format!("{BOB}[[body]]\nname = \"w\"\nkind = \"static\"\nmass = 2.0\n"),
                &[
                    "invalid body `w`",
                    "static body",
                    "`mass`",
                    "make the body dynamic",
                ],
            ),
            (
                format!("{BOB}[[body]]\nname = \"w\"\nkind = \"kinematic\"\nmass = -1.0\n"),
                &["kinematic body", "`mass`"],
            ),
            (
                "[world]\nmax_substep = 1e-9\n".into(),
                &["`max_substep`", "1666", "100000", "at least 1.7e-7 s"],
            ),
            (
                joint(
                    "revolute",
                    "axis = [0, 0, 1]\naxis_a = [0, 0, 1]\naxis_b = [0, 0, 1]",
                ),
                &["either `axis`", "not both"],
            ),
            (
                joint("revolute", "axis_a = [0, 0, 1]"),
                &["`axis_a` is given without `axis_b`"],
            ),
            (
                joint("spherical", "axis = [0, 0, 1]"),
                &["a spherical joint has no axis", "remove `axis`"],
            ),
        ];
        for (text, parts) in cases {
            let e = error(&text);
            assert!(parts.iter().all(|p| e.contains(p)), "{parts:?} in {e}");
        }
        assert!(error(&joint("prismatic", "axis_b = [1, 0, 0]"))
            .contains("`axis_b` is given without `axis_a`"));
        assert!(error(&joint("fixed", "axis_b = [1, 0, 0]")).contains("a fixed joint has no axis"));
        // Fields the kind ignores, and numbers single precision cannot hold.
        assert!(
            error(&joint("spherical", "reference_rotation = [0, 0, 0, 1]"))
                .contains("`reference_rotation` would be ignored")
        );
        // Named as written (QA: a zero `axis` was reported as `axis_a`).
        let e = error(&joint("revolute", "axis = [0.0, 0.0, 0.0]"));
        assert!(
            e.contains("`axis` [0.0, 0.0, 0.0] is not a usable direction"),
            "{e}"
        );
        let e = error(&format!(
            "{BOB}[[body]]\nname = \"w\"\nkind = \"static\"\nangular_velocity = [0, 0, 3]\n"
        ));
        assert!(
            e.contains("a static body never moves") && e.contains("`angular_velocity`"),
            "{e}"
        );
        let e = error(&format!("{BOB}mass = 1e-50\n"));
        assert!(e.contains("`mass`: 1e-50 is below the f32 range"), "{e}");
        // The substep cap it suggests is enough: 98039 substeps a frame.
        let s = Scene::from_toml_str("[world]\nmax_substep = 1.7e-7\n", "s.toml").unwrap();
        assert_eq!(
            s.build().unwrap().settings().substeps_for(s.frame_dt()),
            98039
        );
        // Both axes given separately are taken, normalised.
        let world = Scene::from_toml_str(
            &joint("revolute", "axis_a = [0, 0, 2]\naxis_b = [0, 1, 0]"),
            "s.toml",
        )
        .unwrap()
        .build()
        .unwrap();
        assert_eq!(world.joints().axis_a[0], Vec3::Z);
        assert_eq!(world.joints().axis_b[0], Vec3::Y);
    }

    /// A joint of `kind` from a static `ground` to `bob`, with the extra `fields`.
    fn joint(kind: &str, fields: &str) -> String {
        format!(
            "{BOB}[[body]]\nname = \"ground\"\nkind = \"static\"\n[[joint]]\nname = \"j\"\n\
             kind = \"{kind}\"\nbody_a = \"ground\"\nbody_b = \"bob\"\n{fields}\n"
        )
    }

    /// QA (2026-12-05): an empty generator name made bodies `.link0` and joints `.joint0`.
    #[test]
    fn generators_need_a_name() {
        for table in [
            "[[chain]]\nname = \"\"\nlinks = 3\n",
            "[[grid]]\nname = \" \"\nrows = 2\ncols = 2\n",
        ] {
            let e = Scene::from_toml_str(table, "t")
                .and_then(|s| s.build())
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.contains("needs a name"), "{e}");
        }
    }

    #[test]
    fn oversized_generators_are_refused_before_anything_is_allocated() {
        let e = error("[[grid]]\nname = \"g\"\nrows = 100000\ncols = 100000\n");
        assert!(
            e.contains("grid `g`")
                && e.contains("100000 x 100000 would generate 10000000000 bodies")
                && e.contains("50000000"),
            "{e}"
        );
        let e = error("[[chain]]\nname = \"c\"\nlinks = 4294967295\n");
        assert!(
            e.contains("chain `c`") && e.contains("4294967296 bodies and 4294967295 joints"),
            "{e}"
        );
        // Each grid is within the limit, the four together are not.
        let grids: String = (0..4)
            .map(|i| format!("[[grid]]\nname = \"g{i}\"\nrows = 4000\ncols = 4000\n"))
            .collect();
        let e = error(&grids);
        assert!(
            e.starts_with("scene size: 64000000 bodies and 127952004 joints"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_body_and_the_setting() {
        let e = error(&format!(
            "{BOB}[[joint]]\nname = \"j\"\nkind = \"spherical\"\nbody_a = \"bob\"\nbody_b = \"bob\"\n"
        ));
        assert!(e.contains("it connects body `bob` to itself"), "{e}");
        let e = error("[world]\nvelocity_iterations = 100000\n");
        assert!(
            e.contains("`velocity_iterations` = 100000") && !e.contains("position_iterations"),
            "{e}"
        );
        let e = error("[world]\nposition_iterations = 100000\n");
        assert!(e.contains("`position_iterations` = 100000"), "{e}");
    }
}
