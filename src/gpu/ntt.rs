//! Exact products on the GPU: number-theoretic transforms over three 32-bit
//! primes with 32-bit coefficients, joined by the CRT (cuda/ntt.cu states the
//! primes and the exactness bound: transforms of 2^k or 3 * 2^k points up to
//! 3 * 2^25, products up to 3 * 2^24 limbs in one transform; device memory
//! is the practical limit, checked here). Plans: a whole product, an
//! unbalanced one in chunks against one transform of the short operand
//! (`product_plan`), a product mod B^rn - 1 as one cyclic convolution
//! (`cyclic_shape`).
//!
//! A 2^k transform runs as one to three passes of up to 14 radix-2 stages in
//! shared memory (`passes`, cuda/ntt.cu's cugmp_ntt_pass), all three primes
//! in one launch; a 3 * 2^k one as a radix-3 step (cugmp_ntt_radix3) and
//! three of 2^k. The radix-3 step or else the first forward pass cuts the
//! limbs into coefficients itself. Twiddle tables are built once per transform length and kept. The
//! last carry pass is the add kernel's parallel carry (src/gpu/linear.rs), on
//! the device.

use super::{injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use std::sync::{Arc, Mutex};

/// Coefficients per limb (32 bits each).
const COEFS_PER_LIMB: usize = 2;
/// Primes, one transform each (NTT_PRIMES).
const PRIMES: usize = 3;
/// Longest transform: 3 * 2^25 (NTT_MAX_LOG: 3 * 2^25 divides every p - 1).
const MAX_LOG: u32 = 25;

/// A transform's length: `radix` (1 or 3) blocks of 2^log_n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub log_n: u32,
    pub radix: u32,
}

impl Shape {
    pub fn len(self) -> usize {
        (self.radix as usize) << self.log_n
    }
}

/// The shortest transform for a product of `limbs` limbs with no
/// wrap-around: 2^k, or 3 * 2^k where that is shorter (a third of all
/// lengths gain a quarter).
pub fn transform_shape(limbs: usize) -> Shape {
    let need = (COEFS_PER_LIMB * limbs).max(2);
    let pow2 = Shape { log_n: need.next_power_of_two().trailing_zeros(), radix: 1 };
    let three = Shape { log_n: need.div_ceil(3).next_power_of_two().trailing_zeros(), radix: 3 };
    if three.len() < pow2.len() || pow2.log_n > MAX_LOG {
        three
    } else {
        pow2
    }
}

/// The transform for a product mod B^rn - 1 computed as one cyclic
/// convolution: exactly 2 rn points (2^k or 3 * 2^k), or None when 2 rn is
/// not such a length or is too long.
pub fn cyclic_shape(rn: usize) -> Option<Shape> {
    let shape = transform_shape(rn);
    (shape.len() == COEFS_PER_LIMB * rn && shape.log_n <= MAX_LOG).then_some(shape)
}

/// The smallest rn' >= rn with a `cyclic_shape` (2^a or 3 * 2^a limbs), or
/// None where that is over 1.5 rn (just below the longest transform, where
/// 2^25 limbs would take 2^26 points) or past the longest transform.
pub fn cyclic_size(rn: usize) -> Option<usize> {
    let shape = transform_shape(rn);
    let size = shape.len() / COEFS_PER_LIMB;
    (shape.log_n <= MAX_LOG && 2 * size <= 3 * rn).then_some(size)
}

/// Device bytes of a product mod B^rn - 1 by `cyclic_shape`: two
/// transforms, the folded limbs (one more for the carry out) and their
/// carries, the add kernel's tile states.
fn cyclic_device_bytes(shape: Shape, rn: usize) -> usize {
    2 * PRIMES * 4 * shape.len() + 16 * rn + 8 + 4 * rn.div_ceil(1024)
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
    /// Past the longest transform for both: the short operand in `pieces`
    /// pieces, each multiplied by the long operand by its own plan (whole
    /// or chunked), the piece products added into the result at their
    /// offsets.
    Split { pieces: usize },
}

/// Chunk transforms hold at least this many limbs (2^18 points or more), so
/// that a chunk's launches stay small next to its work.
const MIN_CHUNK_LIMBS: usize = 1 << 17;
/// A chunk's fixed cost (its seven launches, about 30 us) in the units of
/// `transform_cost` (a 2^20-point transform, about 0.15 ms on the H200, is
/// 2^20 * 20 of them). An estimate: not yet measured.
const CHUNK_OVERHEAD: f64 = 4e6;

/// The work of one transform (all three primes), in points times stages.
fn transform_cost(shape: Shape) -> f64 {
    let n = shape.len() as f64;
    n * n.log2()
}

/// The cheapest plan for a product of `un` x `vn` limbs (by `transform_cost`).
/// A product of two operands of very different lengths (GMP's divisions
/// and radix conversions make many) goes in chunks: per chunk two
/// transforms of a length fit to the short operand, instead of three of the
/// whole product's length. A product for which neither has a transform long
/// enough is split (`Plan::Split`); None only for a short operand too long
/// for even that.
pub fn product_plan(un: usize, vn: usize) -> Option<Plan> {
    if let Some((_, plan)) = base_plan(un, vn) {
        return Some(plan);
    }
    let (long, short) = (un.max(vn), un.min(vn));
    let mut best: Option<(f64, Plan)> = None;
    for pieces in 2..=MAX_PIECES {
        let piece = short.div_ceil(pieces);
        // Every piece takes the first piece's plan or a cheaper one (the
        // last may be shorter).
        if let Some((cost, _)) = base_plan(long, piece) {
            let cost = pieces as f64 * cost;
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, Plan::Split { pieces }));
            }
        }
    }
    best.map(|(_, plan)| plan)
}

/// Most pieces a `Plan::Split` cuts its short operand into (each piece adds
/// a pass of the add kernel over the rest of the result).
const MAX_PIECES: usize = 16;

/// `product_plan` without `Plan::Split`, with its cost: None when no
/// transform is long enough.
fn base_plan(un: usize, vn: usize) -> Option<(f64, Plan)> {
    let (long, short) = (un.max(vn), un.min(vn));
    let whole = transform_shape(un + vn);
    let mut best = (whole.log_n <= MAX_LOG).then(|| (3.0 * transform_cost(whole), Plan::Whole(whole)));
    if long >= 2 * short {
        for k in [2, 4, 8, 16, 32] {
            let shape = transform_shape((k * short).max(MIN_CHUNK_LIMBS));
            let chunk = (shape.len() / COEFS_PER_LIMB).saturating_sub(short);
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
    best
}

/// Device bytes one product of `un` x `vn` limbs needs (0 when it cannot run
/// on the device).
pub fn device_bytes(un: usize, vn: usize) -> usize {
    let element = PRIMES * 4;
    // The add kernel's tile states, for the carries.
    let states = 4 * (un + vn).div_ceil(1024);
    match product_plan(un, vn) {
        // Two transforms, the folded limbs and their carries.
        Some(Plan::Whole(shape)) => 2 * element * shape.len() + 16 * (un + vn) + states,
        // The short operand's transform and a chunk's, a chunk product's
        // limbs and carries, the result.
        Some(Plan::Chunked { shape, chunk }) => 2 * element * shape.len() + 16 * (chunk + un.min(vn)) + 8 * (un + vn) + states,
        // The result, and one piece's product (the first, the longest) by
        // its own plan at a time.
        Some(Plan::Split { pieces }) => 8 * (un + vn) + states + device_bytes(un.max(vn), un.min(vn).div_ceil(pieces)),
        None => 0,
    }
}

/// Largest tile of cugmp_ntt_pass: 2^14 elements, 64 KiB of shared memory
/// (two passes for every transform up to the longest; 2^13 took three at 2^25).
pub(super) const TILE_LOG: u32 = 14;
/// The stage roots' table has 2^ROOT_LOG words a direction, roots of order
/// up to 2^ROOT_LOG by level (NTT_ROOT_LOG, NTT_ROOTS).
const ROOT_LOG: u32 = 14;
/// Products whose buffers take at most this much skip the free-memory query.
const SMALL_PRODUCT_BYTES: usize = 64 << 20;

/// Tile (log2 of the elements a block holds) for a transform of 2^log_n:
/// the largest, except that a small transform takes smaller tiles so each
/// pass has at least 2^6 blocks a prime (3 * 64 blocks for the H200's 132
/// SMs: with 2^14-element tiles a 10^5-limb product had 48 blocks a pass and
/// took 0.233 ms against 0.197 ms with 96), but never below 2^10 (then more
/// passes would cost more launches than the blocks gain).
pub fn tile_log(log_n: u32) -> u32 {
    log_n.saturating_sub(6).clamp(10, TILE_LOG).min(log_n)
}

/// The forward transform's passes for length 2^log_n, in order, as
/// (log2 of the smallest span, stages). The inverse runs them in reverse.
/// The last pass (span 1 up: whole contiguous groups) takes up to a whole
/// tile's stages; every other pass at most 2^(tile - 2) elements a group, so
/// a block takes at least 4 consecutive residues: whole 32-byte sectors.
pub fn passes(log_n: u32) -> Vec<(u32, u32)> {
    passes_in_tiles(log_n, tile_log(log_n))
}

/// Threads of a pass's block for tiles of 2^log_t elements: a quarter of the
/// tile, 32 to 512 (cuda/ntt.cu's ntt_group_log sizes a round's groups by
/// it; `__launch_bounds__(512, 3)` there).
fn pass_threads(log_t: u32) -> u32 {
    ((1u32 << log_t) / 4).clamp(32, 512)
}

/// `passes` with tiles of 2^log_t elements.
fn passes_in_tiles(log_n: u32, log_t: u32) -> Vec<(u32, u32)> {
    let last = log_n.min(log_t);
    let mut rest = log_n - last;
    // (A transform of one tile or less has no other pass.)
    let mut count = if rest == 0 { 0 } else { rest.div_ceil(log_t - 2) };
    let mut out = Vec::new();
    let mut span_log = log_n;
    while count > 0 {
        let k = rest.div_ceil(count);
        span_log -= k;
        out.push((span_log, k));
        rest -= k;
        count -= 1;
    }
    out.push((0, last));
    out
}

/// Twiddle tables of one transform length (cuda/ntt.cu, cugmp_ntt_tables),
/// one a prime.
struct Table {
    shape: Shape,
    h: u32,
    words: CudaSlice<u32>,
}

/// Words of one prime's table (NTT_TABLE_STRIDE).
fn table_len(shape: Shape, h: u32) -> usize {
    let m = 1usize << (shape.log_n - h);
    let base = 2 * (1usize << ROOT_LOG) + 2 * (1usize << h) + 2 * m + 1;
    base + if shape.radix == 3 { 2 * (1usize << h) + 4 * m + 2 } else { 0 }
}

/// The tables built so far, one per transform length, kept for the life of
/// the context (3 * (2^15 + 2^(log_n/2 + 2)) words each: at most a few MiB).
#[derive(Default)]
pub(super) struct Tables(Mutex<Vec<Arc<Table>>>);

/// Largest product one transform allows (cuda/ntt.cu): 3 * 2^25 >= 2 * limbs.
#[cfg(test)]
const MAX_PRODUCT_LIMBS: usize = 3 << (MAX_LOG - 1);

fn check_bounds(un: usize, vn: usize) -> Result<Plan, GpuError> {
    product_plan(un, vn).ok_or(GpuError::TooLarge)
}

/// Device memory traffic of one product (un x vn limbs, or a square), in
/// bytes, as the kernels are written now: each pass reads and writes the
/// whole transform once, except that the first forward pass reads limbs
/// (twiddle-table reads, cache hits, not counted). For reporting against the
/// memory bandwidth.
pub fn bytes_moved(un: usize, vn: usize, squaring: bool) -> u64 {
    let shape = transform_shape(un + vn);
    let n = shape.len() as u64;
    // The radix-3 step is one more pass each way, and it cuts the limbs.
    let later_passes = passes(shape.log_n).len() as u64 - 1 + (shape.radix == 3) as u64;
    // One element: a coefficient's three residues.
    let e = 4 * PRIMES as u64;
    let forward = |limbs: usize| 8 * limbs as u64 + e * n + later_passes * 2 * e * n;
    let forwards = if squaring { forward(un) } else { forward(un) + forward(vn) };
    // The first inverse pass reads both transforms (one when squaring).
    let pointwise = if squaring { 0 } else { e * n };
    let inverse = (later_passes + 1) * 2 * e * n;
    let combine = e * n + 16 * (un + vn) as u64; // coefficients in, limbs and carries out
    let carry = 24 * (un + vn) as u64;
    forwards + pointwise + inverse + combine + carry
}

/// A product's second operand, as it reaches `product_dev`.
#[derive(Clone, Copy)]
pub(super) enum Second<'a> {
    /// None: the product is a square (one forward transform).
    Square,
    /// Already in device memory: its address and limb count.
    At(u64, usize),
    /// Still in host memory: uploaded on the upload stream while the
    /// first operand's forward transform runs (`forward_second`).
    Host(&'a [u64]),
}

impl Second<'_> {
    /// Its limb count (`un`, the first operand's, for a square).
    fn limbs(&self, un: usize) -> usize {
        match *self {
            Second::Square => un,
            Second::At(_, vn) => vn,
            Second::Host(x) => x.len(),
        }
    }
}

/// Second operands from this many limbs are uploaded beside the first
/// operand's transform, where smaller ones go before it (the extra event
/// record and wait cost microseconds, the overlap saves up to the upload's
/// time). Measured on the H100 (RESULTS.md, seventh session): 10^7 x 10^7
/// limbs 20.8 and 21.2 ms against 27.2 and 23.2 ms without, 10^6 2.54 and
/// 2.83 against 2.82 and 3.03 ms; at 10^5 no difference above the noise.
/// The bound itself is not tuned.
const OVERLAP_MIN_LIMBS: usize = 1 << 16;

/// A device buffer allocated and filled on the upload stream and read on the
/// main stream: on drop, the upload stream waits for the main stream's work
/// so far before the buffer is freed (stream-ordered, on the upload stream),
/// so the memory is never reused while a queued kernel still reads it.
struct Beside {
    buf: Option<CudaSlice<u64>>,
    main: Arc<CudaStream>,
    side: Arc<CudaStream>,
}

impl Drop for Beside {
    fn drop(&mut self) {
        let ordered = self.main.record_event(None).and_then(|done| self.side.wait(&done));
        if ordered.is_err() {
            // No event: wait for the main stream outright before the free.
            let _ = self.main.synchronize();
        }
        drop(self.buf.take());
    }
}

/// A claim on the device memory one product takes (TooLarge, so the CPU
/// does it, when the device or CUGMP_GPU_MEM_LIMIT lacks it), after the
/// fault switches had their say.
fn claim(bytes: usize) -> Result<super::Reservation, GpuError> {
    // Asking the driver costs a call; a product this small fails over to
    // the CPU just as well if its allocations do.
    if bytes > SMALL_PRODUCT_BYTES {
        let (free, _) = cudarc::driver::result::mem_get_info()?;
        // Leave a tenth of the free memory to others.
        if bytes > free / 10 * 9 {
            return Err(GpuError::TooLarge);
        }
    }
    let reservation = super::reserve(bytes)?;
    injected(Fault::GpuOom, "gpu-oom")?;
    injected(Fault::GpuLaunch, "gpu-launch")?;
    Ok(reservation)
}

impl Gpu {
    /// `out = u * v mod (B^n - 1)`, n = `out.len()` with a `cyclic_shape`,
    /// `u` and `v` non-empty and at most n limbs (the same slice twice
    /// squares), by one cyclic convolution of length 2n: no full product,
    /// no fold. A nonzero multiple of B^n - 1 comes out as B^n - 1, never 0
    /// (the coefficients are sums of non-negative terms, not all zero, so
    /// t + c >= 1 below). On an error `out` holds anything.
    pub fn mulmod_bnm1_into(&self, u: &[u64], v: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        let (un, vn, rn) = (u.len(), v.len(), out.len());
        assert!(un > 0 && vn > 0 && un <= rn && vn <= rn, "mulmod_bnm1_into takes operands of 1 to n limbs");
        let shape = cyclic_shape(rn).ok_or(GpuError::TooLarge)?;
        let compute = |stream: &Arc<CudaStream>, du: &CudaSlice<u64>, v: Second<'_>| {
            let _claim = claim(cyclic_device_bytes(shape, rn))?;
            self.convolve(stream, shape, (super::linear::addr(du, stream), un), v, rn, true)
        };
        self.on_device(u, v, true, compute, |stream, t| self.copy_from_device_into(stream, t, out))
    }

    /// `u * v` (both non-empty, any lengths), `u.len() + v.len()` limbs, the
    /// top one possibly zero. Passing the same slice twice squares: one
    /// forward transform.
    pub fn mul(&self, u: &[u64], v: &[u64]) -> Result<Vec<u64>, GpuError> {
        self.product_then(u, v, |stream, t| self.copy_from_device(stream, t))
    }

    /// Upload `u` and `v`, compute their product on the device, and hand it
    /// to `fetch`.
    fn product_then<T>(&self, u: &[u64], v: &[u64], fetch: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>) -> Result<T, GpuError>) -> Result<T, GpuError> {
        let un = u.len();
        let plan = check_bounds(un, v.len())?;
        // A whole product's second operand goes up during the first's
        // forward transform (the other plans transform the short operand
        // first, whichever it is: both go up before).
        let overlap = matches!(plan, Plan::Whole(_));
        self.on_device(u, v, overlap, |stream, du, v| self.product_dev(stream, du, un, v), fetch)
    }

    /// `out = u * v`, `out` of exactly `u.len() + v.len()` limbs, written
    /// straight from the device (no intermediate host buffer). On an error
    /// `out` holds anything; the caller computes it again on the CPU.
    pub fn mul_into(&self, u: &[u64], v: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        assert!(out.len() == u.len() + v.len(), "mul_into takes room for exactly the product");
        self.product_then(u, v, |stream, t| self.copy_from_device_into(stream, t, out))
    }

    /// Upload `u` and `v` (`v` not at all when it is `u`: a square; with
    /// `overlap` perhaps beside `compute`'s first transform, see
    /// `second_operand`), `compute` from them a result on the device, and
    /// hand it to `fetch`.
    fn on_device<T>(
        &self,
        u: &[u64],
        v: &[u64],
        overlap: bool,
        compute: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>, Second<'_>) -> Result<CudaSlice<u64>, GpuError>,
        fetch: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        let (un, vn) = (u.len(), v.len());
        assert!(un > 0 && vn > 0, "products take non-empty operands");
        let squaring = std::ptr::eq(u, v);
        super::guarded(|| {
            let stream = self.stream();
            // CUGMP_LOG: the time of each phase (synchronising after each,
            // which only the log does).
            let phases = crate::config::get().log.then(std::time::Instant::now);
            let lap = |what: &str| -> Result<(), GpuError> {
                if let Some(t0) = phases {
                    stream.synchronize()?;
                    crate::config::log!("mul {un}x{vn}: {what} done at {:.3} ms", t0.elapsed().as_secs_f64() * 1e3);
                }
                Ok(())
            };
            let du = self.copy_to_device(&stream, u)?;
            let mut slot = None;
            let v = self.second_operand(&stream, v, squaring, overlap, &mut slot)?;
            lap("upload")?;
            let t = compute(&stream, &du, v)?;
            lap("product")?;
            let out = fetch(&stream, &t)?;
            lap("download")?;
            Ok(out)
        })
    }

    /// `v` as `product_dev` takes it: `Second::Host` where it pays to upload
    /// it beside the first operand's transform (`overlap`: the caller's plan
    /// allows it; a large operand; an upload stream), else uploaded now into
    /// `slot`.
    fn second_operand<'a>(&self, stream: &Arc<CudaStream>, v: &'a [u64], squaring: bool, overlap: bool, slot: &'a mut Option<CudaSlice<u64>>) -> Result<Second<'a>, GpuError> {
        if squaring {
            return Ok(Second::Square);
        }
        if overlap && v.len() >= OVERLAP_MIN_LIMBS && self.upload.is_some() {
            return Ok(Second::Host(v));
        }
        let d = slot.insert(self.copy_to_device(stream, v)?);
        Ok(Second::At(super::linear::addr(d, stream), v.len()))
    }

    /// The forward transform of the second operand (None for a square). A
    /// host operand is uploaded on the upload stream now, while the main
    /// stream runs what was queued before (the first operand's transform).
    fn forward_second(&self, stream: &Arc<CudaStream>, table: &Table, v: Second<'_>) -> Result<Option<CudaSlice<u32>>, GpuError> {
        match v {
            Second::Square => Ok(None),
            Second::At(vp, vn) => Ok(Some(self.forward(stream, table, vp, vn)?)),
            Second::Host(x) => {
                let Some(side) = self.upload.as_ref() else {
                    let d = self.copy_to_device(stream, x)?;
                    return Ok(Some(self.forward(stream, table, super::linear::addr(&d, stream), x.len())?));
                };
                let beside = Beside { buf: Some(self.copy_to_device(side, x)?), main: stream.clone(), side: side.clone() };
                // The large copies were waited for on the host already; the
                // driver's own path for small ones may not have been.
                stream.wait(&side.record_event(None)?)?;
                let d = beside.buf.as_ref().ok_or(GpuError::TooLarge)?;
                Ok(Some(self.forward(stream, table, super::linear::addr(d, stream), x.len())?))
                // `beside` drops here, after the transform that reads it is queued.
            }
        }
    }

    /// The product of device operand `u` (`un` limbs) and `v`, `un + vn`
    /// limbs on the device.
    pub(super) fn product_dev(&self, stream: &Arc<CudaStream>, u: &CudaSlice<u64>, un: usize, v: Second<'_>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.limbs(un);
        let plan = check_bounds(un, vn)?;
        let _claim = claim(device_bytes(un, vn))?;
        self.product_at(stream, plan, (super::linear::addr(u, stream), un), v)
    }

    /// `product_dev` by `plan`, on device addresses and limb counts.
    fn product_at(&self, stream: &Arc<CudaStream>, plan: Plan, (up, un): (u64, usize), v: Second<'_>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.limbs(un);
        if let Plan::Whole(shape) = plan {
            return self.convolve(stream, shape, (up, un), v, un + vn, false);
        }
        // Chunked and split products transform the short operand (or its
        // pieces) first, whichever it is: both go on the device first.
        let mut slot = None;
        let vp = match v {
            Second::At(vp, _) => vp,
            Second::Host(x) => super::linear::addr(slot.insert(self.copy_to_device(stream, x)?), stream),
            Second::Square => up,
        };
        let ((lp, ln), (sp, sn)) = if un >= vn { ((up, un), (vp, vn)) } else { ((vp, vn), (up, un)) };
        match plan {
            Plan::Split { pieces } => self.product_split(stream, pieces, (lp, ln), (sp, sn)),
            Plan::Chunked { shape, chunk } if !matches!(v, Second::Square) => self.product_chunked(stream, shape, chunk, (lp, ln), (sp, sn)),
            // A square is never chunked (its operands have one length).
            _ => Err(GpuError::TooLarge),
        }
    }

    /// The `limbs` limbs of the convolution by transforms of `shape` of the
    /// limbs at device address `u` and `v` (`Second::Square`: `u` squared,
    /// one forward transform): a product, or with `wrap` a product mod
    /// B^limbs - 1 (`to_limbs_with`).
    fn convolve(&self, stream: &Arc<CudaStream>, shape: Shape, (up, un): (u64, usize), v: Second<'_>, limbs: usize, wrap: bool) -> Result<CudaSlice<u64>, GpuError> {
        let table = self.table(stream, shape)?;
        let a = self.forward(stream, &table, up, un)?;
        let b = self.forward_second(stream, &table, v)?;
        // The pointwise product happens in the inverse's first pass.
        let a = self.inverse_of_product(stream, &table, a, b.as_ref())?;
        self.to_limbs_with(stream, &table, &a, limbs, wrap)
    }

    /// `long * short` (device addresses and limb counts) by `Plan::Split`:
    /// the short operand in `pieces` pieces, each piece's product with the
    /// long one (its own plan, whole or chunked) added into the result at
    /// its offset, the carry running to the top (the sum so far is below
    /// B^(ln + sn), so never past it).
    fn product_split(&self, stream: &Arc<CudaStream>, pieces: usize, long: (u64, usize), short: (u64, usize)) -> Result<CudaSlice<u64>, GpuError> {
        let ((lp, ln), (sp, sn)) = (long, short);
        let piece = sn.div_ceil(pieces);
        let r = stream.alloc_zeros::<u64>(ln + sn)?;
        let rp = super::linear::addr(&r, stream);
        for offset in (0..sn).step_by(piece) {
            let pn = piece.min(sn - offset);
            let (_, plan) = base_plan(ln, pn).ok_or(GpuError::TooLarge)?;
            let p = self.product_at(stream, plan, (lp, ln), Second::At(sp + 8 * offset as u64, pn))?;
            let at = rp + 8 * offset as u64;
            self.addsub_dev(stream, false, at, at, ln + sn - offset, super::linear::addr(&p, stream), ln + pn, 0)?;
        }
        Ok(r)
    }

    /// `long * short` (device addresses and limb counts) by `Plan::Chunked`.
    fn product_chunked(&self, stream: &Arc<CudaStream>, shape: Shape, chunk: usize, long: (u64, usize), short: (u64, usize)) -> Result<CudaSlice<u64>, GpuError> {
        let ((lp, ln), (sp, sn)) = (long, short);
        let table = self.table(stream, shape)?;
        let b = self.forward(stream, &table, sp, sn)?;
        // Zeros: each chunk product lands on the top of the one before it
        // and on zeros above that.
        let r = stream.alloc_zeros::<u64>(ln + sn)?;
        let rp = super::linear::addr(&r, stream);
        for offset in (0..ln).step_by(chunk) {
            let cn = chunk.min(ln - offset);
            let a = self.forward(stream, &table, lp + 8 * offset as u64, cn)?;
            let a = self.inverse_of_product(stream, &table, a, Some(&b))?;
            let p = self.to_limbs(stream, &table, &a, cn + sn)?;
            // r[offset .. offset + cn + sn) += p: the partial sum is a product
            // of a prefix of `long` by `short`, so there is no carry out.
            let at = rp + 8 * offset as u64;
            self.addsub_dev(stream, false, at, at, cn + sn, super::linear::addr(&p, stream), cn + sn, 0)?;
        }
        Ok(r)
    }

    /// The `limbs` limbs of a product from its inverse transform `a`: the
    /// CRT and the fold into limbs (combine kernel), then the carries (add
    /// kernel).
    fn to_limbs(&self, stream: &Arc<CudaStream>, table: &Table, a: &CudaSlice<u32>, limbs: usize) -> Result<CudaSlice<u64>, GpuError> {
        self.to_limbs_with(stream, table, a, limbs, false)
    }

    /// `to_limbs`, or with `wrap` the `limbs` limbs of a product mod
    /// B^limbs - 1 from its cyclic convolution (cuda/ntt.cu,
    /// ntt_combine_at): t + c, whose carry out (in one more limb of t) is
    /// worth 1 and goes back in at the bottom. t + c < 2 B^limbs, so after
    /// that the sum is below B^limbs: no carry out of the second add.
    fn to_limbs_with(&self, stream: &Arc<CudaStream>, table: &Table, a: &CudaSlice<u32>, limbs: usize, wrap: bool) -> Result<CudaSlice<u64>, GpuError> {
        let (n_len, n) = (table.shape.len() as u64, limbs as u64);
        // The combine kernel writes every limb of both; the add kernel the
        // carry limb.
        let mut t = unsafe { stream.alloc::<u64>(limbs + wrap as usize) }?;
        let mut c = unsafe { stream.alloc::<u64>(limbs) }?;
        let wrap_flag = wrap as u32;
        launch!(self, stream, ntt_combine, limbs, &mut t, &mut c, a, &n_len, &n, &wrap_flag);
        if wrap {
            let (tp, cp) = (super::linear::addr(&t, stream), super::linear::addr(&c, stream));
            let top = tp + 8 * n;
            self.addsub_dev(stream, false, tp, tp, limbs, cp, limbs, top)?;
            self.addsub_dev(stream, false, tp, tp, limbs, top, 1, 0)?;
        } else {
            self.add_in_place(stream, &mut t, &c, limbs)?;
        }
        Ok(t)
    }

    /// The twiddle tables for transforms of `shape`, built on first use.
    fn table(&self, stream: &Arc<CudaStream>, shape: Shape) -> Result<Arc<Table>, GpuError> {
        let mut tables = self.tables.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.iter().find(|t| t.shape == shape) {
            return Ok(t.clone());
        }
        let h = shape.log_n.div_ceil(2);
        let len = PRIMES * table_len(shape, h);
        // The kernel writes every word.
        let mut words = unsafe { stream.alloc::<u32>(len) }?;
        launch!(self, stream, ntt_tables, len, &mut words, &shape.log_n, &h, &shape.radix);
        let table = Arc::new(Table { shape, h, words });
        tables.push(table.clone());
        Ok(table)
    }

    /// The forward transform of the `xn` limbs at device address `limbs`
    /// (radix blocks, each bit-reversed), cut into coefficients by the
    /// radix-3 step or else the first pass.
    fn forward(&self, stream: &Arc<CudaStream>, table: &Table, limbs: u64, xn: usize) -> Result<CudaSlice<u32>, GpuError> {
        // The radix-3 step or the first pass writes every element.
        let mut a = unsafe { stream.alloc::<u32>(PRIMES * table.shape.len()) }?;
        let xn = xn as u64;
        if table.shape.radix == 3 {
            self.radix3(stream, table, &mut a, limbs, xn, false)?;
            self.passes(stream, table, &mut a, false, (0, 0, 0))?;
        } else {
            self.passes(stream, table, &mut a, false, (limbs, xn, 0))?;
        }
        Ok(a)
    }

    /// The radix-3 step over all three primes (cuda/ntt.cu, cugmp_ntt_radix3).
    fn radix3(&self, stream: &Arc<CudaStream>, table: &Table, a: &mut CudaSlice<u32>, limbs: u64, xn: u64, inverse: bool) -> Result<(), GpuError> {
        let inverse = inverse as u32;
        let log_n = table.shape.log_n;
        launch!(self, stream, ntt_radix3, 1usize << log_n, &mut *a, &limbs, &xn, &table.words, &log_n, &table.h, &inverse);
        Ok(())
    }

    /// The inverse transform (natural order out) of `a * b` (`b` None:
    /// `a * a`), `a` and `b` forward transforms, in a.
    fn inverse_of_product(&self, stream: &Arc<CudaStream>, table: &Table, mut a: CudaSlice<u32>, b: Option<&CudaSlice<u32>>) -> Result<CudaSlice<u32>, GpuError> {
        let b = match b {
            Some(b) => b.device_ptr(stream).0,
            None => a.device_ptr(stream).0,
        };
        self.passes(stream, table, &mut a, true, (0, 0, b))?;
        if table.shape.radix == 3 {
            self.radix3(stream, table, &mut a, 0, 0, true)?;
        }
        Ok(a)
    }

    /// Run the passes of the length-2^log_n transforms over `a` (all three
    /// primes, all radix blocks); the first pass gets `first` = (limbs, limb
    /// count, b) (cuda/ntt.cu, cugmp_ntt_pass), the others read `a` alone.
    fn passes(&self, stream: &Arc<CudaStream>, table: &Table, a: &mut CudaSlice<u32>, inverse: bool, first: (u64, u64, u64)) -> Result<(), GpuError> {
        let (log_n, radix) = (table.shape.log_n, table.shape.radix);
        let mut plan = passes(log_n);
        if inverse {
            plan.reverse();
        }
        let log_t = tile_log(log_n);
        let tile = 1usize << log_t;
        let blocks = ((1usize << log_n) / tile) as u32;
        let threads = pass_threads(log_t);
        let cfg = LaunchConfig { grid_dim: (blocks, PRIMES as u32 * radix, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 4 * tile as u32 };
        let inverse = inverse as u32;
        for (i, &(log_s, k)) in plan.iter().enumerate() {
            let (limbs, xn, b) = if i == 0 { first } else { (0, 0, 0) };
            launch_with!(self, stream, ntt_pass, cfg, &mut *a, &limbs, &xn, &b, &table.words, &log_n, &table.h, &log_t, &log_s, &k, &inverse, &radix);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels' own code (cuda/ntt.cu, compiled as host C++ by
    /// c_tests/ntt_model.cpp) on the CPU, block by block and thread by
    /// thread (as many threads as the GPU launches), with this
    /// module's pass plan, against the embedded GMP: tables, both
    /// transforms, the pointwise product, the CRT, the fold into limbs, on
    /// machines without a GPU. Products against GMP's mpn_mul; products mod
    /// B^rn - 1 (one cyclic convolution of 2 rn points) against GMP's own
    /// mpn_mulmod_bnm1 / mpn_sqrmod_bnm1, representation of zero included.
    #[test]
    fn host_model_matches_gmp() {
        let dir = std::env::temp_dir().join(format!("cugmp-ntt-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("ntt_model");
        let root = env!("CARGO_MANIFEST_DIR");
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = std::process::Command::new(&cxx)
            .args(["-O2", "-std=c++17", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o"])
            .arg(&exe)
            .arg(format!("{root}/c_tests/ntt_model.cpp"))
            .status()
            .unwrap();
        assert!(built.success(), "{cxx} failed on c_tests/ntt_model.cpp");

        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        // (un, vn, square, tile, modulus). Sizes: one tile, one and two
        // passes, lengths 2^k and 3 * 2^k, unbalanced; every other case
        // all-ones operands, which give the largest coefficients (and, mod
        // B^rn - 1 with un = rn, a product in the class of zero). A tile
        // given (log2) replaces the host's choice: 2^10 tiles at 2^19 make
        // three passes, the only way a pass that neither cuts limbs nor
        // multiplies pointwise runs (2^14 tiles take every transform up to
        // the longest in two passes). Tiles of 2^13
        // and 2^14 (the last two cases) are the only ones where a thread
        // takes more than one batch of NTT_BATCH elements.
        type Case = (usize, usize, bool, Option<u32>, Option<usize>);
        let cases: [Case; 21] = [
            (1, 1, false, None, None),
            (3, 2, false, None, None),
            (5, 5, true, None, None),
            (100, 37, false, None, None),
            (2047, 2049, false, None, None),
            (3000, 3000, true, None, None),
            (20000, 3, false, None, None),
            (70000, 61000, false, None, None),
            (110000, 100000, false, Some(10), None),
            (400000, 200000, false, Some(10), None),
            (70000, 70000, true, Some(11), None),
            (48, 30, false, None, Some(48)),
            (64, 64, false, None, Some(64)),
            (1536, 1000, false, None, Some(1536)),
            (1024, 1024, true, None, Some(1024)),
            (3 << 12, (3 << 11) + 5, false, None, Some(3 << 12)),
            (1 << 15, (1 << 14) + 3, false, Some(10), Some(1 << 15)),
            (3 << 14, 3 << 14, true, None, Some(3 << 14)),
            (40000, 30000, false, Some(10), Some(3 << 14)),
            (300000, 230000, false, None, None),
            (250000, 240000, false, None, None),
        ];
        let mut radices = Vec::new();
        for (i, &(un, vn, square, tile, modulus)) in cases.iter().enumerate() {
            let ones = i % 2 == 1;
            let mut limb = || if ones { u64::MAX } else { random() };
            let u: Vec<u64> = (0..un).map(|_| limb()).collect();
            let v: Vec<u64> = if square { u.clone() } else { (0..vn).map(|_| limb()).collect() };
            let (shape, n) = match modulus {
                Some(rn) => (cyclic_shape(rn).expect("a cyclic length"), rn),
                None => (transform_shape(un + vn), un + vn),
            };
            let log_n = shape.log_n;
            radices.push(shape.radix);
            let log_t = tile.unwrap_or(tile_log(log_n));
            let plan = passes_in_tiles(log_n, log_t);
            if tile.is_some() && modulus.is_none() {
                assert_eq!(plan.len(), if log_t == 10 { 3 } else { 2 }, "{un}x{vn}: {plan:?}");
            }
            let mut input = format!("{log_n} {} {log_t} {} {} {}\n", log_n.div_ceil(2), pass_threads(log_t), shape.radix, plan.len());
            for (log_s, k) in &plan {
                input += &format!("{log_s} {k}\n");
            }
            input += &format!("{n} {}\n", modulus.is_some() as u32);
            let hex = |x: &[u64]| x.iter().map(|l| format!("{l:x}")).collect::<Vec<_>>().join(" ");
            input += &format!("{un}\n{}\n", hex(&u));
            input += &if square { "0\n".to_string() } else { format!("{vn}\n{}\n", hex(&v)) };
            let mut child = std::process::Command::new(&exe).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
            std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "model failed on {un}x{vn} mod {modulus:?}: {:?}", out.status);
            let got: Vec<u64> = String::from_utf8(out.stdout).unwrap().split_whitespace().map(|w| u64::from_str_radix(w, 16).unwrap()).collect();

            let mut want = vec![0u64; n];
            let (a, b) = if un >= vn { (&u, &v) } else { (&v, &u) };
            let (ap, an, bp, bn) = (a.as_ptr(), a.len() as _, b.as_ptr(), b.len() as _);
            match modulus {
                None => unsafe { crate::cpu::mpn_mul(want.as_mut_ptr(), ap, an, bp, bn) },
                Some(rn) => {
                    // GMP's scratch for these: at most 2 rn + 4 limbs.
                    let mut scratch = vec![0u64; 2 * rn + 8];
                    let (wp, tp) = (want.as_mut_ptr(), scratch.as_mut_ptr());
                    if square {
                        unsafe { crate::cpu::mpn_sqrmod_bnm1(wp, rn as _, ap, an, tp) };
                    } else {
                        unsafe { crate::cpu::mpn_mulmod_bnm1(wp, rn as _, ap, an, bp, bn, tp) };
                    }
                    0
                }
            };
            assert!(want.iter().any(|&l| l != 0));
            assert!(got == want, "model differs from GMP at {un}x{vn} mod {modulus:?} ({shape:?}, passes {plan:?})");
        }
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(radices, [1, 3, 3, 3, 1, 3, 3, 1, 1, 3, 3, 3, 1, 3, 1, 3, 1, 3, 3, 3, 1], "the cases above should cover both radices");
    }

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
        }
    }

    #[test]
    fn plans_fit_their_transforms() {
        let sizes = [1usize, 7, 1000, 4096, 100_000, 1_000_000, 10_000_000, 100_000_000, 200_000_000];
        for &un in &sizes {
            for &vn in &sizes {
                let plan = product_plan(un, vn);
                match plan {
                    Some(Plan::Whole(shape)) => assert!(shape.log_n <= MAX_LOG && shape.len() >= COEFS_PER_LIMB * (un + vn)),
                    Some(Plan::Chunked { shape, chunk }) => {
                        let (long, short) = (un.max(vn), un.min(vn));
                        assert!(shape.log_n <= MAX_LOG && chunk >= 1 && chunk < long, "{un}x{vn}: {plan:?}");
                        // No chunk product wraps around.
                        assert!(shape.len() >= COEFS_PER_LIMB * (chunk + short), "{un}x{vn}: {plan:?}");
                    }
                    Some(Plan::Split { pieces }) => {
                        let (long, short) = (un.max(vn), un.min(vn));
                        // Only past the longest transform, and every piece has a plan of its own.
                        assert!(base_plan(un, vn).is_none() && (2..=MAX_PIECES).contains(&pieces), "{un}x{vn}: {plan:?}");
                        assert!(matches!(base_plan(long, short.div_ceil(pieces)), Some((_, Plan::Whole(_) | Plan::Chunked { .. }))));
                        assert!(device_bytes(un, vn) > 8 * (un + vn));
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
        // Balanced products past the longest transform go in pieces.
        assert!(matches!(product_plan(200_000_000, 100_000_000), Some(Plan::Split { .. })));
        assert!(matches!(product_plan(1 << 25, 1 << 25), Some(Plan::Split { pieces: 2 })), "{:?}", product_plan(1 << 25, 1 << 25));
        assert!(matches!(product_plan(MAX_PRODUCT_LIMBS / 2, MAX_PRODUCT_LIMBS / 2), Some(Plan::Whole(_))));
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
        assert_eq!((cyclic_size(1000), cyclic_size(1025), cyclic_size(1537)), (Some(1024), Some(1536), Some(2048)));
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
        assert_eq!(transform_shape(20_000_000), Shape { log_n: 24, radix: 3 });
    }
}
