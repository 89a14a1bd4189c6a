//! Products of binary polynomials, GF(2)[x], on the GPU by the additive
//! FFT over GF(2^64) (cuda/gf2x.cu), in Lin, Chung and Han's novel
//! polynomial basis over a Cantor basis.
//!
//! The method. Each operand is cut into 32-bit chunks, each chunk an
//! element of GF(2^64) = GF(2)[y]/(y^64 + y^4 + y^3 + y + 1) in the
//! polynomial basis: a polynomial of degree < 32 in y. The product of two
//! chunks has degree < 63, so the products of the polynomials over GF(2^64)
//! whose coefficients are the chunks never reduce mod the field's
//! polynomial: its coefficient j is the carry-less sum of the chunk
//! products that land at chunk j, and the binary product is those
//! coefficients added at 32 j bits. That product over GF(2^64), of
//! degree < 2^k, is:
//! 1. each operand written in the novel basis X_m = prod_{bit i of m} s_i(x)
//!    (`conversion`: exclusive ors only, as every s_i has coefficients in
//!    GF(2));
//! 2. evaluated at the 2^k points of span(beta_0 .. beta_{k-1}) (`FFT`: k
//!    layers of butterflies a += t b, b += a);
//! 3. multiplied point by point, interpolated by the inverse butterflies,
//!    and written back in the monomial basis.
//!
//! With a Cantor basis (beta_0 = 1, beta_i^2 + beta_i = beta_{i-1}), s_1(x) =
//! x^2 + x maps beta_i to beta_{i-1}, s_i = s_1 composed i times is
//! normalised (s_i(beta_i) = 1), s_(2^j)(x) = x^(2^(2^j)) + x, and s_i of
//! the point with index r is the point with index r >> i: every twiddle
//! is a point, read from two tables (`Twiddles`).
//!
//! The conversion: for k > 1 and t the largest power of two below k, f is
//! expanded in powers of y = s_t(x) = x^(2^t) + x (Gao and Mateer's Taylor
//! expansion: k - t passes of exclusive ors), each of its 2^(k-t)
//! coefficients (a polynomial of degree < 2^t, a row) converted, then each
//! column (the coefficients of one power of x, as a polynomial in y, whose
//! novel basis is X_m(y) = X_(m 2^t)(x)) converted. Every pass is a
//! `Taylor` step; those that touch at most `TILE_BITS` bits of an element's
//! index run several in one launch, a tile of the array in shared memory;
//! so do the FFT's layers, `TILE_BITS` at a time.
//!
//! It knows nothing of `mpz_t`, routing or the CPU engine.

use super::device::{guarded, injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::{Arc, OnceLock};

/// Index bits of a tile in shared memory besides its two lowest (a tile
/// also takes bits 0 and 1, 32 bytes of consecutive elements, so that its
/// loads stay whole sectors): GF2X_TILE_BITS in cuda/gf2x.cu.
const TILE_BITS: u32 = 10;
/// Threads a block of the tile kernels (GF2X_THREADS in cuda/gf2x.cu).
const TILE_THREADS: u32 = 256;
/// The largest transform: the twiddle tables hold points of index below 2^32.
const MAX_LOG: u32 = 32;

/// The field's polynomial without its y^64: y^4 + y^3 + y + 1.
const FIELD_LOW: u64 = 0x1b;

/// The 128-bit carry-less product of `a` and `b`, (low, high).
pub fn clmul(a: u64, b: u64) -> (u64, u64) {
    let (mut lo, mut hi) = (0u64, 0u64);
    for i in 0..64 {
        if b >> i & 1 == 1 {
            lo ^= a << i;
            hi ^= if i == 0 { 0 } else { a >> (64 - i) };
        }
    }
    (lo, hi)
}

/// `a b` in GF(2^64).
pub fn field_mul(a: u64, b: u64) -> u64 {
    let (lo, hi) = clmul(a, b);
    // y^64 = y^4 + y^3 + y + 1: fold the high half in twice.
    let (l1, h1) = clmul(hi, FIELD_LOW);
    let (l2, _) = clmul(h1, FIELD_LOW);
    lo ^ l1 ^ l2
}

/// A solution of x^2 + x = c in GF(2^64), if any: the map is linear over
/// GF(2) (its kernel {0, 1}), solved by elimination.
fn solve_square_plus_x(c: u64) -> Option<u64> {
    // Rows: (image of the basis vector y^j, the vector y^j itself).
    let mut rows: Vec<(u64, u64)> = (0..64).map(|j| (field_mul(1 << j, 1 << j) ^ (1u64 << j), 1u64 << j)).collect();
    let (mut target, mut solution) = (c, 0u64);
    let mut pivot_rows = 0;
    for bit in (0..64).rev() {
        let Some(p) = (pivot_rows..64).find(|&r| rows[r].0 >> bit & 1 == 1) else { continue };
        rows.swap(pivot_rows, p);
        let pivot = rows[pivot_rows];
        for (r, row) in rows.iter_mut().enumerate() {
            if r != pivot_rows && row.0 >> bit & 1 == 1 {
                row.0 ^= pivot.0;
                row.1 ^= pivot.1;
            }
        }
        if target >> bit & 1 == 1 {
            target ^= pivot.0;
            solution ^= pivot.1;
        }
        pivot_rows += 1;
    }
    (target == 0).then_some(solution)
}

/// beta_0 .. beta_(MAX_LOG - 1) of a Cantor basis.
fn cantor_basis() -> &'static [u64] {
    static BASIS: OnceLock<Vec<u64>> = OnceLock::new();
    BASIS.get_or_init(|| {
        let mut basis = vec![1u64];
        while basis.len() < MAX_LOG as usize {
            // GF(2^64) holds a Cantor basis of all 64 elements: the
            // equation is solvable for every beta_(i-1), i < 64.
            let next = solve_square_plus_x(basis[basis.len() - 1]).unwrap_or(0);
            basis.push(next);
        }
        basis
    })
}

/// The point of index r, the sum of beta_j over the bits j of r, as
/// `low[r mod 2^16] ^ high[r >> 16]`.
pub struct Twiddles {
    pub low: Vec<u64>,
    pub high: Vec<u64>,
}

/// The tables for a transform of 2^k points: twiddles are points of
/// index below 2^k.
pub fn twiddles(k: u32) -> Twiddles {
    let beta = cantor_basis();
    let span = |bits: u32, first: usize| -> Vec<u64> {
        let mut t = vec![0u64; 1 << bits];
        for r in 1..t.len() {
            let j = r.trailing_zeros() as usize;
            t[r] = t[r & (r - 1)] ^ beta[first + j];
        }
        t
    };
    Twiddles { low: span(k.min(16), 0), high: span(k.saturating_sub(16), 16) }
}

/// One pass of a Taylor expansion, on the elements whose index bits
/// [sigma, sigma + lambda) form the position in a block of 2^lambda; the
/// expansion in powers of x^tau + x splits each block's f = A + y^d' B with
/// half m = 2^(lambda-1) and d = 2^delta = m / tau (cuda/gf2x.cu,
/// `taylor_value`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taylor {
    pub sigma: u32,
    pub lambda: u32,
    pub delta: u32,
}

/// A tile: the index bits [s, s + w) and the `low` bits below 2 (min(s, 2)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub s: u32,
    pub w: u32,
}

impl Window {
    pub fn low(self) -> u32 {
        self.s.min(2)
    }
    /// Elements in one tile.
    pub fn size(self) -> usize {
        1 << (self.low() + self.w)
    }
}

/// A step of the conversion: one pass over the whole array (out of
/// place), or several in one tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Global(Taylor),
    Tile(Window, Vec<Taylor>),
}

/// The window of `w` bits from `s` in an index of `k` bits, moved down to fit.
fn window(k: u32, s: u32) -> Window {
    let w = TILE_BITS.min(k);
    Window { s: s.min(k - w), w }
}

/// The conversion to the novel basis of 2^k coefficients, as its passes.
pub fn conversion_passes(k: u32) -> Vec<Taylor> {
    fn convert(k: u32, sigma: u32, out: &mut Vec<Taylor>) {
        if k <= 1 {
            return;
        }
        let t = 1 << (31 - (k - 1).leading_zeros());
        for lambda in (t + 1..=k).rev() {
            out.push(Taylor { sigma, lambda, delta: lambda - 1 - t });
        }
        convert(t, sigma, out);
        convert(k - t, sigma + t, out);
    }
    let mut out = Vec::new();
    convert(k, 0, &mut out);
    out
}

/// The passes grouped into launches: consecutive passes within one
/// window share a tile.
pub fn conversion_steps(k: u32) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for p in conversion_passes(k) {
        if p.lambda > TILE_BITS {
            steps.push(Step::Global(p));
            continue;
        }
        if let Some(Step::Tile(win, passes)) = steps.last_mut() {
            if p.sigma >= win.s && p.sigma + p.lambda <= win.s + win.w {
                passes.push(p);
                continue;
            }
        }
        steps.push(Step::Tile(window(k, p.sigma), vec![p]));
    }
    steps
}

/// The FFT's layers top down (k - 1 first), `TILE_BITS` a launch: each
/// window with the layers [first, end) it runs.
pub fn fft_windows(k: u32) -> Vec<(Window, u32, u32)> {
    let mut out = Vec::new();
    let mut end = k;
    while end > 0 {
        let first = end.saturating_sub(TILE_BITS);
        out.push((window(k, first), first, end));
        end = first;
    }
    out
}

/// The transform's size for a product of `an` x `bn` limbs: 2^k points,
/// 2^k >= 2 (an + bn) - 1 chunks of 32 bits.
pub fn transform_log(an: usize, bn: usize) -> u32 {
    let chunks = (2 * (an + bn) - 1).max(2);
    usize::BITS - (chunks - 1).leading_zeros()
}

impl Gpu {
    /// `a * b` in GF(2)[x], a.len() + b.len() limbs into `out` (both
    /// operands nonempty; the same slice twice squares).
    pub fn gf2x_mul(&self, a: &[u64], b: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        guarded(|| {
            assert!(!a.is_empty() && !b.is_empty() && out.len() == a.len() + b.len(), "gf2x_mul: {} x {} limbs into {}", a.len(), b.len(), out.len());
            let k = transform_log(a.len(), b.len());
            if k > MAX_LOG {
                return Err(GpuError::TooLarge);
            }
            injected(Fault::GpuLaunch, "gpu-launch")?;
            let square = std::ptr::eq(a, b);
            let n = 1usize << k;
            let table = twiddles(k);
            let steps = conversion_steps(k);
            // The transforms (and the passes' second array), an operand's
            // limbs or the result's, the tables.
            let arrays = if square { 2 } else { 3 };
            let bytes = 8 * (arrays * n + 2 * out.len() + table.low.len() + table.high.len()) + (64 << 10);
            if bytes > self.total_mem {
                return Err(GpuError::TooLarge);
            }
            let _claim = super::device::reserve(bytes)?;
            let stream = self.stream();
            // Every tile step's passes, 3 words each, one step after another.
            let mut words: Vec<u64> = Vec::new();
            let mut at = Vec::with_capacity(steps.len());
            for s in &steps {
                at.push(words.len() as u64);
                if let Step::Tile(_, passes) = s {
                    words.extend(passes.iter().flat_map(|p| [p.sigma as u64, p.lambda as u64, p.delta as u64]));
                }
            }
            words.push(0);
            let plan = Plan {
                k,
                steps,
                at,
                passes: self.copy_to_device(&stream, &words)?,
                low: self.copy_to_device(&stream, &table.low)?,
                high: self.copy_to_device(&stream, &table.high)?,
                stream: stream.clone(),
            };
            let mut scratch = stream.alloc_zeros::<u64>(n)?;
            let count = n as u64;

            // One operand to its transform: chunks, novel basis, points.
            let transform = |x: &[u64], scratch: &mut CudaSlice<u64>| -> Result<CudaSlice<u64>, GpuError> {
                let limbs = self.copy_to_device(&stream, x)?;
                let mut v = stream.alloc_zeros::<u64>(n)?;
                let nl = x.len() as u64;
                launch!(self, stream, gf2x_chunks, n, &limbs, &nl, &mut v, &count);
                drop(limbs);
                self.gf2x_convert(&plan, false, &mut v, scratch)?;
                self.gf2x_fft(&plan, false, &mut v)?;
                Ok(v)
            };
            let mut x = transform(a, &mut scratch)?;
            if square {
                launch!(self, stream, gf2x_pointwise, n, &mut x, &0u64, &count);
            } else {
                let y = transform(b, &mut scratch)?;
                launch!(self, stream, gf2x_pointwise, n, &mut x, &y, &count);
            }
            self.gf2x_fft(&plan, true, &mut x)?;
            self.gf2x_convert(&plan, true, &mut x, &mut scratch)?;
            drop(scratch);
            let mut r = stream.alloc_zeros::<u64>(out.len())?;
            let words = 2 * out.len() as u64;
            launch!(self, stream, gf2x_gather, 2 * out.len(), &x, &mut r, &words);
            drop(x);
            self.copy_from_device_into(&stream, &r, out)?;
            Ok(())
        })
    }

    /// The conversion of `v` to the novel basis, or back with `inverse`
    /// (the steps in reverse order, each inverted).
    fn gf2x_convert(&self, plan: &Plan, inverse: bool, v: &mut CudaSlice<u64>, scratch: &mut CudaSlice<u64>) -> Result<(), GpuError> {
        let (stream, n) = (&plan.stream, 1usize << plan.k);
        let (count, inv) = (n as u64, inverse as u64);
        let order: Box<dyn Iterator<Item = usize>> = if inverse { Box::new((0..plan.steps.len()).rev()) } else { Box::new(0..plan.steps.len()) };
        for i in order {
            match &plan.steps[i] {
                Step::Global(p) => {
                    let (sigma, lambda, delta) = (p.sigma as u64, p.lambda as u64, p.delta as u64);
                    launch!(self, stream, gf2x_taylor, n, &*v, &mut *scratch, &count, &sigma, &lambda, &delta, &inv);
                    std::mem::swap(v, scratch);
                }
                Step::Tile(win, passes) => {
                    let cfg = tile_grid(*win, plan.k)?;
                    let (s, w, npass) = (win.s as u64, win.w as u64, passes.len() as u64);
                    launch_with!(self, stream, gf2x_convert_tile, cfg, &mut *v, &s, &w, &plan.passes, &plan.at[i], &npass, &inv);
                }
            }
        }
        Ok(())
    }

    /// The FFT of `v` (in the novel basis) to its values at the points, or
    /// back with `inverse`.
    fn gf2x_fft(&self, plan: &Plan, inverse: bool, v: &mut CudaSlice<u64>) -> Result<(), GpuError> {
        let mut windows = fft_windows(plan.k);
        if inverse {
            windows.reverse();
        }
        let inv = inverse as u64;
        for (win, first, end) in windows {
            let cfg = tile_grid(win, plan.k)?;
            let (s, w, first, end) = (win.s as u64, win.w as u64, first as u64, end as u64);
            launch_with!(self, plan.stream, gf2x_fft_tile, cfg, &mut *v, &s, &w, &first, &end, &inv, &plan.low, &plan.high);
        }
        Ok(())
    }
}

/// One product's transform of 2^k points on the device: the conversion's
/// steps (`at`: each tile step's first word in `passes`) and the twiddles.
struct Plan {
    k: u32,
    steps: Vec<Step>,
    at: Vec<u64>,
    passes: CudaSlice<u64>,
    low: CudaSlice<u64>,
    high: CudaSlice<u64>,
    stream: Arc<CudaStream>,
}

/// One block a tile of window `win` in 2^k elements.
fn tile_grid(win: Window, k: u32) -> Result<LaunchConfig, GpuError> {
    let tiles = u32::try_from((1usize << k) / win.size()).map_err(|_| GpuError::TooLarge)?;
    Ok(LaunchConfig { grid_dim: (tiles, 1, 1), block_dim: (TILE_THREADS, 1, 1), shared_mem_bytes: 0 })
}

#[cfg(test)]
mod tests {
    //! The plan run on the CPU, step for step as cuda/gf2x.cu runs it,
    //! against carry-less products bit by bit.
    use super::*;
    use crate::testing::random_limbs as limbs;

    fn taylor_value(f: &[u64], q: usize, p: Taylor, inverse: bool) -> u64 {
        let sh = p.sigma;
        let r = (q >> sh) & ((1 << p.lambda) - 1);
        let (m, d) = (1usize << (p.lambda - 1), 1usize << p.delta);
        let mut v = f[q];
        if r < m {
            if r >= d {
                v ^= f[q + ((m - d) << sh)];
            }
            if !inverse && r >= d && r < 2 * d {
                v ^= f[q + ((2 * m - 2 * d) << sh)];
            }
        } else if r - m < d {
            v ^= f[q + ((m - d) << sh)];
        }
        v
    }

    fn run_passes(f: &mut Vec<u64>, passes: &[Taylor], inverse: bool) {
        let order: Vec<Taylor> = if inverse { passes.iter().rev().copied().collect() } else { passes.to_vec() };
        for p in order {
            *f = (0..f.len()).map(|q| taylor_value(f, q, p, inverse)).collect();
        }
    }

    /// One butterfly on elements a and b of `f`: forward a += t b, then
    /// b += a; inverse the reverse (cuda/gf2x.cu's).
    fn butterfly(f: &mut [u64], a: usize, b: usize, tw: u64, inverse: bool) {
        if inverse {
            f[b] ^= f[a];
            f[a] ^= field_mul(tw, f[b]);
        } else {
            f[a] ^= field_mul(tw, f[b]);
            f[b] ^= f[a];
        }
    }

    fn fft(f: &mut [u64], k: u32, inverse: bool) {
        let t = twiddles(k);
        let point = |r: usize| t.low[r & 0xffff] ^ t.high.get(r >> 16).copied().unwrap_or(0);
        let layers: Vec<u32> = if inverse { (0..k).collect() } else { (0..k).rev().collect() };
        for i in layers {
            for p in (0..f.len()).step_by(2 << i) {
                let tw = point(p >> i);
                for l in 0..1 << i {
                    butterfly(f, p + l, p + l + (1 << i), tw, inverse);
                }
            }
        }
    }

    /// The novel basis polynomial X_m evaluated at the point x.
    fn novel(m: usize, x: u64) -> u64 {
        let mut s = x; // s_i(x), from i = 0
        let mut v = 1;
        for i in 0..usize::BITS - m.leading_zeros() {
            if m >> i & 1 == 1 {
                v = field_mul(v, s);
            }
            s = field_mul(s, s) ^ s;
        }
        v
    }

    /// tile_index in cuda/gf2x.cu.
    fn tile_index(u: usize, o: usize, win: Window) -> usize {
        let (s, w, lo) = (win.s, win.w, win.low());
        let mid = s - lo;
        (u & ((1 << lo) - 1)) | ((o & ((1 << mid) - 1)) << lo) | ((u >> lo) << s) | ((o >> mid) << (s + w))
    }

    /// Each tile of `win` gathered, changed by `run`, put back.
    fn by_tiles(f: &mut [u64], win: Window, run: &mut dyn FnMut(&mut Vec<u64>, usize)) {
        for o in 0..f.len() / win.size() {
            let mut tile: Vec<u64> = (0..win.size()).map(|u| f[tile_index(u, o, win)]).collect();
            run(&mut tile, o);
            for (u, &v) in tile.iter().enumerate() {
                f[tile_index(u, o, win)] = v;
            }
        }
    }

    /// The conversion as the kernels run it: global passes and tiles.
    fn convert_by_steps(f: &mut Vec<u64>, k: u32, inverse: bool) {
        let mut steps = conversion_steps(k);
        if inverse {
            steps.reverse();
        }
        for step in steps {
            match step {
                Step::Global(p) => run_passes(f, &[p], inverse),
                Step::Tile(win, passes) => {
                    let local: Vec<Taylor> = passes.iter().map(|p| Taylor { sigma: p.sigma - win.s + win.low(), ..*p }).collect();
                    by_tiles(f, win, &mut |tile, _| run_passes(tile, &local, inverse));
                }
            }
        }
    }

    /// The FFT as cugmp_gf2x_fft_tile runs it.
    fn fft_by_tiles(f: &mut [u64], k: u32, inverse: bool) {
        let t = twiddles(k);
        let mut windows = fft_windows(k);
        if inverse {
            windows.reverse();
        }
        for (win, first, end) in windows {
            by_tiles(f, win, &mut |tile, o| {
                let layers: Vec<u32> = if inverse { (first..end).collect() } else { (first..end).rev().collect() };
                for i in layers {
                    let b = i - win.s + win.low();
                    for j in 0..tile.len() / 2 {
                        let ua = ((j >> b) << (b + 1)) | (j & ((1 << b) - 1));
                        let ub = ua | 1 << b;
                        let r = (tile_index(ua, o, win) >> (i + 1)) << 1;
                        butterfly(tile, ua, ub, t.low[r & 0xffff] ^ t.high[r >> 16], inverse);
                    }
                }
            });
        }
    }

    /// The product as the kernels compute it (`by_tiles`: the launches'
    /// tiles and global passes), or by the plain passes and layers.
    fn model(a: &[u64], b: &[u64], by_steps: bool) -> Vec<u64> {
        let k = transform_log(a.len(), b.len());
        let n = 1 << k;
        let chunks = |x: &[u64]| -> Vec<u64> {
            let mut v: Vec<u64> = x.iter().flat_map(|&l| [l & 0xffff_ffff, l >> 32]).collect();
            v.resize(n, 0);
            v
        };
        let passes = conversion_passes(k);
        let forward = |x: &[u64]| {
            let mut v = chunks(x);
            if by_steps {
                convert_by_steps(&mut v, k, false);
                fft_by_tiles(&mut v, k, false);
            } else {
                run_passes(&mut v, &passes, false);
                fft(&mut v, k, false);
            }
            v
        };
        let (fa, fb) = (forward(a), forward(b));
        let mut h: Vec<u64> = fa.iter().zip(&fb).map(|(&x, &y)| field_mul(x, y)).collect();
        if by_steps {
            fft_by_tiles(&mut h, k, true);
            convert_by_steps(&mut h, k, true);
        } else {
            fft(&mut h, k, true);
            run_passes(&mut h, &passes, true);
        }
        let words = 2 * (a.len() + b.len());
        let mut out = vec![0u64; a.len() + b.len()];
        for w in 0..words {
            let mut v = h[w] & 0xffff_ffff;
            if w > 0 {
                v ^= h[w - 1] >> 32;
            }
            out[w / 2] |= v << (32 * (w % 2));
        }
        out
    }

    fn carry_less(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; a.len() + b.len()];
        for (i, &x) in a.iter().enumerate() {
            for (j, &y) in b.iter().enumerate() {
                let (lo, hi) = clmul(x, y);
                out[i + j] ^= lo;
                out[i + j + 1] ^= hi;
            }
        }
        out
    }


    #[test]
    fn the_field_is_a_field() {
        // y^64 + y^4 + y^3 + y + 1 irreducible: y^(2^64) = y, and
        // y^(2^32) - y prime to it (64 has the one prime factor 2).
        let frob = |x: u64, times: u32| (0..times).fold(x, |v, _| field_mul(v, v));
        assert_eq!(frob(2, 64), 2);
        let g = frob(2, 32) ^ 2;
        assert_ne!(g, 0);
        // gcd(g, f) = 1 iff g is invertible: g^(2^64 - 2) g = 1.
        let inverse = (1..64).fold(1u64, |acc, i| field_mul(acc, frob(g, i)));
        assert_eq!(field_mul(inverse, g), 1);
    }

    #[test]
    fn the_basis_is_cantor() {
        let beta = cantor_basis();
        assert_eq!(beta[0], 1);
        for i in 1..beta.len() {
            assert_eq!(field_mul(beta[i], beta[i]) ^ beta[i], beta[i - 1], "beta {i}");
        }
        // Independent: the span of the first 20 has 2^20 distinct points.
        let t = twiddles(20);
        let mut points: Vec<u64> = t.low.iter().flat_map(|&l| t.high.iter().map(move |&h| l ^ h)).collect();
        points.sort_unstable();
        points.dedup();
        assert_eq!(points.len(), 1 << 20);
    }

    /// The FFT gives the values of the polynomial with coefficients in the
    /// novel basis, at the points in index order; the inverse undoes it.
    #[test]
    fn the_fft_evaluates_in_the_novel_basis() {
        let mut seed = 99;
        for k in 1..=6 {
            let d = limbs(1 << k, &mut seed);
            let mut v = d.clone();
            fft(&mut v, k, false);
            let t = twiddles(k + 1);
            for (r, &got) in v.iter().enumerate() {
                let x = t.low[r & 0xffff] ^ t.high.get(r >> 16).copied().unwrap_or(0);
                let want = d.iter().enumerate().fold(0, |acc, (m, &c)| acc ^ field_mul(c, novel(m, x)));
                assert_eq!(got, want, "k {k} point {r}");
            }
            fft(&mut v, k, true);
            assert_eq!(v, d);
        }
    }

    /// The conversion's coefficients, in the novel basis, give back the
    /// polynomial: sum d_m X_m(x) = f(x) at random points.
    #[test]
    fn the_conversion_writes_in_the_novel_basis() {
        let mut seed = 7;
        for k in 1..=12 {
            let f = limbs(1 << k, &mut seed);
            let mut d = f.clone();
            run_passes(&mut d, &conversion_passes(k), false);
            for x in limbs(3, &mut seed) {
                let at = |c: &[u64], basis: &dyn Fn(usize) -> u64| c.iter().enumerate().fold(0, |acc, (m, &v)| acc ^ field_mul(v, basis(m)));
                let mono = f.iter().rev().fold(0, |acc, &c| field_mul(acc, x) ^ c);
                assert_eq!(at(&d, &|m| novel(m, x)), mono, "k {k}");
            }
            run_passes(&mut d, &conversion_passes(k), true);
            assert_eq!(d, f, "k {k}: the inverse");
        }
    }

    #[test]
    fn the_plan_multiplies() {
        let mut seed = 0x1234_5678_9abc_def1;
        for (an, bn) in [(1, 1), (2, 1), (3, 2), (7, 7), (64, 63), (100, 3), (257, 255)] {
            let (a, b) = (limbs(an, &mut seed), limbs(bn, &mut seed));
            assert_eq!(model(&a, &b, false), carry_less(&a, &b), "{an} x {bn}");
        }
        let a = limbs(40, &mut seed);
        assert_eq!(model(&a, &a, false), carry_less(&a, &a), "square");
    }

    /// The launches' tiles and global passes: transforms of 2^2 to 2^16
    /// points, windows from bit 0 to bit 6.
    #[test]
    fn the_tiles_multiply() {
        let mut seed = 0x0fed_cba9_8765_4321;
        for (an, bn) in [(1, 1), (5, 3), (300, 200), (1024, 1000), (2047, 1), (5000, 3000), (6000, 40)] {
            let (a, b) = (limbs(an, &mut seed), limbs(bn, &mut seed));
            assert_eq!(model(&a, &b, true), carry_less(&a, &b), "{an} x {bn}");
        }
    }

    /// The steps keep every pass, in order, and each tile's passes inside
    /// its window.
    #[test]
    fn the_steps_group_the_passes() {
        for k in 1..=MAX_LOG {
            let mut flat = Vec::new();
            for s in conversion_steps(k) {
                match s {
                    Step::Global(p) => {
                        assert!(p.lambda > TILE_BITS);
                        flat.push(p);
                    }
                    Step::Tile(w, ps) => {
                        assert!(w.s + w.w <= k && w.size() <= 1 << (TILE_BITS + 2));
                        for p in &ps {
                            assert!(p.sigma >= w.s && p.sigma + p.lambda <= w.s + w.w, "k {k}: {p:?} outside {w:?}");
                        }
                        flat.extend(ps);
                    }
                }
            }
            assert_eq!(flat, conversion_passes(k));
            let layers: Vec<u32> = fft_windows(k).iter().flat_map(|&(w, first, end)| {
                assert!(first >= w.s && end <= w.s + w.w);
                (first..end).rev()
            }).collect();
            assert_eq!(layers, (0..k).rev().collect::<Vec<_>>());
        }
    }
}
