//! The on-disk layout: fixed prefix, header body, frame records, footer index, trailer.
//!
//! ```text
//! offset 0   prefix (PREFIX_SIZE = 32 bytes, little-endian)
//!              0..8   magic b"LAVLOG\0\0"
//!              8..10  major version (u16)      10..12 minor version (u16)
//!             12..16  flags (u32, 0)           16..24 header body length (u64)
//!             24..28  crc32 of the header body 28..32 reserved (0)
//! offset 32  header body: JSON of [`Header`], then zero padding to a multiple of 16
//! frames     one record per substep, each starting at a multiple of 16:
//!              record head (RECORD_HEAD_SIZE = 16 bytes)
//!                0..4 kind b"FRAM"   4..8 crc32 over bytes 8..16 and the payload
//!                8..16 payload length (u64)
//!              payload: rkyv archive of a frame (root at its end), zero padding to 16
//! footer     (written by `finish`) one record of kind b"FOOT" whose payload is an rkyv
//!            archive of the frame index (offsets + per-frame summaries)
//! trailer    (TRAILER_SIZE = 16 bytes) footer record offset (u64), magic b"LAVEND\0\0"
//! ```
//!
//! Because every record is 16-byte aligned in the file and the file is mapped at a page
//! boundary, every archive is read in place with its natural alignment.

use rkyv::with::{InlineAsBox, Map};
use serde::{Deserialize, Serialize};

/// First eight bytes of every log.
pub const MAGIC: [u8; 8] = *b"LAVLOG\0\0";
/// Last eight bytes of a finished log.
pub const TRAILER_MAGIC: [u8; 8] = *b"LAVEND\0\0";
/// Major format version: readers refuse other majors.
pub const FORMAT_MAJOR: u16 = 3;
/// Minor format version: additions that older readers can ignore.
pub const FORMAT_MINOR: u16 = 0;
/// Encoded size of the fixed prefix.
pub const PREFIX_SIZE: usize = 32;
/// Encoded size of a record head (kind, checksum, length).
pub const RECORD_HEAD_SIZE: usize = 16;
/// Encoded size of the trailer (footer offset, magic).
pub const TRAILER_SIZE: usize = 16;
/// Alignment of every record in the file.
pub const RECORD_ALIGN: usize = 16;
/// Record kind of a frame.
pub const KIND_FRAME: [u8; 4] = *b"FRAM";
/// Record kind of the footer index.
pub const KIND_FOOTER: [u8; 4] = *b"FOOT";

/// Rounds `n` up to a multiple of [`RECORD_ALIGN`].
pub const fn align16(n: usize) -> usize {
    (n + RECORD_ALIGN - 1) & !(RECORD_ALIGN - 1)
}

/// Names of the eight diagnostic columns, in order: the engine's `COLUMN_NAMES` (used for
/// reports, `diff` fields and the HDF5 `columns` attribute).
pub const DIAGNOSTIC_COLUMNS: [&str; 8] = lavender_engine::COLUMN_NAMES;
// The column indices are the engine's (`lavender_engine::diagnostics`), under the names
// the replay code has used since the log format's first version.
use lavender_engine::diagnostics as columns;
/// Column of the anchor error norm (`lavender_engine::diagnostics::ANCHOR_ERROR_NORM`).
pub const COL_ANCHOR_ERROR: usize = columns::ANCHOR_ERROR_NORM;
/// Column of the angular error (`lavender_engine::diagnostics::ANGULAR_ERROR`).
pub const COL_ANGULAR_ERROR: usize = columns::ANGULAR_ERROR;
/// Column of the limit violation (`lavender_engine::diagnostics::LIMIT_VIOLATION`).
pub const COL_LIMIT_VIOLATION: usize = columns::LIMIT_VIOLATION;
/// Column of the anchor relative speed (`lavender_engine::diagnostics::ANCHOR_RELATIVE_SPEED`).
pub const COL_ANCHOR_SPEED: usize = columns::ANCHOR_RELATIVE_SPEED;
/// Column of the joint coordinate (`lavender_engine::diagnostics::JOINT_COORDINATE`).
pub const COL_JOINT_COORDINATE: usize = columns::JOINT_COORDINATE;

/// Field names of a pose row.
pub const POSE_FIELDS: [&str; 7] = [
    "position.x",
    "position.y",
    "position.z",
    "quaternion.x",
    "quaternion.y",
    "quaternion.z",
    "quaternion.w",
];
/// Field names of a velocity row.
pub const VELOCITY_FIELDS: [&str; 6] = [
    "velocity.x",
    "velocity.y",
    "velocity.z",
    "angular_velocity.x",
    "angular_velocity.y",
    "angular_velocity.z",
];

/// The fixed-size prefix that opens every log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// Major format version.
    pub major: u16,
    /// Minor format version.
    pub minor: u16,
    /// Reserved flags (0).
    pub flags: u32,
    /// Length of the JSON header body that follows the prefix.
    pub header_len: u64,
    /// crc32 of the header body.
    pub header_crc: u32,
}

impl Prefix {
    /// Encodes the prefix (little-endian).
    pub fn encode(&self) -> [u8; PREFIX_SIZE] {
        let mut b = [0u8; PREFIX_SIZE];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.major.to_le_bytes());
        b[10..12].copy_from_slice(&self.minor.to_le_bytes());
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..24].copy_from_slice(&self.header_len.to_le_bytes());
        b[24..28].copy_from_slice(&self.header_crc.to_le_bytes());
        b
    }

    /// Decodes a prefix. The caller checks the magic first (see [`check_magic`]).
    pub fn decode(b: &[u8; PREFIX_SIZE]) -> Prefix {
        Prefix {
            major: u16::from_le_bytes([b[8], b[9]]),
            minor: u16::from_le_bytes([b[10], b[11]]),
            flags: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
            header_len: u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")),
            header_crc: u32::from_le_bytes(b[24..28].try_into().expect("4 bytes")),
        }
    }
}

/// True when `bytes` starts with the full log magic.
pub fn check_magic(bytes: &[u8]) -> bool {
    bytes.len() >= MAGIC.len() && bytes[..MAGIC.len()] == MAGIC
}

/// World settings the run used, copied from the engine without depending on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldSettingsRecord {
    /// Frame time step in seconds.
    pub dt: f64,
    /// Maximum substep length in seconds.
    pub max_substep: f64,
    /// Velocity solver iterations per substep.
    pub velocity_iterations: u32,
    /// Position (relax) iterations per substep.
    pub position_iterations: u32,
    /// Gravity vector.
    pub gravity: [f32; 3],
}

/// The engine's default settings at frames of 1/60 s (a header that valid settings need:
/// [`Header::validate`] refuses a zero `dt`).
impl Default for WorldSettingsRecord {
    fn default() -> Self {
        let s = lavender_engine::Settings::default();
        WorldSettingsRecord {
            dt: f64::from(1.0f32 / 60.0),
            max_substep: f64::from(s.max_substep),
            velocity_iterations: s.velocity_iterations,
            position_iterations: s.position_iterations,
            gravity: s.gravity.to_array(),
        }
    }
}

/// Everything known about a run before its first substep.
///
/// Stored as JSON after the fixed prefix, so fields can be added in minor versions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Header {
    /// Number of bodies in every frame.
    pub body_count: usize,
    /// Body names: empty, or exactly `body_count` names.
    #[serde(default)]
    pub body_names: Vec<String>,
    /// Number of joints in every frame.
    pub joint_count: usize,
    /// Joint names: empty, or exactly `joint_count` names.
    #[serde(default)]
    pub joint_names: Vec<String>,
    /// World settings of the run.
    pub world: WorldSettingsRecord,
    /// Hash of the scene description (computed by the engine).
    pub scene_hash: u64,
    /// Engine version that recorded the run.
    #[serde(default)]
    pub engine_version: String,
    /// Target features of the recording build (e.g. "+avx2,+fma").
    #[serde(default)]
    pub target_features: String,
    /// Free-form scene description (the scene TOML, so a run can be rebuilt and resumed).
    #[serde(default)]
    pub scene: String,
    /// If set, the writer runs the spike finder with these parameters on every frame and
    /// stores the onsets in the footer (see [`crate::scrub`]). The recorder sets the defaults.
    #[serde(default)]
    pub spike_index: Option<crate::scrub::SpikeParams>,
}

/// What a run recorded before `Settings::curvature` existed did: no curvature offsets.
const CURVATURE_BEFORE_THE_SETTING: bool = false;

impl Header {
    /// Substep length, s: the frame `dt` split into `ceil(dt / max_substep)` equal
    /// substeps, as the engine splits it.
    pub fn substep_length(&self) -> f64 {
        let (dt, max) = (self.world.dt as f32, self.world.max_substep as f32);
        if !(dt > 0.0 && max > 0.0) {
            return self.world.dt;
        }
        let settings = lavender_engine::Settings {
            max_substep: max,
            ..Default::default()
        };
        f64::from(dt / settings.substeps_for(dt) as f32)
    }

    /// Bytes of one frame's poses, velocities and diagnostics (f32 each) for these counts.
    pub fn frame_value_bytes(&self) -> usize {
        (self.body_count * (7 + 6) + self.joint_count * 8) * 4
    }

    /// Split-impulse bias passes per substep of the recorded run: the header's scene names
    /// them only when they differ from one per velocity pass (`Settings::bias_iterations`).
    pub fn bias_passes(&self) -> u32 {
        lavender_engine::Scene::from_toml_str(&self.scene, "the log header")
            .ok()
            .and_then(|s| s.world.bias_iterations)
            .unwrap_or(self.world.velocity_iterations)
    }

    /// Whether the recorded run solved chains of joints directly (`Settings::chain_solve`;
    /// the header's scene names it only when on).
    pub fn chain_solve(&self) -> bool {
        lavender_engine::Scene::from_toml_str(&self.scene, "the log header")
            .ok()
            .and_then(|s| s.world.chain_solve)
            .unwrap_or(false)
    }

    /// Whether the recorded run let islands sleep (`Settings::sleeping`; the header's scene
    /// names it only when on, or when the scene named it).
    pub fn sleeping(&self) -> bool {
        self.scene_world(|w| w.sleeping).unwrap_or(false)
    }

    /// Whether the recorded run warm-started its velocity passes (`Settings::warm_starting`;
    /// on unless the header's scene says otherwise).
    pub fn warm_starting(&self) -> bool {
        self.scene_world(|w| w.warm_starting).unwrap_or(true)
    }

    /// Whether the recorded run integrated the gyroscopic term (`Settings::gyroscopic`; on
    /// unless the header's scene says otherwise).
    pub fn gyroscopic(&self) -> bool {
        self.scene_world(|w| w.gyroscopic).unwrap_or(true)
    }

    /// Whether the recorded run gave its velocity rows curvature offsets
    /// (`Settings::curvature`). Recorders write the setting always; a header without it is
    /// from before the offsets existed, whose runs had none.
    pub fn curvature(&self) -> bool {
        self.scene_world(|w| w.curvature)
            .unwrap_or(CURVATURE_BEFORE_THE_SETTING)
    }

    /// Whether the recorded run gave limits their rows speculatively
    /// (`Settings::speculative_limits`; off unless the header's scene says otherwise).
    pub fn speculative_limits(&self) -> bool {
        self.scene_world(|w| w.speculative_limits).unwrap_or(false)
    }

    /// The header's scene (its TOML parsed) with the settings a recorder of an earlier
    /// version left out filled in as that version ran: `curvature = false`
    /// ([`Header::curvature`]).
    pub fn recorded_scene(&self) -> Result<lavender_engine::Scene, lavender_engine::EngineError> {
        let mut scene =
            lavender_engine::Scene::from_toml_str(&self.scene, "the log header's scene")?;
        scene
            .world
            .curvature
            .get_or_insert(CURVATURE_BEFORE_THE_SETTING);
        Ok(scene)
    }

    /// Each joint's type, from the world the header's scene builds (`None` where it cannot
    /// be built or its joints are not the log's). Built quietly: the scene's build-time
    /// warnings were the recorded run's to give (QA 2026-12-07: `scrub --joint` repeated
    /// them on reading a log).
    pub fn joint_kinds(&self) -> Option<Vec<lavender_engine::JointKind>> {
        let scene = self.recorded_scene().ok()?;
        let quiet = tracing::subscriber::NoSubscriber::default();
        let world = tracing::subscriber::with_default(quiet, || scene.build()).ok()?;
        let kinds = world.joints().kinds();
        (kinds.len() == self.joint_count).then(|| kinds.to_vec())
    }

    /// Every setting of the recorded run that shapes its results: the header's scene
    /// `[world]` over the defaults, with the header's own dt-related fields (max substep,
    /// iterations, gravity) on top. `threads` and `solver_path` are left at their defaults:
    /// they change no bit. A header without a readable scene gives the defaults with the
    /// header's fields.
    pub fn settings(&self) -> lavender_engine::Settings {
        let base = self
            .recorded_scene()
            .map(|s| s.settings())
            .unwrap_or_default();
        lavender_engine::Settings {
            max_substep: self.world.max_substep as f32,
            velocity_iterations: self.world.velocity_iterations,
            position_iterations: self.world.position_iterations,
            gravity: self.world.gravity.into(),
            threads: lavender_engine::Settings::default().threads,
            solver_path: lavender_engine::Settings::default().solver_path,
            ..base
        }
    }

    fn scene_world<T>(
        &self,
        field: impl Fn(&lavender_engine::scene::SceneWorld) -> Option<T>,
    ) -> Option<T> {
        lavender_engine::Scene::from_toml_str(&self.scene, "the log header")
            .ok()
            .and_then(|s| field(&s.world))
    }

    /// Checks that the names match the counts.
    pub fn validate(&self) -> Result<(), String> {
        if !self.body_names.is_empty() && self.body_names.len() != self.body_count {
            return Err(format!(
                "{} body names for {} bodies (give none or one per body)",
                self.body_names.len(),
                self.body_count
            ));
        }
        if !self.joint_names.is_empty() && self.joint_names.len() != self.joint_count {
            return Err(format!(
                "{} joint names for {} joints (give none or one per joint)",
                self.joint_names.len(),
                self.joint_count
            ));
        }
        if self.body_count > u32::MAX as usize || self.joint_count > u32::MAX as usize {
            return Err("more than u32::MAX bodies or joints".into());
        }
        // Settings no run was made with (QA 2026-12-07: a header rewritten with `dt = -1`
        // and its checksum fixed was exported as such; `velocity_iterations = 0` resumed).
        let w = &self.world;
        if !(w.dt.is_finite() && w.dt > 0.0) {
            return Err(format!("dt = {} s is not a positive time step", w.dt));
        }
        if !(w.max_substep.is_finite() && w.max_substep > 0.0) {
            return Err(format!(
                "max_substep = {} s is not a positive substep",
                w.max_substep
            ));
        }
        if w.velocity_iterations == 0 {
            return Err("velocity_iterations = 0: every run solves at least one pass".into());
        }
        if !w.gravity.iter().all(|g| g.is_finite()) {
            return Err(format!("gravity {:?} is not finite", w.gravity));
        }
        if let Some(p) = &self.spike_index {
            if let Some(c) = p.columns.iter().find(|&&c| c >= DIAGNOSTIC_COLUMNS.len()) {
                return Err(format!(
                    "spike index column {c} does not exist (columns are 0 to 7)"
                ));
            }
        }
        Ok(())
    }

    /// Name of body `i` (its recorded name, or `body{i}`).
    pub fn body_name(&self, i: usize) -> String {
        self.body_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("body{i}"))
    }

    /// Name of joint `j` (its recorded name, or `joint{j}`).
    pub fn joint_name(&self, j: usize) -> String {
        self.joint_names
            .get(j)
            .cloned()
            .unwrap_or_else(|| format!("joint{j}"))
    }

    /// The joint `selector` names: a name as [`Header::joint_name`] gives it, else an index
    /// `0..joint_count` written as a whole number, or `-1` to `-joint_count` counting from
    /// the end as Python does (a joint named `"3"` is found by its name).
    pub fn find_joint(&self, selector: &str) -> Option<usize> {
        find(&self.joint_names, self.joint_count, "joint", selector)
    }

    /// The body `selector` names, as [`Header::find_joint`] finds a joint: a name as
    /// [`Header::body_name`] gives it, else an index, or `-1` to `-body_count` from the end.
    pub fn find_body(&self, selector: &str) -> Option<usize> {
        find(&self.body_names, self.body_count, "body", selector)
    }

    /// The "did you mean" clause for an unknown joint `text` ([`names_like_clause`]): up to
    /// `n` joint names containing it, ignoring case, in joint order, and how many more.
    pub fn joints_like_clause(&self, text: &str, n: usize) -> String {
        names_like_clause((0..self.joint_count).map(|j| self.joint_name(j)), text, n)
    }
}

/// The item of `count` (named `names`, or `{unnamed}{i}` when the header has no names) that
/// `selector` names: [`Header::find_joint`], [`Header::find_body`].
fn find(names: &[String], count: usize, unnamed: &str, selector: &str) -> Option<usize> {
    let by_name = if names.is_empty() {
        (selector
            .strip_prefix(unnamed)
            .and_then(|i| index_below(i, count)))
        .filter(|&i| format!("{unnamed}{i}") == selector)
    } else {
        names.iter().position(|name| name == selector)
    };
    let from_end = || {
        let k = index_below(selector.strip_prefix('-')?, count + 1)?;
        (k > 0).then(|| count - k)
    };
    by_name
        .or_else(|| index_below(selector, count))
        .or_else(from_end)
}

/// Up to `n` of `names` containing `text`, ignoring case, in their order: the "did you mean"
/// of an unknown name (`lavender scrub --joint`, Python's body and joint arguments).
pub fn names_like<S: AsRef<str>>(
    names: impl IntoIterator<Item = S>,
    text: &str,
    n: usize,
) -> Vec<S> {
    let text = text.to_lowercase();
    names
        .into_iter()
        .filter(|name| name.as_ref().to_lowercase().contains(&text))
        .take(n)
        .collect()
}

/// The "did you mean" clause of an unknown name: `"; names containing it: a, b and 25
/// more"` (up to `n` named, the count of the rest), or empty where none contains `text`.
pub fn names_like_clause<S: AsRef<str>>(
    names: impl IntoIterator<Item = S>,
    text: &str,
    n: usize,
) -> String {
    let like = names_like(names, text, usize::MAX);
    if like.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = like.iter().take(n).map(AsRef::as_ref).collect();
    let rest = like.len() - shown.len();
    format!(
        "; names containing it: {}{}",
        shown.join(", "),
        if rest > 0 {
            format!(" and {rest} more")
        } else {
            String::new()
        }
    )
}

/// `text` as a whole number below `len` (digits only: no sign, no spaces).
fn index_below(text: &str, len: usize) -> Option<usize> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits
        .then(|| text.parse::<usize>().ok())
        .flatten()
        .filter(|&j| j < len)
}

/// The largest value of one diagnostic column in a frame and the joint that holds it.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct ColumnMax {
    /// The maximum; NaN if any joint's value is NaN (NaN is never hidden by `max`), 0 with no joints.
    pub value: f32,
    /// The joint holding the maximum (the first NaN joint if `value` is NaN); `None` with no
    /// joints, or when the maximum is 0 (no joint has the residual to point at).
    pub joint: Option<u32>,
}

impl ColumnMax {
    const EMPTY: ColumnMax = ColumnMax {
        value: 0.0,
        joint: None,
    };

    #[inline]
    fn push(&mut self, j: u32, v: f32) {
        match self.joint {
            None => {
                *self = ColumnMax {
                    value: v,
                    joint: Some(j),
                }
            }
            Some(_) if self.value.is_nan() => {}
            Some(_) if v.is_nan() || v > self.value => {
                *self = ColumnMax {
                    value: v,
                    joint: Some(j),
                }
            }
            Some(_) => {}
        }
    }
}

/// Per-frame summary, computed by the writer and stored both in the frame and in the footer.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Serialize,
    Deserialize,
    rkyv::Archive,
    rkyv::Serialize,
    rkyv::Deserialize,
)]
pub struct FrameSummary {
    /// Substep number.
    pub substep: u64,
    /// Simulation time after the substep.
    pub time: f64,
    /// Total energy after the substep.
    pub total_energy: f64,
    /// Largest anchor error norm (column 3).
    pub anchor_error: ColumnMax,
    /// Largest angular error (column 4).
    pub angular_error: ColumnMax,
    /// Largest limit violation (column 5).
    pub limit_violation: ColumnMax,
    /// First joint with a non-finite value in any diagnostic column.
    pub first_non_finite_joint: Option<u32>,
    /// First body with a non-finite pose or velocity component.
    pub first_non_finite_body: Option<u32>,
    /// True if anything in the frame (diagnostics, poses, velocities, energy) is non-finite.
    /// Not "the run went non-finite here": see [`FrameSummary::state_non_finite`].
    pub non_finite: bool,
}

impl FrameSummary {
    /// Whether the run's state went non-finite at this substep: a body's pose or velocity,
    /// what the engine stops a step on (`World::check_finite`). [`non_finite`] also counts
    /// the energy and the joints' diagnostics, which can overflow f32 while the state stays
    /// finite and the run goes on (a body at 1e20 m/s has an infinite kinetic energy; QA
    /// 2026-12-07: resume refused every substep of such a run).
    ///
    /// [`non_finite`]: FrameSummary::non_finite
    pub fn state_non_finite(&self) -> bool {
        self.first_non_finite_body.is_some()
    }
}

#[inline]
fn all_finite(row: &[f32]) -> bool {
    // `fold` over `&` keeps this branch-free so it vectorises.
    row.iter().fold(true, |acc, v| acc & v.is_finite())
}

/// Joints per block of [`FrameSummary::compute`]'s search for the joint holding a maximum.
const SUMMARY_BLOCK: usize = 64;

/// The lane-wise maximum of whole diagnostic rows (every column at once: the loop is a run
/// of vector max instructions). For finite rows only (NaN is not propagated).
fn row_max(rows: &[[f32; 8]]) -> [f32; 8] {
    rows.iter().fold([f32::NEG_INFINITY; 8], |mut m, row| {
        for (m, &v) in m.iter_mut().zip(row) {
            *m = if v > *m { v } else { *m };
        }
        m
    })
}

impl FrameSummary {
    /// Computes the summary of one frame.
    ///
    /// When every diagnostic is finite (the usual frame): the maximum of each column over all
    /// joints in one vectorised pass, then the first joint holding it (first block of
    /// `SUMMARY_BLOCK` (64) joints whose maximum equals it, then the first joint in that block):
    /// the same joint and value as pushing the joints one by one into a [`ColumnMax`]
    /// (`compute_joint_by_joint`, the reference, tested), in a fifth of the time. Otherwise
    /// the joint-by-joint fold, which keeps the first NaN.
    pub fn compute(input: &FrameInput<'_>) -> FrameSummary {
        let rows = input.diagnostics;
        let columns = [COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION];
        let finite = all_finite(rows.as_flattened());
        let maxima = if finite && !rows.is_empty() {
            let max = row_max(rows);
            // The first joint whose value equals each maximum (-0.0 == 0.0, as the `>` of the
            // joint-by-joint fold treats them): in the first block whose maximum is it.
            let mut holder = [None; 3];
            for (b, block) in rows.chunks(SUMMARY_BLOCK).enumerate() {
                let block_max = row_max(block);
                for (holder, &c) in holder.iter_mut().zip(&columns) {
                    if holder.is_none() && block_max[c] == max[c] {
                        let k = block.iter().position(|row| row[c] == max[c]);
                        *holder = k.map(|k| b * SUMMARY_BLOCK + k);
                    }
                }
                if holder.iter().all(Option::is_some) {
                    break;
                }
            }
            std::array::from_fn(|i| {
                let j = holder[i].expect("every maximum is some joint's value");
                ColumnMax {
                    value: rows[j][columns[i]],
                    joint: Some(j as u32),
                }
            })
        } else {
            Self::column_maxima_joint_by_joint(rows, columns)
        };
        let first_joint = if finite {
            None
        } else {
            rows.iter()
                .position(|row| !all_finite(row))
                .map(|j| j as u32)
        };
        Self::assemble(input, maxima, first_joint)
    }

    /// The maxima of `columns`, each joint pushed in turn into a [`ColumnMax`].
    fn column_maxima_joint_by_joint(rows: &[[f32; 8]], columns: [usize; 3]) -> [ColumnMax; 3] {
        let mut maxima = [ColumnMax::EMPTY; 3];
        for (j, row) in rows.iter().enumerate() {
            for (m, &c) in maxima.iter_mut().zip(&columns) {
                m.push(j as u32, row[c]);
            }
        }
        maxima
    }

    /// [`FrameSummary::compute`] with every column maximum found joint by joint (the
    /// reference).
    #[cfg(test)]
    pub(crate) fn compute_joint_by_joint(input: &FrameInput<'_>) -> FrameSummary {
        let rows = input.diagnostics;
        let columns = [COL_ANCHOR_ERROR, COL_ANGULAR_ERROR, COL_LIMIT_VIOLATION];
        let first_joint = rows
            .iter()
            .position(|row| !all_finite(row))
            .map(|j| j as u32);
        let maxima = Self::column_maxima_joint_by_joint(rows, columns);
        Self::assemble(input, maxima, first_joint)
    }

    fn assemble(
        input: &FrameInput<'_>,
        [anchor, angular, limit]: [ColumnMax; 3],
        first_joint: Option<u32>,
    ) -> FrameSummary {
        let mut first_body = None;
        if !(all_finite(input.poses.as_flattened()) && all_finite(input.velocities.as_flattened()))
        {
            first_body = input
                .poses
                .iter()
                .zip(input.velocities)
                .position(|(p, v)| !(all_finite(p) && all_finite(v)))
                .map(|b| b as u32);
        }
        let non_finite =
            first_joint.is_some() || first_body.is_some() || !input.total_energy.is_finite();
        // A maximum of 0 is held by every joint: name none.
        let [anchor, angular, limit] = [anchor, angular, limit].map(|m| ColumnMax {
            joint: m.joint.filter(|_| m.value != 0.0),
            ..m
        });
        FrameSummary {
            substep: input.substep,
            time: input.time,
            total_energy: input.total_energy,
            anchor_error: anchor,
            angular_error: angular,
            limit_violation: limit,
            first_non_finite_joint: first_joint,
            first_non_finite_body: first_body,
            non_finite,
        }
    }
}

/// One substep's data, as supplied by the caller of [`crate::LogWriter::append`].
#[derive(Clone, Copy, Debug)]
pub struct FrameInput<'a> {
    /// Substep number (strictly increasing within a log).
    pub substep: u64,
    /// Simulation time after the substep (non-decreasing within a log).
    pub time: f64,
    /// Per body: position xyz, quaternion xyzw.
    pub poses: &'a [[f32; 7]],
    /// Per body: linear xyz, angular xyz.
    pub velocities: &'a [[f32; 6]],
    /// Per joint: the eight diagnostic columns (see [`DIAGNOSTIC_COLUMNS`]).
    pub diagnostics: &'a [[f32; 8]],
    /// Opaque engine warm-start state, at every frame or only at keyframes.
    pub solver_state: Option<&'a [f32]>,
    /// Total energy after the substep.
    pub total_energy: f64,
    /// Hash of the full simulation state after this substep (computed by the engine).
    pub state_hash: u64,
}

impl FrameInput<'_> {
    /// Checks that the arrays hold one row per body and per joint of the log's header.
    pub(crate) fn check_shape(
        &self,
        body_count: usize,
        joint_count: usize,
    ) -> crate::error::Result<()> {
        let counts = [
            ("poses", body_count, self.poses.len()),
            ("velocities", body_count, self.velocities.len()),
            ("diagnostics", joint_count, self.diagnostics.len()),
        ];
        for (field, expected, found) in counts {
            if expected != found {
                return Err(crate::error::ReplayError::LengthMismatch {
                    substep: self.substep,
                    field,
                    expected,
                    found,
                });
            }
        }
        Ok(())
    }

    /// Checks that this frame may follow the frame `(substep, time)` of the same log (none:
    /// the first): substeps increase, times do not decrease and are finite.
    pub(crate) fn check_follows(&self, prev: Option<(u64, f64)>) -> crate::error::Result<()> {
        let ordered = prev.is_none_or(|(s, t)| self.substep > s && self.time >= t);
        if ordered && self.time.is_finite() {
            return Ok(());
        }
        let (prev_substep, prev_time) = prev.unwrap_or((0, f64::NAN));
        Err(crate::error::ReplayError::OutOfOrder {
            substep: self.substep,
            time: self.time,
            prev_substep,
            prev_time,
        })
    }
}

/// The archived form of a frame. The writer serialises it straight from borrowed slices
/// (no copy into owned vectors); the reader reads `ArchivedFrameRecord` in place.
#[derive(rkyv::Archive, rkyv::Serialize)]
pub(crate) struct FrameRecord<'a> {
    pub substep: u64,
    pub time: f64,
    pub total_energy: f64,
    pub state_hash: u64,
    pub summary: FrameSummary,
    #[rkyv(with = InlineAsBox)]
    pub poses: &'a [[f32; 7]],
    #[rkyv(with = InlineAsBox)]
    pub velocities: &'a [[f32; 6]],
    #[rkyv(with = InlineAsBox)]
    pub diagnostics: &'a [[f32; 8]],
    #[rkyv(with = Map<InlineAsBox>)]
    pub solver_state: Option<&'a [f32]>,
}

/// One entry of the frame index: where a frame is and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, rkyv::Archive, rkyv::Serialize, rkyv::Deserialize)]
pub struct FrameMeta {
    /// Byte offset of the frame's record head in the file.
    pub offset: u64,
    /// Payload length in bytes.
    pub len: u64,
    /// Hash of the simulation state after the substep.
    pub state_hash: u64,
    /// Hash of the frame's diagnostics ([`lavender_engine::diagnostics_hash`]): equal states
    /// recorded by builds whose diagnostics differ still compare different.
    pub diagnostics_hash: u64,
    /// True if the frame carries solver state (a keyframe).
    pub has_solver_state: bool,
    /// The frame's summary (substep, time, maxima, non-finite flags).
    pub summary: FrameSummary,
}

/// The footer payload: the whole frame index.
#[derive(rkyv::Archive, rkyv::Serialize)]
pub(crate) struct FooterRecord<'a> {
    pub body_count: u64,
    pub joint_count: u64,
    #[rkyv(with = InlineAsBox)]
    pub frames: &'a [FrameMeta],
    /// The spike index: onsets found by the writer with the header's `spike_index`
    /// parameters, earliest first (empty without them).
    #[rkyv(with = InlineAsBox)]
    pub spikes: &'a [crate::scrub::Spike],
}

/// Reads a record head: (kind, crc, payload length).
pub(crate) fn decode_record_head(b: &[u8]) -> ([u8; 4], u32, u64) {
    let kind = [b[0], b[1], b[2], b[3]];
    let crc = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let len = u64::from_le_bytes(b[8..16].try_into().expect("8 bytes"));
    (kind, crc, len)
}

/// Checksum of a record: crc32 over the length field and the payload.
pub(crate) fn record_crc(len_field: &[u8], payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(len_field);
    h.update(payload);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header whose checksum holds but whose settings no run was made with is refused
    /// (QA 2026-12-07: `dt = -1` exported, `velocity_iterations = 0` resumed).
    #[test]
    fn a_header_with_settings_no_run_has_is_invalid() {
        let good = crate::testutil::header(2, 2);
        assert_eq!(good.validate(), Ok(()));
        let with = |f: &dyn Fn(&mut WorldSettingsRecord)| {
            let mut h = good.clone();
            f(&mut h.world);
            h.validate().unwrap_err()
        };
        assert!(with(&|w| w.dt = -1.0).contains("dt = -1 s"));
        assert!(with(&|w| w.dt = f64::NAN).contains("dt = NaN"));
        assert!(with(&|w| w.max_substep = 0.0).contains("max_substep = 0 s"));
        assert!(with(&|w| w.velocity_iterations = 0).contains("velocity_iterations = 0"));
        assert!(with(&|w| w.gravity[1] = f32::INFINITY).contains("not finite"));
        // No projection pass is a run's choice.
        let mut h = good.clone();
        h.world.position_iterations = 0;
        assert_eq!(h.validate(), Ok(()));
    }

    #[test]
    fn joints_are_found_by_name_or_index() {
        let mut h = crate::testutil::header(1, 12);
        assert_eq!(h.find_joint("hinge3"), Some(3));
        assert_eq!(h.find_joint("11"), Some(11));
        assert_eq!(h.find_joint("12"), None, "12 joints: 0 to 11");
        assert_eq!(h.find_joint("-1"), Some(11));
        assert_eq!(h.find_joint("-12"), Some(0));
        assert_eq!(h.find_joint("-13"), None);
        assert_eq!(h.find_joint("-0"), None);
        assert_eq!(h.find_joint("--1"), None);
        assert_eq!(h.find_joint(" 3"), None);
        assert_eq!(h.find_joint("hinge"), None);
        assert_eq!(
            h.joints_like_clause("HINGE1", 3),
            "; names containing it: hinge1, hinge10, hinge11"
        );
        assert_eq!(
            h.joints_like_clause("HINGE1", 2),
            "; names containing it: hinge1, hinge10 and 1 more"
        );
        assert_eq!(h.joints_like_clause("elbow", 3), "");
        // A joint named as a number is found by its name first.
        h.joint_names[5] = "3".into();
        assert_eq!(h.find_joint("3"), Some(5));
        // Without recorded names, joints are `joint{j}`.
        h.joint_names.clear();
        assert_eq!(h.find_joint("joint7"), Some(7));
        assert_eq!(h.find_joint("joint07"), None);
        assert_eq!(h.find_joint("7"), Some(7));
    }

    #[test]
    fn bodies_are_found_by_name_or_index() {
        let mut h = crate::testutil::header(4, 1);
        let second = h.body_names[1].clone();
        assert_eq!(h.find_body(&second), Some(1));
        assert_eq!(h.find_body("3"), Some(3));
        assert_eq!(h.find_body("4"), None, "4 bodies: 0 to 3");
        assert_eq!(h.find_body("-1"), Some(3));
        assert_eq!(h.find_body("-5"), None);
        assert_eq!(h.find_body("nobody"), None);
        h.body_names.clear();
        assert_eq!(h.find_body("body2"), Some(2));
        assert_eq!(h.find_body("joint2"), None);
    }
    use proptest::prelude::*;

    /// A finite diagnostic value: mostly from a few values (ties, signed zeros), some
    /// arbitrary.
    fn value() -> impl Strategy<Value = f32> {
        prop_oneof![
            2 => prop::sample::select(vec![0.0f32, -0.0, 1e-3, 0.5, 2.0]),
            1 => -10.0f32..10.0,
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The vectorised summary names the same joints, values and non-finite flags as the
        /// joint-by-joint fold, whatever ties, signed zeros, block boundaries or (in a third
        /// of the cases) a non-finite value somewhere.
        #[test]
        fn summary_equals_the_joint_by_joint_fold(
            mut rows in prop::collection::vec(prop::array::uniform8(value()), 0..300),
            bad in prop::option::weighted(
                0.33,
                (any::<prop::sample::Index>(), 0usize..8, prop::sample::select(
                    vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY],
                )),
            ),
        ) {
            if let (Some((joint, column, v)), false) = (bad, rows.is_empty()) {
                let j = joint.index(rows.len());
                rows[j][column] = v;
            }
            let input = FrameInput {
                substep: 3,
                time: 0.5,
                poses: &[],
                velocities: &[],
                diagnostics: &rows,
                solver_state: None,
                total_energy: 1.0,
                state_hash: 0,
            };
            let (fast, reference) =
                (FrameSummary::compute(&input), FrameSummary::compute_joint_by_joint(&input));
            let bits = |m: &ColumnMax| (m.value.to_bits(), m.joint);
            prop_assert_eq!(bits(&fast.anchor_error), bits(&reference.anchor_error));
            prop_assert_eq!(bits(&fast.angular_error), bits(&reference.angular_error));
            prop_assert_eq!(bits(&fast.limit_violation), bits(&reference.limit_violation));
            prop_assert_eq!(fast.first_non_finite_joint, reference.first_non_finite_joint);
            prop_assert_eq!(fast.non_finite, reference.non_finite);
        }
    }

    #[test]
    fn prefix_encoded_size_is_the_constant() {
        let p = Prefix {
            major: FORMAT_MAJOR,
            minor: FORMAT_MINOR,
            flags: 0,
            header_len: 1234,
            header_crc: 0xdead_beef,
        };
        let bytes = p.encode();
        assert_eq!(bytes.len(), PREFIX_SIZE);
        assert_eq!(PREFIX_SIZE, 32);
        assert_eq!(PREFIX_SIZE % RECORD_ALIGN, 0);
        assert_eq!(RECORD_HEAD_SIZE % RECORD_ALIGN, 0);
        assert_eq!(TRAILER_SIZE, 16);
        assert!(check_magic(&bytes));
        assert_eq!(Prefix::decode(&bytes), p);
        // Little-endian, at fixed offsets.
        assert_eq!(&bytes[8..10], &[3, 0]);
        assert_eq!(&bytes[16..18], &[0xd2, 0x04]);
    }

    #[test]
    fn summary_notices_nan_and_reports_first_joint() {
        let diags = [
            [0.0, 0.0, 0.0, 0.5, 0.1, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, f32::NAN, 0.3, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 2.0, 0.2, 0.7, 0.0, 0.0],
        ];
        let input = FrameInput {
            substep: 1,
            time: 0.1,
            poses: &[],
            velocities: &[],
            diagnostics: &diags,
            solver_state: None,
            total_energy: 1.0,
            state_hash: 0,
        };
        let s = FrameSummary::compute(&input);
        assert!(s.anchor_error.value.is_nan());
        assert_eq!(s.anchor_error.joint, Some(1));
        assert_eq!(
            s.angular_error,
            ColumnMax {
                value: 0.3,
                joint: Some(1)
            }
        );
        assert_eq!(
            s.limit_violation,
            ColumnMax {
                value: 0.7,
                joint: Some(2)
            }
        );
        assert_eq!(s.first_non_finite_joint, Some(1));
        assert!(s.non_finite);
    }

    #[test]
    fn a_maximum_of_zero_names_no_joint() {
        let diags = [[0.0, 0.0, 0.0, 1e-3, 0.0, 0.0, 0.0, 0.0]; 3];
        let input = FrameInput {
            substep: 0,
            time: 0.0,
            poses: &[],
            velocities: &[],
            diagnostics: &diags,
            solver_state: None,
            total_energy: 1.0,
            state_hash: 0,
        };
        for s in [
            FrameSummary::compute(&input),
            FrameSummary::compute_joint_by_joint(&input),
        ] {
            assert_eq!(s.anchor_error.joint, Some(0));
            assert_eq!(
                s.angular_error,
                ColumnMax {
                    value: 0.0,
                    joint: None
                }
            );
            assert_eq!(
                s.limit_violation,
                ColumnMax {
                    value: 0.0,
                    joint: None
                }
            );
        }
    }

    #[test]
    fn summary_of_empty_frame_and_non_finite_body() {
        let poses = [[0.0; 7], [0.0, f32::INFINITY, 0.0, 0.0, 0.0, 0.0, 1.0]];
        let vels = [[0.0; 6]; 2];
        let input = FrameInput {
            substep: 0,
            time: 0.0,
            poses: &poses,
            velocities: &vels,
            diagnostics: &[],
            solver_state: None,
            total_energy: 0.0,
            state_hash: 0,
        };
        let s = FrameSummary::compute(&input);
        assert_eq!(
            s.anchor_error,
            ColumnMax {
                value: 0.0,
                joint: None
            }
        );
        assert_eq!(s.first_non_finite_body, Some(1));
        assert_eq!(s.first_non_finite_joint, None);
        assert!(s.non_finite);
    }
}
