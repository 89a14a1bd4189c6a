//! The CPU engine at GMP's `mpn` level: limb slices in, limb slices out,
//! computed by the embedded GMP. It serves every operation the GPU does
//! not take, finishes every GPU failure, and is the reference the GPU's
//! results are checked against (`CUGMP_CHECK=1`, the self-test).
//!
//! It may use the ground floor (`gmp`) and the leaves; it knows nothing of
//! the GPU or of routing.

use crate::gmp::{embedded, mp_limb_t, mp_size_t};

/// `out = a * b` (`out` of a.len() + b.len() limbs, both operands
/// non-empty, none overlapping `out`; the same slice twice squares, as
/// GMP's mpn_mul does when its operands are one).
pub fn mul(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) {
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    assert!(!v.is_empty() && out.len() == u.len() + v.len(), "cpu::mul: {} x {} limbs into {}", u.len(), v.len(), out.len());
    // SAFETY: out holds u.len() + v.len() limbs apart from u and v; GMP's
    // mpn_mul takes un >= vn >= 1.
    unsafe { embedded::mpn_mul(out.as_mut_ptr(), u.as_ptr(), u.len() as mp_size_t, v.as_ptr(), v.len() as mp_size_t) };
}

/// `r = p mod (B^r.len() - 1)` for `p` of r.len() to 2 r.len() limbs: the
/// low half plus the high half, the carry out added back at the bottom (B^rn
/// is 1 modulo B^rn - 1). A nonzero multiple of B^rn - 1 comes out as
/// B^rn - 1, never 0, which is GMP's representation.
pub fn fold_mod_bnm1(p: &[mp_limb_t], r: &mut [mp_limb_t]) {
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
    // overlaps neither (p is another buffer) except itself in place.
    unsafe {
        let rp = r.as_mut_ptr();
        let mut carry = embedded::mpn_add_n(rp, lo.as_ptr(), hi.as_ptr(), hn as mp_size_t);
        if hn < rn {
            carry = embedded::mpn_add_1(rp.add(hn), lo.as_ptr().add(hn), (rn - hn) as mp_size_t, carry);
        }
        if carry != 0 {
            embedded::mpn_add_1(rp, rp, rn as mp_size_t, carry);
        }
    }
}

/// The modulus size GMP's mpn_mulmod_bnm1 computes best at for products of
/// up to `n` limbs: GMP's own mpn_mulmod_bnm1_next_size, never the GPU's.
pub fn gmp_mulmod_bnm1_size(n: usize) -> usize {
    // SAFETY: a pure function of n.
    let size = unsafe { embedded::mpn_mulmod_bnm1_next_size(n as mp_size_t) };
    usize::try_from(size).unwrap_or(n).max(n)
}

/// `{rp, an+bn} = {ap, an} * {bp, bn}` (`an >= bn >= 1`; the same operand
/// twice squares) by GMP's mpn_mulmod_bnm1 (mpn_sqrmod_bnm1) with no
/// wrap-around, at GMP's own size for a product of an + bn limbs: what GMP's
/// algorithms ask of mulmod_bnm1 with any rn >= an + bn, at the cost GMP
/// has at its best such rn. Its scratch is its own.
///
/// # Safety
/// `ap`, `bp` point at `an`, `bn` limbs; `rp` at an + bn limbs overlapping
/// neither.
pub unsafe fn product_by_mulmod_bnm1(rp: *mut mp_limb_t, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize) {
    let rn = gmp_mulmod_bnm1_size(an + bn);
    let half = rn >> 1;
    let square = ap == bp && an == bn;
    // GMP's mpn_mulmod_bnm1_itch and mpn_sqrmod_bnm1_itch (gmp-impl.h).
    let itch = if square { rn + 3 + if an > half { an } else { 0 } } else { rn + 4 + if an > half { if bn > half { rn } else { half } } else { 0 } };
    let mut scratch: Vec<mp_limb_t> = vec![0; itch];
    let (rn, an, bn) = (rn as mp_size_t, an as mp_size_t, bn as mp_size_t);
    // SAFETY: 0 < bn <= an <= an + bn <= rn, scratch of GMP's itch for
    // (rn, an, bn), rp as the caller promises.
    unsafe {
        if square {
            embedded::mpn_sqrmod_bnm1(rp, rn, ap, an, scratch.as_mut_ptr());
        } else {
            embedded::mpn_mulmod_bnm1(rp, rn, ap, an, bp, bn, scratch.as_mut_ptr());
        }
    }
}

/// `a * b`, or with `modulus` Some(rn) that product mod B^rn - 1 in
/// min(rn, a.len() + b.len()) limbs as GMP's mulmod_bnm1 gives it: the
/// reference a GPU product is checked against.
pub fn product(a: &[mp_limb_t], b: &[mp_limb_t], modulus: Option<usize>) -> Vec<mp_limb_t> {
    let mut p = vec![0; a.len() + b.len()];
    mul(&mut p, a, b);
    match modulus {
        Some(rn) if rn < p.len() => {
            let mut folded = vec![0; rn];
            fold_mod_bnm1(&p, &mut folded);
            folded
        }
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn products_match_gmp_mod_bnm1() {
        // (B^2 - 1)^2 = B^4 - 2 B^2 + 1: mod B^3 - 1 that is B - 2 B^2 + 1.
        let m = u64::MAX;
        let p = product(&[m, m], &[m, m], Some(3));
        let mut want = [0u64; 3];
        let mut scratch = [0u64; 16];
        // SAFETY: GMP's mulmod_bnm1 with rn = 3 >= an = bn = 2, its scratch
        // (at most 2 rn + 4 limbs) in `scratch`.
        unsafe { embedded::mpn_mulmod_bnm1(want.as_mut_ptr(), 3, [m, m].as_ptr(), 2, [m, m].as_ptr(), 2, scratch.as_mut_ptr()) };
        assert_eq!(p, want);
        assert_eq!(product(&[3], &[5], Some(4)), [15, 0]);
    }

    #[test]
    fn product_by_mulmod_bnm1_is_the_product() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut limbs = |n: usize| -> Vec<mp_limb_t> {
            (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state
                })
                .collect()
        };
        // Small, GMP's recursion's sizes, the shapes of its gcd at 10^4
        // limbs, all-ones operands; then squares (one operand twice).
        for (an, bn) in [(1, 1), (5, 3), (300, 100), (3218, 804), (6666, 1666), (4999, 2499)] {
            let (a, b) = (limbs(an), limbs(bn));
            let (ones_a, ones_b) = (vec![mp_limb_t::MAX; an], vec![mp_limb_t::MAX; bn]);
            for (a, b) in [(&a, &b), (&ones_a, &ones_b)] {
                let mut want = vec![0; an + bn];
                mul(&mut want, a, b);
                let mut got = vec![7; an + bn];
                // SAFETY: got holds an + bn limbs apart from a and b.
                unsafe { product_by_mulmod_bnm1(got.as_mut_ptr(), a.as_ptr(), an, b.as_ptr(), bn) };
                assert!(got == want, "{an} x {bn} limbs");
            }
            let mut want = vec![0; 2 * an];
            mul(&mut want, &a, &a);
            let mut got = vec![7; 2 * an];
            // SAFETY: as above, the one operand twice.
            unsafe { product_by_mulmod_bnm1(got.as_mut_ptr(), a.as_ptr(), an, a.as_ptr(), an) };
            assert!(got == want, "{an} limbs squared");
        }
    }
}
