//! The schedule: which joints are solved together, never how they are solved.
//!
//! Built from the scene alone (body kinds, joint bodies, types and limits, in insertion order),
//! never from the thread count or the solver path's timing, so that every run of a scene
//! solves the same rows in the same order:
//!
//! - [`coloring`]: a greedy graph coloring of the joints such that no two joints of one colour
//!   share a dynamic body (static and kinematic bodies are never written by the solver, so
//!   they do not conflict). Joints that find no free colour among [`coloring::MAX_COLORS`] go
//!   to an overflow set, solved serially by the scalar kernels after the colours (Box2D v3's
//!   scheme).
//! - batches: inside a colour, joints of the same signature (type and whether a limit row
//!   exists) are packed into batches of the lane width, the last one padded. A limit row's
//!   activity changes from substep to substep, so it is a lane mask inside the batch (an
//!   inactive row has zero Jacobian and zero effective mass, which makes it neutral), not a
//!   batch key: the batches never need rebuilding while the scene is unchanged.
//! - [`islands`]: connected components of dynamic bodies through joints.
//! - [`hubs`]: bodies with many joints, whose joints leave the colours to be solved together,
//!   exactly, in every velocity pass (and, with the chain solve, [`chains`]).
//! - clusters: the islands of up to [`CLUSTER_MAX_JOINTS`] joints, packed in island order
//!   into [`Cluster`]s with their own colours' batches. A stage runs a cluster as one task
//!   through all its passes, so its rows stay in the core's cache from pass to pass and the
//!   threads meet once per stage, not once per colour and pass. Islands share no body, and a
//!   cluster keeps the scene's colours (a joint's colour depends only on earlier joints of
//!   its own island), so every island sees its rows in the same order as without clusters:
//!   the clusters change no bit of any result ([`ScheduleOptions::clusters`] turns them off
//!   to check it).
//!
//! With sleeping on, the joints of sleeping islands are left out of the batches, the overflow
//! and the projection groups ([`Schedule::build_awake`]): every stage skips them. The
//! coloring still covers every joint, so an awake joint keeps the colour it has when nothing
//! sleeps (a joint's colour depends only on earlier joints of its own island), and the awake
//! islands are solved bitwise as if no island slept. The schedule is rebuilt when an island
//! falls asleep or wakes, a rare event.
//!
//! Colours run in order; the batches of one colour touch disjoint dynamic bodies, so they may
//! run in any order or in parallel with bitwise the same result.

pub mod chains;
pub mod coloring;
pub mod hubs;
pub mod islands;

use crate::bodies::BodyKind;
use crate::joints::JointKind;
use std::ops::Range;

pub use chains::{Chain, Link};
pub use coloring::{Coloring, MAX_COLORS, OVERFLOW};
pub use hubs::Hub;
pub use islands::Islands;

/// A batch: up to `width` joints of one colour and one signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// Joint type of every lane.
    pub kind: JointKind,
    /// Whether the joints have a limit (and so a unilateral row in slot 5).
    pub limited: bool,
    /// Its joints: `Schedule::order[start..start + len]`.
    pub start: u32,
    /// Real lanes (the rest are padding).
    pub len: u32,
}

/// Up to `width` chains of one shape (joint types and links, position by position), solved
/// together by the direct chain solve, one chain per lane ([`chains`]). Chains of one joint
/// type and one link throughout share a group whatever their lengths: longest first, so that
/// the lanes still running at a position are always the first ones (the others are padding
/// there, neutral).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainGroup {
    /// Chains, the lanes at position 0 (the rest are padding).
    pub lanes: u32,
    /// Position `k`'s joints, one per lane still running there, are
    /// `Schedule::chain_joints[offsets[k]..offsets[k + 1]]`.
    pub offsets: Vec<u32>,
    /// Joint type at each position.
    pub kinds: Vec<JointKind>,
    /// Whether the joints at each position have a limit (a limit row, solved in or out of the
    /// chain's system as it is active: [`chains`]).
    pub limited: Vec<bool>,
    /// `links[k - 1]`: how position `k` meets position `k - 1` ([`chains::Link`]).
    pub links: Vec<Link>,
}

impl ChainGroup {
    /// Joints per chain.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Never true (a chain has at least [`chains::MIN_CHAIN_JOINTS`] joints).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

/// Islands solved as one task through all the passes of a stage ([`Schedule::clusters`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// `Schedule::batches[colors[c].clone()]` are its joints of colour `c`, for every colour
    /// of the scene (empty ranges where it has none).
    pub colors: Vec<Range<usize>>,
    /// `Schedule::overflow[overflow.clone()]` are its overflow joints, in joint order.
    pub overflow: Range<usize>,
    /// Joints.
    pub joints: usize,
}

/// Islands with at most this many joints are solved in clusters ([`Cluster`]): about 400 KB
/// of revolute rows in eight lanes, so that a cluster's rows stay in a core's L2 cache.
pub const CLUSTER_MAX_JOINTS: usize = 1024;

/// Clusters a scene's small islands are spread over when they can be (for balance between
/// threads); never fewer joints per cluster than [`CLUSTER_MIN_JOINTS`].
const CLUSTER_TARGET_COUNT: usize = 8;

/// Smallest cluster worth its padding (each cluster pads its colours' last batches).
const CLUSTER_MIN_JOINTS: usize = 64;

/// How [`Schedule::build_awake`] groups the joints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleOptions {
    /// Take the chains ([`chains`]) out of the colours into chain groups.
    pub chain_solve: bool,
    /// Solve small islands in [`Cluster`]s (default on). Off, every joint goes through the
    /// shared colours; the results are bitwise the same either way, only the speed differs.
    pub clusters: bool,
}

impl Default for ScheduleOptions {
    fn default() -> Self {
        ScheduleOptions {
            chain_solve: false,
            clusters: true,
        }
    }
}

/// Colours, batches, overflow and islands of a scene.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// Lane width the batches were packed for (1: scalar path).
    pub width: usize,
    /// The coloring.
    pub coloring: Coloring,
    /// Joint indices in solve order: the shared colours' batches, then each cluster's, colour
    /// by colour, batch by batch.
    pub order: Vec<u32>,
    /// All batches: the shared colours', colour by colour, then each cluster's.
    pub batches: Vec<Batch>,
    /// `batches[colors[c].clone()]` are colour `c`'s batches outside the clusters (the
    /// shared colours: the joints of the large islands, and with clusters off, of all).
    pub colors: Vec<Range<usize>>,
    /// Overflow joints (solved serially, in joint order, after the colours): the first
    /// `shared_overflow` outside the clusters, then each cluster's ([`Cluster::overflow`]).
    pub overflow: Vec<u32>,
    /// See `overflow`.
    pub shared_overflow: usize,
    /// The small islands, in clusters ([`Cluster`]).
    pub clusters: Vec<Cluster>,
    /// Connected components of the dynamic bodies.
    pub islands: Islands,
    /// Joint indices grouped by island, in joint order inside an island (a joint belongs to
    /// the island of its dynamic body or bodies).
    pub island_joints: Vec<u32>,
    /// `island_joints[island_ranges[i].clone()]` are island `i`'s joints.
    pub island_ranges: Vec<Range<usize>>,
    /// The islands of at most [`SERIAL_PROJECTION_MAX_JOINTS`] joints (ranges into
    /// `island_joints`): projected one island per task, in joint order.
    pub serial_islands: Vec<Range<usize>>,
    /// Joints of the larger islands by colour: `projection_joints[projection_colors[c]]`,
    /// then their overflow joints, `projection_overflow`.
    pub projection_joints: Vec<u32>,
    /// See `projection_joints`.
    pub projection_colors: Vec<Range<usize>>,
    /// Overflow joints of the larger islands, projected serially after the colours.
    pub projection_overflow: Vec<u32>,
    /// `(kinematic body, dynamic body)` of every joint between the two kinds, in joint order
    /// (a moving kinematic body keeps the island it is jointed to awake).
    pub driven: Vec<(u32, u32)>,
    /// Joints left out because their island sleeps.
    pub sleeping_joints: usize,
    /// With the chain solve on: the chain groups, whose joints are in no batch and not in
    /// the overflow (empty otherwise).
    pub chain_groups: Vec<ChainGroup>,
    /// The chains' joints, group by group, position by position ([`ChainGroup::offsets`]).
    pub chain_joints: Vec<u32>,
    /// The hubs ([`hubs`]), whose joints are in no batch, chain or overflow.
    pub hubs: Vec<Hub>,
    /// How the schedule was built.
    pub options: ScheduleOptions,
}

/// Islands with at most this many joints are projected serially in joint order (one task per
/// island); larger ones by colours, so that one big island still uses every thread.
///
/// Serial projection is the better solver (a sweep along a chain carries a correction from
/// end to end in one pass; see `Solver::project`), colours the parallel one. The shipped
/// scenes and a 100-link chain sit far below the threshold; the 100 x 100 benchmark grid
/// (19,701 joints) above it.
pub const SERIAL_PROJECTION_MAX_JOINTS: usize = 4096;

/// The row signature that separates batches and the lanes of a projection group: joint type,
/// then whether a limit exists. (Not the row slots alone: a revolute and a prismatic joint
/// use the same slots but compute different rows.)
pub(crate) fn signature(kind: JointKind, limited: bool) -> u8 {
    let k = match kind {
        JointKind::Revolute => 0,
        JointKind::Spherical => 1,
        JointKind::Fixed => 2,
        JointKind::Prismatic => 3,
    };
    k * 2 + u8::from(limited)
}

/// Packs chains of one shape (types, limits and links, position by position; for a uniform
/// chain, its one type, limit and link, whatever its length) into groups of up to `width`
/// lanes, longest first, then in the order found; shapes in order of their first chain.
/// Returns the groups and their joints ([`ChainGroup::offsets`]).
fn group_chains(
    width: usize,
    found: Vec<Chain>,
    joint_kinds: &[JointKind],
    limited: &[bool],
) -> (Vec<ChainGroup>, Vec<u32>) {
    // (uniform, types and limits, links): a uniform chain (one type and limit, one link
    // throughout) keys on them alone, so that uniform chains of any length share groups.
    type Shape = (bool, Vec<(JointKind, bool)>, Vec<Link>);
    let mut shapes: Vec<(Shape, Vec<Chain>)> = Vec::new();
    let mut index: std::collections::HashMap<Shape, usize> = Default::default();
    for chain in found {
        let kinds: Vec<(JointKind, bool)> = chain
            .joints
            .iter()
            .map(|&j| (joint_kinds[j as usize], limited[j as usize]))
            .collect();
        let uniform = kinds.iter().all(|&k| k == kinds[0])
            && chain.links.iter().all(|&l| l == chain.links[0]);
        let shape = if uniform {
            (true, vec![kinds[0]], vec![chain.links[0]])
        } else {
            (false, kinds, chain.links.clone())
        };
        match index.get(&shape) {
            Some(&i) => shapes[i].1.push(chain),
            None => {
                index.insert(shape.clone(), shapes.len());
                shapes.push((shape, vec![chain]));
            }
        }
    }
    let (mut groups, mut joints) = (Vec::new(), Vec::new());
    for ((_, kinds, links), mut members) in shapes {
        // Longest first (stable: in the order found among equal lengths).
        members.sort_by_key(|c| std::cmp::Reverse(c.joints.len()));
        for lanes in members.chunks(width) {
            let len = lanes[0].joints.len();
            let mut offsets = vec![joints.len() as u32];
            for k in 0..len {
                joints.extend(
                    lanes
                        .iter()
                        .take_while(|c| c.joints.len() > k)
                        .map(|c| c.joints[k]),
                );
                offsets.push(joints.len() as u32);
            }
            let (kinds, links) = if kinds.len() == 1 {
                (vec![kinds[0]; len], vec![links[0]; len - 1])
            } else {
                (kinds.clone(), links.clone())
            };
            groups.push(ChainGroup {
                lanes: lanes.len() as u32,
                offsets,
                kinds: kinds.iter().map(|&(kind, _)| kind).collect(),
                limited: kinds.iter().map(|&(_, limited)| limited).collect(),
                links,
            });
        }
    }
    (groups, joints)
}

/// Counting sort of the joints by island, stable (joint order inside an island).
fn group_by_island(
    islands: &Islands,
    body_kinds: &[BodyKind],
    joint_bodies: &[(u32, u32)],
) -> (Vec<u32>, Vec<Range<usize>>) {
    let island_of_joint: Vec<usize> = joint_bodies
        .iter()
        .map(|&(a, b)| {
            let body = if body_kinds[a as usize] == BodyKind::Dynamic {
                a
            } else {
                b
            };
            islands.island_of[body as usize] as usize
        })
        .collect();
    let mut start = vec![0usize; islands.count + 1];
    for &i in &island_of_joint {
        start[i + 1] += 1;
    }
    for i in 0..islands.count {
        start[i + 1] += start[i];
    }
    let ranges = (0..islands.count).map(|i| start[i]..start[i + 1]).collect();
    let mut joints = vec![0u32; joint_bodies.len()];
    for (j, &i) in island_of_joint.iter().enumerate() {
        joints[start[i]] = j as u32;
        start[i] += 1;
    }
    (joints, ranges)
}

/// The joints at each body, in joint order, as compressed rows: body `b`'s are
/// `joints[start[b]..start[b + 1]]`. A joint `j` is listed (at those of its two bodies that
/// `endpoint` accepts) when `keep(j)`.
pub(crate) fn joints_per_body(
    bodies: usize,
    joint_bodies: &[(u32, u32)],
    keep: impl Fn(usize) -> bool,
    endpoint: impl Fn(u32) -> bool,
) -> (Vec<usize>, Vec<u32>) {
    let mut start = vec![0usize; bodies + 1];
    for (j, &(a, b)) in joint_bodies.iter().enumerate() {
        if keep(j) {
            for body in [a, b].into_iter().filter(|&x| endpoint(x)) {
                start[body as usize + 1] += 1;
            }
        }
    }
    for i in 0..bodies {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut joints = vec![0u32; start[bodies]];
    for (j, &(a, b)) in joint_bodies.iter().enumerate() {
        if keep(j) {
            for body in [a, b].into_iter().filter(|&x| endpoint(x)) {
                joints[fill[body as usize]] = j as u32;
                fill[body as usize] += 1;
            }
        }
    }
    (start, joints)
}

/// [`assign_clusters`]'s mark of a joint outside every cluster.
const SHARED: u32 = u32::MAX;

/// Packs the awake islands of at most [`CLUSTER_MAX_JOINTS`] joints and no joint solved
/// directly (`direct`: hubs, chains), in
/// island order, into clusters of about `total / CLUSTER_TARGET_COUNT` joints (at least
/// [`CLUSTER_MIN_JOINTS`], at most [`CLUSTER_MAX_JOINTS`]; an island is never split).
/// Returns each joint's cluster ([`SHARED`] outside them) and the cluster count.
fn assign_clusters(
    island_joints: &[u32],
    island_ranges: &[Range<usize>],
    asleep: &[bool],
    direct: &[bool],
) -> (Vec<u32>, usize) {
    let mut cluster_of = vec![SHARED; asleep.len()];
    let small = |range: &&Range<usize>| {
        let joints = &island_joints[(*range).clone()];
        !joints.is_empty()
            && joints.len() <= CLUSTER_MAX_JOINTS
            && !asleep[joints[0] as usize]
            && !joints.iter().any(|&j| direct[j as usize])
    };
    let total: usize = island_ranges.iter().filter(small).map(|r| r.len()).sum();
    let target = (total / CLUSTER_TARGET_COUNT).clamp(CLUSTER_MIN_JOINTS, CLUSTER_MAX_JOINTS);
    let (mut count, mut filled) = (0, 0);
    for range in island_ranges.iter().filter(small) {
        if filled > 0 && filled + range.len() > target {
            count += 1;
            filled = 0;
        }
        for &j in &island_joints[range.clone()] {
            cluster_of[j as usize] = count as u32;
        }
        filled += range.len();
    }
    (cluster_of, count + usize::from(filled > 0))
}

/// Packs the joints of one colour into batches ([`Packer::color`]).
struct Packer<'a> {
    width: usize,
    joint_kinds: &'a [JointKind],
    limited: &'a [bool],
    order: Vec<u32>,
    batches: Vec<Batch>,
}

impl Packer<'_> {
    fn signature(&self, j: u32) -> u8 {
        signature(self.joint_kinds[j as usize], self.limited[j as usize])
    }

    /// Appends the batches of one colour's `joints` (in joint order) and returns their range.
    fn color(&mut self, mut joints: Vec<u32>) -> Range<usize> {
        // Stable: joint order inside a signature.
        joints.sort_by_key(|&j| self.signature(j));
        // Batches of one signature: (first joint, range of `joints`).
        let mut packed: Vec<(u32, Range<usize>)> = Vec::new();
        let mut i = 0;
        while i < joints.len() {
            let sig = self.signature(joints[i]);
            let mut n = 0;
            while n < self.width && i + n < joints.len() && self.signature(joints[i + n]) == sig {
                n += 1;
            }
            packed.push((joints[i], i..i + n));
            i += n;
        }
        // Batches in scene order (by first joint), not grouped by signature: the threads
        // split a colour's batches into contiguous blocks, and blocks of scene order carry
        // equal shares of every joint type (equal work, where blocks of one type each left a
        // thread idle, then stealing the other's batches and their bodies' cache lines every
        // pass) and touch bodies near each other in memory. The batches of a colour are
        // independent, so their order changes no result.
        packed.sort_by_key(|&(first, _)| first);
        let first = self.batches.len();
        for (_, range) in packed {
            let j0 = joints[range.start] as usize;
            self.batches.push(Batch {
                kind: self.joint_kinds[j0],
                limited: self.limited[j0],
                start: self.order.len() as u32,
                len: range.len() as u32,
            });
            self.order.extend_from_slice(&joints[range]);
        }
        first..self.batches.len()
    }
}

impl Schedule {
    /// Builds the schedule for `width` lanes from the bodies' kinds and, per joint, its two
    /// bodies, type and whether it has a limit; every body awake, default options.
    pub fn build(
        width: usize,
        body_kinds: &[BodyKind],
        joint_bodies: &[(u32, u32)],
        joint_kinds: &[JointKind],
        limited: &[bool],
    ) -> Schedule {
        let none = vec![false; body_kinds.len()];
        let unit = vec![1.0; body_kinds.len()];
        let light = vec![hubs::Light::No; body_kinds.len()];
        Self::build_awake(
            width,
            body_kinds,
            joint_bodies,
            joint_kinds,
            limited,
            (&none, &light, &unit),
            ScheduleOptions::default(),
        )
    }

    /// [`Schedule::build`] leaving out the joints of sleeping bodies (`body_asleep`, per body;
    /// islands sleep whole, so a joint's dynamic bodies are all asleep or all awake), taking
    /// the light bodies (`light`, per body: [`hubs::light_bodies`]) as hubs from fewer joints and
    /// the lightest first (`inv_mass`, per body, kg^-1; see [`hubs::find`]),
    /// with `options`: with the chain solve, the chains ([`chains`]) go out of the colours into
    /// chain groups; with clusters, the small islands into [`Cluster`]s.
    pub fn build_awake(
        width: usize,
        body_kinds: &[BodyKind],
        joint_bodies: &[(u32, u32)],
        joint_kinds: &[JointKind],
        limited: &[bool],
        (body_asleep, light, inv_mass): (&[bool], &[hubs::Light], &[f32]),
        options: ScheduleOptions,
    ) -> Schedule {
        assert!(width >= 1);
        assert_eq!(body_asleep.len(), body_kinds.len());
        let coloring = Coloring::build(body_kinds, joint_bodies);
        let islands = Islands::build(body_kinds, joint_bodies);
        let asleep: Vec<bool> = joint_bodies
            .iter()
            .map(|&(a, b)| body_asleep[a as usize] || body_asleep[b as usize])
            .collect();
        let driven = joint_bodies
            .iter()
            .filter_map(
                |&(a, b)| match (body_kinds[a as usize], body_kinds[b as usize]) {
                    (BodyKind::Kinematic, BodyKind::Dynamic) => Some((a, b)),
                    (BodyKind::Dynamic, BodyKind::Kinematic) => Some((b, a)),
                    _ => None,
                },
            )
            .collect();
        // Joints solved directly (hubs, then with the chain solve chains): in no batch.
        let mut direct = vec![false; joint_bodies.len()];
        // Hubs and chains take limited joints too (their limits in or out of the direct
        // solve as they are active).
        let awake: Vec<bool> = asleep.iter().map(|&a| !a).collect();
        let hubs = hubs::find(body_kinds, joint_bodies, &awake, (light, inv_mass));
        for &j in hubs.iter().flat_map(|h| &h.joints) {
            direct[j as usize] = true;
        }
        let (chain_groups, chain_joints) = if options.chain_solve {
            // Only hinges and ball joints make chains (see `chains::CHAIN_KINDS`).
            let eligible: Vec<bool> = (0..joint_bodies.len())
                .map(|j| awake[j] && !direct[j] && chains::CHAIN_KINDS.contains(&joint_kinds[j]))
                .collect();
            let found = chains::find(body_kinds, joint_bodies, &eligible);
            group_chains(width, found, joint_kinds, limited)
        } else {
            (Vec::new(), Vec::new())
        };
        for &j in &chain_joints {
            direct[j as usize] = true;
        }
        let (island_joints, island_ranges) = group_by_island(&islands, body_kinds, joint_bodies);
        let (cluster_of, cluster_count) = if options.clusters {
            assign_clusters(&island_joints, &island_ranges, &asleep, &direct)
        } else {
            (vec![SHARED; joint_bodies.len()], 0)
        };
        let colors_used = coloring.color_count();
        let mut shared_colors: Vec<Vec<u32>> = vec![Vec::new(); colors_used];
        let mut cluster_colors: Vec<Vec<Vec<u32>>> =
            vec![vec![Vec::new(); colors_used]; cluster_count];
        let mut overflow = Vec::new();
        let mut cluster_overflow: Vec<Vec<u32>> = vec![Vec::new(); cluster_count];
        for (j, &c) in coloring.color_of.iter().enumerate() {
            if asleep[j] || direct[j] {
                continue;
            }
            let k = cluster_of[j];
            match (k == SHARED, c == OVERFLOW) {
                (true, true) => overflow.push(j as u32),
                (true, false) => shared_colors[c as usize].push(j as u32),
                (false, true) => cluster_overflow[k as usize].push(j as u32),
                (false, false) => cluster_colors[k as usize][c as usize].push(j as u32),
            }
        }
        let mut packer = Packer {
            width,
            joint_kinds,
            limited,
            order: Vec::with_capacity(joint_bodies.len()),
            batches: Vec::new(),
        };
        let colors: Vec<Range<usize>> = shared_colors
            .into_iter()
            .map(|joints| packer.color(joints))
            .collect();
        let shared_overflow = overflow.len();
        let clusters = cluster_colors
            .into_iter()
            .zip(cluster_overflow)
            .map(|(per_color, own_overflow)| {
                let joints = per_color.iter().map(Vec::len).sum::<usize>() + own_overflow.len();
                let colors = per_color.into_iter().map(|j| packer.color(j)).collect();
                let start = overflow.len();
                overflow.extend(own_overflow);
                Cluster {
                    colors,
                    overflow: start..overflow.len(),
                    joints,
                }
            })
            .collect();
        let Packer { order, batches, .. } = packer;
        let mut serial_islands = Vec::new();
        let mut large = vec![false; joint_bodies.len()];
        for range in &island_ranges {
            if island_joints[range.clone()]
                .first()
                .is_some_and(|&j| asleep[j as usize])
            {
                continue;
            }
            if range.len() <= SERIAL_PROJECTION_MAX_JOINTS {
                serial_islands.push(range.clone());
            } else {
                for &j in &island_joints[range.clone()] {
                    large[j as usize] = true;
                }
            }
        }
        let mut projection_joints = Vec::new();
        let mut projection_colors = Vec::new();
        let mut by_color: Vec<Vec<u32>> = vec![Vec::new(); coloring.color_count()];
        let mut projection_overflow = Vec::new();
        for (j, &c) in coloring.color_of.iter().enumerate() {
            if !large[j] {
                continue;
            }
            if c == OVERFLOW {
                projection_overflow.push(j as u32);
            } else {
                by_color[c as usize].push(j as u32);
            }
        }
        for joints in by_color {
            let start = projection_joints.len();
            projection_joints.extend(joints);
            if projection_joints.len() > start {
                projection_colors.push(start..projection_joints.len());
            }
        }
        Schedule {
            width,
            coloring,
            order,
            batches,
            colors,
            overflow,
            shared_overflow,
            clusters,
            islands,
            island_joints,
            island_ranges,
            serial_islands,
            projection_joints,
            projection_colors,
            projection_overflow,
            driven,
            sleeping_joints: asleep.iter().filter(|&&x| x).count(),
            chain_groups,
            chain_joints,
            hubs,
            options,
        }
    }

    /// Joints at position `k` of chain group `g`'s chains, one per lane.
    pub fn chain_joints_at(&self, g: &ChainGroup, k: usize) -> &[u32] {
        &self.chain_joints[g.offsets[k] as usize..g.offsets[k + 1] as usize]
    }

    /// Joints of batch `b`.
    pub fn joints_of(&self, b: &Batch) -> &[u32] {
        &self.order[b.start as usize..(b.start + b.len) as usize]
    }

    /// Number of colours in use.
    pub fn color_count(&self) -> usize {
        self.colors.len()
    }

    /// Fraction of batch lanes that are padding, in `[0, 1)`.
    pub fn padding_fraction(&self) -> f64 {
        let lanes = self.batches.len() * self.width;
        if lanes == 0 {
            return 0.0;
        }
        1.0 - self.order.len() as f64 / lanes as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BodyKind::{Dynamic, Static};

    /// A chain: static anchor 0, links 1..=n, joint i between i and i + 1.
    fn chain(n: usize) -> (Vec<BodyKind>, Vec<(u32, u32)>) {
        let mut kinds = vec![Static];
        kinds.extend(std::iter::repeat_n(Dynamic, n));
        let joints = (0..n as u32).map(|i| (i, i + 1)).collect();
        (kinds, joints)
    }

    fn check_invariant(kinds: &[BodyKind], joints: &[(u32, u32)], s: &Schedule) {
        // Every colour range, shared or a cluster's: no dynamic body twice.
        let ranges = s
            .colors
            .iter()
            .chain(s.clusters.iter().flat_map(|c| &c.colors));
        for range in ranges {
            let mut seen = std::collections::HashSet::new();
            for b in &s.batches[range.clone()] {
                assert!(b.len as usize <= s.width && b.len > 0);
                for &j in s.joints_of(b) {
                    let (a, bb) = joints[j as usize];
                    for body in [a, bb] {
                        if kinds[body as usize] == Dynamic {
                            assert!(seen.insert(body), "body {body} twice in one colour");
                        }
                    }
                }
            }
        }
        // Clusters hold whole islands, none shared with another cluster or the shared part.
        let mut place = vec![None; joints.len()];
        for (k, c) in s.clusters.iter().enumerate() {
            assert!(c.joints > 0 && c.joints <= CLUSTER_MAX_JOINTS);
            assert_eq!(c.colors.len(), s.color_count());
            let own = c.colors.iter().flat_map(|r| &s.batches[r.clone()]);
            let mut count = 0;
            for j in own
                .flat_map(|b| s.joints_of(b))
                .chain(&s.overflow[c.overflow.clone()])
            {
                place[*j as usize] = Some(k);
                count += 1;
            }
            assert_eq!(count, c.joints);
        }
        for range in &s.island_ranges {
            let island = &s.island_joints[range.clone()];
            assert!(island
                .iter()
                .all(|&j| place[j as usize] == place[island[0] as usize]));
        }
        let hubs = s.hubs.iter().flat_map(|h| &h.joints);
        let mut all: Vec<u32> = s
            .order
            .iter()
            .chain(&s.overflow)
            .chain(hubs)
            .copied()
            .collect();
        all.sort();
        assert_eq!(all, (0..joints.len() as u32).collect::<Vec<_>>());
    }

    /// The schedule (8 lanes, default options) of joints all of type `kind`, none limited.
    fn uniform(kinds: &[BodyKind], joints: &[(u32, u32)], kind: JointKind) -> Schedule {
        let n = joints.len();
        Schedule::build(8, kinds, joints, &vec![kind; n], &vec![false; n])
    }

    /// `count` chains of `links` links, each from its own static anchor.
    fn chains(count: usize, links: usize) -> (Vec<BodyKind>, Vec<(u32, u32)>) {
        let (mut kinds, mut joints) = (Vec::new(), Vec::new());
        for _ in 0..count {
            let (k, j) = chain(links);
            let base = kinds.len() as u32;
            kinds.extend(k);
            joints.extend(j.into_iter().map(|(a, b)| (a + base, b + base)));
        }
        (kinds, joints)
    }

    #[test]
    fn small_islands_are_packed_into_clusters_large_ones_shared() {
        // 100 chains of 100 joints (the benchmark's chain scene): 10,000 small-island joints,
        // clusters of about 10,000 / 8 = 1,250, capped at 1,024: ten clusters of ten chains.
        let (kinds, joints) = chains(100, 100);
        let n = joints.len();
        let revolute = vec![JointKind::Revolute; n];
        let s = Schedule::build(8, &kinds, &joints, &revolute, &vec![false; n]);
        assert_eq!(s.clusters.len(), 10);
        assert!(s.clusters.iter().all(|c| c.joints == 1000));
        assert!(s.colors.iter().all(Range::is_empty));
        assert_eq!((s.shared_overflow, s.color_count()), (0, 2));
        check_invariant(&kinds, &joints, &s);
        // Off: everything in the shared colours, the same batches' joints.
        let none = vec![false; kinds.len()];
        let options = ScheduleOptions {
            clusters: false,
            ..Default::default()
        };
        let off = Schedule::build_awake(
            8,
            &kinds,
            &joints,
            &revolute,
            &vec![false; n],
            (
                &none,
                &vec![hubs::Light::No; kinds.len()],
                &vec![1.0; kinds.len()],
            ),
            options,
        );
        assert!(off.clusters.is_empty());
        assert_eq!(off.colors.iter().map(|r| r.len()).sum::<usize>(), 1250);
        check_invariant(&kinds, &joints, &off);

        // One island above the cap stays shared; three small ones make one cluster of at
        // least CLUSTER_MIN_JOINTS (their 60 joints / 8 is below it).
        let (mut kinds, mut joints) = chain(CLUSTER_MAX_JOINTS + 1);
        let (k, j) = chains(3, 20);
        let base = kinds.len() as u32;
        kinds.extend(k);
        joints.extend(j.into_iter().map(|(a, b)| (a + base, b + base)));
        let s = uniform(&kinds, &joints, JointKind::Spherical);
        assert_eq!(s.clusters.len(), 1);
        assert_eq!(s.clusters[0].joints, 60);
        assert_eq!(
            s.colors
                .iter()
                .map(|r| s.batches[r.clone()]
                    .iter()
                    .map(|b| b.len as usize)
                    .sum::<usize>())
                .sum::<usize>(),
            CLUSTER_MAX_JOINTS + 1
        );
        check_invariant(&kinds, &joints, &s);
    }

    #[test]
    fn a_chain_takes_two_colours_and_no_colour_shares_a_dynamic_body() {
        let (kinds, joints) = chain(100);
        let s = uniform(&kinds, &joints, JointKind::Revolute);
        assert_eq!(s.color_count(), 2);
        assert!(s.overflow.is_empty());
        check_invariant(&kinds, &joints, &s);
    }

    #[test]
    fn large_islands_are_projected_by_colours_small_ones_serially() {
        let (mut kinds, mut joints) = chain(SERIAL_PROJECTION_MAX_JOINTS + 1);
        // A second, small chain.
        let base = kinds.len() as u32;
        kinds.push(Static);
        kinds.extend(std::iter::repeat_n(Dynamic, 3));
        joints.extend((0..3).map(|i| (base + i, base + i + 1)));
        let s = uniform(&kinds, &joints, JointKind::Revolute);
        assert_eq!(s.serial_islands.len(), 1);
        assert_eq!(s.serial_islands[0].len(), 3);
        assert_eq!(s.projection_colors.len(), 2);
        assert_eq!(s.projection_joints.len(), SERIAL_PROJECTION_MAX_JOINTS + 1);
        for range in &s.projection_colors {
            let c = s.coloring.color_of[s.projection_joints[range.start] as usize];
            assert!(s.projection_joints[range.clone()]
                .iter()
                .all(|&j| s.coloring.color_of[j as usize] == c));
        }
    }

    #[test]
    fn a_hub_body_overflows_past_the_reserved_colours() {
        // Two dynamic bodies joined by MAX_COLORS + 5 hinges (a hub takes one joint per
        // other body, so no hub): the last 5 cannot get a colour.
        let spokes = MAX_COLORS + 5;
        let kinds = vec![Dynamic; 2];
        let joints = vec![(0, 1); spokes];
        let revolute = vec![JointKind::Revolute; spokes];
        let s = Schedule::build(8, &kinds, &joints, &revolute, &vec![true; spokes]);
        assert!(s.hubs.is_empty());
        assert_eq!(
            s.overflow,
            (MAX_COLORS as u32..spokes as u32).collect::<Vec<_>>()
        );
        // The hub's island is small: its overflow joints are its cluster's.
        assert_eq!((s.shared_overflow, s.clusters.len()), (0, 1));
        assert_eq!(s.clusters[0].overflow, 0..5);
        check_invariant(&kinds, &joints, &s);
        // A hub with as many spokes, limited or not, to distinct bodies: the hub solve takes
        // them all, none is left to colour.
        let mut kinds = vec![Dynamic];
        kinds.extend(std::iter::repeat_n(Dynamic, spokes));
        let joints: Vec<(u32, u32)> = (1..=spokes as u32).map(|i| (0, i)).collect();
        let limited: Vec<bool> = (0..spokes).map(|j| j % 2 == 0).collect();
        let s = Schedule::build(8, &kinds, &joints, &revolute, &limited);
        assert_eq!(s.hubs.len(), 1);
        assert_eq!(s.hubs[0].joints.len(), spokes);
        assert!(s.overflow.is_empty() && s.batches.is_empty() && s.clusters.is_empty());
        check_invariant(&kinds, &joints, &s);
        let s = uniform(&kinds, &joints, JointKind::Spherical);
        assert_eq!(s.hubs.len(), 1);
        assert_eq!(s.hubs[0].joints.len(), spokes);
        assert!(s.overflow.is_empty() && s.batches.is_empty() && s.clusters.is_empty());
        check_invariant(&kinds, &joints, &s);
    }

    #[test]
    fn static_bodies_do_not_conflict() {
        // Ten pendulums hanging from one static body: one colour.
        let mut kinds = vec![Static];
        kinds.extend(std::iter::repeat_n(Dynamic, 10));
        let joints: Vec<(u32, u32)> = (1..=10).map(|i| (0, i)).collect();
        let s = Schedule::build(8, &kinds, &joints, &[JointKind::Revolute; 10], &[false; 10]);
        assert_eq!(s.color_count(), 1);
        assert_eq!(s.batches.len(), 2);
        assert_eq!((s.batches[0].len, s.batches[1].len), (8, 2));
    }

    #[test]
    fn signatures_never_share_a_batch() {
        let (kinds, joints) = chain(40);
        let kinds_j: Vec<JointKind> = (0..40)
            .map(|i| {
                if i % 3 == 0 {
                    JointKind::Spherical
                } else {
                    JointKind::Revolute
                }
            })
            .collect();
        let limited: Vec<bool> = (0..40).map(|i| i % 5 == 0).collect();
        let s = Schedule::build(8, &kinds, &joints, &kinds_j, &limited);
        for b in &s.batches {
            for &j in s.joints_of(b) {
                assert_eq!(kinds_j[j as usize], b.kind);
                assert_eq!(limited[j as usize], b.limited);
            }
        }
        check_invariant(&kinds, &joints, &s);
        assert_eq!(s.island_ranges, vec![0..40]);
        assert_eq!(s.island_joints, (0..40).collect::<Vec<u32>>());
        // The coloring does not depend on the width.
        let s1 = Schedule::build(1, &kinds, &joints, &kinds_j, &limited);
        assert_eq!(s1.coloring, s.coloring);
    }
}
