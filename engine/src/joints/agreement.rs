//! Whether the joints on one pair of bodies agree: whether one small rigid motion of body B
//! against body A would make every one of them hold at the current poses.
//!
//! ```text
//! B moves by x = (d, w) (m, rad) at the point o (the anchors' centroid, `pair_rows`), its
//! point at r from o by d + w x r:
//!   point rows     u . d + (r x u) . w = -u . e          (u: x, y, z; a slider's two across n)
//!   angular rows   s u . w = -s u . theta                 (weld, slider: theta = 2 vec(q_err))
//!                  s u_k . w = -s u_k . E                 (hinge: u_k = a x t_k, E its swing)
//!   locked limits  s a . w = -s (angle - lock)            (hinge)
//!                  n . d + (r x n) . w = -(slide - lock)  (slider)
//! least squares (A^T A + lambda I) x = A^T b; each joint's residual is how far it is from
//! agreeing with the others (m for its point rows, rad for its angular rows).
//! ```
//!
//! `s` weighs a radian against a metre (the caller's tolerances' ratio), `lambda` leaves the
//! motions no row constrains (a turn about the line through two ball joints) at zero. A pair
//! whose joints are all off by the same rigid motion agrees: a door built half a millimetre
//! off both its hinges, or one far from the origin whose anchors round alike.

use glam::{DVec3, Vec3};

use super::{diagnose_joint, revolute, JointKind, Joints, LIMIT_SLOP};
use crate::bodies::Bodies;

/// How far the worst joint of a pair is from agreeing with the others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Disagreement {
    /// The joint whose residual is largest against the tolerances.
    pub joint: usize,
    /// Its anchor's residual, m.
    pub anchor: f64,
    /// Its axes' (and a locked limit's) residual, rad.
    pub angle: f64,
    /// How far it is from holding as built (its own rows' errors), m and rad.
    pub built_anchor: f64,
    pub built_angle: f64,
}

/// One row of the fit: `m . x = rhs`, for `joint`, in metres or (scaled) radians.
struct Row {
    m: [f64; 6],
    rhs: f64,
    joint: usize,
    angular: bool,
}

/// The worst joint of `shared` (joints on one pair of bodies) against the tolerances
/// `anchor_tol` (m) and `angle_tol` (rad), with its residuals; `None` for fewer than two
/// joints.
pub(crate) fn disagreement(
    bodies: &Bodies,
    joints: &Joints,
    shared: &[usize],
    anchor_tol: f64,
    angle_tol: f64,
) -> Option<Disagreement> {
    if shared.len() < 2 {
        return None;
    }
    let scale = anchor_tol / angle_tol;
    let rows = pair_rows(bodies, joints, shared, scale);
    let x = least_squares(&rows);
    // Per joint: its residuals' score against the tolerances, and its own error's (the
    // rows' right-hand sides), which names the joint built off where the residuals tie (two
    // joints share their disagreement).
    let judged: Vec<(f64, f64, Disagreement)> = shared
        .iter()
        .map(|&j| {
            let (mut point, mut angular, mut own) = (0.0f64, 0.0f64, 0.0f64);
            let (mut built_point, mut built_angular) = (0.0f64, 0.0f64);
            for row in rows.iter().filter(|row| row.joint == j) {
                let r = (0..6).map(|k| row.m[k] * x[k]).sum::<f64>() - row.rhs;
                if row.angular {
                    angular += r * r;
                    built_angular += row.rhs * row.rhs;
                } else {
                    point += r * r;
                    built_point += row.rhs * row.rhs;
                }
                own += row.rhs * row.rhs;
            }
            let d = Disagreement {
                joint: j,
                anchor: point.sqrt(),
                angle: angular.sqrt() / scale,
                built_anchor: built_point.sqrt(),
                built_angle: built_angular.sqrt() / scale,
            };
            let score = (d.anchor / anchor_tol).max(d.angle / angle_tol);
            (score, own, d)
        })
        .collect();
    let top = judged.iter().map(|j| j.0).fold(0.0f64, f64::max);
    judged
        .into_iter()
        .filter(|j| j.0 >= 0.99 * top)
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map(|(_, _, d)| d)
}

/// Whether the joints of `shared` (on one pair of bodies) leave the pair no common motion:
/// the least strain any unit motion of B against A (1 m or 1 rad) puts on their rows (m;
/// radians of angular rows weighed as `scale` metres each), the smallest singular value of
/// the stacked rows. `None` for fewer than two joints, and where a joint alone locks the
/// pair (a weld, a locked limit): then the lock is meant.
///
/// Each joint allows motions of its own (a hinge a turn about its line, a ball joint the
/// turns about its anchor, a slider a slide along its axis); together the joints allow the
/// motions common to all, and where there are none the pair is locked by accident (two
/// hinge lines apart, a ball joint off a hinge's line): the rows fight whenever the bodies
/// move.
pub(crate) fn lock_strain(
    bodies: &Bodies,
    joints: &Joints,
    shared: &[usize],
    scale: f64,
) -> Option<f64> {
    let locks_alone =
        |j: usize| joints.kind[j] == JointKind::Fixed || joints.limit[j].is_some_and(locks);
    if shared.len() < 2 || shared.iter().any(|&j| locks_alone(j)) {
        return None;
    }
    Some(least_singular_value(&pair_rows(
        bodies, joints, shared, scale,
    )))
}

/// Whether a limit `[lo, hi]` locks its joint's coordinate: a range narrower than twice
/// the limit slop, as the solver reads it (`joints::locked_lanes`).
fn locks([lo, hi]: [f32; 2]) -> bool {
    lo + 2.0 * LIMIT_SLOP > hi
}

/// The smallest singular value of the rows' matrix (6 columns): the square root of the
/// least eigenvalue of `A^T A`, by cyclic Jacobi rotations (deterministic, f64).
fn least_singular_value(rows: &[Row]) -> f64 {
    let mut n = [[0.0f64; 6]; 6];
    for row in rows {
        for (n, mi) in n.iter_mut().zip(row.m) {
            for (n, mk) in n.iter_mut().zip(row.m) {
                *n += mi * mk;
            }
        }
    }
    let scale: f64 = (0..6).map(|i| n[i][i]).sum();
    for _ in 0..64 {
        let off: f64 = (0..6)
            .flat_map(|p| (p + 1..6).map(move |q| (p, q)))
            .map(|(p, q)| n[p][q] * n[p][q])
            .sum();
        if off <= 1e-30 * scale * scale {
            break;
        }
        for p in 0..6 {
            for q in p + 1..6 {
                if n[p][q] == 0.0 {
                    continue;
                }
                // The rotation that zeroes n[p][q]: tan(2 phi) = 2 n_pq / (n_qq - n_pp).
                let theta = (n[q][q] - n[p][p]) / (2.0 * n[p][q]);
                // (`signum` of 0 is 1: equal diagonals turn by 45 degrees.)
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                // Columns p and q turned (N J), then rows p and q (J^T N J).
                for row in &mut n {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
                let (row_p, row_q) = (n[p], n[q]);
                for k in 0..6 {
                    n[p][k] = c * row_p[k] - s * row_q[k];
                    n[q][k] = s * row_p[k] + c * row_q[k];
                }
            }
        }
    }
    (0..6)
        .map(|i| n[i][i])
        .fold(f64::INFINITY, f64::min)
        .max(0.0)
        .sqrt()
}

/// The rows of the joints of `shared` (on one pair of bodies), all for one motion: that of
/// the first joint's body B (the moving body) against the other, measured at the centroid of
/// the joints' anchors on the moving body. A joint listed the other way round (its A the
/// moving body) has its rows negated: at a common point, the motion of one body against the
/// other is minus the reverse one. Why the centroid: measured at a body's centre, a turn
/// about a line far from it carries a large slide, and the same joints read as freer the
/// farther the centre (QA 2026-12-07: a door 1 km from its frame's centre on hinge lines 1 cm
/// apart was not seen as locked; and joints listed in both orders were measured about two
/// centres, so that coaxial hinges read as locked). Anchors on the moving body alone: their
/// differences are exact, where the two bodies' anchors differ by f32 rounding far out.
fn pair_rows(bodies: &Bodies, joints: &Joints, shared: &[usize], scale: f64) -> Vec<Row> {
    let moving = joints.body_b[shared[0]];
    let on_moving = |j: usize| {
        let (body, anchor) = if joints.body_b[j] == moving {
            (moving as usize, joints.anchor_b[j])
        } else {
            (joints.body_a[j] as usize, joints.anchor_a[j])
        };
        (bodies.rotation[body] * anchor).as_dvec3()
    };
    // Relative to the moving body's centre (the same for every joint), so exact.
    let centroid = shared.iter().map(|&j| on_moving(j)).sum::<DVec3>() / shared.len() as f64;
    let mut rows = Vec::new();
    for &j in shared {
        let start = rows.len();
        joint_rows(
            bodies,
            joints,
            j,
            (scale, on_moving(j) - centroid),
            &mut rows,
        );
        if joints.body_b[j] != moving {
            for row in &mut rows[start..] {
                row.m = row.m.map(|x| -x);
            }
        }
    }
    rows
}

/// The rows of joint `j` at the current poses (see the module documentation), for the
/// motion of its body B against its body A, with `r` its anchor's offset from the point the
/// motion is measured at.
fn joint_rows(
    bodies: &Bodies,
    joints: &Joints,
    j: usize,
    (scale, r): (f64, DVec3),
    rows: &mut Vec<Row>,
) {
    let (a, b) = (joints.body_a[j] as usize, joints.body_b[j] as usize);
    let (pa, qa) = (bodies.position[a], bodies.rotation[a]);
    let (pb, qb) = (bodies.position[b], bodies.rotation[b]);
    let d = |v: Vec3| v.as_dvec3();
    let on_a = d(pa) + d(qa * joints.anchor_a[j]);
    let on_b = d(pb) + d(qb * joints.anchor_b[j]);
    let e = on_b - on_a;
    let kind = joints.kind[j];
    let axis_a = d(qa * joints.axis_a[j]).normalize_or_zero();
    let [t1, t2] = joints.perpendicular[j].map(|t| d(qa * t));
    let mut point = |u: DVec3, rhs: f64| {
        let w = r.cross(u);
        rows.push(Row {
            m: [u.x, u.y, u.z, w.x, w.y, w.z],
            rhs,
            joint: j,
            angular: false,
        });
    };
    // Point rows: all three, or across a slider's axis.
    if kind == JointKind::Prismatic {
        for u in [t1, t2] {
            point(u, -u.dot(e));
        }
    } else {
        for u in [DVec3::X, DVec3::Y, DVec3::Z] {
            point(u, -u.dot(e));
        }
    }
    // A locked limit's coordinate (column 7, the slide or the angle as the limit reads it)
    // against the lock.
    let locked = joints.limit[j]
        .filter(|&limit| locks(limit))
        .map(|[lo, _]| f64::from(diagnose_joint(bodies, joints, j)[7] - lo));
    if let (JointKind::Prismatic, Some(off_lock)) = (kind, locked) {
        point(axis_a, -off_lock);
    }
    let mut angular = |u: DVec3, value: f64| {
        rows.push(Row {
            m: [0.0, 0.0, 0.0, scale * u.x, scale * u.y, scale * u.z],
            rhs: -scale * value,
            joint: j,
            angular: true,
        });
    };
    match kind {
        JointKind::Spherical => {}
        JointKind::Fixed | JointKind::Prismatic => {
            // theta = 2 vec(q_B (q_A q_ref)^-1), the shorter way round.
            let mut q = qb * (qa * joints.reference[j]).inverse();
            if q.w < 0.0 {
                q = -q;
            }
            let theta = 2.0 * d(Vec3::new(q.x, q.y, q.z));
            for u in [DVec3::X, DVec3::Y, DVec3::Z] {
                angular(u, u.dot(theta));
            }
        }
        JointKind::Revolute => {
            let b_axis = d(qb * joints.axis_b[j]).normalize_or_zero();
            let (u1, u2) = (axis_a.cross(t1), axis_a.cross(t2));
            let one_plus_cos = 1.0 + axis_a.dot(b_axis);
            let swing = if one_plus_cos < 1e-12 {
                // Opposed: the half turn the axis rows give (`revolute::opposed_turn_axis`).
                let centre = -(qb * joints.anchor_b[j]);
                let across = revolute::opposed_turn_axis(axis_a.as_vec3(), centre, u1.as_vec3());
                2.0 * d(across)
            } else {
                axis_a.cross(b_axis) * (2.0 / one_plus_cos).sqrt()
            };
            angular(u1, u1.dot(swing));
            angular(u2, u2.dot(swing));
            if let Some(off_lock) = locked {
                angular(axis_a, off_lock);
            }
        }
    }
}

/// `x` minimising `|A x - b|^2 + lambda |x|^2` over `rows`, `lambda` a trace's 1e-12 (the
/// motions no row constrains stay zero): Cholesky of the 6 x 6 normal equations.
fn least_squares(rows: &[Row]) -> [f64; 6] {
    let mut n = [[0.0f64; 6]; 6];
    let mut rhs = [0.0f64; 6];
    for row in rows {
        for ((n, rhs), mi) in n.iter_mut().zip(&mut rhs).zip(row.m) {
            *rhs += mi * row.rhs;
            for (n, mk) in n.iter_mut().zip(row.m) {
                *n += mi * mk;
            }
        }
    }
    let trace: f64 = (0..6).map(|i| n[i][i]).sum();
    let lambda = 1e-12 * trace.max(1e-300);
    for (i, n) in n.iter_mut().enumerate() {
        n[i] += lambda;
    }
    // n = L L^T, then L y = rhs, L^T x = y.
    let mut l = [[0.0f64; 6]; 6];
    for i in 0..6 {
        for k in 0..=i {
            let sum = n[i][k] - (0..k).map(|m| l[i][m] * l[k][m]).sum::<f64>();
            l[i][k] = if i == k {
                sum.max(f64::MIN_POSITIVE).sqrt()
            } else {
                sum / l[k][k]
            };
        }
    }
    let mut y = [0.0f64; 6];
    for i in 0..6 {
        y[i] = (rhs[i] - (0..i).map(|m| l[i][m] * y[m]).sum::<f64>()) / l[i][i];
    }
    let mut x = [0.0f64; 6];
    for i in (0..6).rev() {
        x[i] = (y[i] - (i + 1..6).map(|m| l[m][i] * x[m]).sum::<f64>()) / l[i][i];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(m: [f64; 6]) -> Row {
        Row {
            m,
            rhs: 0.0,
            joint: 0,
            angular: false,
        }
    }

    #[test]
    fn least_singular_value_finds_the_free_motion_and_the_weakest_row() {
        // Rows constraining five motions with weights 1..5: the sixth is free.
        let mut rows: Vec<Row> = (0..5)
            .map(|k| {
                let mut m = [0.0; 6];
                m[k] = (k + 1) as f64;
                row(m)
            })
            .collect();
        assert!(least_singular_value(&rows) < 1e-12);
        // Constrained too, weakly, and across the others' axes: sigma_min is its weight.
        let mut m = [0.0; 6];
        m[5] = 0.25;
        rows.push(row(m));
        // Turned by a rotation mixing columns 1 and 5 (singular values unchanged).
        let (c, s) = (0.6, 0.8);
        for r in &mut rows {
            let (a, b) = (r.m[1], r.m[5]);
            (r.m[1], r.m[5]) = (c * a - s * b, s * a + c * b);
        }
        assert!((least_singular_value(&rows) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn least_squares_solves_a_consistent_system_and_leaves_free_motions_at_zero() {
        // d = (1, 2, 3) read directly, w about x and y fixed, w about z free.
        let mut rows = Vec::new();
        for (k, value) in [1.0, 2.0, 3.0].into_iter().enumerate() {
            let mut m = [0.0; 6];
            m[k] = 1.0;
            rows.push(Row {
                m,
                rhs: value,
                joint: 0,
                angular: false,
            });
        }
        for (k, value) in [(3, 0.5), (4, -0.25)] {
            let mut m = [0.0; 6];
            m[k] = 2.0;
            rows.push(Row {
                m,
                rhs: 2.0 * value,
                joint: 0,
                angular: true,
            });
        }
        let x = least_squares(&rows);
        let want = [1.0, 2.0, 3.0, 0.5, -0.25, 0.0];
        for (got, want) in x.iter().zip(want) {
            assert!((got - want).abs() < 1e-9, "{x:?}");
        }
    }
}
