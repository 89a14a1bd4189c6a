//! Products: the one place a product goes to the GPU (counted, checked
//! against the CPU under `CUGMP_CHECK`, its failures finished on the CPU,
//! corrupted under `CUGMP_FAULT=mul`), for GMP's `mpn_mul`, `mpn_mul_n` and
//! `mpn_sqr`, for `mpz_mul` (src/algorithms/mpz.rs), for GMP's internal
//! products through the hooks (src/algorithms/hooks.rs), and for cuGMP's own
//! algorithms in GMP's place ([`own_product`]: radix conversion, square
//! roots).
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's function of the
//! same name takes them: limb arrays of the sizes given, and the overlaps
//! GMP allows. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::route::{self, cpu_only, cpu_reference, product_route, route_at};
use crate::config::{self, log, Fault};
use crate::cpu;
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::gpu::{self, Gpu, GpuError};
use crate::stats::{self, Op};

/// `CUGMP_FAULT=mul`: corrupt one bit of a product so the tests can prove they
/// catch a wrong result.
pub unsafe fn inject_product_fault(low_limb: *mut mp_limb_t, limbs: usize) {
    if limbs > 0 && config::get().fault == Some(Fault::Mul) {
        // SAFETY: callers pass the product's own first limb with limbs >= 1.
        unsafe { *low_limb ^= 1 };
    }
}

/// `out = {up, un} * {vp, vn}` (`out` of un + vn limbs, `un >= vn >= 1`, not
/// overlapping the operands) on the GPU when `op` is routed there; false if
/// the CPU must do it (`out` then holds anything).
pub unsafe fn product_on_gpu(op: Op, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, what: &str, out: &mut [mp_limb_t]) -> bool {
    product_route(op, un, vn).is_some_and(|g| unsafe { product_into(g, op, what, (up, un), (vp, vn), out) })
}

/// `out = {up, un} * {vp, vn}` on `g` (`out` of un + vn limbs, as
/// `product_with` takes the operands): false after a GPU failure (`out`
/// then holds anything). A product the device cannot hold is made from
/// halves: on all the devices at once where the process has several
/// (`product_over_devices`), else on `g` (`product_in_halves`). Products
/// one device holds stay on it: shared between two, they were slower,
/// bound by the host's copies (RESULTS.md, "Products over two devices").
pub unsafe fn product_into(g: &Gpu, op: Op, what: &str, u: (*const mp_limb_t, usize), v: (*const mp_limb_t, usize), out: &mut [mp_limb_t]) -> bool {
    unsafe { product_on(g, true, op, what, u, v, out) }
}

/// `product_into` on `g`, a product it cannot hold made from halves: with
/// `spread`, on all the devices at once where there are two or more, else
/// on `g`.
unsafe fn product_on(g: &Gpu, spread: bool, op: Op, what: &str, u: (*const mp_limb_t, usize), v: (*const mp_limb_t, usize), out: &mut [mp_limb_t]) -> bool {
    match unsafe { product_result(op, what, u, v, None, |u, v| g.mul_into(u, v, &mut *out).map(|()| &*out)) } {
        Ok(_) => true,
        Err(GpuError::TooLarge) if u.1.max(v.1) >= SPLIT_FROM => {
            let devices = if spread { gpu::all() } else { &[] };
            if devices.len() < 2 {
                return unsafe { product_in_halves(g, op, what, u, v, out) };
            }
            // `g` first: it takes the low half.
            let mut order: Vec<&Gpu> = vec![g];
            order.extend(devices.iter().filter(|d| d.ordinal != g.ordinal));
            unsafe { product_over_devices(&order, op, what, u, v, out) }
        }
        Err(_) => false,
    }
}

/// `out = u * v` (as `product_into` takes them) from products on several
/// devices at once: the longer operand cut in halves, the low half's
/// product on the first half of `devices`, the high half's on the rest, on
/// a thread of its own, each cut again while it has more than one device;
/// the upper added in at the half on the host's cores (`cpu::halves_by`).
/// Without a thread for the second half, both run here in turn.
unsafe fn product_over_devices(devices: &[&Gpu], op: Op, what: &str, u: (*const mp_limb_t, usize), v: (*const mp_limb_t, usize), out: &mut [mp_limb_t]) -> bool {
    if devices.len() < 2 {
        return unsafe { product_on(devices[0], false, op, what, u, v, out) };
    }
    let ((lp, ln), (sp, sn)) = if u.1 >= v.1 { (u, v) } else { (v, u) };
    // SAFETY: the caller's operands, of the lengths given.
    let (long, short) = unsafe { (std::slice::from_raw_parts(lp, ln), std::slice::from_raw_parts(sp, sn)) };
    let (first, second) = devices.split_at(devices.len() / 2);
    log!("{what}: {}x{} limbs shared among {} devices", u.1, v.1, devices.len());
    let make = |parts: Vec<cpu::Part<'_>>| {
        let mut parts = parts.into_iter();
        let (Some((o0, x0, y0)), Some((o1, x1, y1))) = (parts.next(), parts.next()) else { return None };
        // SAFETY (both halves): each part's operands are slices, its out
        // apart from them and from the other part's.
        let high = |o1: &mut [mp_limb_t]| unsafe { product_over_devices(second, op, what, (x1.as_ptr(), x1.len()), (y1.as_ptr(), y1.len()), o1) };
        let mut low = || unsafe { product_over_devices(first, op, what, (x0.as_ptr(), x0.len()), (y0.as_ptr(), y0.len()), o0) };
        // The high half's out, taken by its thread, or here if none starts.
        let high_out = std::sync::Mutex::new(Some(o1));
        let take = || high_out.lock().unwrap_or_else(|e| e.into_inner()).take();
        let both = std::thread::scope(|s| {
            let spawned = std::thread::Builder::new().name("cugmp-device".into()).spawn_scoped(s, || take().is_some_and(high));
            let low_done = low();
            match spawned {
                // A panic there (none is expected) counts as a failure.
                Ok(h) => h.join().unwrap_or(false) && low_done,
                Err(_) => take().is_some_and(high) && low_done,
            }
        });
        both.then_some(())
    };
    cpu::halves_by(out, long, short, ln.div_ceil(2), make).is_some()
}

/// The longer operand's limbs from which a product the device refused
/// for its size is made from halves; below, on the CPU (such a refusal
/// there comes from CUGMP_GPU_MEM_LIMIT or a device already full).
const SPLIT_FROM: usize = 1 << 16;

/// `out = u * v` (as `product_into` takes them) from two products on `g`:
/// the longer operand cut in halves, each half times the shorter made by
/// `product_on` on `g` (so split again while it cannot hold it), the upper
/// added in at the half. One level of Karatsuba's method instead (three
/// products, not four, at the next level) was slower: its differences and
/// sums on the host cost more than the fourth product saves (RESULTS.md,
/// "Products beyond one device plan").
unsafe fn product_in_halves(g: &Gpu, op: Op, what: &str, u: (*const mp_limb_t, usize), v: (*const mp_limb_t, usize), out: &mut [mp_limb_t]) -> bool {
    let ((lp, ln), (sp, sn)) = if u.1 >= v.1 { (u, v) } else { (v, u) };
    // SAFETY: the caller's operands, of the lengths given.
    let (long, short) = unsafe { (std::slice::from_raw_parts(lp, ln), std::slice::from_raw_parts(sp, sn)) };
    log!("{what}: {}x{} limbs too large for the device; made from halves", u.1, v.1);
    let make = |parts: Vec<cpu::Part<'_>>| {
        // SAFETY: each part's operands are slices, its out apart from them.
        parts.into_iter().all(|(o, x, y)| unsafe { product_on(g, false, op, what, (x.as_ptr(), x.len()), (y.as_ptr(), y.len()), o) }).then_some(())
    };
    cpu::halves_by(out, long, short, ln.div_ceil(2), make).is_some()
}

/// `{up, un} * {vp, vn}` (`un >= vn`), or with `modulus` Some(rn) that
/// product mod B^rn - 1 in min(rn, un + vn) limbs as GMP's mulmod_bnm1
/// gives it, by `compute` (a call of the GPU the product was routed to,
/// given the operands; the same limbs twice square), counted and, under
/// CUGMP_CHECK, checked against the CPU; None after a GPU failure, which is
/// counted and logged.
pub unsafe fn product_with<P: AsRef<[mp_limb_t]>>(
    op: Op,
    what: &str,
    u: (*const mp_limb_t, usize),
    v: (*const mp_limb_t, usize),
    modulus: Option<usize>,
    compute: impl FnOnce(&[mp_limb_t], &[mp_limb_t]) -> Result<P, GpuError>,
) -> Option<P> {
    unsafe { product_result(op, what, u, v, modulus, compute) }.ok()
}

/// `product_with` with the GPU's error.
unsafe fn product_result<P: AsRef<[mp_limb_t]>>(
    op: Op,
    what: &str,
    (up, un): (*const mp_limb_t, usize),
    (vp, vn): (*const mp_limb_t, usize),
    modulus: Option<usize>,
    compute: impl FnOnce(&[mp_limb_t], &[mp_limb_t]) -> Result<P, GpuError>,
) -> Result<P, GpuError> {
    let (u, v) = unsafe { (std::slice::from_raw_parts(up, un), std::slice::from_raw_parts(vp, vn)) };
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    match compute(u, v) {
        Ok(product) => {
            let took = start.elapsed();
            stats::gpu_call(op, un.min(vn), took);
            route::product_took(un, vn, took);
            if config::get().check {
                let want = cpu_reference(|| cpu::product(u, v, modulus));
                if want != product.as_ref() {
                    eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {un}x{vn} limbs differs from the CPU engine's; aborting");
                    std::process::abort();
                }
            }
            Ok(product)
        }
        Err(e) => {
            stats::fallback(op, e.fallback());
            log!("{what}: GPU failed ({e}); finishing on the CPU");
            Err(e)
        }
    }
}

/// The products `x[k] * y[k]` (every x[k] of one length, every y[k] of
/// another, none empty), side by side in a new buffer of `x[0].len() +
/// y[0].len()` limbs each, made at once on `g` (`Gpu::mul_many_into`: a
/// slot each, launched together) as GMP's internal products: each counted,
/// and under CUGMP_CHECK checked against the CPU. None after a GPU
/// failure, counted and logged; the caller then makes them on the CPU.
pub fn products_at_once(g: &Gpu, x: &[&[mp_limb_t]], y: &[&[mp_limb_t]], what: &str) -> Option<Vec<mp_limb_t>> {
    let (xn, yn) = (x[0].len(), y[0].len());
    assert!(x.len() == y.len() && xn > 0 && yn > 0 && x.iter().all(|a| a.len() == xn) && y.iter().all(|b| b.len() == yn), "{what}: products at once of one shape");
    let len = xn + yn;
    let mut out = vec![0; x.len() * len];
    let pairs: Vec<(&[u64], &[u64])> = x.iter().zip(y).map(|(&a, &b)| (a, b)).collect();
    let mut outs: Vec<&mut [u64]> = out.chunks_mut(len).collect();
    log!("{what}: {} products of {xn}x{yn} limbs at once", x.len());
    stats::gpu_attempt_starts();
    let start = std::time::Instant::now();
    if let Err(e) = g.mul_many_into(&pairs, &mut outs) {
        stats::fallback(Op::Internal, e.fallback());
        log!("{what}: GPU failed ({e}); finishing on the CPU");
        return None;
    }
    // Each product's share of the wait, for the profile and the device's
    // delay.
    let each = start.elapsed() / x.len() as u32;
    for _ in 0..x.len() {
        stats::gpu_call(Op::Internal, xn.min(yn), each);
    }
    route::product_took(xn, yn, each);
    if config::get().check {
        for (&(a, b), product) in pairs.iter().zip(out.chunks(len)) {
            let want = cpu_reference(|| cpu::product(a, b, None));
            if want != product {
                eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {xn}x{yn} limbs differs from the CPU engine's; aborting");
                std::process::abort();
            }
        }
    }
    Some(out)
}

/// `{rp, un+vn} = {up, un} * {vp, vn}` on the GPU when routed there; false if
/// the CPU must do it. `rp` may not overlap the operands (GMP's rule for mpn_mul).
unsafe fn mpn_product_on_gpu(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, what: &str) -> bool {
    let out = unsafe { std::slice::from_raw_parts_mut(rp, un + vn) };
    unsafe { product_on_gpu(Op::Mul, up, un, vp, vn, what, out) }
}

/// `out = a * b` (`out` of a.len() + b.len() limbs, both non-empty, none
/// overlapping; the same slice twice squares) for cuGMP's own algorithms in
/// GMP's place (radix conversion, src/algorithms/radix/to_digits.rs, whose products each stand
/// for a whole level's small ones laid side by side; square roots,
/// src/algorithms/sqrt.rs): routed as GMP's internal products by the longer operand's
/// size (its work), on the GPU there and else, or after a GPU failure,
/// GMP's `mpn_mul`. `what` names it in the log.
pub fn own_product(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t], what: &str) {
    let (u, v) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    assert!(!v.is_empty() && out.len() == u.len() + v.len(), "{what}: {} x {} limbs into {}", u.len(), v.len(), out.len());
    // SAFETY: u and v are slices of the lengths given.
    let done = route_at(Op::Internal, u.len(), true).is_some_and(|g| unsafe { product_into(g, Op::Internal, what, (u.as_ptr(), u.len()), (v.as_ptr(), v.len()), &mut *out) });
    if !done {
        stats::on_cpu(Op::Internal, v.len(), || cpu::mul(out, u, v));
    }
    // SAFETY: out's own first limb, out non-empty.
    unsafe { inject_product_fault(out.as_mut_ptr(), out.len()) };
}

/// Whether a product whose shorter operand has `n` limbs goes straight to
/// the embedded GMP (`route::cpu_only`); the exports ask before the
/// routed `mpn_mul`, `mpn_mul_n` and `mpn_sqr` below.
#[inline(always)]
pub fn mpn_on_cpu(n: mp_size_t) -> bool {
    cpu_only(Op::Mul, n as usize)
}

pub unsafe fn mpn_mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> mp_limb_t {
    unsafe {
        if !mpn_product_on_gpu(rp, up, un as usize, vp, vn as usize, "mpn_mul") {
            stats::on_cpu(Op::Mul, vn as usize, || embedded::mpn_mul(rp, up, un, vp, vn));
        }
        inject_product_fault(rp, (un + vn) as usize);
        *rp.add((un + vn) as usize - 1)
    }
}

pub unsafe fn mpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, vp, n as usize, "mpn_mul_n") {
            stats::on_cpu(Op::Mul, n as usize, || embedded::mpn_mul_n(rp, up, vp, n));
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

pub unsafe fn mpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, up, n as usize, "mpn_sqr") {
            stats::on_cpu(Op::Mul, n as usize, || embedded::mpn_sqr(rp, up, n));
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

