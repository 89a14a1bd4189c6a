//! The `mpn` products cuGMP defines itself (natural numbers as limb arrays,
//! caller-sized outputs, no allocation), through src/algorithms/product.rs.

use super::routed;
use crate::algorithms::product;
use crate::gmp::{embedded, mp_limb_t, mp_size_t};

/// `{rp, un+vn} = {up, un} * {vp, vn}`, `un >= vn >= 1`; returns the top limb.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_mul(
    rp: *mut mp_limb_t,
    up: *const mp_limb_t,
    un: mp_size_t,
    vp: *const mp_limb_t,
    vn: mp_size_t,
) -> mp_limb_t {
    // vn <= un: the shorter operand decides the route.
    routed!("mpn_mul", product::mpn_on_cpu(vn) => embedded::mpn_mul(rp, up, un, vp, vn), product::mpn_mul(rp, up, un, vp, vn))
}

/// `{rp, 2n} = {up, n} * {vp, n}`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    routed!("mpn_mul_n", product::mpn_on_cpu(n) => embedded::mpn_mul_n(rp, up, vp, n), product::mpn_mul_n(rp, up, vp, n))
}

/// `{rp, 2n} = {up, n}^2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    routed!("mpn_sqr", product::mpn_on_cpu(n) => embedded::mpn_sqr(rp, up, n), product::mpn_sqr(rp, up, n))
}
