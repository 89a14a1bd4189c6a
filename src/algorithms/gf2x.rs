//! Products of binary polynomials, GF(2)[x] (`cugmp_gf2x_mul`,
//! `cugmp_mpz_gf2x_mul`): bit i of limb j is the coefficient of
//! x^(64 j + i). Computed by the CPU engine (src/cpu/gf2x.rs); results
//! that overlap an operand go through a buffer.
//!
//! # Safety
//! `mpn` takes its pointers as gf2x's `gf2x_mul` does (with overlaps
//! allowed); `mpz` takes initialised `mpz_t`s, any of them the same.
#![allow(clippy::missing_safety_doc)]

use crate::cpu;
use crate::gmp::{self, mp_limb_t, mpz, mpz_ptr, mpz_srcptr};

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
        cpu::gf2x::mul(&mut t, a, b);
        unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), rp, n) };
    } else {
        cpu::gf2x::mul(unsafe { std::slice::from_raw_parts_mut(rp, n) }, a, b);
    }
}

/// `r` = the product of the polynomials whose coefficients are the bits
/// of |a| and |b| (never negative).
pub unsafe fn mpz(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let (a, b) = unsafe { (gmp::limbs(a), gmp::limbs(b)) };
    let mut t = vec![0; a.len() + b.len()];
    cpu::gf2x::mul(&mut t, a, b);
    unsafe { mpz::store(r, &t, false) };
}
