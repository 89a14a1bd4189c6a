//! cuGMP's functions for binary polynomials (`cugmp_gf2x_mul`,
//! `cugmp_mpz_gf2x_mul`): the sizes checked and handed down to
//! src/algorithms/gf2x.rs.

use super::{bad_input, boundary};
use crate::algorithms::gf2x;
use crate::gmp::{mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};

/// The carry-less product of binary polynomials stored as limbs (bit i of
/// limb j is the coefficient of x^(64 j + i)), as gf2x's `gf2x_mul`:
/// `{rp, an + bn} = {ap, an} * {bp, bn}`. An empty operand (size 0) gives
/// an + bn zero limbs; rp may overlap the operands. A negative size, or a
/// NULL pointer where limbs are asked, stops the program with a message.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_gf2x_mul(rp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t) {
    boundary!("cugmp_gf2x_mul", {
        let f = "cugmp_gf2x_mul";
        let (Ok(an), Ok(bn)) = (usize::try_from(an), usize::try_from(bn)) else { bad_input(f, &format!("a negative size ({an}, {bn})")) };
        if (an > 0 && ap.is_null()) || (bn > 0 && bp.is_null()) || (an + bn > 0 && rp.is_null()) {
            bad_input(f, "a NULL pointer for limbs");
        }
        unsafe { gf2x::mpn(rp, ap, an, bp, bn) }
    })
}

/// `r` = the carry-less product of the bits of |a| and |b| (binary
/// polynomials, bit i the coefficient of x^i); r is never negative and may
/// be a or b.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_mpz_gf2x_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr) {
    boundary!("cugmp_mpz_gf2x_mul", unsafe { gf2x::mpz(r, a, b) })
}
