//! `CUGMP_STATS=1`: per operation, calls served by the CPU engine and by the
//! GPU, bytes copied each way, GPU time, and GPU attempts that fell back to
//! the CPU with their reason; printed to stderr as a table when the process
//! exits. GPU operations are always counted (the figures also serve
//! `cugmp_gpu_operations`); CPU calls only with CUGMP_STATS, which routes
//! every call (the fast path skips the others).
//!
//! `CUGMP_PROFILE=1`: per operation and per size (powers of two of limbs),
//! the calls, the CPU engine's time and the GPU's, the GPU's split into
//! upload, download, waiting for the device's staging and the rest (the
//! device's own work); printed at exit. Nothing is timed unless it is on
//! ([`enable_profile`]).
//!
//! A leaf: it imports nothing of the crate. The engines and the routing
//! tell it what happened in its own terms ([`Op`], [`Fallback`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The operations counted: the exported functions cuGMP routes, and GMP's
/// own products reached through the hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    SetStr,
    GetStr,
    Add,
    Sub,
    Mul,
    Shift,
    And,
    Ior,
    Xor,
    Com,
    /// A square root (GMP's mpn_sqrtrem) by Newton's iteration.
    Sqrt,
    /// A quotient (GMP's mpn_tdiv_qr, mpn_div_q) on device-resident
    /// numbers; its size is the divisor's limbs.
    Div,
    /// A factorial (mpz_fac_ui) from its primes' exponents; its size is
    /// the result's limbs.
    Fac,
    /// A binomial coefficient (mpz_bin_uiui) the same way; its size is
    /// the result's limbs.
    Bin,
    /// A product inside GMP's own algorithms (division, roots, radix
    /// conversion, ...), reached through the hooks.
    Internal,
    /// The items of a `cugmp_powm_batch` the GPU's kernels take (odd
    /// moduli of up to 64 limbs, positive exponents); its size is their
    /// number, not limbs.
    PowmBatch,
    /// A product of binary polynomials (cugmp_gf2x_mul) by the additive
    /// FFT; its size is the shorter polynomial's limbs.
    Gf2x,
    /// GMP's half-gcd steps (Lehmer's, or a division) in the half-gcd's
    /// recursion (src/algorithms/hgcd.rs); its size is the numbers' limbs.
    HgcdStep,
    /// A half-gcd matrix step (an adjustment or a matrix product) apart
    /// from its products: the sums, and the caller's wait for the helpers
    /// that make its products; its size is a product's limbs.
    HgcdMatrix,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::SetStr => "set_str",
            Op::GetStr => "get_str",
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Shift => "shift",
            Op::And => "and",
            Op::Ior => "ior",
            Op::Xor => "xor",
            Op::Com => "com",
            Op::Sqrt => "sqrt",
            Op::Div => "div",
            Op::Fac => "fac_ui",
            Op::Bin => "bin_uiui",
            Op::Internal => "gmp-internal mul",
            Op::PowmBatch => "powm_batch",
            Op::Gf2x => "gf2x_mul",
            Op::HgcdStep => "half-gcd steps",
            Op::HgcdMatrix => "half-gcd matrix sums",
        }
    }

    pub const ALL: [Op; 19] = [
        Op::SetStr,
        Op::GetStr,
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Shift,
        Op::And,
        Op::Ior,
        Op::Xor,
        Op::Com,
        Op::Sqrt,
        Op::Div,
        Op::Fac,
        Op::Bin,
        Op::Internal,
        Op::PowmBatch,
        Op::Gf2x,
        Op::HgcdStep,
        Op::HgcdMatrix,
    ];
}

/// Why a GPU attempt ended on the CPU (the columns of the fallback count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    Driver,
    Injected,
    Panic,
    TooLarge,
    Thread,
    Inexact,
}

impl Fallback {
    const ALL: [Fallback; 6] = [Fallback::Driver, Fallback::Injected, Fallback::Panic, Fallback::TooLarge, Fallback::Thread, Fallback::Inexact];

    fn name(self) -> &'static str {
        match self {
            Fallback::Driver => "CUDA error",
            Fallback::Injected => "injected fault",
            Fallback::Panic => "panic in the CUDA bindings",
            Fallback::TooLarge => "too large for the device",
            Fallback::Thread => "no copy thread",
            Fallback::Inexact => "exactness check failed",
        }
    }
}

const REASONS: usize = Fallback::ALL.len();

struct OpStats {
    gpu: AtomicU64,
    to_gpu: AtomicU64,
    from_gpu: AtomicU64,
    gpu_ns: AtomicU64,
    fallbacks: [AtomicU64; REASONS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: OpStats = OpStats {
    gpu: AtomicU64::new(0),
    to_gpu: AtomicU64::new(0),
    from_gpu: AtomicU64::new(0),
    gpu_ns: AtomicU64::new(0),
    fallbacks: [const { AtomicU64::new(0) }; REASONS],
};

static STATS: [OpStats; Op::ALL.len()] = [ZERO; Op::ALL.len()];

fn of(op: Op) -> &'static OpStats {
    &STATS[op as usize]
}

thread_local! {
    /// Bytes this thread copied to and from the device since the last `take_copied`.
    static COPIED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Operand sizes a profile row spans: bucket k holds [2^k, 2^(k+1)) limbs
/// (0 limbs in bucket 0).
const BUCKETS: usize = 48;

fn bucket(limbs: usize) -> usize {
    (usize::BITS - limbs.max(1).leading_zeros() - 1).min(BUCKETS as u32 - 1) as usize
}

/// Parts of a GPU operation's time the engine reports (`phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Upload,
    Download,
    /// Waiting for the device's staging (another thread's transfer).
    Wait,
}

/// One profile row's sums, nanoseconds.
struct ProfileCell {
    calls: AtomicU64,
    cpu_ns: AtomicU64,
    gpu_calls: AtomicU64,
    gpu_ns: AtomicU64,
    phase_ns: [AtomicU64; 3],
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: ProfileCell = ProfileCell {
    calls: AtomicU64::new(0),
    cpu_ns: AtomicU64::new(0),
    gpu_calls: AtomicU64::new(0),
    gpu_ns: AtomicU64::new(0),
    phase_ns: [const { AtomicU64::new(0) }; 3],
};

/// What is counted on every call while every call is routed: the CPU
/// calls per operation and the profile's rows. Each thread has its own,
/// written by it alone with a load and a store (`bump`), no locked
/// instruction and no cache line shared with another thread; the tables
/// add them up. With one table for all threads, two threads' small
/// products under the profile took up to 2.7 times one thread's, each
/// thread waiting for the rows the other had just written (RESULTS.md,
/// "Where pi.c's time goes").
struct Counts {
    cpu: [AtomicU64; Op::ALL.len()],
    rows: [[ProfileCell; BUCKETS]; Op::ALL.len()],
}

/// The counts of threads that have ended, and of calls a thread makes
/// while its own counts are being torn down: several threads add to them,
/// atomically.
static ENDED: Counts = Counts { cpu: [const { AtomicU64::new(0) }; Op::ALL.len()], rows: [const { [EMPTY; BUCKETS] }; Op::ALL.len()] };
/// The running threads' own counts.
static LIVE: Mutex<Vec<Arc<Counts>>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<Arc<Counts>>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A thread's own counts: in LIVE while the thread runs, added to ENDED
/// when it ends.
struct Own(Arc<Counts>);

impl Own {
    fn new() -> Own {
        // SAFETY: Counts is atomics alone, for which all zeros is zero (on
        // the heap: 46 KiB, more than some threads' stacks should take).
        let counts: Arc<Counts> = unsafe { Arc::new_zeroed().assume_init() };
        live().push(Arc::clone(&counts));
        Own(counts)
    }
}

impl Drop for Own {
    fn drop(&mut self) {
        let mut live = live();
        let add = |to: &AtomicU64, from: &AtomicU64| {
            to.fetch_add(from.load(Relaxed), Relaxed);
        };
        for (to, from) in ENDED.cpu.iter().zip(&self.0.cpu) {
            add(to, from);
        }
        for (to, from) in ENDED.rows.iter().flatten().zip(self.0.rows.iter().flatten()) {
            add(&to.calls, &from.calls);
            add(&to.cpu_ns, &from.cpu_ns);
            add(&to.gpu_calls, &from.gpu_calls);
            add(&to.gpu_ns, &from.gpu_ns);
            for (t, f) in to.phase_ns.iter().zip(&from.phase_ns) {
                add(t, f);
            }
        }
        live.retain(|c| !Arc::ptr_eq(c, &self.0));
    }
}

thread_local! {
    static OWN: Own = Own::new();
}

/// `c += v` on a counter no other thread writes.
#[inline]
fn bump(c: &AtomicU64, v: u64) {
    c.store(c.load(Relaxed).wrapping_add(v), Relaxed);
}

/// `f` on this thread's counts with the way to add to them: `bump`, or
/// atomic adds to ENDED once this thread's counts are gone (its end, other
/// thread-local destructors).
#[inline]
fn counting(f: impl FnOnce(&Counts, fn(&AtomicU64, u64))) {
    let mut f = Some(f);
    let mine = OWN.try_with(|own| {
        if let Some(f) = f.take() {
            f(&own.0, bump)
        }
    });
    if let (Err(_), Some(f)) = (mine, f) {
        f(&ENDED, |c, v| {
            c.fetch_add(v, Relaxed);
        });
    }
}

/// `read` summed over every thread's counts, ended or running.
fn summed(read: impl Fn(&Counts) -> u64) -> u64 {
    let live = live();
    read(&ENDED) + live.iter().map(|c| read(c)).sum::<u64>()
}

static PROFILING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Phase times of this thread's GPU attempt so far (`take_phases`).
    static PHASES: Cell<[u64; 3]> = const { Cell::new([0; 3]) };
    /// Time spent so far in profiled calls inside the one being timed
    /// (GMP's own algorithms make internal products): each row counts its
    /// own time only, so that the rows add up.
    static NESTED_NS: Cell<u64> = const { Cell::new(0) };
}

/// The profile's clock: nanoseconds from an arbitrary start. Where the
/// processor's time-stamp counter runs at a constant rate (x86-64 with an
/// invariant TSC) it is that counter, scaled by its rate against the
/// system's clock measured when the profile is turned on; else `Instant`.
/// The profile reads it twice a routed call: a counter read took 9.6 ns
/// on the build machine, `clock_gettime` 23.9 (RESULTS.md, "Where pi.c's
/// time goes").
mod clock {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::OnceLock;
    use std::time::Instant;

    /// Nanoseconds a tick of the counter, times 2^32; 0 while it is not used.
    static SCALE: AtomicU64 = AtomicU64::new(0);
    static START: OnceLock<Instant> = OnceLock::new();

    /// Whether the counter ticks at a constant rate (cpuid leaf
    /// 0x80000007, EDX bit 8: through P-states and C-states).
    #[cfg(target_arch = "x86_64")]
    fn invariant_counter() -> bool {
        use std::arch::x86_64::__cpuid;
        __cpuid(0x8000_0000).eax >= 0x8000_0007 && (__cpuid(0x8000_0007).edx >> 8) & 1 == 1
    }

    #[cfg(target_arch = "x86_64")]
    #[inline]
    fn ticks() -> u64 {
        // SAFETY: rdtsc exists on every x86-64 processor.
        unsafe { std::arch::x86_64::_rdtsc() }
    }

    /// Starts the clock, and measures the counter's rate over 2 ms of the
    /// system's clock where it can be used.
    pub fn calibrate() {
        START.get_or_init(Instant::now);
        #[cfg(target_arch = "x86_64")]
        if invariant_counter() {
            let (t0, c0) = (Instant::now(), ticks());
            while t0.elapsed() < std::time::Duration::from_millis(2) {
                std::hint::spin_loop();
            }
            let (c1, ns) = (ticks(), t0.elapsed().as_nanos());
            if c1 > c0 {
                SCALE.store(u64::try_from((ns << 32) / u128::from(c1 - c0)).unwrap_or(0), Relaxed);
            }
        }
    }

    #[inline]
    pub fn now() -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            let scale = SCALE.load(Relaxed);
            if scale != 0 {
                return ((u128::from(ticks()) * u128::from(scale)) >> 32) as u64;
            }
        }
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Turns the profile on (from the load-time constructor, with
/// `CUGMP_PROFILE=1`) and registers its table for the process's exit.
pub fn enable_profile() {
    clock::calibrate();
    PROFILING.store(true, Relaxed);
    // SAFETY: atexit takes a plain extern "C" function that never unwinds.
    unsafe { libc::atexit(print_profile) };
}

/// Whether the profile is on.
#[inline]
pub fn profiling() -> bool {
    PROFILING.load(Relaxed)
}

/// Part of the current GPU attempt's time, as the engine measured it.
pub fn phase(p: Phase, elapsed: std::time::Duration) {
    if profiling() {
        PHASES.with(|c| {
            let mut v = c.get();
            v[p as usize] += elapsed.as_nanos() as u64;
            c.set(v);
        });
    }
}

/// The current GPU attempt's time in `p` so far.
pub fn phase_so_far(p: Phase) -> std::time::Duration {
    std::time::Duration::from_nanos(PHASES.with(|c| c.get())[p as usize])
}

fn take_phases() -> [u64; 3] {
    PHASES.with(|c| c.replace([0; 3]))
}

/// `f`, the CPU engine's work for `op` on `limbs` limbs, timed into the
/// profile when it is on.
#[inline]
pub fn on_cpu<T>(op: Op, limbs: usize, f: impl FnOnce() -> T) -> T {
    if !profiling() {
        return f();
    }
    let outer = NESTED_NS.with(|c| c.replace(0));
    let start = clock::now();
    let value = f();
    let total = clock::now().saturating_sub(start);
    let inner = NESTED_NS.with(|c| c.replace(outer + total));
    counting(|counts, add| {
        let cell = &counts.rows[op as usize][bucket(limbs)];
        add(&cell.calls, 1);
        add(&cell.cpu_ns, total.saturating_sub(inner));
    });
    value
}

/// Called by the GPU engine for every copy.
pub fn copied_to_gpu(bytes: usize) {
    COPIED.with(|c| c.set((c.get().0 + bytes as u64, c.get().1)));
}

pub fn copied_from_gpu(bytes: usize) {
    COPIED.with(|c| c.set((c.get().0, c.get().1 + bytes as u64)));
}

fn take_copied() -> (u64, u64) {
    COPIED.with(|c| c.replace((0, 0)))
}

/// Starts the count of one GPU attempt's copies and phases (the thread's
/// counters).
pub fn gpu_attempt_starts() {
    take_copied();
    take_phases();
}

/// A call the CPU engine serves, counted for the table `CUGMP_STATS=1`
/// prints (nothing else reads it: without it, nothing is done).
pub fn cpu_call(op: Op) {
    if STATS_PRINTED.load(Relaxed) {
        counting(|counts, add| add(&counts.cpu[op as usize], 1));
    }
}

/// Whether the table of `CUGMP_STATS=1` is printed at exit.
static STATS_PRINTED: AtomicBool = AtomicBool::new(false);

/// A GPU attempt on `limbs` limbs that completed, with its wall time.
pub fn gpu_call(op: Op, limbs: usize, elapsed: std::time::Duration) {
    let s = of(op);
    let (to, from) = take_copied();
    s.gpu.fetch_add(1, Relaxed);
    s.to_gpu.fetch_add(to, Relaxed);
    s.from_gpu.fetch_add(from, Relaxed);
    s.gpu_ns.fetch_add(elapsed.as_nanos() as u64, Relaxed);
    if profiling() {
        let ns = elapsed.as_nanos() as u64;
        NESTED_NS.with(|c| c.set(c.get() + ns));
        let phases = take_phases();
        counting(|counts, add| {
            let cell = &counts.rows[op as usize][bucket(limbs)];
            add(&cell.calls, 1);
            add(&cell.gpu_calls, 1);
            add(&cell.gpu_ns, ns);
            for (sum, ns) in cell.phase_ns.iter().zip(phases) {
                add(sum, ns);
            }
        });
    }
}

/// A GPU attempt that failed; the CPU finishes it (counted there too).
pub fn fallback(op: Op, why: Fallback) {
    let s = of(op);
    let (to, from) = take_copied();
    s.to_gpu.fetch_add(to, Relaxed);
    s.from_gpu.fetch_add(from, Relaxed);
    s.fallbacks[why as usize].fetch_add(1, Relaxed);
    cpu_call(op);
}

/// Work made on several cores with the kept helper threads.
#[derive(Clone, Copy)]
pub enum Shared {
    /// An `mpz_mul` product (src/cpu.rs, `mul_on_cores`).
    Product,
    /// A half-gcd matrix step's products (src/algorithms/hgcd.rs).
    HgcdStep,
    /// Of those, a step whose products were cut in halves.
    HgcdHalves,
}

/// Per kind of `Shared` work: how many were shared, and of them in how
/// many the helpers were asked (the board was free).
static SHARED: [[AtomicU64; 2]; 3] = [const { [const { AtomicU64::new(0) }; 2] }; 3];

/// `work` made on several cores; `helped`: the helpers were asked.
pub fn shared(work: Shared, helped: bool) {
    let counts = &SHARED[work as usize];
    counts[0].fetch_add(1, Relaxed);
    if helped {
        counts[1].fetch_add(1, Relaxed);
    }
}

/// Products the thresholds sent to the GPU that stayed on the CPU, the
/// device being busy with other threads' products.
static QUEUED_TO_CPU: AtomicU64 = AtomicU64::new(0);

/// A product left to the CPU because the device was busy.
pub fn queued_to_cpu() {
    QUEUED_TO_CPU.fetch_add(1, Relaxed);
}

/// Products the thresholds sent to the GPU that stayed on the CPU, the
/// device answering slowly (other processes' work on it).
static SLOW_DEVICE_TO_CPU: AtomicU64 = AtomicU64::new(0);

/// A product left to the CPU because the device answered slowly.
pub fn slow_device_to_cpu() {
    SLOW_DEVICE_TO_CPU.fetch_add(1, Relaxed);
}

/// Transfers that went by DMA alone from or to a pinned block of the pool
/// (src/pinned.rs), and their bytes.
static PINNED: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// A transfer of `bytes` by DMA alone (its limbs in a pinned block).
pub fn pinned_transfer(bytes: usize) {
    PINNED[0].fetch_add(1, Relaxed);
    PINNED[1].fetch_add(bytes as u64, Relaxed);
}

/// (transfers, bytes) by DMA alone so far.
pub fn pinned_transfers() -> (u64, u64) {
    (PINNED[0].load(Relaxed), PINNED[1].load(Relaxed))
}

/// The lines both tables end with: products the thresholds gave the GPU
/// that the routing left to the CPU, and why (none where there were none).
fn left_to_cpu(t: &mut String) {
    use std::fmt::Write;
    for (count, why) in [(&QUEUED_TO_CPU, "the GPU was busy with other threads'"), (&SLOW_DEVICE_TO_CPU, "the GPU answered slowly (other processes' work on it)")] {
        let n = count.load(Relaxed);
        if n > 0 {
            let _ = writeln!(t, "products the thresholds gave the GPU left to the CPU because {why}: {n}");
        }
    }
    let (n, bytes) = pinned_transfers();
    if n > 0 {
        let _ = writeln!(t, "transfers by DMA alone, the limbs in pinned blocks: {n}, {:.1} MiB", bytes as f64 / 1048576.0);
    }
}

/// Operations completed on the GPU, all kinds.
pub fn gpu_total() -> u64 {
    STATS.iter().map(|s| s.gpu.load(Relaxed)).sum()
}

/// GPU attempts that failed and were finished on the CPU, all kinds and reasons.
pub fn fallback_total() -> u64 {
    STATS.iter().flat_map(|s| s.fallbacks.iter()).map(|f| f.load(Relaxed)).sum()
}

/// The table `CUGMP_STATS=1` prints.
pub fn table() -> String {
    use std::fmt::Write;
    let mut t = String::from("\ncuGMP statistics (CUGMP_STATS=1)\n");
    let _ = writeln!(t, "{:<8} {:>10} {:>10} {:>12} {:>12} {:>10}  fallbacks to the CPU", "op", "CPU calls", "GPU calls", "to GPU MiB", "from GPU MiB", "GPU ms");
    let mut any = false;
    for op in Op::ALL {
        let s = of(op);
        let (cpu, gpu) = (summed(|c| c.cpu[op as usize].load(Relaxed)), s.gpu.load(Relaxed));
        if cpu == 0 && gpu == 0 {
            continue;
        }
        any = true;
        let reasons: Vec<String> = Fallback::ALL
            .iter()
            .zip(&s.fallbacks)
            .filter_map(|(why, n)| match n.load(Relaxed) {
                0 => None,
                n => Some(format!("{n} {}", why.name())),
            })
            .collect();
        let _ = writeln!(
            t,
            "{:<8} {:>10} {:>10} {:>12.1} {:>12.1} {:>10.1}  {}",
            op.name(),
            cpu,
            gpu,
            s.to_gpu.load(Relaxed) as f64 / 1048576.0,
            s.from_gpu.load(Relaxed) as f64 / 1048576.0,
            s.gpu_ns.load(Relaxed) as f64 / 1e6,
            if reasons.is_empty() { "none".to_string() } else { reasons.join(", ") }
        );
    }
    left_to_cpu(&mut t);
    if !any {
        t.push_str("(no operation cuGMP routes was called)\n");
    }
    for (work, what) in [
        (Shared::Product, "mpz_mul products shared among cores"),
        (Shared::HgcdStep, "half-gcd matrix steps with their products shared among cores"),
        (Shared::HgcdHalves, "half-gcd matrix steps with their products cut in halves"),
    ] {
        let [made, helped] = &SHARED[work as usize];
        let made = made.load(Relaxed);
        if made > 0 {
            let _ = writeln!(t, "{what}: {made}, the helper threads asked in {}", helped.load(Relaxed));
        }
    }
    t
}

/// The table `CUGMP_PROFILE=1` prints: a row per operation and size with
/// calls, rows in the order of `Op::ALL` and size.
pub fn profile_table() -> String {
    use std::fmt::Write;
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut t = String::from("\ncuGMP profile (CUGMP_PROFILE=1): where the time of the operations cuGMP routes went\n");
    let _ = writeln!(
        t,
        "{:<17} {:>17} {:>10} {:>11} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10}",
        "op", "limbs", "calls", "CPU ms", "GPU calls", "GPU ms", "upload", "device", "download", "waiting"
    );
    let (mut cpu_total, mut gpu_total) = (0u64, 0u64);
    for op in Op::ALL {
        for k in 0..BUCKETS {
            let sum = |read: fn(&ProfileCell) -> &AtomicU64| summed(|c| read(&c.rows[op as usize][k]).load(Relaxed));
            let calls = sum(|c| &c.calls);
            if calls == 0 {
                continue;
            }
            let (cpu, gpu) = (sum(|c| &c.cpu_ns), sum(|c| &c.gpu_ns));
            let [up, down, wait] = [sum(|c| &c.phase_ns[0]), sum(|c| &c.phase_ns[1]), sum(|c| &c.phase_ns[2])];
            cpu_total += cpu;
            gpu_total += gpu;
            let sizes = if k == 0 { "0..1".to_string() } else { format!("2^{k}..2^{}", k + 1) };
            let _ = writeln!(
                t,
                "{:<17} {:>17} {:>10} {:>11.3} {:>10} {:>11.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                op.name(),
                sizes,
                calls,
                ms(cpu),
                sum(|c| &c.gpu_calls),
                ms(gpu),
                ms(up),
                ms(gpu.saturating_sub(up + down + wait)),
                ms(down),
                ms(wait)
            );
        }
    }
    let _ = writeln!(t, "in all: {:.3} ms on the CPU engine, {:.3} ms on the GPU", ms(cpu_total), ms(gpu_total));
    left_to_cpu(&mut t);
    t.push_str("(each row its own time: GMP's internal products inside an operation are their own rows; functions cuGMP passes straight to GMP, gcd or powm for example, are not timed, their large products are GMP's internal products)\n");
    t
}

extern "C" fn print_profile() {
    let _ = std::panic::catch_unwind(|| eprint!("{}", profile_table()));
}

extern "C" fn print_table() {
    let _ = std::panic::catch_unwind(|| eprint!("{}", table()));
}

/// Registers the exit-time table (from the load-time constructor, once).
pub fn print_at_exit() {
    STATS_PRINTED.store(true, Relaxed);
    // SAFETY: atexit takes a plain extern "C" function that never unwinds.
    unsafe { libc::atexit(print_table) };
}

#[cfg(test)]
mod tests {
    use super::clock;

    /// The profile's clock against the system's over a sleep: the same
    /// length within 1% in one of five tries (a thread preempted between
    /// the two clocks' reads may miss once; a wrong scale of the counter
    /// misses every time).
    #[test]
    fn clock_keeps_time() {
        clock::calibrate();
        let mut seen = Vec::new();
        for _ in 0..5 {
            let (t0, c0) = (std::time::Instant::now(), clock::now());
            std::thread::sleep(std::time::Duration::from_millis(30));
            let (c1, ns) = (clock::now(), t0.elapsed().as_nanos() as f64);
            assert!(c1 >= c0, "the clock went back");
            let measured = (c1 - c0) as f64;
            if (measured - ns).abs() < 0.01 * ns + 20_000.0 {
                return;
            }
            seen.push((measured, ns));
        }
        panic!("30 ms of sleep, the profile's clock against the system's (ns): {seen:?}");
    }
}
