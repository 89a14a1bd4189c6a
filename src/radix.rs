//! Radix conversion of large numbers (GMP's `mpn_get_str`) in independent
//! pieces on several threads.
//!
//! GMP converts by divide and conquer: it divides by a power of the base
//! about the square root of the number, converts quotient and remainder, and
//! so on down. Its products reach the GPU through the hooks, but only the
//! large ones: below the GPU's threshold (2048 limbs) the divisions run on
//! the CPU, and at 10^6 limbs they were most of the time (RESULTS.md, sixth
//! session: get_str 3.47x against GMP where division got 45.8x). The two
//! halves of every split are independent, so here the top `levels` splits
//! are made first (each a GMP division, whose products go to the GPU) and
//! the 2^levels pieces are converted by GMP's own `mpn_get_str` on their own
//! threads. The digits are GMP's: the same divisions by the same powers
//! give the same digits, each piece padded with zeros to its width.
//!
//! Everything here calls GMP (the embedded one) from several threads at
//! once, which GMP allows when its allocation functions are thread safe:
//! `dispatch::get_str` uses this only while they are GMP's defaults (a
//! program's own allocator, e.g. one that needs a lock the caller holds,
//! sees only calls from the calling thread, as with GMP).

use crate::abi::{mp_limb_t, mp_size_t};
use crate::config::{self, log};
use crate::{cpu, dispatch};
use std::time::Instant;
use libc::c_int;
use std::sync::Mutex;

/// Most threads a conversion uses by default (one per piece).
const MAX_THREADS: usize = 16;
/// Most splits `CUGMP_RADIX_LEVELS` may ask for (256 pieces and threads).
pub(crate) const MAX_LEVELS: u32 = 8;
/// Pieces hold at least this many limbs: smaller ones are not worth a thread.
const MIN_PIECE_LIMBS: usize = 1024;
/// Stack of a piece's thread: GMP's temporaries below 32 KiB live on the
/// stack (its TMP_ALLOC), at every level of its recursions; a main thread
/// has 8 MiB, Rust's threads 2 MiB unless told.
const PIECE_STACK_BYTES: usize = 16 << 20;

/// A number's digits (`digits`): a buffer of whole pieces, and where the
/// first nonzero digit is in it.
pub struct Digits {
    padded: Vec<u8>,
    first: usize,
}

impl Digits {
    /// The digit values, most significant first, no leading zeros.
    pub fn as_slice(&self) -> &[u8] {
        &self.padded[self.first..]
    }
}

/// The number `limbs` (any length, zero limbs at the top allowed; clobbered,
/// as GMP's conversion clobbers its input) written in `base` (3 to 256, not
/// a power of 2) as GMP's `mpn_get_str` writes it: digit values, most
/// significant first, no leading zeros ("0" for zero). `levels` splits make
/// 2^levels pieces, converted on as many threads (`levels` 0: GMP's
/// conversion on this thread).
///
/// Numbers below `cpu_below` limbs (pieces, and the splits of numbers that
/// small) are divided and converted with GMP's internal products on their
/// own thread's CPU: the GPU takes the threads' products one at a time, and
/// many small ones at once queue there while the cores wait.
pub fn digits(limbs: &mut [mp_limb_t], base: u32, levels: u32, cpu_below: usize) -> Digits {
    let n = trimmed(limbs).len();
    let x = &mut limbs[..n];
    if x.is_empty() {
        return Digits { padded: vec![0], first: 0 };
    }
    let pieces = 1usize << levels;
    // x < 2^bits <= base^(bits / log2(base)): `total` digits hold it (one
    // more for the rounding of the logarithm), in pieces of `width` digits.
    let bits = 64 * n - x[n - 1].leading_zeros() as usize;
    let total = (bits as f64 / f64::from(base).log2()).ceil() as usize + 1;
    let width = total.div_ceil(pieces);
    // powers[j] = base^(width * 2^j): the divisor that splits a number of
    // 2^(j+1) pieces into two of 2^j.
    let start = Instant::now();
    let mut powers: Vec<Vec<mp_limb_t>> = Vec::with_capacity(levels as usize);
    if levels > 0 {
        powers.push(power(base, width));
        for j in 1..levels as usize {
            powers.push(square(&powers[j - 1]));
        }
    }
    log!("radix: {n} limbs, {pieces} pieces of {width} digits: powers {:.3} ms", ms(start));
    let mut padded = vec![0u8; width * pieces];
    convert(x, &powers, base, cpu_below, &mut padded);
    let first = padded.iter().position(|&d| d != 0).unwrap_or(padded.len() - 1);
    log!("radix: {n} limbs converted in {:.3} ms", ms(start));
    Digits { padded, first }
}

/// Milliseconds since `start` (CUGMP_LOG's phase times).
fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// `x` without its zero limbs at the top.
fn trimmed(x: &[mp_limb_t]) -> &[mp_limb_t] {
    let n = x.len() - x.iter().rev().take_while(|&&l| l == 0).count();
    &x[..n]
}

/// The digits of `x` (below base^out.len(); clobbered) into `out` (zeros
/// on entry), leading zeros included: split by the largest of `powers`, the
/// two halves on two threads.
fn convert(x: &mut [mp_limb_t], powers: &[Vec<mp_limb_t>], base: u32, cpu_below: usize, out: &mut [u8]) {
    if x.len() < cpu_below {
        // Everything below on this thread's CPU (the threads spawned below
        // check again: their numbers are smaller still).
        return dispatch::with_internal_gpu_from(usize::MAX, || split(x, powers, base, cpu_below, out));
    }
    split(x, powers, base, cpu_below, out)
}

/// `convert`'s work: one split, or the piece's conversion.
fn split(x: &mut [mp_limb_t], powers: &[Vec<mp_limb_t>], base: u32, cpu_below: usize, out: &mut [u8]) {
    let Some((divisor, below)) = powers.split_last() else {
        piece(x, base, out);
        return;
    };
    let (mut q, mut r) = divide(x, divisor);
    let (hi, lo) = out.split_at_mut(out.len() / 2);
    // The high half on a new thread; if none can be made, on this one after
    // the low half (nothing is lost either way).
    let high = Mutex::new(Some((&mut q, hi)));
    let run_high = || {
        let taken = high.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((q, hi)) = taken {
            convert(q, below, base, cpu_below, hi);
        }
    };
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().stack_size(PIECE_STACK_BYTES).spawn_scoped(s, run_high);
        convert(&mut r, below, base, cpu_below, lo);
        if spawned.is_err() {
            run_high();
        }
    });
}

/// One piece (`x` clobbered): GMP's conversion, right-aligned in `out`
/// (zeros on entry, so the zeros before it are there already).
fn piece(x: &mut [mp_limb_t], base: u32, out: &mut [u8]) {
    let n = trimmed(x).len();
    if n == 0 {
        return;
    }
    // GMP writes at most (bits / log2(base)) + 1 digits; x < base^out.len()
    // means it writes at most out.len() of them, but its buffer must hold
    // its own bound.
    let room = (64 * n) as f64 / f64::from(base).log2();
    let mut buf = vec![0u8; room.ceil() as usize + 16];
    let start = Instant::now();
    // SAFETY: buf holds GMP's bound for n limbs; x's top limb is nonzero;
    // GMP may clobber x, which the caller allows.
    let written = unsafe { cpu::mpn_get_str(buf.as_mut_ptr(), base as c_int, x.as_mut_ptr(), n as mp_size_t) };
    log!("radix: piece of {n} limbs in {:.3} ms", ms(start));
    assert!(written <= out.len(), "a piece of radix conversion has more digits than its width");
    let at = out.len() - written;
    out[at..].copy_from_slice(&buf[..written]);
}

/// (x / d, x mod d), `d` with a nonzero top limb; both untrimmed.
fn divide(x: &[mp_limb_t], d: &[mp_limb_t]) -> (Vec<mp_limb_t>, Vec<mp_limb_t>) {
    let x = trimmed(x);
    let (nn, dn) = (x.len(), d.len());
    if nn < dn {
        return (Vec::new(), x.to_vec());
    }
    let start = Instant::now();
    let mut q = vec![0; nn - dn + 1];
    let mut r = vec![0; dn];
    // SAFETY: nn >= dn >= 1, d's top limb nonzero, q and r of the sizes GMP
    // writes, none overlapping.
    unsafe { cpu::mpn_tdiv_qr(q.as_mut_ptr(), r.as_mut_ptr(), 0, x.as_ptr(), nn as mp_size_t, d.as_ptr(), dn as mp_size_t) };
    log!("radix: {nn} by {dn} limbs divided in {:.3} ms", ms(start));
    (q, r)
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
            let carry = unsafe { cpu::mpn_mul_1(ptr, ptr, n as mp_size_t, mp_limb_t::from(base)) };
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
    // SAFETY: s holds 2n limbs and does not overlap x.
    unsafe { cpu::mpn_sqr(s.as_mut_ptr(), x.as_ptr(), x.len() as mp_size_t) };
    trimmed(&s).to_vec()
}

/// Splits for a number of `limbs` limbs on this host: about one piece per
/// core (at most MAX_THREADS), or `CUGMP_RADIX_LEVELS`; none making pieces
/// under MIN_PIECE_LIMBS limbs; by default 0 when one thread is all there
/// is.
pub fn levels_for(limbs: usize) -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS);
    let wanted = match config::get().radix_levels {
        Some(levels) => levels,
        None if cores < 2 => 0,
        None => cores.next_power_of_two().trailing_zeros(),
    };
    let mut levels = 0;
    while levels < wanted && limbs >> (levels + 1) >= MIN_PIECE_LIMBS {
        levels += 1;
    }
    levels
}

/// `digits`'s `cpu_below` on this host: `CUGMP_RADIX_CPU_BELOW`, else
/// CPU_BELOW_LIMBS.
pub fn cpu_below() -> usize {
    config::get().radix_cpu_below.unwrap_or(CPU_BELOW_LIMBS)
}

/// Default `cpu_below`: 0, every internal product of the conversion where
/// the thresholds send it, until measured otherwise.
const CPU_BELOW_LIMBS: usize = 0;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::resident::pseudo_random;

    /// GMP's own conversion of `x` (the embedded GMP's mpn_get_str, not the hook).
    fn gmp_digits(x: &[mp_limb_t], base: u32) -> Vec<u8> {
        let mut x = trimmed(x).to_vec();
        if x.is_empty() {
            return vec![0];
        }
        let mut buf = vec![0u8; 64 * x.len() + 2];
        let n = unsafe { cpu::mpn_get_str(buf.as_mut_ptr(), base as c_int, x.as_mut_ptr(), x.len() as mp_size_t) };
        buf.truncate(n);
        buf
    }

    fn check(x: &[mp_limb_t], base: u32, what: &str) {
        let want = gmp_digits(x, base);
        for levels in 0..=4 {
            // cpu_below: none, and from the middle of the splits (on a GPU
            // machine the two route the internal products differently).
            for cpu_below in [0, x.len() / 4] {
                let digits = digits(&mut x.to_vec(), base, levels, cpu_below);
                let got = digits.as_slice();
                assert!(got == want, "{what}: base {base}, {} limbs, {levels} levels, CPU below {cpu_below}: {} digits against GMP's {}", x.len(), got.len(), want.len());
            }
        }
    }

    #[test]
    fn pieces_match_gmp() {
        for base in [3u32, 7, 10, 36, 62, 255] {
            for n in [1usize, 2, 5, 17, 100, 1000, 3000] {
                check(&pseudo_random(n, n as u64 * 31 + u64::from(base)), base, "random");
                check(&vec![mp_limb_t::MAX; n], base, "all ones");
                let mut sparse = vec![0; n];
                sparse[n - 1] = 1;
                sparse[0] = 1;
                check(&sparse, base, "sparse (B^(n-1) + 1)");
                check(&[pseudo_random(n, 7), vec![0, 0]].concat(), base, "zero limbs on top");
            }
            // Powers of the base, one less and one more: the pieces' edges
            // (a power of the base that divides into pieces of zeros).
            for e in [1usize, 19, 64, 1000, 4096, 20000] {
                let p = power(base, e);
                check(&p, base, "base^e");
                let mut below = p.clone();
                unsafe { cpu::mpn_sub_1(below.as_mut_ptr(), below.as_ptr(), below.len() as mp_size_t, 1) };
                check(&below, base, "base^e - 1");
                let mut above = p.clone();
                let carry = unsafe { cpu::mpn_add_1(above.as_mut_ptr(), above.as_ptr(), above.len() as mp_size_t, 1) };
                above.push(carry);
                check(&above, base, "base^e + 1");
            }
        }
        assert_eq!(digits(&mut [], 10, 3, 0).as_slice(), [0]);
        assert_eq!(digits(&mut [0, 0], 10, 2, 0).as_slice(), [0]);
    }

    #[test]
    fn levels_follow_cores_and_piece_size() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS);
        assert_eq!(levels_for(MIN_PIECE_LIMBS - 1), 0);
        let big = levels_for(1 << 30);
        assert!(1usize << big >= cores && (cores < 2 || (1usize << big) < 2 * cores.next_power_of_two()), "{big} levels for {cores} cores");
        for n in [2 * MIN_PIECE_LIMBS, 5 * MIN_PIECE_LIMBS, 1 << 20] {
            assert!(n >> levels_for(n) >= MIN_PIECE_LIMBS);
        }
    }
}
