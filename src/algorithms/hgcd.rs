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
//! Where the routing declines (`route::hgcd_shared`: sharing off, or a
//! product the GPU may take; `route::one_sharing`: another thread at
//! shareable work; or the helpers asleep), GMP's own routine runs, its
//! products through the product hooks as before.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's routine of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::route;
use crate::cpu;
use crate::gmp::{embedded, hgcd_matrix, mp_limb_t, mp_size_t};
use crate::helpers;
use crate::stats::{self, Op};

/// The products `x[k] * y[k]`, side by side in a new buffer (each of
/// `x[0].len() + y[0].len()` limbs), made at once on the caller and the
/// helpers where this thread may share now (`route::one_sharing`, the
/// helpers awake); None to leave the step to GMP. Each product counts in
/// the profile as one of GMP's internal products.
fn shared_products(x: &[&[mp_limb_t]], y: &[&[mp_limb_t]]) -> Option<Vec<mp_limb_t>> {
    route::one_sharing(|alone| {
        if !alone || !helpers::awake() {
            return None;
        }
        let len = x[0].len() + y[0].len();
        let mut out = vec![0; x.len() * len];
        let mut tasks: Vec<_> = out
            .chunks_mut(len)
            .zip(x.iter().zip(y))
            .map(|(o, (&a, &b))| move || stats::on_cpu(Op::Internal, a.len().min(b.len()), || cpu::mul(o, a, b)))
            .collect();
        let mut refs: Vec<&mut (dyn FnMut() + Send)> = tasks.iter_mut().map(|t| t as &mut (dyn FnMut() + Send)).collect();
        stats::shared(stats::Shared::HgcdStep, helpers::share(&mut refs));
        drop(tasks);
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
    if p == 0 || mn == 0 || p + mn >= n || !route::hgcd_shared(p.min(mn), p.max(mn)) {
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
    let Some(t) = shared_products(&[a, a, b, b], &[r[3], r[2], r[1], r[0]]) else { return gmp() };
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
}

/// GMP's `mpn_matrix22_mul`: `R = R M` for 2 x 2 matrices, R's entries `r`
/// of `rn` limbs (room for `rn + mn + 1`), M's `m` of `mn`; each new entry
/// has `rn + mn + 1` limbs. `gmp` is GMP's own routine.
pub unsafe fn matrix22_mul(r: [*mut mp_limb_t; 4], rn: usize, m: [*const mp_limb_t; 4], mn: usize, gmp: impl FnOnce()) {
    if rn == 0 || mn == 0 || !route::hgcd_shared(rn.min(mn), rn.max(mn)) {
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
    let Some(t) = shared_products(&[x[0], x[1], x[0], x[1], x[2], x[3], x[2], x[3]], &[y[0], y[2], y[1], y[3], y[0], y[2], y[1], y[3]]) else { return gmp() };
    for (k, &e) in r.iter().enumerate() {
        let (u, v) = (t[2 * k * len..].as_ptr(), t[(2 * k + 1) * len..].as_ptr());
        // SAFETY: each entry has room for len + 1 limbs.
        unsafe { *e.add(len) = embedded::mpn_add_n(e, u, v, len as mp_size_t) };
    }
}
