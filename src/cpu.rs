//! The CPU engine at GMP's `mpn` level: limb slices in, limb slices out,
//! computed by the embedded GMP. It serves every operation the GPU does
//! not take, finishes every GPU failure, and is the reference the GPU's
//! results are checked against (`CUGMP_CHECK=1`, the self-test).
//!
//! [`gf2x`]: products of binary polynomials (carry-less), its own code.
//!
//! It may use the ground floor (`gmp`) and the leaves; it knows nothing of
//! the GPU or of routing.

pub mod gf2x;

use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::{helpers, parallel};

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

/// `out = a * b` as [`mul`] takes them, its work shared with the kept
/// helper threads (src/helpers.rs): one level of Karatsuba's method when
/// the operands are of about one size (three products of half the size,
/// two of them handed out), else the longer operand cut in two (two
/// products). GMP computes each part. Where the helpers are asleep or
/// busy with another caller's work, GMP's product whole (cut for a single
/// thread, the parts would cost it 1.15x the whole). Returns whether the
/// helpers were asked.
pub fn mul_on_cores(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) -> bool {
    if !helpers::awake() {
        mul(out, a, b);
        return false;
    }
    mul_cut(out, a, b)
}

/// `mul_on_cores`'s product cut for the helpers, whether or not they are
/// awake.
fn mul_cut(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) -> bool {
    let square = std::ptr::eq(a, b);
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let (un, vn) = (u.len(), v.len());
    assert!(!v.is_empty() && out.len() == un + vn, "cpu::mul_cut: {un} x {vn} limbs into {}", out.len());
    if un < 2 {
        mul(out, a, b);
        return false;
    }
    let k = un.div_ceil(2);
    if vn > k { karatsuba_on_cores(out, u, v, k, square) } else { halves_on_cores(out, u, v, k) }
}

/// `|x - y|` into `d` (x.len() limbs, y not longer, not empty), and whether
/// x < y.
fn difference(d: &mut [mp_limb_t], x: &[mp_limb_t], y: &[mp_limb_t]) -> bool {
    let (n, m) = (x.len(), y.len());
    debug_assert!(m <= n && d.len() == n && m > 0);
    let x_high_zero = x[m..].iter().all(|&l| l == 0);
    // SAFETY: d holds n limbs apart from x and y; GMP's cmp and subs on the
    // lengths given (m >= 1).
    unsafe {
        let below = x_high_zero && embedded::mpn_cmp(x.as_ptr(), y.as_ptr(), m as mp_size_t) < 0;
        if below {
            // y - x: x's limbs above m are zero, so y - x has m limbs.
            embedded::mpn_sub_n(d.as_mut_ptr(), y.as_ptr(), x.as_ptr(), m as mp_size_t);
            d[m..].fill(0);
        } else {
            let borrow = embedded::mpn_sub_n(d.as_mut_ptr(), x.as_ptr(), y.as_ptr(), m as mp_size_t);
            if n > m {
                embedded::mpn_sub_1(d.as_mut_ptr().add(m), x.as_ptr().add(m), (n - m) as mp_size_t, borrow);
            }
        }
        below
    }
}

/// Sums of at least this many limbs are cut among threads: a product made
/// from halves (`halves_by`) adds its upper half in at this scale, and one
/// thread adds only a few GB/s.
const THREADED_ADD_LIMBS: usize = 1 << 19;

/// `r += x` (x no longer than r), by GMP's adds: the carry out of r.
fn add_into(r: &mut [mp_limb_t], x: &[mp_limb_t]) -> mp_limb_t {
    let (rn, xn) = (r.len(), x.len());
    debug_assert!(xn <= rn);
    if xn == 0 {
        return 0;
    }
    if xn >= THREADED_ADD_LIMBS {
        return add_into_on_threads(r, x);
    }
    // SAFETY: r in place (GMP allows rp == up), x apart, lengths as given.
    let carry = unsafe { embedded::mpn_add_n(r.as_mut_ptr(), r.as_ptr(), x.as_ptr(), xn as mp_size_t) };
    carry_on(&mut r[xn..], carry)
}

/// `add_into` with x cut into pieces added on threads at once, each
/// piece's carry then carried on, in order, from the piece's end.
fn add_into_on_threads(r: &mut [mp_limb_t], x: &[mp_limb_t]) -> mp_limb_t {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    let xn = x.len();
    let threads = parallel::cores().clamp(1, 8);
    let per = xn.div_ceil(threads);
    let carries: Vec<AtomicU64> = (0..xn.div_ceil(per)).map(|_| AtomicU64::new(0)).collect();
    parallel::each_item(&mut r[..xn], per, threads, |i, piece| {
        let xs = &x[i * per..][..piece.len()];
        // SAFETY: piece in place, xs apart, both piece.len() >= 1 limbs.
        let c = unsafe { embedded::mpn_add_n(piece.as_mut_ptr(), piece.as_ptr(), xs.as_ptr(), piece.len() as mp_size_t) };
        carries[i].store(c, Relaxed);
    });
    let mut out = 0;
    for (i, c) in carries.iter().enumerate() {
        let end = ((i + 1) * per).min(xn);
        out |= carry_on(&mut r[end..], c.load(Relaxed));
    }
    out
}

/// `r += c` (c of 0 or 1) from r's first limb, stopping where the carry
/// stops: the carry out of r.
fn carry_on(r: &mut [mp_limb_t], mut c: mp_limb_t) -> mp_limb_t {
    for limb in r {
        if c == 0 {
            break;
        }
        let (sum, over) = limb.overflowing_add(c);
        *limb = sum;
        c = over as mp_limb_t;
    }
    c
}

/// One product for `karatsuba_by` or [`halves_by`] to have made:
/// `out = x * y`, `out` of x.len() + y.len() limbs apart from both (x and
/// y one slice: a square).
pub type Part<'a> = (&'a mut [mp_limb_t], &'a [mp_limb_t], &'a [mp_limb_t]);

/// Make every part by GMP, on the kept helper threads where they are free
/// (`helpers::share`): whether they were asked.
fn parts_on_cores(parts: Vec<Part<'_>>) -> Option<bool> {
    let mut calls: Vec<_> = parts.into_iter().map(|(o, x, y)| move || mul(&mut *o, x, y)).collect();
    let mut tasks: Vec<&mut (dyn FnMut() + Send)> = calls.iter_mut().map(|c| c as &mut (dyn FnMut() + Send)).collect();
    Some(helpers::share(&mut tasks))
}

fn karatsuba_on_cores(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize, square: bool) -> bool {
    karatsuba_by(out, u, v, k, square, parts_on_cores).unwrap_or(false)
}

fn halves_on_cores(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize) -> bool {
    halves_by(out, u, v, k, parts_on_cores).unwrap_or(false)
}

/// u v with u = u0 + u1 B^k, v = v0 + v1 B^k (v1 not empty, u at least as
/// long as v): u0 v0 at the bottom of `out`, u1 v1 above it, t = |u0 - u1|
/// |v0 - v1| beside, the three made by `make` (None: it failed, `out`
/// holds anything); then the middle u0 v1 + u1 v0 = u0 v0 + u1 v1 -+ t
/// added at B^k. `square`: u and v are one number (t, u0 v0 and u1 v1
/// then squares).
fn karatsuba_by<R>(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize, square: bool, make: impl FnOnce(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    let (u0, u1) = u.split_at(k);
    let (v0, v1) = v.split_at(k);
    // One scratch for |u0 - u1|, |v0 - v1| (none for a square), their
    // product t and the middle m.
    let mut scratch = vec![0; if square { 5 * k + 1 } else { 6 * k + 1 }];
    let (du, rest) = scratch.split_at_mut(k);
    let (dv, rest) = rest.split_at_mut(if square { 0 } else { k });
    let (t, m) = rest.split_at_mut(2 * k);
    let u_below = difference(du, u0, u1);
    let v_below = if square { u_below } else { difference(dv, v0, v1) };
    let made = {
        let (low, high) = out.split_at_mut(2 * k);
        // The same slices twice where the product is a square.
        let (v0, v1, dv): (&[mp_limb_t], &[mp_limb_t], &[mp_limb_t]) = if square { (u0, u1, &*du) } else { (v0, v1, &*dv) };
        let du: &[mp_limb_t] = du;
        make(vec![(low, u0, v0), (high, u1, v1), (&mut *t, du, dv)])?
    };
    // m = u0 v0 + u1 v1 (2k + 1 limbs), then - t where the differences'
    // signs agree, + t where they differ: u0 v1 + u1 v0 >= 0.
    m[..2 * k].copy_from_slice(&out[..2 * k]);
    m[2 * k] = add_into(&mut m[..2 * k], &out[2 * k..]);
    if u_below == v_below {
        // SAFETY: m in place, t apart, 2k limbs.
        let borrow = unsafe { embedded::mpn_sub_n(m.as_mut_ptr(), m.as_ptr(), t.as_ptr(), (2 * k) as mp_size_t) };
        m[2 * k] -= borrow;
    } else {
        m[2 * k] += add_into(&mut m[..2 * k], t);
    }
    // The middle is below B^(un + vn - k) (it is part of the product), so it
    // fits above B^k once its zero limbs are dropped.
    let mn = m.len() - m.iter().rev().take_while(|&&l| l == 0).count();
    let carry = add_into(&mut out[k..], &m[..mn]);
    debug_assert_eq!(carry, 0);
    Some(made)
}

/// u v with u = u0 + u1 B^k (0 < k < u.len()): u0 v into the bottom of
/// `out` and u1 v beside it, the two made by `make` (None: it failed, `out`
/// holds anything), then u1 v added at B^k: its low v.len() limbs onto u0
/// v's top, the rest copied above (on the host's cores where large).
pub fn halves_by<R>(out: &mut [mp_limb_t], u: &[mp_limb_t], v: &[mp_limb_t], k: usize, make: impl FnOnce(Vec<Part<'_>>) -> Option<R>) -> Option<R> {
    let (u0, u1) = u.split_at(k);
    let vn = v.len();
    let mut t = vec![0; u1.len() + vn];
    let made = make(vec![(&mut out[..k + vn], u0, v), (&mut t, u1, v)])?;
    let (mid, top) = out[k..].split_at_mut(vn);
    parallel::copy_limbs(top, &t[vn..]);
    let carry = add_into(mid, &t[..vn]);
    let carry = carry_on(top, carry);
    debug_assert_eq!(carry, 0);
    Some(made)
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

    /// `n` limbs of a xorshift sequence from `state`.
    fn random_limbs(state: &mut u64, n: usize) -> Vec<mp_limb_t> {
        (0..n)
            .map(|_| {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                *state
            })
            .collect()
    }

    /// The threaded sum equals GMP's one-thread sum: random limbs, and
    /// limbs that carry through whole pieces and out of r (all ones plus
    /// one), with r longer than x and as long.
    #[test]
    fn sums_on_threads_match_gmp() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let n = THREADED_ADD_LIMBS + 12_345;
        let random = random_limbs(&mut state, n + 77);
        let ones = vec![mp_limb_t::MAX; n + 77];
        let mut one = vec![0; n];
        one[0] = 1;
        let mut piece_ends = random_limbs(&mut state, n);
        // Ones where every piece but the first starts, so a piece's carry runs on.
        for k in (0..8).map(|t| t * n / 8 + 1) {
            piece_ends[k..(k + 64).min(n)].fill(mp_limb_t::MAX);
        }
        let x_random = random_limbs(&mut state, n);
        for (r, x) in [(&random, &x_random), (&ones, &one), (&piece_ends, &ones[..n].to_vec()), (&ones[..n].to_vec(), &one)] {
            let mut want = r.clone();
            // SAFETY: want in place, x apart, x.len() <= want.len(), both >= 1.
            let mut want_carry = unsafe { embedded::mpn_add_n(want.as_mut_ptr(), want.as_ptr(), x.as_ptr(), x.len() as mp_size_t) };
            want_carry = carry_on(&mut want[x.len()..], want_carry);
            let mut got = r.clone();
            let got_carry = add_into_on_threads(&mut got, x);
            assert!(got == want && got_carry == want_carry, "{} + {} limbs", r.len(), x.len());
        }
        // add_into itself takes the threaded path at this size: the carry
        // runs through all of r and out.
        let mut got = ones.clone();
        assert_eq!(add_into(&mut got, &one), 1);
        assert!(got.iter().all(|&l| l == 0));
    }

    /// A product from halves (`halves_by`, each half by GMP) equals GMP's
    /// whole product, at sizes whose sums and copies run on threads, with
    /// the shorter operand longer than a half and shorter, and with
    /// all-ones operands, whose halves' sum carries through the top.
    #[test]
    fn products_from_halves_match_gmp() {
        let mut state = 0x0bad_cafe_1234_5678u64;
        let n = THREADED_ADD_LIMBS + 1001;
        let (a, b) = (random_limbs(&mut state, n), random_limbs(&mut state, n - 17));
        let (ones_a, ones_b) = (vec![mp_limb_t::MAX; n], vec![mp_limb_t::MAX; n / 3]);
        for (u, v) in [(&a, &b), (&a, &b[..300].to_vec()), (&ones_a, &ones_b), (&ones_a, &ones_a)] {
            let mut want = vec![0; u.len() + v.len()];
            mul(&mut want, u, v);
            let mut got = vec![7; u.len() + v.len()];
            let made = halves_by(&mut got, u, v, u.len().div_ceil(2), |parts| {
                parts.into_iter().for_each(|(o, x, y)| mul(o, x, y));
                Some(())
            });
            assert!(made.is_some() && got == want, "{} x {} limbs from halves", u.len(), v.len());
        }
    }

    /// Products shared with the helpers equal GMP's: balanced and odd
    /// sizes, unbalanced ones (both ways of cutting), squares, operands
    /// whose halves are equal or all ones (the differences' signs and
    /// zeros), with helpers and on this thread alone.
    #[test]
    fn products_on_cores_match_gmp() {
        helpers::set_helpers(2);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut limbs = |n: usize| random_limbs(&mut state, n);
        let shapes = [(2, 1), (2, 2), (3, 2), (3, 3), (7, 5), (64, 64), (65, 33), (65, 32), (300, 151), (511, 300), (512, 512), (1023, 1000), (1000, 17), (4000, 700)];
        for (an, bn) in shapes {
            let (a, b) = (limbs(an), limbs(bn));
            let mut halves_equal = limbs(an);
            let k = an.div_ceil(2);
            let (lo, hi) = halves_equal.split_at_mut(k);
            hi.copy_from_slice(&lo[..an - k]);
            let ones = vec![mp_limb_t::MAX; an];
            let mut low_zero = limbs(an);
            low_zero[..k].fill(0);
            for (a, b) in [(&a, &b), (&halves_equal, &b), (&ones, &vec![mp_limb_t::MAX; bn]), (&low_zero, &b), (&b, &a)] {
                let mut want = vec![0; an + bn];
                mul(&mut want, a, b);
                let mut got = vec![7; an + bn];
                mul_cut(&mut got, a, b);
                assert!(got == want, "{} x {} limbs", a.len(), b.len());
            }
            for a in [&a, &halves_equal, &ones, &low_zero] {
                let mut want = vec![0; 2 * an];
                mul(&mut want, a, a);
                let mut got = vec![7; 2 * an];
                mul_cut(&mut got, a, a);
                assert!(got == want, "{an} limbs squared");
            }
        }
    }

    #[test]
    fn product_by_mulmod_bnm1_is_the_product() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut limbs = |n: usize| random_limbs(&mut state, n);
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
