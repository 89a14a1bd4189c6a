//! How a product runs on the device, in host arithmetic alone: the
//! transform's length for a product (2^k, 3 * 2^k or 5 * 2^k points, two
//! 32-bit coefficients a limb over three primes, or for products made in
//! one convolution a limb a coefficient over the five primes of the wide
//! sets), the plan (one transform of each operand; the long
//! operand in chunks against one transform of the short one; both operands
//! in pieces past the longest transform, their products summed in the
//! transform domain within the exactness bound), the passes a transform's
//! stages are grouped into, and the device memory and traffic a product
//! takes.

use crate::gpu::linear::LINEAR_TILE;

/// Coefficients per limb (32 bits each), outside the wide sets.
pub(super) const COEFS_PER_LIMB: usize = 2;
/// Primes, one transform each (NTT_PRIMES), outside the wide sets.
pub(super) const PRIMES: usize = 3;
/// The wide sets' primes (NTT_WIDE_PRIMES), with a limb a coefficient.
pub(super) const WIDE_PRIMES: usize = 5;
/// Longest wide transforms (cuda/ntt.cu): 2^23 and 3 * 2^23 on the first
/// wide set, 5 * 2^22 on the second.
pub(super) const WIDE_MAX_LOG: u32 = 23;
pub(super) const WIDE_MAX_LOG5: u32 = 22;
/// Products in one convolution of this many limbs (un + vn; a chunk's; rn
/// mod B^rn - 1) and more take the wide sets where they have a transform
/// (`base_plan`, `cyclic_shape_from`; CUGMP_NTT_WIDE sets it).
pub(super) const WIDE_FROM: usize = 1 << 12;
/// Whole products on transforms of this many points and more (radix
/// blocks included) run each prime's passes on lanes of their own
/// (src/gpu/ntt/product.rs, `transforms_in_lanes`; CUGMP_NTT_LANES sets
/// it). At 2^19 points the product was slower with them (0.142 and 0.167
/// ms against 0.133 and 0.137); from 3 * 2^18 they gain (0.164 and 0.174
/// against 0.179 and 0.180 at 3 * 2^18, 0.184 against 0.197 and 0.199 at
/// 2^20; RESULTS.md, "Primes on lanes").
pub(super) const LANES_FROM: usize = 3 << 18;
/// Lanes a queue keeps: one a prime of the wide sets.
pub(in crate::gpu) const LANES: usize = WIDE_PRIMES;
/// Longest transform: 3 * 2^25 (NTT_MAX_LOG: 3 * 2^25 divides every p - 1).
pub(super) const MAX_LOG: u32 = 25;
/// Longest transform of radix 5: 5 * 2^23 (5 * 2^23 divides every q - 1 of
/// the second set of primes, cuda/ntt.cu).
pub(super) const MAX_LOG5: u32 = 23;

/// A transform's length: `radix` (1, 3 or 5) blocks of 2^log_n, over the
/// three primes of a narrow set (32-bit coefficients) or the five of a
/// wide one (`wide`: 64-bit coefficients, whole limbs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub log_n: u32,
    pub radix: u32,
    pub wide: bool,
}

impl Shape {
    /// Points of one prime's transform.
    pub fn len(self) -> usize {
        (self.radix as usize) << self.log_n
    }

    /// Primes, one transform each.
    pub fn primes(self) -> usize {
        if self.wide { WIDE_PRIMES } else { PRIMES }
    }

    /// log2 of the tile of this transform's passes: `tile_log`, but in the
    /// wide sets at least 2^12 elements (WIDE_MIN_TILE_LOG).
    pub fn tile_log(self) -> u32 {
        let t = tile_log(self.log_n);
        if self.wide { t.max(WIDE_MIN_TILE_LOG).min(self.log_n) } else { t }
    }

    /// This transform's passes (`passes` with this shape's tile).
    pub fn passes(self) -> Vec<(u32, u32)> {
        passes_in_tiles(self.log_n, self.tile_log())
    }

    /// Coefficients a limb.
    pub fn coefs_per_limb(self) -> usize {
        if self.wide { 1 } else { COEFS_PER_LIMB }
    }
}

/// The shortest transform for a product of `limbs` limbs with no
/// wrap-around: 2^k, or 3 * 2^k where that is shorter (a third of all
/// lengths gain a quarter).
pub fn transform_shape(limbs: usize) -> Shape {
    let need = (COEFS_PER_LIMB * limbs).max(2);
    let pow2 = Shape { log_n: need.next_power_of_two().trailing_zeros(), radix: 1, wide: false };
    let three = Shape { log_n: need.div_ceil(3).next_power_of_two().trailing_zeros(), radix: 3, wide: false };
    if three.len() < pow2.len() || pow2.log_n > MAX_LOG {
        three
    } else {
        pow2
    }
}

/// The shortest transform for a product of `limbs` limbs made in one
/// convolution (`Plan::Whole`, a chunk of `Plan::Chunked`, a cyclic
/// product): `transform_shape`, or 5 * 2^k where that is shorter (lengths
/// from 2^k to 1.25 * 2^k coefficients take 1.25 * 2^k points instead of
/// 1.5 * 2^k). Radix 5 takes the second set of primes (cuda/ntt.cu), whose
/// bound holds for one product's coefficients, not for `Plan::Pieces`'
/// sums of them (`pairs_a_sum`); those, and the small products' graphs,
/// keep `transform_shape`.
pub fn product_shape(limbs: usize) -> Shape {
    let shape = transform_shape(limbs);
    let need = (COEFS_PER_LIMB * limbs).max(2);
    let five = Shape { log_n: need.div_ceil(5).next_power_of_two().trailing_zeros(), radix: 5, wide: false };
    // The radix-5 step needs at least one column pair (the combine's).
    if five.len() < shape.len() && (1..=MAX_LOG5).contains(&five.log_n) {
        five
    } else {
        shape
    }
}

/// The shortest transform of the wide sets for a product of `limbs` limbs
/// made in one convolution (a limb a coefficient, no wrap-around): 2^k or 3 * 2^k up to
/// WIDE_MAX_LOG, 5 * 2^k up to WIDE_MAX_LOG5, or None past them. Exact
/// (cuda/ntt.cu): a coefficient is below m 2^128, m the shorter operand's
/// limbs, at most half the transform, and each wide set's product of primes
/// passes 2^128 times its longest transform (`wide_bound_holds`).
pub fn wide_shape(limbs: usize) -> Option<Shape> {
    let need = limbs.max(2);
    [(1, WIDE_MAX_LOG), (3, WIDE_MAX_LOG), (5, WIDE_MAX_LOG5)]
        .into_iter()
        .filter_map(|(radix, max)| {
            let log_n = need.div_ceil(radix).next_power_of_two().trailing_zeros();
            // The combine takes column pairs: 2^log_n >= 2.
            (1..=max).contains(&log_n).then_some(Shape { log_n, radix: radix as u32, wide: true })
        })
        .min_by_key(|s| s.len())
}

/// The transform for a product mod B^rn - 1 computed as one cyclic
/// convolution: exactly 2 rn points (2^k, 3 * 2^k or 5 * 2^k), or None when
/// 2 rn is not such a length or is too long.
pub fn cyclic_shape(rn: usize) -> Option<Shape> {
    let shape = product_shape(rn);
    (shape.len() == COEFS_PER_LIMB * rn && shape.log_n <= MAX_LOG).then_some(shape)
}

/// `cyclic_shape`, on the wide sets where rn >= `wide_from` and they have
/// a transform of exactly rn points (a limb a coefficient). Exact: a
/// coefficient of the cyclic convolution sums at most min(un, vn) <= rn
/// products below 2^128, and each wide set's product of primes passes
/// 2^128 times its longest transform (`wide_bound_holds`).
pub fn cyclic_shape_from(rn: usize, wide_from: usize) -> Option<Shape> {
    let wide = wide_shape(rn).filter(|s| s.len() == rn && rn >= wide_from);
    wide.or_else(|| cyclic_shape(rn))
}

/// The smallest rn' >= rn with a `cyclic_shape` (2^a, 3 * 2^a or 5 * 2^a
/// limbs), or None where that is over 1.5 rn (just below the longest
/// transform, where 2^25 limbs would take 2^26 points) or past the longest
/// transform.
pub fn cyclic_size(rn: usize) -> Option<usize> {
    let shape = product_shape(rn);
    let size = shape.len() / COEFS_PER_LIMB;
    (shape.log_n <= MAX_LOG && 2 * size <= 3 * rn).then_some(size)
}

/// Device bytes of a product mod B^rn - 1 by `cyclic_shape`: two
/// transforms, the folded limbs (one more for the carry out) and their
/// carries, the add kernel's tile states.
pub(super) fn cyclic_device_bytes(shape: Shape, rn: usize) -> usize {
    2 * shape.primes() * 4 * shape.len() + 16 * rn + 8 + 4 * rn.div_ceil(1024)
}

/// How a product runs on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// One transform of each operand, of the whole product's length.
    Whole(Shape),
    /// The long operand in chunks of `chunk` limbs, each transformed and
    /// multiplied by one transform of the short operand (made once), the
    /// chunk products added into the result at their offsets.
    Chunked { shape: Shape, chunk: usize },
    /// Past the longest transform for both: both operands in pieces of
    /// `piece` limbs (the last of each may be shorter), each piece's forward
    /// transform of `shape` made once and kept; the products of pieces i
    /// and j summed pointwise for each i + j (`sums`: at most `pairs_a_sum`
    /// of them a sum), one inverse transform a sum, its limbs added into
    /// the result at i + j pieces.
    Pieces { shape: Shape, piece: usize },
}

/// Chunk transforms hold at least this many limbs (2^18 points or more), so
/// that a chunk's launches stay small next to its work.
const MIN_CHUNK_LIMBS: usize = 1 << 17;
/// A chunk's fixed cost (its seven launches, about 30 us) in the units of
/// `transform_cost` (a 2^20-point transform, about 0.15 ms on the H200, is
/// 2^20 * 20 of them). An estimate: not yet measured.
const CHUNK_OVERHEAD: f64 = 4e6;

/// The work of one transform (all its primes), in points times stages of
/// three primes' transforms.
fn transform_cost(shape: Shape) -> f64 {
    let n = shape.len() as f64;
    n * n.log2() * shape.primes() as f64 / PRIMES as f64
}

/// `product_plan_from` with the default WIDE_FROM.
#[cfg(test)]
pub fn product_plan(un: usize, vn: usize) -> Option<Plan> {
    product_plan_from(un, vn, WIDE_FROM)
}

/// The cheapest plan for a product of `un` x `vn` limbs (by
/// `transform_cost`), whole products and chunks of `wide_from` limbs and
/// more on the wide sets where they have a transform (CUGMP_NTT_WIDE;
/// `usize::MAX`: never). A product of two operands of very different lengths (GMP's
/// divisions and radix conversions make many) goes in chunks: per chunk two
/// transforms of a length fit to the short operand, instead of three of the
/// whole product's length. A product for which neither has a transform long
/// enough goes in pieces (`Plan::Pieces`).
pub fn product_plan_from(un: usize, vn: usize, wide_from: usize) -> Option<Plan> {
    if let Some((_, plan)) = base_plan(un, vn, wide_from) {
        return Some(plan);
    }
    let long = un.max(vn);
    let fewest = long.div_ceil(MAX_PIECE_LIMBS);
    let mut best: Option<(f64, Plan)> = None;
    // More pieces than the fewest may take a shorter transform each (the
    // lengths go in steps of 4/3 and 3/2).
    for count in fewest..fewest + 4 {
        let piece = long.div_ceil(count);
        let Some(plan) = pieces_of(piece) else { continue };
        let cost = pieces_cost(un, vn, plan);
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, plan));
        }
    }
    best.map(|(_, plan)| plan)
}

/// `Plan::Pieces` with pieces of `piece` limbs (None past the longest
/// transform). CUGMP_NTT_PIECE takes it for any product whose shorter
/// operand is longer than a piece (src/gpu/ntt/product.rs).
pub fn pieces_of(piece: usize) -> Option<Plan> {
    // A sum of products of two pieces may take one limb more than one.
    let shape = transform_shape(2 * piece + 1);
    (piece >= 1 && shape.log_n <= MAX_LOG).then_some(Plan::Pieces { shape, piece })
}

/// Longest piece of `Plan::Pieces`: a sum of products of two is 4 * piece
/// + 2 coefficients, within the longest transform.
const MAX_PIECE_LIMBS: usize = (3 << (MAX_LOG - 2)) - 1;

/// Most products of pieces one sum adds (cuda/ntt.cu, NTT_MAX_PAIRS: the
/// sum kernel's pointers).
pub(super) const MAX_PAIRS: usize = 8;

/// How many products of pieces of `piece` limbs one sum may add and stay
/// exact, at most MAX_PAIRS. A coefficient of one such product is a sum of
/// at most 2 * piece products of two coefficients below 2^32; the CRT gives
/// back a coefficient below P = p0 p1 p2 (cuda/ntt.cu), so a sum of w of
/// them is exact while w * 2 * piece * (2^32 - 1)^2 < P: 8 at the longest
/// piece, 3 * 2^23 - 1 limbs.
pub(super) fn pairs_a_sum(piece: usize) -> usize {
    const P: u128 = 1_811_939_329u128 * 2_013_265_921 * 2_113_929_217;
    let one = 2 * piece as u128 * (u32::MAX as u128).pow(2);
    ((P - 1) / one).min(MAX_PAIRS as u128) as usize
}

/// A product of pieces in a sum: pieces `i` and `j` (of the first and the
/// second operand), counted `twice` (a square's i < j stands for j, i too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    pub i: usize,
    pub j: usize,
    pub twice: bool,
}

/// The sums of `Plan::Pieces` for operands of `pa` and `pb` pieces (`pb`
/// ignored for a square): (i + j, the pairs), every pair i, j once, in
/// order of i + j, each sum at most MAX_PAIRS pairs and `pairs_a_sum`
/// products (a pair counted twice is two).
pub fn sums(pa: usize, pb: usize, square: bool, piece: usize) -> Vec<(usize, Vec<Pair>)> {
    let pb = if square { pa } else { pb };
    let most = pairs_a_sum(piece);
    let mut out: Vec<(usize, Vec<Pair>)> = Vec::new();
    for k in 0..pa + pb - 1 {
        let mut weight = most;
        for i in k.saturating_sub(pb - 1)..=k.min(pa - 1) {
            let j = k - i;
            if square && i > j {
                continue;
            }
            let pair = Pair { i, j, twice: square && i < j };
            let w = 1 + pair.twice as usize;
            if weight + w > most || out.last().is_none_or(|(_, p)| p.len() == MAX_PAIRS) {
                out.push((k, Vec::new()));
                weight = 0;
            }
            weight += w;
            if let Some((_, p)) = out.last_mut() {
                p.push(pair);
            }
        }
    }
    out
}

/// Where sum `pairs` (of the products of pieces i + j = k) of
/// `Plan::Pieces` goes in the `total`-limb result, pieces of `piece` limbs
/// whose lengths are `la` and `lb`: (its offset, its limbs, the limbs from
/// the offset its add spans). A sum of products of x-limb numbers may take
/// x + 1 limbs (the transform has room: `pieces_of`), never more than the
/// result has above the offset. The result so far is below
/// B^(k piece + 2 piece + 1) after the sums of i + j <= k (each product of
/// pieces is below B^(2 piece), there are fewer than B / 2 of them for each
/// i + j, and the earlier ones sit a piece and more below), so the add
/// spans 2 piece + 1 limbs at most, carry out zero; and the whole product
/// is below B^total, so nothing passes the top.
pub fn sum_place(k: usize, pairs: &[Pair], piece: usize, la: &[usize], lb: &[usize], total: usize) -> (usize, usize, usize) {
    let offset = k * piece;
    let limbs = pairs.iter().map(|p| la[p.i] + lb[p.j] + 1).max().unwrap_or(0).min(total - offset);
    (offset, limbs, (total - offset).min(2 * piece + 1))
}

/// The cost of `plan` (`Plan::Pieces`) for `un` x `vn` limbs in
/// `transform_cost` units: a forward transform a piece and an inverse a
/// sum, each pair read as about a tenth of a transform (two reads of a
/// transform's words against a transform's passes, which are bound by
/// their instructions: RESULTS.md, "Transform passes"; an estimate, not
/// measured apart).
fn pieces_cost(un: usize, vn: usize, plan: Plan) -> f64 {
    let Plan::Pieces { shape, piece } = plan else { return f64::INFINITY };
    let (pa, pb) = (un.div_ceil(piece), vn.div_ceil(piece));
    let sums = sums(pa, pb, false, piece);
    let pairs: usize = sums.iter().map(|(_, p)| p.len()).sum();
    ((pa + pb + sums.len()) as f64 + pairs as f64 / 10.0) * transform_cost(shape)
}

/// `product_plan_from` without `Plan::Pieces`, with its cost: None when no
/// transform is long enough. A whole product on the wide sets costs 5/6 of
/// one on the narrow ones wherever both have a transform (the same shape
/// at half the points, five primes for three).
pub(super) fn base_plan(un: usize, vn: usize, wide_from: usize) -> Option<(f64, Plan)> {
    let (long, short) = (un.max(vn), un.min(vn));
    let whole = product_shape(un + vn);
    let mut best = (whole.log_n <= MAX_LOG).then(|| (3.0 * transform_cost(whole), Plan::Whole(whole)));
    if let Some(wide) = wide_shape(un + vn).filter(|_| un + vn >= wide_from) {
        let cost = 3.0 * transform_cost(wide);
        if best.is_none_or(|(c, _)| cost < c) {
            best = Some((cost, Plan::Whole(wide)));
        }
    }
    if long >= 2 * short {
        for k in [2, 4, 8, 16, 32] {
            // A chunk product is a whole product: the wide sets may take it.
            let limbs = (k * short).max(MIN_CHUNK_LIMBS);
            let wide = wide_shape(limbs).filter(|_| limbs >= wide_from);
            for shape in [Some(product_shape(limbs)), wide].into_iter().flatten() {
                let chunk = (shape.len() / shape.coefs_per_limb()).saturating_sub(short);
                if shape.log_n > MAX_LOG || chunk == 0 || chunk >= long {
                    continue;
                }
                let chunks = long.div_ceil(chunk);
                let cost = (1 + 2 * chunks) as f64 * transform_cost(shape) + chunks as f64 * CHUNK_OVERHEAD;
                if best.is_none_or(|(c, _)| cost < c) {
                    best = Some((cost, Plan::Chunked { shape, chunk }));
                }
            }
        }
    }
    best
}

/// Device bytes one product of `un` x `vn` limbs (a square: `squaring`)
/// needs by `plan`.
pub fn device_bytes(plan: Plan, un: usize, vn: usize, squaring: bool) -> usize {
    let element = match plan {
        Plan::Whole(shape) | Plan::Chunked { shape, .. } | Plan::Pieces { shape, .. } => shape.primes() * 4,
    };
    // The add kernel's tile states, for the carries.
    let states = 4 * (un + vn).div_ceil(1024);
    match plan {
        // Two transforms, the folded limbs and their carries.
        Plan::Whole(shape) => 2 * element * shape.len() + 16 * (un + vn) + states,
        // The short operand's transform and a chunk's, a chunk product's
        // limbs and carries, the result.
        Plan::Chunked { shape, chunk } => 2 * element * shape.len() + 16 * (chunk + un.min(vn)) + 8 * (un + vn) + states,
        // Every piece's transform and a sum's, a sum's limbs and carries,
        // the result.
        Plan::Pieces { shape, piece } => {
            let pieces = un.div_ceil(piece) + if squaring { 0 } else { vn.div_ceil(piece) };
            (pieces + 1) * element * shape.len() + 16 * (2 * piece + 1) + 8 * (un + vn) + states
        }
    }
}

/// Largest tile of cugmp_ntt_pass: 2^14 elements, 72 KiB of shared memory
/// (two passes for every transform up to the longest; 2^13 took three at 2^25).
pub(crate) const TILE_LOG: u32 = 14;

/// Shared memory of a pass's block with tiles of 2^log_t elements, their
/// words, and 1/8 more where the pass has no twist (`padded`, log_s = 0:
/// such a tile is padded against bank conflicts; cuda/ntt_pass.cuh,
/// `tile_word` and NTT_TILE_WORDS).
pub(crate) fn tile_bytes(log_t: u32, padded: bool) -> u32 {
    let t = 1u32 << log_t;
    4 * (t + if padded { t / 8 } else { 0 })
}
/// The stage roots' table has 2^ROOT_LOG words a direction, roots of order
/// up to 2^ROOT_LOG by level (NTT_ROOT_LOG, NTT_ROOTS).
pub(super) const ROOT_LOG: u32 = 14;

/// Tile (log2 of the elements a block holds) for a transform of 2^log_n:
/// the largest, except that a small transform takes smaller tiles so each
/// pass has at least 2^6 blocks a prime (3 * 64 blocks for the H200's 132
/// SMs: with 2^14-element tiles a 10^5-limb product had 48 blocks a pass and
/// took 0.233 ms against 0.197 ms with 96), but never below 2^10 (then more
/// passes would cost more launches than the blocks gain). Up to 2^12
/// points one pass takes the whole transform: a small product's time is
/// its chain of launches, not its work (products of 512 x 512 and 1024 x
/// 1024 limbs end to end 0.036 to 0.045 ms against 0.045 to 0.051 with two
/// passes; at 2^13 points one pass lost, 0.059 to 0.065 against 0.053 to
/// 0.055; RESULTS.md, "Small products").
pub fn tile_log(log_n: u32) -> u32 {
    if log_n <= SINGLE_PASS_LOG {
        return log_n;
    }
    log_n.saturating_sub(6).clamp(10, TILE_LOG).min(log_n)
}

/// Smallest tile of the wide sets' passes (`Shape::tile_log`): with
/// `tile_log`'s 2^11 elements (512 threads of 4) a pass takes its elements
/// one at a time, not in batches (cuda/ntt_pass.cuh), and a 3 * 10^5-limb
/// product, 5 * 2^17 points on the wide sets, took 0.305 ms against 0.203
/// on the narrow ones (RESULTS.md, "The wide sets"). Five primes give a
/// pass of larger tiles blocks enough.
const WIDE_MIN_TILE_LOG: u32 = 12;

/// Transforms up to 2^SINGLE_PASS_LOG points run as one pass (`tile_log`).
const SINGLE_PASS_LOG: u32 = 12;

/// The forward transform's passes for length 2^log_n, in order, as
/// (log2 of the smallest span, stages). The inverse runs them in reverse.
/// The last pass (span 1 up: whole contiguous groups) takes up to a whole
/// tile's stages; every other pass at most 2^(tile - 2) elements a group, so
/// a block takes at least 4 consecutive residues: whole 32-byte sectors.
pub fn passes(log_n: u32) -> Vec<(u32, u32)> {
    passes_in_tiles(log_n, tile_log(log_n))
}

/// Whether a transform of 2^log_n points is one pass (`passes` has one
/// entry: its tile holds it whole), without building the list.
pub(super) fn one_pass(log_n: u32) -> bool {
    tile_log(log_n) == log_n
}

/// Threads of a pass's block for tiles of 2^log_t elements: a quarter of the
/// tile, 32 to 512 (cuda/ntt_pass.cuh's ntt_group_log sizes a step's groups by
/// it; `__launch_bounds__(512, 3)` there).
pub(super) fn pass_threads(log_t: u32) -> u32 {
    ((1u32 << log_t) / 4).clamp(32, 512)
}

/// Stages a step of a pass takes in registers (NTT_GROUP_LOG, cuda/ntt_pass.cuh):
/// a pass of k stages makes ceil(k / 3) steps, each a trip through shared
/// memory with its addresses, roots and barrier.
const STEP_STAGES: u32 = 3;

/// `passes` with tiles of 2^log_t elements: as few passes as the tile
/// allows, the last one (span 1 up: whole contiguous groups) up to a whole
/// tile's stages, every other one at most 2^(tile - 2) elements a group (so
/// a block takes at least 4 consecutive residues), the stages split evenly.
/// Where a shorter last pass lets the passes make fewer steps
/// (STEP_STAGES), with every other pass at most 2^(tile - 3) elements a
/// group (a block's rows still whole 32-byte sectors), that split instead:
/// at 2^21 points 9 + 12 stages, seven steps, where 7 + 14 made eight
/// (RESULTS.md, "Steps of the passes").
pub(super) fn passes_in_tiles(log_n: u32, log_t: u32) -> Vec<(u32, u32)> {
    let most_last = log_n.min(log_t);
    // (A transform of one tile or less has no other pass.)
    let rest = log_n - most_last;
    let count = if rest == 0 { 0 } else { rest.div_ceil(log_t - 2) };
    let steps = |ks: &[u32]| ks.iter().map(|k| k.div_ceil(STEP_STAGES)).sum::<u32>();
    // `top` stages over `count` passes of at most `most` each, the larger
    // first: evenly, or (two passes) the split with the fewest steps.
    let split = |top: u32, most: u32| -> Option<Vec<u32>> {
        if top < count || top > count * most {
            return None;
        }
        let even: Vec<u32> = (0..count).map(|i| (top + count - 1 - i) / count).collect();
        if count != 2 {
            return Some(even);
        }
        let first = (top.saturating_sub(most).max(1)..=most.min(top - 1)).min_by_key(|&k| (steps(&[k, top - k]), k.abs_diff(top - k)))?;
        let pair = vec![first.max(top - first), first.min(top - first)];
        Some(if steps(&pair) < steps(&even) { pair } else { even })
    };
    let mut last = most_last;
    let mut tops = split(rest, log_t - 2).unwrap_or_default();
    // A pass above the last spans at least 4 (log_s >= 2).
    for shorter in (2..most_last).rev().filter(|_| count > 0) {
        if let Some(other) = split(log_n - shorter, log_t - 3) {
            if steps(&other) + steps(&[shorter]) < steps(&tops) + steps(&[last]) {
                (last, tops) = (shorter, other);
            }
        }
    }
    let mut out = Vec::new();
    let mut span_log = log_n;
    for k in tops {
        span_log -= k;
        out.push((span_log, k));
    }
    out.push((0, last));
    out
}

/// Largest product one transform allows (cuda/ntt.cu): 3 * 2^25 >= 2 * limbs.
#[cfg(test)]
const MAX_PRODUCT_LIMBS: usize = 3 << (MAX_LOG - 1);

/// Whether a product (not mod B^n - 1) on `shape` goes to limbs in one
/// kernel, its carries with its CRT (cuda/ntt.cu,
/// cugmp_ntt_combine_wide_carry; src/gpu/ntt/transform.rs, `to_limbs_wide`):
/// the wide sets' transforms of 2^k points, in whole tiles of the add
/// kernel's (LINEAR_TILE; from 2^11 points, so from WIDE_FROM).
pub(super) fn carries_in_combine(shape: Shape) -> bool {
    shape.wide && shape.radix == 1 && shape.len() % LINEAR_TILE == 0
}

/// Device memory traffic of one product (un x vn limbs, or a square, made
/// whole; `wide_from` as in `product_plan_from`), in bytes, as the kernels
/// are written now: each pass reads and writes the whole transform once,
/// except that the first forward pass reads limbs (twiddle-table reads,
/// cache hits, not counted). For reporting against the memory bandwidth.
pub fn bytes_moved(un: usize, vn: usize, squaring: bool, wide_from: usize) -> u64 {
    let shape = match base_plan(un, vn, wide_from) {
        Some((_, Plan::Whole(shape))) => shape,
        _ => product_shape(un + vn),
    };
    let n = shape.len() as u64;
    let inverse_passes = shape.passes().len() as u64;
    // Going forward the radix-3 or radix-5 step is one more pass, and it cuts
    // the limbs.
    let later_passes = inverse_passes - 1 + (shape.radix != 1) as u64;
    // One element: a coefficient's residues.
    let e = 4 * shape.primes() as u64;
    let forward = |limbs: usize| 8 * limbs as u64 + e * n + later_passes * 2 * e * n;
    let forwards = if squaring { forward(un) } else { forward(un) + forward(vn) };
    // The turn (a transform's last forward pass, the pointwise product and
    // the inverse's first pass in one) also reads the other operand's
    // transform (none when squaring), and saves one pass's read and write.
    let pointwise = if squaring { 0 } else { e * n };
    let inverse = (inverse_passes - 1) * 2 * e * n;
    // Coefficients in, limbs and carries out; the inverse's radix-3 or
    // radix-5 step is in the same kernel. Then the add kernel's carries:
    // both in, the product out. (Where the combine makes the product with
    // its carries, `carries_in_combine`, the product alone.)
    let out = if carries_in_combine(shape) {
        8 * (un + vn) as u64
    } else {
        16 * (un + vn) as u64 + 24 * (un + vn) as u64
    };
    forwards + pointwise + inverse + e * n + out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_cover_every_stage_once() {
        for log_n in 1..=MAX_LOG {
            let plan = passes(log_n);
            let log_t = tile_log(log_n);
            assert!(log_t <= log_n && log_t <= TILE_LOG && (log_t >= 10 || log_t == log_n));
            // Spans from 2^(log_n - 1) down to 1, each stage in exactly one pass.
            let mut top = log_n;
            for &(log_s, k) in &plan {
                assert!(k >= 1 && log_s + k == top, "log_n {log_n}: {plan:?}");
                assert!(k <= if log_s == 0 { log_t } else { log_t - 2 });
                // A block of a pass with a span above 1 takes at least 4 residues.
                assert!(log_s == 0 || log_s >= 2);
                top = log_s;
            }
            assert_eq!(top, 0);
            assert!(plan.len() <= 3, "log_n {log_n}: {plan:?}");
            assert_eq!(one_pass(log_n), plan.len() == 1, "log_n {log_n}: {plan:?}");
        }
        // The split with the fewest steps: 2^21 points in 9 + 12 stages,
        // not 7 + 14; 2^24 keeps 10 + 14, as its split with fewer steps,
        // 12 + 12, would take a top pass of 12 (rows of 16 bytes).
        assert_eq!(passes(21), [(12, 9), (0, 12)]);
        assert_eq!(passes(24), [(14, 10), (0, 14)]);
        assert_eq!(passes_in_tiles(19, 10), [(13, 6), (10, 3), (0, 10)]);
        // The wide sets' tiles: from 2^12 elements (or the whole transform).
        for log_n in 1..=WIDE_MAX_LOG {
            let shape = Shape { log_n, radix: 1, wide: true };
            let (plan, log_t) = (shape.passes(), shape.tile_log());
            assert!(log_t <= log_n && log_t <= TILE_LOG && (log_t >= WIDE_MIN_TILE_LOG || log_t == log_n), "log_n {log_n}: {log_t}");
            let mut top = log_n;
            for &(log_s, k) in &plan {
                assert!(k >= 1 && log_s + k == top && k <= if log_s == 0 { log_t } else { log_t - 2 }, "log_n {log_n}: {plan:?}");
                top = log_s;
            }
            assert!(top == 0 && plan.len() <= 2, "log_n {log_n}: {plan:?}");
        }
    }

    #[test]
    fn plans_fit_their_transforms() {
        let sizes = [1usize, 7, 1000, 4096, 100_000, 1_000_000, 10_000_000, 100_000_000, 200_000_000];
        for &un in &sizes {
            for &vn in &sizes {
                let plan = product_plan(un, vn);
                // Radix 5 within its primes' longest transform, and never
                // in pieces (their sums' bound is the first set's).
                match plan {
                    // The wide sets only for whole products and chunks, within their transforms.
                    Some(Plan::Whole(s) | Plan::Chunked { shape: s, .. }) if s.wide => assert!(s.log_n <= if s.radix == 5 { WIDE_MAX_LOG5 } else { WIDE_MAX_LOG } && s.len() >= WIDE_FROM, "{un}x{vn}: {plan:?}"),
                    Some(Plan::Pieces { shape, .. }) => assert!(!shape.wide, "{un}x{vn}: {plan:?}"),
                    _ => {}
                }
                match plan {
                    Some(Plan::Whole(s) | Plan::Chunked { shape: s, .. }) if s.radix == 5 && !s.wide => assert!(s.log_n <= MAX_LOG5, "{un}x{vn}: {plan:?}"),
                    Some(Plan::Pieces { shape, .. }) => assert!(shape.radix != 5, "{un}x{vn}: {plan:?}"),
                    _ => {}
                }
                match plan {
                    Some(Plan::Whole(shape)) => assert!(shape.log_n <= MAX_LOG && shape.len() >= shape.coefs_per_limb() * (un + vn)),
                    Some(Plan::Chunked { shape, chunk }) => {
                        let (long, short) = (un.max(vn), un.min(vn));
                        assert!(shape.log_n <= MAX_LOG && chunk >= 1 && chunk < long, "{un}x{vn}: {plan:?}");
                        // No chunk product wraps around.
                        assert!(shape.len() >= shape.coefs_per_limb() * (chunk + short), "{un}x{vn}: {plan:?}");
                    }
                    Some(Plan::Pieces { shape, piece }) => {
                        // Only past the longest transform; no product of two pieces wraps around.
                        assert!(base_plan(un, vn, WIDE_FROM).is_none() && shape.log_n <= MAX_LOG && piece <= MAX_PIECE_LIMBS, "{un}x{vn}: {plan:?}");
                        assert!(shape.len() >= COEFS_PER_LIMB * (2 * piece + 1), "{un}x{vn}: {plan:?}");
                        assert!(device_bytes(plan.unwrap(), un, vn, false) > 8 * (un + vn));
                    }
                    None => panic!("{un}x{vn} has no plan"),
                }
                assert_eq!(plan, product_plan(vn, un));
            }
        }
        // Balanced products take one transform; very unbalanced ones go in
        // chunks, also past the longest single transform.
        assert!(matches!(product_plan(1_000_000, 1_000_000), Some(Plan::Whole(_))));
        assert!(matches!(product_plan(10_000_000, 10_000), Some(Plan::Chunked { .. })));
        // tests/gpu.rs's mul_sweep runs this shape on the device for the chunked path.
        assert!(matches!(product_plan(1 << 21, 1 << 11), Some(Plan::Chunked { .. })));
        assert!(matches!(product_plan(200_000_000, 100_000), Some(Plan::Chunked { .. })));
        // Balanced products past the longest transform go in pieces, as
        // few as the longest piece allows or a few more where those take a
        // shorter transform.
        assert!(matches!(product_plan(200_000_000, 100_000_000), Some(Plan::Pieces { .. })));
        assert!(matches!(product_plan(1 << 25, 1 << 25), Some(Plan::Pieces { .. })), "{:?}", product_plan(1 << 25, 1 << 25));
        for n in [100_000_000usize, 1 << 28, 1 << 30] {
            let Some(Plan::Pieces { piece, .. }) = product_plan(n, n) else { panic!("{n}: {:?}", product_plan(n, n)) };
            assert!(n.div_ceil(piece) < n.div_ceil(MAX_PIECE_LIMBS) + 4, "{n}: {piece}");
        }
        assert!(matches!(product_plan(MAX_PRODUCT_LIMBS / 2, MAX_PRODUCT_LIMBS / 2), Some(Plan::Whole(_))));
    }

    #[test]
    fn sums_take_every_pair_once_within_the_bound() {
        assert_eq!(pairs_a_sum(MAX_PIECE_LIMBS), MAX_PAIRS);
        // Past 8 pairs the sum of the longest pieces would not be exact.
        let p: u128 = 1_811_939_329u128 * 2_013_265_921 * 2_113_929_217;
        assert!(9 * 2 * MAX_PIECE_LIMBS as u128 * (u32::MAX as u128).pow(2) >= p);
        assert!(8 * 2 * MAX_PIECE_LIMBS as u128 * (u32::MAX as u128).pow(2) < p);
        for (pa, pb, square) in [(1, 1, false), (1, 1, true), (3, 3, false), (3, 3, true), (20, 7, false), (7, 20, false), (20, 20, true), (43, 43, false)] {
            for piece in [1000, MAX_PIECE_LIMBS] {
                let sums = sums(pa, pb, square, piece);
                let mut seen = std::collections::HashSet::new();
                let mut last = 0;
                for (k, pairs) in &sums {
                    assert!(*k >= last && !pairs.is_empty() && pairs.len() <= MAX_PAIRS);
                    last = *k;
                    let weight: usize = pairs.iter().map(|p| 1 + p.twice as usize).sum();
                    assert!(weight <= pairs_a_sum(piece), "{pa}x{pb} {square}: {pairs:?}");
                    for p in pairs {
                        assert!(p.i + p.j == *k && p.i < pa && p.j < if square { pa } else { pb });
                        assert_eq!(p.twice, square && p.i != p.j);
                        assert!(!square || p.i <= p.j);
                        assert!(seen.insert((p.i, p.j)), "{pa}x{pb}: {p:?} twice");
                    }
                }
                let want = if square { pa * (pa + 1) / 2 } else { pa * pb };
                assert_eq!(seen.len(), want, "{pa}x{pb} {square}");
            }
        }
    }

    /// The sums of `Plan::Pieces` placed by `sum_place`, made here with
    /// GMP's products instead of transforms: each fits the limbs it is
    /// given, its add leaves no carry out of its span, and together they
    /// make the product. All-ones operands make the largest sums (a sum of
    /// eight products of pieces takes one limb more than one product).
    #[test]
    fn sums_of_pieces_make_the_product() {
        use rug::Integer;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = |n: usize| -> Vec<u64> {
            (0..n).map(|_| { seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; seed }).collect()
        };
        let cases = [(37usize, 23usize, false, 5usize), (40, 40, true, 5), (41, 40, false, 4), (9, 9, false, 3), (64, 7, false, 6), (30, 30, true, 2)];
        for (an, bn, square, piece) in cases {
            for ones in [false, true] {
                let a = if ones { vec![u64::MAX; an] } else { random(an) };
                let b = if square { a.clone() } else if ones { vec![u64::MAX; bn] } else { random(bn) };
                let cut = |x: &[u64]| -> Vec<Vec<u64>> { x.chunks(piece).map(|c| c.to_vec()).collect() };
                let (pa, pb) = (cut(&a), cut(&b));
                let (la, lb): (Vec<usize>, Vec<usize>) = (pa.iter().map(Vec::len).collect(), pb.iter().map(Vec::len).collect());
                let total = an + b.len();
                let mut r = vec![0u64; total];
                for (k, pairs) in sums(pa.len(), pb.len(), square, piece) {
                    let sum: Integer = pairs
                        .iter()
                        .map(|p| Integer::from_digits(&pa[p.i], rug::integer::Order::Lsf) * Integer::from_digits(&pb[p.j], rug::integer::Order::Lsf) * (1 + p.twice as u32))
                        .sum();
                    let (offset, limbs, span) = sum_place(k, &pairs, piece, &la, &lb, total);
                    let digits = sum.as_limbs();
                    assert!(digits.len() <= limbs && limbs <= span, "{an}x{bn} k {k}: a sum of {} limbs placed in {limbs}, span {span}", digits.len());
                    let mut carry = 0u64;
                    for (i, slot) in r[offset..offset + span].iter_mut().enumerate() {
                        let (s1, c1) = slot.overflowing_add(digits.get(i).copied().unwrap_or(0));
                        let (s2, c2) = s1.overflowing_add(carry);
                        *slot = s2;
                        carry = (c1 | c2) as u64;
                    }
                    assert_eq!(carry, 0, "{an}x{bn} k {k}: a carry out of the add's span");
                }
                let want = Integer::from_digits(&a, rug::integer::Order::Lsf) * Integer::from_digits(&b, rug::integer::Order::Lsf);
                assert!(Integer::from_digits(&r, rug::integer::Order::Lsf) == want, "{an}x{bn} square {square} piece {piece} ones {ones}");
            }
        }
    }

    /// Each wide set's product of primes against the largest coefficient
    /// of its longest transform: m (2^64 - 1)^2 with m, the shorter
    /// operand's limbs, at most half the transform for a product
    /// (cuda/ntt.cu), at most all of it for a cyclic convolution
    /// (`cyclic_shape_from`). The primes are the kernels'
    /// (cuda/ntt_arith.cuh).
    #[test]
    fn wide_bound_holds() {
        use rug::Integer;
        let sets: [(&[u64], usize); 2] = [
            (&[1_711_276_033, 1_811_939_329, 2_013_265_921, 2_088_763_393, 2_113_929_217], 3 << WIDE_MAX_LOG),
            (&[1_300_234_241, 1_321_205_761, 1_572_864_001, 1_866_465_281, 2_013_265_921], 5 << WIDE_MAX_LOG5),
        ];
        for (primes, longest) in sets {
            let p: Integer = primes.iter().map(|&q| Integer::from(q)).product();
            let top = Integer::from(longest) * (Integer::from(u64::MAX) * u64::MAX);
            assert!(top < p, "{primes:?}");
            // Every transform the set has divides each p - 1.
            assert!(primes.iter().all(|&q| (q - 1) % longest as u64 == 0 && q < 1 << 31), "{primes:?}");
        }
    }

    #[test]
    fn wide_shapes_are_the_shortest() {
        for limbs in (1usize..5000).chain([1 << 20, 2_000_000, 20_000_000, 5 << 22, (5 << 22) + 1, 3 << 23, (3 << 23) + 1]) {
            let Some(shape) = wide_shape(limbs) else {
                assert!(limbs > 3 << WIDE_MAX_LOG, "{limbs}");
                continue;
            };
            assert!(shape.wide && shape.len() >= limbs.max(2) && shape.log_n >= 1, "{limbs}: {shape:?}");
            // Half the narrow sets' points for the same shape, where both have it.
            let narrow = product_shape(limbs);
            // (Below 8 limbs the wide sets lack 3 * 2^0 and 5 * 2^0: the combine takes column pairs.)
            assert!(limbs < 8 || shape.len() * 2 <= narrow.len(), "{limbs}: {shape:?} {narrow:?}");
        }
        // 10^6 and 10^7 limbs a side: 2^21 and 5 * 2^22 points.
        assert_eq!(product_plan(1_000_000, 1_000_000), Some(Plan::Whole(Shape { log_n: 21, radix: 1, wide: true })));
        assert_eq!(product_plan(10_000_000, 10_000_000), Some(Plan::Whole(Shape { log_n: 22, radix: 5, wide: true })));
        assert_eq!(product_plan_from(10_000_000, 10_000_000, usize::MAX), Some(Plan::Whole(Shape { log_n: 23, radix: 5, wide: false })));
        // Products mod B^rn - 1 of exactly rn points where the wide sets have them.
        assert_eq!(cyclic_shape_from(5 << 20, WIDE_FROM), Some(Shape { log_n: 20, radix: 5, wide: true }));
        assert_eq!(cyclic_shape_from(5 << 20, usize::MAX), cyclic_shape(5 << 20));
        assert_eq!(cyclic_shape_from(5 << 23, WIDE_FROM), cyclic_shape(5 << 23));
        assert_eq!(cyclic_shape_from(1000, WIDE_FROM), None);
        for rn in (1usize..5000).chain([1 << 20, 3 << 23, 5 << 22]) {
            let shape = cyclic_shape_from(rn, WIDE_FROM);
            assert_eq!(shape.is_some(), cyclic_shape(rn).is_some(), "{rn}");
            if let Some(s) = shape.filter(|s| s.wide) {
                assert!(s.len() == rn && rn >= WIDE_FROM, "{rn}: {s:?}");
            }
        }
        // Unbalanced products' chunks on the wide sets.
        assert!(matches!(product_plan(10_000_000, 100_000), Some(Plan::Chunked { shape: Shape { wide: true, .. }, .. })));
        // Past the wide sets' transforms, the narrow ones.
        assert!(matches!(product_plan(13 << 20, 13 << 20), Some(Plan::Whole(Shape { wide: false, .. }))));
        assert!(matches!(product_plan(WIDE_FROM / 2 - 1, WIDE_FROM / 2), Some(Plan::Whole(Shape { wide: false, .. }))));
    }

    #[test]
    fn cyclic_sizes_are_transform_lengths() {
        let mut last = 0;
        for rn in (1usize..5000).chain([1_000_005, 3 << 23, 1 << 25, 3 << 24]) {
            let size = cyclic_size(rn).expect("within the longest transform");
            // From rn up, at most 1.5 rn, monotone, and exactly one transform.
            assert!(size >= rn && 2 * size <= 3 * rn && size >= last, "{rn}: {size}");
            assert_eq!(cyclic_shape(size).map(Shape::len), Some(COEFS_PER_LIMB * size), "{rn}: {size}");
            assert_eq!(cyclic_shape(rn).is_some(), size == rn, "{rn}");
            last = size;
        }
        // Above 3 * 2^23 limbs only 3 * 2^24 is a cyclic length (2^25 limbs
        // would take 2^26 points): GMP's own sizes below 2^25 limbs.
        assert_eq!((cyclic_size((3 << 23) + 1), cyclic_size((1 << 25) - 1)), (None, None));
        assert_eq!(cyclic_size((3 << 24) + 1), None);
        assert_eq!((cyclic_size(1000), cyclic_size(1025), cyclic_size(1281), cyclic_size(1537)), (Some(1024), Some(1280), Some(1536), Some(2048)));
    }

    #[test]
    fn transform_is_the_shortest_without_wraparound() {
        for limbs in (1usize..5000).chain([2_000_000, 10_000_000, 20_000_000, MAX_PRODUCT_LIMBS]) {
            let shape = transform_shape(limbs);
            let need = COEFS_PER_LIMB * limbs;
            assert!(shape.len() >= need && shape.log_n <= MAX_LOG, "{limbs}: {shape:?}");
            // No shorter length of either kind would do.
            let shorter = if shape.radix == 3 { need.next_power_of_two() } else { 3 * need.div_ceil(3).next_power_of_two() };
            assert!(shorter >= shape.len() || 1usize << MAX_LOG < need, "{limbs}: {shape:?}");
        }
        // 10^7 x 10^7 limbs: 3 * 2^24 points, not 2^26.
        assert_eq!(transform_shape(20_000_000), Shape { log_n: 24, radix: 3, wide: false });
    }

    #[test]
    fn whole_products_take_the_shortest_of_three_radices() {
        for limbs in (1usize..5000).chain([1_100_000, 2_000_000, 10_000_000, 20_000_000, 5 << 22, (5 << 22) + 1, MAX_PRODUCT_LIMBS]) {
            let shape = product_shape(limbs);
            let need = (COEFS_PER_LIMB * limbs).max(2);
            assert!(shape.len() >= need, "{limbs}: {shape:?}");
            if shape.radix == 5 {
                assert!((1..=MAX_LOG5).contains(&shape.log_n) && shape.len() < transform_shape(limbs).len(), "{limbs}: {shape:?}");
            } else {
                assert_eq!(shape, transform_shape(limbs), "{limbs}");
                // No length of 5 * 2^k in range would do.
                let five = 5 * need.div_ceil(5).next_power_of_two();
                assert!(five >= shape.len() || !(10..=5 << MAX_LOG5).contains(&five), "{limbs}: {shape:?}");
            }
        }
        // 10^7 x 10^7 limbs: 5 * 2^23 points, not 3 * 2^24; past 5 * 2^22
        // limbs radix 5 has no length.
        assert_eq!(product_shape(20_000_000), Shape { log_n: 23, radix: 5, wide: false });
        assert_eq!(product_shape((5 << 22) + 1), transform_shape((5 << 22) + 1));
        // The device tests' products of 5 * 2^k points (tests/gpu.rs, mul_sweep).
        // (Off the wide sets, which take whole products.)
        let narrow = |un, vn| product_plan_from(un, vn, usize::MAX);
        assert_eq!(narrow(700_000, 400_000), Some(Plan::Whole(Shape { log_n: 19, radix: 5, wide: false })));
        assert_eq!(narrow(1_100_000, 1_000_000), Some(Plan::Whole(Shape { log_n: 20, radix: 5, wide: false })));
        assert!(matches!(narrow(2_000_000, 300_000), Some(Plan::Chunked { shape: Shape { log_n: 19, radix: 5, wide: false }, .. })));
        // Pieces keep 2^k and 3 * 2^k; cyclic products take 5 * 2^k too.
        assert_eq!(cyclic_shape(5 << 9), Some(Shape { log_n: 10, radix: 5, wide: false }));
        assert!(matches!(product_plan(1 << 26, 1 << 26), Some(Plan::Pieces { shape, .. }) if shape.radix != 5));
    }
}
