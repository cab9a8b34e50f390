//! The same scenes in rapier3d (feature `peer`), at matched settings.
//!
//! The scene is built in Lavender first; every body and joint is then copied into a
//! `rapier3d::PhysicsWorld` (impulse joints, no colliders, sleeping off). After every frame the
//! Rapier poses are copied back into the Lavender world, whose diagnostics measure the anchor
//! error with the same code for both engines.
//!
//! Matching:
//!
//! | | Lavender | rapier3d |
//! |---|---|---|
//! | frame | `dt = 1/60 s` | `dt = 1/60 s` |
//! | substeps | 4 (`max_substep = 1/240 s`) | `num_solver_iterations = 4` (its substeps) |
//! | velocity passes per substep | `velocity_iterations` (plus as many split-impulse bias passes) | `num_internal_pgs_iterations` |
//! | position passes per substep | `position_iterations` (projection) | `num_internal_stabilization_iterations` |
//! | warm starting | on | `warmstart_joints = true` |
//! | SIMD | 8 lanes (`wide`) | 4 lanes (its default build) |
//! | threads | as asked | 1 (built without its `parallel` feature) |
//!
//! Gyroscopic forces are off in Rapier, as Lavender does not model them.

use crate::measure::{max_anchor_error, BenchRow, RunConfig, FRAME_DT, SUBSTEPS};
use crate::scenes::BenchScene;
use crate::Result;
use lavender_engine::{BodyKind, JointKind, World};
use rapier3d::glamx::{Pose3, Rot3};
use rapier3d::prelude::*;
use std::time::Instant;

fn v(x: glam::Vec3) -> Vector {
    Vector::new(x.x, x.y, x.z)
}

fn q(x: glam::Quat) -> Rot3 {
    Rot3::from_xyzw(x.x, x.y, x.z, x.w)
}

/// A Rapier world holding `world`'s bodies (same indices) and joints.
fn convert(world: &World, config: &RunConfig) -> (PhysicsWorld, Vec<RigidBodyHandle>) {
    let mut physics = PhysicsWorld::new();
    physics.gravity = v(world.settings().gravity);
    let p = &mut physics.integration_parameters;
    p.dt = FRAME_DT;
    p.num_solver_iterations = SUBSTEPS as usize;
    p.num_internal_pgs_iterations = config.velocity_iterations as usize;
    p.num_internal_stabilization_iterations = config.position_iterations as usize;
    p.warmstart_joints = true;
    let b = world.bodies();
    let mut handles = Vec::with_capacity(b.len());
    for i in 0..b.len() {
        let pose = Pose3::from_parts(v(b.positions()[i]), q(b.rotations()[i]));
        let builder = match b.kinds()[i] {
            BodyKind::Static => RigidBodyBuilder::fixed(),
            BodyKind::Kinematic => RigidBodyBuilder::kinematic_velocity_based(),
            BodyKind::Dynamic => {
                let inertia = b.inv_inertia_local()[i].recip();
                RigidBodyBuilder::dynamic().additional_mass_properties(MassProperties::new(
                    Vector::ZERO,
                    b.mass(i),
                    v(inertia),
                ))
            }
        }
        .pose(pose)
        .linvel(v(b.linear_velocities()[i]))
        .angvel(v(b.angular_velocities()[i]))
        .can_sleep(false)
        .gyroscopic_forces_enabled(false);
        handles.push(physics.bodies.insert(builder));
    }
    let joints = world.joints();
    for j in 0..joints.len() {
        let (a, bb) = joints.bodies_of(j);
        let (anchor_a, anchor_b) = joints.anchors_of(j);
        let (axis_a, axis_b) = joints.axes_of(j);
        let limit = joints.limit_of(j);
        let joint: GenericJoint = match joints.kinds()[j] {
            JointKind::Spherical => SphericalJointBuilder::new()
                .local_anchor1(v(anchor_a))
                .local_anchor2(v(anchor_b))
                .into(),
            JointKind::Revolute => {
                let mut r = RevoluteJointBuilder::new(v(axis_a))
                    .local_anchor1(v(anchor_a))
                    .local_anchor2(v(anchor_b));
                if let Some(l) = limit {
                    r = r.limits(l);
                }
                r.into()
            }
            JointKind::Prismatic => {
                let mut p = PrismaticJointBuilder::new(v(axis_a))
                    .local_anchor1(v(anchor_a))
                    .local_anchor2(v(anchor_b))
                    .local_axis2(v(axis_b));
                if let Some(l) = limit {
                    p = p.limits(l);
                }
                p.into()
            }
            JointKind::Fixed => FixedJointBuilder::new()
                .local_frame1(Pose3::from_parts(v(anchor_a), q(joints.reference_of(j))))
                .local_frame2(Pose3::from_parts(v(anchor_b), Rot3::IDENTITY))
                .into(),
        };
        physics
            .impulse_joints
            .insert(handles[a.index()], handles[bb.index()], joint, true);
    }
    (physics, handles)
}

/// Copies Rapier's poses and velocities into `world`, bit for bit, and refreshes its
/// diagnostics.
fn copy_back(physics: &PhysicsWorld, handles: &[RigidBodyHandle], world: &mut World) -> Result<()> {
    let mut poses = Vec::with_capacity(handles.len());
    let mut velocities = Vec::with_capacity(handles.len());
    for &h in handles {
        let rb = &physics.bodies[h];
        let (t, r) = (rb.translation(), rb.rotation());
        let (lv, av) = (rb.linvel(), rb.angvel());
        poses.push([t.x, t.y, t.z, r.x, r.y, r.z, r.w]);
        velocities.push([lv.x, lv.y, lv.z, av.x, av.y, av.z]);
    }
    world.restore_body_states(&poses, &velocities)?;
    Ok(())
}

/// A benchmark scene built in rapier3d (for the criterion bench).
pub struct RapierScene {
    physics: PhysicsWorld,
}

impl RapierScene {
    /// Builds `scene` with the Rapier settings matching `config`.
    pub fn new(scene: &BenchScene, config: &RunConfig) -> Result<RapierScene> {
        let probe = scene.build(config.settings())?;
        Ok(RapierScene {
            physics: convert(&probe, config).0,
        })
    }

    /// One 60 Hz frame.
    pub fn step(&mut self) {
        self.physics.step();
    }
}

/// Runs `scene` on rapier3d for `config.frames` timed frames after one untimed frame.
pub fn run_rapier(scene: &BenchScene, config: &RunConfig) -> Result<BenchRow> {
    let mut probe = scene.build(config.settings())?;
    let (mut physics, handles) = convert(&probe, config);
    let mut max_error = max_anchor_error(&probe);
    physics.step();
    copy_back(&physics, &handles, &mut probe)?;
    max_error = max_error.max(max_anchor_error(&probe));
    let mut seconds = 0.0;
    for _ in 0..config.frames {
        let start = Instant::now();
        physics.step();
        seconds += start.elapsed().as_secs_f64();
        copy_back(&physics, &handles, &mut probe)?;
        max_error = max_error.max(max_anchor_error(&probe));
    }
    let frames = config.frames.max(1);
    let per_step = seconds / f64::from(frames);
    Ok(BenchRow {
        scene: scene.name().to_string(),
        engine: "rapier3d",
        path: "wide",
        simd_width: rapier3d::math::SIMD_WIDTH,
        target_features: lavender_engine::target_features(),
        cpu: crate::measure::host_cpu(),
        threads: 1,
        bodies: probe.body_count(),
        joints: probe.joint_count(),
        substeps: SUBSTEPS,
        velocity_iterations: config.velocity_iterations,
        position_iterations: config.position_iterations,
        bias_iterations: None,
        chain_solve: false,
        island_clusters: false,
        frames,
        ms_per_step: per_step * 1e3,
        ms_per_step_rounds: Vec::new(),
        ns_per_joint_substep: per_step * 1e9
            / (probe.joint_count().max(1) as f64 * f64::from(SUBSTEPS)),
        row_solves_per_second: None,
        bytes_per_joint: None,
        bytes_per_body: None,
        max_anchor_error: max_error,
        stages: None,
    })
}
