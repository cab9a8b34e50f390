//! The eight diagnostic columns against hand calculations.

use lavender::engine::{BodyDesc, JointDesc, Quat, Settings, Vec3, World, COLUMN_NAMES};

/// f32 positions of order 1 m carry ~1.2e-7 m of rounding; 2e-6 m covers the few
/// operations between the pose and the column.
const F32_TOL: f32 = 2e-6;

fn hinge_world(rot_a: Quat, rot_b: Quat, anchor_a: Vec3, anchor_b: Vec3) -> (World, usize) {
    let mut world = World::new(Settings::default()).unwrap();
    let pos_a = Vec3::new(0.3, 2.0, -1.0);
    let a = world
        .add_body(BodyDesc::fixed("base").position(pos_a).rotation(rot_a))
        .unwrap();
    // Place B so that its anchor coincides with A's in the world.
    let world_anchor = pos_a + rot_a * anchor_a;
    let b = world
        .add_body(
            BodyDesc::dynamic("arm")
                .position(world_anchor - rot_b * anchor_b)
                .rotation(rot_b),
        )
        .unwrap();
    world
        .add_joint(
            JointDesc::revolute("hinge", a, b)
                .anchors(anchor_a, anchor_b)
                .axis(Vec3::Z),
        )
        .unwrap();
    (world, b.index())
}

fn translate_child(world: &mut World, child: usize, by: Vec3) {
    let id = lavender::engine::BodyId(child as u32);
    let (p, q) = world.body_pose(id).unwrap();
    world.set_body_pose(id, p + by, q).unwrap();
}

#[test]
fn perturbation_reads_back_the_vector_and_its_norm() {
    let (mut world, child) = hinge_world(
        Quat::IDENTITY,
        Quat::IDENTITY,
        Vec3::ZERO,
        Vec3::new(0.0, 1.0, 0.0),
    );
    assert!(world.constraint_data()[0][3] < F32_TOL);
    translate_child(&mut world, child, Vec3::new(0.02, 0.03, 0.0));
    let row = world.constraint_data()[0];
    assert!((row[0] - 0.02).abs() < F32_TOL, "x {}", row[0]);
    assert!((row[1] - 0.03).abs() < F32_TOL, "y {}", row[1]);
    assert!(row[2].abs() < F32_TOL, "z {}", row[2]);
    // sqrt(0.02^2 + 0.03^2) = 0.0360555
    assert!((row[3] - 0.036_055_5).abs() < F32_TOL, "norm {}", row[3]);
    // Time did not advance.
    assert_eq!(world.time(), 0.0);
    assert_eq!(world.substeps_done(), 0);
}

#[test]
fn perturbation_with_rotated_bodies_and_off_centre_anchors() {
    let rot_a = Quat::from_axis_angle(Vec3::new(1.0, 2.0, 0.5).normalize(), 0.7);
    let rot_b = Quat::from_axis_angle(Vec3::new(-0.3, 0.2, 1.0).normalize(), -1.1);
    // B's hinge axis must match A's in the world for a consistent joint; the anchor error
    // does not depend on it, so the plain +z axis is kept.
    let (mut world, child) = hinge_world(
        rot_a,
        rot_b,
        Vec3::new(0.2, -0.1, 0.05),
        Vec3::new(-0.3, 0.4, 0.1),
    );
    assert!(world.constraint_data()[0][3] < F32_TOL);
    translate_child(&mut world, child, Vec3::new(0.02, 0.03, 0.0));
    let row = world.constraint_data()[0];
    for (got, want) in row[..3].iter().zip([0.02, 0.03, 0.0]) {
        assert!((got - want).abs() < F32_TOL, "{row:?}");
    }
    assert!((row[3] - 0.036_055_5).abs() < F32_TOL, "norm {}", row[3]);
}

#[test]
fn view_follows_the_world_and_a_copy_does_not() {
    let (mut world, child) = hinge_world(
        Quat::IDENTITY,
        Quat::IDENTITY,
        Vec3::ZERO,
        Vec3::new(0.0, 1.0, 0.0),
    );
    translate_child(&mut world, child, Vec3::new(0.02, 0.03, 0.0));
    let copy = world.constraint_data_copy();
    let before = world.constraint_data().as_ptr();
    world.step(1.0 / 60.0).unwrap();
    // The step refreshed the same buffer in place (projection removed the error)...
    assert_eq!(world.constraint_data().as_ptr(), before);
    assert!(world.constraint_data()[0][3] < 1e-4);
    // ...while the copy still holds the perturbation.
    assert!((copy[0][3] - 0.036_055_5).abs() < F32_TOL);
    assert_eq!(world.constraint_data_flat().len(), 8);
    assert_eq!(COLUMN_NAMES[3], "anchor_error_norm");
}

#[test]
fn spherical_reports_no_angular_error_and_fixed_reports_the_twist() {
    let mut world = World::new(Settings::default()).unwrap();
    let base = world.add_body(BodyDesc::fixed("base")).unwrap();
    let ball_child = world
        .add_body(BodyDesc::dynamic("ball_child").position(Vec3::new(1.0, 0.0, 0.0)))
        .unwrap();
    let weld_child = world
        .add_body(BodyDesc::dynamic("weld_child").position(Vec3::new(-1.0, 0.0, 0.0)))
        .unwrap();
    world
        .add_joint(
            JointDesc::spherical("ball", base, ball_child)
                .anchors(Vec3::new(1.0, 0.0, 0.0), Vec3::ZERO),
        )
        .unwrap();
    world
        .add_joint(
            JointDesc::fixed("weld", base, weld_child)
                .anchors(Vec3::new(-1.0, 0.0, 0.0), Vec3::ZERO),
        )
        .unwrap();
    let twist = 0.3;
    let q = Quat::from_axis_angle(Vec3::new(0.2, 1.0, 0.3).normalize(), twist);
    for child in [ball_child, weld_child] {
        let (p, _) = world.body_pose(child).unwrap();
        world.set_body_pose(child, p, q).unwrap();
    }
    let d = world.constraint_data();
    assert_eq!(d[0][4], 0.0, "spherical angular error");
    assert!(
        d[0][3] < F32_TOL && d[1][3] < F32_TOL,
        "anchors stay together"
    );
    // Fixed: the relative rotation angle, to f32 precision of atan2 (1e-6 rad).
    assert!(
        (d[1][4] - twist).abs() < 1e-6,
        "fixed angular error {}",
        d[1][4]
    );
}

#[test]
fn revolute_angular_error_is_the_axis_misalignment_and_coordinate_the_angle() {
    let mut world = World::new(Settings::default()).unwrap();
    let a = world.add_body(BodyDesc::fixed("a")).unwrap();
    let b = world.add_body(BodyDesc::dynamic("b")).unwrap();
    world
        .add_joint(JointDesc::revolute("h", a, b).axis(Vec3::Z))
        .unwrap();
    // Rotate about the hinge: coordinate changes, misalignment stays 0.
    world
        .set_body_pose(b, Vec3::ZERO, Quat::from_rotation_z(0.4))
        .unwrap();
    let d = world.constraint_data()[0];
    assert!((d[7] - 0.4).abs() < 1e-6 && d[4] < 1e-6, "{d:?}");
    // Tilt the hinge axis by 0.1 rad about x: misalignment 0.1.
    world
        .set_body_pose(b, Vec3::ZERO, Quat::from_rotation_x(0.1))
        .unwrap();
    let d = world.constraint_data()[0];
    assert!((d[4] - 0.1).abs() < 1e-6, "{d:?}");
}

#[test]
fn prismatic_columns_split_along_and_across_the_axis() {
    let mut world = World::new(Settings::default()).unwrap();
    let a = world.add_body(BodyDesc::fixed("rail")).unwrap();
    let b = world.add_body(BodyDesc::dynamic("slider")).unwrap();
    world
        .add_joint(
            JointDesc::prismatic("p", a, b)
                .axis(Vec3::X)
                .limit(-0.1, 0.2),
        )
        .unwrap();
    world
        .set_body_pose(b, Vec3::new(0.25, 0.01, 0.0), Quat::IDENTITY)
        .unwrap();
    let d = world.constraint_data()[0];
    assert!((d[7] - 0.25).abs() < 1e-6, "coordinate {d:?}");
    assert!((d[5] - 0.05).abs() < 1e-6, "limit violation {d:?}");
    assert!(
        (d[1] - 0.01).abs() < 1e-6 && d[0].abs() < 1e-6,
        "across {d:?}"
    );
}

#[test]
fn joint_forces_hold_a_hanging_weight() {
    // A 2 kg bob hanging at rest: the joint carries m g = 19.62 N upward on the bob.
    let mut world = World::new(Settings::default()).unwrap();
    let a = world.add_body(BodyDesc::fixed("pivot")).unwrap();
    let b = world
        .add_body(
            BodyDesc::dynamic("bob")
                .position(Vec3::new(0.0, -1.0, 0.0))
                .mass(2.0),
        )
        .unwrap();
    let j = world
        .add_joint(JointDesc::spherical("ball", a, b).anchors(Vec3::ZERO, Vec3::new(0.0, 1.0, 0.0)))
        .unwrap();
    for _ in 0..30 {
        world.step(1.0 / 60.0).unwrap();
    }
    let f = world.joint_force(j).unwrap();
    // Warm-started rigid solve at rest: the force equals the weight to 1e-3 N.
    assert!((f.force_on_b.y - 19.62).abs() < 1e-3, "{f:?}");
    assert!(f.force_on_b.x.abs() < 1e-3 && f.force_on_b.z.abs() < 1e-3);
    assert_eq!(f.force_on_a(), -f.force_on_b);
}
