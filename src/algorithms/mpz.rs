//! The `mpz` operations cuGMP routes itself: add, sub, mul, shifts, logic
//! and complement, each on the GPU where the routing sends it and the GPU
//! completes it, else (or after any GPU failure) by the embedded GMP, which
//! also serves as the reference under `CUGMP_CHECK`. The exports ask the
//! `*_on_cpu` functions first, before their panic boundary: below the
//! GPU's size they call GMP at once (src/abi/mod.rs, `routed!`); the
//! functions here are the routed path.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's function of the
//! same name takes them: initialised `mpz_t`s and the overlaps GMP allows.
//! That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::factorial;
use super::product::{inject_product_fault, product_into};
use super::route::{cpu_only, cpu_reference, one_sharing, product_route, route, shared_on_cpu, shared_twice};
use crate::config::{self, log};
use crate::gmp::mpz::{self, Int};
use crate::gmp::{self, embedded, mp_bitcnt_t, mp_limb_t, mpz_ptr, mpz_srcptr};
use crate::gpu::linear::{Logic, Owned, Shift, Signed};
use crate::gpu::{self, Gpu};
use crate::stats::{self, Op};
use crate::cpu;
use libc::c_int;

/// Whether a sum, difference or product (`op`) of `a` and `b` goes
/// straight to the embedded GMP: `route::cpu_only` by the shorter operand.
#[inline(always)]
pub unsafe fn sum_on_cpu(op: Op, a: mpz_srcptr, b: mpz_srcptr) -> bool {
    cpu_only(op, shorter(a, b))
}

/// Whether `a OP b` (`kind`) goes straight to the embedded GMP: by the
/// longer operand.
#[inline(always)]
pub unsafe fn logic_on_cpu(kind: Logic, a: mpz_srcptr, b: mpz_srcptr) -> bool {
    cpu_only(gmp_logic(kind).0, longer(a, b))
}

/// Whether a shift or complement (`op`) of `a` goes straight to the
/// embedded GMP: by its size.
#[inline(always)]
pub unsafe fn unary_on_cpu(op: Op, a: mpz_srcptr) -> bool {
    cpu_only(op, unsafe { gmp::limbs(a) }.len())
}

/// The operand of an `mpz` function as the GPU engine takes it.
unsafe fn signed<'a>(x: mpz_srcptr) -> Signed<'a> {
    unsafe { Signed { negative: gmp::negative(x), magnitude: gmp::limbs(x) } }
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
    gpu_op: impl FnOnce(&Gpu) -> Result<Owned, gpu::GpuError>,
    cpu_op: impl Fn(mpz_ptr),
) {
    if let Some(g) = route(op, limbs, gpu_capable) {
        stats::gpu_attempt_starts();
        let start = std::time::Instant::now();
        match gpu_op(g) {
            Ok(result) => {
                stats::gpu_call(op, limbs, start.elapsed());
                if config::get().check {
                    // Before storing: `r` may be an operand.
                    check_against_cpu(what, &result.magnitude, result.negative, &cpu_op);
                }
                unsafe { mpz::store(r, &result.magnitude, result.negative) };
                return;
            }
            Err(e) => {
                stats::fallback(op, e.fallback());
                log!("{what}: GPU failed ({e}); finishing on the CPU");
            }
        }
    }
    stats::on_cpu(op, limbs, || cpu_op(r))
}

#[inline(always)]
fn longer(a: mpz_srcptr, b: mpz_srcptr) -> usize {
    unsafe { gmp::limbs(a).len().max(gmp::limbs(b).len()) }
}

#[inline(always)]
fn shorter(a: mpz_srcptr, b: mpz_srcptr) -> usize {
    unsafe { gmp::limbs(a).len().min(gmp::limbs(b).len()) }
}

/// Whether `mpz_fac_ui(r, n)` goes straight to the embedded GMP: n! below
/// the size from which it could be computed here (`route::cpu_only` by
/// the result's limbs).
#[inline(always)]
pub fn fac_ui_on_cpu(n: libc::c_ulong) -> bool {
    cpu_only(Op::Fac, factorial::fac_limbs(n))
}

/// Whether `mpz_bin_uiui(r, n, k)` goes straight to the embedded GMP: C(n,
/// k) below the size from which it could be computed here, told cheaply
/// (k or n - k of fewer limbs' worth than the threshold's: C(n, k) <
/// n^min(k, n-k)).
#[inline(always)]
pub fn bin_uiui_on_cpu(n: libc::c_ulong, k: libc::c_ulong) -> bool {
    let small = k.min(n.saturating_sub(k));
    let bits = u64::from(64 - n.leading_zeros());
    cpu_only(Op::Bin, (small.saturating_mul(bits) / 64) as usize + 1)
}

/// `mpz_bin_uiui`: from the exponents of C(n, k)'s primes
/// (src/algorithms/factorial.rs) where `bin_uiui_on_gpu` says so, else
/// GMP's own.
pub unsafe fn bin_uiui(r: mpz_ptr, n: libc::c_ulong, k: libc::c_ulong) {
    let limbs = factorial::bin_limbs(n, k);
    route(Op::Bin, limbs, false);
    if factorial::bin_uiui_on_gpu(n, k) {
        log!("mpz_bin_uiui({n}, {k}): from its primes' exponents");
        stats::on_cpu(Op::Bin, limbs, || unsafe { factorial::binomial_into(r, n, k) });
    } else {
        stats::on_cpu(Op::Bin, limbs, || unsafe { embedded::mpz_bin_uiui(r, n, k) });
    }
}

/// `mpz_fac_ui`: from the exponents of n!'s primes (src/algorithms/factorial.rs)
/// where `fac_ui_on_gpu` says so, else GMP's own.
pub unsafe fn fac_ui(r: mpz_ptr, n: libc::c_ulong) {
    let limbs = factorial::fac_limbs(n);
    route(Op::Fac, limbs, false);
    if factorial::fac_ui_on_gpu(n) {
        log!("mpz_fac_ui({n}): from its primes' exponents");
        stats::on_cpu(Op::Fac, limbs, || unsafe { factorial::factorial_into(r, n) });
    } else {
        stats::on_cpu(Op::Fac, limbs, || unsafe { embedded::mpz_fac_ui(r, n) });
    }
}

#[inline(never)]
pub unsafe fn add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        mpz_op(Op::Add, "mpz_add", shorter(a, b), true, r, |g| g.add(sa, sb), |t| embedded::mpz_add(t, a, b))
    }
}

#[inline(never)]
pub unsafe fn sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let minus_b = Signed { negative: !sb.negative, magnitude: sb.magnitude };
        mpz_op(Op::Sub, "mpz_sub", shorter(a, b), true, r, |g| g.add(sa, minus_b), |t| embedded::mpz_sub(t, a, b))
    }
}

#[inline(never)]
pub unsafe fn mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let (la, lb) = (sa.magnitude, sb.magnitude);
        let negative = sa.negative != sb.negative;
        if la.is_empty() || lb.is_empty() {
            return embedded::mpz_mul(r, a, b);
        }
        // The product comes from the device straight into r's limbs, or
        // into fresh ones where r is an operand or too small (its old limbs
        // then freed, not copied); a GPU failure leaves the operands intact
        // for the CPU. Same limbs (a == b): a square, one transform.
        let (long, short) = if la.len() >= lb.len() { (la, lb) } else { (lb, la) };
        let n = long.len() + short.len();
        let on_gpu = product_route(Op::Mul, long.len(), short.len()).is_some_and(|g| {
            product_in_place(r, a, b, n, negative, Room::Pinned, |out| product_into(g, Op::Mul, "mpz_mul", (long.as_ptr(), long.len()), (short.as_ptr(), short.len()), out))
        });
        if !on_gpu {
            stats::on_cpu(Op::Mul, short.len(), || mul_on_cpu(r, a, b));
        }
        inject_product_fault((*r)._mp_d, gmp::limbs(r).len());
    }
}

/// `r = a b` as `__gmpz_mul` decides it: the CPU engine at once below
/// the routing's size, else `mul` (the GPU, or the CPU shared among
/// cores). For cuGMP's own callers of products (batches, polynomials).
pub unsafe fn mul_routed(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        if sum_on_cpu(Op::Mul, a, b) {
            cpu::mpz_mul(r, a, b)
        } else {
            mul(r, a, b)
        }
    }
}

/// Where a product's limbs may go: any memory (a product on the CPU), or
/// a pinned block of the pool where one is kept (a product the device
/// makes, whose download is then a DMA alone, as is its upload when a
/// later product takes it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Room {
    Any,
    Pinned,
}

/// A product of `n` limbs and sign `negative` of `a` and `b` computed by
/// `compute` into r's limbs, or into fresh ones handed to r where r is
/// `a` or `b` or has fewer than n limbs of room (GMP's reallocation would
/// copy limbs about to be overwritten), or, for `Room::Pinned`, where r's
/// limbs are not pinned and the pool has a block for n. r's size is set
/// when `compute` says it succeeded; else r is unchanged, or its limbs
/// hold anything (r not an operand), and the caller computes r again.
unsafe fn product_in_place(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr, n: usize, negative: bool, room: Room, compute: impl FnOnce(&mut [mp_limb_t]) -> bool) -> bool {
    unsafe {
        let operand = std::ptr::eq(r, a) || std::ptr::eq(r, b);
        let fits = ((*r)._mp_alloc as usize) >= n;
        let pinnable = room == Room::Pinned && 8 * n >= crate::pinned::MIN_BYTES;
        let block = if pinnable && (operand || !fits || !crate::pinned::holds((*r)._mp_d as *const u8, 8 * n)) {
            // A limb to spare, as below.
            mpz::FreshLimbs::pinned(n + 1)
        } else {
            None
        };
        if operand || !fits || block.is_some() {
            // A limb to spare: the sum a program then makes into the product
            // (pi.c's T = T1 Q2 + P1 T2) has room without GMP's reallocation,
            // which would copy it.
            let mut fresh = block.unwrap_or_else(|| mpz::FreshLimbs::allocated(n + 1));
            if !compute(&mut fresh.limbs()[..n]) {
                return false;
            }
            fresh.give_to(r, n, negative);
            return true;
        }
        let out = std::slice::from_raw_parts_mut((*r)._mp_d, n);
        if !compute(out) {
            return false;
        }
        let size = n - out.iter().rev().take_while(|&&l| l == 0).count();
        // size <= n <= _mp_alloc <= INT_MAX.
        (*r)._mp_size = if negative { -(size as c_int) } else { size as c_int };
        true
    }
}

/// `r = a b` on the CPU (`r` may be an operand): shared with the kept
/// helper threads (`cpu::mul_on_cores`) where the routing says so and no
/// other thread is at such a product, else GMP's mpz_mul.
unsafe fn mul_on_cpu(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let (la, lb) = (sa.magnitude, sb.magnitude);
        if la.is_empty() || lb.is_empty() || !shared_on_cpu(la.len().min(lb.len())) {
            return cpu::mpz_mul(r, a, b);
        }
        one_sharing(|alone| {
            if !alone {
                return embedded::mpz_mul(r, a, b);
            }
            // Same limbs (a == b) square.
            let (n, negative) = (la.len() + lb.len(), sa.negative != sb.negative);
            let twice = shared_twice(la.len().min(lb.len()));
            product_in_place(r, a, b, n, negative, Room::Any, |out| {
                stats::shared(stats::Shared::Product, cpu::mul_on_cores(out, la, lb, twice));
                true
            });
        })
    }
}

/// GMP's function for `kind`.
#[inline(always)]
fn gmp_shift(kind: Shift) -> (&'static str, unsafe extern "C" fn(mpz_ptr, mpz_srcptr, mp_bitcnt_t)) {
    match kind {
        Shift::Left => ("mpz_mul_2exp", embedded::mpz_mul_2exp),
        Shift::RightTrunc => ("mpz_tdiv_q_2exp", embedded::mpz_tdiv_q_2exp),
        Shift::RightFloor => ("mpz_fdiv_q_2exp", embedded::mpz_fdiv_q_2exp),
        Shift::RightCeil => ("mpz_cdiv_q_2exp", embedded::mpz_cdiv_q_2exp),
    }
}

#[inline(never)]
pub unsafe fn shift(kind: Shift, r: mpz_ptr, a: mpz_srcptr, bits: mp_bitcnt_t) {
    unsafe {
        let sa = signed(a);
        let (what, cpu_op) = gmp_shift(kind);
        mpz_op(Op::Shift, what, sa.magnitude.len(), true, r, |g| g.shift(kind, sa, bits), |t| cpu_op(t, a, bits))
    }
}

/// The operation counted for `kind`, and GMP's function.
#[inline(always)]
fn gmp_logic(kind: Logic) -> (Op, &'static str, unsafe extern "C" fn(mpz_ptr, mpz_srcptr, mpz_srcptr)) {
    match kind {
        Logic::And => (Op::And, "mpz_and", embedded::mpz_and),
        Logic::Ior => (Op::Ior, "mpz_ior", embedded::mpz_ior),
        Logic::Xor => (Op::Xor, "mpz_xor", embedded::mpz_xor),
    }
}

#[inline(never)]
pub unsafe fn logic(kind: Logic, r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    unsafe {
        let (sa, sb) = (signed(a), signed(b));
        let (op, what, cpu_op) = gmp_logic(kind);
        mpz_op(op, what, longer(a, b), true, r, |g| g.logic(kind, sa, sb), |t| cpu_op(t, a, b))
    }
}

#[inline(never)]
pub unsafe fn com(r: mpz_ptr, a: mpz_srcptr) {
    unsafe {
        let sa = signed(a);
        mpz_op(Op::Com, "mpz_com", sa.magnitude.len(), true, r, |g| g.com(sa), |t| embedded::mpz_com(t, a))
    }
}

/// `CUGMP_CHECK=1`: compute the same operation with the CPU engine into a
/// temporary and abort with a clear message if the GPU's result differs.
pub fn check_against_cpu(what: &str, magnitude: &[mp_limb_t], negative: bool, reference: &dyn Fn(mpz_ptr)) {
    let mut n = magnitude.len();
    while n > 0 && magnitude[n - 1] == 0 {
        n -= 1;
    }
    let mut t = Int::new();
    cpu_reference(|| reference(t.m()));
    if !t.equals(&magnitude[..n], negative) {
        eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {n} limbs differs from the CPU engine's; aborting");
        std::process::abort();
    }
}

