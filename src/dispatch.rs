//! The dispatcher: every operation cuGMP defines passes here once, and here it
//! is decided whether the CPU engine (embedded GMP) or the GPU engine computes
//! it, from the operand size, the measured crossover, `CUGMP_GPU` and the GPU's
//! health. A GPU failure of any kind finishes the operation on the CPU.
//!
//! Also here, because every engine's result passes through: fault injection
//! (`CUGMP_FAULT`) and the run-time check against the CPU (`CUGMP_CHECK`).
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers straight from the C ABI
//! (src/abi) and asks of them exactly what GMP's function of the same name
//! asks: initialised `mpz_t`s, limb arrays of the sizes given, and the
//! overlaps GMP allows. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use crate::abi::{self, mp_bitcnt_t, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::config::{self, log, Fault, GpuMode};
use crate::gpu::linear::{Owned, Signed};
pub use crate::gpu::linear::{Logic, Shift};
use crate::{cpu, gpu, stats};
use libc::{c_char, c_int, size_t};

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
    /// A square root (GMP's mpn_sqrtrem) by Newton's iteration (src/sqrt.rs).
    Sqrt,
    /// A product inside GMP's own algorithms (division, roots, radix
    /// conversion, ...), reached through the hooks in src/abi/hooks.rs.
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

/// Operand size (limbs) from which `CUGMP_GPU=auto` sends `op` to the GPU, or
/// None where the GPU has not yet been measured to beat GMP on the ABI path
/// (operands in host memory). Every entry must come from a measurement on the
/// GPU machine, recorded in RESULTS.md.
pub fn auto_threshold(op: Op) -> Option<usize> {
    match op {
        // Products, on the shorter operand's size. Measured on an H200 against
        // GMP 6.3 on its host (RESULTS.md, 2026-11-21, fourth session,
        // `cargo bench --bench speedup -- --only mul`): n x n at 1024 limbs
        // the GPU is 1.58x faster end to end, at 256 limbs 4x slower.
        // Unbalanced products with a short side below this stay on GMP,
        // whose cost there is small.
        Op::Mul => Some(1024),
        // GMP's internal products (division, roots, radix conversion).
        // Third session, with the old NTT (one launch per radix-2 stage),
        // mpz_get_str of 10^4 limbs lost 4% with these on the GPU from 4096
        // limbs; with this session's engine products of 1024 limbs and up
        // are faster on the GPU. 2048 leaves GMP's smallest FFT-range
        // products on the CPU; the hooks rows in RESULTS.md (fourth session)
        // were measured with this value.
        Op::Internal => Some(2048),
        // Radix conversion by whole-level divisions (src/radix.rs), from its
        // number's size: on an H200 (RESULTS.md, thirteenth session) 0.99x
        // to 1.0x GMP at 2000 limbs, 1.1x to 1.3x at 5000, 2.8x at 10^4.
        // Below, GMP's own conversion (its products reach the GPU from
        // Internal's threshold, as everywhere).
        Op::GetStr => Some(4096),
        // Square roots by Newton's iteration (src/sqrt.rs), from the
        // operand's size (they also need GMP's internal products on the
        // GPU: Internal's threshold). On an H200 (RESULTS.md, fourteenth
        // session) against GMP's root with GPU products: 6000 limbs 1.38
        // to 2.12 ms against 1.29 to 1.32, 10^4 limbs 1.50 to 2.18 against
        // 3.00 to 3.08; 8192 lies between.
        Op::Sqrt => Some(8192),
        // Add and sub, on the shorter operand's size (a sum with a short
        // operand, x += 1 on a long x, is cheap for GMP and would cost the GPU
        // every limb twice over PCIe). O(n) work on O(n) bytes that cross
        // PCIe both ways: with the threaded pinned copies (src/gpu/staging.rs)
        // the H200 took 0.83x GMP's time for an n x n add at 10^8 limbs,
        // 0.93x at 10^7 (within the run-to-run noise there) and 2.3x at 10^6
        // (RESULTS.md, fourth session): only from 10^8.
        Op::Add | Op::Sub => Some(100_000_000),
        // Shifts and logic: no faster than GMP end to end at any size
        // measured (0.99x at 10^8 limbs): CPU.
        _ => None,
    }
}

/// Under `CUGMP_GPU=force`, the smallest of GMP's internal products (shorter
/// operand, limbs) sent to the GPU.
const FORCE_INTERNAL_MIN: usize = 64;

enum Route {
    Cpu,
    Gpu(&'static gpu::Gpu),
}

/// Whether `CUGMP_GPU` and the thresholds send `op` on `limbs` limbs to the
/// GPU (when there is one): from a size up, never down again.
fn gpu_wanted(op: Op, limbs: usize) -> bool {
    let cfg = config::get();
    match cfg.gpu {
        GpuMode::Off => false,
        // GMP's own algorithms make a great many small products (its
        // mulmod_bnm1 recursion bottoms out near 16 limbs): under force
        // those from FORCE_INTERNAL_MIN limbs go to the GPU, which keeps
        // GMP's test suite under force within its time.
        GpuMode::Force if op == Op::Internal => limbs >= FORCE_INTERNAL_MIN.max(cfg.force_min_limbs),
        GpuMode::Force => limbs >= cfg.force_min_limbs,
        GpuMode::Auto => auto_threshold(op).is_some_and(|t| limbs >= t),
    }
}

/// Decide where `op` on operands of `limbs` limbs runs. `gpu_capable` says
/// whether the GPU engine implements this case at all.
fn route(op: Op, limbs: usize, gpu_capable: bool) -> Route {
    let wants_gpu = gpu_capable && gpu_wanted(op, limbs);
    let chosen = if wants_gpu { gpu::get().map(Route::Gpu) } else { None };
    let route = chosen.unwrap_or(Route::Cpu);
    if matches!(route, Route::Cpu) {
        stats::cpu_call(op);
    }
    log!("{} {} limbs -> {}", op.name(), limbs, if matches!(route, Route::Gpu(_)) { "gpu" } else { "cpu" });
    route
}

/// `CUGMP_FAULT=mul`: corrupt one bit of a product so the tests can prove they
/// catch a wrong result.
fn inject_product_fault(low_limb: *mut mp_limb_t, limbs: usize) {
    if limbs > 0 && config::get().fault == Some(Fault::Mul) {
        // SAFETY: callers pass the product's own first limb with limbs >= 1.
        unsafe { *low_limb ^= 1 };
    }
}

pub unsafe fn set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    route(Op::SetStr, 0, false);
    unsafe { cpu::mpz_set_str(rop, s, base) }
}

pub unsafe fn get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    let limbs = unsafe { abi::limbs(op) };
    route(Op::GetStr, limbs.len(), false);
    let by_levels = digit_characters(base).and_then(|(radix, table)| Some((radix, table, levels_on_gpu(limbs.len(), radix)?)));
    match by_levels {
        Some((radix, table, levels)) => unsafe { text_by_levels(s, limbs, abi::size(op) < 0, radix as u32, table, levels) },
        None => unsafe { cpu::mpz_get_str(s, base, op) },
    }
}

/// mpz_get_str's `base` as the radix it writes and its digit characters:
/// lower case up to base 36, upper case for bases -2 to -36 (base -b
/// writes base b), both cases above 36; -1 to 1 mean 10. None for the
/// bases GMP refuses (its mpz_get_str returns NULL).
fn digit_characters(base: c_int) -> Option<(c_int, &'static [u8])> {
    const LOWER: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    const BOTH: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    match base {
        2..=36 => Some((base, LOWER)),
        37..=62 => Some((base, BOTH)),
        -36..=-2 => Some((-base, BOTH)),
        -1..=1 => Some((10, LOWER)),
        _ => None,
    }
}

/// mpz_get_str's text for a number that radix conversion takes by whole
/// levels (`levels_on_gpu`): GMP's characters, and the same string and
/// allocation rules (into `s`, else a block of strlen + 1 bytes from GMP's
/// allocation function), with the digit values made into characters on
/// several threads: GMP's mpz_get_str maps them one at a time after its
/// mpn_get_str, about 19 x 10^6 of them at 10^6 limbs.
unsafe fn text_by_levels(s: *mut c_char, limbs: &[mp_limb_t], negative: bool, radix: u32, table: &[u8], levels: u32) -> *mut c_char {
    log!("mpz_get_str {} limbs base {radix}: {} leaves", limbs.len(), 1usize << levels);
    let digits = crate::radix::digits(limbs, radix, levels);
    let digits = digits.as_slice();
    let sign = usize::from(negative);
    let size = sign + digits.len() + 1;
    // SAFETY: GMP's contract: a caller's s holds the text and its NUL;
    // else the block is ours, `size` bytes (GMP's allocation function
    // aborts rather than return NULL).
    let text = unsafe {
        let out = if s.is_null() { (cpu::__gmp_allocate_func)(size) as *mut u8 } else { s as *mut u8 };
        std::slice::from_raw_parts_mut(out, size)
    };
    if negative {
        text[0] = b'-';
    }
    text[size - 1] = 0;
    const RUN: usize = 1 << 20;
    let out = &mut text[sign..size - 1];
    let threads = crate::parallel::cores().min(16).min(out.len() / RUN + 1);
    crate::parallel::each_item(out, RUN, threads, |i, run| {
        for (c, &d) in run.iter_mut().zip(&digits[i * RUN..]) {
            *c = table[d as usize];
        }
    });
    text.as_mut_ptr() as *mut c_char
}

/// The operand of an `mpz` function as the GPU engine takes it.
unsafe fn signed<'a>(x: mpz_srcptr) -> Signed<'a> {
    unsafe { Signed { negative: abi::size(x) < 0, magnitude: abi::limbs(x) } }
}

/// Run one `mpz` operation: on the GPU when `route` sends it there and the
/// GPU completes it, else (or after any GPU failure) with `cpu_op`, the
/// embedded GMP's function. `cpu_op` also serves as the reference for
/// `CUGMP_CHECK`. Returns after `r` holds the result.
unsafe fn mpz_op(
    op: Op,
    what: &str,
    limbs: usize,
    gpu_capable: bool,
    r: mpz_ptr,
    gpu_op: impl FnOnce(&gpu::Gpu) -> Result<Owned, gpu::GpuError>,
    cpu_op: impl Fn(mpz_ptr),
) {
    if let Route::Gpu(g) = route(op, limbs, gpu_capable) {
        stats::gpu_attempt_starts();
        let start = std::time::Instant::now();
        match gpu_op(g) {
            Ok(result) => {
                stats::gpu_call(op, start.elapsed());
                if config::get().check {
                    // Before storing: `r` may be an operand.
                    unsafe { check_against_cpu(what, &result.magnitude, result.negative, &cpu_op) };
                }
                unsafe { abi::store(r, &result.magnitude, result.negative) };
                return;
            }
            Err(e) => {
                stats::fallback(op, &e);
                log!("{what}: GPU failed ({e}); finishing on the CPU");
            }
        }
    }
    cpu_op(r)
}

fn longer(a: mpz_srcptr, b: mpz_srcptr) -> usize {
    unsafe { abi::limbs(a).len().max(abi::limbs(b).len()) }
}

fn shorter(a: mpz_srcptr, b: mpz_srcptr) -> usize {
    unsafe { abi::limbs(a).len().min(abi::limbs(b).len()) }
}

pub unsafe fn add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        mpz_op(Op::Add, "mpz_add", shorter(a, b), true, r, |g| g.add(sa, sb), |t| cpu::mpz_add(t, a, b))
    }
}

pub unsafe fn sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let minus_b = Signed { negative: !sb.negative, magnitude: sb.magnitude };
        mpz_op(Op::Sub, "mpz_sub", shorter(a, b), true, r, |g| g.add(sa, minus_b), |t| cpu::mpz_sub(t, a, b))
    }
}

pub unsafe fn mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let (la, lb) = (sa.magnitude, sb.magnitude);
        let negative = sa.negative != sb.negative;
        if !std::ptr::eq(r, a) && !std::ptr::eq(r, b) && !la.is_empty() && !lb.is_empty() {
            // r is neither operand: the product comes from the device
            // straight into r's limbs, and a GPU failure leaves the operands
            // intact for the CPU.
            let (long, short) = if la.len() >= lb.len() { (la, lb) } else { (lb, la) };
            let n = long.len() + short.len();
            let on_gpu = product_route(Op::Mul, long.len(), short.len()).is_some_and(|g| {
                if ((*r)._mp_alloc as usize) < n {
                    cpu::mpz_realloc(r, n as mp_size_t);
                }
                let out = std::slice::from_raw_parts_mut((*r)._mp_d, n);
                if !product_into(g, Op::Mul, "mpz_mul", (long.as_ptr(), long.len()), (short.as_ptr(), short.len()), out) {
                    return false;
                }
                let size = n - out.iter().rev().take_while(|&&l| l == 0).count();
                // size <= n <= _mp_alloc <= INT_MAX.
                (*r)._mp_size = if negative { -(size as c_int) } else { size as c_int };
                true
            });
            if !on_gpu {
                cpu::mpz_mul(r, a, b);
            }
            inject_product_fault((*r)._mp_d, abi::limbs(r).len());
            return;
        }
        // Same limbs (a == b) square: Gpu::mul takes one transform.
        let gpu_op = |g: &gpu::Gpu| g.mul(la, lb).map(|p| Owned::new(negative, p));
        mpz_op(Op::Mul, "mpz_mul", la.len().min(lb.len()), !la.is_empty() && !lb.is_empty(), r, gpu_op, |t| cpu::mpz_mul(t, a, b));
        inject_product_fault((*r)._mp_d, abi::limbs(r).len());
    }
}

thread_local! {
    /// GMP's internal products on this thread go to the GPU only from this
    /// many limbs (on top of the thresholds). usize::MAX while the thread
    /// computes a CPU reference (CUGMP_CHECK: the reference is GMP's alone,
    /// never the GPU checked against itself); radix conversion's threads
    /// raise it for small numbers, which their CPUs convert in parallel where
    /// the GPU would take their products one at a time (src/radix.rs).
    static INTERNAL_GPU_FROM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Run `f` with this thread's internal products below `limbs` on the CPU: a
/// bound already set is never lowered (a CPU reference stays one); restored
/// after, also when `f` unwinds.
pub(crate) fn with_internal_gpu_from<T>(limbs: usize, f: impl FnOnce() -> T) -> T {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            INTERNAL_GPU_FROM.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(INTERNAL_GPU_FROM.with(|c| c.replace(c.get().max(limbs))));
    f()
}

/// Whether this thread keeps GMP's internal work on `limbs` limbs on the CPU
/// (see INTERNAL_GPU_FROM).
fn internal_held_on_cpu(limbs: usize) -> bool {
    limbs < INTERNAL_GPU_FROM.with(|c| c.get())
}

/// Whether GMP's own work on `limbs` limbs (its internal products, and what
/// is sized or split for them) goes to the GPU: wanted at that size, a GPU
/// in use, and not held on this thread's CPU.
fn internal_on_gpu(limbs: usize) -> bool {
    !internal_held_on_cpu(limbs) && gpu_wanted(Op::Internal, limbs) && gpu::get().is_some()
}

/// Run `f` as a CPU reference computation: every internal product on the CPU.
fn cpu_reference<T>(f: impl FnOnce() -> T) -> T {
    with_internal_gpu_from(usize::MAX, f)
}

/// `out = {up, un} * {vp, vn}` (`out` of un + vn limbs, `un >= vn >= 1`, not
/// overlapping the operands) on the GPU when `op` is routed there; false if
/// the CPU must do it (`out` then holds anything).
unsafe fn product_on_gpu(op: Op, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, what: &str, out: &mut [mp_limb_t]) -> bool {
    product_route(op, un, vn).is_some_and(|g| unsafe { product_into(g, op, what, (up, un), (vp, vn), out) })
}

/// `out = {up, un} * {vp, vn}` on `g` (`out` of un + vn limbs, as
/// `product_with` takes the operands): false after a GPU failure (`out`
/// then holds anything).
unsafe fn product_into(g: &gpu::Gpu, op: Op, what: &str, u: (*const mp_limb_t, usize), v: (*const mp_limb_t, usize), out: &mut [mp_limb_t]) -> bool {
    unsafe { product_with(op, what, u, v, None, |u, v| g.mul_into(u, v, out).map(|()| out)) }.is_some()
}

/// The GPU when a product of un x vn limbs goes there.
fn product_route(op: Op, un: usize, vn: usize) -> Option<&'static gpu::Gpu> {
    route_at(op, un.min(vn), un > 0 && vn > 0)
}

/// The GPU when `op` routed by `limbs` goes there (`route`, and GMP's
/// internal work only where this thread does not hold it on the CPU).
fn route_at(op: Op, limbs: usize, gpu_capable: bool) -> Option<&'static gpu::Gpu> {
    if op == Op::Internal && internal_held_on_cpu(limbs) {
        return None;
    }
    match route(op, limbs, gpu_capable) {
        Route::Gpu(g) => Some(g),
        Route::Cpu => None,
    }
}

/// `{up, un} * {vp, vn}` (`un >= vn`), or with `modulus` Some(rn) that
/// product mod B^rn - 1 in min(rn, un + vn) limbs as GMP's mulmod_bnm1
/// gives it, by `compute` (a call of the GPU the product was routed to,
/// given the operands; the same limbs twice square), counted and, under
/// CUGMP_CHECK, checked against the CPU; None after a GPU failure, which is
/// counted and logged.
unsafe fn product_with<P: AsRef<[mp_limb_t]>>(
    op: Op,
    what: &str,
    (up, un): (*const mp_limb_t, usize),
    (vp, vn): (*const mp_limb_t, usize),
    modulus: Option<usize>,
    compute: impl FnOnce(&[mp_limb_t], &[mp_limb_t]) -> Result<P, gpu::GpuError>,
) -> Option<P> {
    let (u, v) = unsafe { (std::slice::from_raw_parts(up, un), std::slice::from_raw_parts(vp, vn)) };
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    match compute(u, v) {
        Ok(product) => {
            stats::gpu_call(op, start.elapsed());
            if config::get().check {
                let mut want = vec![0; un + vn];
                cpu_reference(|| unsafe { cpu::mpn_mul(want.as_mut_ptr(), up, un as mp_size_t, vp, vn as mp_size_t) });
                if let Some(rn) = modulus {
                    let mut folded = vec![0; rn.min(un + vn)];
                    fold_mod_bnm1(&want, &mut folded);
                    want = folded;
                }
                if want != product.as_ref() {
                    eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {un}x{vn} limbs differs from the CPU engine's; aborting");
                    std::process::abort();
                }
            }
            Some(product)
        }
        Err(e) => {
            stats::fallback(op, &e);
            log!("{what}: GPU failed ({e}); finishing on the CPU");
            None
        }
    }
}

/// `{rp, un+vn} = {up, un} * {vp, vn}` on the GPU when routed there; false if
/// the CPU must do it. `rp` may not overlap the operands (GMP's rule for mpn_mul).
unsafe fn mpn_product_on_gpu(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, what: &str) -> bool {
    let out = unsafe { std::slice::from_raw_parts_mut(rp, un + vn) };
    unsafe { product_on_gpu(Op::Mul, up, un, vp, vn, what, out) }
}

/// GMP's `mpn_nussbaumer_mul` (its FFT product, which its `mpn_mul`,
/// `mpn_mul_n` and `mpn_sqr` call above MUL_FFT_THRESHOLD):
/// `{pp, an+bn} = {ap, an} * {bp, bn}`, `an >= bn > 0`, on the GPU when
/// routed there, else `cpu` (GMP's own routine).
pub unsafe fn internal_product(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize, cpu: impl FnOnce()) {
    let out = unsafe { std::slice::from_raw_parts_mut(pp, an + bn) };
    if !unsafe { product_on_gpu(Op::Internal, ap, an, bp, bn, "mpn_nussbaumer_mul", out) } {
        cpu();
    }
    inject_product_fault(pp, an + bn);
}

/// GMP's `mpn_mulmod_bnm1` (and `mpn_sqrmod_bnm1` with b = a):
/// `{rp, min(rn, an+bn)} = {ap, an} * {bp, bn} mod (B^rn - 1)`,
/// `0 < bn <= an <= rn`, with GMP's representation: zero only when an
/// operand is zero, the class of zero otherwise as B^rn - 1. On the GPU when
/// routed there, else `cpu`: with no wrap-around (an + bn <= rn) the
/// product; where 2 rn points are one transform (`mulmod_bnm1_next_size`
/// makes GMP ask for such rn) one cyclic convolution; else the full product
/// folded once.
#[allow(clippy::too_many_arguments)]
pub unsafe fn internal_mulmod_bnm1(rp: *mut mp_limb_t, rn: usize, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize, cpu: impl FnOnce()) {
    let out = unsafe { std::slice::from_raw_parts_mut(rp, rn.min(an + bn)) };
    let what = "mpn_mulmod_bnm1";
    let (a, b) = ((ap, an), (bp, bn));
    let done = product_route(Op::Internal, an, bn).is_some_and(|g| unsafe {
        if an + bn <= rn {
            product_into(g, Op::Internal, what, a, b, out)
        } else if gpu::ntt::cyclic_shape(rn).is_some() {
            product_with(Op::Internal, what, a, b, Some(rn), |u, v| g.mulmod_bnm1_into(u, v, out).map(|()| out)).is_some()
        } else {
            // The full product in a buffer of its own (Gpu::mul: not zeroed first).
            product_with(Op::Internal, what, a, b, None, |u, v| g.mul(u, v)).map(|p| fold_mod_bnm1(&p, out)).is_some()
        }
    });
    if !done {
        cpu();
    }
    inject_product_fault(rp, rn.min(an + bn));
}

/// GMP's `mpn_mulmod_bnm1_next_size`: the modulus size (limbs) GMP's
/// algorithms take for a product mod B^rn - 1 of about `n` limbs; `gmp` is
/// GMP's own answer. Where GMP's internal products of `n` limbs go to the
/// GPU: the smallest size from `gmp` up whose 2 rn points are one transform,
/// so that internal_mulmod_bnm1 makes one cyclic convolution of 2 rn points
/// where it would otherwise transform the whole product (up to 4 rn points)
/// and fold it. At most 1.5 gmp, so GMP's own conditions (e.g. 2n > rn in
/// redc_n) hold. Monotone in `n`, as GMP needs (it sizes scratch for the
/// largest n and then asks for smaller ones): GMP's answer is, so is the
/// smallest cyclic size above it, and the GPU takes every n from a
/// threshold up; the GPU's health after start does not enter, so the answer
/// for an n never changes within a process.
pub fn mulmod_bnm1_next_size(n: usize, gmp: usize) -> usize {
    match internal_on_gpu(n).then(|| gpu::ntt::cyclic_size(gmp)).flatten() {
        Some(rn) => rn,
        None => gmp,
    }
}

/// GMP's `mpn_get_str` (`s`, `base`, `{up, un}` as GMP takes them): by
/// divisions a whole level at a time (src/radix.rs) where `levels_on_gpu`
/// says so, else `cpu` (GMP's own).
pub unsafe fn internal_get_str(s: *mut u8, base: c_int, up: *mut mp_limb_t, un: mp_size_t, cpu: impl FnOnce() -> size_t) -> size_t {
    let n = usize::try_from(un).unwrap_or(0);
    let Some(levels) = levels_on_gpu(n, base) else {
        return cpu();
    };
    log!("mpn_get_str {n} limbs base {base}: {} leaves", 1usize << levels);
    // SAFETY: GMP's contract: {up, un} readable, s holds the digits.
    let digits = crate::radix::digits(unsafe { std::slice::from_raw_parts(up, n) }, base as u32, levels);
    let digits = digits.as_slice();
    unsafe { std::ptr::copy_nonoverlapping(digits.as_ptr(), s, digits.len()) };
    digits.len()
}

/// GMP's `mpn_sqrtrem` (`sp`, `rp`, `{np, nn}` as GMP takes them, `rp`
/// NULL or `np` or apart): where GMP's internal products of `nn` limbs go
/// to the GPU, by Newton's iteration (src/sqrt.rs), else `cpu` (GMP's own,
/// also if the estimate were ever refused).
pub unsafe fn internal_sqrtrem(sp: *mut mp_limb_t, rp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t, cpu: impl FnOnce() -> mp_size_t) -> mp_size_t {
    let n = usize::try_from(nn).unwrap_or(0);
    if n < crate::sqrt::MIN_LIMBS || !gpu_wanted(Op::Sqrt, n) || !internal_on_gpu(n) {
        return cpu();
    }
    // SAFETY: GMP's contract: {np, nn} readable, its top limb nonzero.
    let Some(found) = crate::sqrt::root_and_remainder(unsafe { std::slice::from_raw_parts(np, n) }) else {
        log!("mpn_sqrtrem {n} limbs: Newton's estimate refused; GMP's root instead");
        return cpu();
    };
    let (root, remainder) = (found.root(), found.remainder());
    // SAFETY: sp holds ceil(nn/2) limbs (root has exactly that many), rp
    // (when given) nn limbs, and the remainder is at most root + 1 limbs;
    // np is no longer read. The copies go on threads where they are large
    // (GMP's result limbs are often fresh memory, its page faults theirs).
    unsafe {
        crate::gpu::staging::copy_limbs(std::slice::from_raw_parts_mut(sp, root.len()), root);
        if rp.is_null() {
            return mp_size_t::from(!remainder.is_empty());
        }
        crate::gpu::staging::copy_limbs(std::slice::from_raw_parts_mut(rp, remainder.len()), remainder);
    }
    remainder.len() as mp_size_t
}

/// The levels radix conversion splits a number of `n` limbs into when it
/// converts it in `base` by whole levels on the GPU: where GMP's internal
/// products of that size go to the GPU, only with GMP's own allocation
/// functions (its code then runs on other threads too), bases that are not
/// powers of two (GMP converts those in linear time), and numbers of at
/// least two leaves. None: GMP's own conversion.
fn levels_on_gpu(n: usize, base: c_int) -> Option<u32> {
    let levels = crate::radix::levels_for(n);
    let wanted = levels > 0
        && gpu_wanted(Op::GetStr, n)
        && (3..=256).contains(&base)
        && !(base as u32).is_power_of_two()
        && gmp_allocates_by_default()
        && internal_on_gpu(n);
    wanted.then_some(levels)
}

/// `out = a * b` (`out` of a.len() + b.len() limbs, both non-empty, none
/// overlapping; the same slice twice squares) for cuGMP's own algorithms in
/// GMP's place (radix conversion, src/radix.rs, whose products each stand
/// for a whole level's small ones laid side by side; square roots,
/// src/sqrt.rs): routed as GMP's internal products by the longer operand's
/// size (its work), on the GPU there and else, or after a GPU failure,
/// GMP's `mpn_mul`. `what` names it in the log.
pub fn own_product(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t], what: &str) {
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    assert!(!v.is_empty() && out.len() == u.len() + v.len(), "{what}: {} x {} limbs into {}", u.len(), v.len(), out.len());
    // SAFETY: u and v are slices of the lengths given.
    let done = route_at(Op::Internal, u.len(), true).is_some_and(|g| unsafe { product_into(g, Op::Internal, what, (u.as_ptr(), u.len()), (v.as_ptr(), v.len()), &mut *out) });
    if !done {
        // SAFETY: out holds u.len() + v.len() limbs apart from u and v;
        // GMP's mpn_mul takes un >= vn >= 1 and squares when up == vp.
        unsafe { cpu::mpn_mul(out.as_mut_ptr(), u.as_ptr(), u.len() as mp_size_t, v.as_ptr(), v.len() as mp_size_t) };
    }
    inject_product_fault(out.as_mut_ptr(), out.len());
}

/// Whether GMP's allocation functions are still its own (thread safe), not a
/// program's (`mp_set_memory_functions`), which GMP calls only from the
/// thread that called it.
fn gmp_allocates_by_default() -> bool {
    // SAFETY: reads of GMP's function pointers, set only by the program's
    // mp_set_memory_functions.
    unsafe {
        cpu::__gmp_allocate_func as *const () == cpu::gmp_default_allocate as *const ()
            && cpu::__gmp_reallocate_func as *const () == cpu::gmp_default_reallocate as *const ()
            && cpu::__gmp_free_func as *const () == cpu::gmp_default_free as *const ()
    }
}

/// `r = p mod (B^r.len() - 1)` for `p` of r.len() to 2 r.len() limbs: the
/// low half plus the high half, the carry out added back at the bottom (B^rn
/// is 1 modulo B^rn - 1). A nonzero multiple of B^rn - 1 comes out as
/// B^rn - 1, never 0, which is GMP's representation.
fn fold_mod_bnm1(p: &[mp_limb_t], r: &mut [mp_limb_t]) {
    let rn = r.len();
    debug_assert!(rn <= p.len() && p.len() <= 2 * rn);
    let (lo, hi) = p.split_at(rn);
    let hn = hi.len();
    if hn == 0 {
        r.copy_from_slice(lo);
        return;
    }
    // GMP's own adds (they take n >= 1): r = lo + hi, then the carry out
    // added back at the bottom. lo + hi < 2 B^rn, so after that end-around
    // carry the sum is below B^rn.
    // SAFETY: r and lo have rn limbs, hi has 1 <= hn <= rn limbs, and r
    // overlaps neither (p is the GPU's product buffer) except itself in place.
    unsafe {
        let rp = r.as_mut_ptr();
        let mut carry = cpu::mpn_add_n(rp, lo.as_ptr(), hi.as_ptr(), hn as mp_size_t);
        if hn < rn {
            carry = cpu::mpn_add_1(rp.add(hn), lo.as_ptr().add(hn), (rn - hn) as mp_size_t, carry);
        }
        if carry != 0 {
            cpu::mpn_add_1(rp, rp, rn as mp_size_t, carry);
        }
    }
}

pub unsafe fn mpn_mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> mp_limb_t {
    unsafe {
        if !mpn_product_on_gpu(rp, up, un as usize, vp, vn as usize, "mpn_mul") {
            cpu::mpn_mul(rp, up, un, vp, vn);
        }
        inject_product_fault(rp, (un + vn) as usize);
        *rp.add((un + vn) as usize - 1)
    }
}

pub unsafe fn mpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, vp, n as usize, "mpn_mul_n") {
            cpu::mpn_mul_n(rp, up, vp, n);
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

pub unsafe fn mpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, up, n as usize, "mpn_sqr") {
            cpu::mpn_sqr(rp, up, n);
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

pub unsafe fn shift(kind: Shift, r: mpz_ptr, a: mpz_srcptr, bits: mp_bitcnt_t) {
    unsafe {
        let sa = signed(a);
        let (what, cpu_op): (&str, unsafe extern "C" fn(mpz_ptr, mpz_srcptr, mp_bitcnt_t)) = match kind {
            Shift::Left => ("mpz_mul_2exp", cpu::mpz_mul_2exp),
            Shift::RightTrunc => ("mpz_tdiv_q_2exp", cpu::mpz_tdiv_q_2exp),
            Shift::RightFloor => ("mpz_fdiv_q_2exp", cpu::mpz_fdiv_q_2exp),
            Shift::RightCeil => ("mpz_cdiv_q_2exp", cpu::mpz_cdiv_q_2exp),
        };
        mpz_op(Op::Shift, what, sa.magnitude.len(), true, r, |g| g.shift(kind, sa, bits), |t| cpu_op(t, a, bits))
    }
}

pub unsafe fn logic(kind: Logic, r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let (op, what, cpu_op): (Op, &str, unsafe extern "C" fn(mpz_ptr, mpz_srcptr, mpz_srcptr)) = match kind {
            Logic::And => (Op::And, "mpz_and", cpu::mpz_and),
            Logic::Ior => (Op::Ior, "mpz_ior", cpu::mpz_ior),
            Logic::Xor => (Op::Xor, "mpz_xor", cpu::mpz_xor),
        };
        mpz_op(op, what, longer(a, b), true, r, |g| g.logic(kind, sa, sb), |t| cpu_op(t, a, b))
    }
}

pub unsafe fn com(r: mpz_ptr, a: mpz_srcptr) {
    unsafe {
        let sa = signed(a);
        mpz_op(Op::Com, "mpz_com", sa.magnitude.len(), true, r, |g| g.com(sa), |t| cpu::mpz_com(t, a))
    }
}

/// `CUGMP_CHECK=1`: compute the same operation with the CPU engine into a
/// temporary and abort with a clear message if the GPU's result differs.
unsafe fn check_against_cpu(what: &str, magnitude: &[mp_limb_t], negative: bool, reference: &dyn Fn(mpz_ptr)) {
    let mut n = magnitude.len();
    while n > 0 && magnitude[n - 1] == 0 {
        n -= 1;
    }
    let mut t = std::mem::MaybeUninit::<abi::__mpz_struct>::uninit();
    unsafe {
        cpu::mpz_init(t.as_mut_ptr());
        cpu_reference(|| reference(t.as_mut_ptr()));
        let same = abi::limbs(t.as_ptr()) == &magnitude[..n] && (abi::size(t.as_ptr()) < 0) == (negative && n > 0);
        cpu::mpz_clear(t.as_mut_ptr());
        if !same {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {n} limbs differs from the CPU engine's; aborting");
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mpz_get_str's text by levels is GMP's: every kind of base, both
    /// signs, into the caller's buffer and into one GMP allocates (the
    /// products on the CPU here).
    #[test]
    fn text_by_levels_matches_gmp() {
        let limbs: Vec<mp_limb_t> = (0..700u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)).collect();
        for base in [3, 10, 36, 37, 62, -10, -36, 0, 1, -1] {
            let (radix, table) = digit_characters(base).expect("a base GMP takes");
            for negative in [false, true] {
                let size = if negative { -(limbs.len() as libc::c_int) } else { limbs.len() as libc::c_int };
                let x = abi::__mpz_struct { _mp_alloc: limbs.len() as libc::c_int, _mp_size: size, _mp_d: limbs.as_ptr() as *mut mp_limb_t };
                // SAFETY: x is a read-only view; GMP's strings are freed
                // with GMP's function and their strlen + 1.
                unsafe {
                    let want = cpu::mpz_get_str(std::ptr::null_mut(), base, &x);
                    let want_text = std::ffi::CStr::from_ptr(want).to_owned();
                    for levels in [1, 3] {
                        let got = text_by_levels(std::ptr::null_mut(), &limbs, negative, radix as u32, table, levels);
                        assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "base {base}, negative {negative}, {levels} levels");
                        (cpu::__gmp_free_func)(got as *mut libc::c_void, want_text.as_bytes().len() + 1);
                        let mut buffer = vec![1 as c_char; want_text.as_bytes().len() + 1];
                        let got = text_by_levels(buffer.as_mut_ptr(), &limbs, negative, radix as u32, table, levels);
                        assert_eq!(got, buffer.as_mut_ptr(), "the caller's buffer comes back");
                        assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "base {base} into the caller's buffer");
                    }
                    (cpu::__gmp_free_func)(want as *mut libc::c_void, want_text.as_bytes().len() + 1);
                }
            }
        }
        assert!(digit_characters(63).is_none() && digit_characters(-37).is_none());
    }

    #[test]
    fn fold_keeps_gmp_representation_of_zero() {
        let m = u64::MAX;
        // (B^2 - 1) * 1 = B^2 - 1: stays all ones (the class of zero, nonzero operands).
        let mut r = [0; 2];
        fold_mod_bnm1(&[m, m, 0, 0], &mut r);
        assert_eq!(r, [m, m]);
        // 2 (B^2 - 1) = B^2 + (B^2 - 2): carry out, added back, all ones again.
        fold_mod_bnm1(&[m - 1, m, 1, 0], &mut r);
        assert_eq!(r, [m, m]);
        // Zero stays zero.
        fold_mod_bnm1(&[0, 0, 0, 0], &mut r);
        assert_eq!(r, [0, 0]);
        // B^2 + 5 = 6 mod B^2 - 1.
        fold_mod_bnm1(&[5, 0, 1, 0], &mut r);
        assert_eq!(r, [6, 0]);
        // an + bn <= rn: the caller passes r of an + bn limbs, the product itself.
        let mut r3 = [9; 3];
        fold_mod_bnm1(&[7, 8], &mut r3[..2]);
        assert_eq!(r3, [7, 8, 9]);
    }
}
