//! Lane types: the only module that knows the SIMD width.
//!
//! A joint kernel is written once over a [`Lane`] type `L` and reads like the scalar math:
//! `L = f32` is the scalar reference path (one joint at a time), `L = Wide` (8 lanes of f32
//! from the `wide` crate, 16 on an AVX-512 build with `lanes16`) solves a batch's joints at
//! once. Every operation the kernels use (`+ - * /`, `sqrt`, compare, select) is exact
//! IEEE-754 single precision in both
//! instantiations and no operation crosses lanes, so each active lane of the wide path computes
//! bit for bit what the scalar path computes for that joint, and a padded lane can reach the
//! bodies only through the scatter of the kernels' velocities, which skips it (a lane is
//! written only if it is real and its body dynamic, see [`WriteMask`]).
//!
//! The instruction set is the build's: `wide` uses AVX when the whole build has
//! `target-feature=+avx` (e.g. `RUSTFLAGS="-C target-cpu=native"`), two SSE2 halves otherwise;
//! with `avx512f` and the `lanes16` feature the width is 16 lanes in one AVX-512 register
//! ([`WIDE_LANES`]).
//! No fused multiply-add is used, so the results do not depend on FMA availability either.

use glam::{Mat3, Quat, Vec3};
use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};
use wide::f32x8;

/// The wide lane type: 8 lanes of f32 (one AVX register, or two SSE halves on the portable
/// baseline); 16 (one AVX-512 register) when the whole build has `avx512f` (e.g.
/// `RUSTFLAGS="-C target-cpu=native"` on an AVX-512 host) and the `lanes16` feature.
/// 4 lanes (`f32x4`) measured slower on the portable SSE2 build, where they avoid the
/// two-register values: 52.8 against 46.2 ms per step on the benchmark chain and 71.1 against
/// 62.2 ms on the grid, one thread, same machine and minute. With AVX-512, 16 lanes ran the
/// benchmark chain and fixed-stack scenes 5 to 12 % faster than 8 on one thread, the mixed
/// scene up to 7 %, the grid no faster, and two threads about as fast as 8
/// (benches/PERFORMANCE.md, "Build flags"): so 8 stays the default. Each lane computes the
/// scalar path's bits whatever the width, so results do not depend on it.
#[cfg(not(all(target_feature = "avx512f", feature = "lanes16")))]
pub type Wide = wide::f32x8;
/// The wide lane type with `lanes16` on AVX-512: 16 lanes of f32 in one register; see the
/// 8-lane definition.
#[cfg(all(target_feature = "avx512f", feature = "lanes16"))]
pub type Wide = wide::f32x16;

/// Lanes of the wide path (the batch width of the schedule).
pub const WIDE_LANES: usize = if cfg!(all(target_feature = "avx512f", feature = "lanes16")) {
    16
} else {
    8
};

// Lane masks ([`WriteMask`], the projection's write-back) hold one bit per lane in a `u16`.
const _: () = assert!(WIDE_LANES <= 16);

/// A set of `WIDTH` f32 lanes with lane-wise, exactly rounded arithmetic.
pub trait Lane:
    Copy
    + Debug
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A lane-wise boolean.
    type Mask: Copy;
    /// One `u32` per lane (joint or body indices).
    type Indices: Copy + Debug + Default + Send + Sync + AsRef<[u32]> + AsMut<[u32]>;
    /// One [`SolverVelocity`] per lane.
    type Block: Copy + Default + AsRef<[SolverVelocity]> + AsMut<[SolverVelocity]>;
    /// Number of lanes.
    const WIDTH: usize;
    /// Vector registers one value occupies: 2 for 8 lanes on the portable SSE2 build (two
    /// 128-bit halves), 1 otherwise. The kernels use it to keep their live values within the
    /// register file (see `relax_rows` in the solver).
    const REGISTERS: usize;
    /// Every lane `x`.
    fn splat(x: f32) -> Self;
    /// Lane `i`.
    fn lane(&self, i: usize) -> f32;
    /// Sets lane `i`.
    fn set_lane(&mut self, i: usize, x: f32);
    /// Lane-wise `self > other` (false where either is NaN).
    fn gt(self, other: Self) -> Self::Mask;
    /// Lane-wise `if mask { a } else { b }`.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
    /// Lane-wise `a && b`.
    fn and(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// Lane-wise `a || b`.
    fn or(a: Self::Mask, b: Self::Mask) -> Self::Mask;
    /// Lane-wise `!mask`.
    fn not(mask: Self::Mask) -> Self::Mask;
    /// Lane-wise "is NaN".
    fn is_nan(self) -> Self::Mask;
    /// Lane-wise square root (exactly rounded).
    fn sqrt(self) -> Self;
    /// Bit `i` set where lane `i` of `mask` is true.
    fn mask_bits(mask: Self::Mask) -> u32;
    /// Lane `i` is `f(i)`.
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self;
    /// Transposes one velocity per lane into the eight components, each across the lanes.
    fn transpose_in(block: &Self::Block) -> [Self; 8];
    /// The inverse of [`Lane::transpose_in`].
    fn transpose_out(components: [Self; 8]) -> Self::Block;
}

/// A body's velocity as the kernels load it: linear x, y, z, angular x, y, z and two unused
/// lanes, 32 bytes aligned, so that gathering eight bodies is eight aligned loads and one
/// 8 x 8 transpose (instead of 48 scalar loads and lane inserts).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(32))]
pub struct SolverVelocity(pub [f32; 8]);

impl SolverVelocity {
    /// From linear and angular velocity.
    #[inline(always)]
    pub fn new(linear: Vec3, angular: Vec3) -> Self {
        SolverVelocity([
            linear.x, linear.y, linear.z, angular.x, angular.y, angular.z, 0.0, 0.0,
        ])
    }
    /// Linear velocity.
    #[inline(always)]
    pub fn linear(&self) -> Vec3 {
        Vec3::new(self.0[0], self.0[1], self.0[2])
    }
    /// Angular velocity.
    #[inline(always)]
    pub fn angular(&self) -> Vec3 {
        Vec3::new(self.0[3], self.0[4], self.0[5])
    }
}

/// A body's pose and inverse mass as the kernels load them: position x, y, z, rotation x, y,
/// z, w, and `1/m`, 32 bytes aligned, so that gathering eight bodies is eight aligned loads
/// and one 8 x 8 transpose instead of 64 scalar loads and lane inserts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(32))]
pub struct SolverPose(pub [f32; 8]);

impl SolverPose {
    /// From a position (m), a unit rotation and `1/m` (1/kg).
    #[inline(always)]
    pub fn new(position: Vec3, rotation: Quat, inv_mass: f32) -> Self {
        SolverPose([
            position.x, position.y, position.z, rotation.x, rotation.y, rotation.z, rotation.w,
            inv_mass,
        ])
    }
    /// Position, m.
    #[inline(always)]
    pub fn position(&self) -> Vec3 {
        Vec3::new(self.0[0], self.0[1], self.0[2])
    }
    /// Rotation.
    #[inline(always)]
    pub fn rotation(&self) -> Quat {
        Quat::from_xyzw(self.0[3], self.0[4], self.0[5], self.0[6])
    }
}

/// Poses gathered into lanes: position, rotation and `1/m` of each lane's body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoseLanesOf<L> {
    pub position: V3<L>,
    pub rotation: Q<L>,
    pub inv_mass: L,
}

/// The 32-byte blocks of bodies `idx[i]` (`block(k)` reads body `k`'s) as eight components,
/// each across the lanes: one transpose.
#[inline(always)]
fn gather_blocks<L: Lane>(block: impl Fn(usize) -> [f32; 8], idx: &L::Indices) -> [L; 8] {
    let mut blocks = L::Block::default();
    for (slot, &k) in blocks.as_mut().iter_mut().zip(idx.as_ref()) {
        *slot = SolverVelocity(block(k as usize));
    }
    L::transpose_in(&blocks)
}

/// Gathers the poses of bodies `idx[i]` into lane `i` (`pose(k)` reads body `k`'s).
#[inline(always)]
pub(crate) fn gather_poses<L: Lane>(
    pose: impl Fn(usize) -> SolverPose,
    idx: &L::Indices,
) -> PoseLanesOf<L> {
    let [px, py, pz, qx, qy, qz, qw, m] = gather_blocks(|k| pose(k).0, idx);
    PoseLanesOf {
        position: V3 {
            x: px,
            y: py,
            z: pz,
        },
        rotation: Q {
            x: qx,
            y: qy,
            z: qz,
            w: qw,
        },
        inv_mass: m,
    }
}

/// Gathers the velocities of bodies `a[i]` and `b[i]` into lane `i` (`velocity(k)` reads
/// body `k`'s): one transpose of the blocks per side.
#[inline(always)]
pub(crate) fn gather_velocity_pairs<L: Lane>(
    velocity: impl Fn(usize) -> SolverVelocity,
    a: &L::Indices,
    b: &L::Indices,
) -> PairVelocities<L> {
    let side = |idx| {
        let [lx, ly, lz, ax, ay, az, _, _] = gather_blocks::<L>(|k| velocity(k).0, idx);
        let v3 = |x, y, z| V3 { x, y, z };
        (v3(lx, ly, lz), v3(ax, ay, az))
    };
    let ((linear_a, angular_a), (linear_b, angular_b)) = (side(a), side(b));
    PairVelocities {
        linear_a,
        angular_a,
        linear_b,
        angular_b,
    }
}

/// The inverse of [`gather_poses`]: lane `i`'s pose, for each lane `i` where `write` has bit
/// `i`, given to `store(i, pose)`.
#[inline(always)]
pub(crate) fn scatter_poses<L: Lane>(
    p: &PoseLanesOf<L>,
    write: u16,
    mut store: impl FnMut(usize, SolverPose),
) {
    let block = L::transpose_out([
        p.position.x,
        p.position.y,
        p.position.z,
        p.rotation.x,
        p.rotation.y,
        p.rotation.z,
        p.rotation.w,
        p.inv_mass,
    ]);
    for (i, v) in block.as_ref().iter().enumerate() {
        if write & (1 << i) != 0 {
            store(i, SolverPose(v.0));
        }
    }
}

impl Lane for f32 {
    type Mask = bool;
    type Indices = [u32; 1];
    type Block = [SolverVelocity; 1];
    const WIDTH: usize = 1;
    const REGISTERS: usize = 1;
    #[inline(always)]
    fn splat(x: f32) -> Self {
        x
    }
    #[inline(always)]
    fn lane(&self, _i: usize) -> f32 {
        *self
    }
    #[inline(always)]
    fn set_lane(&mut self, _i: usize, x: f32) {
        *self = x;
    }
    #[inline(always)]
    fn gt(self, other: Self) -> bool {
        self > other
    }
    #[inline(always)]
    fn select(mask: bool, a: Self, b: Self) -> Self {
        if mask {
            a
        } else {
            b
        }
    }
    #[inline(always)]
    fn and(a: bool, b: bool) -> bool {
        a && b
    }
    #[inline(always)]
    fn or(a: bool, b: bool) -> bool {
        a || b
    }
    #[inline(always)]
    fn not(mask: bool) -> bool {
        !mask
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn mask_bits(mask: bool) -> u32 {
        u32::from(mask)
    }
    #[inline(always)]
    fn from_fn(mut f: impl FnMut(usize) -> f32) -> Self {
        f(0)
    }
    #[inline(always)]
    fn transpose_in(block: &[SolverVelocity; 1]) -> [f32; 8] {
        block[0].0
    }
    #[inline(always)]
    fn transpose_out(components: [f32; 8]) -> [SolverVelocity; 1] {
        [SolverVelocity(components)]
    }
}

/// A lane mask of the wide type (all bits set where true), kept apart from the float lanes.
#[derive(Debug, Clone, Copy)]
pub struct WideMask(Wide);

impl Lane for Wide {
    type Mask = WideMask;
    type Indices = [u32; WIDE_LANES];
    type Block = [SolverVelocity; WIDE_LANES];
    const WIDTH: usize = WIDE_LANES;
    // 8 or 16 lanes in one AVX or AVX-512 register; without AVX, 8 lanes in two SSE ones.
    const REGISTERS: usize = if cfg!(target_feature = "avx") { 1 } else { 2 };
    #[inline(always)]
    fn splat(x: f32) -> Self {
        Wide::splat(x)
    }
    #[inline(always)]
    fn lane(&self, i: usize) -> f32 {
        self.as_array()[i]
    }
    #[inline(always)]
    fn set_lane(&mut self, i: usize, x: f32) {
        self.as_mut_array()[i] = x;
    }
    #[inline(always)]
    fn gt(self, other: Self) -> WideMask {
        WideMask(self.simd_gt(other))
    }
    #[inline(always)]
    fn select(mask: WideMask, a: Self, b: Self) -> Self {
        mask.0.select(a, b)
    }
    #[inline(always)]
    fn and(a: WideMask, b: WideMask) -> WideMask {
        WideMask(a.0 & b.0)
    }
    #[inline(always)]
    fn or(a: WideMask, b: WideMask) -> WideMask {
        WideMask(a.0 | b.0)
    }
    #[inline(always)]
    fn not(mask: WideMask) -> WideMask {
        WideMask(!mask.0)
    }
    #[inline(always)]
    fn is_nan(self) -> WideMask {
        WideMask(Wide::is_nan(self))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Wide::sqrt(self)
    }
    #[inline(always)]
    fn mask_bits(mask: WideMask) -> u32 {
        mask.0.to_bitmask()
    }
    #[inline(always)]
    fn from_fn(f: impl FnMut(usize) -> f32) -> Self {
        Wide::new(std::array::from_fn(f))
    }
    #[inline(always)]
    fn transpose_in(block: &[SolverVelocity; WIDE_LANES]) -> [Wide; 8] {
        #[cfg(not(all(target_feature = "avx512f", feature = "lanes16")))]
        {
            transpose8(block.map(|v| Wide::new(v.0)))
        }
        // One 8 x 8 transpose per eight bodies, the two halves side by side. (Written apart
        // from the 8-lane case: the generic form's array closures were not inlined on the
        // portable build, which made its steps 15 to 35 % slower.)
        #[cfg(all(target_feature = "avx512f", feature = "lanes16"))]
        {
            let half =
                |h: usize| transpose8(std::array::from_fn(|i| f32x8::new(block[8 * h + i].0)));
            let (low, high) = (half(0), half(1));
            std::array::from_fn(|j| bytemuck::cast([low[j], high[j]]))
        }
    }
    #[inline(always)]
    fn transpose_out(components: [Wide; 8]) -> [SolverVelocity; WIDE_LANES] {
        #[cfg(not(all(target_feature = "avx512f", feature = "lanes16")))]
        {
            transpose8(components).map(|v| SolverVelocity(v.to_array()))
        }
        #[cfg(all(target_feature = "avx512f", feature = "lanes16"))]
        {
            let halves: [[f32x8; 2]; 8] = components.map(bytemuck::cast);
            let low = transpose8(halves.map(|c| c[0]));
            let high = transpose8(halves.map(|c| c[1]));
            std::array::from_fn(|i| {
                SolverVelocity(if i < 8 { low[i] } else { high[i - 8] }.to_array())
            })
        }
    }
}

/// The 8 x 8 transpose of eight 8-lane rows: `out[j].lane(i) == rows[i].lane(j)`.
///
/// With AVX, `wide`'s own (shuffles on 256-bit registers). Without (the portable SSE2 build,
/// where `wide` transposes element by element: 64 scalar loads and stores, then vector loads
/// that wait for those stores), four 4 x 4 transposes of the rows' 128-bit halves. Data
/// movement only: the bits are the same either way (tested against the element-wise
/// definition).
#[inline(always)]
fn transpose8(rows: [f32x8; 8]) -> [f32x8; 8] {
    #[cfg(target_feature = "avx")]
    {
        f32x8::transpose(rows)
    }
    #[cfg(not(target_feature = "avx"))]
    {
        use wide::f32x4;
        let halves: [[f32x4; 2]; 8] = rows.map(bytemuck::cast);
        // Block (r, h): rows 4r..4r+4, half h (columns 4h..4h+4), transposed.
        let block = |r: usize, h: usize| {
            f32x4::transpose([
                halves[4 * r][h],
                halves[4 * r + 1][h],
                halves[4 * r + 2][h],
                halves[4 * r + 3][h],
            ])
        };
        let (top_lo, bottom_lo, top_hi, bottom_hi) =
            (block(0, 0), block(1, 0), block(0, 1), block(1, 1));
        // Output row j (column j of the input): lanes 0..4 from the top rows, 4..8 from the
        // bottom rows.
        std::array::from_fn(|j| {
            let (top, bottom) = if j < 4 {
                (top_lo[j], bottom_lo[j])
            } else {
                (top_hi[j - 4], bottom_hi[j - 4])
            };
            bytemuck::cast([top, bottom])
        })
    }
}

/// A 3-vector of lanes (`WideVec3` for the wide type, a plain vector for `f32`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct V3<L> {
    /// x lanes.
    pub x: L,
    /// y lanes.
    pub y: L,
    /// z lanes.
    pub z: L,
}

/// The wide 3-vector.
pub type WideVec3 = V3<Wide>;

impl<L: Lane> V3<L> {
    /// Every lane zero.
    #[inline(always)]
    pub fn zero() -> Self {
        let z = L::splat(0.0);
        V3 { x: z, y: z, z }
    }
    /// Lane `i` as a glam vector.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> Vec3 {
        Vec3::new(self.x.lane(i), self.y.lane(i), self.z.lane(i))
    }
    /// Sets lane `i`.
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, v: Vec3) {
        self.x.set_lane(i, v.x);
        self.y.set_lane(i, v.y);
        self.z.set_lane(i, v.z);
    }
    /// `x x' + y y' + z z'`, in that order (as glam's scalar `Vec3::dot`).
    #[inline(always)]
    pub fn dot(self, o: Self) -> L {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// Euclidean length, `sqrt(x x + y y + z z)`.
    #[inline(always)]
    pub fn length(self) -> L {
        self.dot(self).sqrt()
    }
    /// Every component times the lanes `s`.
    #[inline(always)]
    pub fn scale(self, s: L) -> Self {
        V3 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

impl<L: Lane> V3<L> {
    /// Every lane `v`.
    #[inline(always)]
    pub fn splat(v: Vec3) -> Self {
        V3 {
            x: L::splat(v.x),
            y: L::splat(v.y),
            z: L::splat(v.z),
        }
    }
    /// `self x o`.
    #[inline(always)]
    pub fn cross(self, o: Self) -> Self {
        V3 {
            x: self.y * o.z - self.z * o.y,
            y: self.z * o.x - self.x * o.z,
            z: self.x * o.y - self.y * o.x,
        }
    }
    /// Lane-wise `if mask { a } else { b }`.
    #[inline(always)]
    pub fn select(mask: L::Mask, a: Self, b: Self) -> Self {
        V3 {
            x: L::select(mask, a.x, b.x),
            y: L::select(mask, a.y, b.y),
            z: L::select(mask, a.z, b.z),
        }
    }
}

impl<L: Lane> Neg for V3<L> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        V3 {
            x: -self.x,
            y: -self.y,
            z: -self.z,
        }
    }
}

/// A quaternion of lanes (`x, y, z` the vector part, `w` the scalar part).
#[derive(Debug, Clone, Copy)]
pub struct Q<L> {
    /// x lanes.
    pub x: L,
    /// y lanes.
    pub y: L,
    /// z lanes.
    pub z: L,
    /// w lanes.
    pub w: L,
}

impl<L: Lane> Q<L> {
    /// The identity in every lane.
    #[inline(always)]
    pub fn identity() -> Self {
        let z = L::splat(0.0);
        Q {
            x: z,
            y: z,
            z,
            w: L::splat(1.0),
        }
    }
    /// Sets lane `i`.
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, q: Quat) {
        self.x.set_lane(i, q.x);
        self.y.set_lane(i, q.y);
        self.z.set_lane(i, q.z);
        self.w.set_lane(i, q.w);
    }
    /// Lane `i`.
    #[inline(always)]
    pub fn lane(&self, i: usize) -> Quat {
        Quat::from_xyzw(
            self.x.lane(i),
            self.y.lane(i),
            self.z.lane(i),
            self.w.lane(i),
        )
    }
    /// The vector part.
    #[inline(always)]
    pub fn vector(self) -> V3<L> {
        V3 {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }
    /// The conjugate (the inverse of a unit quaternion).
    #[inline(always)]
    pub fn conjugate(self) -> Self {
        Q {
            x: -self.x,
            y: -self.y,
            z: -self.z,
            w: self.w,
        }
    }
    /// The Hamilton product `self o`.
    #[inline(always)]
    pub fn product(self, o: Self) -> Self {
        Q {
            x: self.w * o.x + self.x * o.w + self.y * o.z - self.z * o.y,
            y: self.w * o.y - self.x * o.z + self.y * o.w + self.z * o.x,
            z: self.w * o.z + self.x * o.y - self.y * o.x + self.z * o.w,
            w: self.w * o.w - self.x * o.x - self.y * o.y - self.z * o.z,
        }
    }
    /// `v` rotated by the unit quaternion: `v + 2 w (u x v) + 2 u x (u x v)`.
    #[inline(always)]
    pub fn rotate(self, v: V3<L>) -> V3<L> {
        let u = self.vector();
        let t = u.cross(v);
        let two = L::splat(2.0);
        v + (t.scale(self.w) + u.cross(t)).scale(two)
    }
    /// Lane-wise `if mask { -self } else { self }`.
    #[inline(always)]
    pub fn negate_where(self, mask: L::Mask) -> Self {
        Q {
            x: L::select(mask, -self.x, self.x),
            y: L::select(mask, -self.y, self.y),
            z: L::select(mask, -self.z, self.z),
            w: L::select(mask, -self.w, self.w),
        }
    }
}

impl<L: Lane> Add for V3<L> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        V3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

impl<L: Lane> Sub for V3<L> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        V3 {
            x: self.x - o.x,
            y: self.y - o.y,
            z: self.z - o.z,
        }
    }
}

/// A 3x3 matrix of lanes, by columns (as glam's `Mat3`).
#[derive(Debug, Clone, Copy)]
pub struct M3<L> {
    /// First column.
    pub x_axis: V3<L>,
    /// Second column.
    pub y_axis: V3<L>,
    /// Third column.
    pub z_axis: V3<L>,
}

impl<L: Lane> M3<L> {
    /// Every lane zero.
    #[inline(always)]
    pub fn zero() -> Self {
        M3 {
            x_axis: V3::zero(),
            y_axis: V3::zero(),
            z_axis: V3::zero(),
        }
    }
    /// Sets lane `i`.
    #[inline(always)]
    pub fn set_lane(&mut self, i: usize, m: &Mat3) {
        self.x_axis.set_lane(i, m.x_axis);
        self.y_axis.set_lane(i, m.y_axis);
        self.z_axis.set_lane(i, m.z_axis);
    }
    /// `M v = x_axis v.x + y_axis v.y + z_axis v.z`.
    #[inline(always)]
    pub fn mul_v3(&self, v: V3<L>) -> V3<L> {
        self.x_axis.scale(v.x) + self.y_axis.scale(v.y) + self.z_axis.scale(v.z)
    }
}

/// The velocities of the two bodies of each lane's joint, gathered for a kernel.
#[derive(Debug, Clone, Copy)]
pub struct PairVelocities<L> {
    /// Linear velocity of A.
    pub linear_a: V3<L>,
    /// Angular velocity of A.
    pub angular_a: V3<L>,
    /// Linear velocity of B.
    pub linear_b: V3<L>,
    /// Angular velocity of B.
    pub angular_b: V3<L>,
}

impl<L: Lane> PairVelocities<L> {
    /// All zero.
    pub fn zero() -> Self {
        PairVelocities {
            linear_a: V3::zero(),
            angular_a: V3::zero(),
            linear_b: V3::zero(),
            angular_b: V3::zero(),
        }
    }

    /// Sets lane `i` from the two bodies' `(linear, angular)` velocities.
    pub fn set_lane(&mut self, i: usize, a: (Vec3, Vec3), b: (Vec3, Vec3)) {
        self.linear_a.set_lane(i, a.0);
        self.angular_a.set_lane(i, a.1);
        self.linear_b.set_lane(i, b.0);
        self.angular_b.set_lane(i, b.1);
    }
}

/// Which bodies of a batch a kernel may write: bit `i` for lane `i`. A lane's body is written
/// only if the lane is real (not padding) and the body is dynamic, so that no two lanes of one
/// colour ever write the same body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteMask {
    /// Lanes whose body A is written.
    pub a: u16,
    /// Lanes whose body B is written.
    pub b: u16,
}

/// A slice of body quantities that the batches of one colour read and write concurrently.
///
/// It is a raw view: the schedule guarantees that within one colour no two joints share a
/// dynamic body and kernels write dynamic bodies only (see [`WriteMask`]), so concurrent tasks
/// write disjoint elements, and the elements they read but others write do not exist (a task
/// reads only its own joints' bodies; static and kinematic bodies are never written during a
/// colour). `debug_assert`s check the indices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shared<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: `Shared` is a `&mut [T]` split across tasks by index; the coloring invariant above
// (tested in `schedule::tests` and by the thread-count determinism tests) keeps writes disjoint.
unsafe impl<T: Send> Send for Shared<'_, T> {}
// SAFETY: as above; no element is written by one task while another reads it.
unsafe impl<T: Send> Sync for Shared<'_, T> {}

impl<'a, T> Shared<'a, T> {
    pub(crate) fn new(slice: &'a mut [T]) -> Self {
        Shared {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// The elements `range`, borrowed mutably.
    ///
    /// # Safety
    /// No other task reads or writes these elements while the borrow lives.
    #[inline(always)]
    pub(crate) unsafe fn slice_mut(&self, range: std::ops::Range<usize>) -> &'a mut [T] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds (asserted), and exclusively owned by this task (caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }
    }
}

impl<T: Copy> Shared<'_, T> {
    /// Reads element `i`.
    ///
    /// # Safety
    /// `i < len`, and no other task writes element `i` during this colour.
    #[inline(always)]
    pub(crate) unsafe fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        // SAFETY: in bounds (caller), and not written concurrently (caller).
        unsafe { *self.ptr.add(i) }
    }

    /// Writes element `i`.
    ///
    /// # Safety
    /// `i < len`, and no other task reads or writes element `i` during this colour.
    #[inline(always)]
    pub(crate) unsafe fn set(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        // SAFETY: in bounds (caller), and exclusively owned by this task (caller).
        unsafe { *self.ptr.add(i) = v }
    }
}

/// The body velocities the kernels touch, shared between the tasks of one colour.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyAccess<'a> {
    pub velocities: Shared<'a, SolverVelocity>,
}

impl BodyAccess<'_> {
    /// Gathers the velocities of bodies `a[i]`, `b[i]` into lane `i`.
    ///
    /// # Safety
    /// The indices are in bounds and, during this colour, the bodies are written by no other
    /// task (the coloring invariant).
    #[inline(always)]
    pub(crate) unsafe fn gather_velocities<L: Lane>(
        &self,
        a: &L::Indices,
        b: &L::Indices,
    ) -> PairVelocities<L> {
        // SAFETY: the caller's contract.
        gather_velocity_pairs(|k| unsafe { self.velocities.get(k) }, a, b)
    }

    /// Writes lane `i` back to bodies `a[i]`, `b[i]` where `write` allows it.
    ///
    /// # Safety
    /// As [`BodyAccess::gather_velocities`]; `write` selects only dynamic bodies of real lanes.
    #[inline(always)]
    pub(crate) unsafe fn scatter_velocities<L: Lane>(
        &self,
        v: &PairVelocities<L>,
        a: &L::Indices,
        b: &L::Indices,
        write: WriteMask,
    ) {
        // SAFETY: the caller's contract.
        unsafe {
            self.scatter(&v.linear_a, &v.angular_a, a, write.a);
            self.scatter(&v.linear_b, &v.angular_b, b, write.b);
        }
    }

    /// # Safety
    /// As [`BodyAccess::scatter_velocities`].
    #[inline(always)]
    unsafe fn scatter<L: Lane>(
        &self,
        linear: &V3<L>,
        angular: &V3<L>,
        idx: &L::Indices,
        mask: u16,
    ) {
        let zero = L::splat(0.0);
        let block = L::transpose_out([
            linear.x, linear.y, linear.z, angular.x, angular.y, angular.z, zero, zero,
        ]);
        for (i, (v, &k)) in block.as_ref().iter().zip(idx.as_ref()).enumerate() {
            if mask & (1 << i) != 0 {
                // SAFETY: the caller's contract.
                unsafe { self.velocities.set(k as usize, *v) };
            }
        }
    }
}

/// Poses and mass properties shared by the tasks of one colour during projection, and the
/// joints' carried impulses (where the projection marks the stops it pushed joints back
/// from: `solver::PROJECTED_STOP`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoseAccess<'a> {
    pub poses: Shared<'a, SolverPose>,
    pub inv_inertia: &'a [Mat3],
    pub impulses: Shared<'a, [f32; crate::rows::MAX_ROWS_PER_JOINT]>,
}

/// The mask with no lane set.
#[inline(always)]
pub(crate) fn no_lanes<L: Lane>() -> L::Mask {
    let zero = L::splat(0.0);
    zero.gt(zero)
}

/// Lane-wise `max(a, b)`, written with [`Lane::select`] so that every lane type gives the
/// same bits (for a NaN in either, the result is `b`).
#[inline(always)]
pub fn max<L: Lane>(a: L, b: L) -> L {
    L::select(a.gt(b), a, b)
}

/// Lane-wise `min(a, b)` (for a NaN in either, the result is `b`).
#[inline(always)]
pub fn min<L: Lane>(a: L, b: L) -> L {
    L::select(b.gt(a), a, b)
}

/// Lane-wise `|x|` (`-0.0` stays `-0.0`).
#[inline(always)]
pub fn abs<L: Lane>(x: L) -> L {
    L::select(L::splat(0.0).gt(x), -x, x)
}

/// Lane-wise `atan2(y, x)`, rad in `[-pi, pi]`: written in lane arithmetic only, so the
/// scalar and the wide path give the same bits.
///
/// `t = min(|y|, |x|) / max(|y|, |x|)` in `[0, 1]`; above `tan(pi/8)` it is reduced with
/// `atan t = pi/4 + atan((t - 1) / (t + 1))`; on `[-tan(pi/8), tan(pi/8)]`, Cephes' `atanf`
/// polynomial (relative error below 2e-7); then the octant: `pi/2 - r` where `|y| > |x|`,
/// `pi - r` where `x < 0`, the sign of `y`. `atan2(0, 0) = 0`, NaN in gives NaN. Largest error against the
/// exact value: below 3e-7 rad (tested).
#[inline(always)]
pub fn atan2<L: Lane>(y: L, x: L) -> L {
    let zero = L::splat(0.0);
    let (ay, ax) = (abs(y), abs(x));
    let (num, den) = (min(ay, ax), max(ay, ax));
    let t = L::select(den.gt(zero), num / den, zero);
    let reduce = t.gt(L::splat(0.414_213_57));
    let z = L::select(reduce, (t - L::splat(1.0)) / (t + L::splat(1.0)), t);
    let offset = L::select(reduce, L::splat(std::f32::consts::FRAC_PI_4), zero);
    let z2 = z * z;
    let poly = ((L::splat(8.053_744_5e-2) * z2 - L::splat(1.387_768_6e-1)) * z2
        + L::splat(1.997_771_1e-1))
        * z2
        - L::splat(3.333_295e-1);
    let r = offset + (poly * z2 * z + z);
    let r = L::select(ay.gt(ax), L::splat(std::f32::consts::FRAC_PI_2) - r, r);
    let r = L::select(zero.gt(x), L::splat(std::f32::consts::PI) - r, r);
    let r = L::select(zero.gt(y), -r, r);
    L::select(L::or(y.is_nan(), x.is_nan()), L::splat(f32::NAN), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable transpose moves every element to its transposed place, NaN payloads and
    /// signed zeros included.
    #[test]
    fn transpose8_moves_every_element_to_its_transposed_place() {
        let element = |i: usize, j: usize| match (i + 3 * j) % 7 {
            0 => -0.0,
            1 => f32::from_bits(0x7fc0_0000 | (i * 8 + j) as u32),
            _ => (i * 8 + j) as f32 * 1.25 - 17.0,
        };
        let rows: [f32x8; 8] =
            std::array::from_fn(|i| f32x8::new(std::array::from_fn(|j| element(i, j))));
        let out = transpose8(rows);
        for (j, column) in out.iter().enumerate() {
            for i in 0..8 {
                assert_eq!(
                    column.as_array()[i].to_bits(),
                    element(i, j).to_bits(),
                    "({i}, {j})"
                );
            }
        }
        let back = transpose8(out);
        for (b, r) in back.iter().zip(&rows) {
            assert_eq!(
                b.to_array().map(f32::to_bits),
                r.to_array().map(f32::to_bits)
            );
        }
    }

    #[test]
    fn wide_lanes_compute_what_the_scalar_lanes_compute() {
        let xs8 = [1.5, -2.25, 1e-30, 3.0e7, -0.0, 0.1, 7.0, -1e-3];
        let ys8 = [0.3, 4.0, -1e-20, 2.5, 1.0, -0.7, 1e9, 5.0];
        let xs: [f32; WIDE_LANES] = std::array::from_fn(|i| xs8[i % 8] * (1 + i / 8) as f32);
        let ys: [f32; WIDE_LANES] = std::array::from_fn(|i| ys8[i % 8]);
        let (x, y) = (Wide::new(xs), Wide::new(ys));
        let v = (x * y + x - y) * -(x - y * y);
        let s = <Wide as Lane>::select(Lane::gt(x, y), x, y);
        for i in 0..WIDE_LANES {
            let (a, b) = (xs[i], ys[i]);
            let scalar = (a * b + a - b) * -(a - b * b);
            assert_eq!(v.lane(i).to_bits(), scalar.to_bits(), "lane {i}");
            assert_eq!(
                s.lane(i).to_bits(),
                <f32 as Lane>::select(Lane::gt(a, b), a, b).to_bits(),
                "lane {i}"
            );
        }
    }

    #[test]
    fn scatter_skips_masked_lanes_and_transposes_round_trip() {
        let mut v: Vec<SolverVelocity> = (0..4)
            .map(|i| SolverVelocity::new(Vec3::splat(i as f32), Vec3::splat(10.0 + i as f32)))
            .collect();
        let access = BodyAccess {
            velocities: Shared::new(&mut v),
        };
        let mut idx_a = [0u32; WIDE_LANES];
        let mut idx_b = [0u32; WIDE_LANES];
        idx_a[0] = 1;
        idx_b[0] = 2;
        idx_a[1] = 3;
        // SAFETY: single task, indices in bounds.
        unsafe {
            let mut p = access.gather_velocities::<Wide>(&idx_a, &idx_b);
            assert_eq!(p.linear_a.lane(0), Vec3::splat(1.0));
            assert_eq!(p.angular_a.lane(1), Vec3::splat(13.0));
            assert_eq!(p.angular_b.lane(0), Vec3::splat(12.0));
            p.linear_a = V3::zero();
            p.linear_b = V3::zero();
            access.scatter_velocities::<Wide>(&p, &idx_a, &idx_b, WriteMask { a: 0b1, b: 0 });
        }
        let linear: Vec<Vec3> = v.iter().map(SolverVelocity::linear).collect();
        assert_eq!(
            linear,
            vec![Vec3::ZERO, Vec3::ZERO, Vec3::splat(2.0), Vec3::splat(3.0)]
        );
        assert_eq!(v[1].angular(), Vec3::splat(11.0));
    }

    #[test]
    fn poses_gather_by_lane_and_scatter_only_where_asked_with_the_same_bits() {
        let poses: Vec<SolverPose> = (0..10)
            .map(|i| {
                let q = Quat::from_rotation_y(0.1 * i as f32);
                SolverPose::new(Vec3::new(i as f32, -0.5, 1e-30), q, 1.0 / (1.0 + i as f32))
            })
            .collect();
        let idx: [u32; WIDE_LANES] = std::array::from_fn(|i| [7, 2, 9, 0, 2, 5, 1, 3][i % 8]);
        let wide = gather_poses::<Wide>(|k| poses[k], &idx);
        for (lane, &k) in idx.iter().enumerate() {
            let p = &poses[k as usize];
            assert_eq!(wide.position.lane(lane), p.position());
            assert_eq!(wide.rotation.lane(lane).to_array(), p.rotation().to_array());
            assert_eq!(wide.inv_mass.lane(lane).to_bits(), p.0[7].to_bits());
            // The one-lane path reads the same pose.
            let one = gather_poses::<f32>(|k| poses[k], &[k]);
            assert_eq!(
                [
                    one.position.x,
                    one.position.y,
                    one.position.z,
                    one.rotation.w
                ],
                [p.0[0], p.0[1], p.0[2], p.0[6]]
            );
        }
        let mut written = Vec::new();
        // With 16 lanes, lane 12 too (the second 8 x 8 transpose's half).
        let lanes: &[usize] = if WIDE_LANES > 8 {
            &[0, 5, 7, 12]
        } else {
            &[0, 5, 7]
        };
        let mask = lanes.iter().fold(0u16, |m, &lane| m | 1 << lane);
        scatter_poses(&wide, mask, |lane, p| written.push((lane, p)));
        let expected: Vec<_> = lanes
            .iter()
            .map(|&lane| (lane, poses[idx[lane] as usize]))
            .collect();
        assert_eq!(written, expected, "lanes {lanes:?}, bit for bit");
    }

    #[test]
    fn lane_atan2_is_within_3e_7_of_the_exact_angle_and_the_same_on_both_paths() {
        let mut worst = 0.0f64;
        let n = 181;
        for i in 0..n {
            for k in 0..n {
                // A grid over [-2, 2]^2 with exact zeros, and tiny and huge magnitudes.
                let scale = |m: usize| match m % 3 {
                    0 => 1.0f32,
                    1 => 1e-20,
                    _ => 1e20,
                };
                let y = (i as f32 / (n - 1) as f32 * 4.0 - 2.0) * scale(k);
                let x = (k as f32 / (n - 1) as f32 * 4.0 - 2.0) * scale(i);
                let got = atan2(y, x);
                let exact = f64::from(y).atan2(f64::from(x));
                worst = worst.max((f64::from(got) - exact).abs());
                let wide = atan2(Wide::splat(y), Wide::splat(x));
                assert_eq!(wide.lane(3).to_bits(), got.to_bits(), "atan2({y}, {x})");
            }
        }
        assert!(worst < 3e-7, "largest error {worst:e} rad");
        assert_eq!(atan2(0.0f32, 0.0), 0.0);
        assert!((atan2(0.0f32, -1.0) - std::f32::consts::PI).abs() < 3e-7);
        assert!(atan2(f32::NAN, 1.0).is_nan() && atan2(1.0, f32::NAN).is_nan());
    }
}
