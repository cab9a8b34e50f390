//! A scene written from a world: [`Scene::from_world`].
//!
//! A world built in code (rather than from a scene file) has no scene to record in a log's
//! header, so its runs could not be resumed, and its current state could not be saved as a
//! file. `Scene::from_world` writes every body and joint out as explicit `[[body]]` and
//! `[[joint]]` tables, with the world's settings, such that building the scene gives the same
//! world **bit for bit**: the same masses, inertias, poses, velocities, anchors, axes, limits
//! and reference rotations.
//!
//! That takes care, because the builder normalises and inverts what it is given. Rotations
//! (a body's, a joint's reference) and hinge or slide axes are stored as given when their
//! length is already 1 to f32 precision, else divided by it, so a stored value passes through
//! the builder unchanged and is written as it is. A body's mass and moments of inertia are
//! stored as reciprocals, `1 / m` rounded to f32, and `1 / (1 / m)` does not always invert
//! back: the written value is searched among the nearest f32 neighbours of `1 / (1 / m)` (within
//! [`NEIGHBOURS`] units in the last place) for one whose reciprocal is the stored value. Every
//! written value is checked with the builder's own functions; one no neighbour reaches is an
//! error naming the body or joint (none among a million random values of each kind, a test).
//!
//! A scene holds no solver state: warm-start impulses, sleep timers and the clock start from
//! zero when it is built (a resumed run restores those from its log's keyframes).

use crate::bodies::{check_unit_quat, BodyKind};
use crate::error::{EngineError, Result};
use crate::joints::{unit_axis, JointKind};
use crate::scene::{Scene, SceneBody, SceneJoint, SceneWorld};
use crate::world::World;
use glam::{Quat, Vec3};

/// How far, in units in the last place, each component of a written value may be from the
/// stored one.
pub const NEIGHBOURS: i32 = 2;

/// `x` moved by `steps` units in the last place (towards +inf for positive `steps`).
fn ulps(mut x: f32, steps: i32) -> f32 {
    for _ in 0..steps.unsigned_abs() {
        x = if steps > 0 {
            x.next_up()
        } else {
            x.next_down()
        };
    }
    x
}

/// Bitwise equality of float arrays (`==` would equate 0.0 and -0.0).
fn same_bits<const N: usize>(a: [f32; N], b: [f32; N]) -> bool {
    a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The first of `start` and its neighbours (every combination of each component moved by up
/// to [`NEIGHBOURS`] ulps, nearest first) that `build` maps bit for bit onto `stored`.
fn preimage<const N: usize>(
    start: [f32; N],
    stored: [f32; N],
    build: impl Fn([f32; N]) -> Option<[f32; N]>,
) -> Option<[f32; N]> {
    let hits = |c: [f32; N]| build(c).is_some_and(|b| same_bits(b, stored));
    if hits(start) {
        return Some(start);
    }
    // Offsets of each component in the order 0, -1, 1, -2, 2, ...
    let offsets: Vec<i32> = (0..=2 * NEIGHBOURS)
        .map(|k| if k % 2 == 1 { -(k + 1) / 2 } else { k / 2 })
        .collect();
    let per = offsets.len();
    (1..per.pow(N as u32))
        .map(|mut code| {
            let mut c = start;
            for x in &mut c {
                *x = ulps(*x, offsets[code % per]);
                code /= per;
            }
            c
        })
        .find(|&c| hits(c))
}

/// A mass (or moment of inertia) whose f32 reciprocal is `inverse` exactly, as the builder
/// computes it (`1 / m`).
fn reciprocal_preimage(inverse: f32) -> Option<f32> {
    preimage([1.0 / inverse], [inverse], |[m]| Some([1.0 / m])).map(|[m]| m)
}

/// A quaternion the builder's unit check maps exactly onto `q`.
fn rotation_preimage(q: Quat) -> Option<[f32; 4]> {
    preimage(q.to_array(), q.to_array(), |c| {
        check_unit_quat(Quat::from_array(c))
            .ok()
            .map(|q| q.to_array())
    })
}

/// An axis the builder's normalisation maps exactly onto `axis`.
fn axis_preimage(axis: Vec3) -> Option<[f32; 3]> {
    preimage(axis.to_array(), axis.to_array(), |c| {
        Some(unit_axis(Vec3::from_array(c)).to_array())
    })
}

impl Scene {
    /// The world as a scene: its settings, every body in its current state (pose and
    /// velocity) and every joint, as explicit `[[body]]` and `[[joint]]` tables in the
    /// world's order, with frame time step `dt` (s). Building the result gives the same world
    /// bit for bit, without its solver state (warm-start impulses, sleep timers, clock).
    ///
    /// This is how a world built in code is recorded so that its log can be resumed (see
    /// `lavender_replay::Recorder::create`), or saved as a scene file
    /// ([`Scene::to_toml_string`]).
    ///
    /// ```
    /// use lavender_engine::{BodyDesc, JointDesc, Scene, Settings, Vec3, World};
    /// let mut world = World::new(Settings::default()).unwrap();
    /// let ground = world.add_body(BodyDesc::fixed("ground")).unwrap();
    /// let bob = world.add_body(BodyDesc::dynamic("bob").position(Vec3::new(1.0, 0.0, 0.0)).mass(0.3)).unwrap();
    /// world
    ///     .add_joint(JointDesc::revolute("hinge", ground, bob).anchors(Vec3::ZERO, Vec3::new(-1.0, 0.0, 0.0)))
    ///     .unwrap();
    /// let scene = Scene::from_world(&world, 1.0 / 60.0).unwrap();
    /// let rebuilt = scene.build().unwrap();
    /// assert_eq!(rebuilt.bodies().inv_masses(), world.bodies().inv_masses());
    /// ```
    ///
    /// # Errors
    /// [`EngineError::Scene`] when `dt` is not a positive, finite time step, or (not seen in
    /// practice, see the module notes) when a stored value has no f32 neighbour that the
    /// builder maps onto it exactly; it names the body or joint.
    pub fn from_world(world: &World, dt: f32) -> Result<Scene> {
        let fail = |message: String| EngineError::Scene {
            origin: "written from a world".into(),
            message,
        };
        if !(dt.is_finite() && dt > 0.0) {
            return Err(fail(format!(
                "the frame time step {dt} s is not a finite time > 0"
            )));
        }
        let exact = |what: &str, name: &str| {
            fail(format!(
                "the {what} of `{name}` has no f32 value within {NEIGHBOURS} units in the last \
                 place that the scene builder maps onto it exactly, so the scene would not \
                 rebuild this world bit for bit"
            ))
        };
        let b = world.bodies();
        let mut bodies = Vec::with_capacity(b.len());
        for i in 0..b.len() {
            let name = &b.names()[i];
            let kind = b.kinds()[i];
            let (mass, inertia) = if kind == BodyKind::Dynamic {
                let mass =
                    reciprocal_preimage(b.inv_masses()[i]).ok_or_else(|| exact("mass", name))?;
                let inv = b.inv_inertia_local()[i].to_array();
                let mut inertia = [0.0; 3];
                for (moment, &k) in inertia.iter_mut().zip(&inv) {
                    *moment = reciprocal_preimage(k).ok_or_else(|| exact("inertia", name))?;
                }
                (Some(mass), Some(inertia))
            } else {
                (None, None)
            };
            let rotation = b.rotations()[i];
            bodies.push(SceneBody {
                name: name.clone(),
                kind,
                position: b.positions()[i].to_array(),
                rotation: Some(rotation_preimage(rotation).ok_or_else(|| exact("rotation", name))?),
                linear_velocity: b.linear_velocities()[i].to_array(),
                angular_velocity: b.angular_velocities()[i].to_array(),
                mass,
                inertia,
                box_half_extents: None,
            });
        }
        let j = world.joints();
        let mut joints = Vec::with_capacity(j.len());
        for k in 0..j.len() {
            let name = &j.names()[k];
            let kind = j.kinds()[k];
            let (a, bb) = j.bodies_of(k);
            let (anchor_a, anchor_b) = j.anchors_of(k);
            let (mut axis, mut axis_a, mut axis_b) = (None, None, None);
            if matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
                let (stored_a, stored_b) = j.axes_of(k);
                let wa = axis_preimage(stored_a).ok_or_else(|| exact("axis_a", name))?;
                let wb = axis_preimage(stored_b).ok_or_else(|| exact("axis_b", name))?;
                if same_bits(wa, wb) {
                    axis = Some(wa);
                } else {
                    (axis_a, axis_b) = (Some(wa), Some(wb));
                }
            }
            // A spherical joint has no use for a reference (and a scene may not give one).
            let reference = if kind == JointKind::Spherical {
                None
            } else {
                Some(
                    rotation_preimage(j.reference_of(k))
                        .ok_or_else(|| exact("reference rotation", name))?,
                )
            };
            joints.push(SceneJoint {
                name: name.clone(),
                kind,
                body_a: b.names()[a.index()].clone(),
                body_b: b.names()[bb.index()].clone(),
                anchor_a: anchor_a.to_array(),
                anchor_b: anchor_b.to_array(),
                axis,
                axis_a,
                axis_b,
                limit: j.limit_of(k),
                reference_rotation: reference,
            });
        }
        let s = world.settings();
        Ok(Scene {
            description: format!(
                "written from a world of {} bodies and {} joints at t = {} s",
                b.len(),
                j.len(),
                world.time()
            ),
            world: SceneWorld {
                gravity: Some(s.gravity.to_array()),
                dt: Some(dt),
                duration: None,
                max_substep: Some(s.max_substep),
                velocity_iterations: Some(s.velocity_iterations),
                bias_iterations: s.bias_iterations,
                position_iterations: Some(s.position_iterations),
                chain_solve: Some(s.chain_solve),
                error_reduction: Some(s.error_reduction),
                projection_factor: Some(s.projection_factor),
                warm_starting: Some(s.warm_starting),
                gyroscopic: Some(s.gyroscopic),
                curvature: Some(s.curvature),
                speculative_limits: Some(s.speculative_limits),
                sleeping: Some(s.sleeping),
                sleep_linear_speed: Some(s.sleep_linear_speed),
                sleep_angular_speed: Some(s.sleep_angular_speed),
                time_to_sleep: Some(s.time_to_sleep),
            },
            bodies,
            joints,
            chains: Vec::new(),
            grids: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::BodyDesc;
    use crate::joints::JointDesc;
    use crate::settings::Settings;

    /// A small deterministic generator (xorshift), so the tests need no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        }
    }

    #[test]
    fn neighbour_search_reaches_every_stored_value_of_a_million_random_ones() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut moved = 0usize;
        for _ in 0..1_000_000 {
            let m = (r.next() * 8.0).exp2() * (1.0 + r.next().abs());
            let inv = 1.0 / m;
            let w = reciprocal_preimage(inv).expect("a mass reaches its inverse");
            assert_eq!((1.0 / w).to_bits(), inv.to_bits());
            moved += usize::from(w.to_bits() != (1.0 / inv).to_bits());

            let raw = Vec3::new(r.next(), r.next(), r.next() + 0.01);
            let axis = unit_axis(raw);
            // A stored axis is written as it is.
            assert_eq!(axis_preimage(axis), Some(axis.to_array()));
            let raw = Vec3::new(r.next(), r.next(), r.next()) * 5.0;
            if raw.length() > 1e-3 {
                let axis = unit_axis(raw);
                assert_eq!(axis_preimage(axis), Some(axis.to_array()));
            }

            // So is a stored rotation: from a near-unit one as given, from one normalised in
            // another way (glam's multiply by the reciprocal length), from a stepped pose.
            let raw = Quat::from_xyzw(r.next(), r.next(), r.next(), r.next() + 0.01);
            let near = raw / raw.length() * (1.0 + r.next() * 1e-4);
            for given in [near, raw.normalize()] {
                let q = check_unit_quat(given).unwrap();
                assert_eq!(rotation_preimage(q), Some(q.to_array()));
            }
        }
        // How often `1 / (1 / m)` itself would not have rebuilt the stored inverse (the search
        // found a neighbour each time, asserted above).
        eprintln!("masses written as a neighbour of 1 / (1 / m): {moved} of a million");
    }

    fn random_world(seed: u64, n: usize) -> World {
        let mut r = Rng(seed);
        let settings = Settings {
            velocity_iterations: 5,
            error_reduction: 0.3,
            gravity: Vec3::new(0.1, -9.0, 0.2),
            ..Settings::default()
        };
        let mut world = World::new(settings).unwrap();
        let anchor = world.add_body(BodyDesc::fixed("anchor")).unwrap();
        let spinner = world
            .add_body(
                BodyDesc::kinematic("spinner")
                    .velocity(Vec3::new(0.0, 0.1, 0.0), Vec3::new(0.0, 0.0, 3.0)),
            )
            .unwrap();
        let mut previous = anchor;
        for i in 0..n {
            let q = Quat::from_xyzw(r.next(), r.next(), r.next(), r.next() + 0.01);
            let id = world
                .add_body(
                    BodyDesc::dynamic(format!("b{i}"))
                        .position(Vec3::new(r.next(), r.next(), r.next()) * 3.0)
                        .rotation(q.normalize())
                        .velocity(
                            Vec3::new(r.next(), r.next(), r.next()),
                            Vec3::new(r.next(), r.next(), r.next()),
                        )
                        .solid_box(
                            0.1 + r.next().abs() * 7.0,
                            Vec3::new(r.next(), r.next(), r.next()).abs() + 0.01,
                        ),
                )
                .unwrap();
            let (a, b) = if i % 7 == 3 {
                (spinner, id)
            } else {
                (previous, id)
            };
            let axis = Vec3::new(r.next(), r.next(), r.next() + 0.01);
            let anchors = (Vec3::new(r.next(), 0.0, 0.0), Vec3::new(0.0, r.next(), 0.1));
            let name = format!("j{i}");
            let desc = match i % 4 {
                0 => JointDesc::revolute(name, a, b)
                    .axis(axis)
                    .limit(-0.5, r.next().abs()),
                1 => JointDesc::spherical(name, a, b),
                2 => JointDesc::fixed(name, a, b),
                _ => JointDesc::prismatic(name, a, b)
                    .axes(axis, Vec3::new(r.next(), r.next() + 0.01, r.next())),
            };
            world.add_joint(desc.anchors(anchors.0, anchors.1)).unwrap();
            previous = id;
        }
        world
    }

    /// Every stored quantity, as bits, for a bitwise comparison of two worlds.
    fn fingerprint(w: &World) -> Vec<u32> {
        let b = w.bodies();
        let j = w.joints();
        let mut out = Vec::new();
        let mut put = |v: &[f32]| out.extend(v.iter().map(|x| x.to_bits()));
        for i in 0..b.len() {
            put(&b.positions()[i].to_array());
            put(&b.rotations()[i].to_array());
            put(&b.linear_velocities()[i].to_array());
            put(&b.angular_velocities()[i].to_array());
            put(&[b.inv_masses()[i]]);
            put(&b.inv_inertia_local()[i].to_array());
        }
        for k in 0..j.len() {
            let (aa, ab) = j.anchors_of(k);
            let (xa, xb) = j.axes_of(k);
            put(&aa.to_array());
            put(&ab.to_array());
            if matches!(j.kinds()[k], JointKind::Revolute | JointKind::Prismatic) {
                put(&xa.to_array());
                put(&xb.to_array());
            }
            if j.kinds()[k] != JointKind::Spherical {
                put(&j.reference_of(k).to_array());
            }
            put(&j.limit_of(k).unwrap_or([f32::NAN; 2]));
            let (a, bb) = j.bodies_of(k);
            put(&[
                f32::from_bits(a.index() as u32),
                f32::from_bits(bb.index() as u32),
            ]);
        }
        out
    }

    #[test]
    fn a_written_world_rebuilds_bit_for_bit_also_after_stepping() {
        let mut world = random_world(7, 60);
        for _ in 0..2 {
            let scene = Scene::from_world(&world, 1.0 / 60.0).unwrap();
            // Through the file format too: TOML text and back.
            let text = scene.to_toml_string();
            let rebuilt = Scene::from_toml_str(&text, "test")
                .unwrap()
                .build()
                .unwrap();
            assert_eq!(fingerprint(&rebuilt), fingerprint(&world));
            assert_eq!(rebuilt.settings(), world.settings());
            assert_eq!(rebuilt.bodies().names(), world.bodies().names());
            assert_eq!(rebuilt.joints().names(), world.joints().names());
            assert_eq!(rebuilt.joints().kinds(), world.joints().kinds());
            assert_eq!(rebuilt.bodies().kinds(), world.bodies().kinds());
            // And it steps the same: equal states give equal next states.
            let mut a = rebuilt;
            let mut b = world.clone();
            b.set_solver_state(&vec![0.0; b.solver_state().len()])
                .unwrap();
            a.step(1.0 / 60.0).unwrap();
            b.step(1.0 / 60.0).unwrap();
            assert_eq!(fingerprint(&a), fingerprint(&b));
            for _ in 0..5 {
                world.step(1.0 / 60.0).unwrap();
            }
        }
    }

    #[test]
    fn a_bad_frame_time_step_is_refused() {
        let world = random_world(1, 2);
        for dt in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let e = Scene::from_world(&world, dt).unwrap_err().to_string();
            assert!(e.contains("not a finite time > 0"), "{e}");
        }
    }
}
