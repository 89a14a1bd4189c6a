//! Radix conversion of large numbers both ways, a whole level of the
//! divide-and-conquer tree at a time: to digits (GMP's `mpn_get_str`,
//! [`to_digits`]) and from them (GMP's `mpn_set_str`, [`from_digits`]).
//!
//! Both cut a number into 2^L leaves of one width in digits, which GMP's own
//! conversion handles on several threads, and join or split the levels
//! between by the powers base^(width 2^j), each the square of the one
//! before. Every number of a level meets the same power, so the level's
//! products are laid side by side, each in a slot wide enough that they do
//! not overlap, and made as one product of about the whole number's length:
//! on the GPU where it takes GMP's internal products, however small the
//! numbers of the level are. This file holds what both directions share:
//! the levels and leaves, the powers, and limb arithmetic on slices.
//!
//! GMP's conversion runs on other threads only while its allocation
//! functions are its own, thread safe defaults (a program's own allocator,
//! e.g. one that needs a lock the caller holds, sees only calls from the
//! calling thread, as with GMP): the callers' `*_on_gpu` ask
//! `gmp_allocates_by_default`.

mod from_digits;
mod to_digits;

pub use from_digits::{limbs_of_digits, number, number_in, room_for_digits, set_str_levels_on_gpu};
pub use to_digits::{levels_on_gpu, split, Leaves};
#[cfg(test)]
pub use to_digits::digits;

use super::product::own_product;
use crate::config;
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::parallel::{self, each_item};
use std::time::Instant;

/// Most splits `CUGMP_RADIX_LEVELS` may ask for (2^24 leaves).
const MAX_LEVELS: u32 = 24;
/// Leaves hold at least this many limbs. GMP's conversion costs per limb
/// about 0.07 us at 128 limbs, 0.095 at 256, 0.18 at 1024 (one core of the
/// build machine, GMP 6.3): smaller leaves cost less on the CPU and one more
/// level (two products) on the GPU.
const MIN_LEAF_LIMBS: usize = 128;
/// Most threads for the host's share of a level and for the leaves.
const MAX_THREADS: usize = 16;
/// Limbs of work that make a thread worth starting.
const LIMBS_PER_THREAD: usize = 1 << 15;

/// Milliseconds since `start` (CUGMP_LOG's phase times).
fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// `x` without its zero limbs at the top.
fn trimmed(x: &[mp_limb_t]) -> &[mp_limb_t] {
    let n = x.len() - x.iter().rev().take_while(|&&l| l == 0).count();
    &x[..n]
}

/// Slot i of `out` (`apart` limbs each) = limbs `offset .. offset + len` of
/// slot i of `from` (`from_apart` each), zeros after them: on `threads`
/// threads in runs of whole limbs, not whole slots, so that a level of one
/// or two numbers is copied on as many threads as one of thousands.
fn gather(out: &mut [mp_limb_t], apart: usize, len: usize, from: &[mp_limb_t], from_apart: usize, offset: usize, threads: usize) {
    let run = out.len().div_ceil(threads).max(1);
    each_item(out, run, threads, |t, chunk| {
        let start = t * run;
        let mut at = start;
        while at < start + chunk.len() {
            let (i, within) = (at / apart, at % apart);
            let end = ((i + 1) * apart).min(start + chunk.len());
            let piece = &mut chunk[at - start..end - start];
            // The slot's limbs within..within + piece.len(): data below len.
            let data = len.saturating_sub(within).min(piece.len());
            if data > 0 {
                piece[..data].copy_from_slice(&from[i * from_apart + offset + within..][..data]);
            }
            piece[data..].fill(0);
            at = end;
        }
    });
}


/// Threads for `limbs` limbs of copying: one per LIMBS_PER_THREAD, at most
/// one a core and MAX_THREADS.
fn threads_for(limbs: usize) -> usize {
    parallel::cores().min(MAX_THREADS).min(limbs / LIMBS_PER_THREAD + 1)
}

/// `out = a * b` (out: a.len() + b.len() limbs, all written; a and b non-empty).
fn product(out: &mut [mp_limb_t], a: &[mp_limb_t], b: &[mp_limb_t]) {
    own_product(out, a, b, "radix conversion's product");
}

/// base^e (e >= 1), trimmed, by squarings and multiplications by the base.
fn power(base: u32, e: usize) -> Vec<mp_limb_t> {
    let mut p: Vec<mp_limb_t> = vec![mp_limb_t::from(base)];
    for bit in (0..usize::BITS - 1 - e.leading_zeros()).rev() {
        p = square(&p);
        if (e >> bit) & 1 == 1 {
            let n = p.len();
            let ptr = p.as_mut_ptr();
            // SAFETY: p has n limbs; GMP's mul_1 may work in place.
            let carry = unsafe { embedded::mpn_mul_1(ptr, ptr, n as mp_size_t, mp_limb_t::from(base)) };
            if carry != 0 {
                p.push(carry);
            }
        }
    }
    p
}

/// x^2, trimmed (`x` trimmed, non-empty).
fn square(x: &[mp_limb_t]) -> Vec<mp_limb_t> {
    let mut s = vec![0; 2 * x.len()];
    product(&mut s, x, x);
    s.truncate(trimmed(&s).len());
    s
}


/// x < y, both of y.len() limbs.
fn less(x: &[mp_limb_t], y: &[mp_limb_t]) -> bool {
    x.iter().rev().cmp(y.iter().rev()) == std::cmp::Ordering::Less
}

/// x -= y (y no longer than x): the borrow out (GMP's mpn_sub).
fn sub_assign(x: &mut [mp_limb_t], y: &[mp_limb_t]) -> mp_limb_t {
    carry_through(x, y, embedded::mpn_sub_n, embedded::mpn_sub_1)
}

/// x = (x op y) mod B^x.len() with GMP's `n` (y.len() limbs) and `one` (the
/// carry or borrow through the rest) functions: the carry or borrow out.
fn carry_through(
    x: &mut [mp_limb_t],
    y: &[mp_limb_t],
    n: unsafe extern "C" fn(*mut mp_limb_t, *const mp_limb_t, *const mp_limb_t, mp_size_t) -> mp_limb_t,
    one: unsafe extern "C" fn(*mut mp_limb_t, *const mp_limb_t, mp_size_t, mp_limb_t) -> mp_limb_t,
) -> mp_limb_t {
    let (xn, yn) = (x.len(), y.len());
    assert!(yn <= xn, "carry_through: {yn} limbs into {xn}");
    if yn == 0 {
        return 0;
    }
    let xp = x.as_mut_ptr();
    // SAFETY: x holds xn >= yn >= 1 limbs, y yn; GMP's functions work in
    // place (rp == up).
    unsafe {
        let c = n(xp, xp, y.as_ptr(), yn as mp_size_t);
        if c != 0 && xn > yn { one(xp.add(yn), xp.add(yn), (xn - yn) as mp_size_t, c) } else { c }
    }
}

/// out = (x - y) mod B^out.len() (all three of one length, not empty), in
/// one pass.
fn sub_into(out: &mut [mp_limb_t], x: &[mp_limb_t], y: &[mp_limb_t]) {
    assert!(!out.is_empty() && x.len() == out.len() && y.len() == out.len(), "sub_into takes slices of one length");
    // SAFETY: three slices of out.len() >= 1 limbs; out overlaps neither.
    unsafe { embedded::mpn_sub_n(out.as_mut_ptr(), x.as_ptr(), y.as_ptr(), out.len() as mp_size_t) };
}

/// x += y, x growing by the carry out (GMP's mpn_add).
fn add_assign(x: &mut Vec<mp_limb_t>, y: &[mp_limb_t]) {
    if x.len() < y.len() {
        x.resize(y.len(), 0);
    }
    if carry_through(x, y, embedded::mpn_add_n, embedded::mpn_add_1) != 0 {
        x.push(1);
    }
}

/// x += 1 in place (the caller knows it does not carry out).
fn increment(x: &mut [mp_limb_t]) {
    for xi in x.iter_mut() {
        *xi = xi.wrapping_add(1);
        if *xi != 0 {
            break;
        }
    }
}

/// Splits for a number of `limbs` limbs: as many as leave leaves of at
/// least MIN_LEAF_LIMBS, at most `CUGMP_RADIX_LEVELS`.
pub fn levels_for(limbs: usize) -> u32 {
    levels_for_leaves(limbs, MIN_LEAF_LIMBS)
}

/// `levels_for` with leaves of at least `min_leaf` limbs.
fn levels_for_leaves(limbs: usize, min_leaf: usize) -> u32 {
    let wanted = config::get().radix_levels.map_or(MAX_LEVELS, |l| l.min(MAX_LEVELS as usize) as u32);
    let mut levels = 0;
    while levels < wanted && limbs >> (levels + 1) >= min_leaf {
        levels += 1;
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::resident::pseudo_random;

    #[test]
    fn levels_leave_leaves_of_min_size() {
        assert_eq!(levels_for(2 * MIN_LEAF_LIMBS - 1), 0);
        assert_eq!(levels_for(2 * MIN_LEAF_LIMBS), 1);
        for n in [2 * MIN_LEAF_LIMBS, 5 * MIN_LEAF_LIMBS, 1_000_000, 1 << 30] {
            let levels = levels_for(n);
            assert!(n >> levels >= MIN_LEAF_LIMBS && n >> (levels + 1) < MIN_LEAF_LIMBS, "{levels} levels for {n} limbs");
        }
    }

    /// gather's runs of limbs, on any number of threads, against slot by slot.
    #[test]
    fn gather_copies_each_item() {
        let (count, from_apart, apart, offset, len) = (7usize, 17usize, 19usize, 5usize, 11usize);
        let from = pseudo_random(count * from_apart, 3);
        let mut want = vec![0; count * apart];
        for i in 0..count {
            want[i * apart..][..len].copy_from_slice(&from[i * from_apart + offset..][..len]);
        }
        for threads in 1..=40 {
            let mut out = vec![mp_limb_t::MAX; count * apart];
            gather(&mut out, apart, len, &from, from_apart, offset, threads);
            assert_eq!(out, want, "{threads} threads");
        }
    }
}
