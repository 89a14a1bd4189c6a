//! Numbers to digits (GMP's `mpn_get_str`) by divisions done a whole
//! level of the tree at a time.
//!
//! Divide and conquer, as GMP does: x < P^2 splits into x / P and x mod P,
//! each converted to half the digits, down to small leaves that GMP's own
//! `mpn_get_str` converts (on several threads). GMP divides one number at a
//! time, and below the GPU's threshold its divisions run on the CPU: at 10^6
//! limbs the lower levels were most of the time even when they ran in
//! pieces on 16 threads (16 pieces of 62,500 limbs took 146 to 194 ms
//! each, all of it CPU work; RESULTS.md, "Radix conversion"). Here every number of
//! a level is divided by the same power P at once, by Barrett's method with
//! a precomputed inverse: the level's quotient estimates are one product
//! (all the numbers laid side by side, each in a slot wide enough that the
//! products do not overlap, times the inverse) and their multiples of P
//! another, so a level of 2^L numbers costs two products of about the
//! whole number's length, on the GPU where it takes GMP's internal products,
//! however small the numbers are. The host's share (gathering each
//! number's top, the remainders and their corrections) runs on threads.
//! From 32,768 limbs, where a GPU takes the products, all of it runs on
//! the device's resident numbers instead (src/gpu/radix.rs), the powers
//! and inverses made there too: the number goes up once and the leaves
//! come down once.
//!
//! The inverses come from one another: the powers are squares of each
//! other (P_(j+1) = P_j^2), so the square of P_j's inverse is an inverse of
//! P_(j+1) to half its precision, and one Newton step restores it
//! (`inverse_of_square`). Only the smallest power's inverse is a division.
//! Every inverse and every quotient is then made exact by a remainder (a
//! product and a short division or a correction of at most two), so the
//! estimates' error bounds decide only speed, never a digit: the digits are
//! those of the same divisions by the same powers, as GMP's, each leaf
//! padded with zeros to its width.
//!
//! GMP converts the leaves on several threads at once, which it allows when
//! its allocation functions are thread safe: `levels_on_gpu`
//! uses this only while they are GMP's defaults (a program's own allocator,
//! e.g. one that needs a lock the caller holds, sees only calls from the
//! calling thread, as with GMP).

use super::{add_assign, gather, increment, less, levels_for, ms, power, product, square, sub_assign, sub_into, threads_for, trimmed};
use crate::algorithms::route::{gmp_allocates_by_default, gpu_wanted, internal_on_gpu, route_at};
use crate::config::{self, log};
use crate::gpu::radix::Splits;
use crate::gpu::Gpu;
use crate::gmp::{embedded, mp_limb_t, mp_size_t};
use crate::pages::{fresh_limbs, prefer_huge_pages};
use crate::parallel::{copy_limbs, each_item};
use crate::stats::{self, Op};
use libc::c_int;
use std::time::Instant;

/// Extra limbs of every inverse (`inverse`): floor(B^(2k + GUARD) / P) for
/// P of k limbs. With 4, the Newton step of `inverse_of_square` leaves an
/// error of at most a unit or two (its comment has the bound).
const GUARD: usize = 4;
/// A number cut into leaves by whole levels ([`split`]), ready to be
/// written: the leaves' numbers, and the digits of the top ones down to the
/// number's first nonzero digit, which tell how many digits it has before
/// any other leaf is converted. So the leaves are converted straight into
/// the caller's buffer (GMP's, or the text), on threads, with no copy.
pub struct Leaves {
    /// The leaves, most significant first, `slot` limbs apart.
    numbers: Vec<mp_limb_t>,
    slot: usize,
    /// Digits a leaf stands for: every leaf after the top ones is written
    /// padded with zeros to this width.
    width: usize,
    base: u32,
    /// The first leaf not yet converted, and how many leaves there are.
    rest: usize,
    count: usize,
    /// The digits before leaf `rest`: from the number's first nonzero
    /// digit on, or "0" for zero.
    top: Vec<u8>,
}

impl Leaves {
    /// How many digits the number has (no leading zeros; 1 for zero).
    pub fn digit_count(&self) -> usize {
        self.top.len() + (self.count - self.rest) * self.width
    }

    /// Writes the digits, most significant first, as `map` of each digit
    /// value, into `out` (exactly `digit_count()` bytes): the leaves on several
    /// threads, each into its own part of `out`.
    pub fn write(&self, out: &mut [u8], map: impl Fn(u8) -> u8 + Sync) {
        assert_eq!(out.len(), self.digit_count(), "Leaves::write takes exactly the number's digits");
        // Written in full, most likely fresh (GMP's or the text's block).
        prefer_huge_pages(out.as_mut_ptr(), out.len());
        let (head, body) = out.split_at_mut(self.top.len());
        for (c, &d) in head.iter_mut().zip(&self.top) {
            *c = map(d);
        }
        // A leaf's conversion costs a few hundred times a copy of its limbs.
        each_item(body, self.width.max(1), threads_for(usize::MAX), |i, out| {
            leaf(&self.numbers[(self.rest + i) * self.slot..][..self.slot], self.base, out);
            for c in out.iter_mut() {
                *c = map(*c);
            }
        });
    }
}

/// The number `limbs` (any length, zero limbs at the top allowed) cut into
/// 2^levels leaves for writing in `base` (3 to 256, not a power of 2) as
/// GMP's `mpn_get_str` writes it: digit values, most significant first, no
/// leading zeros ("0" for zero). `levels` 0: one leaf, GMP's conversion of
/// the whole number on this thread.
pub fn split(limbs: &[mp_limb_t], base: u32, levels: u32) -> Leaves {
    let x = trimmed(limbs);
    let n = x.len();
    if n == 0 {
        return Leaves { numbers: Vec::new(), slot: 0, width: 0, base, rest: 0, count: 0, top: vec![0] };
    }
    let leaves = 1usize << levels;
    // x < 2^bits <= base^(bits / log2(base)): `total` digits hold it (one
    // more for the rounding of the logarithm), in leaves of `width` digits.
    let bits = 64 * n - x[n - 1].leading_zeros() as usize;
    let total = (bits as f64 / f64::from(base).log2()).ceil() as usize + 1;
    let width = total.div_ceil(leaves);
    // powers[j] = base^(width * 2^j): the divisor that splits a number of
    // 2^(j+1) leaves into two of 2^j; inverses[j] its inverse (`inverse`).
    // The device squares and inverts the larger ones itself.
    let start = Instant::now();
    let (first, first_inverse) = match levels {
        0 => (Vec::new(), Vec::new()),
        _ => {
            let p = power(base, width);
            let nu = inverse(&p);
            (p, nu)
        }
    };
    // With no levels, the one leaf is x itself.
    let leaf_slot = if levels == 0 { n } else { first.len() + 1 };
    let device = (levels > 0 && splits_on_device(n)).then(|| route_at(Op::Internal, n, true)).flatten();
    let numbers = device.and_then(|g| split_on_device(g, x, (&first, &first_inverse), levels as usize, leaf_slot, start)).unwrap_or_else(|| {
        let (powers, inverses) = powers_and_inverses(first.clone(), first_inverse.clone(), levels as usize);
        log!("radix: {n} limbs, {leaves} leaves of {width} digits: powers and inverses {:.3} ms", ms(start));
        split_on_host(x, &powers, &inverses, start)
    });
    // The top leaves, down to the first with a nonzero digit: the leaves
    // hold `width * leaves` digits, up to `leaves - 1` more than `total`,
    // which is itself at least the number's count, so whole leaves at the
    // top may be zeros.
    let (mut rest, mut top) = (0, vec![0u8; width]);
    loop {
        leaf(&numbers[rest * leaf_slot..][..leaf_slot], base, &mut top);
        rest += 1;
        if let Some(first) = top.iter().position(|&d| d != 0) {
            top.drain(..first);
            break;
        }
        if rest == leaves {
            // Not reached: x is not zero.
            top = vec![0];
            break;
        }
    }
    log!("radix: {n} limbs split into {leaves} leaves in {:.3} ms", ms(start));
    Leaves { numbers, slot: leaf_slot, width, base, rest, count: leaves, top }
}

/// Numbers of this many limbs and more have their levels split on the
/// device's resident numbers where a GPU takes the conversion's products
/// (src/gpu/radix.rs, `split_levels`). Against the levels split from
/// host products, `mpz_get_str` of 131,072 limbs took 8.6 to 9.6 ms
/// against 18.9 to 20.3, of 32,768 4.0 to 4.1 against 5.1 to 5.3 with the
/// powers made on the device too (and the same as before with them made
/// on the host; RESULTS.md, "Radix conversion to digits on the device").
/// The threshold is from_digits.rs's, where the device's joins stopped
/// paying; the device's splits below it were not measured.
const SPLITS_ON_DEVICE_FROM: usize = 32768;

/// Whether a number of `limbs` limbs has its levels split on the device
/// where a GPU takes its products.
fn splits_on_device(limbs: usize) -> bool {
    limbs >= SPLITS_ON_DEVICE_FROM
}

/// The powers base^(width 2^j) and their inverses for `levels` levels,
/// from the first (`split`): each power the square of the one before, its
/// inverse by `inverse_of_square`. None for no levels.
fn powers_and_inverses(first: Vec<mp_limb_t>, first_inverse: Vec<mp_limb_t>, levels: usize) -> (Vec<Vec<mp_limb_t>>, Vec<Vec<mp_limb_t>>) {
    if levels == 0 {
        return (Vec::new(), Vec::new());
    }
    let (mut powers, mut inverses) = (vec![first], vec![first_inverse]);
    for j in 1..levels {
        let p = square(&powers[j - 1]);
        let nu = inverse_of_square(&inverses[j - 1], powers[j - 1].len(), &p);
        powers.push(p);
        inverses.push(nu);
    }
    (powers, inverses)
}

/// The leaves of `x` (`split`) split on `g`'s resident numbers, from the
/// first power and its inverse: the number and those go up once, the
/// device squares and inverts the other powers itself (the Newton step of
/// `inverse_of_square`, whose bound it checks), and the leaves come down
/// once, `leaf_slot` limbs apart. None where the device failed or the
/// bound did not hold: the host splits the levels then.
fn split_on_device(g: &Gpu, x: &[mp_limb_t], first: (&[mp_limb_t], &[mp_limb_t]), levels: usize, leaf_slot: usize, start: Instant) -> Option<Vec<mp_limb_t>> {
    let mut numbers = fresh_limbs(leaf_slot << levels);
    stats::gpu_attempt_starts();
    let at = Instant::now();
    let splits = Splits { number: x, first, levels, guard: GUARD, leaf_slot };
    if let Err(e) = g.split_levels(&splits, &mut numbers) {
        stats::fallback(Op::GetStr, e.fallback());
        log!("radix: GPU failed splitting the levels ({e}); splitting them on the host");
        return None;
    }
    stats::gpu_call(Op::GetStr, x.len(), at.elapsed());
    log!("radix: {levels} levels split on the device in {:.3} ms, at {:.3} ms", ms(at), ms(start));
    if config::get().check {
        // The device's products were not checked one by one: the host's
        // powers, inverses and levels.
        let (powers, inverses) = powers_and_inverses(first.0.to_vec(), first.1.to_vec(), levels);
        let host = split_on_host(x, &powers, &inverses, start);
        if host != numbers {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's radix conversion of {} limbs differs from the host's; aborting", x.len());
            std::process::abort();
        }
    }
    Some(numbers)
}

/// The leaves of `x` by `powers` and their `inverses` (`split`), each
/// level's products as one product (the GPU's where it takes it), its
/// remainders and corrections on threads: `powers[0].len() + 1` limbs
/// apart (x itself where there are no powers).
fn split_on_host(x: &[mp_limb_t], powers: &[Vec<mp_limb_t>], inverses: &[Vec<mp_limb_t>], start: Instant) -> Vec<mp_limb_t> {
    let (n, levels) = (x.len(), powers.len());
    // The numbers of level j (0: the leaves; from 1, split by powers[j -
    // 1]), most significant first, slot(j) limbs apart: each is below
    // powers[j - 1]^2 < B^(2k), k = powers[j - 1].len() (a leaf below
    // powers[0]), and the slot has a limb more, where a remainder is
    // corrected in place (split_level).
    let slot = |j: usize| match j {
        0 => powers.first().map_or(n, |p| p.len() + 1),
        _ => 2 * powers[j - 1].len() + 1,
    };
    // Level j is split_level's level j - 1 (0: the leaves): 2^(levels - j)
    // numbers.
    let count = |j: usize| 1usize << (levels - j);
    let most = (0..=levels).map(|j| count(j) * slot(j)).max().unwrap_or(0);
    let most_apart = (1..=levels).map(|j| count(j) * split_apart(powers[j - 1].len())).max().unwrap_or(0);
    // Every buffer at its largest once (fresh pages, huge where large,
    // touched first by the threads or the download that fill them), two for
    // the numbers, in turn: four of about the number's length in all.
    let mut numbers = fresh_limbs(most);
    let mut halves = fresh_limbs(most);
    let mut scratch = Scratch { side_by_side: fresh_limbs(most_apart), products: fresh_limbs(most_apart) };
    let top = levels;
    // On threads: the buffer is fresh, and its page faults are most of a
    // copy this large.
    copy_limbs(&mut numbers[..n], x);
    numbers[n..slot(top)].fill(0);
    for j in (1..=top).rev() {
        let (from, to) = (&numbers[..count(j) * slot(j)], &mut halves[..count(j - 1) * slot(j - 1)]);
        split_level(from, slot(j), &powers[j - 1], &inverses[j - 1], to, slot(j - 1), &mut scratch);
        std::mem::swap(&mut numbers, &mut halves);
        log!("radix: level {} split into {} numbers of {} limbs at {:.3} ms", j - 1, count(j - 1), slot(j - 1), ms(start));
    }
    numbers.truncate(slot(0) << levels);
    numbers
}

/// The digit values of `limbs` in `base` as `split` and `Leaves::write`
/// give them (the tests' reference of the other direction, too).
#[cfg(test)]
pub fn digits(limbs: &[mp_limb_t], base: u32, levels: u32) -> Vec<u8> {
    let leaves = split(limbs, base, levels);
    let mut out = vec![u8::MAX; leaves.digit_count()];
    leaves.write(&mut out, |d| d);
    out
}

/// A level's buffers, kept from level to level (each at the largest size a
/// level needs): the numbers' tops and then the quotients' estimates laid
/// side by side, and the products of each by the inverse and the power.
struct Scratch {
    side_by_side: Vec<mp_limb_t>,
    products: Vec<mp_limb_t>,
}

/// How far apart split_level lays a level's numbers for its products, for
/// a power of k limbs.
fn split_apart(k: usize) -> usize {
    2 * k + GUARD + 2
}

/// Every number of a level (`numbers`, `slot` limbs apart, each below p^2)
/// split into its quotient and remainder by `p` (k limbs, top limb
/// nonzero; `nu` its inverse, `inverse_of_square`): the numbers of the next
/// level, quotient before remainder, `half_slot` (> k) limbs apart, into
/// `halves`.
///
/// Barrett's division with nu <= M = B^(2k+G) / p, nu > M - 3, G = GUARD:
/// for x < B^(2k), q1 = floor(x / B^(k-1)) (k + 1 limbs) and q3 = floor(q1
/// nu / B^(k+1+G)) satisfy q - 2 <= q3 <= q, q = floor(x / p): q1 nu <= (x /
/// B^(k-1)) M = x B^(k+1+G) / p, and from q1 > x / B^(k-1) - 1, q1 nu /
/// B^(k+1+G) > x / p - 3 x / B^(2k+G) - M / B^(k+1+G) > x / p - 1 - 3 B^-G
/// (M / B^(k+1+G) = B^(k-1) / p <= 1). So r = x - q3 p < 3p < B^(k+1) is
/// exact in k + 1 limbs and at most two subtractions of p finish it. q1 nu
/// has at most 2k + G + 2 limbs and q3 p at most 2k + 1, so with the
/// numbers' tops (and then the estimates) `split_apart(k)` limbs apart and
/// zeros between, each of the two products is one product of the whole
/// level.
fn split_level(numbers: &[mp_limb_t], slot: usize, p: &[mp_limb_t], nu: &[mp_limb_t], halves: &mut [mp_limb_t], half_slot: usize, scratch: &mut Scratch) {
    let k = p.len();
    let count = numbers.len() / slot;
    let apart = split_apart(k);
    let len = count * apart;
    debug_assert!(slot >= 2 * k && half_slot > k && nu.len() <= k + GUARD + 1 && halves.len() == 2 * count * half_slot);
    let (side_by_side, products) = (&mut scratch.side_by_side[..len], &mut scratch.products[..len]);
    let threads = threads_for(len);
    // q1 of each number.
    gather(side_by_side, apart, k + 1, numbers, slot, k - 1, threads);
    // q1 nu of each, at the same places (the last slot's zeros left out).
    product(products, &side_by_side[..len - nu.len()], nu);
    // q3 of each, over the q1.
    gather(side_by_side, apart, k + 1, products, apart, k + 1 + GUARD, threads);
    let quotients = &*side_by_side;
    // q3 p of each, over the q1 nu.
    product(products, &quotients[..len - k], p);
    // The remainders, corrected, and the quotients beside them.
    let multiples = &*products;
    each_item(halves, 2 * half_slot, threads, |i, pair| {
        let (high, low) = pair.split_at_mut(half_slot);
        let r = &mut low[..k + 1];
        sub_into(r, &numbers[i * slot..][..k + 1], &multiples[i * apart..][..k + 1]);
        // q3 <= q < p < B^k: the quotient and every step to it fit k limbs.
        let q = &mut high[..k];
        q.copy_from_slice(&quotients[i * apart..][..k]);
        while r[k] != 0 || !less(&r[..k], p) {
            let borrow = sub_assign(&mut r[..k], p);
            r[k] -= borrow;
            increment(q);
        }
        high[k..].fill(0);
        low[k..].fill(0);
    });
}

/// A leaf (below the smallest power): GMP's conversion, right-aligned in
/// `out` (`width` digits, zeros before it).
fn leaf(x: &[mp_limb_t], base: u32, out: &mut [u8]) {
    let mut x = trimmed(x).to_vec();
    out.fill(0);
    if x.is_empty() {
        return;
    }
    // GMP writes at most (bits / log2(base)) + 1 digits; x < base^out.len()
    // means it writes at most out.len() of them, but its buffer must hold
    // its own bound.
    let room = (64 * x.len()) as f64 / f64::from(base).log2();
    let mut buf = vec![0u8; room.ceil() as usize + 16];
    // SAFETY: buf holds GMP's bound for x.len() limbs; x's top limb is
    // nonzero; GMP clobbers x, a copy.
    let written = unsafe { embedded::mpn_get_str(buf.as_mut_ptr(), base as c_int, x.as_mut_ptr(), x.len() as mp_size_t) };
    assert!(written <= out.len(), "a leaf of radix conversion has more digits than its width");
    let at = out.len() - written;
    out[at..].copy_from_slice(&buf[..written]);
}

/// p's inverse floor(B^(2k + GUARD) / p), k = p.len() (top limb nonzero, p
/// not a power of B): k + GUARD + 1 limbs.
fn inverse(p: &[mp_limb_t]) -> Vec<mp_limb_t> {
    let big = 2 * p.len() + GUARD;
    let mut power = vec![0; big + 1];
    power[big] = 1;
    let mut nu = divide(&power, p).0;
    nu.truncate(trimmed(&nu).len());
    nu
}

/// An inverse of p2 = p^2 for split_level from `nu`, one of p (k limbs): a
/// value in (M - 3, M], M = B^(2K+G) / p2 (real), K = p2.len(), G = GUARD.
///
/// With M_p = B^(2k+G) / p and nu = M_p - d, 0 <= d < 3: M = M_p^2 / B^s, s =
/// 4k + G - 2K >= G (K <= 2k), and y = floor(nu^2 / B^s) <= M is below it by
/// e < 6 M_p / B^s + 1 < 6 B^(k+1) + 1 (M_p < B^(k+G+1)). One Newton step,
/// y' = y + floor(y t / B^(2K+G)) with t = B^(2K+G) - y p2 = (M - y) p2
/// (exact, >= 0), gives y' <= y + (M - y) = M (y t / B^(2K+G) = y (M - y) / M)
/// and M - y' < e^2 / M + 1 < 36 B^(2k+2) / B^(K+G) + 1 (M > B^(K+G)), which
/// with K >= 2k - 1 and G = 4 is below 36 / B + 1. Exact where that cannot
/// be relied on: where t < 0, which the bound rules out.
fn inverse_of_square(nu: &[mp_limb_t], k: usize, p2: &[mp_limb_t]) -> Vec<mp_limb_t> {
    let big = 2 * p2.len() + GUARD;
    let mut y = vec![0; 2 * nu.len()];
    product(&mut y, nu, nu);
    y.drain(..(4 * k + GUARD - 2 * p2.len()).min(y.len()));
    y.truncate(trimmed(&y).len());
    if y.is_empty() {
        return inverse(p2);
    }
    let mut t = vec![0; y.len() + p2.len()];
    product(&mut t, &y, p2);
    if !power_minus(big, &mut t) {
        return inverse(p2);
    }
    let t = trimmed(&t);
    if !t.is_empty() {
        let mut yt = vec![0; y.len() + t.len()];
        product(&mut yt, &y, t);
        if yt.len() > big {
            add_assign(&mut y, trimmed(&yt[big..]));
        }
    }
    y
}

/// t = B^big - t in place (t of at least big + 1 limbs), or false where t >
/// B^big (t then clobbered).
fn power_minus(big: usize, t: &mut [mp_limb_t]) -> bool {
    if t.len() <= big || !trimmed(&t[big + 1..]).is_empty() || t[big] > 1 {
        return false;
    }
    let low_zero = trimmed(&t[..big]).is_empty();
    if t[big] == 1 {
        // t = B^big exactly, or above it.
        t[big] = 0;
        return low_zero;
    }
    // B^big - t = (B^big - 1 - t) + 1 over big limbs; B^big itself where t = 0.
    for l in t[..big].iter_mut() {
        *l = !*l;
    }
    increment(&mut t[..big]);
    t[big] = low_zero as mp_limb_t;
    true
}

/// (x / d, x mod d), `d` with a nonzero top limb; both untrimmed.
fn divide(x: &[mp_limb_t], d: &[mp_limb_t]) -> (Vec<mp_limb_t>, Vec<mp_limb_t>) {
    let x = trimmed(x);
    let (nn, dn) = (x.len(), d.len());
    if nn < dn {
        return (Vec::new(), x.to_vec());
    }
    let mut q = vec![0; nn - dn + 1];
    let mut r = vec![0; dn];
    // SAFETY: nn >= dn >= 1, d's top limb nonzero, q and r of the sizes GMP
    // writes, none overlapping.
    unsafe { embedded::mpn_tdiv_qr(q.as_mut_ptr(), r.as_mut_ptr(), 0, x.as_ptr(), nn as mp_size_t, d.as_ptr(), dn as mp_size_t) };
    (q, r)
}

/// The levels radix conversion splits a number of `n` limbs into when it
/// converts it in `base` by whole levels on the GPU: where GMP's internal
/// products of that size go to the GPU, only with GMP's own allocation
/// functions (its code then runs on other threads too), bases that are not
/// powers of two (GMP converts those in linear time), and numbers of at
/// least two leaves. None: GMP's own conversion.
pub fn levels_on_gpu(n: usize, base: c_int) -> Option<u32> {
    let levels = levels_for(n);
    let wanted = levels > 0
        && gpu_wanted(Op::GetStr, n)
        && (3..=256).contains(&base)
        && !(base as u32).is_power_of_two()
        && gmp_allocates_by_default()
        && internal_on_gpu(n);
    wanted.then_some(levels)
}

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
        let n = unsafe { embedded::mpn_get_str(buf.as_mut_ptr(), base as c_int, x.as_mut_ptr(), x.len() as mp_size_t) };
        buf.truncate(n);
        buf
    }

    fn check(x: &[mp_limb_t], base: u32, what: &str) {
        let want = gmp_digits(x, base);
        for levels in 0..=5 {
            let got = digits(x, base, levels);
            assert!(got == want, "{what}: base {base}, {} limbs, {levels} levels: {} digits against GMP's {}", x.len(), got.len(), want.len());
        }
    }

    #[test]
    fn levels_match_gmp() {
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
                unsafe { embedded::mpn_sub_1(below.as_mut_ptr(), below.as_ptr(), below.len() as mp_size_t, 1) };
                check(&below, base, "base^e - 1");
                let mut above = p.clone();
                let carry = unsafe { embedded::mpn_add_1(above.as_mut_ptr(), above.as_ptr(), above.len() as mp_size_t, 1) };
                above.push(carry);
                check(&above, base, "base^e + 1");
            }
        }
        assert_eq!(digits(&[], 10, 3), [0]);
        assert_eq!(digits(&[0, 0], 10, 2), [0]);
    }

    /// The inverses of the powers: within split_level's bound (at most 2 below
    /// the exact one, never above it) through the Newton steps, also from an
    /// inverse already 2 below.
    #[test]
    fn inverses_stay_within_bound() {
        for base in [3u32, 10, 255] {
            let mut p = power(base, 7);
            let mut nu = inverse(&p);
            let mut low = nu.clone();
            sub_assign(&mut low, &[2]);
            for step in 0..10 {
                let exact = inverse(&p);
                assert_eq!(exact.len(), p.len() + GUARD + 1);
                for (what, got) in [("chain", &nu), ("chain from 2 below", &low)] {
                    let mut gap = exact.clone();
                    let borrow = sub_assign(&mut gap, got);
                    assert!(borrow == 0 && trimmed(&gap).len() <= 1 && gap[0] <= 2, "{what}: base {base}, step {step}, {} limbs: {:?} below", p.len(), trimmed(&gap));
                }
                let p2 = square(&p);
                nu = inverse_of_square(&nu, p.len(), &p2);
                low = inverse_of_square(&low, p.len(), &p2);
                p = p2;
            }
        }
    }
}
