//! Numbers to and from text: `mpz_get_str` and `mpz_set_str`.
//!
//! `mpz_set_str` reads a string long enough for radix conversion by whole
//! levels (src/algorithms/radix/from_digits.rs) itself, by GMP's rules (its
//! white space, sign, leading zeros, digit characters, and -1 with the
//! number unchanged for a string it refuses), mapping characters to digits
//! on threads: GMP's own reading of 10^7 decimal digits, one character at a
//! time through isspace and a table, cost as much as the whole conversion
//! on the GPU (RESULTS.md, "Radix conversion from digits"). Everything else
//! is GMP's own `mpz_set_str`, whose `mpn_set_str` the hooks take
//! (src/abi/hooks.rs).
//!
//! `mpz_get_str` keeps GMP's rules (its characters, NULL for a base it
//! refuses, the caller's buffer or a block of exactly strlen + 1 bytes from
//! GMP's allocation function) and GMP's digits (its `mpn_get_str`, or radix
//! conversion a whole level at a time, src/algorithms/radix/to_digits.rs, where that
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
use super::route::{cpu_only, route, slow_from};
use crate::config::log;
use crate::gmp::{self, embedded, mp_limb_t, mp_size_t, mpz_ptr, mpz_srcptr};
use crate::parallel;
use crate::stats::{self, Op};
use libc::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

/// Characters a number of one limb takes at least, in any base up to 62
/// (64 / log2(62) = 10.75): a string shorter than a threshold's limbs times
/// this is below it in every base.
const MIN_CHARS_PER_LIMB: usize = 10;

/// Whether `mpz_set_str` on `s` goes straight to the embedded GMP: no
/// string can take another path (no GPU, or it is off), or `s` is shorter
/// than any that can (a bounded strnlen).
#[inline(always)]
pub unsafe fn set_str_on_cpu(s: *const c_char) -> bool {
    let from = slow_from(Op::SetStr);
    if from == usize::MAX || s.is_null() {
        return true;
    }
    let chars = from.saturating_mul(MIN_CHARS_PER_LIMB);
    // SAFETY: s is a C string (GMP's contract); strnlen reads at most to
    // its NUL.
    unsafe { libc::strnlen(s, chars) < chars }
}

/// `mpz_set_str` on a string that may be long: read here and converted by
/// whole levels where `set_str_levels_on_gpu` takes its digits, else GMP's.
pub unsafe fn set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int {
    // SAFETY: s is a C string (GMP's contract; set_str_on_cpu let NULL pass to GMP).
    let text = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes();
    route(Op::SetStr, text.len() / MIN_CHARS_PER_LIMB, false);
    // SAFETY: rop is an initialised mpz_t (GMP's contract).
    match unsafe { read_by_levels(rop, text, base, radix::set_str_levels_on_gpu) } {
        Some(result) => result,
        None => stats::on_cpu(Op::SetStr, text.len() / MIN_CHARS_PER_LIMB, || unsafe { embedded::mpz_set_str(rop, s, base) }),
    }
}

/// `mpz_set_str(rop, text, base)` by radix conversion in `levels(digits,
/// radix)` levels where that is Some and `plain_digits` reads `text`: GMP's
/// result (0, or -1 with `rop` unchanged); None where GMP's own must read it.
unsafe fn read_by_levels(rop: mpz_ptr, text: &[u8], base: c_int, levels: impl Fn(usize, u32) -> Option<u32>) -> Option<c_int> {
    let (negative, body, radix) = plain_digits(text, base)?;
    let levels = levels(body.len(), radix)?;
    let limbs = radix::limbs_of_digits(body.len(), radix);
    Some(stats::on_cpu(Op::SetStr, limbs, || {
        let Some(digits) = digit_values(body, radix) else {
            return -1;
        };
        log!("mpz_set_str {} digits base {radix}: {} leaves", digits.len(), 1usize << levels);
        let x = radix::number(&digits, radix, levels);
        // SAFETY: rop is an initialised mpz_t (the caller's contract); x is ours.
        unsafe { gmp::mpz::store(rop, &x, negative) };
        0
    }))
}

/// The digits of a string GMP reads as sign, leading zeros and digits
/// (white space allowed before the sign and among the zeros and digits):
/// (negative, the characters from the first nonzero digit, the base).
/// None for everything else, which GMP's own mpz_set_str reads: bases it
/// refuses or that are powers of two (GMP reads those in linear time), base
/// 0 with a prefix or a leading 0, no digit, a string of zeros, or an error
/// before the first nonzero digit.
fn plain_digits(text: &[u8], base: c_int) -> Option<(bool, &[u8], u32)> {
    let radix = match base {
        0 => 10,
        3..=62 if !(base as u32).is_power_of_two() => base as u32,
        _ => return None,
    };
    let space = |c: u8| unsafe { libc::isspace(c_int::from(c)) } != 0;
    let mut at = text.iter().take_while(|&&c| space(c)).count();
    let negative = text.get(at) == Some(&b'-');
    at += usize::from(negative);
    // GMP's first character after the sign must be a digit (for base 0, a
    // leading 0 starts a prefix: left to GMP).
    let table = digit_table(radix);
    let first = *text.get(at)?;
    if table[usize::from(first)] >= radix as u8 || (base == 0 && first == b'0') {
        return None;
    }
    at += text[at..].iter().take_while(|&&c| c == b'0' || space(c)).count();
    let body = &text[at..];
    (!body.is_empty() && table[usize::from(body[0])] < radix as u8).then_some((negative, body, radix))
}

/// GMP's digit values for `radix` (2 to 62): bases up to 36 read letters of
/// either case as 10 to 35, larger bases 'A'-'Z' as 10 to 35 and 'a'-'z'
/// as 36 to 61; 255 for every other character.
fn digit_table(radix: u32) -> [u8; 256] {
    let mut table = [255u8; 256];
    for d in 0..10u8 {
        table[usize::from(b'0' + d)] = d;
    }
    for d in 0..26u8 {
        let (upper, lower) = (usize::from(b'A' + d), usize::from(b'a' + d));
        table[upper] = 10 + d;
        table[lower] = if radix > 36 { 36 + d } else { 10 + d };
    }
    table
}

/// Characters mapped to digit values by GMP's rules, white space dropped,
/// on threads; None where one is neither a digit below `radix` nor white
/// space (GMP's -1).
fn digit_values(text: &[u8], radix: u32) -> Option<Vec<u8>> {
    const CHARS_PER_THREAD: usize = 1 << 20;
    digit_values_in_chunks(text, radix, text.len().div_ceil(parallel::cores().min(16)).max(CHARS_PER_THREAD))
}

/// `digit_values` with the text cut into chunks of `chunk` characters,
/// one at a time per thread.
fn digit_values_in_chunks(text: &[u8], radix: u32, chunk: usize) -> Option<Vec<u8>> {
    let table = digit_table(radix);
    let mut out = vec![0u8; text.len()];
    let kept: Vec<AtomicUsize> = (0..text.len().div_ceil(chunk)).map(|_| AtomicUsize::new(0)).collect();
    let refused = AtomicBool::new(false);
    parallel::each_item(&mut out, chunk, kept.len().min(parallel::cores()), |i, out| {
        let from = &text[i * chunk..][..out.len()];
        let mut n = 0;
        for &c in from {
            let d = table[usize::from(c)];
            if u32::from(d) < radix {
                out[n] = d;
                n += 1;
            } else if unsafe { libc::isspace(c_int::from(c)) } == 0 {
                refused.store(true, Relaxed);
                return;
            }
        }
        kept[i].store(n, Relaxed);
    });
    if refused.into_inner() {
        return None;
    }
    // White space within the digits (rare): close the gaps.
    let mut len = 0;
    for (i, n) in kept.into_iter().map(AtomicUsize::into_inner).enumerate() {
        out.copy_within(i * chunk..i * chunk + n, len);
        len += n;
    }
    out.truncate(len);
    Some(out)
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
            return unsafe { text_by_levels(s, limbs, radix, levels, negative, alphabet) };
        }
    }
    stats::on_cpu(Op::GetStr, limbs.len(), || with_gmp_digits(limbs, radix, |digits| unsafe { write_text(s, digits, negative, alphabet) }))
}

/// mpz_get_str's text of `limbs` by radix conversion in `levels` whole
/// levels: the characters written straight from the leaves, on their
/// threads.
unsafe fn text_by_levels(s: *mut c_char, limbs: &[mp_limb_t], radix: c_int, levels: u32, negative: bool, alphabet: Alphabet) -> *mut c_char {
    let leaves = radix::split(limbs, radix as u32, levels);
    unsafe { text_block(s, leaves.digit_count(), negative, |out| leaves.write(out, |d| character(d, alphabet))) }
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
    unsafe {
        text_block(s, digits.len(), negative, |out| {
            const RUN: usize = 1 << 20;
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
        })
    }
}

/// mpz_get_str's text of `len` characters, which `fill` writes: into `s`,
/// else into a block of strlen + 1 bytes from GMP's allocation function
/// (GMP's contract), after a minus sign for a negative number, before the
/// NUL.
unsafe fn text_block(s: *mut c_char, len: usize, negative: bool, fill: impl FnOnce(&mut [u8])) -> *mut c_char {
    let sign = usize::from(negative);
    let size = sign + len + 1;
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
    fill(&mut text[sign..size - 1]);
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
                text_by_levels(s, &limbs, radix, levels, gmp::negative(x), alphabet)
            });
        }
    }

    /// Every digit value of every base has GMP's character.
    /// mpz_set_str read here (every level count, the digits mapped on
    /// threads) against GMP's own on the same strings: values, returns,
    /// and the number left as it was after a refusal; the strings GMP must
    /// read itself are told apart.
    #[test]
    fn set_str_by_levels_matches_gmp() {
        let x = sample(3000);
        let mut cases: Vec<(Vec<u8>, c_int, bool)> = Vec::new();
        for base in [10, 3, 36, 37, 62, 0] {
            let radix = if base == 0 { 10 } else { base };
            let digits = with_gmp_digits(&x, radix, |d| d.to_vec());
            let text: Vec<u8> = digits.iter().map(|&d| character(d, if radix > 36 { Alphabet::Both } else { Alphabet::Lower })).collect();
            let half = text.len() / 2;
            let spaced = [&b" \t-00 0"[..], &text[..half], b" \n ", &text[half..], b"\n"].concat();
            cases.push((text.clone(), base, true));
            // Base 0 reads a leading 0 as a prefix: GMP's to read.
            cases.push((spaced, base, base != 0));
            cases.push(([&text[..], b"!"].concat(), base, true));
            cases.push(([&text[..half], b"\xa0", &text[half..]].concat(), base, true));
            cases.push((text.to_ascii_uppercase(), base, true));
        }
        for (text, base) in [(&b"0x1f"[..], 0), (b"017", 0), (b"-", 10), (b"- 5", 10), (b"", 10), (b"000", 10), (b"12", 16), (b"12", 1), (b"12", 63)] {
            cases.push((text.to_vec(), base, false));
        }
        for (text, base, ours) in cases {
            let c_text = std::ffi::CString::new(text.clone()).unwrap();
            let mut want = gmp::mpz::Int::new();
            unsafe { embedded::mpz_set_str(want.m(), c"7".as_ptr(), 10) };
            let want_result = unsafe { embedded::mpz_set_str(want.m(), c_text.as_ptr(), base) };
            for levels in 0..4 {
                let mut got = gmp::mpz::Int::new();
                unsafe { embedded::mpz_set_str(got.m(), c"7".as_ptr(), 10) };
                let result = unsafe { read_by_levels(got.m(), &text, base, |_, _| Some(levels)) };
                let what = format!("{:?}... base {base}, {levels} levels", String::from_utf8_lossy(&text[..text.len().min(12)]));
                assert_eq!(result.is_some(), ours, "{what}: read here or by GMP");
                if let Some(result) = result {
                    assert_eq!(result, want_result, "{what}: result");
                    assert!(got.equals(want.limbs(), want.sign() < 0), "{what}: value");
                }
            }
        }
    }

    /// Digits mapped in chunks (white space closed up across them, a
    /// refusal in any chunk) against one pass over the text.
    #[test]
    fn digit_values_in_any_chunks() {
        let text = b" 12 3\t45z 678 9 ".repeat(50);
        for (text, radix) in [(&text[..], 36u32), (&text[..], 10), (&b"123456789"[..], 10)] {
            let table = digit_table(radix);
            let space = |c: u8| unsafe { libc::isspace(c_int::from(c)) } != 0;
            let refused = text.iter().any(|&c| u32::from(table[usize::from(c)]) >= radix && !space(c));
            let want: Vec<u8> = text.iter().filter(|&&c| !space(c)).map(|&c| table[usize::from(c)]).collect();
            for chunk in [1, 2, 7, 64, 1000, 10_000] {
                let got = digit_values_in_chunks(text, radix, chunk);
                assert_eq!(got, (!refused).then(|| want.clone()), "radix {radix}, chunks of {chunk}");
            }
        }
    }

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
