use lavender_engine::*;
fn run(label: &str, mut w: World, steps: usize) {
    let mut m = ResidualMax::default();
    let e0 = w.total_energy();
    let mut emax: f64 = 0.0;
    for _ in 0..steps {
        w.step_observed(1.0 / 60.0, |w, _| m.fold(w.constraint_data()))
            .unwrap();
        emax = emax.max(w.total_energy() - e0);
    }
    println!(
        "{label}: max anchor {:.3e} (j{}) ang {:.3e} (j{}) max energy gain {:.3e}",
        m.anchor_error, m.anchor_joint, m.angular_error, m.angular_joint, emax
    );
}
fn main() {
    for (r, c) in [(20, 20)] {
        let mut w = World::new(Settings::default()).unwrap();
        GridSpec {
            name: "g".into(),
            rows: r,
            cols: c,
            spacing: 0.1,
            origin: [0.0; 3],
            mass: 0.1,
            joint: JointKind::Spherical,
        }
        .build_into(&mut w)
        .unwrap();
        run(&format!("grid {r}x{c}"), w, 180);
    }
    for (n, ws, er, pi) in [
        (10, true, 0.2, 2),
        (10, false, 0.2, 2),
        (10, true, 0.0, 2),
        (10, false, 0.0, 2),
        (10, true, 0.2, 0),
        (10, false, 0.0, 0),
    ] {
        let mut w = World::new(Settings {
            warm_starting: ws,
            error_reduction: er,
            position_iterations: pi,
            ..Settings::default()
        })
        .unwrap();
        let wall = w.add_body(BodyDesc::fixed("wall")).unwrap();
        let mut prev = wall;
        for i in 0..n {
            let b = w
                .add_body(
                    BodyDesc::dynamic(format!("b{i}"))
                        .position(Vec3::new(0.2 * i as f32 + 0.1, 0.0, 0.0))
                        .solid_box(1.0, Vec3::splat(0.1)),
                )
                .unwrap();
            let aa = if i == 0 {
                Vec3::ZERO
            } else {
                Vec3::new(0.1, 0.0, 0.0)
            };
            w.add_joint(
                JointDesc::fixed(format!("w{i}"), prev, b).anchors(aa, Vec3::new(-0.1, 0.0, 0.0)),
            )
            .unwrap();
            prev = b;
        }
        run(&format!("cantilever {n} ws {ws} er {er} pi {pi}"), w, 180);
    }
}
