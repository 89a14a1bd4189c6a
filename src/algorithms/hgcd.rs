//! GMP's half-gcd matrix steps with their products on several cores: the
//! targets of the hooks on `mpn_hgcd_matrix_adjust` (the two numbers times
//! the inverse of a matrix: four products) and `mpn_matrix22_mul` (a matrix
//! times a matrix: eight products) (src/abi/hooks.rs).
//!
//! GMP's gcd, gcdext and invert of large numbers spend most of their time
//! in products too small for any GPU, made one step after another: at 10^7
//! digits, products of 8 to 1023 limbs took 3.3 s of a gcd's 6.2 s, 2.0 s of
//! it below 128 limbs (RESULTS.md, "Half-gcd steps on several cores"). The
//! steps depend on each other, but the products inside one step do not.
//! Here they run at once on the caller and the kept helper threads
//! (src/helpers.rs), GMP computing each, and then the caller makes GMP's
//! sums of them: the same numbers, limb for limb, as GMP's routine leaves.
//! (GMP multiplies matrices by Strassen's seven products from about 16
//! limbs; eight products on several threads cost less time than seven on
//! one.)
//!
//! A step whose products the GPU takes (`route::hgcd_step_on_gpu`) sends
//! them there at once, each on a slot of its own (src/gpu/ntt/small.rs),
//! launched together: the device runs their chains of passes beside each
//! other, where GMP's routine would send them one after another (its
//! matrix product seven, each waiting for the last): a gcd of 10^7 digits
//! took 0.959 s at the median against 1.149 (RESULTS.md, "A half-gcd
//! step's products at once on the device").
//!
//! Where the routing declines (`route::hgcd_shared`: sharing off, or a
//! product the GPU may take; `route::one_sharing`: another thread at
//! shareable work; or the helpers asleep), GMP's own routine runs, its
//! products through the product hooks as before.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's routine of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::{product, route};
use crate::cpu;
use crate::gmp::{embedded, hgcd_matrix, mp_limb_t, mp_size_t};
use crate::helpers;
use crate::stats::{self, Op};

/// The products `x[k] * y[k]` of a step (every x[k] of one length, every
/// y[k] of another), side by side in a new buffer (each of `x[0].len() +
/// y[0].len()` limbs): on the GPU at once where the routing sends such a
/// step there (`route::hgcd_step_on_gpu`) and each product fits a small
/// product's graph, else on the caller and the helpers where the step is
/// shared (`route::hgcd_shared`); None to leave the step to GMP (also after
/// a GPU failure: GMP's routine makes the products again).
fn step_products(x: &[&[mp_limb_t]], y: &[&[mp_limb_t]]) -> Option<Vec<mp_limb_t>> {
    let (xn, yn) = (x[0].len(), y[0].len());
    let (short, long) = (xn.min(yn), xn.max(yn));
    if let Some(g) = route::hgcd_step_on_gpu(short, long).filter(|g| g.small_product_fits(long, short)) {
        // Only while no other thread is at such work: a step takes up to
        // eight of the device's sixteen slots, and the threads of a
        // program making gcds at once would leave one another none.
        return route::one_sharing(|alone| if alone { product::products_at_once(g, x, y, "a half-gcd step's products") } else { None });
    }
    if !route::hgcd_shared(short, long) {
        return None;
    }
    shared_products(x, y)
}

/// `step_products` on the caller and the helpers, where this thread may
/// share now (`route::one_sharing`, the helpers awake); None to leave the
/// step to GMP. Each product counts in the profile as one of GMP's
/// internal products.
fn shared_products(x: &[&[mp_limb_t]], y: &[&[mp_limb_t]]) -> Option<Vec<mp_limb_t>> {
    route::one_sharing(|alone| {
        if !alone || !helpers::awake() {
            return None;
        }
        let len = x[0].len() + y[0].len();
        let mut out = vec![0; x.len() * len];
        let parts: Vec<cpu::Part<'_>> = out.chunks_mut(len).zip(x.iter().zip(y)).map(|(o, (&a, &b))| (o, a, b)).collect();
        let mut cut = false;
        let mut on_cores = |parts: Vec<cpu::Part<'_>>| {
            cut = parts.len() > x.len();
            cpu::parts_on_cores(parts, |o, a, b| stats::on_cpu(Op::Internal, a.len().min(b.len()), || cpu::mul(o, a, b)))
        };
        // Where the helpers can take every half at once, products of long
        // numbers by short entries (an adjustment's) are cut in halves.
        let helped = match route::hgcd_halves_from(x.len()) {
            Some(from) => cpu::halves_each(parts, from, &mut on_cores),
            None => on_cores(parts),
        };
        let helped = helped.unwrap_or(false);
        stats::shared(stats::Shared::HgcdStep, helped);
        if cut {
            stats::shared(stats::Shared::HgcdHalves, helped);
        }
        Some(out)
    })
}

/// GMP's `mpn_hgcd_matrix_adjust`: `(a; b) = M^-1 (a; b)`, that is `a =
/// r11 a - r01 b`, `b = r00 b - r10 a`, where only the low `p` limbs of
/// the `n`-limb numbers `a` and `b` meet the matrix (`p + M.n < n`); returns
/// their new size. `gmp` is GMP's own routine.
pub unsafe fn matrix_adjust(m: *const hgcd_matrix, n: usize, ap: *mut mp_limb_t, bp: *mut mp_limb_t, p: usize, gmp: impl FnOnce() -> mp_size_t) -> mp_size_t {
    // SAFETY: GMP's matrix: four entries of M.n limbs.
    let (mn, entries) = unsafe { ((*m).n as usize, (*m).p) };
    // The profile's own time of the step: its products have rows of their
    // own (timed inside, subtracted by on_cpu).
    stats::on_cpu(Op::HgcdMatrix, p + mn, || {
        if p == 0 || mn == 0 || p + mn >= n {
            return gmp();
        }
        let len = p + mn;
        // SAFETY: a and b hold n > p limbs, the entries mn; none is written
        // until the products are done.
        let (a, b, r) = unsafe {
            let r = |i: usize, j: usize| std::slice::from_raw_parts(entries[i][j].cast_const(), mn);
            (std::slice::from_raw_parts(ap.cast_const(), p), std::slice::from_raw_parts(bp.cast_const(), p), [r(0, 0), r(0, 1), r(1, 0), r(1, 1)])
        };
        // t = [r11 a, r10 a, r01 b, r00 b], as GMP's routine makes them.
        let Some(t) = step_products(&[a, a, b, b], &[r[3], r[2], r[1], r[0]]) else { return gmp() };
        let (r11a, r10a, r01b, r00b) = (t.as_ptr(), t[len..].as_ptr(), t[2 * len..].as_ptr(), t[3 * len..].as_ptr());
        // SAFETY: a and b hold n + 1 limbs (GMP's routine may write a[n] too);
        // the products len each. GMP's sums in GMP's order.
        unsafe {
            std::ptr::copy_nonoverlapping(r11a, ap, p);
            let mut ah = cpu::add_or_sub_into(ap.add(p), n - p, r11a.add(p), mn, false);
            ah -= cpu::add_or_sub_into(ap, n, r01b, len, true);
            std::ptr::copy_nonoverlapping(r00b, bp, p);
            let mut bh = cpu::add_or_sub_into(bp.add(p), n - p, r00b.add(p), mn, false);
            bh -= cpu::add_or_sub_into(bp, n, r10a, len, true);
            if ah > 0 || bh > 0 {
                *ap.add(n) = ah;
                *bp.add(n) = bh;
                (n + 1) as mp_size_t
            } else if *ap.add(n - 1) == 0 && *bp.add(n - 1) == 0 {
                // The subtraction takes at most one limb off.
                (n - 1) as mp_size_t
            } else {
                n as mp_size_t
            }
        }
    })
}

/// GMP's `mpn_matrix22_mul`: `R = R M` for 2 x 2 matrices, R's entries `r`
/// of `rn` limbs (room for `rn + mn + 1`), M's `m` of `mn`; each new entry
/// has `rn + mn + 1` limbs. `gmp` is GMP's own routine.
pub unsafe fn matrix22_mul(r: [*mut mp_limb_t; 4], rn: usize, m: [*const mp_limb_t; 4], mn: usize, gmp: impl FnOnce()) {
    // Timed as `matrix_adjust` is.
    stats::on_cpu(Op::HgcdMatrix, rn + mn, || {
        if rn == 0 || mn == 0 {
            return gmp();
        }
        let len = rn + mn;
        // SAFETY: R's entries hold rn limbs, M's mn; R is written only after
        // the products.
        let (x, y) = unsafe {
            let x: [&[mp_limb_t]; 4] = r.map(|e| std::slice::from_raw_parts(e.cast_const(), rn));
            let y: [&[mp_limb_t]; 4] = m.map(|e| std::slice::from_raw_parts(e, mn));
            (x, y)
        };
        // New r0 = r0 m0 + r1 m2, r1 = r0 m1 + r1 m3, r2 = r2 m0 + r3 m2, r3 =
        // r2 m1 + r3 m3: the pairs side by side in t.
        let Some(t) = step_products(&[x[0], x[1], x[0], x[1], x[2], x[3], x[2], x[3]], &[y[0], y[2], y[1], y[3], y[0], y[2], y[1], y[3]]) else { return gmp() };
        for (k, &e) in r.iter().enumerate() {
            let (u, v) = (t[2 * k * len..].as_ptr(), t[(2 * k + 1) * len..].as_ptr());
            // SAFETY: each entry has room for len + 1 limbs.
            unsafe { *e.add(len) = embedded::mpn_add_n(e, u, v, len as mp_size_t) };
        }
    })
}

/// The size from which GMP's build of the embedded half-gcd recurses
/// (`HGCD_THRESHOLD`): GMP's fat build takes gmp-impl.h's default, 400
/// limbs, where its tuned parameters for recent x86-64 processors say 64
/// (Skylake's gmp-mparam.h). Below it the half-gcd is Lehmer's method, a
/// step of one limb at a time over the whole numbers: quadratic, and most
/// of a large gcd's time on one thread (RESULTS.md, "The half-gcd's base
/// case"). Here the half-gcd recurses from DEFAULT_THRESHOLD limbs, with
/// GMP's own steps, matrix products and adjustments.
const DEFAULT_THRESHOLD: usize = 64;

/// The least threshold taken (`CUGMP_HGCD_THRESHOLD` below it is raised to
/// it): a half-gcd of fewer limbs has no halves worth a recursion.
const LEAST_THRESHOLD: usize = 16;

/// The threshold in force; None for GMP's own half-gcd
/// (`CUGMP_HGCD_THRESHOLD=0`, or by default while no device serves the
/// process). Without GPU products GMP's own, whose reduction above 1000
/// limbs is its approximate one, took 0.96x the time of the recursion from
/// 64 limbs for a gcd of 519,052 limbs on the build machine (RESULTS.md,
/// "The half-gcd's base case").
fn threshold() -> Option<usize> {
    match crate::config::get().hgcd_threshold {
        Some(0) => None,
        Some(t) => Some(t.max(LEAST_THRESHOLD)),
        None if route::gpu_serving() => Some(DEFAULT_THRESHOLD),
        None => None,
    }
}

/// The scratch limbs `hgcd` needs for `n` limbs at threshold `t`: GMP's
/// `mpn_hgcd_itch` with `t` for its HGCD_THRESHOLD (the same recursion
/// with another base size; its 22 limbs a level cover the deeper one).
fn itch(n: usize, t: usize) -> usize {
    if n < t {
        return n;
    }
    let levels = usize::BITS - ((n - 1) / (t - 1)).leading_zeros();
    20 * n.div_ceil(4) + 22 * levels as usize + t
}

/// The limbs of a half-gcd matrix for numbers of `n` limbs (GMP's
/// `MPN_HGCD_MATRIX_INIT_ITCH`).
fn matrix_itch(n: usize) -> usize {
    4 * (n.div_ceil(2) + 1)
}

/// Scratch of `need` limbs: the caller's `tp` where GMP's contract gave it
/// `given` limbs or more, else a buffer of its own (GMP's callers size the
/// scratch for GMP's threshold, which needs less below 400 limbs).
fn with_scratch<T>(tp: *mut mp_limb_t, given: usize, need: usize, f: impl FnOnce(*mut mp_limb_t) -> T) -> T {
    if need <= given {
        return f(tp);
    }
    let mut own: Vec<mp_limb_t> = Vec::with_capacity(need);
    f(own.as_mut_ptr())
}

/// GMP's `mpn_hgcd` as GMP's gcd, gcdext and callers through the export
/// reach it: the half-gcd of the `n`-limb numbers at `ap` and `bp`, the
/// reduced numbers in their place and the matrix in `m`; returns their
/// new size, 0 where no reduction was possible. `gmp` is GMP's own.
pub unsafe fn hgcd_for_gmp(ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, m: *mut hgcd_matrix, tp: *mut mp_limb_t, gmp: impl FnOnce() -> mp_size_t) -> mp_size_t {
    let Some(t) = threshold() else { return gmp() };
    // SAFETY: GMP's formula for the scratch its callers give (a pure
    // function of n).
    let given = unsafe { embedded::mpn_hgcd_itch(n) } as usize;
    let n = n as usize;
    // SAFETY: GMP's arguments; the scratch as `with_scratch` found it.
    with_scratch(tp, given, itch(n, t), |tp| unsafe { hgcd(ap, bp, n, m, tp, t) }) as mp_size_t
}

/// GMP's `mpn_hgcd_reduce` as callers through the export reach it: the
/// half-gcd of the numbers' top `n - p` limbs, applied to the whole;
/// returns the new size or 0. `gmp` is GMP's own.
pub unsafe fn reduce_for_gmp(m: *mut hgcd_matrix, ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, p: mp_size_t, tp: *mut mp_limb_t, gmp: impl FnOnce() -> mp_size_t) -> mp_size_t {
    let Some(t) = threshold() else { return gmp() };
    // SAFETY: as above.
    let given = unsafe { embedded::mpn_hgcd_reduce_itch(n, p) } as usize;
    let (n, p) = (n as usize, p as usize);
    let need = itch(n - p, t).max(n + p - 1);
    // SAFETY: GMP's arguments; the scratch as `with_scratch` found it.
    with_scratch(tp, given, need, |tp| unsafe { reduce(m, ap, bp, n, p, tp, t) }) as mp_size_t
}

/// GMP's `mpn_hgcd_reduce` below its HGCD_REDUCE_THRESHOLD, at every
/// size: the exact half-gcd of the top `n - p` limbs, then the matrix
/// applied to the whole by `matrix_adjust`. (Above that threshold GMP
/// takes an approximate half-gcd, `mpn_hgcd_appr`, whose own base case
/// is 400 limbs of Lehmer's method in its fat build.) Scratch:
/// `itch(n - p, t)` limbs and `n + p - 1`.
unsafe fn reduce(m: *mut hgcd_matrix, ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: usize, p: usize, tp: *mut mp_limb_t, t: usize) -> usize {
    // SAFETY: GMP's arguments (n > p, the numbers n limbs and room for one
    // more), the scratch as stated.
    unsafe {
        let nn = hgcd(ap.add(p), bp.add(p), n - p, m, tp, t);
        if nn == 0 {
            return 0;
        }
        adjust(m, p + nn, ap, bp, p, tp)
    }
}

/// `matrix_adjust` on `n`-limb numbers whose low `p` limbs meet the
/// matrix, GMP's own adjustment (scratch `tp`) where it declines; the new
/// size.
unsafe fn adjust(m: *const hgcd_matrix, n: usize, ap: *mut mp_limb_t, bp: *mut mp_limb_t, p: usize, tp: *mut mp_limb_t) -> usize {
    // SAFETY: the caller's arguments, as GMP's routine takes them.
    unsafe { matrix_adjust(m, n, ap, bp, p, || embedded::mpn_hgcd_matrix_adjust(m, n as mp_size_t, ap, bp, p as mp_size_t, tp)) as usize }
}

/// GMP's `mpn_hgcd` (its recursion step for step) with `t` for its
/// HGCD_THRESHOLD; scratch `itch(n, t)` limbs.
unsafe fn hgcd(ap: *mut mp_limb_t, bp: *mut mp_limb_t, mut n: usize, m: *mut hgcd_matrix, tp: *mut mp_limb_t, t: usize) -> usize {
    let s = n / 2 + 1;
    if n <= s {
        return 0;
    }
    let mut success = false;
    // One of GMP's steps (a Lehmer step, or a division where that fails):
    // the new size, or None where no step reduces the numbers further.
    // SAFETY (for every call): GMP's arguments; n + 1 limbs of scratch.
    let step = |n: usize| match stats::on_cpu(Op::HgcdStep, n, || unsafe { embedded::mpn_hgcd_step(n as mp_size_t, ap, bp, s as mp_size_t, m, tp) }) {
        0 => None,
        nn => Some(nn as usize),
    };
    if n >= t {
        let n2 = (3 * n) / 4 + 1;
        // SAFETY: the scratch holds itch(n, t) >= itch(n - n/2, t) and
        // n + n/2 - 1 limbs.
        let nn = unsafe { reduce(m, ap, bp, n, n / 2, tp, t) };
        if nn != 0 {
            n = nn;
            success = true;
        }
        while n > n2 {
            match step(n) {
                Some(nn) => n = nn,
                None => return if success { n } else { 0 },
            }
            success = true;
        }
        if n > s + 2 {
            let p = 2 * s - n + 1;
            let matrix_scratch = matrix_itch(n - p);
            let mut m1 = std::mem::MaybeUninit::<hgcd_matrix>::uninit();
            // SAFETY: as GMP's mpn_hgcd: M1 in the scratch's first
            // matrix_scratch limbs, the recursion's scratch after them
            // (itch covers both), the top n - p limbs of the numbers.
            unsafe {
                embedded::mpn_hgcd_matrix_init(m1.as_mut_ptr(), (n - p) as mp_size_t, tp);
                let nn = hgcd(ap.add(p), bp.add(p), n - p, m1.as_mut_ptr(), tp.add(matrix_scratch), t);
                if nn > 0 {
                    let rest = tp.add(matrix_scratch);
                    n = adjust(m1.as_ptr(), p + nn, ap, bp, p, rest);
                    embedded::mpn_hgcd_matrix_mul(m, m1.as_ptr(), rest);
                    success = true;
                }
            }
        }
    }
    loop {
        match step(n) {
            Some(nn) => n = nn,
            None => return if success { n } else { 0 },
        }
        success = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a half-gcd is made in these tests.
    #[derive(Clone, Copy, Debug)]
    enum Way {
        /// GMP's steps alone until none reduces further (as GMP's own test,
        /// tests/mpn/t-hgcd.c, makes its reference): Lehmer's method.
        Steps,
        /// GMP's own `mpn_hgcd` (from 400 limbs its reduction reaches
        /// `reduce_for_gmp` through the hook, with GMP's scratch).
        Gmp,
        /// `hgcd` from this threshold.
        From(usize),
    }

    /// The half-gcd of two numbers: (new size, a, b, the matrix's four
    /// entries).
    fn half_gcd(a: &[mp_limb_t], b: &[mp_limb_t], way: Way) -> (usize, Vec<mp_limb_t>, Vec<mp_limb_t>, Vec<Vec<mp_limb_t>>) {
        let n = a.len();
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.push(0);
        b.push(0);
        let mut mp = vec![0; matrix_itch(n)];
        let gmp_itch = unsafe { embedded::mpn_hgcd_itch(n as mp_size_t) } as usize;
        let ours = if let Way::From(t) = way { itch(n, t) } else { 0 };
        let mut tp = vec![0; gmp_itch.max(ours).max(n) + 1];
        let mut m = std::mem::MaybeUninit::<hgcd_matrix>::uninit();
        let (ap, bp, tp) = (a.as_mut_ptr(), b.as_mut_ptr(), tp.as_mut_ptr());
        let nn = unsafe {
            embedded::mpn_hgcd_matrix_init(m.as_mut_ptr(), n as mp_size_t, mp.as_mut_ptr());
            match way {
                Way::Steps => {
                    let (s, mut size, mut any) = (n / 2 + 1, n, false);
                    // (Every size here is above s = n/2 + 1.)
                    loop {
                        match embedded::mpn_hgcd_step(size as mp_size_t, ap, bp, s as mp_size_t, m.as_mut_ptr(), tp) {
                            0 => break,
                            next => size = next as usize,
                        }
                        any = true;
                    }
                    if any { size } else { 0 }
                }
                Way::Gmp => embedded::mpn_hgcd(ap, bp, n as mp_size_t, m.as_mut_ptr(), tp) as usize,
                Way::From(t) => hgcd(ap, bp, n, m.as_mut_ptr(), tp, t),
            }
        };
        let m = unsafe { m.assume_init() };
        let entries = (0..4).map(|k| unsafe { std::slice::from_raw_parts(m.p[k / 2][k % 2], m.n as usize) }.to_vec()).collect();
        a.truncate(nn);
        b.truncate(nn);
        (nn, a, b, entries)
    }

    /// The recursion from every threshold, and GMP's own half-gcd with the
    /// hooked reduction, leave what GMP's steps alone leave: the same
    /// reduced numbers and the same matrix, from 20 to 1500 limbs, random
    /// numbers and numbers sharing their top limbs (long quotient runs).
    #[test]
    fn recursion_matches_gmps_steps() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut reduced = 0;
        for (k, n) in [20usize, 33, 64, 65, 100, 129, 200, 257, 399, 400, 401, 640, 1000, 1500].into_iter().enumerate() {
            let a: Vec<u64> = (0..n).map(|_| next()).collect();
            let mut b: Vec<u64> = (0..n).map(|_| next()).collect();
            if k % 3 == 2 {
                let top = n / 3;
                b[n - top..].copy_from_slice(&a[n - top..]);
                b[n - top] ^= 1;
            }
            let want = half_gcd(&a, &b, Way::Steps);
            for way in [Way::Gmp, Way::From(16), Way::From(32), Way::From(64), Way::From(100)] {
                let got = half_gcd(&a, &b, way);
                assert!(got == want, "n = {n}, {way:?}: the half-gcd differs from GMP's steps' (sizes {} and {})", got.0, want.0);
            }
            reduced += usize::from(want.0 > 0);
        }
        assert!(reduced >= 12, "only {reduced} of the half-gcds reduced anything");
    }
}
