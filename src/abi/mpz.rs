//! The `mpz` functions cuGMP defines itself: memory management as GMP 6.3
//! does it (src/gmp/mpz.rs), arithmetic through src/algorithms.

use super::boundary;
use crate::algorithms::{mpz, text};
use crate::gmp::{self, mp_bitcnt_t, mpz_ptr, mpz_srcptr};
use crate::gpu::linear::{Logic, Shift};
use libc::{c_char, c_int};

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
    boundary!("mpz_set_str", unsafe { text::set_str(rop, s, base) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    boundary!("mpz_get_str", unsafe { text::get_str(s, base, op) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_add", unsafe { mpz::add(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_sub", unsafe { mpz::sub(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_mul", unsafe { mpz::mul(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_mul_2exp", unsafe { mpz::shift(Shift::Left, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_tdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_tdiv_q_2exp", unsafe { mpz::shift(Shift::RightTrunc, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_fdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_fdiv_q_2exp", unsafe { mpz::shift(Shift::RightFloor, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_cdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_cdiv_q_2exp", unsafe { mpz::shift(Shift::RightCeil, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_and(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_and", unsafe { mpz::logic(Logic::And, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_ior(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_ior", unsafe { mpz::logic(Logic::Ior, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_xor(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_xor", unsafe { mpz::logic(Logic::Xor, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_com(r: mpz_ptr, a: mpz_srcptr) {
    boundary!("mpz_com", unsafe { mpz::com(r, a) })
}
