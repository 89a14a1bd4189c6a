//! A quick self-test of the GPU engine (`cugmp_self_test`, `cugmp-info`):
//! products (1 to 10^5 limbs, squares among them), sums and two's-complement
//! logic computed on the GPU and compared with the embedded GMP.

use crate::cpu;
use crate::gmp::embedded;
use crate::gmp::mpz::Int;
use crate::gpu::linear::{Logic, Owned, Signed};
use crate::gpu::resident::pseudo_random;
use crate::gpu::{Gpu, GpuError};

/// How many results were checked, and how many differed from the CPU
/// engine's; an error where the GPU failed (not a wrong result).
pub fn run(g: &Gpu) -> Result<(usize, usize), GpuError> {
    let (mut checked, mut wrong) = (0, 0);
    for (k, (un, vn)) in [(1usize, 1usize), (7, 3), (100, 100), (5000, 4999), (100_000, 100_000), (100_000, 100), (3000, 3000)].into_iter().enumerate() {
        let square = k == 6;
        let u = pseudo_random(un, 2 * k as u64 + 1);
        let v = if square { u.clone() } else { pseudo_random(vn, 2 * k as u64 + 2) };
        let product = if square { g.mul(&u, &u)? } else { g.mul(&u, &v)? };
        checked += 1;
        wrong += usize::from(product != cpu::product(&u, &v, None));

        // a + (-b) and a AND (-b) against GMP's mpz functions.
        let (a, b) = (Signed { negative: false, magnitude: &u }, Signed { negative: true, magnitude: &v });
        for and in [false, true] {
            let got = if and { g.logic(Logic::And, a, b)? } else { g.add(a, b)? };
            checked += 1;
            wrong += usize::from(got != gmp_result(&u, &v, and));
        }
    }
    Ok((checked, wrong))
}

/// `u + (-v)` (or `u & (-v)` with `and`) by the embedded GMP.
fn gmp_result(u: &[u64], v: &[u64], and: bool) -> Owned {
    let (mut r, mut a, mut b) = (Int::new(), Int::new(), Int::new());
    // SAFETY: every mpz_t here is an initialised Int; u and v are read as
    // little-endian arrays of 8-byte words.
    unsafe {
        embedded::mpz_import(a.m(), u.len(), -1, 8, 0, 0, u.as_ptr() as *const libc::c_void);
        embedded::mpz_import(b.m(), v.len(), -1, 8, 0, 0, v.as_ptr() as *const libc::c_void);
        embedded::mpz_neg(b.m(), b.p());
        if and {
            embedded::mpz_and(r.m(), a.p(), b.p());
        } else {
            embedded::mpz_add(r.m(), a.p(), b.p());
        }
    }
    Owned::new(r.sign() < 0, r.limbs().to_vec())
}
