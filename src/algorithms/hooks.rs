//! The targets of the hooks into the embedded GMP (src/abi/hooks.rs): GMP's
//! products (`mpn_mul`, `mpn_mul_n`, `mpn_sqr` as its other routines call
//! them, `mpn_nussbaumer_mul`), its products mod B^rn - 1 and the
//! sizes it takes for them, its radix conversion and its square root. Each
//! computes on the GPU, or by cuGMP's own algorithm, where the routing says
//! so, and else calls GMP's original (`on_cpu`): at once below the GPU's
//! size (`route::cpu_only`).
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's routine of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::product::{inject_product_fault, product_into, product_on_gpu, product_with};
use super::route::{cpu_only, gpu_wanted, internal_sized_for_gpu, product_route, product_size, quotient_on_gpu, root_on_gpu, UNBALANCED_GAIN};
use super::{quotient, radix, sqrt};
use crate::config::log;
use crate::gmp::{mp_limb_t, mp_size_t};
use crate::stats::{self, Op};
use crate::{cpu, gpu, parallel};
use libc::{c_int, size_t};

/// Whether GMP's own `mpn_mul` (`mpn_mul_n`, `mpn_sqr`) of `un` by `vn`
/// limbs (`un >= vn`) stays GMP's with nothing else to do: its
/// `product_size` is below the internal products' threshold. First one
/// load and a compare on UNBALANCED_GAIN times the shorter side (the most
/// `product_size` can be), which GMP's `mpz_mul` meets for every product of
/// two limbs or more; only above it the size itself.
#[inline(always)]
pub fn internal_mpn_on_cpu(un: mp_size_t, vn: mp_size_t) -> bool {
    cpu_only(Op::Internal, (vn as usize).saturating_mul(UNBALANCED_GAIN)) || cpu_only(Op::Internal, product_size(un as usize, vn as usize))
}

/// GMP's `mpn_mul`, `mpn_mul_n` and `mpn_sqr` as its other routines call
/// them (`{rp, un+vn} = {up, un} * {vp, vn}`, `un >= vn > 0`, `vp` = `up`
/// for a square): GMP's half-gcd, division and powm call them at every
/// size, below its FFT product too, where nothing else reaches them. On the
/// GPU when routed there (by `product_size`), else `on_cpu` (GMP's own).
/// `CUGMP_FAULT=mul` leaves these alone: GMP's small and medium products
/// sit inside its loops (half-gcd, division's corrections), which one
/// wrong product at every size kept from ending (a differential test under
/// the fault ran for minutes); the exported products and GMP's large ones
/// carry the planted fault.
pub unsafe fn internal_mpn_product(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, on_cpu: impl FnOnce()) {
    let out = unsafe { std::slice::from_raw_parts_mut(rp, un + vn) };
    if !unsafe { product_on_gpu(Op::Internal, up, un, vp, vn, "mpn_mul in GMP", out) } {
        stats::on_cpu(Op::Internal, vn, on_cpu);
    }
}

/// GMP's `mpn_nussbaumer_mul` (its FFT product, which its `mpn_mul`,
/// `mpn_mul_n` and `mpn_sqr` call above MUL_FFT_THRESHOLD):
/// `{pp, an+bn} = {ap, an} * {bp, bn}`, `an >= bn > 0`, on the GPU when
/// routed there, else `on_cpu` (GMP's own routine).
pub unsafe fn internal_product(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize, on_cpu: impl FnOnce()) {
    if cpu_only(Op::Internal, product_size(an, bn)) {
        return on_cpu();
    }
    let out = unsafe { std::slice::from_raw_parts_mut(pp, an + bn) };
    if !unsafe { product_on_gpu(Op::Internal, ap, an, bp, bn, "mpn_nussbaumer_mul", out) } {
        stats::on_cpu(Op::Internal, bn, on_cpu);
    }
    unsafe { inject_product_fault(pp, an + bn) };
}

/// The size (`product_size`) from which GMP's products mod B^rn - 1 with
/// wrap-around are cyclic convolutions on the GPU, and GMP asks for sizes
/// that make them one (`mulmod_bnm1_next_size`). Below it a cyclic
/// convolution goes through the general path's twenty driver calls, and
/// from 1024 limbs, where GMP's internal products go to the GPU, it made
/// GMP's cube root of 1024 to 4000 limbs 1.4x to 1.7x slower; with a
/// slot's whole product (one launch) folded on the host there the root
/// kept its speed. Whole products at GMP's sizes from 2048 to 4000 limbs
/// made tdiv_qr, sqrt and get_str slower than cyclic ones did (RESULTS.md,
/// "GMP's internal products from 1024 limbs").
const CYCLIC_FROM: usize = 2048;

/// GMP's `mpn_mulmod_bnm1` (and `mpn_sqrmod_bnm1` with b = a):
/// `{rp, min(rn, an+bn)} = {ap, an} * {bp, bn} mod (B^rn - 1)`,
/// `0 < bn <= an <= rn`, with GMP's representation: zero only when an
/// operand is zero, the class of zero otherwise as B^rn - 1. On the GPU when
/// routed there, else `on_cpu`: with no wrap-around (an + bn <= rn) the
/// product; from CYCLIC_FROM where 2 rn points are one transform
/// (`mulmod_bnm1_next_size` makes GMP ask for such rn) one cyclic
/// convolution; else the full product (below 65,536 limbs on a small
/// product's slot, src/gpu/ntt/small.rs) folded once.
#[allow(clippy::too_many_arguments)]
pub unsafe fn internal_mulmod_bnm1(rp: *mut mp_limb_t, rn: usize, ap: *const mp_limb_t, an: usize, bp: *const mp_limb_t, bn: usize, on_cpu: impl FnOnce()) {
    if cpu_only(Op::Internal, product_size(an, bn)) {
        return on_cpu();
    }
    let out = unsafe { std::slice::from_raw_parts_mut(rp, rn.min(an + bn)) };
    let what = "mpn_mulmod_bnm1";
    let (a, b) = ((ap, an), (bp, bn));
    let done = product_route(Op::Internal, an, bn).is_some_and(|g| unsafe {
        if an + bn <= rn {
            product_into(g, Op::Internal, what, a, b, out)
        } else if product_size(an, bn) >= CYCLIC_FROM && gpu::ntt::cyclic_shape(rn).is_some() {
            product_with(Op::Internal, what, a, b, Some(rn), |u, v| g.mulmod_bnm1_into(u, v, out).map(|()| out)).is_some()
        } else {
            // The full product in a buffer of its own (Gpu::mul: not zeroed first).
            product_with(Op::Internal, what, a, b, None, |u, v| g.mul(u, v)).map(|p| cpu::fold_mod_bnm1(&p, out)).is_some()
        }
    });
    if !done {
        if an + bn <= rn && cpu::gmp_mulmod_bnm1_size(an + bn) < rn {
            // No wrap-around, at a size GMP would not have taken (sized for
            // the GPU, which left it to the CPU): GMP's mulmod_bnm1 at its
            // own size is the same product. GMP's gcd at 10^4 limbs with
            // its products at the GPU's sizes on the CPU ran at 0.81x to
            // 0.92x GMP's speed, at GMP's sizes where they do not wrap 0.96x
            // to 0.97x (RESULTS.md, "Operations with no GPU path of their own").
            stats::on_cpu(Op::Internal, bn, || unsafe { cpu::product_by_mulmod_bnm1(rp, ap, an, bp, bn) });
        } else {
            stats::on_cpu(Op::Internal, bn, on_cpu);
        }
    }
    unsafe { inject_product_fault(rp, rn.min(an + bn)) };
}

/// GMP's `mpn_mulmod_bnm1_next_size`: the modulus size (limbs) GMP's
/// algorithms take for a product mod B^rn - 1 of about `n` limbs; `gmp` is
/// GMP's own answer. Where GMP's internal products of `n` limbs go to the
/// GPU, from CYCLIC_FROM: the smallest size from `gmp` up whose 2 rn
/// points are one transform,
/// so that internal_mulmod_bnm1 makes one cyclic convolution of 2 rn points
/// where it would otherwise transform the whole product (up to 4 rn points)
/// and fold it. At most 1.5 gmp, so GMP's own conditions (e.g. 2n > rn in
/// redc_n) hold. Monotone in `n`, as GMP needs (it sizes scratch for the
/// largest n and then asks for smaller ones): GMP's answer is, so is the
/// smallest cyclic size above it, and the GPU takes every n from a
/// threshold up; the GPU's health after start does not enter, and a device
/// still being opened counts as there, so the answer for an n can change
/// within a process only once, downwards, if the device turns out absent.
pub fn mulmod_bnm1_next_size(n: usize, gmp: usize) -> usize {
    if cpu_only(Op::Internal, n) || n < CYCLIC_FROM {
        return gmp;
    }
    match internal_sized_for_gpu(n).then(|| gpu::ntt::cyclic_size(gmp)).flatten() {
        Some(rn) => rn,
        None => gmp,
    }
}

/// GMP's `mpn_get_str` (`s`, `base`, `{up, un}` as GMP takes them): by
/// divisions a whole level at a time (src/algorithms/radix/to_digits.rs) where `levels_on_gpu`
/// says so, else `on_cpu` (GMP's own).
pub unsafe fn internal_get_str(s: *mut u8, base: c_int, up: *mut mp_limb_t, un: mp_size_t, on_cpu: impl FnOnce() -> size_t) -> size_t {
    let n = usize::try_from(un).unwrap_or(0);
    if cpu_only(Op::GetStr, n) {
        return on_cpu();
    }
    let Some(levels) = radix::levels_on_gpu(n, base) else {
        return stats::on_cpu(Op::GetStr, n, on_cpu);
    };
    log!("mpn_get_str {n} limbs base {base}: {} leaves", 1usize << levels);
    // SAFETY: GMP's contract: {up, un} readable, s holds the digits.
    let leaves = radix::split(unsafe { std::slice::from_raw_parts(up, n) }, base as u32, levels);
    let len = leaves.digit_count();
    // SAFETY: s has room for every digit of the number (GMP's own
    // mpn_get_str writes as many), and overlaps nothing of ours.
    leaves.write(unsafe { std::slice::from_raw_parts_mut(s, len) }, |d| d);
    len
}

/// GMP's `mpn_set_str` (`rp`, `{s, len}`, `base` as GMP takes them): by
/// products a whole level at a time (src/algorithms/radix/from_digits.rs)
/// where `set_str_levels_on_gpu` says so and the first digit is nonzero
/// (GMP's result is then trimmed, as this one always is), else `on_cpu`
/// (GMP's own).
pub unsafe fn internal_set_str(rp: *mut mp_limb_t, s: *const u8, len: size_t, base: c_int, on_cpu: impl FnOnce() -> mp_size_t) -> mp_size_t {
    let base = u32::try_from(base).unwrap_or(0);
    let n = radix::limbs_of_digits(len, base);
    if cpu_only(Op::SetStr, n) {
        return on_cpu();
    }
    // SAFETY: GMP's contract: {s, len} readable, len >= 1.
    let digits = unsafe { std::slice::from_raw_parts(s, len) };
    let levels = radix::set_str_levels_on_gpu(len, base).filter(|_| digits.first().is_some_and(|&d| d != 0));
    let Some(levels) = levels else {
        return stats::on_cpu(Op::SetStr, n, on_cpu);
    };
    log!("mpn_set_str {len} digits base {base}: {} leaves", 1usize << levels);
    let x = radix::number(digits, base, levels);
    // Only digits that are not digits could make more than rp's room.
    let x = &x[..x.len().min(radix::room_for_digits(len, base))];
    // SAFETY: rp holds room_for_digits limbs (GMP's contract) and overlaps
    // nothing of ours.
    parallel::copy_limbs(unsafe { std::slice::from_raw_parts_mut(rp, x.len()) }, x);
    x.len() as mp_size_t
}

/// Whether GMP's division of anything by `{dp, dn}` stays GMP's with
/// nothing else to do: the divisor is below the quotients' threshold. One
/// load and a compare: GMP's `mpz_tdiv_qr` and its kin call it for every
/// division.
#[inline(always)]
pub fn quotient_on_cpu(dn: mp_size_t) -> bool {
    cpu_only(Op::Div, dn as usize)
}

/// GMP's `mpn_tdiv_qr` with `qxn` = 0 (`{qp, nn-dn+1}`, `{rp, dn}` the
/// quotient and remainder of `{np, nn}` by `{dp, dn}`, `rp` possibly `np`)
/// and `mpn_div_q` (`rp` NULL: the quotient alone): on device-resident
/// numbers where the routing sends the quotient there
/// (src/algorithms/quotient.rs), else `on_cpu` (GMP's own).
#[allow(clippy::too_many_arguments)]
pub unsafe fn internal_quotient(qp: *mut mp_limb_t, rp: *mut mp_limb_t, np: *const mp_limb_t, nn: usize, dp: *const mp_limb_t, dn: usize, what: &str, on_cpu: impl FnOnce()) {
    // SAFETY: GMP's contract: {np, nn} and {dp, dn} readable, nn >= dn >= 1.
    let (n, d) = unsafe { (std::slice::from_raw_parts(np, nn), std::slice::from_raw_parts(dp, dn)) };
    let Some((q_limbs, d_limbs)) = quotient::sizes(n, d) else {
        return stats::on_cpu(Op::Div, dn, on_cpu);
    };
    let Some(g) = quotient_on_gpu(q_limbs, d_limbs) else {
        return stats::on_cpu(Op::Div, dn, on_cpu);
    };
    let Some(found) = quotient::divide_on_device(g, n, d, what) else {
        return stats::on_cpu(Op::Div, dn, on_cpu);
    };
    // SAFETY: qp holds nn - dn + 1 limbs, rp (when given) dn; N and D,
    // which they may overlap (rp = np), are read no more.
    unsafe {
        parallel::copy_limbs(std::slice::from_raw_parts_mut(qp, found.q.len()), &found.q);
        if !rp.is_null() {
            parallel::copy_limbs(std::slice::from_raw_parts_mut(rp, found.r.len()), &found.r);
        }
    }
}

/// Whether a square root of `nn` limbs stays with GMP without further ado
/// (else `internal_sqrtrem`): one compare, so that the export's fast path
/// saves no registers for the panic boundary (MPFR's `mpfr_sqrt` and GMP's
/// `mpz_perfect_square_p` reach it at every size).
#[inline(always)]
pub fn sqrt_on_cpu(nn: mp_size_t) -> bool {
    cpu_only(Op::Sqrt, usize::try_from(nn).unwrap_or(0))
}

/// GMP's `mpn_sqrtrem` (`sp`, `rp`, `{np, nn}` as GMP takes them, `rp`
/// NULL or `np` or apart): where GMP's internal products of `nn` limbs go
/// to the GPU, by Newton's iteration (src/algorithms/sqrt.rs), else `on_cpu` (GMP's own,
/// also if the estimate were ever refused).
pub unsafe fn internal_sqrtrem(sp: *mut mp_limb_t, rp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t, on_cpu: impl FnOnce() -> mp_size_t) -> mp_size_t {
    let n = usize::try_from(nn).unwrap_or(0);
    if n < sqrt::MIN_LIMBS || !gpu_wanted(Op::Sqrt, n) || !root_on_gpu(n) {
        return stats::on_cpu(Op::Sqrt, n, on_cpu);
    }
    // SAFETY: GMP's contract: {np, nn} readable, its top limb nonzero.
    let Some(found) = sqrt::root_and_remainder(unsafe { std::slice::from_raw_parts(np, n) }) else {
        log!("mpn_sqrtrem {n} limbs: Newton's estimate refused; GMP's root instead");
        return stats::on_cpu(Op::Sqrt, n, on_cpu);
    };
    let (root, remainder) = (found.root(), found.remainder());
    // SAFETY: sp holds ceil(nn/2) limbs (root has exactly that many), rp
    // (when given) nn limbs, and the remainder is at most root + 1 limbs;
    // np is no longer read. The copies go on threads where they are large
    // (GMP's result limbs are often fresh memory, its page faults theirs).
    unsafe {
        parallel::copy_limbs(std::slice::from_raw_parts_mut(sp, root.len()), root);
        if rp.is_null() {
            return mp_size_t::from(!remainder.is_empty());
        }
        parallel::copy_limbs(std::slice::from_raw_parts_mut(rp, remainder.len()), remainder);
    }
    remainder.len() as mp_size_t
}

