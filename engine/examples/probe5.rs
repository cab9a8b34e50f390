use lavender_engine::*;
fn main() {
    let ers: Vec<f32> = std::env::args()
        .skip(1)
        .map(|s| s.parse().unwrap())
        .collect();
    for er in ers {
        for name in [
            "chain",
            "grid",
            "fixed-stack",
            "limited-revolute",
            "prismatic-slider",
            "pendulum",
        ] {
            let scene = Scene::builtin(name).unwrap();
            let mut s = scene.settings();
            s.error_reduction = er;
            let mut w = scene.build_with(s).unwrap();
            let dt = scene.frame_dt();
            let steps = (scene.duration() / dt).round() as usize;
            let mut m = ResidualMax::default();
            let e0 = w.total_energy();
            let mut emax: f64 = 0.0;
            for _ in 0..steps {
                w.step_observed(dt, |w, _| m.fold(w.constraint_data()))
                    .unwrap();
                emax = emax.max(w.total_energy() - e0);
            }
            println!(
                "er {er} {name}: max anchor {:.3e} ang {:.3e} lim {:.3e} energy gain {:.3e}",
                m.anchor_error, m.angular_error, m.limit_violation, emax
            );
        }
    }
}
