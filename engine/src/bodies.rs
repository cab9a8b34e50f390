//! Body storage: structure-of-arrays, one `Vec` per quantity, indexed by [`BodyId`].
//!
//! Hot per-body state (per substep): position 12 B, orientation 16 B, linear and angular
//! velocity 24 B, inverse mass 4 B, world inverse inertia 36 B = 92 B per body.

use crate::error::{EngineError, Result};
use glam::{Mat3, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Index of a body in its world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct BodyId(pub u32);

impl BodyId {
    /// The index as `usize`.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How a body moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum BodyKind {
    /// Never moves; infinite mass.
    Static,
    /// Moves with its prescribed velocity; infinite mass (joints cannot push it).
    Kinematic,
    /// Moves under gravity and joint impulses.
    #[default]
    Dynamic,
}

impl BodyKind {
    /// The kind as a scene file spells it: `"static"`, `"kinematic"` or `"dynamic"`.
    pub fn name(self) -> &'static str {
        match self {
            BodyKind::Static => "static",
            BodyKind::Kinematic => "kinematic",
            BodyKind::Dynamic => "dynamic",
        }
    }
}

/// Description of a body to add to a world. Units: m, kg, kg m^2, m/s, rad/s.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyDesc {
    /// Unique name (used in diagnostics and scene files).
    pub name: String,
    /// Static, kinematic or dynamic.
    pub kind: BodyKind,
    /// Centre of mass in world coordinates, m.
    pub position: Vec3,
    /// Orientation; must be a unit quaternion (|q| within 1e-3 of 1).
    pub rotation: Quat,
    /// Linear velocity of the centre of mass, m/s.
    pub linear_velocity: Vec3,
    /// Angular velocity in world coordinates, rad/s.
    pub angular_velocity: Vec3,
    /// Mass, kg (dynamic bodies only; must be > 0).
    pub mass: f32,
    /// Principal moments of inertia in the body frame, kg m^2 (dynamic bodies only; > 0).
    pub inertia: Vec3,
}

impl BodyDesc {
    /// A dynamic body of 1 kg with the inertia of a 0.1 m solid cube, at the origin.
    pub fn dynamic(name: impl Into<String>) -> Self {
        BodyDesc {
            name: name.into(),
            kind: BodyKind::Dynamic,
            position: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            linear_velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            mass: 1.0,
            inertia: box_inertia(1.0, Vec3::splat(crate::scene::DEFAULT_HALF_EXTENT)),
        }
    }
    /// A static body ([`BodyKind::Static`], `kind = "static"` in a scene file): infinite
    /// mass, never moves. Named as Rapier's fixed rigid bodies are; not to be confused with
    /// [`crate::JointDesc::fixed`], a weld joint (QA 2026-12-08).
    #[doc(alias = "static")]
    pub fn fixed(name: impl Into<String>) -> Self {
        BodyDesc {
            kind: BodyKind::Static,
            ..BodyDesc::dynamic(name)
        }
    }
    /// A kinematic body (infinite mass, moves with its velocity).
    pub fn kinematic(name: impl Into<String>) -> Self {
        BodyDesc {
            kind: BodyKind::Kinematic,
            ..BodyDesc::dynamic(name)
        }
    }
    /// Sets the position, m.
    pub fn position(mut self, p: Vec3) -> Self {
        self.position = p;
        self
    }
    /// Sets the orientation.
    pub fn rotation(mut self, q: Quat) -> Self {
        self.rotation = q;
        self
    }
    /// Sets linear and angular velocity, m/s and rad/s.
    pub fn velocity(mut self, linear: Vec3, angular: Vec3) -> Self {
        self.linear_velocity = linear;
        self.angular_velocity = angular;
        self
    }
    /// Sets the mass, kg, keeping the body's shape: the inertia scales with the mass (the
    /// default 1 kg, 0.1 m cube becomes a 0.1 m cube of `m`, as a scene body with `mass` alone).
    /// Call [`BodyDesc::inertia`] or [`BodyDesc::solid_box`] after it to give another shape.
    /// (Until 2026-12-07 the inertia was kept: `mass(1e6)` made a needle of a 1 kg cube's
    /// moments that a hinge could not hold, 4.7 m apart in a second; QA.)
    pub fn mass(mut self, m: f32) -> Self {
        let cube = |mass| box_inertia(mass, Vec3::splat(crate::scene::DEFAULT_HALF_EXTENT));
        // The default cube exactly as a scene computes it (the same bits), other shapes scaled.
        let default_shape = self.inertia == cube(self.mass);
        self.inertia = match m / self.mass {
            scale if !default_shape && scale.is_finite() && scale > 0.0 => self.inertia * scale,
            _ => cube(m),
        };
        self.mass = m;
        self
    }
    /// Sets the body-frame principal moments of inertia, kg m^2: each > 0 and at most the
    /// sum of the other two, as for any real mass distribution (else `add_body` refuses it).
    pub fn inertia(mut self, i: Vec3) -> Self {
        self.inertia = i;
        self
    }
    /// Sets mass and the inertia of a solid box with these half extents, m.
    pub fn solid_box(mut self, mass: f32, half_extents: Vec3) -> Self {
        self.mass = mass;
        self.inertia = box_inertia(mass, half_extents);
        self
    }
}

/// Principal moments of a solid box of mass `m` and half extents `h`:
/// `I_x = m (h_y^2 + h_z^2) / 3`, and cyclically.
pub fn box_inertia(m: f32, h: Vec3) -> Vec3 {
    let s = h * h;
    Vec3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (m / 3.0)
}

/// Relative slack of `check_triangle_inequality`: a thin plate's moments meet the bound
/// with equality (`I_z = I_x + I_y`), which f32 rounding of the three moments may cross by a
/// few ulps.
pub const INERTIA_TRIANGLE_SLACK: f32 = 1e-5;

/// Every mass distribution has principal moments with `I_k <= I_i + I_j` (each moment is
/// `sum m (r^2 - r_k^2)`, so `I_i + I_j - I_k = 2 sum m r_k^2 >= 0`): moments that break it
/// describe no rigid body (MuJoCo refuses them too). The solver would run them, but their
/// motion is nothing physical. Equality (a plate, a rod) is allowed, within
/// [`INERTIA_TRIANGLE_SLACK`].
fn check_triangle_inequality(inertia: Vec3) -> Result<(), String> {
    let [a, b, c] = inertia.to_array();
    // Sum in f64: two moments near f32::MAX must not overflow into a false pass.
    let (a, b, c) = (f64::from(a), f64::from(b), f64::from(c));
    let slack = 1.0 + f64::from(INERTIA_TRIANGLE_SLACK);
    for (k, (ik, i, j)) in [(c, a, b), (a, b, c), (b, c, a)].into_iter().enumerate() {
        if ik > (i + j) * slack {
            let axis = ["z", "x", "y"][k];
            return Err(format!(
                "inertia {:?} kg m^2 belongs to no rigid body: its {axis} moment {ik:e} is \
                 larger than the other two together ({:e}), and every mass distribution has \
                 each principal moment at most the sum of the other two; give moments that \
                 are (a solid box's: `box = [hx, hy, hz]` in a scene file, \
                 `BodyDesc::solid_box` in code), or raise the two smaller ones",
                inertia.to_array(),
                i + j
            ));
        }
    }
    Ok(())
}

/// `R diag(inv_local) R^T` for orientation `q` (zero for a non-dynamic body).
#[inline]
pub(crate) fn inv_inertia_world(inv_local: Vec3, q: Quat) -> Mat3 {
    if inv_local == Vec3::ZERO {
        Mat3::ZERO
    } else {
        let r = Mat3::from_quat(q);
        r * Mat3::from_diagonal(inv_local) * r.transpose()
    }
}

/// `r^2 / I` about the axes across the point `r` of a body's own frame (m), with
/// `inv_local` the body-frame inverse principal moments (1/(kg m^2)): half the trace of
/// `[r]x^T I^-1 [r]x`, `sum_i (|r|^2 - r_i^2) / I_i`, in 1/kg. A point on a thin rod's own
/// axis does not see the rod's small moment about that axis (`|r|^2 / I_min` would), and for
/// a body with equal moments it is `|r|^2 / I`. In f64: the squares of points beyond 1.8e19 m
/// overflow f32.
pub fn inv_inertia_across(inv_local: Vec3, r: Vec3) -> f64 {
    let inv_inertia = inv_local.as_dvec3();
    let r2 = r.as_dvec3() * r.as_dvec3();
    0.5 * ((r2.y + r2.z) * inv_inertia.x
        + (r2.x + r2.z) * inv_inertia.y
        + (r2.x + r2.y) * inv_inertia.z)
}

/// Structure-of-arrays body storage.
#[derive(Debug, Clone, Default)]
pub struct Bodies {
    pub(crate) name: Vec<String>,
    /// Index of each name (names are unique), so that adding n bodies costs O(n).
    pub(crate) by_name: std::collections::HashMap<String, u32>,
    pub(crate) kind: Vec<BodyKind>,
    pub(crate) position: Vec<Vec3>,
    pub(crate) rotation: Vec<Quat>,
    pub(crate) linear_velocity: Vec<Vec3>,
    pub(crate) angular_velocity: Vec<Vec3>,
    /// 1/m, 1/kg; zero for static and kinematic bodies.
    pub(crate) inv_mass: Vec<f32>,
    /// Body-frame inverse principal moments, 1/(kg m^2); zero for non-dynamic bodies.
    pub(crate) inv_inertia_local: Vec<Vec3>,
    /// World inverse inertia `R diag(inv_inertia_local) R^T`, refreshed each substep.
    pub(crate) inv_inertia_world: Vec<Mat3>,
}

/// The per-body quantities a step may change, kept to roll back a failed step.
#[derive(Debug, Clone, Default)]
pub(crate) struct BodyState {
    position: Vec<Vec3>,
    rotation: Vec<Quat>,
    linear_velocity: Vec<Vec3>,
    angular_velocity: Vec<Vec3>,
}

pub(crate) fn check_vec(v: Vec3, what: &str, name: &str) -> Result<()> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(EngineError::InvalidBody {
            body: name.to_string(),
            reason: format!("{what} {:?} is not finite", v.to_array()),
        })
    }
}

/// The largest coordinate a body's position may have, m: below it, the squared lengths of
/// the diagnostics (anchor error norms) stay within single precision; beyond it they
/// overflow to inf (QA 2026-12-06: a body placed 2e19 m out gave an anchor error of inf in a
/// run that exited 0). At 1e18 m single precision's spacing is already 1.4e11 m.
pub const MAX_POSITION_COORDINATE: f32 = 1e18;

/// [`check_vec`] for a position, also held to [`MAX_POSITION_COORDINATE`].
pub(crate) fn check_position(p: Vec3, name: &str) -> Result<()> {
    check_vec(p, "position", name)?;
    if p.abs().max_element() > MAX_POSITION_COORDINATE {
        return Err(EngineError::InvalidBody {
            body: name.to_string(),
            reason: format!(
                "position {:?} has a coordinate beyond {MAX_POSITION_COORDINATE:e} m, where \
                 single precision overflows the squared lengths of the diagnostics: use larger \
                 units (km) or place the scene nearer the origin",
                p.to_array()
            ),
        });
    }
    Ok(())
}

/// How far from 1 the computed length of a stored unit quaternion or axis may be, in units of
/// [`f32::EPSILON`]: a value that close is stored as given, anything else divided by its
/// length (whose result is always that close, so a stored value passes through unchanged:
/// `Scene::from_world` writes it back exactly, and `set_body_pose` of a body's own pose
/// changes no bit). Normalising an already-unit value would move it by an ulp or leave it.
pub(crate) const UNIT_TOLERANCE: f32 = 4.0 * f32::EPSILON;

/// Checks that `q` is finite and of unit length within 1e-3, and returns it normalised (as
/// given when its length is 1 within [`UNIT_TOLERANCE`]).
pub(crate) fn check_unit_quat(q: Quat) -> std::result::Result<Quat, String> {
    if !q.is_finite() {
        return Err(format!(
            "quaternion {:?} (x, y, z, w) is not finite",
            q.to_array()
        ));
    }
    let len = q.length();
    if (len - 1.0).abs() > 1e-3 {
        return Err(format!(
            "quaternion {:?} (x, y, z, w) has length {len}, not 1: give a unit quaternion \
             (identity is [0, 0, 0, 1])",
            q.to_array()
        ));
    }
    Ok(if (len - 1.0).abs() <= UNIT_TOLERANCE {
        q
    } else {
        q / len
    })
}

impl Bodies {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.position.len()
    }
    /// True when there are no bodies.
    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }
    /// Index of the body named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&i| i as usize)
    }
    /// Body names in index order.
    pub fn names(&self) -> &[String] {
        &self.name
    }
    /// Body kinds in index order.
    pub fn kinds(&self) -> &[BodyKind] {
        &self.kind
    }
    /// Positions of the centres of mass, m.
    pub fn positions(&self) -> &[Vec3] {
        &self.position
    }
    /// Orientations (unit quaternions).
    pub fn rotations(&self) -> &[Quat] {
        &self.rotation
    }
    /// Linear velocities, m/s.
    pub fn linear_velocities(&self) -> &[Vec3] {
        &self.linear_velocity
    }
    /// Angular velocities (world frame), rad/s.
    pub fn angular_velocities(&self) -> &[Vec3] {
        &self.angular_velocity
    }
    /// Inverse masses, 1/kg (0 for static and kinematic bodies).
    pub fn inv_masses(&self) -> &[f32] {
        &self.inv_mass
    }

    /// Body-frame inverse principal moments of inertia, 1/(kg m^2) (0 for non-dynamic bodies).
    pub fn inv_inertia_local(&self) -> &[Vec3] {
        &self.inv_inertia_local
    }

    /// Mass, kg (infinite for static and kinematic bodies).
    pub fn mass(&self, i: usize) -> f32 {
        if self.inv_mass[i] > 0.0 {
            1.0 / self.inv_mass[i]
        } else {
            f32::INFINITY
        }
    }

    /// World-frame inertia tensor of body `i`, kg m^2 (zero for non-dynamic bodies).
    pub fn inertia_world(&self, i: usize) -> Mat3 {
        let inv = self.inv_inertia_local[i];
        if inv == Vec3::ZERO {
            return Mat3::ZERO;
        }
        let r = Mat3::from_quat(self.rotation[i]);
        r * Mat3::from_diagonal(inv.recip()) * r.transpose()
    }

    /// Kinetic energy of body `i`, J: `1/2 m v.v + 1/2 w.I w`.
    pub fn kinetic_energy(&self, i: usize) -> f64 {
        if self.inv_mass[i] == 0.0 {
            return 0.0;
        }
        let v = self.linear_velocity[i];
        let w = self.angular_velocity[i];
        let m = 1.0 / self.inv_mass[i];
        let iw = self.inertia_world(i) * w;
        0.5 * f64::from(m) * f64::from(v.dot(v)) + 0.5 * f64::from(w.dot(iw))
    }

    pub(crate) fn push(&mut self, desc: &BodyDesc) -> Result<BodyId> {
        let name = &desc.name;
        if name.is_empty() {
            return Err(EngineError::InvalidBody {
                body: "<unnamed>".into(),
                reason: "every body needs a non-empty name".into(),
            });
        }
        if let Some(reason) = name_problem(name) {
            return Err(EngineError::InvalidBody {
                body: name.escape_debug().to_string(),
                reason,
            });
        }
        if self.by_name.contains_key(name) {
            return Err(EngineError::InvalidBody {
                body: name.clone(),
                reason: "another body already has this name; names must be unique".into(),
            });
        }
        check_position(desc.position, name)?;
        check_vec(desc.linear_velocity, "linear velocity", name)?;
        check_vec(desc.angular_velocity, "angular velocity", name)?;
        let rotation =
            check_unit_quat(desc.rotation).map_err(|reason| EngineError::InvalidBody {
                body: name.clone(),
                reason,
            })?;
        let (inv_mass, inv_inertia) = match desc.kind {
            BodyKind::Dynamic => {
                if !(desc.mass.is_finite() && desc.mass > 0.0) {
                    return Err(EngineError::InvalidBody {
                        body: name.clone(),
                        reason: format!(
                            "mass {} kg is not allowed for a dynamic body: give a finite mass > 0, \
                             or make the body static",
                            desc.mass
                        ),
                    });
                }
                if !(desc.inertia.is_finite() && desc.inertia.min_element() > 0.0) {
                    return Err(EngineError::InvalidBody {
                        body: name.clone(),
                        reason: format!(
                            "inertia {:?} kg m^2 is not allowed: every principal moment must be \
                             finite and > 0",
                            desc.inertia.to_array()
                        ),
                    });
                }
                // Both the value and its inverse must be normal f32 numbers: a subnormal mass
                // has an infinite inverse (the body then has no mass at all), and a mass
                // beyond about 8.5e37 kg a subnormal one, which the solver flushes to 0.
                let normal = |v: f32| v.is_normal() && v.recip().is_normal();
                if !normal(desc.mass) {
                    return Err(EngineError::InvalidBody {
                        body: name.clone(),
                        reason: format!(
                            "mass {:e} kg is outside what single precision can invert (about \
                             1.2e-38 to 8.5e37 kg); choose units that bring it nearer 1",
                            desc.mass
                        ),
                    });
                }
                if !desc.inertia.to_array().into_iter().all(normal) {
                    return Err(EngineError::InvalidBody {
                        body: name.clone(),
                        reason: format!(
                            "inertia {:?} kg m^2 is outside what single precision can invert \
                             (each moment about 1.2e-38 to 8.5e37); choose units that bring it \
                             nearer 1",
                            desc.inertia.to_array()
                        ),
                    });
                }
                check_triangle_inequality(desc.inertia).map_err(|reason| {
                    EngineError::InvalidBody {
                        body: name.clone(),
                        reason,
                    }
                })?;
                (1.0 / desc.mass, desc.inertia.recip())
            }
            BodyKind::Static | BodyKind::Kinematic => {
                // Unused (0 is fine: no mass), but a negative or non-finite one is a mistake
                // worth naming (a scene file refuses any `mass` on such a body).
                let moments = desc.inertia.to_array();
                let usable = |m: f32| m.is_finite() && m >= 0.0;
                if !(usable(desc.mass) && moments.into_iter().all(usable)) {
                    return Err(EngineError::InvalidBody {
                        body: name.clone(),
                        reason: format!(
                            "mass {} kg and inertia {moments:?} kg m^2 on a {} body: it has \
                             no mass (it moves only as set), so leave `mass`, `inertia` \
                             and `solid_box` out, or make it dynamic",
                            desc.mass,
                            desc.kind.name()
                        ),
                    });
                }
                (0.0, Vec3::ZERO)
            }
        };
        if desc.kind == BodyKind::Static
            && (desc.linear_velocity != Vec3::ZERO || desc.angular_velocity != Vec3::ZERO)
        {
            return Err(EngineError::InvalidBody {
                body: name.clone(),
                reason: "a static body never moves, so it takes no velocity: make it kinematic \
                         to move it at a set velocity"
                    .into(),
            });
        }
        let (lin, ang) = (desc.linear_velocity, desc.angular_velocity);
        let id = BodyId(self.len() as u32);
        self.by_name.insert(name.clone(), id.0);
        self.name.push(name.clone());
        self.kind.push(desc.kind);
        self.position.push(desc.position);
        self.rotation.push(rotation);
        self.linear_velocity.push(lin);
        self.angular_velocity.push(ang);
        self.inv_mass.push(inv_mass);
        self.inv_inertia_local.push(inv_inertia);
        self.inv_inertia_world.push(Mat3::ZERO);
        self.refresh_inv_inertia_world(id.index());
        Ok(id)
    }

    /// Recomputes `R diag(inv_inertia_local) R^T` for body `i`.
    #[inline]
    pub(crate) fn refresh_inv_inertia_world(&mut self, i: usize) {
        self.inv_inertia_world[i] = inv_inertia_world(self.inv_inertia_local[i], self.rotation[i]);
    }

    pub(crate) fn save_state(&self, into: &mut BodyState) {
        into.position.clone_from(&self.position);
        into.rotation.clone_from(&self.rotation);
        into.linear_velocity.clone_from(&self.linear_velocity);
        into.angular_velocity.clone_from(&self.angular_velocity);
    }

    pub(crate) fn restore_state(&mut self, from: &BodyState) {
        self.position.clone_from(&from.position);
        self.rotation.clone_from(&from.rotation);
        self.linear_velocity.clone_from(&from.linear_velocity);
        self.angular_velocity.clone_from(&from.angular_velocity);
        for i in 0..self.len() {
            self.refresh_inv_inertia_world(i);
        }
    }

    /// The first body with a non-finite state, and which quantity.
    pub(crate) fn first_non_finite(&self) -> Option<(usize, &'static str)> {
        for i in 0..self.len() {
            if !self.position[i].is_finite() {
                return Some((i, "position"));
            }
            if !self.rotation[i].is_finite() {
                return Some((i, "orientation"));
            }
            if !self.linear_velocity[i].is_finite() {
                return Some((i, "linear velocity"));
            }
            if !self.angular_velocity[i].is_finite() {
                return Some((i, "angular velocity"));
            }
        }
        None
    }
}

/// Why a body or joint name is refused, if it is: control characters (a tab, a newline)
/// would break every table and log line that prints names (QA: a name with a newline split
/// `scrub`'s tables), and the names go into the log header and HDF5 attributes as they are.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    name.chars().any(char::is_control).then(|| {
        "the name holds a control character (a tab, a newline, ...); names are printed in \
         tables and logs: use letters, digits, spaces and punctuation"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mass_keeps_the_shape() {
        // The default cube, of the new mass: what a scene body with `mass` alone gets.
        let heavy = BodyDesc::dynamic("bob").mass(1e6);
        assert_eq!(heavy.inertia, box_inertia(1e6, Vec3::splat(0.05)));
        assert!(
            (heavy.inertia.x - 1666.6666).abs() < 1e-2,
            "{}",
            heavy.inertia
        );
        // Moments of one's own scale with the mass; set after it, they stay.
        let own = BodyDesc::dynamic("rod").inertia(Vec3::new(1.0, 2.0, 2.0));
        assert_eq!(own.clone().mass(3.0).inertia, Vec3::new(3.0, 6.0, 6.0));
        let after = BodyDesc::dynamic("rod").mass(3.0).inertia(Vec3::ONE);
        assert_eq!(after.inertia, Vec3::ONE);
        // From an unusable mass, the default cube of the new one.
        assert_eq!(
            BodyDesc::dynamic("b").mass(0.0).mass(2.0).inertia,
            box_inertia(2.0, Vec3::splat(0.05))
        );
    }

    #[test]
    fn box_inertia_matches_textbook() {
        // Solid cube of 6 kg, side 1 m: I = m s^2 / 6 = 1 kg m^2.
        let i = box_inertia(6.0, Vec3::splat(0.5));
        assert!((i - Vec3::ONE).abs().max_element() < 1e-6);
    }

    #[test]
    fn the_moment_across_a_point_is_the_one_that_moves_it() {
        // A point 2 m out on the rod's axis (x) sees the moments across it (y: 4, z: 8): a
        // unit impulse along y turns the rod by 2/8 about z, the point by 2 * 2/8 = 0.5;
        // along z by 2 * 2/4 = 1; the mean of the two, 0.75 = 4 * (1/4 + 1/8) / 2.
        let rod = Vec3::new(1.0, 0.25, 0.125);
        assert_eq!(inv_inertia_across(rod, Vec3::X * 2.0), 0.75);
        // With equal moments it is |r|^2 / I whatever the direction.
        let cube = Vec3::splat(0.5);
        for r in [
            Vec3::X,
            Vec3::new(0.6, -0.8, 0.0),
            Vec3::new(1.0, 2.0, 2.0) / 3.0,
        ] {
            assert!((inv_inertia_across(cube, r * 3.0) - 4.5).abs() < 1e-6);
        }
        // Points far beyond f32's squares stay finite.
        assert!(inv_inertia_across(cube, Vec3::X * 1e30).is_finite());
    }

    #[test]
    fn world_inertia_is_rotated_body_inertia() {
        let mut b = Bodies::default();
        let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        b.push(
            &BodyDesc::dynamic("rod")
                .rotation(q)
                .inertia(Vec3::new(1.0, 2.0, 3.0)),
        )
        .unwrap();
        // After a quarter turn about z, body x lies along world y.
        let iw = b.inertia_world(0);
        assert!((iw.y_axis.y - 1.0).abs() < 1e-5 && (iw.x_axis.x - 2.0).abs() < 1e-5);
        let inv = b.inv_inertia_world[0];
        assert!(((inv * iw) - Mat3::IDENTITY).abs_diff_eq(Mat3::ZERO, 1e-5));
    }

    #[test]
    fn a_unit_rotation_is_stored_as_given_and_setting_a_bodys_own_pose_changes_no_bit() {
        // Normalised rotations (glam's way, the integrator's after steps, this check's own)
        // pass the check unchanged; before, dividing by a computed length of 1 - 1 ulp moved
        // about one in three by an ulp.
        let mut world = crate::scene::Scene::builtin("chain")
            .unwrap()
            .build()
            .unwrap();
        let mut moved_by_division = 0;
        for i in 1..world.body_count() {
            let t = i as f32;
            let q = Quat::from_xyzw(t.sin(), (2.0 * t).cos(), 0.3, 1.0 + 0.1 * t.cos()).normalize();
            assert_eq!(check_unit_quat(q).unwrap().to_array(), q.to_array());
            moved_by_division += usize::from((q / q.length()).to_array() != q.to_array());
            let (p, _) = world.body_pose(BodyId(i as u32)).unwrap();
            world.set_body_pose(BodyId(i as u32), p, q).unwrap();
        }
        assert!(moved_by_division > 0, "the old rule would have moved some");
        for _ in 0..20 {
            world.step(1.0 / 60.0).unwrap();
        }
        for i in 0..world.body_count() {
            let q = world.bodies().rotations()[i];
            let (p, r) = world.body_pose(BodyId(i as u32)).unwrap();
            world.set_body_pose(BodyId(i as u32), p, r).unwrap();
            assert_eq!(world.bodies().rotations()[i].to_array(), q.to_array());
        }
        // Not unit to f32 precision: divided by the length (within 1e-3 of 1 is accepted).
        let long = Quat::from_xyzw(0.0, 0.0, 0.0, 1.0005);
        assert_eq!(check_unit_quat(long).unwrap(), Quat::IDENTITY);
        assert!(check_unit_quat(Quat::from_xyzw(0.0, 0.0, 0.0, 1.01)).is_err());
    }
}
