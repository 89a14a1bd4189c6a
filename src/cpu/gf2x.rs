//! Products of binary polynomials (GF(2)[x]) on limb slices: bit i of limb
//! j is the coefficient of x^(64 j + i), as in gf2x. A 64 x 64-bit
//! carry-less product by PCLMULQDQ where the CPU has it (else by a table
//! of an operand's 16 multiples by a nibble), schoolbook below
//! `KARATSUBA_FROM` limbs, Karatsuba's method above (over GF(2) the middle
//! term is (a0 + a1)(b0 + b1) + a0 b0 + a1 b1, every sum an exclusive or),
//! an unbalanced product as products of the shorter operand's size.
//!
//! Balanced products from `PARALLEL_FROM` limbs run Karatsuba's three
//! halves on threads started for them (Rust's allocator only, so a
//! program's GMP memory functions are never called from them).
//!
//! It knows nothing of `mpz_t`, the GPU or routing.

/// Limbs (of the shorter operand) from which Karatsuba's method splits a
/// product; below, schoolbook.
const KARATSUBA_FROM: usize = 24;
/// Limbs a side from which a balanced product's three halves run on
/// threads of their own (a product of 2048 limbs takes about a
/// millisecond, some 20 thread starts).
const PARALLEL_FROM: usize = 2048;

use crate::parallel;

/// `out = a * b` in GF(2)[x]: `out` of a.len() + b.len() limbs, not
/// overlapping the operands (which may be one slice). Empty operands give
/// zeros.
pub fn mul(out: &mut [u64], a: &[u64], b: &[u64]) {
    assert_eq!(out.len(), a.len() + b.len(), "gf2x::mul: {} x {} limbs into {}", a.len(), b.len(), out.len());
    out.fill(0);
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    if v.is_empty() {
        return;
    }
    if u.len() == v.len() {
        return balanced(out, u, v, threads_for(v.len()));
    }
    // The longer operand in pieces of the shorter's size, each product
    // added (exclusive or) at its place.
    let n = v.len();
    let mut t = vec![0; 2 * n];
    for (k, piece) in u.chunks(n).enumerate() {
        let t = &mut t[..piece.len() + n];
        t.fill(0);
        if piece.len() == n {
            balanced(t, piece, v, threads_for(n));
        } else {
            mul(t, v, piece);
        }
        for (o, x) in out[k * n..].iter_mut().zip(t.iter()) {
            *o ^= *x;
        }
    }
}

/// Threads a balanced product of n limbs a side may use: all cores from
/// PARALLEL_FROM limbs (each of Karatsuba's three halves then takes a
/// third of them, down to one), none below.
fn threads_for(n: usize) -> usize {
    if n >= PARALLEL_FROM { parallel::cores() } else { 1 }
}

/// `out = a * b` for operands of one length n (`out` zeroed, 2n limbs), on
/// up to `threads` threads: with two or more, Karatsuba's three products
/// run at once, each with a third of them.
fn balanced(out: &mut [u64], a: &[u64], b: &[u64], threads: usize) {
    let n = a.len();
    if n < KARATSUBA_FROM {
        return schoolbook(out, a, b);
    }
    // a = a0 + x^(64 h) a1 with a0 of h limbs, a1 of n - h >= h.
    let h = n / 2;
    let m = n - h;
    let (a0, a1) = a.split_at(h);
    let (b0, b1) = b.split_at(h);
    // The middle: (a0 + a1)(b0 + b1) + a0 b0 + a1 b1, added at x^(64 h).
    let mut sa = a1.to_vec();
    let mut sb = b1.to_vec();
    for (s, x) in sa.iter_mut().zip(a0) {
        *s ^= x;
    }
    for (s, x) in sb.iter_mut().zip(b0) {
        *s ^= x;
    }
    let mut mid = vec![0; 2 * m];
    {
        let (low, high) = out.split_at_mut(2 * h);
        if threads >= 2 && n >= PARALLEL_FROM {
            let each = (threads / 3).max(1);
            std::thread::scope(|s| {
                s.spawn(|| balanced(low, a0, b0, each));
                s.spawn(|| balanced(high, a1, b1, each));
                balanced(&mut mid, &sa, &sb, each);
            });
        } else {
            balanced(low, a0, b0, 1);
            balanced(high, a1, b1, 1);
            balanced(&mut mid, &sa, &sb, 1);
        }
    }
    for (k, x) in out[..2 * h].iter().enumerate() {
        mid[k] ^= x;
    }
    for (k, x) in out[2 * h..].iter().enumerate() {
        mid[k] ^= x;
    }
    for (o, x) in out[h..].iter_mut().zip(&mid) {
        *o ^= x;
    }
}

/// `out ^= a * b` by schoolbook (`out` of a.len() + b.len() limbs).
fn schoolbook(out: &mut [u64], a: &[u64], b: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    if has_pclmulqdq() {
        // SAFETY: the CPU has PCLMULQDQ (checked above).
        return unsafe { schoolbook_pclmul(out, a, b) };
    }
    for (j, &y) in b.iter().enumerate() {
        for (i, &x) in a.iter().enumerate() {
            let (lo, hi) = clmul_portable(x, y);
            out[i + j] ^= lo;
            out[i + j + 1] ^= hi;
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn has_pclmulqdq() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
    // 0: not yet asked, 1: no, 2: yes.
    static HAS: AtomicU8 = AtomicU8::new(0);
    match HAS.load(Relaxed) {
        0 => {
            let has = std::arch::is_x86_feature_detected!("pclmulqdq") && std::arch::is_x86_feature_detected!("sse2");
            HAS.store(1 + has as u8, Relaxed);
            has
        }
        v => v == 2,
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq,sse2")]
unsafe fn schoolbook_pclmul(out: &mut [u64], a: &[u64], b: &[u64]) {
    use std::arch::x86_64::{_mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_cvtsi64_si128, _mm_unpackhi_epi64};
    for (j, &y) in b.iter().enumerate() {
        let vy = _mm_cvtsi64_si128(y as i64);
        for (i, &x) in a.iter().enumerate() {
            let p = _mm_clmulepi64_si128(_mm_cvtsi64_si128(x as i64), vy, 0);
            out[i + j] ^= _mm_cvtsi128_si64(p) as u64;
            out[i + j + 1] ^= _mm_cvtsi128_si64(_mm_unpackhi_epi64(p, p)) as u64;
        }
    }
}

/// The 128-bit carry-less product of x and y (low, high), by a table of
/// y's 16 carry-less multiples by a nibble: four bits of x a step.
fn clmul_portable(x: u64, y: u64) -> (u64, u64) {
    // table[k] = k * y (carry-less), k < 16, as 68-bit values (lo, top 4 bits).
    let mut table = [(0u64, 0u64); 16];
    for (k, entry) in table.iter_mut().enumerate().skip(1) {
        for bit in (0..4).filter(|bit| k >> bit & 1 != 0) {
            entry.0 ^= y << bit;
            entry.1 ^= if bit == 0 { 0 } else { y >> (64 - bit) };
        }
    }
    let (mut lo, mut hi) = (0u64, 0u64);
    for step in (0..16).rev() {
        // (lo, hi) <<= 4, then add the next nibble's multiple.
        hi = hi << 4 | lo >> 60;
        lo <<= 4;
        let (tl, th) = table[(x >> (4 * step) & 15) as usize];
        lo ^= tl;
        hi ^= th;
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::random_limbs as limbs;

    /// Bit by bit: the definition.
    fn naive(a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0; a.len() + b.len()];
        for i in 0..64 * a.len() {
            if a[i / 64] >> (i % 64) & 1 == 0 {
                continue;
            }
            for j in 0..64 * b.len() {
                if b[j / 64] >> (j % 64) & 1 != 0 {
                    out[(i + j) / 64] ^= 1 << ((i + j) % 64);
                }
            }
        }
        out
    }


    #[test]
    fn portable_product_is_carry_less() {
        let mut seed = 0x9e3779b97f4a7c15;
        for _ in 0..200 {
            let (x, y) = (limbs(1, &mut seed)[0], limbs(1, &mut seed)[0]);
            let want = naive(&[x], &[y]);
            assert_eq!(clmul_portable(x, y), (want[0], want[1]), "{x:#x} * {y:#x}");
        }
        assert_eq!(clmul_portable(!0, !0), (0x5555555555555555, 0x5555555555555555));
    }

    /// Every path (schoolbook, Karatsuba at odd and even lengths, pieces of
    /// an unbalanced product) against the definition, and both orders.
    #[test]
    fn products_match_the_definition() {
        let mut seed = 0x2545f4914f6cdd1d;
        for (an, bn) in [(0, 3), (1, 1), (2, 1), (5, 3), (23, 23), (24, 24), (25, 25), (49, 48), (61, 7), (100, 24), (130, 57)] {
            let (a, b) = (limbs(an, &mut seed), limbs(bn, &mut seed));
            let want = naive(&a, &b);
            let mut out = vec![7; an + bn];
            mul(&mut out, &a, &b);
            assert_eq!(out, want, "{an} x {bn}");
            mul(&mut out, &b, &a);
            assert_eq!(out, want, "{bn} x {an}");
        }
        let ones = vec![!0u64; 40];
        let mut out = vec![0; 80];
        mul(&mut out, &ones, &ones);
        assert_eq!(out, naive(&ones, &ones), "all ones");
    }
}
