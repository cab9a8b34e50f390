use lavender_engine::*;
fn main() {
    for name in [
        "pendulum",
        "chain",
        "grid",
        "limited-revolute",
        "fixed-stack",
        "prismatic-slider",
    ] {
        let scene = Scene::builtin(name).unwrap();
        let mut w = scene.build().unwrap();
        let dt = scene.frame_dt();
        let steps = (scene.duration() / dt).round() as usize;
        let mut m = ResidualMax::default();
        let e0 = w.total_energy();
        let mut emax: f64 = 0.0;
        let t = std::time::Instant::now();
        let mut last = [0f32; 8];
        for _ in 0..steps {
            w.step_observed(dt, |w, _| {
                m.fold(w.constraint_data());
            })
            .unwrap();
            emax = emax.max((w.total_energy() - e0).abs());
            last = w.constraint_data()[0];
        }
        println!("{name}: steps {steps} joints {} max anchor {:.3e} max ang {:.3e} max lim {:.3e} dE {:.3e} E0 {:.3} t {:?} last0 {:?}", w.joint_count(), m.anchor_error, m.angular_error, m.limit_violation, emax, e0, t.elapsed(), last);
    }
}
