//! The `mpz` functions cuGMP defines itself: memory management as GMP 6.3
//! does it (src/gmp/mpz.rs), arithmetic through src/algorithms (at once to
//! the embedded GMP below the GPU's sizes: `routed!`).

use super::{boundary, routed};
use crate::algorithms::{mpz, text};
use crate::cpu;
use crate::gmp::{self, embedded, mp_bitcnt_t, mpz_ptr, mpz_srcptr};
use crate::gpu::linear::{Logic, Shift};
use crate::stats::Op;
use libc::{c_char, c_int, c_long, c_ulong};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_init(x: mpz_ptr) {
    boundary!("mpz_init", unsafe { gmp::mpz::init(x) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_init2(x: mpz_ptr, bits: mp_bitcnt_t) {
    boundary!("mpz_init2", unsafe { gmp::mpz::init2(x, bits) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_clear(x: mpz_ptr) {
    boundary!("mpz_clear", unsafe { gmp::mpz::clear(x) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    routed!("mpz_set_str", text::set_str_on_cpu(s) => embedded::mpz_set_str(rop, s, base), text::set_str(rop, s, base))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_fac_ui(r: mpz_ptr, n: libc::c_ulong) {
    routed!("mpz_fac_ui", mpz::fac_ui_on_cpu(n) => embedded::mpz_fac_ui(r, n), mpz::fac_ui(r, n))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_bin_uiui(r: mpz_ptr, n: libc::c_ulong, k: libc::c_ulong) {
    routed!("mpz_bin_uiui", mpz::bin_uiui_on_cpu(n, k) => embedded::mpz_bin_uiui(r, n, k), mpz::bin_uiui(r, n, k))
}

/// `mp_set_memory_functions` (kept with the `mpz` storage it serves): a
/// NULL puts back cuGMP's default for that function, not GMP's plain one
/// (src/gmp/memory.rs, `set_functions`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmp_set_memory_functions(a: Option<embedded::AllocFn>, r: Option<embedded::ReallocFn>, f: Option<embedded::FreeFn>) {
    boundary!("mp_set_memory_functions", unsafe { gmp::memory::set_functions(a, r, f) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    boundary!("mpz_get_str", unsafe { text::get_str(s, base, op) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_add", mpz::sum_on_cpu(Op::Add, a, b) => cpu::mpz_add(r, a, b), mpz::add(r, a, b))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_sub", mpz::sum_on_cpu(Op::Sub, a, b) => cpu::mpz_sub(r, a, b), mpz::sub(r, a, b))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_mul", mpz::sum_on_cpu(Op::Mul, a, b) => cpu::mpz_mul(r, a, b), mpz::mul(r, a, b))
}

// Not routed: the GPU has no path for these; the CPU engine's (it cannot
// panic) for operands of a few limbs, else GMP's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_set(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { cpu::mpz_set(r, a) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_neg(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { cpu::mpz_neg(r, a) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_abs(r: mpz_ptr, a: mpz_srcptr) {
    unsafe { cpu::mpz_abs(r, a) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { cpu::mpz_mul_ui(r, a, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul_si(r: mpz_ptr, a: mpz_srcptr, v: c_long) {
    unsafe { cpu::mpz_mul_si(r, a, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_add_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { cpu::mpz_add_ui(r, a, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_sub_ui(r: mpz_ptr, a: mpz_srcptr, v: c_ulong) {
    unsafe { cpu::mpz_sub_ui(r, a, v) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    routed!("mpz_mul_2exp", mpz::unary_on_cpu(Op::Shift, a) => embedded::mpz_mul_2exp(r, a, n), mpz::shift(Shift::Left, r, a, n))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_tdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    routed!("mpz_tdiv_q_2exp", mpz::unary_on_cpu(Op::Shift, a) => embedded::mpz_tdiv_q_2exp(r, a, n), mpz::shift(Shift::RightTrunc, r, a, n))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_fdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    routed!("mpz_fdiv_q_2exp", mpz::unary_on_cpu(Op::Shift, a) => embedded::mpz_fdiv_q_2exp(r, a, n), mpz::shift(Shift::RightFloor, r, a, n))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_cdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    routed!("mpz_cdiv_q_2exp", mpz::unary_on_cpu(Op::Shift, a) => embedded::mpz_cdiv_q_2exp(r, a, n), mpz::shift(Shift::RightCeil, r, a, n))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_and(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_and", mpz::logic_on_cpu(Logic::And, a, b) => embedded::mpz_and(r, a, b), mpz::logic(Logic::And, r, a, b))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_ior(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_ior", mpz::logic_on_cpu(Logic::Ior, a, b) => embedded::mpz_ior(r, a, b), mpz::logic(Logic::Ior, r, a, b))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_xor(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    routed!("mpz_xor", mpz::logic_on_cpu(Logic::Xor, a, b) => embedded::mpz_xor(r, a, b), mpz::logic(Logic::Xor, r, a, b))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_com(r: mpz_ptr, a: mpz_srcptr) {
    routed!("mpz_com", mpz::unary_on_cpu(Op::Com, a) => embedded::mpz_com(r, a), mpz::com(r, a))
}
