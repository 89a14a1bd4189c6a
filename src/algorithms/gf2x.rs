//! Products of binary polynomials, GF(2)[x] (`cugmp_gf2x_mul`,
//! `cugmp_mpz_gf2x_mul`): bit i of limb j is the coefficient of
//! x^(64 j + i). Results that overlap an operand go through a buffer.
//!
//! Two engines: the CPU's carry-less products (src/cpu/gf2x.rs), and where
//! the routing sends a product to the GPU, the additive FFT over GF(2^64)
//! (src/gpu/gf2x.rs). A product the device cannot hold is split in halves
//! by Karatsuba's method (over GF(2) every sum an exclusive or), each
//! half routed again.
//!
//! # Safety
//! `mpn` takes its pointers as gf2x's `gf2x_mul` does (with overlaps
//! allowed); `mpz` takes initialised `mpz_t`s, any of them the same.
#![allow(clippy::missing_safety_doc)]

use super::route;
use crate::config::{self, log};
use crate::gmp::{self, mp_limb_t, mpz, mpz_ptr, mpz_srcptr};
use crate::gpu::GpuError;
use crate::stats::{self, Op};
use crate::cpu;

/// The shorter operand's limbs below which a product the device refused
/// is not split further but made on the CPU.
const SPLIT_FROM: usize = 1 << 12;

/// `{rp, an + bn} = {ap, an} * {bp, bn}` in GF(2)[x]; rp may overlap the
/// operands.
pub unsafe fn mpn(rp: *mut mp_limb_t, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize) {
    let n = an + bn;
    if n == 0 {
        return;
    }
    let (a, b) = unsafe { (std::slice::from_raw_parts(ap, an), std::slice::from_raw_parts(bp, bn)) };
    let overlaps = |p: *const mp_limb_t, len: usize| (p as usize) < rp as usize + 8 * n && (rp as usize) < p as usize + 8 * len;
    if overlaps(ap, an) || overlaps(bp, bn) {
        let mut t = vec![0; n];
        mul(&mut t, a, b);
        unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), rp, n) };
    } else {
        mul(unsafe { std::slice::from_raw_parts_mut(rp, n) }, a, b);
    }
}

/// `r` = the product of the polynomials whose coefficients are the bits
/// of |a| and |b| (never negative).
pub unsafe fn mpz(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let (a, b) = unsafe { (gmp::limbs(a), gmp::limbs(b)) };
    let mut t = vec![0; a.len() + b.len()];
    mul(&mut t, a, b);
    unsafe { mpz::store(r, &t, false) };
}

/// `out = a * b` in GF(2)[x] (`out` of a.len() + b.len() limbs, apart
/// from the operands): on the GPU where the routing sends it there and it
/// completes, else on the CPU.
fn mul(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) {
    let (a, b) = (significant(a), significant(b));
    let short = a.len().min(b.len());
    out.fill(0);
    let out = &mut out[..a.len() + b.len()];
    if short == 0 || !route::gpu_wanted(Op::Gf2x, short) || !on_gpu(out, a, b) {
        cpu::gf2x::mul(out, a, b);
    }
}

/// `x` without its high zero limbs.
fn significant(x: &[mp_limb_t]) -> &[mp_limb_t] {
    &x[..x.len() - x.iter().rev().take_while(|&&l| l == 0).count()]
}

/// `mul` on the GPU (`out` zeroed, both operands with a nonzero top limb;
/// the same slice twice squares), counted and, under CUGMP_CHECK, checked
/// against the CPU engine; split where the device cannot hold it; false
/// where the CPU must make it.
fn on_gpu(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) -> bool {
    let short = a.len().min(b.len());
    let Some(g) = route::route_at(Op::Gf2x, short, true) else { return false };
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    match g.gf2x_mul(a, b, out) {
        Ok(()) => {
            stats::gpu_call(Op::Gf2x, short, start.elapsed());
            if config::get().check {
                let mut want = vec![0; out.len()];
                cpu::gf2x::mul(&mut want, a, b);
                if want != out {
                    eprintln!("cugmp: CUGMP_CHECK: the GPU's gf2x_mul of {}x{} limbs differs from the CPU engine's; aborting", a.len(), b.len());
                    std::process::abort();
                }
            }
            true
        }
        Err(GpuError::TooLarge) if short >= SPLIT_FROM => {
            log!("gf2x_mul: {}x{} limbs too large for the device; split in halves", a.len(), b.len());
            split(out, a, b);
            true
        }
        Err(e) => {
            stats::fallback(Op::Gf2x, e.fallback());
            log!("gf2x_mul: GPU failed ({e}); finishing on the CPU");
            false
        }
    }
}

/// `out = a * b` (`out` zeroed) from products of halves, each through `mul`:
/// with h limbs the longer operand's half, a = a0 + x^(64h) a1 and b the
/// same, a b = p0 + x^(64h) (p1 + p0 + p2) + x^(128h) p2 with p0 = a0 b0,
/// p2 = a1 b1, p1 = (a0 + a1)(b0 + b1); where b fits in h limbs, a0 b and
/// a1 b.
fn split(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) {
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let h = u.len().div_ceil(2);
    let (u0, u1) = u.split_at(h);
    let add = |out: &mut [mp_limb_t], at: usize, p: &[mp_limb_t]| out[at..at + p.len()].iter_mut().zip(p).for_each(|(o, x)| *o ^= x);
    let product = |x: &[mp_limb_t], y: &[mp_limb_t]| {
        let mut p = vec![0; x.len() + y.len()];
        mul(&mut p, x, y);
        p
    };
    if v.len() <= h {
        add(out, 0, &product(u0, v));
        add(out, h, &product(u1, v));
        return;
    }
    let (v0, v1) = v.split_at(h);
    let sum = |x0: &[mp_limb_t], x1: &[mp_limb_t]| -> Vec<mp_limb_t> {
        let mut s = x0.to_vec();
        s.iter_mut().zip(x1).for_each(|(o, x)| *o ^= x);
        s
    };
    let (p0, p2) = (product(u0, v0), product(u1, v1));
    let mut p1 = product(&sum(u0, u1), &sum(v0, v1));
    add(&mut p1, 0, &p0);
    add(&mut p1, 0, &p2);
    add(out, 0, &p0);
    add(out, 2 * h, &p2);
    add(out, h, significant(&p1));
}
