//! The ground floor: GMP's C types as the library lays them out, access to
//! an `mpz_t`'s limbs, the storage helpers that allocate and store them as
//! GMP does ([`mpz`]), the embedded GMP's renamed entry points
//! ([`embedded`]), its default memory functions ([`memory`]), what its
//! processor detection is told ([`cpuid`]), its fat dispatch table
//! ([`dispatch`]) and the loops put there on Zen 3 and later ([`zen3`]).
//!
//! It imports nothing of the crate but the leaves (`parallel`, for the
//! threaded store of large results; `pages`, for huge pages; `pinned`, the
//! pool of pinned blocks its memory functions give back). Every layer
//! above may use it.

#![allow(non_camel_case_types, non_snake_case)]

pub mod cpuid;
pub mod dispatch;
pub mod embedded;
pub mod memory;
pub mod mpz;
pub mod zen3;

use libc::{c_int, c_long, c_ulong};

pub type mp_limb_t = c_ulong;
pub type mp_size_t = c_long;
pub type mp_bitcnt_t = c_ulong;

/// GMP's integer: `{int _mp_alloc; int _mp_size; mp_limb_t *_mp_d}`.
/// `|_mp_size|` limbs are in use, the sign of `_mp_size` is the number's, and
/// `_mp_d` is never NULL (fresh variables point at a shared read-only limb
/// with `_mp_alloc == 0`).
#[repr(C)]
pub struct __mpz_struct {
    pub _mp_alloc: c_int,
    pub _mp_size: c_int,
    pub _mp_d: *mut mp_limb_t,
}

pub type mpz_ptr = *mut __mpz_struct;
pub type mpz_srcptr = *const __mpz_struct;

/// GMP's floating-point number: `{int _mp_prec; int _mp_size; mp_exp_t
/// _mp_exp; mp_limb_t *_mp_d}`. `|_mp_size|` limbs are in use (most
/// significant last), the sign of `_mp_size` is the number's, and the value
/// is those limbs times B^(_mp_exp - |_mp_size|); `_mp_prec` is the
/// precision in limbs as set (the limbs allocated are `_mp_prec + 1`).
#[repr(C)]
pub struct __mpf_struct {
    pub _mp_prec: c_int,
    pub _mp_size: c_int,
    pub _mp_exp: mp_exp_t,
    pub _mp_d: *mut mp_limb_t,
}

pub type mp_exp_t = c_long;
pub type mpf_srcptr = *const __mpf_struct;

/// GMP's table of facts about each base (gmp-impl.h's `struct bases`),
/// `__gmpn_bases[base]` for bases 0 to 256.
#[repr(C)]
pub struct bases {
    pub chars_per_limb: c_int,
    /// log(2) / log(base), a fraction of 2^64.
    pub logb2: mp_limb_t,
    /// log(base) / log(2), a fraction of 2^64 (scaled by 8).
    pub log2b: mp_limb_t,
    pub big_base: mp_limb_t,
    pub big_base_inverted: mp_limb_t,
}

/// GMP's half-gcd matrix (gmp-impl.h's `struct hgcd_matrix`): four entries
/// of `n` limbs each (`alloc` limbs allocated), non-negative.
#[repr(C)]
pub struct hgcd_matrix {
    pub alloc: mp_size_t,
    pub n: mp_size_t,
    pub p: [[*mut mp_limb_t; 2]; 2],
}

/// Limbs of `x` in use (magnitude only).
///
/// # Safety
/// `x` must point at an initialised `mpz_t` that outlives the slice.
pub unsafe fn limbs<'a>(x: mpz_srcptr) -> &'a [mp_limb_t] {
    unsafe {
        let n = (*x)._mp_size.unsigned_abs() as usize;
        std::slice::from_raw_parts((*x)._mp_d, n)
    }
}

/// `x`'s `_mp_size`: its limb count, negative for a negative number.
///
/// # Safety
/// `x` must point at an initialised `mpz_t`.
pub unsafe fn size(x: mpz_srcptr) -> c_int {
    unsafe { (*x)._mp_size }
}

/// Whether `x` is negative.
///
/// # Safety
/// `x` must point at an initialised `mpz_t`.
pub unsafe fn negative(x: mpz_srcptr) -> bool {
    unsafe { size(x) < 0 }
}
