//! Throughput of `cugmp_mul_batch`, `cugmp_powm_batch` and `cugmp_mod_batch`
//! against GMP (rug's, in this process) on one core and on all the host's
//! cores (a pool of one thread a core, each taking one item at a time),
//! items per second, at 256 to 8192 bits (and beyond, as asked). GMP
//! computes every item of the mul and mod batches, and of powm's (65,536
//! items up to 2048 bits, for the GPU's sake; 1024 at 4096 bits, 2048 at
//! 8192, 512 beyond) as many as take it about a second on all cores (128
//! at least, 32 past 8192 bits): those are compared with cuGMP's.
//!
//!   cargo bench --bench batch [-- --bits 256,1024] [--ops mul,powm,mod] [--items N]
#[path = "../tests/common/mod.rs"]
mod common;

use common::api::{api, Ptr, SrcPtr, Z};
use gmp_mpfr_sys::gmp;
use rug::rand::RandState;
use rug::Integer;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// One item of GMP's: its inputs and its result variable.
struct Item {
    inputs: Vec<Integer>,
    result: Integer,
}

/// Items per second of `f(item)` over all items, on `threads` threads
/// claiming one item at a time.
fn gmp_rate(items: &mut [Item], threads: usize, f: fn(&mut Item)) -> f64 {
    let next = AtomicUsize::new(0);
    let n = items.len();
    let base = items.as_mut_ptr() as usize;
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Relaxed);
                if i >= n {
                    break;
                }
                // Each index is claimed once: no two threads touch one item.
                f(unsafe { &mut *(base as *mut Item).add(i) });
            });
        }
    });
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let bits: Vec<u32> = value("--bits").map_or(vec![256, 1024, 2048, 4096, 8192], |s| s.split(',').filter_map(|x| x.parse().ok()).collect());
    let ops = value("--ops").unwrap_or_else(|| "mul,mod,powm".into());
    let items_override: Option<usize> = value("--items").and_then(|k| k.parse().ok());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let api = api();
    let (mul, modulo, powm) = (api.mul_batch, api.mod_batch, api.powm_batch);
    let mut rng = RandState::new();
    println!("CUGMP_GPU={}; GMP 6.3 (rug) on 1 core and on {cores} threads; items per second.\n", std::env::var("CUGMP_GPU").unwrap_or_default());
    println!("| op | bits | items | GMP 1 core | GMP {cores} threads | cuGMP batch | cuGMP / GMP 1 core | cuGMP / GMP {cores} threads |");
    println!("|---|---|---|---|---|---|---|---|");
    for op in ops.split(',') {
        for &b in &bits {
            // The batch's items, and the first of them GMP computes on all
            // cores (powm: about a second's work) and on one (an eighth).
            let (n, n_all) = match (op, items_override) {
                (_, Some(k)) => (k, k),
                ("powm", None) => {
                    // From 4096 bits GMP's second of work is the batch.
                    let gmp = ((1u64 << 44) / (b as u64).pow(3)).max(if b > 8192 { 32 } else { 128 }) as usize;
                    let n = match b { 0..=2048 => 1 << 16, 2049..=4096 => 1024, 4097..=8192 => 2048, _ => 512 };
                    (n, gmp.min(n))
                }
                _ => {
                    let n = ((1u64 << 40) / (b as u64 * b as u64)).clamp(1024, 1 << 20) as usize;
                    (n, n)
                }
            };
            let mut items: Vec<Item> = (0..n)
                .map(|_| {
                    let mut r = |bits: u32| Integer::from(Integer::random_bits(bits, &mut rng));
                    let inputs = match op {
                        "mul" => vec![r(b), r(b)],
                        "mod" => vec![r(2 * b), r(b) | Integer::from(1) << (b - 1)],
                        _ => vec![r(b), r(b), r(b) | 1u32 | Integer::from(1) << (b - 1)],
                    };
                    Item { inputs, result: Integer::new() }
                })
                .collect();
            let f: fn(&mut Item) = match op {
                "mul" => |it| unsafe { gmp::mpz_mul(it.result.as_raw_mut(), it.inputs[0].as_raw(), it.inputs[1].as_raw()) },
                "mod" => |it| unsafe { gmp::mpz_mod(it.result.as_raw_mut(), it.inputs[0].as_raw(), it.inputs[1].as_raw()) },
                _ => |it| unsafe { gmp::mpz_powm(it.result.as_raw_mut(), it.inputs[0].as_raw(), it.inputs[1].as_raw(), it.inputs[2].as_raw()) },
            };
            gmp_rate(&mut items[..n_all], cores, f); // warm-up: the results' limbs allocated
            let one = gmp_rate(&mut items[..n_all.div_ceil(8)], 1, f);
            let all = gmp_rate(&mut items[..n_all], cores, f);
            let mut inputs: Vec<Vec<Z>> = (0..items[0].inputs.len()).map(|k| items.iter().map(|it| Z::from(&it.inputs[k])).collect()).collect();
            let mut results: Vec<Z> = (0..n).map(|_| Z::new()).collect();
            let ptrs: Vec<Vec<SrcPtr>> = inputs.iter_mut().map(|v| v.iter_mut().map(|z| z.ptr() as SrcPtr).collect()).collect();
            let r: Vec<Ptr> = results.iter_mut().map(|z| z.ptr()).collect();
            let run = || unsafe {
                match op {
                    "mul" => mul(n, r.as_ptr(), ptrs[0].as_ptr(), ptrs[1].as_ptr()),
                    "mod" => modulo(n, r.as_ptr(), ptrs[0].as_ptr(), ptrs[1].as_ptr()),
                    _ => powm(n, r.as_ptr(), ptrs[0].as_ptr(), ptrs[1].as_ptr(), ptrs[2].as_ptr()),
                }
            };
            run();
            let reps = 3;
            let t = Instant::now();
            for _ in 0..reps {
                run();
            }
            let batch = (reps * n) as f64 / t.elapsed().as_secs_f64();
            if let Some(i) = (0..n_all).find(|&i| results[i].get() != items[i].result) {
                println!("MISMATCH in cugmp_{op}_batch at {b} bits, item {i}");
            }
            println!("| {op} | {b} | {n} | {one:.3e} | {all:.3e} | {batch:.3e} | {:.2}x | {:.2}x |", batch / one, batch / all);
        }
    }
}
