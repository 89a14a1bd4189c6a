//! Products past what one device plan holds (src/algorithms/product.rs,
//! `product_in_halves`): n x n limbs through the exported `mpn_mul`, from a
//! size one plan takes up. GMP would take minutes to hours at these
//! sizes, so each product is checked modulo two primes against the
//! operands' residues (by the reference GMP's `mpn_mod_1`), and the table
//! gives the rate against the first size's.
//!
//!   cargo bench --bench beyond [-- --logs 26,27,28,29,30]
#[path = "../tests/common/mod.rs"]
mod common;

use common::api::api;
use gmp_mpfr_sys::gmp;
use std::time::Instant;

/// `n` pseudo-random limbs, filled on all cores.
fn random(n: usize, seed: u64) -> Vec<u64> {
    let mut x = vec![0u64; n];
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = n.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (t, part) in x.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let mut v = seed ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                for l in part {
                    v ^= v << 13;
                    v ^= v >> 7;
                    v ^= v << 17;
                    *l = v;
                }
            });
        }
    });
    x
}

fn residue(x: &[u64], p: u64) -> u64 {
    unsafe { gmp::mpn_mod_1(x.as_ptr(), x.len() as gmp::size_t, p) }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let logs: Vec<u32> = args
        .iter()
        .position(|a| a == "--logs")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![26, 27, 28, 29, 30]);
    let api = api();
    // Two primes below 2^63 (mpn_mod_1 takes any divisor).
    let primes = [(1u64 << 63) - 25, (1u64 << 62) - 57];
    println!("CUGMP_GPU={}; n x n limbs through mpn_mul, one run each after a 2^20-limb warm-up.\n", std::env::var("CUGMP_GPU").unwrap_or_default());
    println!("| n limbs a side | s | GPU products | limbs a second (n / s) | against the first row | residues mod 2 primes |");
    println!("|---|---|---|---|---|---|");
    let warm = random(1 << 20, 1);
    let mut r = vec![0u64; 2 << 20];
    unsafe { (api.mpn_mul)(r.as_mut_ptr(), warm.as_ptr(), warm.len() as i64, warm.as_ptr(), warm.len() as i64) };
    let mut first_rate = None;
    for log in logs {
        let n = 1usize << log;
        let (a, b) = (random(n, log as u64), random(n, 1000 + log as u64));
        let mut r = vec![0u64; 2 * n];
        let before = unsafe { (api.gpu_operations)() };
        let start = Instant::now();
        unsafe { (api.mpn_mul)(r.as_mut_ptr(), a.as_ptr(), n as i64, b.as_ptr(), n as i64) };
        let s = start.elapsed().as_secs_f64();
        let products = unsafe { (api.gpu_operations)() } - before;
        let right = primes.iter().all(|&p| {
            let want = (residue(&a, p) as u128 * residue(&b, p) as u128 % p as u128) as u64;
            residue(&r, p) == want
        });
        let rate = n as f64 / s;
        let against = rate / *first_rate.get_or_insert(rate);
        println!("| 2^{log} | {s:.3} | {products} | {rate:.3e} | {against:.2}x | {} |", if right { "equal" } else { "MISMATCH" });
    }
}
