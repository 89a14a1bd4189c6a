//! The field's arithmetic against GMP (rug), and the kernels' own code
//! (cuda/gfp.cu, compiled as host C++ by c_tests/gfp_model.cpp) run on the
//! CPU against the embedded GMP's products, so that machines without a GPU
//! check the arithmetic and indexing of the second product engine.

use super::field::{self, Elem, HALF, K, R};
use super::{root_factors, stages, transform_log, Stage};
use crate::gmp::embedded;
use rug::integer::Order;
use rug::ops::{Pow, RemRounding};
use rug::Integer;

fn p() -> Integer {
    Integer::from(R).pow(K as u32) + 1u32
}

fn value(x: &Elem) -> Integer {
    Integer::from_digits(&x.canonical(), Order::Lsf)
}

/// An element with random digits, the extremes of the normalised range
/// among them.
fn random_elem(seed: &mut u64) -> Elem {
    Elem(std::array::from_fn(|_| match crate::testing::xorshift(seed) % 8 {
        0 => HALF + 3,
        1 => -HALF - 3,
        2 => 0,
        _ => (crate::testing::xorshift(seed) % (R as u64 + 7)) as i64 - HALF - 3,
    }))
}

#[test]
fn the_modulus_is_a_prime_and_r_a_16th_root_of_unity() {
    let p = p();
    assert_ne!(p.is_probably_prime(40), rug::integer::IsPrime::No);
    assert_eq!(Integer::from_digits(&field::modulus(), Order::Lsf), p);
    assert_eq!(p.significant_bits(), 489);
    // r^8 = -1, so r has order 16; p - 1 = r^8 has 2^328 in it.
    assert_eq!(value(&Elem::r_pow(8)), p.clone() - 1u32);
    assert_eq!((p - 1u32).find_one(0), Some(field::TWO_ADICITY));
}

#[test]
fn products_and_moves_equal_gmp_mod_p() {
    let p = p();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3000 {
        let (x, y) = (random_elem(&mut seed), random_elem(&mut seed));
        let (vx, vy) = (value(&x), value(&y));
        let xy = x.mul(&y);
        assert!(xy.0.iter().all(|d| d.abs() <= HALF + 3), "{xy:?} not normalised");
        assert_eq!(value(&xy), (vx.clone() * &vy) % &p);
        assert_eq!(value(&x.add(&y)), (vx.clone() + &vy) % &p);
        assert_eq!(value(&x.sub(&y)), (vx.clone() - &vy).rem_euc(&p));
        let e = (crate::testing::xorshift(&mut seed) % 16) as usize;
        assert_eq!(value(&x.times_r_pow(e)), (vx * Integer::from(R).pow(e as u32)) % &p);
    }
    // -1 times -1, and p - 1 (all digits of one sign at the extremes).
    let minus_one = Elem([-1, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(minus_one.mul(&minus_one).canonical(), Elem::ONE.canonical());
    let low = Elem([-HALF - 3; K]);
    assert_eq!(value(&low.mul(&low)), (value(&low).square()) % &p);
}

#[test]
fn limbs_convert_to_their_value() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..500 {
        let l: [u64; 3] = if i == 0 { [u64::MAX; 3] } else { std::array::from_fn(|_| crate::testing::xorshift(&mut seed)) };
        assert_eq!(value(&Elem::from_limbs(l)), Integer::from_digits(&l, Order::Lsf));
    }
}

#[test]
fn roots_of_unity_have_their_order_and_fourth_power_r4() {
    let minus_one = Elem([-1, 0, 0, 0, 0, 0, 0, 0]).canonical();
    for log_n in [2, 3, 4, 5, 10, 17, 27] {
        let w = field::root_of_unity(log_n);
        assert_eq!(w.square_times(log_n).canonical(), Elem::ONE.canonical(), "2^{log_n}");
        assert_eq!(w.square_times(log_n - 1).canonical(), minus_one, "2^{log_n}");
        assert_eq!(w.square_times(log_n - 2).canonical(), Elem::r_pow(4).canonical(), "2^{log_n}");
    }
}

#[test]
fn transform_plans() {
    assert_eq!(transform_log(1, 1), Some(2));
    assert_eq!(transform_log(3, 3), Some(2));
    // 2^26 coefficients a side: the longest; one more each is too long.
    assert_eq!(transform_log(3 << 26, 3 << 26), Some(27));
    assert_eq!(transform_log((3 << 26) + 1, (3 << 26) + 1), None);
    assert_eq!(stages(5), [Stage::Radix4(5), Stage::Radix4(3), Stage::Radix2]);
    assert_eq!(stages(4), [Stage::Radix4(4), Stage::Radix4(2)]);
}

/// The kernels' own code on the CPU (c_tests/gfp_model.cpp), index by
/// index in launch order, with this module's plans and root tables,
/// against the embedded GMP's mpn_mul: both stage kinds (even and odd
/// log n), a roots table longer than the transform (read with a stride),
/// squares, unbalanced operands, and all-ones operands (the largest
/// coefficients).
#[test]
fn host_model_matches_gmp() {
    let model = crate::testing::HostModel::build("gfp_model");

    let mut seed = 0x1234_5678_9abc_def1u64;
    // (un, vn, square, extra table bits)
    let cases: [(usize, usize, bool, u32); 11] = [
        (1, 1, false, 0),
        (3, 2, false, 0),
        (5, 5, true, 0),
        (7, 13, false, 1),
        (100, 37, false, 0),
        (96, 96, true, 2),
        (1000, 1, false, 0),
        (2047, 2049, false, 0),
        (3000, 3000, true, 1),
        (6000, 5000, false, 0),
        (12000, 11000, false, 0),
    ];
    let mut odd_and_even = [false; 2];
    for (i, &(un, vn, square, extra)) in cases.iter().enumerate() {
        let ones = i % 2 == 1;
        let mut limb = || if ones { u64::MAX } else { crate::testing::xorshift(&mut seed) };
        let u: Vec<u64> = (0..un).map(|_| limb()).collect();
        let v: Vec<u64> = if square { u.clone() } else { (0..vn).map(|_| limb()).collect() };
        let log_n = transform_log(un, vn).unwrap();
        odd_and_even[log_n as usize % 2] = true;
        let log_t = log_n + extra;
        let h = log_t.div_ceil(2);
        let (a, b) = root_factors(log_t, h);
        let plan: Vec<u32> = stages(log_n).iter().map(|s| if let Stage::Radix4(s) = s { *s } else { 1 }).collect();
        let mut input = format!("{log_n} {log_t} {h} {}\n{}\n", plan.len(), plan.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "));
        for e in a.iter().chain(b.iter()) {
            input += &e.0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(" ");
            input += "\n";
        }
        let hex = crate::testing::hex;
        input += &format!("{un}\n{}\n", hex(&u));
        input += &if square { "0\n".to_string() } else { format!("{vn}\n{}\n", hex(&v)) };
        let got = model.run(&input).unwrap_or_else(|status| panic!("model failed on {un}x{vn}: {status:?}"));

        let mut want = vec![0u64; un + vn];
        let (x, y) = if un >= vn { (&u, &v) } else { (&v, &u) };
        unsafe { embedded::mpn_mul(want.as_mut_ptr(), x.as_ptr(), x.len() as _, y.as_ptr(), y.len() as _) };
        assert!(got == want, "model differs from GMP at {un}x{vn} (2^{log_n} points, table 2^{log_t})");
    }
    assert_eq!(odd_and_even, [true, true], "the cases above should cover odd and even log n");
}
