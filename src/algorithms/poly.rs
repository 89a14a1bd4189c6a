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
use super::route::gmp_allocates_by_default;
use crate::gmp::mpz::{self as storage, Int};
use crate::gmp::{self, embedded, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::parallel::{self, Shared};
use libc::c_int;

/// Bits of a magnitude (0 for zero).
fn bits(x: &[mp_limb_t]) -> u64 {
    x.last().map_or(0, |&top| 64 * x.len() as u64 - top.leading_zeros() as u64)
}

/// The coefficients' magnitudes and signs.
unsafe fn coefficients<'a>(p: &[mpz_srcptr]) -> Vec<(&'a [mp_limb_t], bool)> {
    p.iter().map(|&x| unsafe { (gmp::limbs(x), gmp::negative(x)) }).collect()
}

/// Coefficients a thread packs or unpacks at once, at least: a chunk's
/// slots then span many limbs, and only its first and last limb are shared
/// with the chunks beside it.
const CHUNK: usize = 256;

/// Threads for packing or unpacking `limbs` limbs: one a 2^16 limbs, all
/// cores at most, and only this one where a program's memory functions
/// need not be thread-safe.
fn threads_for(limbs: usize) -> usize {
    if !gmp_allocates_by_default() {
        return 1;
    }
    parallel::cores().min(limbs >> 16).max(1)
}

/// `v -= 1` on limbs (v nonzero).
fn decrement(v: &mut [mp_limb_t]) {
    for x in v.iter_mut() {
        let (d, borrow) = x.overflowing_sub(1);
        *x = d;
        if !borrow {
            return;
        }
    }
}

/// `v = 2^(64 len) - v`: the two's complement of v in its limbs.
fn negate(v: &mut [mp_limb_t]) {
    let mut carry = 1;
    for x in v.iter_mut() {
        let (d, c) = (!*x).overflowing_add(carry);
        *x = d;
        carry = c as u64;
    }
}

/// Keep the low `s` bits of `w` (the limbs above s are zeroed).
fn mask(w: &mut [mp_limb_t], s: u64) {
    let full = (s / 64) as usize;
    if !s.is_multiple_of(64) {
        w[full] &= (1 << (s % 64)) - 1;
    }
    for x in w.iter_mut().skip(full + !s.is_multiple_of(64) as usize) {
        *x = 0;
    }
}

/// `Σ c_i 2^(i s)` as an mpz, each slot written once straight into its
/// limbs: the base-2^s digits of the sum, a negative coefficient borrowing
/// from the slot above (the sum taken with every sign flipped where the
/// highest nonzero coefficient is negative, so that it is not). Chunks of
/// coefficients run on threads, the even chunks and then the odd ones, so
/// no two threads write one limb at once; a chunk finds its borrow in
/// from the last nonzero coefficient below it.
fn pack(c: &[(&[mp_limb_t], bool)], s: u64) -> Int {
    let mut x = Int::new();
    let Some(top) = c.iter().rposition(|c| !c.0.is_empty()) else { return x };
    let flip = c[top].1;
    let len = ((top as u64 + 1) * s).div_ceil(64) as usize + 1;
    let threads = threads_for(len);
    let limbs: &mut [mp_limb_t] = unsafe {
        embedded::mpz_realloc(x.m(), len as mp_size_t);
        std::slice::from_raw_parts_mut(x.m().as_ref().map_or(std::ptr::null_mut(), |z| z._mp_d), len)
    };
    parallel::each_item(limbs, len.div_ceil(threads), threads, |_, part| part.fill(0));
    let out = Shared(limbs.as_mut_ptr() as usize);
    let chunks = (top + 1).div_ceil(CHUNK);
    let words = s.div_ceil(64) as usize + 1;
    for phase in 0..2 {
        parallel::each_index(chunks.div_ceil(2), 1, threads, |h| {
            let chunk = 2 * h + phase;
            if chunk >= chunks {
                return;
            }
            let first = chunk * CHUNK;
            // Borrow in: the last nonzero coefficient below is negative.
            let mut borrow = c[..first].iter().rev().find(|c| !c.0.is_empty()).is_some_and(|c| c.1 != flip);
            let mut w = vec![0; words];
            let dst = *out.get() as *mut mp_limb_t;
            for (i, &(m, negative)) in c.iter().enumerate().take(top + 1).skip(first).take(CHUNK) {
                w.fill(0);
                w[..m.len()].copy_from_slice(m);
                if m.is_empty() {
                    // 0 - borrow: all ones, the borrow goes on.
                    if borrow {
                        w.fill(!0);
                    }
                } else if negative != flip {
                    // 2^s - (|c| + borrow), and a borrow from the slot above.
                    if !borrow {
                        decrement(&mut w);
                    }
                    for x in w.iter_mut() {
                        *x = !*x;
                    }
                    borrow = true;
                } else if std::mem::take(&mut borrow) {
                    decrement(&mut w);
                }
                mask(&mut w, s);
                let at = i as u64 * s;
                let (word, shift) = ((at / 64) as usize, (at % 64) as u32);
                let span = ((at + s).div_ceil(64) as usize - word).min(words);
                // SAFETY: limbs [word, word + span] hold only this slot's
                // bits and, at the ends, its neighbours' (never written by
                // another thread in this phase).
                unsafe {
                    for (j, &l) in w.iter().enumerate().take(span) {
                        *dst.add(word + j) |= l << shift;
                        if shift != 0 && word + j + 1 < len {
                            *dst.add(word + j + 1) |= l >> (64 - shift);
                        }
                    }
                }
            }
        });
    }
    let size = len - limbs.iter().rev().take_while(|&&l| l == 0).count();
    // size <= len <= _mp_alloc, below 2^31 (mpz_realloc checked it).
    unsafe { (*x.m())._mp_size = if flip { -(size as c_int) } else { size as c_int } };
    x
}

/// Bits `[at, at + s)` of `z` into `w` (zeroed, one limb longer than s).
fn slot(z: &[mp_limb_t], at: u64, s: u64, w: &mut [mp_limb_t]) {
    w.fill(0);
    let (word, shift) = ((at / 64) as usize, (at % 64) as u32);
    for (j, out) in w.iter_mut().enumerate().take(s.div_ceil(64) as usize) {
        let lo = z.get(word + j).copied().unwrap_or(0);
        let hi = z.get(word + j + 1).copied().unwrap_or(0);
        *out = if shift == 0 { lo } else { (lo >> shift) | (hi << (64 - shift)) };
    }
    mask(w, s);
}

/// How slot w (s bits) passes a carry to the next: `Some(true)` where
/// w >= 2^(s-1) (whatever comes in), `Some(false)` where w < 2^(s-1) - 1,
/// None for w = 2^(s-1) - 1 (it passes on the carry it receives).
fn carry_out(w: &[mp_limb_t], s: u64) -> Option<bool> {
    let (top_word, top_bit) = (((s - 1) / 64) as usize, (s - 1) % 64);
    if w[top_word] >> top_bit & 1 != 0 {
        return Some(true);
    }
    let below_all_ones = w[..top_word].iter().all(|&x| x == !0) && (top_bit == 0 || w[top_word] == (1 << top_bit) - 1);
    if below_all_ones { None } else { Some(false) }
}

/// The `out.len()` balanced digits of `z` in base 2^s (each in
/// [-2^(s-1), 2^(s-1))), lowest first, into `out`. Chunks of digits run on
/// threads; a chunk finds its carry in from the slots below it (the first
/// that decides it: a slot of exactly 2^(s-1) - 1 passes its own on).
fn unpack(z: &Int, s: u64, count: usize) -> Vec<Int> {
    /// A digit's variable, filled on a thread of `unpack`'s (GMP's own
    /// allocator, which is thread-safe: `threads_for`).
    struct Digit(Int);
    unsafe impl Send for Digit {}
    let mut out: Vec<Digit> = (0..count).map(|_| Digit(Int::new())).collect();
    let negative = z.sign() < 0;
    let limbs = z.limbs();
    let words = s.div_ceil(64) as usize + 1;
    let (top_word, top_bit) = (((s - 1) / 64) as usize, (s - 1) % 64);
    let threads = threads_for(limbs.len());
    let whole = Shared(limbs);
    parallel::each_item(&mut out, CHUNK, threads, |chunk, digits| {
        let limbs = *whole.get();
        let mut w = vec![0; words];
        let first = chunk * CHUNK;
        let mut carry = false;
        for k in (0..first).rev() {
            slot(limbs, k as u64 * s, s, &mut w);
            if let Some(c) = carry_out(&w, s) {
                carry = c;
                break;
            }
        }
        for (k, digit) in (first..).zip(digits.iter_mut()) {
            slot(limbs, k as u64 * s, s, &mut w);
            // w + carry <= 2^s: the sum may reach bit s, never beyond.
            if carry {
                for x in w.iter_mut() {
                    let (v, o) = x.overflowing_add(1);
                    *x = v;
                    if !o {
                        break;
                    }
                }
            }
            // w >= 2^(s-1): a bit at or above s - 1.
            let high = w[top_word] >> top_bit != 0 || w[top_word + 1..].iter().any(|&x| x != 0);
            if high {
                // w - 2^s < 0: its magnitude 2^s - w, the two's complement of w in s bits.
                negate(&mut w);
                mask(&mut w, s);
            }
            carry = high;
            unsafe { storage::store(digit.0.m(), &w, high != negative) };
        }
    });
    out.into_iter().map(|d| d.0).collect()
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
        unsafe { mpz::mul_routed(z.m(), x.p(), yp) };
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
