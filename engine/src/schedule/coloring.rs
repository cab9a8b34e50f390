//! Greedy graph coloring of the joints (the constraint graph of Box2D v3).
//!
//! Joints are visited in insertion order; each takes the lowest colour that neither of its
//! dynamic bodies already has. A body's colours are a bit set, so a joint costs two loads and a
//! `trailing_zeros`. A chain gets two colours (alternating links), the 3D `joint_grid` four.
//! A joint whose dynamic bodies together already use all [`MAX_COLORS`] colours goes to the
//! overflow set ([`OVERFLOW`]), solved serially by the scalar path.

use crate::bodies::BodyKind;

/// Colours reserved for parallel solving (Box2D v3 reserves 24; its overflow handles hubs).
pub const MAX_COLORS: usize = 24;

/// The colour of an overflow joint.
pub const OVERFLOW: u16 = u16::MAX;

/// A colour per joint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Coloring {
    /// Colour of each joint, or [`OVERFLOW`].
    pub color_of: Vec<u16>,
    count: usize,
}

impl Coloring {
    /// Colours joints `(body_a, body_b)` given the bodies' kinds.
    pub fn build(body_kinds: &[BodyKind], joint_bodies: &[(u32, u32)]) -> Coloring {
        let mut used = vec![0u32; body_kinds.len()];
        let all: u32 = (1u64 << MAX_COLORS).wrapping_sub(1) as u32;
        let mut count = 0;
        let color_of = joint_bodies
            .iter()
            .map(|&(a, b)| {
                let dyn_a = body_kinds[a as usize] == BodyKind::Dynamic;
                let dyn_b = body_kinds[b as usize] == BodyKind::Dynamic;
                let mut taken = 0;
                if dyn_a {
                    taken |= used[a as usize];
                }
                if dyn_b {
                    taken |= used[b as usize];
                }
                let free = !taken & all;
                if free == 0 {
                    return OVERFLOW;
                }
                let c = free.trailing_zeros();
                if dyn_a {
                    used[a as usize] |= 1 << c;
                }
                if dyn_b {
                    used[b as usize] |= 1 << c;
                }
                count = count.max(c as usize + 1);
                c as u16
            })
            .collect();
        Coloring { color_of, count }
    }

    /// Colours in use (the highest colour plus one).
    pub fn color_count(&self) -> usize {
        self.count
    }
}
