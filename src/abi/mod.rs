//! The exported C ABI: GMP's types, the one panic boundary every Rust-defined
//! export goes through, limb allocation through GMP's memory functions, and the
//! generated trampolines that re-export the rest of the embedded GMP.
//!
//! Everything exported under a GMP name in this folder is found by build.rs
//! (it greps `extern "C" fn __gmp...`) and not re-exported a second time.
//! Module per family: [`mpz`], [`mpn`], and [`info`] for cuGMP's own `cugmp_*`.

#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

pub mod compat;
mod hooks;
pub mod info;
pub mod mpn;
pub mod mpz;

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

/// The one panic boundary. A panic is a bug in cuGMP; GMP's answer to an
/// internal failure is `abort()`, and unwinding into C is undefined, so abort
/// with the function's name.
macro_rules! boundary {
    ($name:literal, $body:expr) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(value) => value,
            Err(_) => $crate::abi::abort_after_panic($name),
        }
    };
}
pub(crate) use boundary;

#[cold]
pub(crate) fn abort_after_panic(name: &str) -> ! {
    eprintln!("cugmp: internal error in {name}; aborting");
    std::process::abort()
}

/// Limbs of `x` in use (magnitude only).
///
/// # Safety
/// `x` must point at an initialised `mpz_t` that outlives the slice.
pub(crate) unsafe fn limbs<'a>(x: mpz_srcptr) -> &'a [mp_limb_t] {
    unsafe {
        let n = (*x)._mp_size.unsigned_abs() as usize;
        std::slice::from_raw_parts((*x)._mp_d, n)
    }
}

pub(crate) unsafe fn size(x: mpz_srcptr) -> c_int {
    unsafe { (*x)._mp_size }
}

/// Store a magnitude (high zero limbs allowed: they are stripped) and a sign
/// in `r`, growing it through GMP's reallocation (so `mp_set_memory_functions`
/// is honoured and the overflow check is GMP's).
///
/// # Safety
/// `r` must be an initialised `mpz_t`; `magnitude` must not alias `r`'s limbs.
pub(crate) unsafe fn store(r: mpz_ptr, magnitude: &[mp_limb_t], negative: bool) {
    let mut n = magnitude.len();
    while n > 0 && magnitude[n - 1] == 0 {
        n -= 1;
    }
    unsafe {
        if ((*r)._mp_alloc as usize) < n {
            crate::cpu::mpz_realloc(r, n as mp_size_t);
        }
        // `magnitude` is the GPU engine's own buffer, never r's limbs.
        crate::gpu::staging::copy_limbs(std::slice::from_raw_parts_mut((*r)._mp_d, n), &magnitude[..n]);
        // n <= _mp_alloc <= INT_MAX after the reallocation above.
        (*r)._mp_size = if negative { -(n as c_int) } else { n as c_int };
    }
}

// The trampolines name the private functions untyped (`fn()`): a jump needs
// no signature. src/cpu.rs declares some of them again with their types.
mod trampolines {
    //! GMP functions cuGMP does not define itself, served by the embedded GMP.
    include!(concat!(env!("OUT_DIR"), "/trampolines.rs"));
}
