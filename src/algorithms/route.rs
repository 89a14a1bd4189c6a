//! The routing policy: from an operation, its operands' size, `CUGMP_GPU`
//! and the measured thresholds, which engine computes it. Sizes in, an
//! engine out: nothing here computes, copies or counts bytes.
//!
//! Every routed export first asks [`cpu_only`]: below the size from which
//! anything but the embedded GMP could happen, it calls GMP at once. That
//! keeps a call below the GPU's thresholds, or with the GPU off or absent,
//! at GMP's cost.
//!
//! GMP's own algorithms make their products through the hooks; a thread
//! that computes a CPU reference under `CUGMP_CHECK` holds those on its CPU
//! (`cpu_reference`).

use crate::config::{self, log, GpuMode};
use crate::gpu::{self, Availability, Gpu, InFlight};
use crate::stats::{self, Op};
use crate::{helpers, parallel};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Once, OnceLock};

/// Operand size (limbs) from which `CUGMP_GPU=auto` sends `op` to the GPU, or
/// None where it never does: `measured_threshold`, unless
/// `CUGMP_GPU_FROM_MUL` or `CUGMP_GPU_FROM_INTERNAL` sets the products'.
pub fn auto_threshold(op: Op) -> Option<usize> {
    let cfg = config::get();
    match op {
        Op::Mul if cfg.gpu_from_mul.is_some() => cfg.gpu_from_mul,
        Op::Internal if cfg.gpu_from_internal.is_some() => cfg.gpu_from_internal,
        _ => measured_threshold(op),
    }
}

/// Operand size (limbs) from which the GPU was measured to beat GMP on the
/// ABI path (operands in host memory), or None where it has not been. Every
/// entry comes from a measurement on the GPU machine, in RESULTS.md's
/// "Thresholds" table.
fn measured_threshold(op: Op) -> Option<usize> {
    match op {
        // Products, on the shorter operand's size: since small products run
        // by columns, n x n at 768 limbs the GPU took 0.021 ms end to end
        // against the CPU engine's 0.044 on an H200's host, and pi.c at 10^8
        // digits on one thread took 8.23 and 8.15 s against 9.64 and 9.42
        // from 1024 (GMP's internal products from 768 as well; 8.38 s with
        // them from 1024); 640 was no better (RESULTS.md, "Small products
        // by columns", the threshold's table). Unbalanced products with a
        // short side below this stay on the CPU engine, whose cost there is
        // small.
        Op::Mul => Some(768),
        // GMP's internal products (division, roots, radix conversion, the
        // half-gcd), by `product_size`: since small products run on launch
        // graphs, 1024 against 2048 made sixteen threads of gcds of 5000
        // limbs 1.27x to 1.32x GMP instead of 0.93x to 1.05x, powm 2.3x to
        // 5.1x faster at 1024 to 2048 limbs and pi.c at 10^8 digits on one
        // thread 1.06x to 1.08x, and left pi.c on 16 threads within its
        // spread; 768 was no better, 512 slower (RESULTS.md, "GMP's
        // internal products from 1024 limbs").
        Op::Internal => Some(1024),
        // Radix conversion by whole-level divisions (src/algorithms/radix/to_digits.rs),
        // from its number's size: 0.99x to 1.0x GMP at 2000 limbs, 1.1x to
        // 1.3x at 5000, 2.8x at 10^4. Below, GMP's own conversion (its
        // products reach the GPU from Internal's threshold, as everywhere).
        Op::GetStr => Some(4096),
        // Radix conversion from digits by whole-level products
        // (src/algorithms/radix/from_digits.rs), from the number's size in
        // limbs: 0.96x to 1.01x GMP at 2048 and 3072 limbs, 0.99x to 1.21x
        // at 4096, 1.52x at 6144 (RESULTS.md, "Radix conversion from digits").
        Op::SetStr => Some(6144),
        // Square roots by Newton's iteration (src/algorithms/sqrt.rs), from
        // the operand's size (they also need GMP's internal products on the
        // GPU: Internal's threshold). Against GMP's root with GPU products:
        // slower at 6000 limbs, faster at 10^4; 8192 lies between.
        Op::Sqrt => Some(8192),
        // Quotients on device-resident numbers (src/algorithms/quotient.rs),
        // from the shorter of the divisor and the quotient (limbs): a 2n by
        // n division at 2048 limbs 1.60x GMP and 2.8x GMP's division with
        // GPU products, which is what runs below (RESULTS.md, "Quotients").
        Op::Div => Some(2048),
        // Factorials from their primes' exponents
        // (src/algorithms/factorial.rs), from the result's size in limbs:
        // 0.93x and 0.99x GMP at 2048 limbs, 1.00x and 1.03x at 4096, 1.23x
        // and 1.28x at 8192 (RESULTS.md, "Factorials").
        Op::Fac => Some(8192),
        // Binomial coefficients the same way, from the result's size: 0.65x
        // and 0.77x GMP at 8192 limbs, 1.05x and 1.15x at 16384, 1.40x and
        // 2.66x at 32768; below, GMP's own binomial with GPU products
        // (1.23x and 1.86x at 4096) (RESULTS.md, "Binomial coefficients").
        Op::Bin => Some(32768),
        // Add and sub, on the shorter operand's size (a sum with a short
        // operand, x += 1 on a long x, is cheap for GMP and would cost the GPU
        // every limb twice over PCIe). O(n) work on O(n) bytes that cross
        // PCIe both ways: 0.83x GMP's time for an n x n add at 10^8 limbs,
        // 0.93x at 10^7 (within the noise there), 2.3x at 10^6: only from
        // 10^8.
        Op::Add | Op::Sub => Some(100_000_000),
        // A powm batch, by the number of items the GPU's kernels take (an
        // item of a block kernel counting 4 or 8, src/algorithms/batch.rs):
        // against GMP on 16 cores 1.01x at 256 items of 2048 bits, 4.48x at
        // 1024 (4.82x, 4.64x and 1.10x at 256, 1024 and 4096 bits), 18x at
        // 4096 (RESULTS.md, "Batches").
        Op::PowmBatch => Some(1024),
        // Binary polynomials by the additive FFT, on the shorter one's
        // limbs: against the CPU engine 0.38x at 2^14 bits (256 limbs),
        // 0.80x at 2^15, 1.74x at 2^16 (RESULTS.md, "Binary polynomials").
        Op::Gf2x => Some(1024),
        // Shifts and logic: no faster than GMP end to end at any size
        // measured (0.99x at 10^8 limbs): CPU.
        _ => None,
    }
}

/// Under `CUGMP_GPU=force`, the smallest of GMP's internal products (shorter
/// operand, limbs) sent to the GPU.
const FORCE_INTERNAL_MIN: usize = 64;

/// The smallest operand (limbs) `CUGMP_GPU` and the thresholds send `op` to
/// the GPU from (when there is one); usize::MAX for never.
fn gpu_from(op: Op) -> usize {
    let cfg = config::get();
    match cfg.gpu {
        GpuMode::Off => usize::MAX,
        // GMP's own algorithms make a great many small products (its
        // mulmod_bnm1 recursion bottoms out near 16 limbs): under force
        // those from FORCE_INTERNAL_MIN limbs go to the GPU, which keeps
        // GMP's test suite under force within its time.
        GpuMode::Force if op == Op::Internal => FORCE_INTERNAL_MIN.max(cfg.force_min_limbs),
        GpuMode::Force => cfg.force_min_limbs,
        GpuMode::Auto => auto_threshold(op).unwrap_or(usize::MAX),
    }
}

/// Whether `CUGMP_GPU` and the thresholds send `op` on `limbs` limbs to the
/// GPU (when there is one): from a size up, never down again.
pub fn gpu_wanted(op: Op, limbs: usize) -> bool {
    limbs >= gpu_from(op)
}

/// Per operation, the operand size (limbs) from which a call takes the slow
/// path (`route`): `gpu_from`, or 0 while `settle` has not run or where
/// every call must pass through `route` (CUGMP_STATS counts CPU calls,
/// CUGMP_PROFILE times them, CUGMP_LOG logs them, CUGMP_FAULT corrupts or
/// fails them); usize::MAX
/// once no GPU can be had. Below it the caller goes straight to the
/// embedded GMP: one relaxed load and a compare, no shared write, no
/// thread-local, no configuration read (RESULTS.md, "Cost per call").
static SLOW_FROM: [AtomicUsize; Op::ALL.len()] = [const { AtomicUsize::new(0) }; Op::ALL.len()];
static SETTLED: Once = Once::new();

/// The shorter operand's size (limbs) from which an `mpz_mul` left to the
/// CPU is shared with the kept helper threads by default (`CUGMP_CPU_SHARE`
/// unset, a GPU in use, 4 cores or more): one level of Karatsuba's method,
/// three half-size products on three threads, was 1.05x GMP at 256 limbs
/// and 1.20x to 1.32x from 384 with one helper on a 2-core host
/// (RESULTS.md, "Products shared among cores").
const CPU_SHARE_FROM: usize = 256;
/// Helper threads kept for shared products (fewer where the host has fewer
/// cores to spare): two levels of Karatsuba's method hand out eight of their
/// nine products, a half-gcd's matrix product seven of its eight
/// (src/algorithms/hgcd.rs).
const CPU_SHARE_HELPERS: usize = 8;
/// The shorter operand's size from which a shared `mpz_mul` is cut twice
/// (`cpu::mul_on_cores`: up to nine products of a quarter of the size)
/// rather than once, where at least CPU_TWICE_HELPERS helpers are kept:
/// from 256 limbs to 3000 twice took 0.46 to 0.80 of once's time, at 128
/// and 192 about as long (RESULTS.md, "Products shared among cores").
const CPU_SHARE_TWICE_FROM: usize = 256;
/// Helpers below which a product is cut once only: nine parts on fewer than
/// five threads would run in two or more turns each, and two levels' sums
/// on the caller would eat what the smaller parts save (reasoned, not
/// measured: the GPU machine's hosts keep eight).
const CPU_TWICE_HELPERS: usize = 4;
/// `shared_on_cpu`'s size: usize::MAX for never.
static SHARE_FROM: AtomicUsize = AtomicUsize::new(usize::MAX);
/// `shared_twice`'s size: usize::MAX for never.
static TWICE_FROM: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The shorter side (limbs) of a half-gcd matrix step's products from which
/// the step shares them (`hgcd_shared`): GMP's gcd of 10^7 digits made a
/// million products of 32 to 63 limbs (0.84 us each on the build machine)
/// and 1.2 million of 8 to 31 (RESULTS.md, "Half-gcd steps on several
/// cores"), too short to hand to another thread.
const HGCD_SHARE_FROM: usize = 32;

/// A shared half-gcd step's products are cut in halves from this size of
/// the shorter operand (`hgcd_halves_from`). An adjustment's four products
/// are of numbers about twice as long as the matrix's entries, and with
/// eight helpers its eight halves run at once, each half the work.
const HGCD_HALVES_FROM: usize = 64;

/// The shorter operand's size from which a shared half-gcd step of `tasks`
/// products cuts them in halves (`cpu::halves_each`): `CUGMP_HGCD_HALVES`
/// where set (0: never) whatever the helpers' number, else
/// `HGCD_HALVES_FROM` where the caller and the helpers are at least as
/// many as the halves (with fewer, halves would wait for one another).
pub fn hgcd_halves_from(tasks: usize) -> Option<usize> {
    match config::get().hgcd_halves {
        Some(0) => None,
        Some(from) => Some(from),
        None => (helpers::count() + 1 >= 2 * tasks).then_some(HGCD_HALVES_FROM),
    }
}

/// Threads inside `one_sharing` now.
static SHARING: AtomicUsize = AtomicUsize::new(0);
/// The thread that last entered `one_sharing` (the address of a
/// thread-local of its own; 0 for none yet).
static LAST_SHARER: AtomicUsize = AtomicUsize::new(0);
/// When (microseconds on `clock_us`) a thread last entered
/// `one_sharing` right after another thread had; u64::MAX for never.
static MIXED_AT_US: AtomicU64 = AtomicU64::new(u64::MAX);
/// How long after two threads took turns at shareable work sharing stays
/// off: their turns come microseconds apart while both are busy, and a
/// program's last busy thread gets the helpers back after this much quiet.
const MIXED_QUIET_US: u64 = 10_000;

/// Microseconds since the first call.
fn clock_us() -> u64 {
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_micros() as u64
}

/// `f(alone)`, where `alone` says that this thread is the only one at
/// shareable work: no other thread is inside `one_sharing` now, nor has
/// one been in the last MIXED_QUIET_US. The helpers join only that thread,
/// so that a program's own threads, busy with products of their own, are
/// not joined by the helpers on the cores they use: two threads making
/// gcds of 3000 limbs on a 2-core host, each sharing its steps whenever
/// the other was not inside one, took 0.169 to 0.183 s against GMP's 0.121
/// to 0.125, and 0.124 to 0.127 with this rule (RESULTS.md, "Half-gcd
/// steps on several cores").
pub fn one_sharing<R>(f: impl FnOnce(bool) -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            SHARING.fetch_sub(1, Relaxed);
        }
    }
    thread_local!(static TOKEN: u8 = const { 0 });
    let me = TOKEN.with(|t| t as *const u8 as usize);
    let now = clock_us();
    let before = LAST_SHARER.swap(me, Relaxed);
    if before != 0 && before != me {
        MIXED_AT_US.store(now, Relaxed);
    }
    let mixed = MIXED_AT_US.load(Relaxed);
    let quiet = mixed == u64::MAX || now.saturating_sub(mixed) >= MIXED_QUIET_US;
    let alone = SHARING.fetch_add(1, Relaxed) == 0 && quiet;
    let _leave = Leave;
    f(alone)
}

/// Whether a half-gcd matrix step whose products have sides of `short` and
/// `long` limbs shares them among the helpers (src/algorithms/hgcd.rs):
/// products are shared at all (as for `mpz_mul`: `CUGMP_CPU_SHARE`, else
/// a host of 4 cores or more), a GPU serves the process (or
/// `CUGMP_CPU_SHARE` asked), GMP's allocation functions are its own (the
/// helpers run GMP's products, which may allocate), and none of the
/// products is one the GPU would take.
pub fn hgcd_shared(short: usize, long: usize) -> bool {
    short >= HGCD_SHARE_FROM
        && SHARE_FROM.load(Relaxed) != usize::MAX
        && !gpu_wanted(Op::Internal, product_size(long, short))
        && gmp_allocates_by_default()
        && (config::get().cpu_share.is_some() || gpu::opened())
}

/// The GPU where a half-gcd matrix step's products of `short` x `long`
/// limbs are made there at once, each on a slot of its own
/// (src/algorithms/hgcd.rs): by `product_size`, from the step threshold
/// (`CUGMP_GPU_FROM_STEP` under auto, else GMP's internal products'),
/// routed as one of GMP's internal products. Under force from Internal's
/// threshold there.
pub fn hgcd_step_on_gpu(short: usize, long: usize) -> Option<&'static Gpu> {
    let cfg = config::get();
    let from = match (cfg.gpu, cfg.gpu_from_step) {
        (GpuMode::Auto, Some(0)) => usize::MAX,
        (GpuMode::Auto, Some(n)) => n,
        _ => gpu_from(Op::Internal),
    };
    let size = product_size(long, short);
    if short == 0 || size < from || internal_held_on_cpu() || !gpu_serving() {
        return None;
    }
    route_wanted(Op::Internal, size, true, (long, short))
}

/// Whether a device is open and serving this process now (without starting
/// its opening or waiting for it): the half-gcd's own recursion
/// (src/algorithms/hgcd.rs) serves GPU products, and without them GMP's
/// own half-gcd is the faster.
pub fn gpu_serving() -> bool {
    gpu::opened()
}

/// The size products are shared from, as configured: CUGMP_CPU_SHARE
/// where set (0: never), else the default where a GPU may serve and the
/// host has cores to spare.
fn share_from(gpu_may_serve: bool) -> usize {
    match config::get().cpu_share {
        Some(0) => usize::MAX,
        Some(n) => n,
        None if gpu_may_serve && config::get().gpu != GpuMode::Off && parallel::cores() >= 4 => CPU_SHARE_FROM,
        None => usize::MAX,
    }
}

/// Whether an `mpz_mul` whose shorter operand has `limbs` limbs, left to the
/// CPU, is shared with the helper threads (`cpu::mul_on_cores`).
#[inline(always)]
pub fn shared_on_cpu(limbs: usize) -> bool {
    limbs >= SHARE_FROM.load(Relaxed) && gmp_allocates_by_default()
}

/// Whether a shared `mpz_mul` whose shorter operand has `limbs` limbs is
/// cut twice for the helpers (`cpu::mul_on_cores`).
#[inline(always)]
pub fn shared_twice(limbs: usize) -> bool {
    limbs >= TWICE_FROM.load(Relaxed)
}

/// Whether `op` on operands of `limbs` limbs runs on the embedded GMP with
/// nothing else to do (the fast path).
#[inline(always)]
pub fn cpu_only(op: Op, limbs: usize) -> bool {
    limbs < SLOW_FROM[op as usize].load(Relaxed)
}

/// The operand size (limbs) from which `op` takes the slow path: 0 where
/// every call does, usize::MAX where none does (`cpu_only`'s table).
#[inline(always)]
pub fn slow_from(op: Op) -> usize {
    SLOW_FROM[op as usize].load(Relaxed)
}

/// Whether every call must pass through `route` (counted, profiled,
/// logged or faulted): then no call takes the fast path.
fn every_call_routed() -> bool {
    let cfg = config::get();
    cfg.stats || cfg.profile || cfg.log || cfg.fault.is_some()
}

/// Fills the fast path's table from the configuration (once; the load-time
/// constructor calls it, and so does the first routed call).
pub fn settle() {
    SETTLED.call_once(|| {
        let every = every_call_routed();
        let share = share_from(true);
        if share != usize::MAX {
            let spare = parallel::cores().saturating_sub(1).max(1);
            let helpers = config::get().cpu_helpers.unwrap_or(CPU_SHARE_HELPERS.min(spare));
            helpers::set_helpers(helpers);
            helpers::set_step_back(config::get().cpu_step_back);
            let twice = match config::get().cpu_share_twice {
                Some(0) => usize::MAX,
                Some(n) => n,
                None if helpers >= CPU_TWICE_HELPERS => CPU_SHARE_TWICE_FROM,
                None => usize::MAX,
            };
            TWICE_FROM.store(twice.max(share), Relaxed);
        }
        SHARE_FROM.store(share, Relaxed);
        for op in Op::ALL {
            let from = if op == Op::Mul { gpu_from(op).min(share) } else { gpu_from(op) };
            SLOW_FROM[op as usize].store(if every { 0 } else { from }, Relaxed);
        }
    });
}

/// A device's opening, in microseconds: 204 to 337 ms on the GPU
/// machine's hosts (the log's "kernels loaded" line; RESULTS.md, "The
/// first large operation of a process").
const OPENING_US: f64 = 350_000.0;
/// An operation whose CPU time is estimated at more than this many
/// openings waits for the device rather than run on the CPU beside it.
const WAIT_FOR_OPENING: f64 = 3.0;

/// The GPU engine for an operation that wants it now, whose time on the
/// CPU is estimated at `cpu_us` microseconds. Under `force` the device is
/// opened on this thread if need be (every operation the GPU has must
/// reach it); under `auto` a device still being opened leaves this
/// operation to the CPU (a program's first large operation does not wait
/// for the driver), unless the operation would take several openings'
/// time there: it waits, at most half its CPU time (a process's first
/// 10^7-limb product took 4.5 to 4.8 s on the CPU beside the opening, 0.29
/// to 0.36 s waiting for it; RESULTS.md, "The first large operation of a
/// process"). None to be had widens the fast path for good.
fn engine(cpu_us: f64) -> Option<&'static Gpu> {
    if config::get().gpu == GpuMode::Force {
        let g = gpu::get();
        if g.is_none() {
            no_gpu();
        }
        return g;
    }
    let found = match gpu::available() {
        Availability::Opening if cpu_us > WAIT_FOR_OPENING * OPENING_US => {
            log!("waiting for the device's opening: about {:.0} ms of work on the CPU", cpu_us / 1e3);
            gpu::opened_within(std::time::Duration::from_micros((cpu_us / 2.0) as u64)).map_or(Availability::Opening, Availability::Ready)
        }
        other => other,
    };
    match found {
        Availability::Ready(g) => Some(g),
        Availability::Opening => None,
        Availability::Absent => {
            no_gpu();
            None
        }
    }
}

/// No GPU will serve this process (none found, or a forked child): every
/// operation's fast path widens to every size.
fn no_gpu() {
    // Products are shared among cores without a GPU only where
    // CUGMP_CPU_SHARE asks for it.
    let share = share_from(false);
    SHARE_FROM.store(share, Relaxed);
    if !every_call_routed() {
        for op in Op::ALL {
            SLOW_FROM[op as usize].store(if op == Op::Mul { share } else { usize::MAX }, Relaxed);
        }
    }
}

/// The GPU when `op` on operands of `limbs` limbs runs there; None for the
/// CPU engine (counted as a CPU call). `gpu_capable` says whether the GPU
/// engine implements this case at all. A product is taken as `limbs` x
/// `limbs` by `queue_favours_cpu`.
pub fn route(op: Op, limbs: usize, gpu_capable: bool) -> Option<&'static Gpu> {
    route_sized(op, limbs, gpu_capable, (limbs, limbs))
}

/// `route`, a product's operands being `dims` limbs long.
fn route_sized(op: Op, limbs: usize, gpu_capable: bool, dims: (usize, usize)) -> Option<&'static Gpu> {
    route_wanted(op, limbs, gpu_capable && gpu_wanted(op, limbs), dims)
}

/// `route_sized` where the thresholds' answer is `wants_gpu`.
fn route_wanted(op: Op, limbs: usize, wants_gpu: bool, dims: (usize, usize)) -> Option<&'static Gpu> {
    settle();
    let cpu_us = if matches!(op, Op::Mul | Op::Internal) { gmp_product_us(dims.0, dims.1) } else { 0.0 };
    let mut chosen = if wants_gpu { engine(cpu_us) } else { None };
    if let Some(g) = chosen.filter(|_| matches!(op, Op::Mul | Op::Internal) && config::get().gpu == GpuMode::Auto) {
        let busy = g.in_flight();
        if queue_favours_cpu(busy, dims, DELAY.now(clock_us())) {
            if busy.products == 0 {
                stats::slow_device_to_cpu();
            } else {
                stats::queued_to_cpu();
            }
            chosen = None;
        } else {
            let ticket = ROUTED.fetch_add(1, Relaxed) + 1;
            ALONE.set(if busy.products == 0 { ticket } else { 0 });
        }
    }
    if chosen.is_none() {
        stats::cpu_call(op);
    }
    log!("{} {} limbs -> {}", op.name(), limbs, if chosen.is_some() { "gpu" } else { "cpu" });
    chosen
}

/// A product's time on the GPU end to end, in microseconds: a fixed cost
/// and a cost a limb of its result. 61 us at 1024 x 1024 limbs, 2.13 ms at
/// 10^6 x 10^6 (an H200, RESULTS.md, "Products end to end").
const GPU_PRODUCT_US: f64 = 60.0;
const GPU_RESULT_LIMB_US: f64 = 1e-3;

/// A product's time on an idle device by that model.
fn gpu_product_us(un: usize, vn: usize) -> f64 {
    GPU_PRODUCT_US + (un + vn) as f64 * GPU_RESULT_LIMB_US
}

/// How much longer than `gpu_product_us` the device has lately taken for a
/// product that had it to this process alone: the wait for other
/// processes' work, which shares the device by time slices. Sixteen
/// processes of pi.c at 10^7 digits at once waited 2.2 to 2.8 ms for each
/// GPU product of 1024 to 16,383 limbs, which GMP makes in 0.14 to 4 ms
/// (RESULTS.md, "The device shared with other processes"). Two
/// observations running are needed (the lesser counts), so that one
/// product's first-use costs (a transform's tables, a pool's growth) do not
/// move the routing; the estimate halves every DELAY_HALF_LIFE_US, so that
/// products go back to the device, and measure it again, once the others
/// may have gone.
struct Delay {
    /// The estimate (us) and when it was made (`clock_us`).
    estimate: AtomicU64,
    at: AtomicU64,
    /// The last observation (us) and when it was made.
    last: AtomicU64,
    last_at: AtomicU64,
}

/// Below this an estimate counts as none: an idle H200 took up to 0.22 ms
/// more than the model for products of 2^10 to 2^16 limbs, beside single
/// first uses of 2 to 14 ms (RESULTS.md, "The device shared with other
/// processes").
const DELAY_COUNTS_US: u64 = 500;
const DELAY_HALF_LIFE_US: f64 = 100_000.0;
/// An observation older than this is not paired with a new one.
const DELAY_PAIRED_US: u64 = 1_000_000;

impl Delay {
    const fn new() -> Delay {
        Delay { estimate: AtomicU64::new(0), at: AtomicU64::new(0), last: AtomicU64::new(0), last_at: AtomicU64::new(0) }
    }

    /// A product that had the device to itself took `excess_us` more than
    /// the model, at `now_us`.
    fn observe(&self, excess_us: u64, now_us: u64) {
        let last = self.last.swap(excess_us, Relaxed);
        let last_at = self.last_at.swap(now_us, Relaxed);
        let paired = if now_us.saturating_sub(last_at) <= DELAY_PAIRED_US { last.min(excess_us) } else { 0 };
        self.estimate.store(paired, Relaxed);
        self.at.store(now_us, Relaxed);
    }

    /// The delay to expect at `now_us`, in microseconds (0 for none).
    fn now(&self, now_us: u64) -> f64 {
        let estimate = self.estimate.load(Relaxed);
        if estimate < DELAY_COUNTS_US {
            return 0.0;
        }
        let age = now_us.saturating_sub(self.at.load(Relaxed)) as f64;
        let decayed = estimate as f64 * (-age / DELAY_HALF_LIFE_US).exp2();
        if decayed < DELAY_COUNTS_US as f64 { 0.0 } else { decayed }
    }
}

static DELAY: Delay = Delay::new();

/// Products `route` has sent to the GPU in auto, counted: a product that
/// finds the count where it left it had the device to itself among the
/// process's products.
static ROUTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread's last product routed to the GPU: its number in
    /// `ROUTED`, or 0 where other products of the process were on the
    /// device then (`product_took`).
    static ALONE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The longest product (result limbs) whose time is taken for the device's
/// delay. Up to it the model's fixed cost is most of a product's time. On
/// an idle H200 products of 40,000 to 800,000 limbs a side took 0.5 to 7
/// ms more than the model, which read as a delay left smaller products to
/// the CPU in pi.c on one thread; and the
/// delay changes the routing only of products GMP makes in a few
/// milliseconds, 16,384 limbs a side and less (RESULTS.md, "The device
/// shared with other processes").
const DELAY_OBSERVED_UP_TO: usize = 1 << 15;

/// A product of un x vn limbs that `route` sent to the GPU took `elapsed`,
/// host to host: where no other product of the process was on the device
/// when it was routed nor was sent there since (the process's own threads
/// are `queue_favours_cpu`'s matter), and the product is no longer than
/// DELAY_OBSERVED_UP_TO, what it took beyond the model is the device's
/// delay (`Delay`).
pub fn product_took(un: usize, vn: usize, elapsed: std::time::Duration) {
    if let Some(excess) = delay_seen(ALONE.replace(0), ROUTED.load(Relaxed), (un, vn), elapsed) {
        DELAY.observe(excess, clock_us());
    }
}

/// What a product of `dims` limbs that took `elapsed` tells of the
/// device's delay (us beyond the model), given its number in `ROUTED`
/// (`ticket`, 0 where others were on the device) and the count now: None
/// where it does not count (`product_took`).
fn delay_seen(ticket: u64, routed: u64, (un, vn): (usize, usize), elapsed: std::time::Duration) -> Option<u64> {
    if ticket == 0 || routed != ticket || un + vn > DELAY_OBSERVED_UP_TO {
        return None;
    }
    Some((elapsed.as_secs_f64() * 1e6 - gpu_product_us(un, vn)).max(0.0) as u64)
}

/// GMP's time for a product of un x vn limbs on one core, in microseconds:
/// 0.140 ms at 1024 x 1024 limbs, 2.29 ms at 10^4, 37.3 ms at 10^5 (the
/// same table, the same host): 140 us (n / 1024)^1.22, and an unbalanced
/// product as long / short balanced ones, as GMP makes it.
fn gmp_product_us(un: usize, vn: usize) -> f64 {
    let (short, long) = (un.min(vn).max(1) as f64, un.max(vn).max(1) as f64);
    long / short * 140.0 * (short / 1024.0).powf(1.22)
}

/// Whether a product of `dims` limbs the GPU would take is done sooner by
/// GMP on this thread, the device being busy with `busy` (other threads'
/// products on any of its queues): GMP's time against the wait for those
/// and its own time on the GPU. A product's fixed cost is mostly launch
/// latency, which the queues overlap (it counts once a queue); its cost a
/// limb is the device's throughput, which they share (it counts for every
/// product in progress). With no other product in
/// progress (a program of one thread) never. benches/programs/pi.c at 10^8
/// digits on 16 threads waited 3.9 ms on average for each of its 11,244
/// GPU products of 1024 to 2047 limbs, each 0.14 ms on GMP (RESULTS.md,
/// "Products from many threads").
///
/// `delay_us` is what the device has lately taken beyond the model
/// (`Delay`): with it, a product goes to the CPU even on a device free of
/// this process's work where GMP makes it sooner.
fn queue_favours_cpu(busy: InFlight, (un, vn): (usize, usize), delay_us: f64) -> bool {
    if busy.products == 0 {
        return delay_us > 0.0 && gmp_product_us(un, vn) < gpu_product_us(un, vn) + delay_us;
    }
    let gpu_us = |products: usize, limbs: usize| products as f64 * GPU_PRODUCT_US / busy.queues.max(1) as f64 + limbs as f64 * GPU_RESULT_LIMB_US;
    let loaded = config::get().loaded_product_us.map_or(LOADED_PRODUCT_US, |us| us as f64);
    gmp_product_us(un, vn) < (gpu_us(busy.products + 1, busy.limbs + un + vn) + delay_us).max(loaded)
}

/// The least a product's GPU time is taken to be while other products are
/// on the device (`queue_favours_cpu`; `CUGMP_LOADED_PRODUCT_US`), so that
/// products GMP makes in under 0.3 ms (below about 1900 limbs) then stay
/// on the CPU. pi.c at 10^8 digits on 16 threads: its GPU products of 1024
/// to 8191 limbs took 0.74 to 0.91 ms each while uploads went through the
/// driver's pageable staging, and a floor of 1000 us gave 3.31 to 3.75 s
/// against 4.27 to 4.56 with none; since small products run on slots of
/// their own (src/gpu/ntt/small.rs), 0 / 300 / 1000 us gave 3.19 to 3.23 /
/// 3.20 to 3.23 / 3.30 to 3.38 s on one host and 4.06 to 4.17 / 3.52 to
/// 3.92 / 3.85 to 3.86 on another (RESULTS.md, "Products from many
/// threads").
const LOADED_PRODUCT_US: f64 = 300.0;

/// The GPU when `op` routed by `limbs` goes there (`route`, and GMP's
/// internal work only where this thread does not hold it on the CPU).
pub fn route_at(op: Op, limbs: usize, gpu_capable: bool) -> Option<&'static Gpu> {
    if op == Op::Internal && internal_held_on_cpu() {
        return None;
    }
    route(op, limbs, gpu_capable)
}

/// The GPU when a product of un x vn limbs goes there: GMP's internal
/// products by `product_size`, the exports' (mpz_mul, mpn_mul) by the
/// shorter operand, as their fast paths are.
pub fn product_route(op: Op, un: usize, vn: usize) -> Option<&'static Gpu> {
    if op == Op::Internal && internal_held_on_cpu() {
        return None;
    }
    let size = if op == Op::Internal { product_size(un, vn) } else { un.min(vn) };
    route_sized(op, size, un > 0 && vn > 0, (un, vn))
}

/// How far the shorter operand's size may be raised for an unbalanced
/// product (`product_size`).
pub(crate) const UNBALANCED_GAIN: usize = 8;

/// The size (limbs) GMP's internal product of un x vn limbs is routed by
/// (the hooks' fast paths and `product_route`): the shorter
/// operand's for a balanced one, and for an unbalanced one the side of the
/// square of the same area, sqrt(un vn), up to UNBALANCED_GAIN times the
/// shorter side. GMP makes an unbalanced product as long / short products
/// of the short side, the GPU as one transform of the whole length: GMP's
/// gcd at 52,000 limbs spent 225 ms of its 670 in 368 products whose
/// shorter side had 1024 to 2047 limbs (0.61 ms each), the GPU 0.14 ms each
/// on those from 2048 (RESULTS.md, "Unbalanced products"). At least the
/// shorter side, so a product routed to the GPU by it still is.
pub fn product_size(un: usize, vn: usize) -> usize {
    let short = un.min(vn);
    let square = ((un as f64) * (vn as f64)).sqrt() as usize;
    square.min(short.saturating_mul(UNBALANCED_GAIN)).max(short)
}

thread_local! {
    /// Whether this thread computes a CPU reference (`CUGMP_CHECK`): GMP's
    /// internal products then stay on the CPU, so that the reference is
    /// GMP's alone, never the GPU checked against itself.
    static CPU_REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` as a CPU reference computation: every internal product on the
/// CPU; restored after, also when `f` unwinds.
pub fn cpu_reference<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            CPU_REFERENCE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CPU_REFERENCE.with(|c| c.replace(true)));
    f()
}

/// Whether this thread keeps GMP's internal work on the CPU (it computes a
/// CPU reference).
pub fn internal_held_on_cpu() -> bool {
    CPU_REFERENCE.with(|c| c.get())
}

/// Whether GMP's own work on `limbs` limbs (its internal products, and the
/// algorithms cuGMP runs in GMP's place for them) goes to the GPU now:
/// wanted at that size, a GPU ready, and not held on this thread's CPU.
pub fn internal_on_gpu(limbs: usize) -> bool {
    !internal_held_on_cpu() && gpu_wanted(Op::Internal, limbs) && engine(0.0).is_some()
}

/// `internal_on_gpu` for a square root of `limbs` limbs, which may wait
/// for the device's opening (`engine`): GMP's root takes about twice a
/// product of half its size (1056 to 1816 ms at 2 x 10^6 limbs, the
/// product of 10^6 limbs 498 ms; RESULTS.md, "Square roots" and "Products
/// end to end").
pub fn root_on_gpu(limbs: usize) -> bool {
    !internal_held_on_cpu() && gpu_wanted(Op::Internal, limbs) && engine(2.0 * gmp_product_us(limbs / 2, limbs / 2)).is_some()
}

/// The device for a quotient of `q_limbs` by a divisor of `d_limbs`
/// (src/algorithms/quotient.rs), which may wait for the device's opening
/// (`engine`): GMP's division takes about three products of the two
/// (a 2n by n division of 10^6 limbs 1837 ms, the product 498 ms;
/// RESULTS.md, "Hooks end to end" and "Products end to end").
pub fn quotient_on_gpu(q_limbs: usize, d_limbs: usize) -> Option<&'static Gpu> {
    if internal_held_on_cpu() || !gpu_wanted(Op::Div, q_limbs.min(d_limbs)) {
        return None;
    }
    engine(3.0 * gmp_product_us(q_limbs, d_limbs))?;
    route_at(Op::Div, q_limbs.min(d_limbs), true)
}

/// Whether GMP's products of `limbs` limbs are to be sized for the GPU
/// (src/algorithms/hooks.rs, `mulmod_bnm1_next_size`): as `internal_on_gpu`,
/// but a device still being opened counts as there. GMP sizes its scratch
/// from earlier answers, so an answer may never grow: it can only shrink,
/// once, if the device turns out absent.
pub fn internal_sized_for_gpu(limbs: usize) -> bool {
    if internal_held_on_cpu() || !gpu_wanted(Op::Internal, limbs) {
        return false;
    }
    if config::get().gpu == GpuMode::Force {
        return gpu::get().is_some();
    }
    !matches!(gpu::available(), Availability::Absent)
}

/// Whether GMP's allocation functions are still its own (thread safe, or
/// cuGMP's in their place, src/gmp/memory.rs), not a program's
/// (`mp_set_memory_functions`), which GMP calls only from the thread that
/// called it: GMP's code may then run on other threads.
pub fn gmp_allocates_by_default() -> bool {
    crate::gmp::memory::defaults_in_place()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `one_sharing`'s rule: a thread alone shares; one that follows
    /// another's turn does not, nor does the first after it; after
    /// MIXED_QUIET_US without turns taken by two threads, the one shares
    /// again; a thread already inside does not share again from within.
    #[test]
    fn sharing_waits_for_quiet_after_two_threads() {
        let quiet = || std::thread::sleep(std::time::Duration::from_micros(MIXED_QUIET_US + 2000));
        quiet();
        one_sharing(|_| ());
        assert!(one_sharing(|alone| alone), "one thread alone shares");
        let other = std::thread::spawn(|| one_sharing(|alone| alone)).join().expect("the other thread");
        assert!(!other, "a thread right after another's turn does not share");
        assert!(!one_sharing(|alone| alone), "nor the first, right after the second's turn");
        quiet();
        assert!(one_sharing(|alone| alone), "after the quiet, the one thread shares again");
        one_sharing(|outer| {
            assert!(outer);
            assert!(!one_sharing(|inner| inner), "not from inside its own sharing");
        });
    }

    /// No other product on the device: the GPU, whatever the size. Behind
    /// any other, products GMP makes in under LOADED_PRODUCT_US stay on the
    /// CPU; behind many or one large one, larger ones too, and the largest
    /// still go.
    #[test]
    fn a_busy_device_leaves_small_products_to_the_cpu() {
        let busy = |products, limbs| InFlight { products, limbs, queues: 1 };
        for n in [1024, 4096, 1 << 20] {
            assert!(!queue_favours_cpu(busy(0, 0), (n, n), 0.0));
        }
        // With another product on the device, one GMP makes in under
        // LOADED_PRODUCT_US stays on the CPU.
        assert!(queue_favours_cpu(busy(1, 2048), (1024, 1024), 0.0));
        assert!(queue_favours_cpu(busy(1, 2 * 1536), (1536, 1536), 0.0));
        assert!(!queue_favours_cpu(busy(1, 2 * 2048), (2048, 2048), 0.0));
        assert!(!queue_favours_cpu(busy(1, 2 * 8192), (8192, 8192), 0.0));
        assert!(!queue_favours_cpu(busy(4, 4 * 2048), (16_384, 16_384), 0.0));
        assert!(queue_favours_cpu(busy(1, 20_000_000), (16_384, 16_384), 0.0));
        assert!(!queue_favours_cpu(busy(1, 20_000_000), (1 << 20, 1 << 20), 0.0));
        // Four queues overlap the products' fixed costs, not their work a limb.
        let busy4 = |products, limbs| InFlight { products, limbs, queues: 4 };
        assert!(!queue_favours_cpu(busy4(4, 4 * 2048), (16_384, 16_384), 0.0));
        assert!(queue_favours_cpu(busy4(400, 400 * 2048), (16_384, 16_384), 0.0));
        assert!(queue_favours_cpu(busy4(1, 20_000_000), (16_384, 16_384), 0.0));
        // An unbalanced product is GMP's long / short balanced ones.
        assert!(gmp_product_us(8192, 1024) > 7.9 * gmp_product_us(1024, 1024));
    }

    /// The device's delay: none until two products running took
    /// DELAY_COUNTS_US more than the model (one first use moves nothing),
    /// then the lesser of the two, halving every DELAY_HALF_LIFE_US until it
    /// counts as none; an observation a second old is not paired; a product
    /// counts only where it had the device to itself and is no longer than
    /// DELAY_OBSERVED_UP_TO. With it,
    /// products GMP makes sooner than the model's time plus the delay go to
    /// the CPU on a device free of the process's own work, larger ones still
    /// to the GPU.
    #[test]
    fn a_slow_device_leaves_small_products_to_the_cpu() {
        let d = Delay::new();
        assert_eq!(d.now(0), 0.0);
        d.observe(6000, 1000);
        assert_eq!(d.now(1000), 0.0, "one slow product alone moves nothing");
        d.observe(100, 2000);
        d.observe(2200, 3000);
        assert_eq!(d.now(3000), 0.0, "paired with a fast one: none");
        d.observe(2500, 4000);
        assert_eq!(d.now(4000), 2200.0, "two slow ones running: the lesser");
        let half = d.now(4000 + DELAY_HALF_LIFE_US as u64);
        assert!((half - 1100.0).abs() < 1.0, "{half}");
        assert_eq!(d.now(4000 + 3 * DELAY_HALF_LIFE_US as u64), 0.0, "275 us counts as none");
        d.observe(2400, 4000 + DELAY_PAIRED_US + 1);
        assert_eq!(d.now(4000 + DELAY_PAIRED_US + 1), 0.0, "not paired with one a second old");
        d.observe(400, 4000 + DELAY_PAIRED_US + 2);
        assert_eq!(d.now(4000 + DELAY_PAIRED_US + 2), 0.0, "400 us counts as none");

        // What a product tells: only one that had the device alone (a
        // ticket, none routed after it), of at most DELAY_OBSERVED_UP_TO
        // limbs; its time beyond the model, never below 0.
        let ms = |t: f64| std::time::Duration::from_secs_f64(t / 1e3);
        let model = gpu_product_us(1024, 1024);
        assert_eq!(delay_seen(7, 7, (1024, 1024), ms(2.5)), Some((2500.0 - model) as u64));
        assert_eq!(delay_seen(7, 7, (1024, 1024), ms(0.01)), Some(0));
        assert_eq!(delay_seen(0, 7, (1024, 1024), ms(2.5)), None, "others on the device when routed");
        assert_eq!(delay_seen(7, 8, (1024, 1024), ms(2.5)), None, "another routed since");
        assert_eq!(delay_seen(7, 7, (DELAY_OBSERVED_UP_TO / 2, DELAY_OBSERVED_UP_TO / 2), ms(2.5)).map(|_| ()), Some(()));
        assert_eq!(delay_seen(7, 7, (DELAY_OBSERVED_UP_TO / 2, DELAY_OBSERVED_UP_TO / 2 + 1), ms(2.5)), None, "too long");

        let idle = InFlight { products: 0, limbs: 0, queues: 4 };
        let delay = 2200.0;
        for n in [1024, 2048, 4096, 8192] {
            assert!(queue_favours_cpu(idle, (n, n), delay), "{n} limbs");
            assert!(!queue_favours_cpu(idle, (n, n), 0.0), "{n} limbs, no delay");
        }
        for n in [16_384, 1 << 20] {
            assert!(!queue_favours_cpu(idle, (n, n), delay), "{n} limbs");
        }
        // Behind the process's own products the delay adds to the wait.
        let one = InFlight { products: 1, limbs: 2 * 4096, queues: 4 };
        assert!(!queue_favours_cpu(one, (8192, 8192), 0.0));
        assert!(queue_favours_cpu(one, (8192, 8192), delay));
    }

    /// Balanced products by their size; unbalanced ones raised toward the
    /// square of their area, never beyond UNBALANCED_GAIN times the shorter
    /// side, never below it.
    #[test]
    fn unbalanced_products_are_routed_by_area() {
        assert_eq!(product_size(2048, 2048), 2048);
        assert_eq!(product_size(1000, 1024), 1011);
        assert_eq!(product_size(26_000, 1500), 6244);
        assert_eq!(product_size(16_384, 256), 2048);
        assert_eq!(product_size(1_000_000, 1), UNBALANCED_GAIN);
        assert_eq!(product_size(0, 5), 0);
        for (un, vn) in [(1usize, 1usize), (3, 70), (5000, 4999), (1 << 30, 1 << 12), (usize::MAX / 2, 3)] {
            let size = product_size(un, vn);
            assert!(size >= un.min(vn) && size <= un.max(vn) && size <= un.min(vn).saturating_mul(UNBALANCED_GAIN), "{un} x {vn}: {size}");
        }
    }
}
