//! Numbers from their digits (GMP's `mpn_set_str`) by products done a
//! whole level of the tree at a time.
//!
//! Divide and conquer, as GMP does: the digits of hi and lo, lo a whole
//! power's worth of them, make hi P + lo, down to small leaves that GMP's
//! own `mpn_set_str` converts (here on several threads). GMP joins one pair
//! at a time, and below its FFT threshold its products run on the CPU on
//! one thread: with GPU products for the upper levels only, GMP's
//! conversion of 10^7 decimal digits was 3.2x its own speed without them
//! (RESULTS.md, "Python: gmpy2, MPFR and mpmath"). Here every pair
//! of a level meets the same power P_j = base^(width 2^j), so the level's
//! high halves are laid side by side, each in a slot of twice P_j's length
//! (a high half times P_j fits it), multiplied by P_j in one product of
//! about twice the whole number's length, and each low half is added into
//! its slot, which is then a number of the next level. No division and no
//! correction: every step is exact by construction. From 32,768 limbs,
//! where a GPU takes the products, the levels are joined on its resident
//! numbers (src/gpu/radix.rs), with leaves of 32 limbs or more.

use super::{gather, levels_for, levels_for_leaves, ms, power, product, square, threads_for, trimmed};
use crate::algorithms::route::{gmp_allocates_by_default, gpu_wanted, internal_on_gpu, route_at};
use crate::config::{self, log};
use crate::gpu::radix::Joins;
use crate::gpu::Gpu;
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::pages::fresh_limbs;
use crate::parallel::each_item;
use crate::stats::{self, Op};
use std::time::Instant;

/// The number whose digits are `digits` (values below `base`, most
/// significant first; leading zeros allowed) in `base` (3 to 256, not a
/// power of 2), trimmed (empty for zero): GMP's `mpn_set_str` in 2^levels
/// leaves joined a level at a time (`levels` 0: GMP's conversion of the
/// whole on this thread). Digits of `base` or more give some number, never
/// a fault (GMP leaves that case undefined).
pub fn number(digits: &[u8], base: u32, levels: u32) -> Vec<mp_limb_t> {
    match number_in(digits, base, levels, fresh_limbs) {
        Ok((mut x, n)) => {
            x.truncate(trimmed(&x[..n]).len());
            x
        }
        Err(x) => x,
    }
}

/// [`number`], but where the device joins the levels the number comes
/// down into `room(n)` (at least n limbs; n the leaves' length, the top
/// ones zeros where the number is shorter): Ok((room, n)); so a caller's
/// `mpz_t` takes its limbs with no copy. Elsewhere Err(the number,
/// trimmed), as `number` gives it.
pub fn number_in<R: AsMut<[mp_limb_t]>>(digits: &[u8], base: u32, levels: u32, room: impl FnOnce(usize) -> R) -> Result<(R, usize), Vec<mp_limb_t>> {
    let len = digits.len();
    let leaves = 1usize << levels;
    if levels == 0 || len < leaves {
        let mut x = vec![0; leaf_room(len)];
        let n = leaf(digits, base, &mut x);
        x.truncate(n);
        return Err(x);
    }
    // Leaves of `width` digits from the least significant end; the first
    // `pad` digits of the padded number are zeros that are not there.
    let width = len.div_ceil(leaves);
    let pad = width * leaves - len;
    let start = Instant::now();
    // powers[j] = base^(width 2^j): a level-j number is below it, and
    // joins the pair (hi, lo) of level j as hi powers[j] + lo.
    let first = power(base, width);
    let slot0 = first.len();
    let mut numbers = fresh_limbs(leaves * slot0);
    // The device squares the powers itself where it joins the levels; the
    // host squares them on a thread of its own while the leaves are
    // converted (the larger squarings wait on the GPU; the leaves keep the
    // cores busy).
    let device = joins_on_device(limbs_of_digits(len, base)).then(|| route_at(Op::Internal, leaves * slot0, true)).flatten();
    let squares = || {
        let powers = squared(&first, levels as usize);
        log!("radix: {len} digits, {leaves} leaves of {width}: powers at {:.3} ms", ms(start));
        powers
    };
    let powers = std::thread::scope(|s| {
        let squaring = device.is_none().then(|| std::thread::Builder::new().spawn_scoped(s, squares).ok()).flatten();
        each_item(&mut numbers, slot0, threads_for(usize::MAX), |i, out| {
            let (from, to) = ((i * width).saturating_sub(pad), ((i + 1) * width).saturating_sub(pad));
            let mut x = vec![0; leaf_room(to - from)];
            let n = leaf(&digits[from..to], base, &mut x);
            // Below base^width, so within the slot, unless a digit was not one.
            let n = n.min(out.len());
            out[..n].copy_from_slice(&x[..n]);
            out[n..].fill(0);
        });
        log!("radix: {leaves} leaves converted at {:.3} ms", ms(start));
        squaring.map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
    });
    if let Some(g) = device {
        let digits_are_digits = || digits.iter().all(|&d| u32::from(d) < base);
        let mut out = room(numbers.len());
        if joined_on_device(g, &numbers, &first, levels as usize, start, digits_are_digits, &mut out.as_mut()[..numbers.len()]) {
            return Ok((out, numbers.len()));
        }
    }
    let powers = powers.unwrap_or_else(squares);
    Err(joined_on_host(numbers, &powers, start))
}

/// Numbers of this many limbs and more have their levels joined on the
/// device's resident numbers where a GPU takes the conversion's products.
/// Against the levels joined from host products, `mpz_set_str` of 10^7
/// digits took 13.2 to 13.6 ms against 27.6 to 31.0, of 131,072 limbs 5.0
/// to 5.2 against 9.8 to 10.0, of 32,768 2.0 to 2.6 against 2.8 to 3.7,
/// and of 16,384 and 24,576 limbs the same or slower (RESULTS.md, "Radix
/// conversion from digits").
const JOINS_ON_DEVICE_FROM: usize = 32768;

/// Leaves of at least this many limbs where the device joins the levels
/// (`radix::levels_for`'s 128 elsewhere): the leaves are GMP's quadratic
/// conversion on the host's threads, the two levels more are device
/// products. `mpz_set_str` of 10^7 digits 9.1 to 9.4 ms against 10.5 to
/// 11.2 with leaves of 128 limbs or more, of 262,144 limbs 6.3 to 6.8
/// against 6.6 to 7.6, from 32,768 to 131,072 limbs the same within the
/// spread (RESULTS.md, "Radix conversion from digits").
const DEVICE_LEAF_LIMBS: usize = 32;

/// Whether a number of `limbs` limbs has its levels joined on the device
/// where a GPU takes its products (`number`; its leaves' size,
/// `set_str_levels_on_gpu`).
fn joins_on_device(limbs: usize) -> bool {
    limbs >= JOINS_ON_DEVICE_FROM
}

/// The levels joined on `g`'s resident numbers (src/gpu/radix.rs), the
/// powers squared there from `first`, into `out` (the leaves' length, the
/// top limbs zeros where the number is shorter): the leaves go up once and
/// the number comes down once. False where the device failed: the host
/// joins them then, from the same leaves.
fn joined_on_device(g: &Gpu, numbers: &[mp_limb_t], first: &[mp_limb_t], levels: usize, start: Instant, digits_are_digits: impl FnOnce() -> bool, out: &mut [mp_limb_t]) -> bool {
    stats::gpu_attempt_starts();
    let at = Instant::now();
    if let Err(e) = g.join_levels(&Joins { leaves: numbers, first, levels }, out) {
        stats::fallback(Op::SetStr, e.fallback());
        log!("radix: GPU failed joining the levels ({e}); joining them on the host");
        return false;
    }
    stats::gpu_call(Op::SetStr, numbers.len(), at.elapsed());
    log!("radix: {levels} levels joined on the device in {:.3} ms, at {:.3} ms", ms(at), ms(start));
    // Digits that are not digits (GMP: undefined) give some number either
    // way, not necessarily the same.
    if config::get().check && digits_are_digits() {
        // The device's products were not checked one by one: the host's
        // levels from the same leaves.
        let host = joined_on_host(numbers.to_vec(), &squared(first, levels), start);
        if host[..] != *trimmed(out) {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's radix conversion of {} limbs differs from the host's; aborting", numbers.len());
            std::process::abort();
        }
    }
    true
}

/// The levels joined on the host, each level's products as one product
/// (the GPU's where it takes it), its sums on threads.
fn joined_on_host(mut numbers: Vec<mp_limb_t>, powers: &[Vec<mp_limb_t>], start: Instant) -> Vec<mp_limb_t> {
    let levels = powers.len();
    let slot0 = powers[0].len();
    let leaves = 1usize << levels;
    // Level j's numbers sit slot(j) limbs apart, most significant first:
    // the leaves at powers[0]'s length (each below it), level j + 1 at
    // twice powers[j]'s (a high half times powers[j], plus a low half,
    // stays below powers[j]^2).
    let slot = |j: usize| {
        if j == 0 {
            slot0
        } else {
            2 * powers[j - 1].len()
        }
    };
    let count = |j: usize| leaves >> j;
    // Every buffer at its largest once (huge pages where large), touched
    // first by the threads or the download that fill it: the leaves' (a
    // power is at most twice as long as the one before, so every level fits
    // where its leaves did).
    let most = numbers.len();
    debug_assert!((0..=levels).all(|j| count(j) * slot(j) <= most));
    let mut joined = fresh_limbs(most);
    let mut highs = fresh_limbs(most);
    // The high halves of a level, each at the start of a slot of twice its
    // power's length, zeros between: their products by the power do not
    // overlap. Level 0's are gathered from the leaves; each later level's
    // are copied there as its sums are made.
    let k0 = powers[0].len();
    gather(&mut highs[..count(1) * 2 * k0], 2 * k0, k0, &numbers, 2 * slot0, 0, threads_for(most));
    for j in 0..levels {
        let (k, from, to) = (powers[j].len(), slot(j), slot(j + 1));
        let pairs = count(j + 1);
        let len = pairs * to;
        let threads = threads_for(len);
        let level_start = Instant::now();
        // The last slot's upper half is zeros: left out of the product.
        product(&mut joined[..len], &highs[..len - k], &powers[j]);
        let multiplied = ms(level_start);
        // The next level's high halves (its even numbers) go to `highs`, a
        // slot of twice the next power's length each: disjoint per pair of
        // this level's sums.
        let next_apart = if j + 1 < levels { 2 * powers[j + 1].len() } else { 0 };
        let next_highs = SharedLimbs(highs.as_mut_ptr());
        let lows = &numbers;
        each_item(&mut joined[..len], 2 * to, threads, |m, two| {
            for (half, out) in two.chunks_mut(to).enumerate() {
                let i = 2 * m + half;
                let low = &lows[(2 * i + 1) * from..][..k];
                // hi powers[j] + lo < powers[j]^2 fits 2k limbs: no carry
                // out, unless a digit was not one.
                // SAFETY: out holds 2k limbs, low k; GMP adds in place.
                unsafe {
                    let c = embedded::mpn_add_n(out.as_mut_ptr(), out.as_ptr(), low.as_ptr(), k as mp_size_t);
                    if c != 0 {
                        embedded::mpn_add_1(out.as_mut_ptr().add(k), out.as_ptr().add(k), k as mp_size_t, c);
                    }
                }
                if half == 0 && next_apart > 0 {
                    // SAFETY: slot m of next_apart limbs, m < pairs / 2, lies
                    // within highs (a level's layout fits `most`) and is this
                    // item's alone; next_apart >= 4k - 2 >= to.
                    let high = unsafe { std::slice::from_raw_parts_mut(next_highs.at(m * next_apart), next_apart) };
                    high[..to].copy_from_slice(out);
                    high[to..].fill(0);
                }
            }
        });
        std::mem::swap(&mut numbers, &mut joined);
        log!(
            "radix: level {} joined into {pairs} numbers of {to} limbs at {:.3} ms (product {multiplied:.3}, sums {:.3})",
            j + 1,
            ms(start),
            ms(level_start) - multiplied
        );
    }
    numbers.truncate(trimmed(&numbers[..slot(levels)]).len());
    log!("radix: {leaves} leaves joined on the host at {:.3} ms", ms(start));
    numbers
}

/// `first`, its square, the square of that, ...: `levels` powers.
fn squared(first: &[mp_limb_t], levels: usize) -> Vec<Vec<mp_limb_t>> {
    let mut powers = vec![first.to_vec()];
    for j in 1..levels {
        let next = square(&powers[j - 1]);
        powers.push(next);
    }
    powers
}

/// A level's `highs`, written by the threads of its sums, each its own
/// slots.
#[derive(Clone, Copy)]
struct SharedLimbs(*mut mp_limb_t);

// SAFETY: the threads write disjoint slots and the buffer outlives them
// (each_item joins them before it returns).
unsafe impl Send for SharedLimbs {}
unsafe impl Sync for SharedLimbs {}

impl SharedLimbs {
    /// The limb at `offset`.
    ///
    /// # Safety
    /// `offset` within the buffer.
    unsafe fn at(self, offset: usize) -> *mut mp_limb_t {
        unsafe { self.0.add(offset) }
    }
}

/// Limbs GMP's `mpn_set_str` may write for `len` digits of any value below
/// 256 (its own bound for the base, plus what digits that are not digits
/// could add): 8 bits a digit and a limb more.
fn leaf_room(len: usize) -> usize {
    len.div_ceil(8) + 2
}

/// `digits` by GMP's conversion into `out` (`leaf_room(digits.len())`
/// limbs): the number's length, trimmed.
fn leaf(digits: &[u8], base: u32, out: &mut [mp_limb_t]) -> usize {
    // GMP's rule: a nonzero first digit gives a trimmed result.
    let digits = &digits[digits.iter().take_while(|&&d| d == 0).count()..];
    if digits.is_empty() {
        return 0;
    }
    assert!(out.len() >= leaf_room(digits.len()), "a leaf of radix conversion without room");
    // SAFETY: digits non-empty, its first nonzero; out holds GMP's bound
    // for them (leaf_room) and overlaps nothing.
    let n = unsafe { embedded::mpn_set_str(out.as_mut_ptr(), digits.as_ptr(), digits.len(), base as libc::c_int) };
    n as usize
}

/// The limbs `len` digits in `base` make at most (the operation's size for
/// the routing; `base` 2 to 256).
pub fn limbs_of_digits(len: usize, base: u32) -> usize {
    (len as f64 * f64::from(base.max(2)).log2() / 64.0).ceil() as usize
}

/// Limbs that GMP's contract for `mpn_set_str` guarantees at its result:
/// room for the largest number of `len` digits in `base` (3 to 256, not a
/// power of 2; c = ceil(len log2(base) / 64) limbs) and a limb more. This
/// is c or c + 1: the logarithm's rounding can only make it smaller, and c
/// is never a whole len log2(base) / 64 (log2(base) is irrational).
pub fn room_for_digits(len: usize, base: u32) -> usize {
    (len as f64 * f64::from(base.max(2)).log2() / 64.0 * (1.0 - 1e-12)).floor() as usize + 2
}

/// The levels radix conversion joins `len` digits in `base` by on the GPU:
/// where GMP's internal products of the number's size go to the GPU, only
/// with GMP's own allocation functions (its code then runs on other
/// threads too), bases that are not powers of two (GMP converts those in
/// linear time), and numbers of at least two leaves. None: GMP's own
/// conversion.
pub fn set_str_levels_on_gpu(len: usize, base: u32) -> Option<u32> {
    let n = limbs_of_digits(len, base);
    let levels = if joins_on_device(n) { levels_for_leaves(n, DEVICE_LEAF_LIMBS) } else { levels_for(n) };
    let wanted =
        levels > 0 && gpu_wanted(Op::SetStr, n) && (3..=256).contains(&base) && !base.is_power_of_two() && gmp_allocates_by_default() && internal_on_gpu(n);
    wanted.then_some(levels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::radix::digits;
    use crate::gpu::resident::pseudo_random;

    /// GMP's own conversion of `d` (the embedded GMP's mpn_set_str, not the hook).
    fn gmp_number(d: &[u8], base: u32) -> Vec<mp_limb_t> {
        let mut x = vec![0; leaf_room(d.len())];
        let n = leaf(d, base, &mut x);
        x.truncate(n);
        x
    }

    fn check(d: &[u8], base: u32, what: &str) {
        let want = gmp_number(d, base);
        for levels in 0..=5 {
            let got = number(d, base, levels);
            assert!(got == want, "{what}: base {base}, {} digits, {levels} levels: {} limbs against GMP's {}", d.len(), got.len(), want.len());
        }
    }

    #[test]
    fn levels_match_gmp() {
        for base in [3u32, 7, 10, 36, 62, 255] {
            for n in [1usize, 2, 5, 17, 100, 1000, 3000] {
                // Digits of random numbers, of all-ones numbers, and runs of
                // the largest digit and of zeros (the leaves' edges).
                let x = pseudo_random(n, n as u64 * 31 + u64::from(base));
                check(&digits(&x, base, 0), base, "random");
                check(&digits(&vec![mp_limb_t::MAX; n], base, 0), base, "all ones");
                let len = (64 * n) / 8 + 1;
                let top = (base - 1) as u8;
                check(&vec![top; len], base, "base^len - 1");
                let mut one_zeros = vec![0u8; len];
                one_zeros[0] = 1;
                check(&one_zeros, base, "base^(len - 1)");
                let mut ends = vec![0u8; len];
                ends[0] = top;
                ends[len - 1] = 1;
                check(&ends, base, "zeros between two digits");
                let mut leading = vec![0u8; 40];
                leading.extend(digits(&x, base, 0));
                check(&leading, base, "leading zeros");
            }
        }
        assert!(number(&[0], 10, 0).is_empty());
        for (len, base) in [(1usize, 10u32), (19, 10), (20, 10), (1000, 3), (10_000_000, 10), (77, 255)] {
            let biggest = number(&vec![(base - 1) as u8; len.min(30_000)], base, 0).len();
            let room = room_for_digits(len, base);
            assert!(len > 30_000 || (biggest..=biggest + 1).contains(&room), "{len} digits in base {base}: room {room}, the largest number {biggest} limbs");
        }
        assert!(number(&[0; 5000], 10, 3).is_empty());
    }

    /// Digits that are not digits (GMP: undefined) give some number
    /// without a fault.
    #[test]
    fn bad_digits_do_not_fault() {
        let d = vec![255u8; 20_000];
        for levels in 0..=4 {
            let x = number(&d, 10, levels);
            assert!(x.len() <= leaf_room(d.len()));
        }
    }
}
