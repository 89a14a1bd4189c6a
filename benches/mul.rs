//! Products end to end (host limbs to host limbs), cuGMP against GMP (rug) in
//! the same process and run, random operands. Prints a markdown table:
//!   size (limbs), GMP ms, cuGMP ms, GMP/cuGMP.
//! cuGMP is dlopen'ed in its own namespace (as in the tests) with
//! CUGMP_GPU=force unless the environment says otherwise.
//!   cargo bench --bench mul [-- sizes...]
#[path = "../tests/common/mod.rs"]
mod common;

use libc::{c_int, c_ulong};
use rug::rand::RandState;
use rug::Integer;
use std::time::Instant;

use common::Mpz;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up (module load, pools)
    median((0..reps).map(|_| { let t = Instant::now(); f(); t.elapsed().as_secs_f64() * 1e3 }).collect())
}

fn main() {
    if std::env::var_os("CUGMP_GPU").is_none() {
        std::env::set_var("CUGMP_GPU", "force");
    }
    let lib = common::Library::open();
    let init2: unsafe extern "C" fn(*mut Mpz, c_ulong) = unsafe { lib.sym("__gmpz_init2") };
    let mul: unsafe extern "C" fn(*mut Mpz, *const Mpz, *const Mpz) = unsafe { lib.sym("__gmpz_mul") };
    let gpu_name: unsafe extern "C" fn(*mut libc::c_char, usize) -> c_int = unsafe { lib.sym("cugmp_gpu_name") };
    let mut name = [0 as libc::c_char; 128];
    let device = if unsafe { gpu_name(name.as_mut_ptr(), name.len()) } == 0 {
        unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()
    } else {
        "no GPU (CPU engine)".into()
    };
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if args.is_empty() { vec![256, 1024, 4096, 10_000, 100_000, 1_000_000, 10_000_000] } else { args };
    println!("device: {device}; mpz_mul, n x n limbs, random operands, median ms\n");
    println!("| op | n limbs | GMP ms | cuGMP ms | GMP / cuGMP |");
    println!("|---|---|---|---|---|");
    let mut rng = RandState::new();
    for &n in &sizes {
        for square in [false, true] {
            let a = Integer::from(Integer::random_bits(64 * n as u32, &mut rng));
            let b = if square { a.clone() } else { Integer::from(Integer::random_bits(64 * n as u32, &mut rng)) };
            let reps = (2_000_000 / n).clamp(3, 200);
            let mut r = Integer::new();
            let gmp_ms = time(reps, || r.assign_mul(&a, &b, square));
            let load = |x: &Integer| {
                let mut m = Mpz { alloc: 0, size: 0, d: std::ptr::null_mut() };
                unsafe { init2(&mut m, 64 * n as c_ulong) };
                unsafe { std::ptr::copy_nonoverlapping(x.as_limbs().as_ptr(), m.d, x.as_limbs().len()) };
                m.size = x.as_limbs().len() as c_int;
                m
            };
            let (ma, mb) = (load(&a), load(&b));
            let mut mr = load(&Integer::new());
            let cu_ms = time(reps, || unsafe {
                if square { mul(&mut mr, &ma, &ma) } else { mul(&mut mr, &ma, &mb) }
            });
            let limbs = unsafe { std::slice::from_raw_parts(mr.d, mr.size as usize) };
            assert!(limbs == r.as_limbs(), "MISMATCH at {n} limbs");
            println!("| {} | {n} | {gmp_ms:.3} | {cu_ms:.3} | {:.1}x |", if square { "sqr" } else { "mul" }, gmp_ms / cu_ms);
        }
    }
}

trait AssignMul {
    fn assign_mul(&mut self, a: &Integer, b: &Integer, square: bool);
}
impl AssignMul for Integer {
    fn assign_mul(&mut self, a: &Integer, b: &Integer, square: bool) {
        use rug::Assign;
        if square { self.assign(a.square_ref()) } else { self.assign(a * b) }
    }
}
