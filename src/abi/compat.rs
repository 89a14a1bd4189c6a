//! Internal `mpn` entry points that a non-fat libgmp.so.10 (Debian's, for one)
//! exports and GMP 6.3's fat build does not: a binary linked against such a
//! libgmp may reference them, so cuGMP provides them, built from the embedded
//! GMP's own primitives. Not part of GMP's documented API.

use super::boundary;
use crate::gmp::embedded;
use crate::gmp::{mp_limb_t, mp_size_t};

/// `{rp,n} = {up,n} + {vp,n} + cy` (cy 0 or 1); returns the carry out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_add_nc(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t, cy: mp_limb_t) -> mp_limb_t {
    boundary!("mpn_add_nc", unsafe { embedded::mpn_add_n(rp, up, vp, n) + embedded::mpn_add_1(rp, rp, n, cy) })
}

/// `{rp,n} = {up,n} - {vp,n} - bw` (bw 0 or 1); returns the borrow out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_sub_nc(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t, bw: mp_limb_t) -> mp_limb_t {
    boundary!("mpn_sub_nc", unsafe { embedded::mpn_sub_n(rp, up, vp, n) + embedded::mpn_sub_1(rp, rp, n, bw) })
}

/// `{rp,n} = {up,n} * v + c`; returns the high limb.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_mul_1c(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, v: mp_limb_t, c: mp_limb_t) -> mp_limb_t {
    // The high limb is at most v-1 when c < 2^64, so adding the carry cannot wrap.
    boundary!("mpn_mul_1c", unsafe { embedded::mpn_mul_1(rp, up, n, v) + embedded::mpn_add_1(rp, rp, n, c) })
}

/// `{up,n} mod d` in GMP's "exact" residue form, d odd.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_modexact_1_odd(up: *const mp_limb_t, n: mp_size_t, d: mp_limb_t) -> mp_limb_t {
    boundary!("mpn_modexact_1_odd", unsafe { embedded::mpn_modexact_1c_odd(up, n, d, 0) })
}

/// `{rp,n} = {ap,n} * u + {bp,n} * v` with u, v < 2^63; returns the high limb.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_addaddmul_1msb0(
    rp: *mut mp_limb_t,
    ap: *const mp_limb_t,
    bp: *const mp_limb_t,
    n: mp_size_t,
    u: mp_limb_t,
    v: mp_limb_t,
) -> mp_limb_t {
    // Each high limb is below 2^63, so their sum fits.
    boundary!("mpn_addaddmul_1msb0", unsafe { embedded::mpn_mul_1(rp, ap, n, u) + embedded::mpn_addmul_1(rp, bp, n, v) })
}
