//! The `mpz` functions cuGMP defines itself. Memory management follows GMP
//! 6.3 exactly (fresh variables share a read-only dummy limb; clearing frees
//! only what was allocated); arithmetic goes through the dispatcher.

use super::{boundary, mp_bitcnt_t, mp_limb_t, mpz_ptr, mpz_srcptr};
use crate::{cpu, dispatch};
use libc::{c_char, c_int};

/// What a fresh `mpz_t` points at (GMP 6.3 does the same): reading it gives
/// zero limbs in use; `_mp_alloc == 0` makes every writer reallocate first.
static DUMMY_LIMB: mp_limb_t = 0xc1a0;

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_init(x: mpz_ptr) {
    boundary!("mpz_init", unsafe {
        (*x)._mp_alloc = 0;
        (*x)._mp_size = 0;
        (*x)._mp_d = &DUMMY_LIMB as *const mp_limb_t as *mut mp_limb_t;
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_init2(x: mpz_ptr, bits: mp_bitcnt_t) {
    boundary!("mpz_init2", unsafe {
        // GMP: one limb for 0 bits, else ceil(bits / 64); beyond INT_MAX limbs
        // the _mp_alloc field overflows, which GMP reports and aborts on.
        let limbs = 1 + (bits - (bits != 0) as mp_bitcnt_t) / 64;
        if limbs > c_int::MAX as mp_bitcnt_t {
            cpu::overflow_in_mpz();
        }
        let bytes = limbs as usize * std::mem::size_of::<mp_limb_t>();
        (*x)._mp_d = (cpu::__gmp_allocate_func)(bytes) as *mut mp_limb_t;
        (*x)._mp_alloc = limbs as c_int;
        (*x)._mp_size = 0;
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_clear(x: mpz_ptr) {
    boundary!("mpz_clear", unsafe {
        let alloc = (*x)._mp_alloc;
        if alloc != 0 {
            let bytes = alloc as usize * std::mem::size_of::<mp_limb_t>();
            (cpu::__gmp_free_func)((*x)._mp_d as *mut libc::c_void, bytes);
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    boundary!("mpz_set_str", unsafe { dispatch::set_str(rop, s, base) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    boundary!("mpz_get_str", unsafe { dispatch::get_str(s, base, op) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_add", unsafe { dispatch::add(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_sub", unsafe { dispatch::sub(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_mul", unsafe { dispatch::mul(r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_mul_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_mul_2exp", unsafe { dispatch::shift(dispatch::Shift::Left, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_tdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_tdiv_q_2exp", unsafe { dispatch::shift(dispatch::Shift::RightTrunc, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_fdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_fdiv_q_2exp", unsafe { dispatch::shift(dispatch::Shift::RightFloor, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_cdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t) {
    boundary!("mpz_cdiv_q_2exp", unsafe { dispatch::shift(dispatch::Shift::RightCeil, r, a, n) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_and(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_and", unsafe { dispatch::logic(dispatch::Logic::And, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_ior(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_ior", unsafe { dispatch::logic(dispatch::Logic::Ior, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_xor(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("mpz_xor", unsafe { dispatch::logic(dispatch::Logic::Xor, r, a, b) })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpz_com(r: mpz_ptr, a: mpz_srcptr) {
    boundary!("mpz_com", unsafe { dispatch::com(r, a) })
}
