//! Products of polynomials with integer coefficients (`cugmp_poly_mul`), by
//! Kronecker substitution: each polynomial is evaluated at 2^s, with s
//! large enough that no coefficient of the product overflows its slot;
//! the two integers are multiplied by `mpz_mul` (the GPU's NTT from its
//! threshold on, GMP below); the product's slots, read as balanced digits
//! in base 2^s, are the coefficients. Negative coefficients are packed as
//! the difference of two integers with disjoint slots, one of the
//! positive coefficients and one of the negative ones' magnitudes.
//!
//! Owns the packing and unpacking of slots; it may not touch the GPU
//! engine (the one product goes through `mpz::mul`).
//!
//! # Safety
//! `mul` takes slices of initialised `mpz_t` pointers, as
//! `cugmp_poly_mul` documents.
#![allow(clippy::missing_safety_doc)]

use super::mpz;
use crate::gmp::mpz::{self as storage, Int};
use crate::gmp::{self, embedded, mp_limb_t, mpz_ptr, mpz_srcptr};
use crate::stats::Op;

/// Bits of a magnitude (0 for zero).
fn bits(x: &[mp_limb_t]) -> u64 {
    x.last().map_or(0, |&top| 64 * x.len() as u64 - top.leading_zeros() as u64)
}

/// The coefficients' magnitudes and signs.
unsafe fn coefficients<'a>(p: &[mpz_srcptr]) -> Vec<(&'a [mp_limb_t], bool)> {
    p.iter().map(|&x| unsafe { (gmp::limbs(x), gmp::negative(x)) }).collect()
}

/// `Σ c_i 2^(i s)` as an mpz: the positive coefficients' slots minus the
/// negative ones' (each magnitude below 2^s, so slots do not overlap).
fn pack(c: &[(&[mp_limb_t], bool)], s: u64) -> Int {
    let len = (c.len() as u64 * s).div_ceil(64) as usize + 1;
    let (mut plus, mut minus) = (vec![0; len], Vec::new());
    for (i, &(limbs, negative)) in c.iter().enumerate() {
        if limbs.is_empty() {
            continue;
        }
        let dst = if negative {
            if minus.is_empty() {
                minus = vec![0; len];
            }
            &mut minus
        } else {
            &mut plus
        };
        let at = i as u64 * s;
        let (word, shift) = ((at / 64) as usize, (at % 64) as u32);
        for (j, &l) in limbs.iter().enumerate() {
            dst[word + j] |= l << shift;
            if shift != 0 {
                dst[word + j + 1] |= l >> (64 - shift);
            }
        }
    }
    let mut x = Int::new();
    unsafe {
        storage::store(x.m(), &plus, false);
        if !minus.is_empty() {
            let mut m = Int::new();
            storage::store(m.m(), &minus, false);
            embedded::mpz_sub(x.m(), x.p(), m.p());
        }
    }
    x
}

/// Bits `[at, at + s)` of `z` into `w` (zeroed, one limb longer than s).
fn slot(z: &[mp_limb_t], at: u64, s: u64, w: &mut [mp_limb_t]) {
    w.fill(0);
    let (word, shift) = ((at / 64) as usize, (at % 64) as u32);
    let limbs = s.div_ceil(64) as usize;
    for (j, out) in w.iter_mut().enumerate().take(limbs) {
        let lo = z.get(word + j).copied().unwrap_or(0);
        let hi = z.get(word + j + 1).copied().unwrap_or(0);
        *out = if shift == 0 { lo } else { (lo >> shift) | (hi << (64 - shift)) };
    }
    if !s.is_multiple_of(64) {
        w[limbs - 1] &= (1 << (s % 64)) - 1;
    }
}

/// The `count` balanced digits of `z` in base 2^s (each in
/// [-2^(s-1), 2^(s-1))), lowest first, into fresh variables.
fn unpack(z: &Int, s: u64, count: usize) -> Vec<Int> {
    let negative = z.sign() < 0;
    let limbs = z.limbs();
    let words = s.div_ceil(64) as usize + 1;
    let (top_word, top_bit) = (((s - 1) / 64) as usize, (s - 1) % 64);
    let mut w = vec![0; words];
    let mut carry = 0;
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        slot(limbs, k as u64 * s, s, &mut w);
        // w + carry <= 2^s: the sum may reach bit s, never beyond.
        let mut c = carry;
        for x in w.iter_mut() {
            let (v, o) = x.overflowing_add(c);
            *x = v;
            c = o as u64;
            if c == 0 {
                break;
            }
        }
        // w >= 2^(s-1): a bit at or above s - 1.
        let high = w[top_word] >> top_bit != 0 || w[top_word + 1..].iter().any(|&x| x != 0);
        let mut digit = Int::new();
        if high {
            // w - 2^s < 0: its magnitude 2^s - w, the two's complement of w in s bits.
            let mut c = 1;
            for x in w.iter_mut() {
                let (v, o) = (!*x).overflowing_add(c);
                *x = v;
                c = o as u64;
            }
            if !s.is_multiple_of(64) {
                w[top_word] &= (1 << (s % 64)) - 1;
            }
            for x in &mut w[top_word + 1..] {
                *x = 0;
            }
            carry = 1;
        } else {
            carry = 0;
        }
        unsafe { storage::store(digit.m(), &w, high != negative) };
        out.push(digit);
    }
    out
}

/// `r[0 .. na + nb - 1]` = the coefficients of `a(x) b(x)`, lowest first;
/// r may name the inputs' variables. With no coefficient on one side the
/// product is zero: its `na + nb - 1` coefficients (if any) are set to 0.
pub unsafe fn mul(r: &[mpz_ptr], a: &[mpz_srcptr], b: &[mpz_srcptr]) {
    let count = (a.len() + b.len()).saturating_sub(1);
    debug_assert_eq!(r.len(), count);
    let (ca, cb) = unsafe { (coefficients(a), coefficients(b)) };
    let (abits, bbits) = (ca.iter().map(|c| bits(c.0)).max().unwrap_or(0), cb.iter().map(|c| bits(c.0)).max().unwrap_or(0));
    let mut product: Vec<Int> = if abits == 0 || bbits == 0 {
        (0..count).map(|_| Int::new()).collect()
    } else {
        // |c_k| <= min(na, nb) (2^abits - 1)(2^bbits - 1) < 2^(s - 1).
        let terms = a.len().min(b.len()) as u64;
        let s = abits + bbits + (64 - terms.leading_zeros() as u64) + 1;
        let x = pack(&ca, s);
        let square = std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len();
        let y = if square { None } else { Some(pack(&cb, s)) };
        let mut z = Int::new();
        let yp = y.as_ref().map_or(x.p(), |y| y.p());
        unsafe {
            if mpz::sum_on_cpu(Op::Mul, x.p(), yp) {
                embedded::mpz_mul(z.m(), x.p(), yp);
            } else {
                mpz::mul(z.m(), x.p(), yp);
            }
        }
        drop((x, y));
        unpack(&z, s, count)
    };
    for (&dst, t) in r.iter().zip(product.iter_mut()) {
        unsafe { embedded::mpz_swap(dst, t.m()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i128) -> Int {
        let mut x = Int::new();
        let m = v.unsigned_abs();
        unsafe { storage::store(x.m(), &[m as u64, (m >> 64) as u64], v < 0) };
        x
    }

    fn value(x: &Int) -> i128 {
        let l = x.limbs();
        let m = l.first().copied().unwrap_or(0) as i128 | (l.get(1).copied().unwrap_or(0) as i128) << 64;
        if x.sign() < 0 { -m } else { m }
    }

    /// Small coefficients against the schoolbook product in i128, every
    /// sign pattern and slot width that crosses limbs (s from 3 to 66).
    #[test]
    fn products_match_schoolbook() {
        let cases: &[(&[i128], &[i128])] = &[
            (&[1], &[1]),
            (&[3, -2, 0, 5], &[-1, 4]),
            (&[0, 0, 7], &[0, -9, 0]),
            (&[-1, -1, -1], &[-1, -1, -1]),
            (&[1 << 30, -(1 << 31) + 1, 12345], &[(1 << 31) - 1, -(1 << 29), 1, -1, 0, 2]),
            (&[i64::MAX as i128, i64::MIN as i128 + 1], &[3, -3, 3]),
            (&[0], &[5, 6]),
        ];
        for &(a, b) in cases {
            let (xa, xb): (Vec<Int>, Vec<Int>) = (a.iter().map(|&v| int(v)).collect(), b.iter().map(|&v| int(v)).collect());
            let mut r: Vec<Int> = (0..a.len() + b.len() - 1).map(|_| int(77)).collect();
            let rp: Vec<mpz_ptr> = r.iter_mut().map(|x| x.m()).collect();
            unsafe { mul(&rp, &xa.iter().map(|x| x.p()).collect::<Vec<_>>(), &xb.iter().map(|x| x.p()).collect::<Vec<_>>()) };
            let mut want = vec![0i128; a.len() + b.len() - 1];
            for (i, &u) in a.iter().enumerate() {
                for (j, &v) in b.iter().enumerate() {
                    want[i + j] += u * v;
                }
            }
            assert_eq!(r.iter().map(value).collect::<Vec<_>>(), want, "{a:?} * {b:?}");
        }
    }
}
