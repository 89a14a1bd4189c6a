//! The `mpn` products cuGMP defines itself (natural numbers as limb arrays,
//! caller-sized outputs, no allocation), through src/algorithms/product.rs.

use super::boundary;
use crate::algorithms::product;
use crate::gmp::{mp_limb_t, mp_size_t};

/// `{rp, un+vn} = {up, un} * {vp, vn}`, `un >= vn >= 1`; returns the top limb.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_mul(
    rp: *mut mp_limb_t,
    up: *const mp_limb_t,
    un: mp_size_t,
    vp: *const mp_limb_t,
    vn: mp_size_t,
) -> mp_limb_t {
    boundary!("mpn_mul", unsafe { product::mpn_mul(rp, up, un, vp, vn) })
}

/// `{rp, 2n} = {up, n} * {vp, n}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    boundary!("mpn_mul_n", unsafe { product::mpn_mul_n(rp, up, vp, n) })
}

/// `{rp, 2n} = {up, n}^2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    boundary!("mpn_sqr", unsafe { product::mpn_sqr(rp, up, n) })
}
