//! Chains: joints that the direct chain solve ([`crate::Settings::chain_solve`]) solves
//! together, one block-tridiagonal system per chain instead of row by row.
//!
//! A chain is a path in the joint graph: bodies `b_0, b_1, ..., b_n` and joints `j_1..j_n`,
//! `j_k` between `b_(k-1)` and `b_k`. Its system `K = J M^-1 J^T` couples only consecutive
//! joints (through the body they share), so it is block tridiagonal and a forward and a
//! backward sweep solve it exactly, where Gauss-Seidel needs a number of passes that grows
//! with the chain's length (a hanging chain of 100 links keeps stretching after 16 passes).
//!
//! How chains are found (from the scene alone, so every run and thread count finds the same):
//!
//! 1. a breadth-first forest over the eligible joints, from every static or kinematic body
//!    (in body order), then from each dynamic body not yet reached (in body order): each
//!    dynamic body gets a parent joint leading towards a fixed body where there is one. Load
//!    flows along this forest: in a hanging net it is the columns, not the rows;
//! 2. the forest is cut into paths: each body continues its path through the child with the
//!    tallest subtree (ties: the first found); every other child starts a path of its own,
//!    whose first body is that child (the joint to its parent stays with the row-by-row
//!    solver). A path that starts at a fixed body starts with the joint to it.
//!
//! Paths share no dynamic body, so chains never conflict with one another and run in any
//! order or in parallel. Joints that touch a chain's bodies from outside it are solved by the
//! colours, after the chains, in the same velocity pass (block Gauss-Seidel).
//!
//! Eligible joints: every hinge or ball joint ([`CHAIN_KINDS`]), limited or not, between a
//! dynamic body and any body. A limit row is unilateral (an inequality): the chain solve
//! keeps it in or out of the chain's system as its limit is active (an active-set solve,
//! `solver/chain.rs`). Welds and sliders stay with the colours: their systems f32 cannot
//! solve directly at length (see [`CHAIN_KINDS`]). Chains shorter than [`MIN_CHAIN_JOINTS`] are left to the colours too.

use crate::bodies::BodyKind;
use crate::joints::JointKind;

/// The joint types a chain is made of: hinges and ball joints. A chain of them is a string,
/// whose `K` has a condition number growing like `n^2`: the direct solve stays exact at a
/// thousand links in f32. Welds and sliders stay with the colours. A welded beam's `K` grows
/// like `n^4` (its bending) and a slider's block with the square of its extension; past a
/// few tens of welded links, or a slider tens of metres out, f32 kept no digit of the direct
/// solve, and QA (2026-12-04) sent welded beams of 30 to 100 links and chains through
/// sliders to 1e6 to 4e13 m or non-finite, where Gauss-Seidel, which inverts nothing, held
/// them to centimetres (a tried cap of ten welded joints per piece did not hold either).
pub const CHAIN_KINDS: [JointKind; 2] = [JointKind::Revolute, JointKind::Spherical];

/// Shortest chain solved directly; shorter ones gain nothing over a row-by-row pass.
pub const MIN_CHAIN_JOINTS: usize = 2;

/// How joint `k` of a chain meets joint `k - 1` (the body they share): bit 0 set when it is
/// joint `k - 1`'s body B (else A), bit 1 set when it is joint `k`'s body A (else B).
pub type Link = u8;

/// Joint `k - 1`'s side of the shared body is B.
pub const LINK_PREV_B: Link = 1;
/// Joint `k`'s side of the shared body is A.
pub const LINK_NEXT_A: Link = 2;

/// One chain: its joints from the root outwards and, for each joint after the first, how it
/// meets the one before (`links[k - 1]` for joint `k`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// Joint indices, from the root outwards.
    pub joints: Vec<u32>,
    /// `links[k - 1]`: how joint `k` meets joint `k - 1`.
    pub links: Vec<Link>,
}

/// The chains of a scene (see the module documentation), in the order of their first joint's
/// discovery. `eligible[j]` says whether joint `j` may join a chain.
pub fn find(body_kinds: &[BodyKind], joint_bodies: &[(u32, u32)], eligible: &[bool]) -> Vec<Chain> {
    let bodies = body_kinds.len();
    let dynamic = |b: u32| body_kinds[b as usize] == BodyKind::Dynamic;
    // Eligible joints per body, in joint order.
    let keep = |j: usize| {
        let (a, b) = joint_bodies[j];
        eligible[j] && a != b && (dynamic(a) || dynamic(b))
    };
    let (start, adjacent) = super::joints_per_body(bodies, joint_bodies, keep, |_| true);
    // Breadth-first forest: `parent_joint[b]` (u32::MAX for roots and unreached bodies).
    const NONE: u32 = u32::MAX;
    let mut parent_joint = vec![NONE; bodies];
    let mut reached = vec![false; bodies];
    let mut order: Vec<u32> = Vec::with_capacity(bodies);
    // Breadth-first from `seeds` (all at depth 0) over the unreached dynamic bodies.
    let search =
        |seeds: &[u32], parent_joint: &mut [u32], reached: &mut [bool], order: &mut Vec<u32>| {
            let mut queue: std::collections::VecDeque<u32> = seeds.iter().copied().collect();
            for &s in seeds {
                reached[s as usize] = true;
            }
            while let Some(x) = queue.pop_front() {
                order.push(x);
                for &j in &adjacent[start[x as usize]..start[x as usize + 1]] {
                    let (a, b) = joint_bodies[j as usize];
                    let y = if a == x { b } else { a };
                    if dynamic(y) && !reached[y as usize] {
                        reached[y as usize] = true;
                        parent_joint[y as usize] = j;
                        queue.push_back(y);
                    }
                }
            }
        };
    // Every fixed body first, together, so that depth counts joints from the nearest one;
    // then each dynamic body not reached, as the root of its own search.
    let fixed: Vec<u32> = (0..bodies as u32)
        .filter(|&b| !dynamic(b) && start[b as usize] < start[b as usize + 1])
        .collect();
    search(&fixed, &mut parent_joint, &mut reached, &mut order);
    for b in 0..bodies as u32 {
        if dynamic(b) && !reached[b as usize] {
            search(&[b], &mut parent_joint, &mut reached, &mut order);
        }
    }
    let parent_of = |y: u32| -> Option<(u32, u32)> {
        let j = parent_joint[y as usize];
        (j != NONE).then(|| {
            let (a, b) = joint_bodies[j as usize];
            (j, if a == y { b } else { a })
        })
    };
    // Subtree heights, children last in `order`, so a reverse sweep sees children first.
    let mut height = vec![0u32; bodies];
    let mut heavy = vec![NONE; bodies];
    for &y in order.iter().rev() {
        if let Some((_, x)) = parent_of(y) {
            let h = height[y as usize] + 1;
            // `order` is reversed: the first child found replaces later ones on a tie.
            if h >= height[x as usize] {
                height[x as usize] = h;
                heavy[x as usize] = y;
            }
        }
    }
    let mut chains = Vec::new();
    for &y in &order {
        if !dynamic(y) {
            continue;
        }
        let parent = parent_of(y);
        let starts_with_parent_joint = match parent {
            // A child of a fixed body: the path starts with the joint to it.
            Some((_, x)) if !dynamic(x) => true,
            // The heavy child continues its parent's path.
            Some((_, x)) if heavy[x as usize] == y => continue,
            // A light child, or a root: the path starts at this body.
            _ => false,
        };
        let mut joints = Vec::new();
        if starts_with_parent_joint {
            joints.push(parent_joint[y as usize]);
        }
        let mut x = y;
        while heavy[x as usize] != NONE {
            let child = heavy[x as usize];
            joints.push(parent_joint[child as usize]);
            x = child;
        }
        if joints.len() < MIN_CHAIN_JOINTS {
            continue;
        }
        let links = joints
            .windows(2)
            .map(|w| {
                let (prev, next) = (joint_bodies[w[0] as usize], joint_bodies[w[1] as usize]);
                // The shared body: the one both joints touch.
                let shared = if prev.1 == next.0 || prev.1 == next.1 {
                    prev.1
                } else {
                    prev.0
                };
                let mut link = 0;
                if prev.1 == shared {
                    link |= LINK_PREV_B;
                }
                if next.0 == shared {
                    link |= LINK_NEXT_A;
                }
                link
            })
            .collect();
        chains.push(Chain { joints, links });
    }
    chains
}

#[cfg(test)]
mod tests {
    use super::*;
    use BodyKind::{Dynamic as D, Static as S};

    #[test]
    fn a_hanging_chain_is_one_chain_from_its_anchor() {
        // ground 0, links 1..=4: joints (0,1), (1,2), (2,3), (3,4).
        let kinds = [S, D, D, D, D];
        let joints = [(0, 1), (1, 2), (2, 3), (3, 4)];
        let chains = find(&kinds, &joints, &[true; 4]);
        assert_eq!(
            chains,
            vec![Chain {
                joints: vec![0, 1, 2, 3],
                links: vec![LINK_PREV_B | LINK_NEXT_A; 3],
            }]
        );
    }

    #[test]
    fn a_reversed_joint_is_linked_by_its_b_side() {
        // The second joint names its bodies the other way round.
        let kinds = [S, D, D, D];
        let joints = [(0, 1), (2, 1), (2, 3)];
        let chains = find(&kinds, &joints, &[true; 3]);
        assert_eq!(chains.len(), 1);
        assert_eq!(chains[0].joints, vec![0, 1, 2]);
        // Joint 1 meets joint 0 at body 1 (joint 0's B, joint 1's B), joint 2 meets joint 1
        // at body 2 (joint 1's A, joint 2's A).
        assert_eq!(chains[0].links, vec![LINK_PREV_B, LINK_NEXT_A]);
    }

    #[test]
    fn a_net_hanging_from_a_static_row_is_cut_into_its_columns() {
        // 3 x 3 bodies, row 0 static, linked right and down (the benchmark grid's layout).
        let idx = |r: u32, c: u32| r * 3 + c;
        let kinds: Vec<BodyKind> = (0..9).map(|i| if i < 3 { S } else { D }).collect();
        let mut joints = Vec::new();
        for r in 0..3 {
            for c in 0..3 {
                if c + 1 < 3 {
                    joints.push((idx(r, c), idx(r, c + 1)));
                }
                if r + 1 < 3 {
                    joints.push((idx(r, c), idx(r + 1, c)));
                }
            }
        }
        let eligible = vec![true; joints.len()];
        let chains = find(&kinds, &joints, &eligible);
        let bodies_of = |c: &Chain| -> Vec<(u32, u32)> {
            c.joints.iter().map(|&j| joints[j as usize]).collect()
        };
        assert_eq!(chains.len(), 3);
        for (c, chain) in chains.iter().enumerate() {
            let c = c as u32;
            assert_eq!(
                bodies_of(chain),
                vec![(idx(0, c), idx(1, c)), (idx(1, c), idx(2, c))]
            );
        }
    }

    #[test]
    fn branches_share_no_dynamic_body_and_limited_joints_stay_out() {
        // A Y: ground 0 - 1 - 2 - 3 and a branch 2 - 4 - 5 - 6; joint 6 (5, 6) is limited.
        let kinds = [S, D, D, D, D, D, D];
        let joints = [(0, 1), (1, 2), (2, 3), (2, 4), (4, 5), (5, 6)];
        let mut eligible = [true; 6];
        eligible[5] = false;
        let chains = find(&kinds, &joints, &eligible);
        // Trunk continues through the taller branch 2-4-5; 3 is a light child of length 0.
        assert_eq!(chains.len(), 1);
        assert_eq!(chains[0].joints, vec![0, 1, 3, 4]);
        // The light branch's joint (2, 3) and the limited joint stay with the colours.
        assert!(!chains
            .iter()
            .any(|c| c.joints.contains(&2) || c.joints.contains(&5)));
    }

    #[test]
    fn a_free_floating_chain_starts_at_its_lowest_body() {
        let kinds = [D, D, D, D];
        let joints = [(2, 3), (0, 1), (1, 2)];
        let chains = find(&kinds, &joints, &[true; 3]);
        assert_eq!(chains.len(), 1);
        assert_eq!(chains[0].joints, vec![1, 2, 0]);
    }
}
