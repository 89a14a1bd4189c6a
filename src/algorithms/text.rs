//! Numbers to and from text: `mpz_get_str` (by radix conversion a whole
//! level at a time, src/algorithms/radix.rs, where that takes the number,
//! with GMP's characters written on threads) and `mpz_set_str`.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's function of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::radix;
use super::route::{cpu_only, route};
use crate::config::log;
use crate::gmp::{self, embedded, mp_limb_t, mpz_ptr, mpz_srcptr};
use crate::parallel;
use crate::stats::Op;
use libc::{c_char, c_int};

/// `mpz_set_str`: GMP's own.
pub unsafe fn set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    if !cpu_only(Op::SetStr, 0) {
        route(Op::SetStr, 0, false);
    }
    unsafe { embedded::mpz_set_str(rop, s, base) }
}

/// `mpz_get_str`: by radix conversion a whole level at a time, its text
/// written on threads, where radix conversion takes the number by levels;
/// else GMP's own.
pub unsafe fn get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    let limbs = unsafe { gmp::limbs(op) };
    if cpu_only(Op::GetStr, limbs.len()) {
        return unsafe { embedded::mpz_get_str(s, base, op) };
    }
    route(Op::GetStr, limbs.len(), false);
    let by_levels = digit_characters(base).and_then(|(radix, table)| Some((radix, table, radix::levels_on_gpu(limbs.len(), radix)?)));
    match by_levels {
        Some((radix, table, levels)) => unsafe { text_by_levels(s, limbs, gmp::negative(op), radix as u32, table, levels) },
        None => unsafe { embedded::mpz_get_str(s, base, op) },
    }
}

/// mpz_get_str's `base` as the radix it writes and its digit characters:
/// lower case up to base 36, upper case for bases -2 to -36 (base -b
/// writes base b), both cases above 36; -1 to 1 mean 10. None for the
/// bases GMP refuses (its mpz_get_str returns NULL).
fn digit_characters(base: c_int) -> Option<(c_int, &'static [u8])> {
    const LOWER: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    const BOTH: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    match base {
        2..=36 => Some((base, LOWER)),
        37..=62 => Some((base, BOTH)),
        -36..=-2 => Some((-base, BOTH)),
        -1..=1 => Some((10, LOWER)),
        _ => None,
    }
}

/// mpz_get_str's text for a number that radix conversion takes by whole
/// levels (`radix::levels_on_gpu`): GMP's characters, and the same string and
/// allocation rules (into `s`, else a block of strlen + 1 bytes from GMP's
/// allocation function), with the digit values made into characters on
/// several threads: GMP's mpz_get_str maps them one at a time after its
/// mpn_get_str, about 19 x 10^6 of them at 10^6 limbs.
unsafe fn text_by_levels(s: *mut c_char, limbs: &[mp_limb_t], negative: bool, radix: u32, table: &[u8], levels: u32) -> *mut c_char {
    log!("mpz_get_str {} limbs base {radix}: {} leaves", limbs.len(), 1usize << levels);
    let digits = radix::digits(limbs, radix, levels);
    let digits = digits.as_slice();
    let sign = usize::from(negative);
    let size = sign + digits.len() + 1;
    // SAFETY: GMP's contract: a caller's s holds the text and its NUL;
    // else the block is ours, `size` bytes (GMP's allocation function
    // aborts rather than return NULL).
    let text = unsafe {
        let out = if s.is_null() { (embedded::__gmp_allocate_func)(size) as *mut u8 } else { s as *mut u8 };
        std::slice::from_raw_parts_mut(out, size)
    };
    if negative {
        text[0] = b'-';
    }
    text[size - 1] = 0;
    const RUN: usize = 1 << 20;
    let out = &mut text[sign..size - 1];
    let threads = parallel::cores().min(16).min(out.len() / RUN + 1);
    parallel::each_item(out, RUN, threads, |i, run| {
        for (c, &d) in run.iter_mut().zip(&digits[i * RUN..]) {
            *c = table[d as usize];
        }
    });
    text.as_mut_ptr() as *mut c_char
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmp::__mpz_struct;

    /// mpz_get_str's text by levels is GMP's: every kind of base, both
    /// signs, into the caller's buffer and into one GMP allocates (the
    /// products on the CPU here).
    #[test]
    fn text_by_levels_matches_gmp() {
        let limbs: Vec<mp_limb_t> = (0..700u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)).collect();
        for base in [3, 10, 36, 37, 62, -10, -36, 0, 1, -1] {
            let (radix, table) = digit_characters(base).expect("a base GMP takes");
            for negative in [false, true] {
                let size = if negative { -(limbs.len() as libc::c_int) } else { limbs.len() as libc::c_int };
                let x = __mpz_struct { _mp_alloc: limbs.len() as libc::c_int, _mp_size: size, _mp_d: limbs.as_ptr() as *mut mp_limb_t };
                // SAFETY: x is a read-only view; GMP's strings are freed
                // with GMP's function and their strlen + 1.
                unsafe {
                    let want = embedded::mpz_get_str(std::ptr::null_mut(), base, &x);
                    let want_text = std::ffi::CStr::from_ptr(want).to_owned();
                    for levels in [1, 3] {
                        let got = text_by_levels(std::ptr::null_mut(), &limbs, negative, radix as u32, table, levels);
                        assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "base {base}, negative {negative}, {levels} levels");
                        (embedded::__gmp_free_func)(got as *mut libc::c_void, want_text.as_bytes().len() + 1);
                        let mut buffer = vec![1 as c_char; want_text.as_bytes().len() + 1];
                        let got = text_by_levels(buffer.as_mut_ptr(), &limbs, negative, radix as u32, table, levels);
                        assert_eq!(got, buffer.as_mut_ptr(), "the caller's buffer comes back");
                        assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "base {base} into the caller's buffer");
                    }
                    (embedded::__gmp_free_func)(want as *mut libc::c_void, want_text.as_bytes().len() + 1);
                }
            }
        }
        assert!(digit_characters(63).is_none() && digit_characters(-37).is_none());
    }
}
