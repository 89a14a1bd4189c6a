//! `cugmp_gf2x_mul` against the gf2x library's `gf2x_mul` (libgf2x, one
//! core) in the same run, n x n bits for n from 2^16 up, products compared.
//! Past `--ref-max-log` (gf2x takes minutes there) cuGMP alone, its product
//! checked by the distributive law a (b + c) = a b + a c.
//!
//!   cargo bench --bench gf2x [-- --min-log 16] [--max-log 24] [--ref-max-log 26]
#[path = "../tests/common/mod.rs"]
mod common;

use common::api::api;
use std::ffi::CString;
use std::time::Instant;

type Gf2xMul = unsafe extern "C" fn(*mut u64, *const u64, i64, *const u64, i64);
type Reference = unsafe extern "C" fn(*mut u64, *const u64, libc::c_ulong, *const u64, libc::c_ulong) -> libc::c_int;

/// Median ms of `reps` runs, after a warm-up run where `warm`.
fn median_ms(reps: usize, warm: bool, mut f: impl FnMut()) -> f64 {
    if warm {
        f();
    }
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str, default: u32| -> u32 { args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default) };
    let (min_log, max_log, ref_max_log) = (flag("--min-log", 16), flag("--max-log", 22), flag("--ref-max-log", 26));
    let ours: Gf2xMul = unsafe { api().lib.sym("cugmp_gf2x_mul") };
    let reference: Reference = unsafe {
        let h = ["libgf2x.so.3", "libgf2x.so"]
            .iter().map(|n| libc::dlopen(CString::new(*n).unwrap().as_ptr(), libc::RTLD_NOW)).find(|h| !h.is_null()).expect("libgf2x (libgf2x-dev)");
        std::mem::transmute(libc::dlsym(h, c"gf2x_mul".as_ptr()))
    };
    println!("CUGMP_GPU={}; gf2x on one core; ms, median.\n", std::env::var("CUGMP_GPU").unwrap_or_default());
    println!("| bits a side | gf2x ms | cuGMP ms | gf2x / cuGMP |");
    println!("|---|---|---|---|");
    let mut seed = 0x9e3779b97f4a7c15u64;
    for log in min_log..=max_log {
        let n = 1usize << (log - 6);
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let a: Vec<u64> = (0..n).map(|_| next()).collect();
        let b: Vec<u64> = (0..n).map(|_| next()).collect();
        let (mut want, mut got) = (vec![0u64; 2 * n], vec![0u64; 2 * n]);
        if log > ref_max_log {
            // One timed run after a warm-up, then a (b + c) against a b + a c.
            let c = median_ms(1, true, || unsafe { ours(got.as_mut_ptr(), a.as_ptr(), n as i64, b.as_ptr(), n as i64) });
            let third: Vec<u64> = (0..n).map(|_| next()).collect();
            let sum: Vec<u64> = b.iter().zip(&third).map(|(x, y)| x ^ y).collect();
            let mut left = vec![0u64; 2 * n];
            unsafe {
                ours(left.as_mut_ptr(), a.as_ptr(), n as i64, sum.as_ptr(), n as i64);
                ours(want.as_mut_ptr(), a.as_ptr(), n as i64, third.as_ptr(), n as i64);
            }
            if left.iter().zip(got.iter().zip(&want)).any(|(l, (g, w))| *l != g ^ w) {
                println!("MISMATCH at 2^{log} bits: a (b + c) != a b + a c");
            }
            println!("| 2^{log} | | {c:.3} | (a (b + c) = a b + a c) |");
            continue;
        }
        // gf2x takes seconds from 2^24 bits: one run there.
        let (reps, warm) = match log {
            0..=20 => (9, true),
            21..=23 => (3, true),
            _ => (1, false),
        };
        let g = median_ms(reps, warm, || unsafe {
            reference(want.as_mut_ptr(), a.as_ptr(), n as _, b.as_ptr(), n as _);
        });
        let c = median_ms(reps.max(3), true, || unsafe { ours(got.as_mut_ptr(), a.as_ptr(), n as i64, b.as_ptr(), n as i64) });
        if got != want {
            println!("MISMATCH at 2^{log} bits");
        }
        println!("| 2^{log} | {g:.3} | {c:.3} | {:.3}x |", g / c);
    }
}
