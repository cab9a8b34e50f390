use lavender_engine::*;
fn main() {
    let name = std::env::args().nth(1).unwrap();
    let j: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(0);
    let scene = Scene::builtin(&name).unwrap();
    let mut w = scene.build().unwrap();
    let dt = scene.frame_dt();
    for s in 0..200 {
        w.step(dt).unwrap();
        let d = w.constraint_data()[j];
        if s % 4 == 0 {
            println!("{s} {:?} E {:.4}", d, w.total_energy());
        }
    }
}
