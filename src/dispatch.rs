//! The dispatcher: every operation cuGMP defines passes here once, and here it
//! is decided whether the CPU engine (embedded GMP) or the GPU engine computes
//! it, from the operand size, the measured crossover, `CUGMP_GPU` and the GPU's
//! health. A GPU failure of any kind finishes the operation on the CPU.
//!
//! Also here, because every engine's result passes through: fault injection
//! (`CUGMP_FAULT`) and the run-time check against the CPU (`CUGMP_CHECK`).

use crate::abi::{self, mp_bitcnt_t, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::config::{self, log, Fault, GpuMode};
use crate::{cpu, gpu};
use libc::{c_char, c_int};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    SetStr,
    GetStr,
    Add,
    Sub,
    Mul,
    Shift,
    And,
    Ior,
    Xor,
    Com,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::SetStr => "set_str",
            Op::GetStr => "get_str",
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Shift => "shift",
            Op::And => "and",
            Op::Ior => "ior",
            Op::Xor => "xor",
            Op::Com => "com",
        }
    }

    pub const ALL: [Op; 10] =
        [Op::SetStr, Op::GetStr, Op::Add, Op::Sub, Op::Mul, Op::Shift, Op::And, Op::Ior, Op::Xor, Op::Com];
}

/// Operand size (limbs) from which `CUGMP_GPU=auto` sends `op` to the GPU, or
/// None where the GPU has not yet been measured to beat GMP on the ABI path
/// (operands in host memory). Every entry must come from a measurement on the
/// GPU machine, recorded in RESULTS.md.
pub fn auto_threshold(op: Op) -> Option<usize> {
    match op {
        // Products, on the shorter operand's size. Measured on an H200 against
        // GMP 6.3 on its host (RESULTS.md, 2026-11-21, benches/mul.rs): n x n
        // at 1024 limbs the GPU took 2x GMP's time, at 4096 limbs 0.4x
        // (2.5x faster). Unbalanced products with a short side below this
        // stay on GMP, whose cost there is small.
        Op::Mul => Some(4096),
        // The `and` kernel is O(n) work on O(n) bytes copied over PCIe; not
        // yet measured to win end to end.
        Op::And => None,
        _ => None,
    }
}

/// Operations completed on the GPU by this process (tests use it to prove the
/// GPU did the work, not the CPU fallback).
pub static GPU_COMPLETED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn count_gpu_completion() {
    GPU_COMPLETED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

enum Route {
    Cpu,
    Gpu(&'static gpu::Gpu),
}

/// Decide where `op` on operands of `limbs` limbs runs. `gpu_capable` says
/// whether the GPU engine implements this case at all.
fn route(op: Op, limbs: usize, gpu_capable: bool) -> Route {
    let cfg = config::get();
    let wants_gpu = gpu_capable
        && match cfg.gpu {
            GpuMode::Off => false,
            GpuMode::Force => true,
            GpuMode::Auto => auto_threshold(op).is_some_and(|t| limbs >= t),
        };
    let chosen = if wants_gpu { gpu::get().map(Route::Gpu) } else { None };
    let route = chosen.unwrap_or(Route::Cpu);
    log!("{} {} limbs -> {}", op.name(), limbs, if matches!(route, Route::Gpu(_)) { "gpu" } else { "cpu" });
    route
}

/// `CUGMP_FAULT=mul`: corrupt one bit of a product so the tests can prove they
/// catch a wrong result.
fn inject_product_fault(low_limb: *mut mp_limb_t, limbs: usize) {
    if limbs > 0 && config::get().fault == Some(Fault::Mul) {
        // SAFETY: callers pass the product's own first limb with limbs >= 1.
        unsafe { *low_limb ^= 1 };
    }
}

pub unsafe fn set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    route(Op::SetStr, 0, false);
    unsafe { cpu::mpz_set_str(rop, s, base) }
}

pub unsafe fn get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    route(Op::GetStr, unsafe { abi::limbs(op) }.len(), false);
    unsafe { cpu::mpz_get_str(s, base, op) }
}

pub unsafe fn add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let n = unsafe { abi::limbs(a).len().max(abi::limbs(b).len()) };
    route(Op::Add, n, false);
    unsafe { cpu::mpz_add(r, a, b) }
}

pub unsafe fn sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let n = unsafe { abi::limbs(a).len().max(abi::limbs(b).len()) };
    route(Op::Sub, n, false);
    unsafe { cpu::mpz_sub(r, a, b) }
}

pub unsafe fn mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let (la, lb) = unsafe { (abi::limbs(a), abi::limbs(b)) };
    let negative = unsafe { (abi::size(a) < 0) != (abi::size(b) < 0) };
    let done = match route(Op::Mul, la.len().min(lb.len()), !la.is_empty() && !lb.is_empty()) {
        Route::Gpu(g) => {
            // Same limbs (a == b, or equal pointers) square: one transform.
            let product = if std::ptr::eq(la, lb) { g.mul(la, la) } else { g.mul(la, lb) };
            match product {
                Ok(p) => {
                    if config::get().check {
                        unsafe { check_against_cpu("mpz_mul", &p, negative, |t| cpu::mpz_mul(t, a, b)) };
                    }
                    unsafe { abi::store(r, &p, negative) };
                    count_gpu_completion();
                    true
                }
                Err(e) => {
                    log!("mul: GPU failed ({e}); finishing on the CPU");
                    false
                }
            }
        }
        Route::Cpu => false,
    };
    unsafe {
        if !done {
            cpu::mpz_mul(r, a, b);
        }
        inject_product_fault((*r)._mp_d, abi::limbs(r).len());
    }
}

/// `{rp, un+vn} = {up, un} * {vp, vn}` on the GPU when routed there; false if
/// the CPU must do it. `rp` may not overlap the operands (GMP's rule for mpn_mul).
unsafe fn mpn_product_on_gpu(rp: *mut mp_limb_t, up: *const mp_limb_t, un: usize, vp: *const mp_limb_t, vn: usize, what: &str) -> bool {
    let Route::Gpu(g) = route(Op::Mul, un.min(vn), un > 0 && vn > 0) else { return false };
    let (u, v) = unsafe { (std::slice::from_raw_parts(up, un), std::slice::from_raw_parts(vp, vn)) };
    let product = if std::ptr::eq(u, v) { g.mul(u, u) } else { g.mul(u, v) };
    match product {
        Ok(p) => {
            if config::get().check {
                let mut want = vec![0; un + vn];
                unsafe { cpu::mpn_mul(want.as_mut_ptr(), up, un as mp_size_t, vp, vn as mp_size_t) };
                if want != p {
                    eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {un}x{vn} limbs differs from the CPU engine's; aborting");
                    std::process::abort();
                }
            }
            unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), rp, un + vn) };
            count_gpu_completion();
            true
        }
        Err(e) => {
            log!("{what}: GPU failed ({e}); finishing on the CPU");
            false
        }
    }
}

pub unsafe fn mpn_mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> mp_limb_t {
    unsafe {
        if !mpn_product_on_gpu(rp, up, un as usize, vp, vn as usize, "mpn_mul") {
            cpu::mpn_mul(rp, up, un, vp, vn);
        }
        inject_product_fault(rp, (un + vn) as usize);
        *rp.add((un + vn) as usize - 1)
    }
}

pub unsafe fn mpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, vp, n as usize, "mpn_mul_n") {
            cpu::mpn_mul_n(rp, up, vp, n);
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

pub unsafe fn mpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    unsafe {
        if !mpn_product_on_gpu(rp, up, n as usize, up, n as usize, "mpn_sqr") {
            cpu::mpn_sqr(rp, up, n);
        }
        inject_product_fault(rp, 2 * n as usize);
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Shift {
    Left,
    RightTrunc,
    RightFloor,
    RightCeil,
}

pub unsafe fn shift(kind: Shift, r: mpz_ptr, a: mpz_srcptr, bits: mp_bitcnt_t) {
    route(Op::Shift, unsafe { abi::limbs(a) }.len(), false);
    unsafe {
        match kind {
            Shift::Left => cpu::mpz_mul_2exp(r, a, bits),
            Shift::RightTrunc => cpu::mpz_tdiv_q_2exp(r, a, bits),
            Shift::RightFloor => cpu::mpz_fdiv_q_2exp(r, a, bits),
            Shift::RightCeil => cpu::mpz_cdiv_q_2exp(r, a, bits),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Logic {
    And,
    Ior,
    Xor,
}

pub unsafe fn logic(kind: Logic, r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    let (sa, sb) = unsafe { (abi::size(a), abi::size(b)) };
    match kind {
        Logic::And => {
            // The GPU engine does non-negative AND so far (two's-complement
            // cases are the CPU's until the logic kernels cover them).
            let n = sa.unsigned_abs().min(sb.unsigned_abs()) as usize;
            if let Route::Gpu(g) = route(Op::And, n, sa >= 0 && sb >= 0 && n > 0) {
                match unsafe { and_on_gpu(g, r, a, b, n) } {
                    Ok(()) => return,
                    Err(e) => log!("and: GPU failed ({e}); finishing on the CPU"),
                }
            }
            unsafe { cpu::mpz_and(r, a, b) }
        }
        Logic::Ior => {
            route(Op::Ior, sa.unsigned_abs().max(sb.unsigned_abs()) as usize, false);
            unsafe { cpu::mpz_ior(r, a, b) }
        }
        Logic::Xor => {
            route(Op::Xor, sa.unsigned_abs().max(sb.unsigned_abs()) as usize, false);
            unsafe { cpu::mpz_xor(r, a, b) }
        }
    }
}

/// Non-negative `a & b`: the low `n = min(|a|, |b|)` limbs, limb by limb.
unsafe fn and_on_gpu(g: &gpu::Gpu, r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr, n: usize) -> Result<(), gpu::GpuError> {
    let (la, lb) = unsafe { (&abi::limbs(a)[..n], &abi::limbs(b)[..n]) };
    let result = g.and_n(la, lb)?;
    if config::get().check {
        // Before storing: `r` may be `a` or `b`.
        unsafe { check_against_cpu("mpz_and", &result, false, |t| cpu::mpz_and(t, a, b)) };
    }
    unsafe { abi::store(r, &result, false) };
    count_gpu_completion();
    Ok(())
}

pub unsafe fn com(r: mpz_ptr, a: mpz_srcptr) {
    route(Op::Com, unsafe { abi::limbs(a) }.len(), false);
    unsafe { cpu::mpz_com(r, a) }
}

/// `CUGMP_CHECK=1`: compute the same operation with the CPU engine into a
/// temporary and abort with a clear message if the GPU's result differs.
unsafe fn check_against_cpu(what: &str, magnitude: &[mp_limb_t], negative: bool, reference: impl FnOnce(mpz_ptr)) {
    let mut n = magnitude.len();
    while n > 0 && magnitude[n - 1] == 0 {
        n -= 1;
    }
    let mut t = std::mem::MaybeUninit::<abi::__mpz_struct>::uninit();
    unsafe {
        cpu::mpz_init(t.as_mut_ptr());
        reference(t.as_mut_ptr());
        let same = abi::limbs(t.as_ptr()) == &magnitude[..n] && (abi::size(t.as_ptr()) < 0) == (negative && n > 0);
        cpu::mpz_clear(t.as_mut_ptr());
        if !same {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's {what} of {n} limbs differs from the CPU engine's; aborting");
            std::process::abort();
        }
    }
}
