//! Numbers to and from text: `mpz_get_str` and `mpz_set_str`.
//!
//! `mpz_get_str` keeps GMP's rules (its characters, NULL for a base it
//! refuses, the caller's buffer or a block of exactly strlen + 1 bytes from
//! GMP's allocation function) and GMP's digits (its `mpn_get_str`, or radix
//! conversion a whole level at a time, src/algorithms/radix.rs, where that
//! takes the number), and writes the characters itself at every size: GMP's
//! loop maps one byte a step through a table, at a speed that depends on
//! where the loop lands in the library (8% slower in libcugmp.so than in
//! GMP's own build on the same machine; RESULTS.md, "Cost per call"), where
//! the arithmetic mapping here is vectorised by the compiler.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's function of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::radix;
use super::route::{cpu_only, route};
use crate::config::log;
use crate::gmp::{self, embedded, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::parallel;
use crate::stats::{self, Op};
use libc::{c_char, c_int};

/// Whether `mpz_set_str` goes straight to the embedded GMP (unless
/// CUGMP_STATS or CUGMP_LOG want to see it).
#[inline(always)]
pub fn set_str_on_cpu() -> bool {
    cpu_only(Op::SetStr, 0)
}

/// `mpz_set_str`: GMP's own, counted.
pub unsafe fn set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    route(Op::SetStr, 0, false);
    // The profile's size: the limbs the digits make (base 0 read as 10).
    let limbs = if stats::profiling() && !s.is_null() {
        let digits = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().len() as f64;
        (digits * f64::from(if base == 0 { 10 } else { base.clamp(2, 62) }).log2() / 64.0) as usize
    } else {
        0
    };
    stats::on_cpu(Op::SetStr, limbs, || unsafe { embedded::mpz_set_str(rop, s, base) })
}

/// `mpz_get_str`: the digits by radix conversion a whole level at a time
/// where that takes the number, else by GMP's `mpn_get_str`; the text
/// written as GMP writes it.
#[inline(never)]
pub unsafe fn get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char {
    let Some((radix, alphabet)) = digit_characters(base) else {
        return std::ptr::null_mut();
    };
    let (limbs, negative) = unsafe { (gmp::limbs(op), gmp::negative(op)) };
    if !cpu_only(Op::GetStr, limbs.len()) {
        route(Op::GetStr, limbs.len(), false);
        if let Some(levels) = radix::levels_on_gpu(limbs.len(), radix) {
            log!("mpz_get_str {} limbs base {radix}: {} leaves", limbs.len(), 1usize << levels);
            let digits = radix::digits(limbs, radix as u32, levels);
            return unsafe { write_text(s, digits.as_slice(), negative, alphabet) };
        }
    }
    stats::on_cpu(Op::GetStr, limbs.len(), || with_gmp_digits(limbs, radix, |digits| unsafe { write_text(s, digits, negative, alphabet) }))
}

/// GMP's two sets of digit characters: "0-9a-z" (bases 2 to 36), and
/// "0-9A-Za-z" (bases 37 to 62, and bases -2 to -36, upper case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Alphabet {
    Lower,
    Both,
}

/// mpz_get_str's `base` as the radix it writes and its characters: lower
/// case up to base 36, upper case for bases -2 to -36 (base -b writes base
/// b), both cases above 36; -1 to 1 mean 10. None for the bases GMP refuses
/// (its mpz_get_str returns NULL).
fn digit_characters(base: c_int) -> Option<(c_int, Alphabet)> {
    match base {
        2..=36 => Some((base, Alphabet::Lower)),
        37..=62 => Some((base, Alphabet::Both)),
        -36..=-2 => Some((-base, Alphabet::Both)),
        -1..=1 => Some((10, Alphabet::Lower)),
        _ => None,
    }
}

/// The character of digit value `d` (below the radix): branch-free, so
/// that a loop of them vectorises.
#[inline(always)]
fn character(d: u8, alphabet: Alphabet) -> u8 {
    let letter = u8::from(d >= 10);
    match alphabet {
        // '0' + d, or 'a' + d - 10 = d + 87.
        Alphabet::Lower => d + b'0' + letter * (b'a' - 10 - b'0'),
        // '0' + d, 'A' + d - 10 = d + 55, or 'a' + d - 36 = d + 61.
        Alphabet::Both => d + b'0' + letter * (b'A' - 10 - b'0') + u8::from(d >= 36) * (b'a' - 36 - (b'A' - 10)),
    }
}

/// GMP's digits of `limbs` (top limb nonzero; none for zero) in `radix`,
/// most significant first, no leading zeros ("0" for zero), handed to `f`:
/// its `mpn_get_str` on a copy where it would clobber the number (bases that
/// are not powers of two), as GMP's mpz_get_str does. Small numbers use
/// stack buffers.
fn with_gmp_digits<T>(limbs: &[mp_limb_t], radix: c_int, f: impl FnOnce(&[u8]) -> T) -> T {
    const STACK_LIMBS: usize = 32;
    let n = limbs.len();
    // A limb is at most 64 / floor(log2(radix)) digits.
    let bound = 64 * n / (31 - (radix as u32).leading_zeros()) as usize + 2;
    // Room only: GMP writes every limb and digit read below (a zeroed 2 KiB
    // array cost a one-limb conversion half its time).
    let mut limb_stack = std::mem::MaybeUninit::<[mp_limb_t; STACK_LIMBS]>::uninit();
    let mut digit_stack = std::mem::MaybeUninit::<[u8; 64 * STACK_LIMBS + 2]>::uninit();
    let (mut limb_heap, mut digit_heap) = (Vec::new(), Vec::new());
    let x: *mut mp_limb_t = if (radix as u32).is_power_of_two() {
        // GMP's mpn_get_str reads a power-of-two base's number and leaves it.
        limbs.as_ptr() as *mut mp_limb_t
    } else if n <= STACK_LIMBS {
        let x = limb_stack.as_mut_ptr() as *mut mp_limb_t;
        // SAFETY: the stack array holds STACK_LIMBS >= n limbs.
        unsafe { std::ptr::copy_nonoverlapping(limbs.as_ptr(), x, n) };
        x
    } else {
        limb_heap.extend_from_slice(limbs);
        limb_heap.as_mut_ptr()
    };
    let digits: *mut u8 = if bound <= 64 * STACK_LIMBS + 2 {
        digit_stack.as_mut_ptr() as *mut u8
    } else {
        digit_heap.reserve_exact(bound);
        digit_heap.as_mut_ptr()
    };
    // SAFETY: x holds the n limbs (GMP writes only to a copy of the
    // caller's), `digits` room for every digit GMP writes (`bound`); un = 0
    // writes one "0". The digits read are those written.
    unsafe {
        let written = embedded::mpn_get_str(digits, radix, x, n as mp_size_t);
        f(std::slice::from_raw_parts(digits, written))
    }
}

/// mpz_get_str's text from the digit values: into `s`, else into a block of
/// strlen + 1 bytes from GMP's allocation function (GMP's contract), a
/// minus sign first for a negative number, the characters of large texts
/// on several threads.
unsafe fn write_text(s: *mut c_char, digits: &[u8], negative: bool, alphabet: Alphabet) -> *mut c_char {
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
    let map = |run: &mut [u8], from: &[u8]| {
        for (c, &d) in run.iter_mut().zip(from) {
            *c = character(d, alphabet);
        }
    };
    if out.len() <= RUN {
        map(out, digits);
    } else {
        let threads = parallel::cores().min(16).min(out.len() / RUN + 1);
        parallel::each_item(out, RUN, threads, |i, run| map(run, &digits[i * RUN..]));
    }
    text.as_mut_ptr() as *mut c_char
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gmp::__mpz_struct;

    /// `f(want, got)` for GMP's own mpz_get_str and this one, of `limbs`
    /// with either sign, in every kind of base, into the caller's buffer and
    /// into a block GMP's allocation function gives.
    fn against_gmp(limbs: &[mp_limb_t], ours: &dyn Fn(*mut c_char, c_int, &__mpz_struct) -> *mut c_char) {
        for base in [2, 3, 8, 10, 16, 36, 37, 62, -2, -10, -16, -36, 0, 1, -1] {
            for negative in [false, true] {
                let size = if negative { -(limbs.len() as c_int) } else { limbs.len() as c_int };
                let x = __mpz_struct { _mp_alloc: limbs.len() as c_int, _mp_size: size, _mp_d: limbs.as_ptr() as *mut mp_limb_t };
                // SAFETY: x is a read-only view; GMP's strings are freed
                // with GMP's function and their strlen + 1.
                unsafe {
                    let want = embedded::mpz_get_str(std::ptr::null_mut(), base, &x);
                    let want_text = std::ffi::CStr::from_ptr(want).to_owned();
                    let got = ours(std::ptr::null_mut(), base, &x);
                    assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "{} limbs, base {base}, negative {negative}", limbs.len());
                    (embedded::__gmp_free_func)(got as *mut libc::c_void, want_text.as_bytes().len() + 1);
                    let mut buffer = vec![1 as c_char; want_text.as_bytes().len() + 1];
                    let got = ours(buffer.as_mut_ptr(), base, &x);
                    assert_eq!(got, buffer.as_mut_ptr(), "the caller's buffer comes back");
                    assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "{} limbs, base {base}, into the caller's buffer", limbs.len());
                    (embedded::__gmp_free_func)(want as *mut libc::c_void, want_text.as_bytes().len() + 1);
                }
            }
        }
    }

    fn sample(n: usize) -> Vec<mp_limb_t> {
        let mut v: Vec<mp_limb_t> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)).collect();
        if let Some(top) = v.last_mut() {
            *top |= 1;
        }
        v
    }

    /// mpz_get_str's text is GMP's at every size the stack buffers and
    /// heap buffers take (zero, one limb, all ones, the stack's edge, past
    /// it), in every kind of base, both signs, both kinds of buffer.
    #[test]
    fn text_matches_gmp() {
        for limbs in [vec![], vec![1], vec![u64::MAX], vec![u64::MAX; 32], sample(33), sample(700)] {
            against_gmp(&limbs, &|s, base, x| unsafe { get_str(s, base, x) });
        }
        // Bases GMP refuses.
        let x = __mpz_struct { _mp_alloc: 1, _mp_size: 1, _mp_d: [5u64].as_ptr() as *mut mp_limb_t };
        for base in [63, 100, -37, i32::MIN, i32::MAX] {
            assert!(unsafe { get_str(std::ptr::null_mut(), base, &x) }.is_null(), "base {base}");
        }
    }

    /// The text of radix conversion's digits by levels is GMP's (the
    /// products on the CPU here).
    #[test]
    fn text_by_levels_matches_gmp() {
        let limbs = sample(700);
        for levels in [1, 3] {
            against_gmp(&limbs, &|s, base, x| unsafe {
                let (radix, alphabet) = digit_characters(base).expect("a base GMP takes");
                if (radix as u32).is_power_of_two() {
                    return get_str(s, base, x);
                }
                let digits = radix::digits(&limbs, radix as u32, levels);
                write_text(s, digits.as_slice(), gmp::negative(x), alphabet)
            });
        }
    }

    /// Every digit value of every base has GMP's character.
    #[test]
    fn characters_are_gmps() {
        const LOWER: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        const BOTH: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        for (d, &c) in LOWER.iter().enumerate() {
            assert_eq!(character(d as u8, Alphabet::Lower), c);
        }
        for (d, &c) in BOTH.iter().enumerate() {
            assert_eq!(character(d as u8, Alphabet::Both), c);
        }
    }
}
