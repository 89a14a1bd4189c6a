//! The kernels' own code (cuda/ntt.cu, compiled as host C++ by
//! c_tests/ntt_model.cpp) run on the CPU against the embedded GMP, so that
//! machines without a GPU check the kernels' arithmetic and indexing.

use super::plan::{cyclic_shape, cyclic_shape_from, pass_threads, passes_in_tiles, product_shape, transform_shape, wide_shape};
use crate::gmp::embedded;

/// The kernels' own code (cuda/ntt.cu, compiled as host C++ by
/// c_tests/ntt_model.cpp) on the CPU, block by block and thread by
/// thread (as many threads as the GPU launches), with this
/// module's pass plan, against the embedded GMP: tables, both
/// transforms, the pointwise product, the CRT, the fold into limbs (for
/// lengths 3 * 2^k, the kernel that takes the inverse's radix-3 step with
/// the fold, checked against the two apart; lengths 5 * 2^k on the second
/// set of primes; and, up to 8192 limbs, the
/// small products' one-block fold and its scan of carries), on machines
/// without a GPU. Products against GMP's mpn_mul; products mod
/// B^rn - 1 (one cyclic convolution of 2 rn points) against GMP's own
/// mpn_mulmod_bnm1 / mpn_sqrmod_bnm1, representation of zero included.
#[test]
fn host_model_matches_gmp() {
    let model = crate::testing::HostModel::build("ntt_model");

    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || crate::testing::xorshift(&mut seed);
    // (un, vn, square, tile, length). Sizes: one tile, one and two
    // passes, lengths 2^k, 3 * 2^k and 5 * 2^k, unbalanced; every other case
    // all-ones operands, which give the largest coefficients (and, mod
    // B^rn - 1 with un = rn, a product in the class of zero). A tile
    // given (log2) replaces the host's choice: 2^10 tiles at 2^19 (and 2^9
    // at 5 * 2^18) make three passes, the only way a pass that neither cuts limbs nor
    // multiplies pointwise runs (2^14 tiles take every transform up to
    // the longest in two passes). Tiles of 2^13
    // and 2^14 (300000 x 230000 and 250000 x 240000 of 2^k and 3 * 2^k
    // points) are the only ones where a thread takes more than one batch
    // of NTT_BATCH elements. Lengths of 5 * 2^k (the second set of
    // primes) come from `product_shape` (whole products, chunks) and
    // `cyclic_shape`; their radix-5 step reads one to five rows of
    // coefficients (20000 x 3: five), and mod B^rn - 1 with un = rn the
    // all-ones operands give a product in the class of zero. The passes of
    // 14 stages without a twist (250000 x 240000 and up) take a bottom step
    // of two stages on the roots' second layout and the padding of sh = 5
    // (ntt_bottom_stages, tile_word); tiles of 2^12 at 2^20 and 2^17 points
    // make twisted passes of 8 and 5 stages, which do not.
    enum Length {
        /// `transform_shape`: 2^k or 3 * 2^k points (chunks, pieces,
        /// small products).
        Pow2Or3,
        /// `product_shape`: a whole product (or a chunk's), 5 * 2^k points
        /// where shorter.
        Whole,
        /// `cyclic_shape` of rn: a product mod B^rn - 1.
        Cyclic(usize),
        /// `wide_shape`: a whole product on the wide sets (five primes, a
        /// limb a coefficient).
        Wide,
        /// `cyclic_shape_from` of rn on the wide sets: a product mod B^rn -
        /// 1 by a cyclic convolution of rn points.
        WideCyclic(usize),
    }
    type Case = (usize, usize, bool, Option<u32>, Length);
    let cases: [Case; 56] = [
        (1, 1, false, None, Length::Pow2Or3),
        (3, 2, false, None, Length::Pow2Or3),
        (5, 5, true, None, Length::Pow2Or3),
        (100, 37, false, None, Length::Pow2Or3),
        (2047, 2049, false, None, Length::Pow2Or3),
        (3000, 3000, true, None, Length::Pow2Or3),
        (20000, 3, false, None, Length::Pow2Or3),
        (70000, 61000, false, None, Length::Pow2Or3),
        (110000, 100000, false, Some(10), Length::Pow2Or3),
        (400000, 200000, false, Some(10), Length::Pow2Or3),
        (70000, 70000, true, Some(11), Length::Pow2Or3),
        (48, 30, false, None, Length::Cyclic(48)),
        (64, 64, false, None, Length::Cyclic(64)),
        (1536, 1000, false, None, Length::Cyclic(1536)),
        (1024, 1024, true, None, Length::Cyclic(1024)),
        (3 << 12, (3 << 11) + 5, false, None, Length::Cyclic(3 << 12)),
        (1 << 15, (1 << 14) + 3, false, Some(10), Length::Cyclic(1 << 15)),
        (3 << 14, 3 << 14, true, None, Length::Cyclic(3 << 14)),
        (40000, 30000, false, Some(10), Length::Cyclic(3 << 14)),
        (300000, 230000, false, None, Length::Pow2Or3),
        (250000, 240000, false, None, Length::Pow2Or3),
        (3, 2, false, None, Length::Whole),
        (5, 5, true, None, Length::Whole),
        (100, 37, false, None, Length::Whole),
        (20000, 3, false, None, Length::Whole),
        (400000, 200000, false, Some(9), Length::Whole),
        (70000, 70000, true, Some(11), Length::Whole),
        (300000, 230000, false, None, Length::Whole),
        (310000, 300000, false, None, Length::Whole),
        (5 << 9, 5 << 9, false, None, Length::Cyclic(5 << 9)),
        (5 << 9, 1800, false, None, Length::Cyclic(5 << 9)),
        (5 << 12, 5 << 12, true, Some(10), Length::Cyclic(5 << 12)),
        (5 << 13, 20000, false, None, Length::Cyclic(5 << 13)),
        (260_000, 250_000, false, Some(12), Length::Pow2Or3),
        (31_500, 31_500, true, Some(12), Length::Pow2Or3),
        // A last pass shorter than its tile (a tile's groups more than
        // one): 2^14 points in tiles of 2^10 make 5 + 9 stages.
        (5000, 3000, false, Some(10), Length::Pow2Or3),
        // The wide sets: every radix, one to three passes (2^10 tiles at
        // 2^19 points), the 14-stage passes with their two-stage bottom
        // step (2^20 points), squares.
        (1, 1, false, None, Length::Wide),
        (3, 2, false, None, Length::Wide),
        (5, 5, true, None, Length::Wide),
        (100, 37, false, None, Length::Wide),
        (2047, 2049, false, None, Length::Wide),
        (3000, 3000, true, None, Length::Wide),
        (20000, 3, false, None, Length::Wide),
        (220_000, 200_000, false, Some(10), Length::Wide),
        (70000, 70000, true, Some(11), Length::Wide),
        (500_000, 480_000, false, None, Length::Wide),
        (300_000, 230_000, false, None, Length::Wide),
        // Last passes shorter than their tiles: 2^14 points in tiles of
        // 2^10 (5 + 9 stages), and 2^21 in the tiles of the device (9 + 12).
        (9000, 7000, false, Some(10), Length::Wide),
        (8000, 8000, true, Some(10), Length::Wide),
        (1_000_000, 900_000, false, None, Length::Wide),
        // Products mod B^rn - 1 on the wide sets: every radix, rn limbs of
        // all ones (the class of zero) and fewer, squares, two passes.
        (4096, 4096, false, None, Length::WideCyclic(4096)),
        (6144, 3000, false, None, Length::WideCyclic(6144)),
        (5 << 10, 5 << 10, true, None, Length::WideCyclic(5 << 10)),
        (5 << 13, 20000, false, Some(10), Length::WideCyclic(5 << 13)),
        (1 << 16, (1 << 15) + 3, false, None, Length::WideCyclic(1 << 16)),
        (3 << 14, 3 << 14, true, None, Length::WideCyclic(3 << 14)),
    ];
    let mut radices = Vec::new();
    for (i, &(un, vn, square, tile, ref length)) in cases.iter().enumerate() {
        let modulus = match *length {
            Length::Cyclic(rn) | Length::WideCyclic(rn) => Some(rn),
            _ => None,
        };
        let ones = i % 2 == 1;
        let mut limb = || if ones { u64::MAX } else { random() };
        let u: Vec<u64> = (0..un).map(|_| limb()).collect();
        let v: Vec<u64> = if square { u.clone() } else { (0..vn).map(|_| limb()).collect() };
        let (shape, n) = match *length {
            Length::Cyclic(rn) => (cyclic_shape(rn).expect("a cyclic length"), rn),
            Length::Whole => (product_shape(un + vn), un + vn),
            Length::Pow2Or3 => (transform_shape(un + vn), un + vn),
            Length::Wide => (wide_shape(un + vn).expect("a wide transform"), un + vn),
            Length::WideCyclic(rn) => (cyclic_shape_from(rn, 0).filter(|s| s.wide).expect("a wide cyclic length"), rn),
        };
        let log_n = shape.log_n;
        radices.push(shape.radix);
        let log_t = tile.unwrap_or(shape.tile_log());
        let plan = passes_in_tiles(log_n, log_t);
        if tile.is_some() && modulus.is_none() {
            assert_eq!(plan.len(), if log_t <= 10 && log_n > 14 { 3 } else { 2 }, "{un}x{vn}: {plan:?}");
        }
        let mut input = format!("{log_n} {} {log_t} {} {} {} {}\n", log_n.div_ceil(2), pass_threads(log_t), shape.radix, shape.wide as u32, plan.len());
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
    assert_eq!(radices, [1, 3, 3, 3, 1, 3, 3, 1, 1, 3, 3, 3, 1, 3, 1, 3, 1, 3, 3, 3, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 1, 3, 5, 5, 1, 3, 5, 1, 5, 1, 5, 1, 1, 1, 1, 3, 5, 5, 1, 3], "the cases above should cover every radix");
}

