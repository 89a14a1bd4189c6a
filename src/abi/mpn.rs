//! The `mpn` functions cuGMP defines itself (natural numbers as limb
//! arrays, caller-sized outputs, no allocation): products, through
//! src/algorithms/product.rs; sums, differences and shifts, through
//! src/algorithms/mpn.rs.

use super::routed;
use crate::algorithms::{mpn, product};
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

/// `{rp, n} = {up, n} + {vp, n}`; returns the carry out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_add_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) -> mp_limb_t {
    routed!("mpn_add_n", mpn::on_one_thread(n) => embedded::mpn_add_n(rp, up, vp, n), mpn::add_or_sub_n(rp, up, vp, n, false))
}

/// `{rp, n} = {up, n} - {vp, n}`; returns the borrow out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_sub_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) -> mp_limb_t {
    routed!("mpn_sub_n", mpn::on_one_thread(n) => embedded::mpn_sub_n(rp, up, vp, n), mpn::add_or_sub_n(rp, up, vp, n, true))
}

/// `{rp, n} = {up, n} << cnt`; returns the bits shifted out.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_lshift(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, cnt: libc::c_uint) -> mp_limb_t {
    routed!("mpn_lshift", mpn::on_one_thread(n) => embedded::mpn_lshift(rp, up, n, cnt), mpn::shift(rp, up, n, cnt, true))
}

/// `{rp, n} = {up, n} >> cnt`; returns the bits shifted out, at the top of
/// the limb.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpn_rshift(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, cnt: libc::c_uint) -> mp_limb_t {
    routed!("mpn_rshift", mpn::on_one_thread(n) => embedded::mpn_rshift(rp, up, n, cnt), mpn::shift(rp, up, n, cnt, false))
}
