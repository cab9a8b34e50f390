use lavender_engine::*;
fn main() {
    let scene = Scene::builtin("prismatic-slider").unwrap();
    let mut w = scene.build().unwrap();
    let b = w.body_id("block").unwrap();
    println!("E0 {} pose {:?}", w.total_energy(), w.body_pose(b).unwrap());
    for s in 0..40 {
        w.step(1.0 / 60.0).unwrap();
        if s % 4 == 0 {
            println!(
                "{s} E {:.3} pose {:?} vel {:?} d {:?}",
                w.total_energy(),
                w.body_pose(b).unwrap().0,
                w.body_velocity(b).unwrap(),
                w.constraint_data()[0]
            );
        }
    }
}
