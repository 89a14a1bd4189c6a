//! n! and C(n, k) (GMP's `mpz_fac_ui` and `mpz_bin_uiui`) for large
//! results from the exponents of their primes.
//!
//! n! = 2^e_2 * prod over odd primes p <= n of p^e_p, e_p = sum over i of
//! floor(n / p^i) (Legendre). With P_k the product of the odd primes whose
//! e_p has bit k set, the odd part is ((P_K^2 P_(K-1))^2 ...)^2 P_0: a
//! ladder of K squarings and products of ever larger numbers, which go to
//! the GPU, and the P_k, products of many small primes, made as product
//! trees on all cores. GMP computes n! by its prime-swing recursion on one
//! thread, its mid-sized products on the CPU: fac(10^6) gained 4.1x from GPU
//! products alone (RESULTS.md, "Python: gmpy2, MPFR and mpmath"). The power
//! of two is a shift. C(n, k) is the same with Kummer's exponents (the
//! carries of k + (n - k) in base p), where GMP divides products of
//! ranges.
//!
//! GMP's code (its products) runs on other threads, so this is taken only
//! while GMP's allocation functions are its own (`fac_ui_on_gpu`).

use super::product::own_product;
use super::route::{auto_threshold, gmp_allocates_by_default, gpu_wanted, internal_on_gpu, route_at};
use crate::config::{self, log};
use crate::gmp::{embedded, mp_limb_t, mp_size_t, mpz, mpz_ptr};
use crate::gpu::ladder::Ladder;
use crate::parallel::{self, each_item};
use crate::stats::{self, Op};
use libc::c_int;
use std::time::Instant;

/// The largest n taken here: n! has about n log2(n) bits (2^32! would be
/// 17 GB), and the odd primes to n take 8 bytes each.
const MAX_N: u64 = 1 << 32;
/// Values a run of the product trees holds at least (`products_of`).
const MIN_RUN: usize = 512;
/// The size (limbs) at which the product trees' joins on threads stop:
/// where GMP's internal products go to the GPU (`own_product` routes them
/// so).
fn join_on_threads_below() -> usize {
    auto_threshold(Op::Internal).unwrap_or(usize::MAX)
}
/// Most threads for the product trees.
const MAX_THREADS: usize = 16;

/// Limbs of n! at most (n log2(n) / 64 bits, rounded up): the operation's
/// size for the routing, cheap enough for the fast path.
#[inline(always)]
pub fn fac_limbs(n: u64) -> usize {
    let bits = u64::from(64 - n.leading_zeros());
    (n.saturating_mul(bits) / 64) as usize + 1
}

/// Whether `mpz_fac_ui(r, n)` is computed here: n! of GPU size, GMP's
/// internal products on the GPU now, GMP's own allocation functions.
pub fn fac_ui_on_gpu(n: u64) -> bool {
    let limbs = fac_limbs(n);
    (2..=MAX_N).contains(&n) && gpu_wanted(Op::Fac, limbs) && gmp_allocates_by_default() && internal_on_gpu(limbs)
}

/// Limbs of C(n, k) at most, by Stirling's formula (with a limb to
/// spare): the operation's size for the routing.
pub fn bin_limbs(n: u64, k: u64) -> usize {
    if k == 0 || k >= n {
        return 1;
    }
    // log2(m!) from Stirling's series; exact enough for a size.
    let log2_factorial = |m: u64| {
        let m = m as f64;
        if m < 2.0 { 0.0 } else { (m * m.ln() - m + 0.5 * (2.0 * std::f64::consts::PI * m).ln() + 1.0 / (12.0 * m)) / std::f64::consts::LN_2 }
    };
    let bits = log2_factorial(n) - log2_factorial(k) - log2_factorial(n - k);
    (bits.max(0.0) / 64.0) as usize + 2
}

/// Whether `mpz_bin_uiui(r, n, k)` is computed here: as `fac_ui_on_gpu`,
/// and the sieve of the odd numbers to n (n / 2 bytes) at most 16 times
/// the result's bytes (C(n, k) with k far below n is GMP's).
pub fn bin_uiui_on_gpu(n: u64, k: u64) -> bool {
    let limbs = bin_limbs(n, k);
    0 < k
        && k < n
        && n <= MAX_N
        && n / 2 <= 16 * 8 * limbs as u64
        && gpu_wanted(Op::Bin, limbs)
        && gmp_allocates_by_default()
        && internal_on_gpu(limbs)
}

/// r = n! (n >= 2, at most MAX_N).
///
/// # Safety
/// `r` is an initialised `mpz_t`.
pub unsafe fn factorial_into(r: mpz_ptr, n: u64) {
    assert!((2..=MAX_N).contains(&n), "factorial of {n} taken here");
    // The exponent of 2 is n less its number of ones.
    unsafe { from_exponents(r, n, |p| legendre(p, n), n - u64::from(n.count_ones()), (Op::Fac, "factorial")) }
}

/// Legendre: the exponent of the prime p in n! is the sum of floor(n / p^i).
fn legendre(p: u64, n: u64) -> u64 {
    let (mut e, mut q) = (0u64, n / p);
    while q > 0 {
        e += q;
        q /= p;
    }
    e
}

/// r = C(n, k) (0 < k < n, n at most MAX_N).
///
/// # Safety
/// `r` is an initialised `mpz_t`.
pub unsafe fn binomial_into(r: mpz_ptr, n: u64, k: u64) {
    assert!(0 < k && k < n && n <= MAX_N, "binomial({n}, {k}) taken here");
    // Kummer: the exponent of p is the number of carries when k and n - k
    // are added in base p, the sum over i of floor(n / p^i) - floor(k /
    // p^i) - floor((n - k) / p^i); of 2, the ones of k and n - k less n's.
    let carries = |p: u64| {
        let (mut e, mut q) = (0u64, p);
        loop {
            e += n / q - k / q - (n - k) / q;
            match q.checked_mul(p) {
                Some(next) if next <= n => q = next,
                _ => return e,
            }
        }
    };
    let twos = u64::from(k.count_ones() + (n - k).count_ones() - n.count_ones());
    unsafe { from_exponents(r, n, carries, twos, (Op::Bin, "binomial")) }
}

/// r = prod over odd primes p <= n of p^exponent(p), times 2^twos: the
/// primes whose exponent has bit j set multiplied into P_j (on all
/// cores), then the ladder ((P_J^2 P_(J-1))^2 ...)^2 P_0 and the shift,
/// on the device from where its squares are GPU products (`ladder_on_device`),
/// else on the host (its large products still the GPU's).
///
/// # Safety
/// `r` is an initialised `mpz_t`.
unsafe fn from_exponents(r: mpz_ptr, n: u64, exponent: impl Fn(u64) -> u64 + Sync, twos: u64, (op, what): (Op, &str)) {
    let start = Instant::now();
    let primes = odd_primes_up_to(n);
    let lists = bit_lists(&primes, exponent);
    log!("{what} {n}: {} odd primes, {} exponent bits at {:.3} ms", primes.len(), lists.len(), ms(start));
    let products = products_of(&lists);
    log!("{what} {n}: prime products at {:.3} ms", ms(start));
    // The steps from the top (P_J) on the host while the squares are
    // small; products[..j] are the steps left.
    let (mut odd, mut j) = (vec![1], products.len());
    while j > 0 && (odd == [1] || 2 * odd.len() < ladder_on_device_from()) {
        odd = ladder_step(odd, &products[j - 1]);
        j -= 1;
    }
    if j > 0 && unsafe { ladder_on_device(r, &odd, &products[..j], twos, (op, what, n, start)) } {
        return;
    }
    let odd = host_ladder(odd, &products[..j]);
    log!("{what} {n}: odd part of {} limbs at {:.3} ms", odd.len(), ms(start));
    let shifted = shifted_left(&odd, twos);
    log!("{what} {n}: {} limbs in {:.3} ms", shifted.len(), ms(start));
    unsafe { mpz::store(r, &shifted, false) };
}

/// The ladder's steps go to the device from where its squares are GPU
/// products (GMP's internal products' size). Made from host products, the
/// ladder of a process's first fac(10^6) took 8.0 of its 22.1 ms, most of
/// it each step's number going up and its square coming down; with it on
/// the device the call took 15.5 to 17.7 ms against 23.3 to 23.8
/// (RESULTS.md, "Factorials").
fn ladder_on_device_from() -> usize {
    join_on_threads_below()
}

/// One step of the ladder: odd^2 p (odd = [1]: p; p = [1]: odd^2), trimmed.
fn ladder_step(mut odd: Vec<mp_limb_t>, p: &[mp_limb_t]) -> Vec<mp_limb_t> {
    if odd != [1] {
        let mut square = vec![0; 2 * odd.len()];
        own_product(&mut square, &odd, &odd, "the square of a product of primes");
        odd = trimmed(square);
    }
    if p != [1] {
        let mut next = vec![0; odd.len() + p.len()];
        own_product(&mut next, &odd, p, "a product of primes");
        odd = trimmed(next);
    }
    odd
}

/// The ladder's steps over `parts` (P_j first at the end: the steps go
/// from the last part down) from `odd`, on the host.
fn host_ladder(odd: Vec<mp_limb_t>, parts: &[Vec<mp_limb_t>]) -> Vec<mp_limb_t> {
    parts.iter().rev().fold(odd, |odd, p| ladder_step(odd, p))
}

/// r = the ladder over `parts` (as `host_ladder`) from `odd` (not [1]),
/// shifted by `twos`, made on the device (src/gpu/ladder.rs) into r's new
/// limbs: a pinned block where the pool keeps one, so that it comes down
/// by one DMA. False, r untouched, where no GPU takes it or the device
/// failed: the host makes it then from the same numbers.
///
/// # Safety
/// `r` is an initialised `mpz_t`.
unsafe fn ladder_on_device(r: mpz_ptr, odd: &[mp_limb_t], parts: &[Vec<mp_limb_t>], twos: u64, (op, what, n, start): (Op, &str, u64, Instant)) -> bool {
    let steps: Vec<&[mp_limb_t]> = parts.iter().rev().map(Vec::as_slice).collect();
    let ladder = Ladder { start: odd, parts: &steps, shift: twos };
    let Some(limbs) = ladder.limbs().filter(|&l| l <= c_int::MAX as usize) else { return false };
    let Some(g) = route_at(Op::Internal, limbs, true) else { return false };
    let mut fresh = mpz::FreshLimbs::pinned_or_allocated(limbs);
    let out = &mut fresh.limbs()[..limbs];
    stats::gpu_attempt_starts();
    let at = Instant::now();
    if let Err(e) = g.ladder_into(&ladder, out) {
        stats::fallback(op, e.fallback());
        log!("{what} {n}: GPU failed on the ladder ({e}); the host makes it");
        return false;
    }
    stats::gpu_call(op, limbs, at.elapsed());
    log!("{what} {n}: {} steps of the ladder and the shift on the device, {limbs} limbs at {:.3} ms", steps.len(), ms(start));
    if config::get().check {
        // The device's products were not checked one by one: the host's
        // ladder from the same numbers.
        let host = shifted_left(&host_ladder(odd.to_vec(), parts), twos);
        let (low, high) = out.split_at(host.len().min(out.len()));
        if low != &host[..] || high.iter().any(|&l| l != 0) {
            eprintln!("cugmp: CUGMP_CHECK: the GPU's ladder for {what} {n} differs from the host's; aborting");
            std::process::abort();
        }
    }
    // SAFETY: r is an initialised mpz_t (the caller's contract); the
    // result's `limbs` limbs are written.
    unsafe { fresh.give_to(r, limbs, false) };
    true
}

/// Primes a thread takes at once for their exponents (`bit_lists`).
const EXPONENT_CHUNK: usize = 1 << 14;

/// lists[j]: the `primes` whose exponent has bit j set, in order. The
/// exponents are divisions a prime, so chunks of primes make their own
/// lists on all cores, joined in order after: for C(2k, k) of 292,000
/// limbs (1.19 million primes) 3.3 ms against 8 to 9 ms on one thread
/// (RESULTS.md, "Binomial coefficients").
fn bit_lists(primes: &[u64], exponent: impl Fn(u64) -> u64 + Sync) -> Vec<Vec<u64>> {
    let chunks: Vec<&[u64]> = primes.chunks(EXPONENT_CHUNK).collect();
    let mut per_chunk: Vec<Vec<Vec<u64>>> = vec![Vec::new(); chunks.len()];
    each_item(&mut per_chunk, 1, parallel::cores().min(MAX_THREADS), |i, out| {
        let lists = &mut out[0];
        for &p in chunks[i] {
            let e = exponent(p);
            for j in 0..(64 - e.leading_zeros()) as usize {
                if e >> j & 1 == 1 {
                    if lists.len() <= j {
                        lists.resize(j + 1, Vec::new());
                    }
                    lists[j].push(p);
                }
            }
        }
    });
    let bits = per_chunk.iter().map(Vec::len).max().unwrap_or(0);
    (0..bits).map(|j| per_chunk.iter().filter_map(|c| c.get(j)).flatten().copied().collect()).collect()
}

/// Odd numbers a segment of the sieve covers: 32 KiB of flags, in the
/// first-level cache while each small prime strikes its multiples.
const SIEVE_SEGMENT: usize = 1 << 15;

/// The odd primes up to n (n >= 2), in order, by a sieve of the odd numbers
/// in segments on all cores: the primes up to the square root of n first,
/// then every segment's multiples of them struck. One thread's sieve in one
/// array of flags took 4.0 ms to 10^6 on the build machine (1.6 ms so), and
/// C(2k, k) of 292,000 limbs (a sieve to 1.9 x 10^7) 106 ms against 51 to
/// 57 ms so on the GPU machine's host (RESULTS.md, "Factorials").
fn odd_primes_up_to(n: u64) -> Vec<u64> {
    // Index i stands for 2i + 1; the odd numbers to n are 1..=last.
    let last = ((n - 1) / 2) as usize;
    let root = n.isqrt();
    let small = if root >= 3 { odd_primes_up_to(root) } else { Vec::new() };
    let segments = last / SIEVE_SEGMENT + 1;
    let mut found: Vec<Vec<u64>> = vec![Vec::new(); segments];
    let threads = parallel::cores().min(MAX_THREADS).min(segments);
    each_item(&mut found, 1, threads, |s, out| {
        let lo = s * SIEVE_SEGMENT;
        let hi = (lo + SIEVE_SEGMENT).min(last + 1);
        let mut composite = vec![false; hi - lo];
        for &p in &small {
            // The first odd multiple of p from p^2 and from this segment's
            // first number, as an index.
            let from = (p * p).max(2 * lo as u64 + 1);
            let mut m = from.div_ceil(p) * p;
            if m.is_multiple_of(2) {
                m += p;
            }
            let mut j = ((m - 1) / 2) as usize;
            while j < hi {
                composite[j - lo] = true;
                j += p as usize;
            }
        }
        out[0] = (lo.max(1)..hi).filter(|&i| !composite[i - lo]).map(|i| 2 * i as u64 + 1).collect();
    });
    found.concat()
}

/// The product of each list of `lists` (values below 2^32), trimmed ([1]
/// for an empty list). The lists are of very different lengths (for
/// fac(10^6) the longest has 53,428 primes and makes 15,611 limbs, its tree
/// 9.2 ms of one core of the build machine; the fourth 7961 primes, 0.4
/// ms): every list is cut into runs of about one length, all the runs'
/// product trees made on all cores at once, then each list's runs joined
/// pairwise, the lists on threads of their own, by products that go to the
/// GPU where GMP's internal products do.
fn products_of(lists: &[Vec<u64>]) -> Vec<Vec<mp_limb_t>> {
    let total: usize = lists.iter().map(Vec::len).sum();
    let threads = parallel::cores().min(MAX_THREADS);
    let run = total.div_ceil(2 * threads).max(MIN_RUN);
    let runs: Vec<(usize, &[u64])> = lists.iter().enumerate().flat_map(|(k, l)| l.chunks(run).map(move |c| (k, c))).collect();
    let mut parts: Vec<Vec<mp_limb_t>> = vec![Vec::new(); runs.len()];
    each_item(&mut parts, 1, threads.min(runs.len()), |i, part| part[0] = tree_product(runs[i].1));
    let mut by_list: Vec<Vec<Vec<mp_limb_t>>> = vec![Vec::new(); lists.len()];
    for ((k, _), part) in runs.iter().zip(parts) {
        by_list[*k].push(part);
    }
    // The lower joins on the CPU, the lists on threads; the upper ones,
    // GPU products (GMP's internal products' sizes), one at a time: GPU
    // products from 16 threads at once spent most of their time in their
    // uploads (12 ms for 14 products of 2048 to 4095 limbs; RESULTS.md,
    // "Factorials").
    each_item(&mut by_list, 1, threads.min(lists.len()), |_, list| {
        let parts = std::mem::take(&mut list[0]);
        list[0] = joined(parts, join_on_threads_below());
    });
    by_list.into_iter().map(|list| joined(list, usize::MAX).pop().unwrap_or_else(|| vec![1])).collect()
}

/// `parts` (trimmed) joined pairwise, a level of a balanced tree at a time,
/// while their longest is below `below` limbs (or until one is left).
fn joined(mut parts: Vec<Vec<mp_limb_t>>, below: usize) -> Vec<Vec<mp_limb_t>> {
    while parts.len() > 1 && parts.iter().map(Vec::len).max().unwrap_or(0) < below {
        let mut next = Vec::with_capacity(parts.len().div_ceil(2));
        for pair in parts.chunks(2) {
            match pair {
                [a, b] => {
                    let mut p = vec![0; a.len() + b.len()];
                    own_product(&mut p, a, b, "factorial's prime product");
                    next.push(trimmed(p));
                }
                [a] => next.push(a.clone()),
                _ => unreachable!("chunks of two"),
            }
        }
        parts = next;
    }
    parts
}

/// The product of `values` (each below 2^32) on this thread: GMP's
/// products down a balanced tree, runs of a few values by single limbs.
fn tree_product(values: &[u64]) -> Vec<mp_limb_t> {
    const RUN: usize = 16;
    if values.len() <= RUN {
        let mut x: Vec<mp_limb_t> = vec![1];
        // Two values below 2^32 make one limb.
        for pair in values.chunks(2) {
            let v = pair.iter().product::<u64>();
            let n = x.len();
            // SAFETY: x holds n limbs; GMP's mul_1 works in place.
            let carry = unsafe { embedded::mpn_mul_1(x.as_mut_ptr(), x.as_ptr(), n as mp_size_t, v) };
            if carry != 0 {
                x.push(carry);
            }
        }
        return x;
    }
    let (low, high) = values.split_at(values.len() / 2);
    let (a, b) = (tree_product(low), tree_product(high));
    let mut p = vec![0; a.len() + b.len()];
    crate::cpu::mul(&mut p, &a, &b);
    trimmed(p)
}

/// `x` without its zero limbs at the top (at least one limb kept).
fn trimmed(mut x: Vec<mp_limb_t>) -> Vec<mp_limb_t> {
    while x.len() > 1 && x[x.len() - 1] == 0 {
        x.pop();
    }
    x
}

/// x * 2^bits (x trimmed, nonzero), trimmed.
fn shifted_left(x: &[mp_limb_t], bits: u64) -> Vec<mp_limb_t> {
    let (limbs, bits) = ((bits / 64) as usize, (bits % 64) as u32);
    let mut out = vec![0; limbs + x.len() + 1];
    if bits == 0 {
        out[limbs..limbs + x.len()].copy_from_slice(x);
    } else {
        // SAFETY: out holds x.len() + 1 limbs from `limbs`; GMP's lshift
        // writes x.len() of them and returns the bits out of the top.
        let top = unsafe { embedded::mpn_lshift(out.as_mut_ptr().add(limbs), x.as_ptr(), x.len() as mp_size_t, bits) };
        out[limbs + x.len()] = top;
    }
    trimmed(out)
}

/// Milliseconds since `start` (CUGMP_LOG's phase times).
fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GMP's own n! (the embedded GMP's mpz_fac_ui).
    fn gmp_factorial(n: u64) -> Vec<mp_limb_t> {
        let mut x = crate::gmp::mpz::Int::new();
        unsafe { embedded::mpz_fac_ui(x.m(), n as libc::c_ulong) };
        x.limbs().to_vec()
    }

    #[test]
    fn factorials_match_gmp() {
        for n in [2u64, 3, 4, 5, 15, 16, 17, 31, 32, 33, 100, 127, 128, 1000, 4095, 4096, 4097, 65_537, 200_003] {
            let mut x = crate::gmp::mpz::Int::new();
            unsafe { factorial_into(x.m(), n) };
            assert!(x.limbs() == gmp_factorial(n), "{n}!");
        }
    }

    /// GMP's own C(n, k) (the embedded GMP's mpz_bin_uiui).
    fn gmp_binomial(n: u64, k: u64) -> Vec<mp_limb_t> {
        let mut x = crate::gmp::mpz::Int::new();
        unsafe { embedded::mpz_bin_uiui(x.m(), n as libc::c_ulong, k as libc::c_ulong) };
        x.limbs().to_vec()
    }

    #[test]
    fn binomials_match_gmp() {
        for (n, k) in [(2u64, 1u64), (3, 1), (4, 2), (10, 3), (64, 32), (65, 33), (100, 1), (100, 99), (1000, 500), (4096, 1000), (65_537, 32_768), (200_000, 3)] {
            let mut x = crate::gmp::mpz::Int::new();
            unsafe { binomial_into(x.m(), n, k) };
            assert!(x.limbs() == gmp_binomial(n, k), "C({n}, {k})");
        }
        for (n, k) in [(10u64, 3u64), (1000, 500), (100_000, 50_000), (100_000, 10)] {
            let limbs = bin_limbs(n, k);
            assert!(limbs >= gmp_binomial(n, k).len() && limbs <= gmp_binomial(n, k).len() + 3, "size of C({n}, {k}): {limbs}");
        }
    }

    /// The lists by bit made in chunks on threads, against one pass in
    /// order (Legendre's exponents in 10^6!: several chunks, 20 bits).
    #[test]
    fn bit_lists_in_chunks_are_in_order() {
        let n = 1_000_000u64;
        let primes = odd_primes_up_to(n);
        assert!(primes.len() > 3 * EXPONENT_CHUNK);
        let got = bit_lists(&primes, |p| legendre(p, n));
        let bits = 64 - legendre(3, n).leading_zeros() as usize;
        let want: Vec<Vec<u64>> = (0..bits).map(|j| primes.iter().copied().filter(|&p| legendre(p, n) >> j & 1 == 1).collect()).collect();
        assert_eq!(got, want);
    }

    /// The odd primes to n against trial division, at the segments' edges
    /// and at squares of primes, and the count to 10^6 and 10^7.
    #[test]
    fn primes_are_the_odd_primes() {
        assert_eq!(odd_primes_up_to(2), Vec::<u64>::new());
        assert_eq!(odd_primes_up_to(3), [3]);
        assert_eq!(odd_primes_up_to(30), [3, 5, 7, 11, 13, 17, 19, 23, 29]);
        let is_odd_prime = |m: u64| !m.is_multiple_of(2) && m > 2 && (3..).step_by(2).take_while(|d| d * d <= m).all(|d| !m.is_multiple_of(d));
        let edge = 2 * SIEVE_SEGMENT as u64;
        for n in [4, 9, 25, 49, 121, 169, edge - 1, edge, edge + 1, edge + 3, 3 * edge + 7, 4 * edge + 1] {
            let want: Vec<u64> = (3..=n).filter(|&m| is_odd_prime(m)).collect();
            assert_eq!(odd_primes_up_to(n), want, "odd primes to {n}");
        }
        assert_eq!(odd_primes_up_to(1_000_000).len(), 78_497);
        assert_eq!(odd_primes_up_to(10_000_000).len(), 664_578);
    }

    /// Products of lists of any lengths, on threads, against GMP's value
    /// by value.
    #[test]
    fn products_of_any_length() {
        let values: Vec<u64> = (0..20_000u64).map(|i| (i * 2_654_435_761 % 4_294_967_291) | 1).collect();
        let lists: Vec<Vec<u64>> = [0usize, 1, 2, 17, 1024, 1025, 4097, 20_000].iter().map(|&len| values[..len].to_vec()).collect();
        let got = products_of(&lists);
        for (list, product) in lists.iter().zip(&got) {
            let mut want = crate::gmp::mpz::Int::new();
            unsafe { embedded::mpz_set_ui(want.m(), 1) };
            for &v in list {
                unsafe { embedded::mpz_mul_ui(want.m(), want.p(), v as libc::c_ulong) };
            }
            assert!(product.as_slice() == want.limbs(), "{} values", list.len());
        }
        assert!(products_of(&[]).is_empty());
        assert_eq!(shifted_left(&[1], 0), [1]);
        assert_eq!(shifted_left(&[3], 64), [0, 3]);
        assert_eq!(shifted_left(&[1 << 63], 1), [0, 1]);
    }
}
