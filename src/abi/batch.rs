//! cuGMP's functions for many numbers at once (`cugmp_*_batch`,
//! `cugmp_poly_mul`): the C arrays checked and handed down as slices to
//! src/algorithms/batch.rs and src/algorithms/poly.rs.

use super::{bad_input, boundary};
use crate::algorithms::{batch, poly};
use crate::gmp::{mpz_ptr, mpz_srcptr};
use libc::size_t;

/// The `count` pointers at `p` (none, and `p` unread, when `count` is 0).
unsafe fn array<'a, T>(function: &str, what: &str, p: *const *mut T, count: usize) -> &'a [*mut T] {
    if count == 0 {
        return &[];
    }
    if p.is_null() {
        bad_input(function, &format!("{what} is NULL, with {count} items"));
    }
    let items = unsafe { std::slice::from_raw_parts(p, count) };
    if items.iter().any(|x| x.is_null()) {
        bad_input(function, &format!("{what} holds a NULL pointer, with {count} items"));
    }
    items
}

unsafe fn inputs<'a, T>(function: &str, what: &str, p: *const *const T, count: usize) -> &'a [*const T] {
    let items = unsafe { array(function, what, p as *const *mut T, count) };
    unsafe { std::slice::from_raw_parts(items.as_ptr() as *const *const T, items.len()) }
}

/// `r[i] = a[i] * b[i]` for i < n, each as `mpz_mul` computes it. The
/// results are as if computed from the inputs as they were at entry, even
/// where an `r[i]` is also an input of another item (a variable named as
/// the result of two items ends with the later one's). n = 0 does nothing
/// (the arrays may then be NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_mul_batch(n: size_t, r: *const mpz_ptr, a: *const mpz_srcptr, b: *const mpz_srcptr) {
    boundary!("cugmp_mul_batch", unsafe {
        let f = "cugmp_mul_batch";
        batch::mul(array(f, "r", r, n), inputs(f, "a", a, n), inputs(f, "b", b, n))
    })
}

/// `r[i] = base[i]^exp[i] mod modulus[i]` for i < n, each as `mpz_powm`
/// computes it: a zero modulus, or a negative exponent where the base has
/// no inverse, divides by zero as GMP does. Aliasing as `cugmp_mul_batch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_powm_batch(n: size_t, r: *const mpz_ptr, base: *const mpz_srcptr, exp: *const mpz_srcptr, modulus: *const mpz_srcptr) {
    boundary!("cugmp_powm_batch", unsafe {
        let f = "cugmp_powm_batch";
        batch::powm(array(f, "r", r, n), inputs(f, "base", base, n), inputs(f, "exp", exp, n), inputs(f, "mod", modulus, n))
    })
}

/// `r[i] = a[i] mod modulus[i]` for i < n, never negative, each as `mpz_mod`
/// computes it: a zero modulus divides by zero as GMP does. Aliasing as
/// `cugmp_mul_batch`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_mod_batch(n: size_t, r: *const mpz_ptr, a: *const mpz_srcptr, modulus: *const mpz_srcptr) {
    boundary!("cugmp_mod_batch", unsafe {
        let f = "cugmp_mod_batch";
        batch::modulo(array(f, "r", r, n), inputs(f, "a", a, n), inputs(f, "mod", modulus, n))
    })
}

/// The product of the integer polynomials `a[0] + a[1] x + ... +
/// a[na-1] x^(na-1)` and `b` (nb coefficients), lowest coefficient first:
/// its na + nb - 1 coefficients go to `r[0 .. na+nb-1]`, which may name
/// the inputs' variables. With na or nb zero the product is zero and its
/// na + nb - 1 coefficients (if any) are set to 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_poly_mul(r: *const mpz_ptr, a: *const mpz_srcptr, na: size_t, b: *const mpz_srcptr, nb: size_t) {
    boundary!("cugmp_poly_mul", unsafe {
        let f = "cugmp_poly_mul";
        let count = na.saturating_add(nb).saturating_sub(1);
        poly::mul(array(f, "r", r, count), inputs(f, "a", a, na), inputs(f, "b", b, nb))
    })
}
