use lavender_engine::*;
fn main() {
    let name = std::env::args().nth(1).unwrap();
    let scene = Scene::builtin(&name).unwrap();
    for (ws, pi, er) in [
        (true, 2, 0.2),
        (false, 2, 0.2),
        (true, 0, 0.2),
        (true, 2, 0.0),
        (false, 0, 0.2),
        (false, 2, 0.0),
    ] {
        let mut s = scene.settings();
        s.warm_starting = ws;
        s.position_iterations = pi;
        s.error_reduction = er;
        let mut w = scene.build_with(s).unwrap();
        let dt = scene.frame_dt();
        let mut m = ResidualMax::default();
        let e0 = w.total_energy();
        let mut n = 0;
        for _ in 0..60 {
            if w.step_observed(dt, |w, _| m.fold(w.constraint_data()))
                .is_err()
            {
                break;
            }
            n += 1;
        }
        println!(
            "ws {ws} pi {pi} er {er}: steps {n} max anchor {:.3e} dE {:.3e}",
            m.anchor_error,
            w.total_energy() - e0
        );
    }
}
