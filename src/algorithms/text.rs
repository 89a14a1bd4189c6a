//! Numbers to and from text: `mpz_get_str`, `mpz_set_str` and
//! `mpf_get_str`.
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
//! `mpf_get_str` of a number long enough for radix conversion by whole
//! levels is GMP 6.3's own method (mpf/get_str.c), step for step: the same
//! power of the base, product, digits, rounding and exponent. Its products
//! are routed as GMP's internal ones, its digits come from the levels
//! straight into their buffer, and its characters are written on threads:
//! GMP's own loop maps one byte a step into a block just allocated, 10^8 of
//! them at pi.c's 10^8 digits. Other numbers, and those whose integer part
//! is longer than the digits asked for (GMP divides by a power there), are
//! GMP's own function.
//!
//! # Safety
//! Every `pub unsafe fn` here takes its pointers as GMP's function of the
//! same name takes them. That one contract is stated here, not per function.
#![allow(clippy::missing_safety_doc)]

use super::product::own_product;
use super::radix;
use super::route::{cpu_only, route, slow_from};
use crate::config::log;
use crate::gmp::{self, embedded, mp_exp_t, mp_limb_t, mp_size_t, mpf_srcptr, mpz_ptr, mpz_srcptr};
use crate::pages::{fresh_limbs, prefer_huge_pages};
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
        let start = std::time::Instant::now();
        let Some(digits) = digit_values(body, radix) else {
            return -1;
        };
        log!("mpz_set_str {} digits base {radix}: {} leaves; digits read in {:.3} ms", digits.len(), 1usize << levels, start.elapsed().as_secs_f64() * 1e3);
        // Where the device joins the levels, the number comes down into
        // rop's new limbs (a pinned block where the pool keeps one): no
        // copy, and the download is a DMA alone.
        match radix::number_in(&digits, radix, levels, gmp::mpz::FreshLimbs::pinned_or_allocated) {
            // SAFETY: rop is an initialised mpz_t (the caller's contract);
            // the room's first n limbs hold the number.
            Ok((room, n)) => unsafe { room.give_to(rop, n, negative) },
            // SAFETY: as above; x is ours.
            Err(x) => unsafe { gmp::mpz::store(rop, &x, negative) },
        }
        log!("mpz_set_str {} digits base {radix}: stored at {:.3} ms", digits.len(), start.elapsed().as_secs_f64() * 1e3);
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
        // Digits only (the common case): a pass with no branch an element
        // (for bases up to 10 the compiler vectorises it: paddb and pmaxub
        // on sixteen bytes); white space or a bad character sends the
        // chunk through the loop below.
        let mut worst = 0u8;
        if radix <= 10 {
            // c - '0' is below the radix for the digits and no other character.
            for (d, &c) in out.iter_mut().zip(from) {
                *d = c.wrapping_sub(b'0');
                worst = worst.max(*d);
            }
        } else {
            for (d, &c) in out.iter_mut().zip(from) {
                *d = table[usize::from(c)];
                worst = worst.max(*d);
            }
        }
        if u32::from(worst) < radix {
            kept[i].store(from.len(), Relaxed);
            return;
        }
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

/// Whether `mpf_get_str` of `u` goes straight to the embedded GMP: its
/// precision is below the sizes radix conversion by levels takes (it
/// converts at most about that many limbs).
#[inline(always)]
pub unsafe fn mpf_get_str_on_cpu(u: mpf_srcptr) -> bool {
    // SAFETY: u is an initialised mpf_t (GMP's contract).
    cpu_only(Op::GetStr, unsafe { (*u)._mp_prec }.unsigned_abs() as usize + 2)
}

/// The high limb of a * b (GMP's umul_ppmm, high half).
fn mul_high(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// `mpf_get_str` (GMP's arguments, GMP's results): GMP 6.3's method where
/// the number is long and its integer part short, else GMP's own function
/// (the module's comment).
pub unsafe fn mpf_get_str(dbuf: *mut c_char, exp: *mut mp_exp_t, base: c_int, n_digits: usize, u: mpf_srcptr) -> *mut c_char {
    unsafe { mpf_get_str_by(dbuf, exp, base, n_digits, u, radix::levels_on_gpu) }
}

/// `mpf_get_str` with `levels` saying where radix conversion by levels
/// takes a number of so many limbs in a base, and in how many levels (the
/// tests take it on the CPU).
unsafe fn mpf_get_str_by(dbuf: *mut c_char, exp: *mut mp_exp_t, base: c_int, n_digits: usize, u: mpf_srcptr, levels: impl Fn(usize, c_int) -> Option<u32>) -> *mut c_char {
    let gmp = || unsafe { embedded::mpf_get_str(dbuf, exp, base, n_digits, u) };
    let Some((radix, alphabet)) = digit_characters(base) else { return gmp() };
    // SAFETY: u is an initialised mpf_t (GMP's contract).
    let (prec, size, ue) = unsafe { ((*u)._mp_prec, (*u)._mp_size, (*u)._mp_exp) };
    // SAFETY: GMP's constant table of the bases, read only (radix is 2 to 62).
    let bases = unsafe { &embedded::__gmpn_bases[radix as usize] };
    if size == 0 || prec < 1 || (radix as u32).is_power_of_two() {
        return gmp();
    }
    // MPF_SIGNIFICANT_DIGITS: the precision's digits, less its top limb, + 2.
    let max_digits = mul_high(bases.logb2, 64u64.wrapping_mul(prec as u64 - 1)) as usize + 2;
    let n_digits = if n_digits == 0 || n_digits > max_digits { max_digits } else { n_digits };
    // LIMBS_PER_DIGIT_IN_BASE: the limbs that many digits need, rounded up.
    let needed = (8 * mul_high(bases.log2b, n_digits as u64) / 64 + 2) as usize;
    // GMP divides by a power of the base where the integer part is longer.
    if ue > needed as mp_exp_t || levels(needed, radix).is_none() {
        return gmp();
    }
    route(Op::GetStr, needed, false);
    log!("mpf_get_str {needed} limbs base {radix}");
    // SAFETY: |size| limbs at _mp_d (GMP's contract).
    let all = unsafe { std::slice::from_raw_parts((*u)._mp_d, size.unsigned_abs() as usize) };
    let up = &all[all.len().saturating_sub(needed)..];
    // The number times base^e has an integer part of `needed` digits' limbs.
    let more = (needed as mp_exp_t).wrapping_sub(ue) as u64;
    let e = mul_high(bases.logb2, 64u64.wrapping_mul(more));
    let (pp, ign) = power_high_part(radix as mp_limb_t, e, needed + 1);
    let mut tp = fresh_limbs(2 * needed + 4);
    let (un, pn) = (up.len(), pp.len());
    own_product(&mut tp[..un + pn], up, &pp, "mpf_get_str's product");
    let mut tn = un + pn;
    tn -= usize::from(tp[tn - 1] == 0);
    let mut off = (un as mp_exp_t).wrapping_sub(ue).wrapping_sub(ign as mp_exp_t);
    if off < 0 {
        let by = off.unsigned_abs() as usize;
        if tn + by > tp.len() {
            return gmp();
        }
        tp.copy_within(..tn, by);
        tp[..by].fill(0);
        tn += by;
        off = 0;
    }
    if off as usize >= tn {
        // Not reached for any exponent an mpf_t can have (GMP's own bounds).
        return gmp();
    }
    let x = &tp[off as usize..tn];
    let mut tstr = match levels(x.len(), radix) {
        Some(levels) => {
            let leaves = radix::split(x, radix as u32, levels);
            let mut digits = vec![0u8; leaves.digit_count()];
            leaves.write(&mut digits, |d| d);
            digits
        }
        // (x's top limb is not zero: GMP's own conversion takes it as it is.)
        None => with_gmp_digits(x, radix, |d| d.to_vec()),
    };
    let mut computed = tstr.len();
    let mut exp_in_base = (computed as mp_exp_t).wrapping_sub(e as mp_exp_t);
    // Rounded at n_digits: up where the next digit is at least half the base,
    // carrying through digits of base - 1.
    let mut n_digits = n_digits;
    if computed > n_digits && u32::from(tstr[n_digits]) * 2 >= radix as u32 {
        computed = n_digits;
        let mut i = n_digits - 1;
        loop {
            tstr[i] += 1;
            if u32::from(tstr[i]) != radix as u32 {
                break;
            }
            computed -= 1;
            if i == 0 {
                tstr[0] = 1;
                computed = 1;
                exp_in_base += 1;
                break;
            }
            i -= 1;
        }
    }
    n_digits = n_digits.min(computed);
    while n_digits != 0 && tstr[n_digits - 1] == 0 {
        n_digits -= 1;
    }
    // SAFETY: exp is writable (GMP's contract); the text goes into dbuf
    // (n_digits + 2 bytes by GMP's contract) or a block of strlen + 1.
    unsafe {
        *exp = exp_in_base;
        write_text(dbuf, &tstr[..n_digits], size < 0, alphabet)
    }
}

/// GMP's `mpn_pow_1_highpart` (mpf/get_str.c): base^e's most significant
/// limbs, at most `prec` of them, by squarings each cut to `prec` limbs, and
/// the count of low limbs left out.
fn power_high_part(base: mp_limb_t, e: u64, prec: usize) -> (Vec<mp_limb_t>, usize) {
    if e == 0 {
        return (vec![1], 0);
    }
    let mut r = vec![base];
    let mut ign = 0usize;
    for i in (0..63 - e.leading_zeros()).rev() {
        let rn = r.len();
        let mut t = vec![0; 2 * rn];
        own_product(&mut t, &r, &r, "mpf_get_str's power");
        t.truncate(2 * rn - usize::from(t[2 * rn - 1] == 0));
        ign <<= 1;
        if t.len() > prec {
            let cut = t.len() - prec;
            ign += cut;
            t.drain(..cut);
        }
        r = t;
        if (e >> i) & 1 == 1 {
            let n = r.len();
            // SAFETY: n limbs in place (GMP's mul_1 allows rp == up).
            let carry = unsafe { embedded::mpn_mul_1(r.as_mut_ptr(), r.as_ptr(), n as mp_size_t, base) };
            if carry != 0 {
                r.push(carry);
            }
        }
    }
    if r.len() > prec {
        let cut = r.len() - prec;
        ign += cut;
        r.drain(..cut);
    }
    (r, ign)
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
    // Written in full, on threads where large.
    prefer_huge_pages(text.as_mut_ptr(), size);
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

    /// `mpf_get_str` by GMP's method with its digits by levels (on the CPU
    /// here, 1 to 3 levels) against the embedded GMP's own, of the number
    /// `limbs` (most significant last) at exponent `ue` with precision
    /// `prec`, in `base`, `n_digits` asked: the same text, the same
    /// exponent, into a block of strlen + 1 and into the caller's buffer.
    /// Returns whether GMP's method ran (not GMP's own function).
    fn mpf_against_gmp(limbs: &[mp_limb_t], prec: c_int, ue: mp_exp_t, negative: bool, base: c_int, n_digits: usize) -> bool {
        let size = if negative { -(limbs.len() as c_int) } else { limbs.len() as c_int };
        let u = crate::gmp::__mpf_struct { _mp_prec: prec, _mp_size: size, _mp_exp: ue, _mp_d: limbs.as_ptr() as *mut mp_limb_t };
        let ran = std::cell::Cell::new(false);
        let levels = |n: usize, _base: c_int| {
            ran.set(true);
            Some(radix::levels_for(n).clamp(1, 3))
        };
        let what = format!("{} limbs, prec {prec}, exp {ue}, negative {negative}, base {base}, {n_digits} digits", limbs.len());
        // SAFETY: u views `limbs`; the strings are GMP's blocks of strlen + 1
        // or buffers of n_digits + 2 bytes (GMP's contract).
        unsafe {
            let (mut want_exp, mut got_exp) = (0, 0);
            let want = embedded::mpf_get_str(std::ptr::null_mut(), &mut want_exp, base, n_digits, &u);
            let want_text = std::ffi::CStr::from_ptr(want).to_owned();
            (embedded::__gmp_free_func)(want as *mut libc::c_void, want_text.as_bytes().len() + 1);
            let got = mpf_get_str_by(std::ptr::null_mut(), &mut got_exp, base, n_digits, &u, levels);
            assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "{what}");
            assert_eq!(got_exp, want_exp, "exponent: {what}");
            (embedded::__gmp_free_func)(got as *mut libc::c_void, want_text.as_bytes().len() + 1);
            let room = if n_digits == 0 { want_text.as_bytes().len() + 2 } else { n_digits + 2 };
            let mut buffer = vec![1 as c_char; room];
            got_exp = 0;
            let got = mpf_get_str_by(buffer.as_mut_ptr(), &mut got_exp, base, n_digits, &u, levels);
            assert_eq!(got, buffer.as_mut_ptr(), "the caller's buffer comes back");
            assert_eq!(std::ffi::CStr::from_ptr(got), want_text.as_c_str(), "into the caller's buffer: {what}");
            assert_eq!(got_exp, want_exp, "exponent, caller's buffer: {what}");
        }
        ran.get()
    }

    #[test]
    fn mpf_text_matches_gmp() {
        let mut method = 0;
        for (n, prec) in [(300usize, 299), (301, 300), (700, 800), (40, 60)] {
            let limbs = sample(n);
            for ue in [1, 0, -5, 3, 200, 350, 2000] {
                for (base, n_digits) in [(10, 0), (10, 1), (10, 7), (10, 3000), (3, 0), (36, 500), (37, 0), (62, 100), (-10, 0), (-36, 40), (0, 0), (1, 9), (7, 1234), (16, 0), (2, 100)] {
                    for negative in [false, true] {
                        method += usize::from(mpf_against_gmp(&limbs, prec as c_int, ue, negative, base, n_digits));
                    }
                }
            }
        }
        // 1 - B^-k is 0.99...9 in every base: rounding carries to 1, and the
        // exponent goes up.
        let ones = vec![mp_limb_t::MAX; 200];
        for (base, n_digits) in [(10, 50), (10, 0), (3, 700), (62, 9)] {
            method += usize::from(mpf_against_gmp(&ones, 199, 0, false, base, n_digits));
        }
        // Powers of two, one limb: short digit strings, trailing zeros.
        for ue in [1, 0, -1, -40] {
            method += usize::from(mpf_against_gmp(&[1 << 20], 200, ue, true, 10, 0));
        }
        // Bases GMP refuses: NULL both ways.
        let limbs = sample(300);
        let u = crate::gmp::__mpf_struct { _mp_prec: 300, _mp_size: 300, _mp_exp: 1, _mp_d: limbs.as_ptr() as *mut mp_limb_t };
        for base in [63, -37, 100] {
            let mut e = 0;
            assert!(unsafe { mpf_get_str_by(std::ptr::null_mut(), &mut e, base, 0, &u, |_, _| Some(2)) }.is_null(), "base {base}");
        }
        assert!(method > 300, "GMP's method ran in only {method} cases");
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
