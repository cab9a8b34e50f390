//! Islands: connected components of the dynamic bodies through joints.
//!
//! Static and kinematic bodies do not join islands (a joint to the ground does not tie two
//! pendulums hanging from it together), as in Box2D. Islands are numbered in the order of
//! their lowest body index, so the numbering depends on the scene alone. They are recomputed
//! whenever a body or joint is added (joints are never removed).
//!
//! # Sleeping
//!
//! Off by default ([`crate::Settings::sleeping`]): offline runs step every body every substep.
//! When on, the rule is Box2D's, applied per island by the `update_sleep` stage at the end of
//! every substep (after position projection; `crate::sleep`):
//!
//! - each awake dynamic body has a rest timer, in seconds: it grows by the substep `h` while
//!   `|v| <= sleep_linear_speed` (m/s) and `|w| <= sleep_angular_speed` (rad/s), and is reset
//!   to 0 otherwise. A dynamic body jointed to a kinematic body with a non-zero velocity is
//!   reset to 0 too (the kinematic body drags it, however slowly);
//! - an island falls asleep when every one of its bodies' timers is `>= time_to_sleep` (s):
//!   its velocities are set to zero, its joints leave the schedule (the schedule is rebuilt
//!   before the next substep) and the integration stages skip its bodies, so its poses stay
//!   bit for bit where they were. Warm-start impulses and joint forces keep their last values;
//!   the diagnostics, derived from the poses and zero velocities, stay correct;
//! - an island wakes, with every timer reset to 0, when the API touches one of its bodies
//!   (`World::set_body_pose`, `World::set_body_velocity`, `World::add_joint`), when a touched
//!   static or kinematic body is jointed to it, when a kinematic body jointed to it moves, on
//!   `World::restore_body_states` and `World::wake_all` (every island), and when a sleep
//!   setting changes.
//!
//! Timers freeze while an island sleeps, so between substeps an island sleeps exactly when all
//! of its timers have reached `time_to_sleep`: the timers alone determine who sleeps. With
//! sleeping on they follow the impulses in `World::solver_state`, and `World::set_solver_state`
//! re-derives the sleeping islands from them, so a run resumed from a keyframe is bit-exact.
//! Nothing depends on the thread count.

use crate::bodies::BodyKind;

/// Island of each body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Islands {
    /// Island of each body, [`Islands::NONE`] for static and kinematic bodies.
    pub island_of: Vec<u32>,
    /// Number of islands.
    pub count: usize,
}

impl Islands {
    /// The island of a non-dynamic body.
    pub const NONE: u32 = u32::MAX;

    /// Union-find over the joints whose two bodies are dynamic.
    pub fn build(body_kinds: &[BodyKind], joint_bodies: &[(u32, u32)]) -> Islands {
        let mut parent: Vec<u32> = (0..body_kinds.len() as u32).collect();
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let up = parent[parent[x as usize] as usize];
                parent[x as usize] = up;
                x = up;
            }
            x
        }
        for &(a, b) in joint_bodies {
            if body_kinds[a as usize] != BodyKind::Dynamic
                || body_kinds[b as usize] != BodyKind::Dynamic
            {
                continue;
            }
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            // The lower index becomes the root, so roots are each island's lowest body.
            if ra < rb {
                parent[rb as usize] = ra;
            } else if rb < ra {
                parent[ra as usize] = rb;
            }
        }
        let mut island_of = vec![Self::NONE; body_kinds.len()];
        let mut count = 0;
        for i in 0..body_kinds.len() {
            if body_kinds[i] != BodyKind::Dynamic {
                continue;
            }
            let r = find(&mut parent, i as u32) as usize;
            if r == i {
                island_of[i] = count;
                count += 1;
            } else {
                island_of[i] = island_of[r];
            }
        }
        Islands {
            island_of,
            count: count as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BodyKind::{Dynamic, Static};

    #[test]
    fn two_pendulums_on_one_ground_are_two_islands() {
        let kinds = [Static, Dynamic, Dynamic, Dynamic];
        let islands = Islands::build(&kinds, &[(0, 1), (0, 2), (2, 3)]);
        assert_eq!(islands.island_of, vec![Islands::NONE, 0, 1, 1]);
        assert_eq!(islands.count, 2);
    }
}
