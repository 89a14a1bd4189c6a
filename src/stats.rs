//! `CUGMP_STATS=1`: per operation, calls served by the CPU engine and by the
//! GPU, bytes copied each way, GPU time, and GPU attempts that fell back to
//! the CPU with their reason; printed to stderr as a table when the process
//! exits. Counting is a few relaxed atomic adds per call, always on (the
//! figures also serve `cugmp_gpu_operations`); only the printing is optional.
//!
//! A leaf: it imports nothing of the crate. The engines and the routing
//! tell it what happened in its own terms ([`Op`], [`Fallback`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

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
    /// A product inside GMP's own algorithms (division, roots, radix
    /// conversion, ...), reached through the hooks.
    Internal,
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
            Op::Internal => "gmp-internal mul",
        }
    }

    pub const ALL: [Op; 12] =
        [Op::SetStr, Op::GetStr, Op::Add, Op::Sub, Op::Mul, Op::Shift, Op::And, Op::Ior, Op::Xor, Op::Com, Op::Sqrt, Op::Internal];
}

/// Why a GPU attempt ended on the CPU (the columns of the fallback count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    Driver,
    Injected,
    Panic,
    TooLarge,
    Thread,
}

impl Fallback {
    const ALL: [Fallback; 5] = [Fallback::Driver, Fallback::Injected, Fallback::Panic, Fallback::TooLarge, Fallback::Thread];

    fn name(self) -> &'static str {
        match self {
            Fallback::Driver => "CUDA error",
            Fallback::Injected => "injected fault",
            Fallback::Panic => "panic in the CUDA bindings",
            Fallback::TooLarge => "too large for the device",
            Fallback::Thread => "no copy thread",
        }
    }
}

const REASONS: usize = Fallback::ALL.len();

struct OpStats {
    cpu: AtomicU64,
    gpu: AtomicU64,
    to_gpu: AtomicU64,
    from_gpu: AtomicU64,
    gpu_ns: AtomicU64,
    fallbacks: [AtomicU64; REASONS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: OpStats = OpStats {
    cpu: AtomicU64::new(0),
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

/// Starts the count of one GPU attempt's copies (the thread's counter).
pub fn gpu_attempt_starts() {
    take_copied();
}

pub fn cpu_call(op: Op) {
    of(op).cpu.fetch_add(1, Relaxed);
}

/// A GPU attempt that completed, with its wall time.
pub fn gpu_call(op: Op, elapsed: std::time::Duration) {
    let s = of(op);
    let (to, from) = take_copied();
    s.gpu.fetch_add(1, Relaxed);
    s.to_gpu.fetch_add(to, Relaxed);
    s.from_gpu.fetch_add(from, Relaxed);
    s.gpu_ns.fetch_add(elapsed.as_nanos() as u64, Relaxed);
}

/// A GPU attempt that failed; the CPU finishes it (counted there too).
pub fn fallback(op: Op, why: Fallback) {
    let s = of(op);
    let (to, from) = take_copied();
    s.to_gpu.fetch_add(to, Relaxed);
    s.from_gpu.fetch_add(from, Relaxed);
    s.fallbacks[why as usize].fetch_add(1, Relaxed);
    s.cpu.fetch_add(1, Relaxed);
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
        let (cpu, gpu) = (s.cpu.load(Relaxed), s.gpu.load(Relaxed));
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
    if !any {
        t.push_str("(no operation cuGMP routes was called)\n");
    }
    t
}

extern "C" fn print_table() {
    let _ = std::panic::catch_unwind(|| eprint!("{}", table()));
}

/// Registers the exit-time table (from the load-time constructor, once).
pub fn print_at_exit() {
    // SAFETY: atexit takes a plain extern "C" function that never unwinds.
    unsafe { libc::atexit(print_table) };
}
