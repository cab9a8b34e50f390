//! Islands: connected components of the dynamic bodies through joints.
//!
//! Static and kinematic bodies do not join islands (a joint to the ground does not tie two
//! pendulums hanging from it together), as in Box2D. Islands are numbered in the order of
//! their lowest body index, so the numbering depends on the scene alone. They are recomputed
//! whenever a body or joint is added (joints are never removed).
//!
//! Sleeping is not implemented: Lavender's offline runs step every body every substep. The
//! rule an implementation should follow is Box2D's: an island sleeps when all of its bodies
//! have stayed below a linear and angular speed threshold for a time, and wakes when any of
//! its bodies is touched by the API (`set_body_pose`, `set_body_velocity`).

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
