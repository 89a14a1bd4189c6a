//! The kernels' own code (cuda/ntt.cu, compiled as host C++ by
//! c_tests/ntt_model.cpp) run on the CPU against the embedded GMP, so that
//! machines without a GPU check the kernels' arithmetic and indexing.

use super::plan::{cyclic_shape, pass_threads, passes_in_tiles, tile_log, transform_shape};
use crate::gmp::embedded;

/// The kernels' own code (cuda/ntt.cu, compiled as host C++ by
/// c_tests/ntt_model.cpp) on the CPU, block by block and thread by
/// thread (as many threads as the GPU launches), with this
/// module's pass plan, against the embedded GMP: tables, both
/// transforms, the pointwise product, the CRT, the fold into limbs (for
/// lengths 3 * 2^k, the kernel that takes the inverse's radix-3 step with
/// the fold, checked against the two apart; and, up to 8192 limbs, the
/// small products' one-block fold and its scan of carries), on machines
/// without a GPU. Products against GMP's mpn_mul; products mod
/// B^rn - 1 (one cyclic convolution of 2 rn points) against GMP's own
/// mpn_mulmod_bnm1 / mpn_sqrmod_bnm1, representation of zero included.
#[test]
fn host_model_matches_gmp() {
    let model = crate::testing::HostModel::build("ntt_model");

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || crate::testing::xorshift(&mut seed);
    // (un, vn, square, tile, modulus). Sizes: one tile, one and two
    // passes, lengths 2^k and 3 * 2^k, unbalanced; every other case
    // all-ones operands, which give the largest coefficients (and, mod
    // B^rn - 1 with un = rn, a product in the class of zero). A tile
    // given (log2) replaces the host's choice: 2^10 tiles at 2^19 make
    // three passes, the only way a pass that neither cuts limbs nor
    // multiplies pointwise runs (2^14 tiles take every transform up to
    // the longest in two passes). Tiles of 2^13
    // and 2^14 (the last two cases) are the only ones where a thread
    // takes more than one batch of NTT_BATCH elements.
    type Case = (usize, usize, bool, Option<u32>, Option<usize>);
    let cases: [Case; 21] = [
        (1, 1, false, None, None),
        (3, 2, false, None, None),
        (5, 5, true, None, None),
        (100, 37, false, None, None),
        (2047, 2049, false, None, None),
        (3000, 3000, true, None, None),
        (20000, 3, false, None, None),
        (70000, 61000, false, None, None),
        (110000, 100000, false, Some(10), None),
        (400000, 200000, false, Some(10), None),
        (70000, 70000, true, Some(11), None),
        (48, 30, false, None, Some(48)),
        (64, 64, false, None, Some(64)),
        (1536, 1000, false, None, Some(1536)),
        (1024, 1024, true, None, Some(1024)),
        (3 << 12, (3 << 11) + 5, false, None, Some(3 << 12)),
        (1 << 15, (1 << 14) + 3, false, Some(10), Some(1 << 15)),
        (3 << 14, 3 << 14, true, None, Some(3 << 14)),
        (40000, 30000, false, Some(10), Some(3 << 14)),
        (300000, 230000, false, None, None),
        (250000, 240000, false, None, None),
    ];
    let mut radices = Vec::new();
    for (i, &(un, vn, square, tile, modulus)) in cases.iter().enumerate() {
        let ones = i % 2 == 1;
        let mut limb = || if ones { u64::MAX } else { random() };
        let u: Vec<u64> = (0..un).map(|_| limb()).collect();
        let v: Vec<u64> = if square { u.clone() } else { (0..vn).map(|_| limb()).collect() };
        let (shape, n) = match modulus {
            Some(rn) => (cyclic_shape(rn).expect("a cyclic length"), rn),
            None => (transform_shape(un + vn), un + vn),
        };
        let log_n = shape.log_n;
        radices.push(shape.radix);
        let log_t = tile.unwrap_or(tile_log(log_n));
        let plan = passes_in_tiles(log_n, log_t);
        if tile.is_some() && modulus.is_none() {
            assert_eq!(plan.len(), if log_t == 10 { 3 } else { 2 }, "{un}x{vn}: {plan:?}");
        }
        let mut input = format!("{log_n} {} {log_t} {} {} {}\n", log_n.div_ceil(2), pass_threads(log_t), shape.radix, plan.len());
        for (log_s, k) in &plan {
            input += &format!("{log_s} {k}\n");
        }
        input += &format!("{n} {}\n", modulus.is_some() as u32);
        let hex = crate::testing::hex;
        input += &format!("{un}\n{}\n", hex(&u));
        input += &if square { "0\n".to_string() } else { format!("{vn}\n{}\n", hex(&v)) };
        let got = model.run(&input).unwrap_or_else(|status| panic!("model failed on {un}x{vn} mod {modulus:?}: {status:?}"));

        let mut want = vec![0u64; n];
        let (a, b) = if un >= vn { (&u, &v) } else { (&v, &u) };
        let (ap, an, bp, bn) = (a.as_ptr(), a.len() as _, b.as_ptr(), b.len() as _);
        match modulus {
            None => unsafe { embedded::mpn_mul(want.as_mut_ptr(), ap, an, bp, bn) },
            Some(rn) => {
                // GMP's scratch for these: at most 2 rn + 4 limbs.
                let mut scratch = vec![0u64; 2 * rn + 8];
                let (wp, tp) = (want.as_mut_ptr(), scratch.as_mut_ptr());
                if square {
                    unsafe { embedded::mpn_sqrmod_bnm1(wp, rn as _, ap, an, tp) };
                } else {
                    unsafe { embedded::mpn_mulmod_bnm1(wp, rn as _, ap, an, bp, bn, tp) };
                }
                0
            }
        };
        assert!(want.iter().any(|&l| l != 0));
        assert!(got == want, "model differs from GMP at {un}x{vn} mod {modulus:?} ({shape:?}, passes {plan:?})");
    }
    assert_eq!(radices, [1, 3, 3, 3, 1, 3, 3, 1, 1, 3, 3, 3, 1, 3, 1, 3, 1, 3, 3, 3, 1], "the cases above should cover both radices");
}

