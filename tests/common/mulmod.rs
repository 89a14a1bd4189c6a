//! Products mod B^rn - 1 (GMP's mpn_mulmod_bnm1 and mpn_sqrmod_bnm1, which
//! its divisions, inversions, Hensel divisions and gcd call with rn from
//! mpn_mulmod_bnm1_next_size) through the library's exported entry points,
//! against the same routines of rug's static GMP at the same rn.

use super::api::Api;
use rug::rand::RandState;
use rug::Integer;

unsafe extern "C" {
    // The reference: rug's static GMP (these are GMP-internal routines, but
    // global symbols of libgmp).
    fn __gmpn_mulmod_bnm1(rp: *mut u64, rn: i64, ap: *const u64, an: i64, bp: *const u64, bn: i64, tp: *mut u64);
    fn __gmpn_sqrmod_bnm1(rp: *mut u64, rn: i64, ap: *const u64, an: i64, tp: *mut u64);
    fn __gmpn_mulmod_bnm1_next_size(n: i64) -> i64;
}

type MulMod = unsafe extern "C" fn(*mut u64, i64, *const u64, i64, *const u64, i64, *mut u64);
type SqrMod = unsafe extern "C" fn(*mut u64, i64, *const u64, i64, *mut u64);
type NextSize = unsafe extern "C" fn(i64) -> i64;

/// The size from which mpn_mulmod_bnm1_next_size answers a cyclic length
/// where GMP's internal products go to the GPU (src/algorithms/hooks.rs,
/// `CYCLIC_FROM`); below it GMP's own size, the product made whole on the
/// GPU and folded.
pub const CYCLIC_FROM: i64 = 2048;

/// 2^a, 3 * 2^a or 5 * 2^a: 2 rn points are one transform of cuGMP's NTT.
pub fn is_cyclic_size(rn: i64) -> bool {
    let odd = rn >> rn.trailing_zeros();
    odd == 1 || odd == 3 || odd == 5
}

/// For each n in `sizes`: the library's next size (returned per n, with
/// GMP's, for the caller's expectations; checked to be monotone and from
/// GMP's up), then products mod B^rn - 1 with wrap-around (both operands
/// of rn limbs, unbalanced, squares) and without, random, all-ones (whose
/// products at an = rn are in the class of zero) and sparse operands, and
/// at rn = n itself, compared limb for limb with the reference.
pub fn mulmod_sweep(api: &Api, sizes: &[i64], rng: &mut RandState) -> Vec<(i64, i64, i64)> {
    // SAFETY: GMP's types for these (gmp-impl.h).
    let (mulmod, sqrmod, next_size) = unsafe {
        (
            api.lib.sym::<MulMod>("__gmpn_mulmod_bnm1"),
            api.lib.sym::<SqrMod>("__gmpn_sqrmod_bnm1"),
            api.lib.sym::<NextSize>("__gmpn_mulmod_bnm1_next_size"),
        )
    };
    let mut sizes_seen = Vec::new();
    for &n in sizes {
        let (rn, gmp_rn) = unsafe { (next_size(n), __gmpn_mulmod_bnm1_next_size(n)) };
        assert!(rn >= gmp_rn && rn < gmp_rn + gmp_rn / 2 + 1, "mpn_mulmod_bnm1_next_size({n}) = {rn}, GMP's {gmp_rn}");
        assert!(unsafe { next_size(n - 1) } <= rn, "mpn_mulmod_bnm1_next_size is not monotone at {n}");
        sizes_seen.push((n, rn, gmp_rn));
        for rn in [rn, n] {
            let shapes = [(rn, rn), (rn, rn / 2 + 1), (rn - rn / 4, rn / 3 + 1), (rn / 2, rn / 3 + 1)];
            for pattern in 0..3 {
                let gen = |len: i64, rng: &mut RandState| -> Vec<u64> {
                    let len = len as usize;
                    match pattern {
                        0 => (0..len).map(|_| Integer::from(Integer::random_bits(64, rng)).to_u64_wrapping()).collect(),
                        1 => vec![u64::MAX; len],
                        _ => (0..len).map(|i| (i % 97 == 3) as u64 | ((i == len - 1) as u64) << 63).collect(),
                    }
                };
                let mut scratch = vec![0u64; 2 * rn as usize + 8];
                for (an, bn) in shapes {
                    let (a, b) = (gen(an, rng), gen(bn, rng));
                    let out = rn.min(an + bn) as usize;
                    let (mut got, mut want) = (vec![0x5a5a_u64; out], vec![0u64; out]);
                    unsafe {
                        mulmod(got.as_mut_ptr(), rn, a.as_ptr(), an, b.as_ptr(), bn, scratch.as_mut_ptr());
                        __gmpn_mulmod_bnm1(want.as_mut_ptr(), rn, a.as_ptr(), an, b.as_ptr(), bn, scratch.as_mut_ptr());
                    }
                    assert!(got == want, "MISMATCH in mpn_mulmod_bnm1 rn {rn}, {an}x{bn}, pattern {pattern}");
                    if bn > rn / 4 {
                        let out = rn.min(2 * bn) as usize;
                        let (mut got, mut want) = (vec![0x5a5a_u64; out], vec![0u64; out]);
                        unsafe {
                            sqrmod(got.as_mut_ptr(), rn, b.as_ptr(), bn, scratch.as_mut_ptr());
                            __gmpn_sqrmod_bnm1(want.as_mut_ptr(), rn, b.as_ptr(), bn, scratch.as_mut_ptr());
                        }
                        assert!(got == want, "MISMATCH in mpn_sqrmod_bnm1 rn {rn}, {bn} limbs, pattern {pattern}");
                    }
                }
            }
        }
    }
    sizes_seen
}
