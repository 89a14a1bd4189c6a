//! Products of binary polynomials, GF(2)[x] (`cugmp_gf2x_mul`,
//! `cugmp_mpz_gf2x_mul`): bit i of limb j is the coefficient of
//! x^(64 j + i). Results that overlap an operand go through a buffer.
//!
//! Two engines. The CPU's carry-less products (src/cpu/gf2x.rs). And, where
//! the routing sends a product to the GPU, an integer product: each bit
//! spread into a 32-bit slot, the two integers multiplied by the GPU's
//! NTT, and coefficient k of the binary product is the parity of slot k
//! (a slot sums at most 64 min(an, bn) < 2^32 products of bits, so no
//! slot carries into the next).
//!
//! # Safety
//! `mpn` takes its pointers as gf2x's `gf2x_mul` does (with overlaps
//! allowed); `mpz` takes initialised `mpz_t`s, any of them the same.
#![allow(clippy::missing_safety_doc)]

use super::product::product_on_gpu;
use super::route;
use crate::gmp::{self, mp_limb_t, mpz, mpz_ptr, mpz_srcptr};
use crate::stats::Op;
use crate::{cpu, parallel};

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
    // 64 short bits a slot's sum at most: below 2^32.
    if short == 0 || short >= 1 << 26 || !route::gpu_wanted(Op::Gf2x, short) || !on_gpu(out, a, b) {
        cpu::gf2x::mul(out, a, b);
    }
}

/// `x` without its high zero limbs.
fn significant(x: &[mp_limb_t]) -> &[mp_limb_t] {
    &x[..x.len() - x.iter().rev().take_while(|&&l| l == 0).count()]
}

/// Threads that spread or gather `limbs` limbs: one a 2^18, all cores at
/// most.
fn threads_for(limbs: usize) -> usize {
    parallel::cores().min(limbs >> 18).max(1)
}

/// Each bit of `x` in a 32-bit slot of its own: 32 limbs a limb.
fn spread(x: &[mp_limb_t]) -> Vec<mp_limb_t> {
    // A byte's 8 bits as 4 limbs of two slots each.
    let table: Vec<[u64; 4]> = (0..256u64).map(|byte| std::array::from_fn(|k| (byte >> (2 * k) & 1) | (byte >> (2 * k + 1) & 1) << 32)).collect();
    let mut out = vec![0; 32 * x.len()];
    let threads = threads_for(out.len());
    let per = x.len().div_ceil(threads).max(1);
    parallel::each_item(&mut out, 32 * per, threads, |part, run| {
        for (limb, dst) in x[part * per..].iter().zip(run.chunks_mut(32)) {
            for (byte, four) in limb.to_le_bytes().iter().zip(dst.chunks_mut(4)) {
                four.copy_from_slice(&table[*byte as usize]);
            }
        }
    });
    out
}

/// The parity of each 32-bit slot of `p`, packed: 64 coefficients a limb.
fn gather(p: &[mp_limb_t], out: &mut [mp_limb_t]) {
    let threads = threads_for(p.len());
    let per = out.len().div_ceil(threads).max(1);
    parallel::each_item(out, per, threads, |part, run| {
        for (j, o) in run.iter_mut().enumerate() {
            let src = &p[32 * (part * per + j)..][..32];
            *o = src.iter().enumerate().fold(0, |acc, (k, &l)| acc | (l & 1) << (2 * k) | (l >> 32 & 1) << (2 * k + 1));
        }
    });
}

/// `mul` by an integer product on the GPU (`out` zeroed, a.len() + b.len()
/// limbs, both operands with a nonzero top limb); false where the GPU
/// failed (out then holds zeros).
fn on_gpu(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) -> bool {
    let sa = spread(a);
    // The same limbs twice square: a square of one spread operand.
    let sb = if std::ptr::eq(a, b) { None } else { Some(spread(b)) };
    let (u, v) = (significant(&sa), significant(sb.as_deref().unwrap_or(&sa)));
    let (u, v) = if u.len() >= v.len() { (u, v) } else { (v, u) };
    let mut p = vec![0; 32 * out.len()];
    let n = u.len() + v.len();
    if !unsafe { product_on_gpu(Op::Gf2x, u.as_ptr(), u.len(), v.as_ptr(), v.len(), "cugmp_gf2x_mul", &mut p[..n]) } {
        return false;
    }
    gather(&p, out);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limbs(n: usize, seed: &mut u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed
            })
            .collect()
    }

    /// The GPU's method, with the CPU's integer product in its place:
    /// spread, multiply, gather, against the carry-less product; sizes
    /// whose spread runs on several threads (2^19 limbs and more) among them.
    #[test]
    fn spread_products_are_carry_less_products() {
        let mut seed = 0x1234_5678_9abc_def1;
        for (an, bn) in [(1, 1), (3, 2), (64, 63), (1000, 17), (16384, 16385)] {
            let (mut a, b) = (limbs(an, &mut seed), limbs(bn, &mut seed));
            a[an - 1] |= 1 << 63;
            let (sa, sb) = (spread(&a), spread(&b));
            let (u, v) = (significant(&sa), significant(&sb));
            let mut p = vec![0; sa.len() + sb.len()];
            cpu::mul(&mut p[..u.len() + v.len()], u, v);
            let mut got = vec![0; an + bn];
            gather(&p, &mut got);
            let mut want = vec![0; an + bn];
            cpu::gf2x::mul(&mut want, &a, &b);
            assert!(got == want, "{an} x {bn}");
        }
    }
}
