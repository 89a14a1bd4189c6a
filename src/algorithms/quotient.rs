//! Quotients of large numbers on device-resident numbers: GMP's
//! `mpn_tdiv_qr` (which `mpz_tdiv_qr`, `mpz_fdiv_qr`, `mpz_mod` and the
//! rest reach) and `mpn_div_q` (which `mpz_tdiv_q` and `mpf_div` reach),
//! where the device takes them.
//!
//! GMP divides large numbers by an approximate inverse from Newton's
//! method and block-wise products (its mu division), each product through
//! the hooks carrying its operands up and its result down: a 2n by n
//! division of 10^6 limbs took 36 ms on an H200, against 2 ms for one
//! product end to end (RESULTS.md, "Hooks end to end"). Here N and D go up
//! once, and on the device: the inverse of D's top bits by Newton's
//! iteration x' = x + x (1 - d x), which doubles its precision with two
//! products and no division; the estimate Q from N's top limbs times the
//! inverse; and N - Q D. Q and the remainder's low limbs come down once
//! (src/gpu/quotient.rs, at the positions worked out here).
//!
//! Exact by verification: Q is taken only where N - Q D is in [0, D)
//! after at most a few corrections by D on the host; the bounds below
//! keep the estimate within one of the quotient, so at most one
//! correction is needed. They decide only the speed: were the estimate
//! ever further off (a bug), GMP's own division computes the quotient.

use super::product::inject_product_fault;
use super::sqrt::{precisions, LOSS};
use crate::config::{self, log};
use crate::cpu::{self, Linear};
use crate::gmp::mpz::{view, Int};
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::gpu::quotient::{QuotientPlan, ReciprocalStep};
use crate::gpu::root::Difference;
use crate::gpu::Gpu;
use crate::stats::{self, Op};

/// Fewest limbs of the divisor and of the quotient this method takes:
/// below, GMP's own division is a few launches' worth of work.
pub(crate) const MIN_LIMBS: usize = 64;
/// The inverse's precision (bits) from which its Newton steps run on the
/// device; the first precision at least this is computed by GMP on the
/// host (one division of about three times as many bits by twice).
const DEVICE_STEPS_FROM: u64 = 1 << 15;
/// Bits of the inverse beyond the quotient's (`positions`).
const GUARD: u64 = 6;

/// Where a quotient's device work reads and shifts.
#[derive(Debug)]
struct Positions {
    /// The base inverse X_k0 = floor(2^(k0 + dK) / D[base_from..]), dK
    /// that top's bits.
    k0: u64,
    base_from: usize,
    steps: Vec<ReciprocalStep>,
    top_from: usize,
    q_shift: u64,
    q_limbs: usize,
}

/// D's limbs from which a step to precision `big_k` reads D's top: all of
/// D's bits from the first limb that leaves at least `big_k` of them
/// (between big_k and big_k + 63), or all of D if it has fewer.
fn top_from(d_bits: u64, big_k: u64) -> usize {
    (d_bits.saturating_sub(big_k) / 64) as usize
}

/// The positions for N of `n_bits` bits (in `nn` limbs) by D of `d_bits`
/// bits (in `dn` limbs), n_bits > d_bits.
///
/// Write delta = D / 2^d_bits in [1/2, 1) and delta_j for its truncation
/// to D's top dK >= j bits (D / 2^(64 a), a = `top_from`), so that 1 /
/// delta_j is within 4 * 2^-j of 1 / delta. X_k is 2^k / delta_k within 3
/// units (e_k <= 3). A step to K <= 2k - LOSS reads D's top D_t of dK bits
/// and computes E = 2^(dK+k) - D_t X_k: |E| = 2^(dK+k) delta_K
/// |1/delta_K - X_k 2^-k| <= (e_k + 4) 2^dK < 2^(dK+3), so E is its low dK + 4 bits
/// read as two's complement (2^(dK+k) is 0 there), and only the bits of
/// D_t X_k from t = k + dK - K - 3 up are read (the window; the ones below
/// move E by less than 2^t). Then X_K = X_k 2^(K-k) + floor(X_k E /
/// 2^(2k+dK-K)) (the window gives E / 2^t; `up` and `down` place it) is
/// 2^K / delta_K within (e_k + 4)^2 2^(K-2k) <= 49/64 (Newton's square
/// error), plus 1 (the floor), plus X_k 2^t / 2^(2k+dK-K) <= 1/4 (the
/// window): 2.02 < 3 units. X_K < 2^(K+2).
///
/// The estimate: with p = n_bits - d_bits + GUARD bits of inverse, X_p
/// 2^-p is within 7 * 2^-p of 1 / delta, so N X_p / 2^(p + d_bits) is
/// within 7/64 of N / D; N's limbs below 64 tf <= d_bits - 3 change it by
/// at most 2^(64 tf - d_bits) (2 + 2^-60) <= 0.26. Q = floor(N[tf..] X_p
/// / 2^(d_bits + p - 64 tf)) is then floor(N / D) - 1, floor(N / D) or
/// floor(N / D) + 1.
fn positions(n_bits: u64, d_bits: u64, nn: usize, dn: usize) -> Positions {
    let p = n_bits - d_bits + GUARD;
    let ks = precisions(p);
    let first = ks.iter().position(|&k| k >= DEVICE_STEPS_FROM).unwrap_or(ks.len() - 1);
    let steps = ks[first..]
        .windows(2)
        .map(|pair| {
            let (k, big_k) = (pair[0], pair[1]);
            debug_assert!(big_k + LOSS <= 2 * k && k >= 4);
            let d_top = d_bits - 64 * top_from(d_bits, big_k) as u64;
            let from = (k + d_top).saturating_sub(big_k + 3);
            let down = 2 * k + d_top - big_k - from;
            ReciprocalStep { d_from: top_from(d_bits, big_k), from, count: d_top + 4 - from, up: down + big_k - k, down, keep: (big_k + 2).div_ceil(64) as usize }
        })
        .collect();
    let tf = ((d_bits - 3) / 64) as usize;
    Positions { k0: ks[first], base_from: top_from(d_bits, ks[first]), steps, top_from: tf, q_shift: d_bits + p - 64 * tf as u64, q_limbs: nn - dn + 2 }
}

/// X_k0 = floor(2^(k0 + dK) / D_t), D_t = D's limbs from `from` (dK bits):
/// 2^k0 / delta_k0 within one unit. A division of a few thousand limbs by
/// GMP's own routine (the original: through the hook it would come back
/// here under CUGMP_GPU=force).
fn base_inverse(d: &[mp_limb_t], from: usize, k0: u64) -> Vec<mp_limb_t> {
    let top = &d[from..];
    let d_top = 64 * top.len() as u64 - u64::from(top[top.len() - 1].leading_zeros());
    let e = k0 + d_top;
    let mut power = vec![0; (e / 64) as usize + 1];
    power[(e / 64) as usize] = 1 << (e % 64);
    let (mut x, mut r) = (vec![0; power.len() - top.len() + 1], vec![0; top.len()]);
    // SAFETY: x and r hold GMP's sizes, apart from power and top; top's
    // high limb is nonzero and power is at least as long (e > d_top).
    unsafe { embedded::mpn_tdiv_qr(x.as_mut_ptr(), r.as_mut_ptr(), 0, power.as_ptr(), power.len() as mp_size_t, top.as_ptr(), top.len() as mp_size_t) };
    while x.last() == Some(&0) {
        x.pop();
    }
    x
}

/// Significant bits of the limbs (0 for none).
fn bits_of(x: &[mp_limb_t]) -> u64 {
    let used = x.len() - x.iter().rev().take_while(|&&l| l == 0).count();
    if used == 0 { 0 } else { 64 * used as u64 - u64::from(x[used - 1].leading_zeros()) }
}

/// The quotient's and the divisor's significant limbs, where this method
/// takes N / D: both at least MIN_LIMBS (None otherwise: GMP's division).
pub(crate) fn sizes(n: &[mp_limb_t], d: &[mp_limb_t]) -> Option<(usize, usize)> {
    let (n_bits, d_bits) = (bits_of(n), bits_of(d));
    let q_limbs = (n_bits.saturating_sub(d_bits) / 64) as usize;
    (d.len() >= MIN_LIMBS && q_limbs >= MIN_LIMBS && d.last().is_some_and(|&t| t != 0)).then_some((q_limbs, d.len()))
}

/// floor(N / D) and N - D floor(N / D), on `g`'s device-resident
/// numbers: None where the device failed or the estimate was refused (the
/// caller then divides by GMP). `n` and `d` as `sizes` takes them (D's top
/// limb nonzero, N longer).
pub(crate) fn divide_on_device(g: &Gpu, n: &[mp_limb_t], d: &[mp_limb_t], what: &str) -> Option<Quotient> {
    let (nn, dn) = (n.len(), d.len());
    if nn <= dn {
        return None;
    }
    let at = positions(bits_of(n), bits_of(d), nn, dn);
    let x = base_inverse(d, at.base_from, at.k0);
    let plan = QuotientPlan { n, d, x: &x, steps: &at.steps, top_from: at.top_from, q_shift: at.q_shift, q_limbs: at.q_limbs };
    let (mut q, mut low) = (vec![0; at.q_limbs], vec![0; dn + 1]);
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    let found = match g.quotient(&plan, &mut q, &mut low) {
        Ok(found) => found,
        Err(e) => {
            stats::fallback(Op::Div, e.fallback());
            log!("{what} {nn}/{dn} limbs: GPU failed ({e}); GMP's division instead");
            return None;
        }
    };
    stats::gpu_call(Op::Div, dn, start.elapsed());
    if !corrected(&mut q, &mut low, found, d) {
        log!("{what} {nn}/{dn} limbs: the estimate was refused; GMP's division instead");
        return None;
    }
    log!("{what} {nn}/{dn} limbs: the quotient from device-resident numbers, {} Newton steps there, {:.3} ms", at.steps.len(), start.elapsed().as_secs_f64() * 1e3);
    q.truncate(nn - dn + 1);
    low.truncate(dn);
    if config::get().check {
        check(n, d, &q, &low, what);
    }
    // CUGMP_FAULT=mul: the device's products are checked by the remainder,
    // not corrupted one by one, so the quotient carries the planted fault
    // (the tests must catch a wrong quotient).
    // SAFETY: q's own first limb; q holds at least one.
    unsafe { inject_product_fault(q.as_mut_ptr(), q.len()) };
    Some(Quotient { q, r: low })
}

/// A quotient (nn - dn + 1 limbs, high zeros possible) and its remainder
/// (dn limbs), as GMP's `mpn_tdiv_qr` writes them.
pub(crate) struct Quotient {
    pub(crate) q: Vec<mp_limb_t>,
    pub(crate) r: Vec<mp_limb_t>,
}

/// The estimate Q (its room one limb longer than the quotient's) and N -
/// Q D + 2^(64 dn + 63) modulo B^(dn+1) with what the device found of the
/// rest (src/gpu/root.rs, `low_difference`), moved to the quotient and its
/// remainder: where N - Q D fits, it is `low` with its top bit flipped,
/// read as two's complement; then Q down
/// by one while it is negative, up by one while it is at least D, at most
/// twice each (the bounds allow one). False where anything else is found:
/// the estimate is refused.
fn corrected(q: &mut [mp_limb_t], low: &mut [mp_limb_t], found: Difference, d: &[mp_limb_t]) -> bool {
    let dn = d.len();
    if !found.fits {
        return false;
    }
    low[dn] ^= 1 << 63;
    let negative = low[dn] >> 63 == 1;
    if negative {
        // R + D = low + D - B^(dn+1): non-negative once the sum carries out.
        let mut carried = false;
        for _ in 0..2 {
            carried = cpu::linear_into(low, d, Linear::Add) != 0;
            if cpu::borrow_on(q, 1) != 0 {
                return false;
            }
            if carried {
                break;
            }
        }
        if !carried {
            return false;
        }
    }
    let mut fits = false;
    for _ in 0..3 {
        if low[dn] == 0 && low[..dn].iter().rev().cmp(d.iter().rev()).is_lt() {
            fits = true;
            break;
        }
        cpu::linear_into(low, d, Linear::Sub);
        if cpu::carry_on(q, 1) != 0 {
            return false;
        }
    }
    let qn = q.len() - 1;
    fits && q[qn] == 0
}

/// CUGMP_CHECK: the device's products were not checked one by one, so N =
/// Q D + R is, on the CPU; a difference aborts.
fn check(n: &[mp_limb_t], d: &[mp_limb_t], q: &[mp_limb_t], r: &[mp_limb_t], what: &str) {
    let trim = |x: &[mp_limb_t]| x.len() - x.iter().rev().take_while(|&&l| l == 0).count();
    let (nv, dv, qv, rv) = (view(&n[..trim(n)]), view(d), view(&q[..trim(q)]), view(&r[..trim(r)]));
    let mut back = Int::new();
    // SAFETY: all initialised; the views are read only.
    let same = unsafe {
        embedded::mpz_mul(back.m(), &qv, &dv);
        embedded::mpz_add(back.m(), back.p(), &rv);
        embedded::mpz_cmp(back.p(), &nv) == 0
    };
    if !same {
        eprintln!("cugmp: CUGMP_CHECK: the GPU's quotient of {what} ({} by {} limbs) and its remainder differ from N; aborting", n.len(), d.len());
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::random_limbs;
    use crate::gmp::{mp_bitcnt_t, mpz_srcptr};

    fn int(x: &[mp_limb_t]) -> Int {
        let mut z = Int::new();
        let used = x.len() - x.iter().rev().take_while(|&&l| l == 0).count();
        if used > 0 {
            let v = view(&x[..used]);
            // SAFETY: z initialised, v a view.
            unsafe { embedded::mpz_set(z.m(), &v) };
        }
        z
    }

    fn small(v: i64) -> Int {
        let mut z = Int::new();
        // SAFETY: z initialised.
        unsafe {
            embedded::mpz_set_ui(z.m(), v.unsigned_abs() as libc::c_ulong);
            if v < 0 {
                embedded::mpz_neg(z.m(), z.p());
            }
        }
        z
    }

    /// What src/gpu/quotient.rs computes, by GMP on the host: the same
    /// positions, windows and shifts, step for step.
    fn estimate_on_host(n: &[mp_limb_t], d: &[mp_limb_t], at: &Positions) -> Int {
        let mul = |a: mpz_srcptr, b: mpz_srcptr| {
            let mut r = Int::new();
            // SAFETY: all initialised.
            unsafe { embedded::mpz_mul(r.m(), a, b) };
            r
        };
        let bits = |x: &Int, from: u64, count: u64| {
            let (mut r, mut high) = (Int::new(), Int::new());
            // SAFETY: all initialised; in place as GMP allows.
            unsafe {
                embedded::mpz_fdiv_q_2exp(r.m(), x.p(), from as mp_bitcnt_t);
                embedded::mpz_fdiv_q_2exp(high.m(), r.p(), count as mp_bitcnt_t);
                embedded::mpz_mul_2exp(high.m(), high.p(), count as mp_bitcnt_t);
                embedded::mpz_sub(r.m(), r.p(), high.p());
            }
            r
        };
        let mut x = int(&base_inverse(d, at.base_from, at.k0));
        for s in &at.steps {
            let d_top = int(&d[s.d_from..]);
            let p = mul(d_top.p(), x.p());
            let mut v = bits(&p, s.from, s.count);
            // The window's top bit flipped.
            let mut top = small(1);
            // SAFETY: all initialised; in place as GMP allows.
            unsafe {
                embedded::mpz_mul_2exp(top.m(), top.p(), (s.count - 1) as mp_bitcnt_t);
                if embedded::mpz_cmp(v.p(), top.p()) >= 0 {
                    embedded::mpz_sub(v.m(), v.p(), top.p());
                } else {
                    embedded::mpz_add(v.m(), v.p(), top.p());
                }
            }
            let g = mul(x.p(), v.p());
            let mut z = Int::new();
            // SAFETY: all initialised; in place as GMP allows.
            unsafe {
                embedded::mpz_mul_2exp(z.m(), x.p(), s.up as mp_bitcnt_t);
                let mut t = Int::new();
                embedded::mpz_mul_2exp(t.m(), x.p(), (s.count - 1) as mp_bitcnt_t);
                embedded::mpz_add(z.m(), z.p(), t.p());
                embedded::mpz_sub(z.m(), z.p(), g.p());
                assert!(embedded::mpz_cmp(z.p(), small(0).p()) >= 0, "a step's sum went below zero");
            }
            x = bits(&z, s.down, 64 * s.keep as u64);
        }
        let top = int(&n[at.top_from..]);
        let nx = mul(top.p(), x.p());
        bits(&nx, at.q_shift, 64 * at.q_limbs as u64)
    }

    fn gmp_quotient(n: &[mp_limb_t], d: &[mp_limb_t]) -> (Vec<mp_limb_t>, Vec<mp_limb_t>) {
        let (mut q, mut r) = (vec![0; n.len() - d.len() + 1], vec![0; d.len()]);
        // SAFETY: q and r hold GMP's sizes, apart from n and d.
        unsafe { embedded::mpn_tdiv_qr(q.as_mut_ptr(), r.as_mut_ptr(), 0, n.as_ptr(), n.len() as mp_size_t, d.as_ptr(), d.len() as mp_size_t) };
        (q, r)
    }

    /// Dividends and divisors of the shapes that matter: random, all ones,
    /// a divisor just above a power of two (its inverse near 2), small top
    /// limbs, and quotients much shorter and much longer than D.
    fn cases(seed: &mut u64) -> Vec<(Vec<mp_limb_t>, Vec<mp_limb_t>)> {
        let mut out = Vec::new();
        for (nn, dn) in [(130, 64), (129, 65), (2000, 1000), (1500, 1200), (5000, 700), (3000, 1999), (70_000, 35_000), (40_000, 36_000)] {
            let mut n = random_limbs(nn, seed);
            let mut d = random_limbs(dn, seed);
            out.push((n.clone(), d.clone()));
            out.push((vec![mp_limb_t::MAX; nn], vec![mp_limb_t::MAX; dn]));
            let mut power = vec![0; dn];
            power[dn - 1] = 1 << 63;
            power[0] = 1;
            out.push((n.clone(), power));
            n[nn - 1] >>= 61;
            d[dn - 1] = 1;
            out.push((n, d));
        }
        out
    }

    /// The positions' bounds hold: the estimate is within one of GMP's
    /// quotient on every case (the device computes the same numbers).
    #[test]
    fn estimates_are_within_one() {
        let mut seed = 0x0123_4567_89ab_cdef;
        let mut most_steps = 0;
        for (i, (n, d)) in cases(&mut seed).iter().enumerate() {
            let at = positions(bits_of(n), bits_of(d), n.len(), d.len());
            most_steps = most_steps.max(at.steps.len());
            let estimate = estimate_on_host(n, d, &at);
            let (q, _) = gmp_quotient(n, d);
            let want = int(&q);
            let mut diff = Int::new();
            // SAFETY: all initialised.
            let within = unsafe {
                embedded::mpz_sub(diff.m(), estimate.p(), want.p());
                embedded::mpz_cmp(diff.p(), small(1).p()) <= 0 && embedded::mpz_cmp(diff.p(), small(-1).p()) >= 0
            };
            assert!(within, "case {i} ({}/{} limbs, {} steps): the estimate is more than one off", n.len(), d.len(), at.steps.len());
        }
        assert!(most_steps >= 5, "the cases reach only {most_steps} Newton steps");
    }

    /// The corrections turn estimates up to two off, each way, into GMP's
    /// quotient and remainder, and refuse three off.
    #[test]
    fn corrections_reach_gmps_quotient() {
        let mut seed = 0xfeed_beef;
        for (nn, dn) in [(200, 90), (3001, 1500)] {
            let (n, d) = (random_limbs(nn, &mut seed), random_limbs(dn, &mut seed));
            let (q, r) = gmp_quotient(&n, &d);
            for nudge in [-3i64, -2, -1, 0, 1, 2, 3] {
                let mut estimate = vec![0; nn - dn + 2];
                estimate[..q.len()].copy_from_slice(&q);
                if nudge > 0 {
                    cpu::carry_on(&mut estimate, nudge as mp_limb_t);
                } else {
                    cpu::borrow_on(&mut estimate, nudge.unsigned_abs());
                }
                // N - Q D on the host, as the device leaves it: N - Q D +
                // 2^(64 m - 1) over N's limbs (m = dn + 1), the borrow and
                // the bias's carry, anything above the low m limbs.
                let mut qd = vec![0; estimate.len() + dn];
                // SAFETY: qd holds both operands' limbs, apart from them.
                unsafe { embedded::mpn_mul(qd.as_mut_ptr(), estimate.as_ptr(), estimate.len() as mp_size_t, d.as_ptr(), dn as mp_size_t) };
                let m = dn + 1;
                let mut f = n.clone();
                let borrow = cpu::linear_into(&mut f, &qd[..nn.min(qd.len())], Linear::Sub);
                let carry = cpu::linear_into(&mut f[m - 1..], &[1 << 63], Linear::Add);
                let fits = borrow == carry && f[m..].iter().all(|&l| l == 0) && qd[nn.min(qd.len())..].iter().all(|&l| l == 0);
                let mut low = f[..m].to_vec();
                let found = Difference { fits };
                let ok = corrected(&mut estimate, &mut low, found, &d);
                if nudge.abs() > 2 {
                    assert!(!ok, "{nn}/{dn} limbs, the estimate moved by {nudge}: not refused");
                } else {
                    assert!(ok, "{nn}/{dn} limbs, the estimate moved by {nudge}: refused");
                    assert!(estimate[..q.len()] == q[..] && low[..dn] == r[..], "{nn}/{dn} limbs, the estimate moved by {nudge}: not GMP's");
                }
            }
        }
    }
}
