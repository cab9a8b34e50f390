//! Hubs: a dynamic body with many joints, whose joints are solved together, exactly, in
//! every velocity pass (the solver's hub solve) instead of row by row.
//!
//! Why: the joints of a hub couple through the hub alone, and when the hub is much lighter
//! (in rotation) than what hangs on it, Gauss-Seidel converges on them so slowly that the
//! warm start, which re-applies the last substep's impulses, feeds a growing spin: a 1 kg hub
//! (a 0.1 m cube) with ten 0.2 kg bobs 0.8 m out spun up to 1e4 rad/s within 8 s, and with
//! twenty the step went non-finite within a second (engine/DESIGN.md: Hubs). An exact solve of
//! the hub's joints does not depend on where it starts, so the warm start cannot feed it.
//!
//! How hubs are found (from the scene alone): every dynamic body with at least
//! [`HUB_MIN_JOINTS`] eligible joints, or [`LIGHT_HUB_MIN_JOINTS`] if it is light, or
//! [`CARRIER_MIN_JOINTS`] if it is a light link carrying a heavy body ([`light_bodies`], from
//! the scene's masses and anchors), a candidate, the lightest first
//! (then in body order), takes its eligible joints in joint order whose other body is a
//! dynamic body that is not a strong candidate (one with that many joints besides those to
//! other candidates) unless [`LIGHT_RATIO`] times heavier than the hub, no hub
//! has taken yet, and is not already at the end of another of this hub's joints (any number
//! of them), or static or
//! kinematic (at most [`HUB_MAX_FIXED_JOINTS`] of those); if that
//! leaves it that many joints, the hub and the dynamic bodies at their other ends
//! are taken. Hubs therefore share no dynamic body: they run in parallel in any order. Two
//! joints of a hub share only the hub (or a static or kinematic body, which does not move),
//! so its system `K = J M^-1 J^T` is the identity (decoupled rows) plus the couplings through
//! the hub. Eligible joints: awake (limited or not: the hub solve moves a limit's row in
//! and out of its system as the limit is active, see `solver::hub`).

use super::chains::CHAIN_KINDS;
use crate::bodies::BodyKind;
use crate::joints::JointKind;

/// Fewest joints that make a body a hub: more than a grid's or a chain's bodies have (4 and
/// 2), so that nets and chains stay with the colours (and the chain solve), and few enough
/// for a light body with four arms and a support (which Gauss-Seidel lets spin up too).
pub const HUB_MIN_JOINTS: usize = 5;

/// Fewest joints that make a light body a hub ([`Light::Hub`]).
pub const LIGHT_HUB_MIN_JOINTS: usize = 3;

/// Fewest joints that make a light link carrying a heavy body a hub ([`Light::Carrier`]): its
/// support and the heavy body, solved at once.
pub const CARRIER_MIN_JOINTS: usize = 2;

/// Most dynamic bodies a carrier carries: one (a light arm carrying a heavy body), or two (a
/// light gimbal between two heavy bodies, a universal joint made of two hinges around a light
/// body: row by row a 0.01 kg gimbal between a 10 kg torso and a 10 kg limb left 8.6e-2 m of
/// anchor error and lost 27 J of its swing in 20 s, QA 2026-12-07).
pub const CARRIER_MAX_CARRIED: usize = 2;

/// How many times its mass the body a carriage ([`Light::Carrier`] with a joint to a dynamic
/// body it does not carry) hangs from must be. QA 2026-12-07: a 0.5 kg slider carriage on a
/// 2 kg arm hinged to a pivot, a 51 kg bob on a ball joint below it, swung the bob out
/// against the slider's stop: row by row 8.6e-3 m at the hinge, 3.4e-2 m through the stop and
/// 70 J regained after the impact. Not for a chain's links, of equal masses: as carriers of a
/// heavy load at a chain's end they held it worse. The support must also hang from static or
/// kinematic bodies alone (not from another light link: a tapered chain's last link came
/// apart as a carrier), and with the chain solve a carriage of hinges and ball joints is left
/// to the chain ([`light_bodies`]).
pub const CARRIAGE_SUPPORT_RATIO: f32 = 2.0;

/// How much more mobile at a joint's anchor a body must be than the dynamic body at the other
/// end for that one joint to make it a carrier ([`Light::Carrier`]). Row by row a light link
/// passes too little of the heavy body's load in each velocity pass: a 0.01 kg arm hinged at
/// a pivot with a 10 kg box welded to its end lost half its swing in 20 s (QA 2026-12-06,
/// `data/regressions/light-arm-weld.toml`). Above a chain's ratios (the tutorial's chain of
/// 1 kg links with a 10 kg tip stays row by row).
pub const CARRIER_RATIO: f32 = 100.0;

/// The largest mass ratio across a carrier's joint to the heavy body, unless that joint is a
/// weld (or the carrier has a slider: [`SLIDER_CARRIER_MAX_MASS_RATIO`]). Through a hinge or
/// a ball joint the light link keeps turning freely against the heavy body on its own tiny
/// inertia: beyond about 3,000 such links came apart row by row and, as carriers, went
/// non-finite or gained energy (QA 2026-12-07, with the hub system in `f64`; in `f32` its
/// factors failed there too). Welded, the link turns with the heavy body, and a carrier holds
/// at any ratio (a 1e-8 kg arm carrying a 10 kg box: 1.6e-6 m).
pub const CARRIER_MAX_MASS_RATIO: f32 = 2000.0;

/// The largest mass ratio a carrier with a slider among its joints may span. Such carriers
/// hold where row by row the joints came apart (a 0.025 kg arm carrying a 10 kg box sliding
/// 2 km out: 1.2e-4 m against 4.6e-3 m), but a link welded to a turning kinematic crank with
/// a block on a slider gained megajoules from a ratio of 1,000 (held at 500), and 1e-6 kg
/// arms or carts went non-finite at 1e6 (QA 2026-12-07).
pub const SLIDER_CARRIER_MAX_MASS_RATIO: f32 = 500.0;

/// How light a body is, for the hub rules ([`light_bodies`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Light {
    /// Not light: a hub from [`HUB_MIN_JOINTS`] joints.
    #[default]
    No,
    /// [`LIGHT_HUB_MIN_JOINTS`] of its joints to dynamic bodies at whose anchors it is
    /// [`LIGHT_RATIO`] times as mobile: a hub from that many joints.
    Hub,
    /// A light link carrying a heavy body: one joint to a dynamic body at which it is
    /// [`CARRIER_RATIO`] times as mobile (within a mass ratio: [`CARRIER_MAX_MASS_RATIO`],
    /// [`SLIDER_CARRIER_MAX_MASS_RATIO`]), its other joints to static or kinematic bodies. A
    /// hub from [`CARRIER_MIN_JOINTS`] joints that takes no hub candidate as its leaf (it would
    /// leave that hub's joints row by row: a light link hanging the shipped hub scene went
    /// non-finite, QA 2026-12-07). Sliders were left out while the hub system was `f32` (a
    /// slider's block grows with the square of its extension, and slider carriers run out a
    /// few metres came apart); in `f64` they hold, within a smaller mass ratio (QA
    /// 2026-12-07).
    Carrier,
}

impl Light {
    /// Fewest joints that make a body this light a hub.
    pub fn min_hub_joints(self) -> usize {
        match self {
            Light::No => HUB_MIN_JOINTS,
            Light::Hub => LIGHT_HUB_MIN_JOINTS,
            Light::Carrier => CARRIER_MIN_JOINTS,
        }
    }
}

/// How much more mobile at a joint's anchor a body must be than the dynamic body at the other
/// end for the joint to count towards it being light ([`light_bodies`]).
pub const LIGHT_RATIO: f32 = 10.0;

/// Most joints of one hub to static or kinematic bodies: their rows make a dense system of
/// their own in the hub solve (at most 96 rows, factorised again whenever a hub's limits
/// change; the rows beyond the hub's six degrees of freedom depend on the others). The rest
/// stay with the colours. At 64 (384 rows), with the dense fallback then taken for every
/// redundant support, a hub of 100 ground supports and limited spokes took 54 ms a substep
/// (QA, 2026-12-05). Joints to dynamic bodies
/// are not capped: the hub solve is linear in them. (Until 2026-12-05 every hub took at most
/// 64 joints, and a hub of 100 sliders, the 36 left row by row beside it, came apart: 296 m
/// in 3 s.)
pub const HUB_MAX_FIXED_JOINTS: usize = 16;

/// One hub: a dynamic body and the joints solved with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hub {
    /// The hub body.
    pub body: u32,
    /// Its joints, in joint order.
    pub joints: Vec<u32>,
}

/// How light each body of a scene is ([`Light`]): a light body with three arms is as hard for
/// Gauss-Seidel as a hub with many, and so is a light link carrying a heavy body. A body is
/// `k` times as mobile as the other at a joint where its anchor moves `k` times as far under
/// a unit impulse, `1/m + r^2 / I` (1/kg; `inv_mass`, anchor `r` in the body's frame, `I` the
/// moment across `r` from `inv_inertia_local`: [`crate::bodies::inv_inertia_across`]), or,
/// at a joint that also holds the bodies' relative rotation (every type but the spherical), it
/// turns `k` times as far under a unit torque about its freest axis (`1 / I_min`).
/// `kinds[j]` is joint `j`'s type; `chain_solve` says whether the chain solve is on
/// ([`crate::Settings::chain_solve`]), which takes carriages of hinges and ball joints. The
/// masses are the scene's, so this is too.
///
/// Both, because neither alone tells a thin rod right. With the point measure `1/m + |r|^2 /
/// I_min` of 2026-12-05 to 2026-12-07 (the smallest moment whatever the direction), a 1 kg
/// rod looked 375 times as mobile at its end as a 1 kg cube welded there (1.6 times, as the
/// point moves) and became a carrier; the point measure alone missed what twists a thin rod
/// about its own axis, which welds and hinges must hold: a 0.1 kg rod carrying a 10 kg L-bar
/// welded off its axis (25,000 times as free to twist) came apart, 0.16 m (QA 2026-12-07).
pub fn light_bodies(
    inv_mass: &[f32],
    inv_inertia_local: &[glam::Vec3],
    joint_bodies: &[(u32, u32)],
    anchors: &[(glam::Vec3, glam::Vec3)],
    kinds: &[JointKind],
    chain_solve: bool,
) -> Vec<Light> {
    let point_mobility = |b: u32, r: glam::Vec3| {
        f64::from(inv_mass[b as usize])
            + crate::bodies::inv_inertia_across(inv_inertia_local[b as usize], r)
    };
    let turn_mobility = |b: u32| f64::from(inv_inertia_local[b as usize].max_element());
    let bodies = inv_mass.len();
    let mut count = vec![0usize; bodies];
    // The mass ratio, type and other body of each joint at which the body is CARRIER_RATIO
    // times as mobile.
    let mut carries: Vec<Vec<(f32, JointKind, u32)>> = vec![Vec::new(); bodies];
    let (mut dynamic_joints, mut slider) = (vec![0usize; bodies], vec![false; bodies]);
    // The dynamic bodies each body is jointed to, and through what type of joint.
    let mut neighbours: Vec<Vec<(u32, JointKind)>> = vec![Vec::new(); bodies];
    for ((&(a, b), &(r_a, r_b)), &kind) in joint_bodies.iter().zip(anchors).zip(kinds) {
        let prismatic = kind == JointKind::Prismatic;
        slider[a as usize] |= prismatic;
        slider[b as usize] |= prismatic;
        // Both dynamic (a static or kinematic body has no mobility): one dominates.
        if a != b && inv_mass[a as usize] > 0.0 && inv_mass[b as usize] > 0.0 {
            let holds_rotation = kind != JointKind::Spherical;
            let (p_a, p_b) = (point_mobility(a, r_a), point_mobility(b, r_b));
            let (t_a, t_b) = (turn_mobility(a), turn_mobility(b));
            let (inv_a, inv_b) = (inv_mass[a as usize], inv_mass[b as usize]);
            for ((light, heavy), (inv_light, inv_heavy), (body, other)) in [
                (((p_a, t_a), (p_b, t_b)), (inv_a, inv_b), (a, b)),
                (((p_b, t_b), (p_a, t_a)), (inv_b, inv_a), (b, a)),
            ] {
                // How many times as mobile `body` is at this joint.
                let point = light.0 / heavy.0;
                let ratio = if holds_rotation {
                    point.max(light.1 / heavy.1)
                } else {
                    point
                };
                count[body as usize] += usize::from(ratio > f64::from(LIGHT_RATIO));
                // Through a ball joint the heavy body turns about the anchor, which makes it
                // mobile there for an instant, but a load it keeps up (a bob swinging out
                // against a stop) is its mass: judged by that too.
                let carried = if holds_rotation {
                    ratio
                } else {
                    ratio.max(f64::from(inv_light) / f64::from(inv_heavy))
                };
                if carried > f64::from(CARRIER_RATIO) {
                    carries[body as usize].push((inv_light / inv_heavy, kind, other));
                }
                dynamic_joints[body as usize] += 1;
                neighbours[body as usize].push((other, kind));
            }
        }
    }
    // A carriage: a light body carrying one heavy body, its other joint to a dynamic body
    // at least CARRIAGE_SUPPORT_RATIO times its mass that it does not carry (a slider's
    // carriage on an arm, a bob below it). That support must be held by static or kinematic
    // bodies alone (the carriage its one dynamic neighbour): the last link of a tapered
    // chain (each link half the one before, a load 1,000 times the last) passes the ratio,
    // and as a carrier it let the chain come apart, 0.05 m row by row to 7 m (QA 2026-12-07).
    // With the chain solve, a carriage of hinges and ball joints is left to it: a chain's
    // direct solve holds the load exactly, and the carriage's hub took its joints from it
    // (1.9e-3 m against 5.1e-2 m, QA 2026-12-07).
    let carriage = |b: usize| match (neighbours[b].as_slice(), carries[b].as_slice()) {
        (&[(n0, k0), (n1, k1)], &[(_, _, heavy)]) if n0 != n1 => {
            let support = if n0 == heavy { n1 } else { n0 };
            let heavier = inv_mass[support as usize] * CARRIAGE_SUPPORT_RATIO <= inv_mass[b];
            let anchored = neighbours[support as usize].len() == 1;
            let chained = chain_solve && [k0, k1].iter().all(|k| CHAIN_KINDS.contains(k));
            heavier && anchored && !chained
        }
        _ => false,
    };
    // Carriers of every dynamic body they are jointed to, within the mass ratios.
    let carrier: Vec<bool> = (0..bodies)
        .map(|b| {
            count[b] < LIGHT_HUB_MIN_JOINTS
                && (1..=CARRIER_MAX_CARRIED).contains(&dynamic_joints[b])
                && (carries[b].len() == dynamic_joints[b] || carriage(b))
                && (carries[b].iter()).all(|&(mass_ratio, kind, _)| {
                    mass_ratio <= carrier_max_mass_ratio(kind, slider[b])
                })
        })
        .collect();
    // Light links each heavy body is jointed to.
    let mut links = vec![0usize; bodies];
    for (b, carried) in carries.iter().enumerate() {
        if carrier[b] {
            for &(_, _, heavy) in carried {
                links[heavy as usize] += 1;
            }
        }
    }
    (0..bodies)
        .map(|b| {
            if count[b] >= LIGHT_HUB_MIN_JOINTS {
                Light::Hub
            } else if carrier[b]
                && (dynamic_joints[b] == 1
                    || carries[b]
                        .iter()
                        .all(|&(_, _, heavy)| links[heavy as usize] == 1))
            {
                // A gimbal (two heavy bodies) only where neither heavy body has another light
                // link: gimbals in series, or several on one torso, took each other's bodies
                // and left the rest row by row, worse than all row by row (QA 2026-12-07).
                Light::Carrier
            } else {
                Light::No
            }
        })
        .collect()
}

/// The largest mass ratio a carrier may span across its joint of type `kind` to the heavy
/// body, with or without a slider among its joints ([`CARRIER_MAX_MASS_RATIO`],
/// [`SLIDER_CARRIER_MAX_MASS_RATIO`]).
fn carrier_max_mass_ratio(kind: JointKind, slider: bool) -> f32 {
    if slider {
        SLIDER_CARRIER_MAX_MASS_RATIO
    } else if kind == JointKind::Fixed {
        f32::INFINITY
    } else {
        CARRIER_MAX_MASS_RATIO
    }
}

/// The hubs of a scene (see the module documentation), in body order. `eligible[j]` says
/// whether joint `j` may join a hub; `light[b]` how light body `b` is ([`light_bodies`]).
pub fn find(
    body_kinds: &[BodyKind],
    joint_bodies: &[(u32, u32)],
    eligible: &[bool],
    (light, inv_mass): (&[Light], &[f32]),
) -> Vec<Hub> {
    let bodies = body_kinds.len();
    let dynamic = |b: u32| body_kinds[b as usize] == BodyKind::Dynamic;
    // Eligible joints per dynamic body, in joint order.
    let keep = |j: usize| eligible[j] && joint_bodies[j].0 != joint_bodies[j].1;
    let (start, incident) = super::joints_per_body(bodies, joint_bodies, keep, dynamic);
    let mut taken = vec![false; bodies];
    let mut hubs = Vec::new();
    let mut leaves: Vec<u32> = Vec::new();
    // The hub (+ 1) whose leaf each body last was: a constant-time test, so that a hub of
    // thousands of joints is found in linear time.
    let mut leaf_of = vec![0u32; bodies];
    // Bodies with enough joints to be hubs without their joints to other such bodies are
    // no hub's leaves, so that two hubs jointed together are both hubs (the joint between
    // them stays with the colours): as a leaf the second one's joints went row by row, and two
    // 40-slider hubs linked by a ball joint came apart, 467 m (QA, 2026-12-05). A body that
    // needs those joints to be a hub may still be a leaf (so two small linked hubs are one).
    let min_joints_of = |b: usize| light[b].min_hub_joints();
    let candidate: Vec<bool> = (0..bodies)
        .map(|b| start[b + 1] - start[b] >= min_joints_of(b))
        .collect();
    let strong: Vec<bool> = (0..bodies)
        .map(|b| {
            let own = &incident[start[b]..start[b + 1]];
            let apart = own.iter().filter(|&&j| {
                let (x, y) = joint_bodies[j as usize];
                let other = if x as usize == b { y } else { x };
                !(dynamic(other) && candidate[other as usize])
            });
            candidate[b] && apart.count() >= min_joints_of(b)
        })
        .collect();
    // The lightest first (then in body order): a light body among hubs needs the hub solve
    // most, and it may take a strong candidate LIGHT_RATIO times its mass as a leaf. A
    // 0.01 kg centre jointed to six 5 kg hubs of five spokes each, its joints row by row
    // beside them, came apart (5.7e14 m, QA 2026-12-05).
    let mut order: Vec<u32> = (0..bodies as u32).collect();
    order.sort_by(|&a, &b| (inv_mass[b as usize].total_cmp(&inv_mass[a as usize])).then(a.cmp(&b)));
    for hub in order {
        let own = &incident[start[hub as usize]..start[hub as usize + 1]];
        let min_joints = min_joints_of(hub as usize);
        let carrier = light[hub as usize] == Light::Carrier;
        if !candidate[hub as usize] || taken[hub as usize] {
            continue;
        }
        leaves.clear();
        let mut joints = Vec::new();
        let mut fixed = 0;
        for &j in own {
            let (a, b) = joint_bodies[j as usize];
            let other = if a == hub { b } else { a };
            if dynamic(other) {
                let much_heavier = inv_mass[hub as usize] > LIGHT_RATIO * inv_mass[other as usize];
                if taken[other as usize]
                    || (strong[other as usize] && (carrier || !much_heavier))
                    || leaf_of[other as usize] == hub + 1
                {
                    continue;
                }
                leaf_of[other as usize] = hub + 1;
                leaves.push(other);
            } else if fixed == HUB_MAX_FIXED_JOINTS {
                continue;
            } else {
                fixed += 1;
            }
            joints.push(j);
        }
        if joints.len() >= min_joints {
            taken[hub as usize] = true;
            for &leaf in &leaves {
                taken[leaf as usize] = true;
            }
            hubs.push(Hub { body: hub, joints });
        }
    }
    hubs
}

#[cfg(test)]
mod tests {
    use super::*;
    use BodyKind::{Dynamic, Static};

    /// [`find`] with every joint eligible, no body light, all of one mass.
    fn find_plain(kinds: &[BodyKind], joints: &[(u32, u32)]) -> Vec<Hub> {
        let light = vec![Light::No; kinds.len()];
        find(
            kinds,
            joints,
            &vec![true; joints.len()],
            (&light, &vec![1.0; kinds.len()]),
        )
    }

    /// A wall (0), a hub (1) hanging from it, and `spokes` bobs jointed to the hub.
    fn star(spokes: usize) -> (Vec<BodyKind>, Vec<(u32, u32)>) {
        let mut kinds = vec![Static, Dynamic];
        let mut joints = vec![(0, 1)];
        for k in 0..spokes as u32 {
            kinds.push(Dynamic);
            joints.push((1, 2 + k));
        }
        (kinds, joints)
    }

    #[test]
    fn a_body_with_enough_joints_is_a_hub_with_all_of_them() {
        let (kinds, joints) = star(10);
        let hubs = find_plain(&kinds, &joints);
        assert_eq!(
            hubs,
            vec![Hub {
                body: 1,
                joints: (0..11).collect()
            }]
        );
        // Three spokes and the wall: not enough (a grid's bodies have four joints).
        let (kinds, joints) = star(3);
        assert!(find_plain(&kinds, &joints).is_empty());
    }

    #[test]
    fn hubs_share_no_dynamic_body_and_skip_ineligible_and_doubled_joints() {
        // Two hubs joined by a joint, a second joint to one bob, one limited spoke.
        let (mut kinds, mut joints) = star(10);
        let second = kinds.len() as u32;
        kinds.push(Dynamic);
        for k in 0..9 {
            kinds.push(Dynamic);
            joints.push((second, second + 1 + k));
        }
        joints.push((1, second)); // hub to hub
        joints.push((1, 2)); // a second joint to bob 2
        let mut eligible = vec![true; joints.len()];
        eligible[3] = false; // spoke to bob 3 limited
        let hubs = find(
            &kinds,
            &joints,
            &eligible,
            (&vec![Light::No; kinds.len()], &vec![1.0; kinds.len()]),
        );
        // Both are hubs; neither takes the hub-to-hub joint (20), nor the first the doubled
        // one (21).
        assert_eq!(hubs.len(), 2);
        assert_eq!(hubs[0].body, 1);
        let first: Vec<u32> = (0..11).filter(|&j| j != 3).collect();
        assert_eq!(hubs[0].joints, first);
        assert_eq!(hubs[1].body, second);
        assert_eq!(hubs[1].joints, (11..20).collect::<Vec<u32>>());
    }

    #[test]
    fn a_light_link_carrying_a_heavy_body_is_a_hub_of_its_two_joints() {
        use glam::Vec3;
        use Light::{Carrier, No};
        // A wall (0), a light arm (1) hinged to it, a heavy box (2) jointed to the arm's end.
        let kinds = [Static, Dynamic, Dynamic];
        let joints = [(0, 1), (1, 2)];
        let anchors = [(Vec3::ZERO, Vec3::Y * 0.5), (Vec3::Y * -0.5, Vec3::ZERO)];
        let light = |arm_inv_mass: f32, prismatic: [bool; 2]| {
            let kinds = [JointKind::Revolute, JointKind::Fixed]
                .into_iter()
                .zip(prismatic)
                .map(|(k, p)| if p { JointKind::Prismatic } else { k })
                .collect::<Vec<_>>();
            // Mobility at the arm's end 1/m + 0.25 / I, the box's 0.1 at its centre.
            let inv_mass = [0.0, arm_inv_mass, 0.1];
            let inv_inertia = [0.0, arm_inv_mass, 1.0].map(Vec3::splat);
            light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false)
        };
        // 0.01 kg: 125 against 0.1, a carrier, and so at any smaller mass (1 g, 1 mg) welded
        // to the box; 1 kg: 1.25 against 0.1, not (and two joints are no hub of a body that
        // is not light); with a slider on either side, up to a mass ratio of 500.
        assert_eq!(light(100.0, [false; 2]), [No, Carrier, No]);
        assert_eq!(light(1000.0, [false; 2]), [No, Carrier, No]);
        assert_eq!(light(1e6, [false; 2]), [No, Carrier, No]);
        assert_eq!(light(40.0, [false, true]), [No, Carrier, No]);
        assert_eq!(light(40.0, [true, false]), [No, Carrier, No]);
        assert_eq!(light(100.0, [false, true]), [No; 3]);
        assert_eq!(light(100.0, [true, false]), [No; 3]);
        // Hinged to the box instead: up to a mass ratio of 2,000 (1e3 yes, 1e4 not).
        let hinged = |arm_inv_mass: f32| {
            let inv_mass = [0.0, arm_inv_mass, 0.1];
            let inv_inertia = [0.0, arm_inv_mass, 1.0].map(Vec3::splat);
            let kinds = [JointKind::Revolute; 2];
            light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false)
        };
        assert_eq!(hinged(100.0), [No, Carrier, No]);
        assert_eq!(hinged(1000.0), [No; 3]);
        assert_eq!(light(1.0, [false; 2]), [No; 3]);
        let hubs = find(
            &kinds,
            &joints,
            &[true; 2],
            (&light(100.0, [false; 2]), &[0.0, 100.0, 0.1]),
        );
        assert_eq!(
            hubs,
            vec![Hub {
                body: 1,
                joints: vec![0, 1]
            }]
        );
        let not_light = light(1.0, [false; 2]);
        assert!(find(&kinds, &joints, &[true; 2], (&not_light, &[0.0, 1.0, 0.1])).is_empty());
    }

    #[test]
    fn a_thin_rod_is_as_mobile_as_its_end_moves_and_as_it_twists() {
        use glam::Vec3;
        use JointKind::{Fixed, Revolute, Spherical};
        use Light::{Carrier, No};
        // A wall (0), a thin rod (1) 1 m long along y hinged at its top, a 0.1 m cube (2)
        // jointed below it by its face. Rod of mass m: moments m/3 (0.25 + 1e-4) across its
        // axis and m/3 2e-4 about it; cube of mass M: M/3 0.005.
        let joints = [(0, 1), (1, 2)];
        let anchors = [
            (Vec3::ZERO, Vec3::Y * 0.5),
            (Vec3::Y * -0.5, Vec3::Y * 0.05),
        ];
        let light = |rod: f32, cube: f32, below: JointKind| {
            let inv_mass = [0.0, 1.0 / rod, 1.0 / cube];
            let across = 3.0 / (rod * 0.2501);
            let inv_inertia = [
                Vec3::ZERO,
                Vec3::new(across, 3.0 / (rod * 2e-4), across),
                Vec3::splat(3.0 / (cube * 0.005)),
            ];
            let kinds = [Revolute, below];
            light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false)
        };
        // Equal masses, welded: the rod's end moves 4.0 against the cube's 2.5 (with the
        // smallest moment, 3,751: a carrier), it twists 25 times as freely.
        assert_eq!(light(1.0, 1.0, Fixed), [No; 3]);
        // A 10 kg cube: its end moves 16 times as far, it twists 250 times as freely: a
        // weld holds that twist, a ball joint does not.
        assert_eq!(light(1.0, 10.0, Fixed), [No, Carrier, No]);
        assert_eq!(light(1.0, 10.0, Spherical), [No; 3]);
        // A 0.01 kg rod carrying a 10 kg cube: 400 against 0.25 even on a ball joint.
        assert_eq!(light(0.01, 10.0, Spherical), [No, Carrier, No]);
    }

    #[test]
    fn a_carriage_between_a_heavier_support_and_a_heavy_body_is_a_carrier() {
        use glam::Vec3;
        use Light::{Carrier, No};
        // A 2 kg arm (0) hinged to a pivot (3), a 0.5 kg carriage (1) on a slider along it, a
        // 51 kg bob (2) on a ball joint 0.5 m below (a 0.3 m cube: I = 0.765 kg m^2). At the
        // ball joint the bob turning about it is mobile (1/51 + 0.25/0.765 = 0.35 against the
        // carriage's 2), but its load is its mass, 102 times the carriage's.
        let joints = [(3, 0), (0, 1), (1, 2)];
        let anchors = [
            (Vec3::ZERO, Vec3::X * -0.5),
            (Vec3::X * 0.1, Vec3::ZERO),
            (Vec3::ZERO, Vec3::Y * 0.5),
        ];
        let kinds = [
            JointKind::Revolute,
            JointKind::Prismatic,
            JointKind::Spherical,
        ];
        let light = |arm_mass: f32| {
            let inv_mass = [1.0 / arm_mass, 2.0, 1.0 / 51.0, 0.0];
            // Turning, the carriage is less than CARRIER_RATIO times as mobile as the arm.
            let inv_inertia = [
                Vec3::splat(6.0),
                Vec3::splat(400.0),
                Vec3::splat(1.0 / 0.765),
                Vec3::ZERO,
            ];
            light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false)
        };
        assert_eq!(light(2.0), [No, Carrier, No, No]);
        // On an arm of its own mass, a chain's link: not a carriage (a chain's last link
        // carrying a heavy load held it worse as a carrier).
        assert_eq!(light(0.5), [No; 4]);
        // Hinged to the arm instead of sliding on it, the carriage is left to the chain solve
        // when that is on; a slider is no chain's joint, so the slider's carriage stays.
        let kinds_on = |kinds: [JointKind; 3], chain_solve: bool| {
            let inv_mass = [0.5, 2.0, 1.0 / 51.0, 0.0];
            let inv_inertia = [6.0, 400.0, 1.0 / 0.765, 0.0].map(Vec3::splat);
            light_bodies(
                &inv_mass,
                &inv_inertia,
                &joints,
                &anchors,
                &kinds,
                chain_solve,
            )
        };
        let hinged = [
            JointKind::Revolute,
            JointKind::Revolute,
            JointKind::Spherical,
        ];
        assert_eq!(kinds_on(hinged, false), [No, Carrier, No, No]);
        assert_eq!(kinds_on(hinged, true), [No; 4]);
        assert_eq!(kinds_on(kinds, true), [No, Carrier, No, No]);
    }

    #[test]
    fn a_tapered_chains_last_link_is_no_carriage() {
        use glam::Vec3;
        use Light::{Carrier, No};
        // Links of 1, 0.5 and 0.25 kg on ball joints from a pivot (body 0), a 250 kg load
        // below the last (anchors at the centres: mobility is the inverse mass). The last
        // link's support is twice its mass but hangs from another light link: not anchored.
        let chain = |links: &[f32]| {
            let mut inv_mass = vec![0.0];
            inv_mass.extend(links.iter().map(|m| 1.0 / m));
            inv_mass.push(1.0 / 250.0);
            let inv_inertia: Vec<Vec3> = inv_mass.iter().map(|&w| Vec3::splat(w)).collect();
            let joints: Vec<(u32, u32)> =
                (0..inv_mass.len() as u32 - 1).map(|b| (b, b + 1)).collect();
            let anchors = vec![(Vec3::ZERO, Vec3::ZERO); joints.len()];
            let kinds = vec![JointKind::Spherical; joints.len()];
            light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false)
        };
        assert_eq!(chain(&[1.0, 0.5, 0.25]), [No; 5]);
        // Two links: the support hangs from the pivot alone, and the last link is a carriage.
        assert_eq!(chain(&[0.5, 0.25]), [No, No, Carrier, No]);
    }

    #[test]
    fn a_light_gimbal_between_two_heavy_bodies_is_a_hub_of_both_joints() {
        use glam::Vec3;
        use Light::{Carrier, No};
        // A torso (0) hung from the wall (3), a 0.01 kg gimbal (1) hinged to it at its centre,
        // a limb (2) hinged to the gimbal: 100 against 0.35 at both hinges (0.1 + 0.25 at
        // 0.5 m from the heavy bodies' centres).
        let kinds = [Dynamic, Dynamic, Dynamic, Static];
        let joints = [(3, 0), (0, 1), (1, 2)];
        let anchors = [
            (Vec3::ZERO, Vec3::Y),
            (Vec3::Y * -0.5, Vec3::ZERO),
            (Vec3::ZERO, Vec3::X * 0.5),
        ];
        let inv_mass = [0.1, 100.0, 0.1, 0.0];
        let light = |inv_inertia_limb: f32| {
            let inv_inertia = [
                Vec3::splat(1.0),
                Vec3::splat(100.0),
                Vec3::splat(inv_inertia_limb),
                Vec3::ZERO,
            ];
            light_bodies(
                &inv_mass,
                &inv_inertia,
                &joints,
                &anchors,
                &[JointKind::Revolute; 3],
                false,
            )
        };
        assert_eq!(light(1.0), [No, Carrier, No, No]);
        let hubs = find(&kinds, &joints, &[true; 3], (&light(1.0), &inv_mass));
        assert_eq!(
            hubs,
            vec![Hub {
                body: 1,
                joints: vec![1, 2]
            }]
        );
        // A limb more mobile at its anchor than the gimbal (0.1 + 2,500 with 1e4 / kg m^2):
        // the gimbal carries one side only, the torso, and is a carriage between it and the
        // limb, 1,000 times its mass (CARRIAGE_SUPPORT_RATIO).
        assert_eq!(light(1e4), [No, Carrier, No, No]);
        // A second gimbal (4) and limb (5) on the same torso: neither gimbal is a carrier (each
        // would take the torso from the other; QA 2026-12-07: worse than row by row).
        let joints = [(3, 0), (0, 1), (1, 2), (0, 4), (4, 5)];
        let anchors = [anchors[0], anchors[1], anchors[2], anchors[1], anchors[2]];
        let inv_mass = [0.1, 100.0, 0.1, 0.0, 100.0, 0.1];
        let inv_inertia = [1.0, 100.0, 1.0, 0.0, 100.0, 1.0].map(Vec3::splat);
        let kinds = [JointKind::Revolute; 5];
        let light = light_bodies(&inv_mass, &inv_inertia, &joints, &anchors, &kinds, false);
        assert_eq!(light, [No; 6]);
    }

    #[test]
    fn a_carrier_leaves_a_hub_it_carries_to_be_a_hub() {
        // A light link (1) hung from the wall (0) carries a heavy body (2) with ten spokes:
        // as the link's leaf the heavy body's spokes would go row by row (QA 2026-12-07:
        // the shipped hub scene hung from a 0.04 kg link went non-finite).
        let mut kinds = vec![Static, Dynamic, Dynamic];
        let mut joints = vec![(0, 1), (1, 2)];
        for k in 0..10u32 {
            kinds.push(Dynamic);
            joints.push((2, 3 + k));
        }
        let mut light = vec![Light::No; kinds.len()];
        light[1] = Light::Carrier;
        let mut inv_mass = vec![1.0; kinds.len()];
        (inv_mass[0], inv_mass[1], inv_mass[2]) = (0.0, 25.0, 0.1);
        let hubs = find(
            &kinds,
            &joints,
            &vec![true; joints.len()],
            (&light, &inv_mass),
        );
        assert_eq!(hubs.len(), 1, "{hubs:?}");
        assert_eq!(hubs[0].body, 2);
        assert_eq!(hubs[0].joints, (1..12).collect::<Vec<u32>>());
    }

    #[test]
    fn a_light_body_is_a_hub_from_three_joints() {
        use glam::Vec3;
        // The wall and three bobs 0.8 m out on a 1 kg hub: mobility at the hub's anchors
        // 1 + 0.64 / I against the bobs' 1 / 0.2 = 5.
        let (kinds, joints) = star(3);
        let anchors: Vec<(Vec3, Vec3)> = joints
            .iter()
            .map(|&(a, _)| {
                let arm = if a == 0 { Vec3::ZERO } else { Vec3::X * 0.8 };
                (arm, Vec3::ZERO)
            })
            .collect();
        let inv_mass = [0.0, 1.0, 5.0, 5.0, 5.0];
        let light = |i_hub: f32| {
            let inv_inertia = [0.0, 1.0 / i_hub, 600.0, 600.0, 600.0].map(Vec3::splat);
            light_bodies(
                &inv_mass,
                &inv_inertia,
                &joints,
                &anchors,
                &[JointKind::Spherical; 4],
                false,
            )
        };
        // A 1e-4 kg m^2 hub: 6,401 against 5 at each arm.
        use Light::{Hub as L, No};
        assert_eq!(light(1e-4), [No, L, No, No, No]);
        let hubs = find(&kinds, &joints, &[true; 4], (&light(1e-4), &[1.0; 5]));
        assert_eq!(hubs.len(), 1);
        assert_eq!(hubs[0].joints, vec![0, 1, 2, 3]);
        // A 0.2 kg m^2 hub: 4.2 against 5, not light; four joints are not a hub.
        assert_eq!(light(0.2), [No; 5]);
        assert!(find(&kinds, &joints, &[true; 4], (&light(0.2), &[1.0; 5])).is_empty());
    }

    #[test]
    fn two_small_linked_hubs_are_one() {
        // Two bodies of four spokes each, linked: each has five joints only with the link, so
        // the first takes the second as a leaf (as two separate hubs neither would have five).
        let (mut kinds, mut joints) = star(3); // the hang and three spokes on body 1
        let second = kinds.len() as u32;
        kinds.push(Dynamic);
        for k in 0..4 {
            kinds.push(Dynamic);
            joints.push((second, second + 1 + k));
        }
        joints.push((1, second));
        let hubs = find_plain(&kinds, &joints);
        assert_eq!(hubs.len(), 1);
        assert_eq!(hubs[0].body, 1);
        assert_eq!(hubs[0].joints, vec![0, 1, 2, 3, 8]);
    }

    #[test]
    fn a_hub_takes_every_dynamic_leaf_and_at_most_the_cap_of_fixed_ones() {
        // 100 spokes to dynamic bobs, then six more joints to static bodies than the cap.
        let (mut kinds, mut joints) = star(100);
        for _ in 0..HUB_MAX_FIXED_JOINTS + 6 {
            joints.push((kinds.len() as u32, 1));
            kinds.push(Static);
        }
        let hubs = find_plain(&kinds, &joints);
        assert_eq!(hubs.len(), 1);
        // The hang (a joint to the wall), the 100 spokes, and the cap's other fixed joints.
        let expected: Vec<u32> = (0..(100 + HUB_MAX_FIXED_JOINTS) as u32).collect();
        assert_eq!(hubs[0].joints, expected);
    }

    mod random {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Whatever the graph: hubs are dynamic, have at least HUB_MIN_JOINTS eligible
            /// joints of their own, in joint order, at most HUB_MAX_FIXED_JOINTS of them to
            /// static bodies, whose dynamic other bodies are distinct; no dynamic body is in
            /// two hubs.
            #[test]
            fn hubs_keep_their_invariants(
                kinds in proptest::collection::vec(0u8..4, 2..40),
                pairs in proptest::collection::vec((0u32..40, 0u32..40, any::<bool>()), 0..200),
                light in proptest::collection::vec(0u8..3, 40),
            ) {
                let kinds: Vec<BodyKind> = kinds
                    .iter()
                    .map(|&k| if k == 0 { Static } else { Dynamic })
                    .collect();
                let n = kinds.len() as u32;
                let joints: Vec<(u32, u32)> = pairs.iter().map(|&(a, b, _)| (a % n, b % n)).collect();
                let eligible: Vec<bool> = pairs.iter().map(|&(_, _, e)| e).collect();
                let light: Vec<Light> = light[..kinds.len()]
                    .iter()
                    .map(|&l| [Light::No, Light::Hub, Light::Carrier][l as usize])
                    .collect();
                let light = &light[..];
                let hubs = find(&kinds, &joints, &eligible, (light, &vec![1.0; kinds.len()]));
                let mut used = vec![false; kinds.len()];
                for h in &hubs {
                    prop_assert_eq!(kinds[h.body as usize], Dynamic);
                    let fewest = light[h.body as usize].min_hub_joints();
                    prop_assert!(h.joints.len() >= fewest);
                    let fixed = h.joints.iter().filter(|&&j| {
                        let (a, b) = joints[j as usize];
                        kinds[if a == h.body { b } else { a } as usize] != Dynamic
                    });
                    prop_assert!(fixed.count() <= HUB_MAX_FIXED_JOINTS);
                    prop_assert!(h.joints.windows(2).all(|w| w[0] < w[1]));
                    prop_assert!(!used[h.body as usize]);
                    used[h.body as usize] = true;
                    for &j in &h.joints {
                        let (a, b) = joints[j as usize];
                        prop_assert!(eligible[j as usize] && a != b && (a == h.body || b == h.body));
                        let other = if a == h.body { b } else { a };
                        if kinds[other as usize] == Dynamic {
                            prop_assert!(!used[other as usize], "leaf {} taken twice", other);
                            used[other as usize] = true;
                        }
                    }
                }
            }
        }
    }
}
