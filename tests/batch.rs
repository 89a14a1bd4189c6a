//! The batched API (`cugmp_mul_batch`, `cugmp_powm_batch`,
//! `cugmp_mod_batch`, `cugmp_poly_mul`) against GMP 6.3 through rug, item
//! by item: sizes from 1 bit to 2^20 bits, both signs, zero, moduli 1 and
//! even, negative exponents, aliasing across items, NULL arrays with n = 0,
//! and the input GMP rejects (a zero modulus, no inverse, NULL arrays),
//! which must stop a child process as GMP stops it.
//!
//! The library is dlopen'ed apart from the reference (tests/common, proven
//! by `api()`). With CUGMP_GPU=force on the GPU machine the large items and
//! the polynomial products run on the GPU.

mod common;

use common::api::{api, same, Ptr, SrcPtr, Z};
use rug::rand::RandState;
use rug::{Assign, Integer};
use std::process::Command;

fn rng(seed: u64) -> RandState<'static> {
    let mut r = RandState::new();
    r.seed(&Integer::from(seed));
    r
}

/// A number of about 2^(0..max_log) bits (log-uniform), either sign, 1 in 16 zero.
fn number(rng: &mut RandState, max_log: u32) -> Integer {
    if rng.bits(4) == 0 {
        return Integer::new();
    }
    let log = rng.below(max_log + 1);
    let bits = 1 + rng.below(1 << log);
    let x = Integer::from(Integer::random_bits(bits, rng));
    if rng.bits(1) == 1 { -x } else { x }
}

fn zs(xs: &[Integer]) -> Vec<Z> {
    xs.iter().map(Z::from).collect()
}

fn src(zs: &mut [Z]) -> Vec<SrcPtr> {
    zs.iter_mut().map(|z| z.ptr() as SrcPtr).collect()
}

fn dst(zs: &mut [Z]) -> Vec<Ptr> {
    zs.iter_mut().map(|z| z.ptr()).collect()
}

/// Random items, a few of them over 2^20 bits (the GPU's sizes).
#[test]
fn mul_batch_matches_gmp() {
    let mut rng = rng(1);
    let mut a: Vec<Integer> = (0..400).map(|_| number(&mut rng, 20)).collect();
    let mut b: Vec<Integer> = (0..400).map(|_| number(&mut rng, 16)).collect();
    a.push(Integer::from(Integer::random_bits(1 << 20, &mut rng)));
    b.push(-Integer::from(Integer::random_bits(1 << 20, &mut rng)));
    let (mut za, mut zb, mut r) = (zs(&a), zs(&b), zs(&vec![Integer::from(5); a.len()]));
    unsafe { (api().mul_batch)(a.len(), dst(&mut r).as_ptr(), src(&mut za).as_ptr(), src(&mut zb).as_ptr()) };
    for i in 0..a.len() {
        same(&format!("cugmp_mul_batch item {i}"), &r[i].get(), &Integer::from(&a[i] * &b[i]));
        assert_eq!(za[i].get(), a[i], "an input changed");
    }
}

/// Results that are inputs of other items, of their own item, and one
/// variable named as the result of two items: as if computed from the
/// inputs at entry, the later item's result last.
#[test]
fn batches_read_their_inputs_as_at_entry() {
    let mut rng = rng(2);
    let x: Vec<Integer> = (0..6).map(|_| number(&mut rng, 12)).collect();
    let mut v = zs(&x);
    let p: Vec<Ptr> = dst(&mut v);
    // r = [v0, v1, v2, v3, v0]; a = [v1, v1, v0, v3, v4]; b = [v2, v0, v2, v3, v5].
    let r = [p[0], p[1], p[2], p[3], p[0]];
    let a = [p[1] as SrcPtr, p[1], p[0], p[3], p[4]];
    let b = [p[2] as SrcPtr, p[0], p[2], p[3], p[5]];
    unsafe { (api().mul_batch)(5, r.as_ptr(), a.as_ptr(), b.as_ptr()) };
    same("aliased mul item 4 (v0 named twice)", &v[0].get(), &Integer::from(&x[4] * &x[5]));
    same("aliased mul item 1", &v[1].get(), &Integer::from(&x[1] * &x[0]));
    same("aliased mul item 2", &v[2].get(), &Integer::from(&x[0] * &x[2]));
    same("aliased mul item 3 (a square in place)", &v[3].get(), &Integer::from(&x[3] * &x[3]));

    // Every result the next item's modulus and the previous one's base.
    let m: Vec<Integer> = (0..5).map(|i| Integer::from(1000 + 37 * i)).collect();
    let mut w = zs(&m);
    let q = dst(&mut w);
    let r: Vec<Ptr> = q.clone();
    let base: Vec<SrcPtr> = (0..5).map(|i| q[(i + 4) % 5] as SrcPtr).collect();
    let exp_values: Vec<Integer> = (0..5).map(|i| Integer::from(3 + i)).collect();
    let mut e = zs(&exp_values);
    let modulus: Vec<SrcPtr> = (0..5).map(|i| q[(i + 1) % 5] as SrcPtr).collect();
    unsafe { (api().powm_batch)(5, r.as_ptr(), base.as_ptr(), src(&mut e).as_ptr(), modulus.as_ptr()) };
    for i in 0..5 {
        let want = m[(i + 4) % 5].clone().pow_mod(&exp_values[i], &m[(i + 1) % 5]).unwrap();
        same(&format!("aliased powm item {i}"), &w[i].get(), &want);
    }
}

#[test]
fn mod_batch_matches_gmp() {
    let mut rng = rng(3);
    let mut a = Vec::new();
    let mut m = Vec::new();
    for i in 0..300 {
        a.push(number(&mut rng, 20));
        let mut x = number(&mut rng, if i % 3 == 0 { 8 } else { 18 });
        if x == 0 {
            x.assign(1);
        }
        m.push(x);
    }
    for special in [1i64, -1, 2, -2, 1 << 40] {
        a.push(-Integer::from(Integer::random_bits(5000, &mut rng)));
        m.push(Integer::from(special));
    }
    let (mut za, mut zm, mut r) = (zs(&a), zs(&m), zs(&vec![Integer::from(-9); a.len()]));
    unsafe { (api().mod_batch)(a.len(), dst(&mut r).as_ptr(), src(&mut za).as_ptr(), src(&mut zm).as_ptr()) };
    for i in 0..a.len() {
        let want = Integer::from(a[i].modulo_ref(&m[i]));
        let want = if want < 0 { want + m[i].clone().abs() } else { want };
        same(&format!("cugmp_mod_batch item {i}"), &r[i].get(), &want);
    }
}

/// Moduli odd, even, 1 and negative; exponents 0, positive, and negative
/// where the base has an inverse.
#[test]
fn powm_batch_matches_gmp() {
    check_powm_batch();
}

/// The same batch with the device's memory limited to 16 KiB: the GPU's
/// items go in chunks of 4 KiB, many launches (a child run).
#[test]
fn powm_batch_in_chunks_matches_gmp() {
    let (ok, log) = common::rerun_tests(&["powm_batch_matches_gmp"], &[("CUGMP_GPU_MEM_LIMIT", Some("16K")), ("CUGMP_STATS", Some("1"))]);
    assert!(ok && log.contains("1 passed"), "the chunked powm batch failed:\n{log}");
    if std::env::var("CUGMP_GPU").as_deref() == Ok("force") && unsafe { (api().gpu_in_use)() } != 0 {
        // Five limb counts, some in several chunks: more launches than groups.
        let launches: u64 = log
            .lines()
            .find_map(|l| l.strip_prefix("powm_batch"))
            .and_then(|rest| rest.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0);
        assert!(launches > 5, "CUGMP_GPU=force with 16K of device memory: {launches} launches\n{log}");
    }
}

fn check_powm_batch() {
    let mut rng = rng(4);
    let (mut base, mut exp, mut m) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..200 {
        let mut md = number(&mut rng, 11).abs();
        if md == 0 {
            md.assign(7);
        }
        if i % 2 == 0 {
            md |= 1;
        }
        if i % 5 == 0 {
            md = -md;
        }
        let mut b = number(&mut rng, 12);
        let mut e = number(&mut rng, 10).abs();
        if i % 4 == 0 {
            // A negative exponent with a base that has an inverse.
            md.assign(Integer::from(md.abs_ref()) | 1);
            b.assign(Integer::from(md.abs_ref()) - 2);
            e = -e - 1;
        }
        base.push(b);
        exp.push(e);
        m.push(md);
    }
    for (b, e, md) in [(5, 0, 1), (0, 0, 7), (-3, 5, 1), (2, 100, 1024), (3, -1, 4), (0, 9, 15), (7, 1, 9)] {
        base.push(Integer::from(b));
        exp.push(Integer::from(e));
        m.push(Integer::from(md));
    }
    // Every limb count of the GPU's kernels, at both ends (a modulus of
    // 64 L bits, and one just over the next smaller count), ones over them
    // (513 limbs, GMP's), bases larger than the modulus or negative,
    // exponents of one limb and of many.
    for l in [4u32, 8, 16, 32, 64, 128, 256, 512, 513] {
        for bits in [64 * l, 64 * (l / 2) + 1] {
            for k in 0..3 {
                let md = Integer::from(Integer::random_bits(bits, &mut rng)) | 1u32 | (Integer::from(1) << (bits - 1));
                let b = Integer::from(Integer::random_bits(bits + 70, &mut rng)) * if k == 1 { -1 } else { 1 };
                let e = match k {
                    0 => Integer::from(1),
                    1 => Integer::from(Integer::random_bits(64, &mut rng)) | 1u32,
                    _ => Integer::from(Integer::random_bits(bits.min(1500), &mut rng)) | (Integer::from(1) << 20),
                };
                base.push(b);
                exp.push(e);
                m.push(if k == 2 { -md } else { md });
            }
        }
    }
    // Carries and borrows that ripple through every limb: moduli of all
    // ones (2^(64 L) - 1), bases of m - 1 and 2^(64 L - 1).
    for l in [64u32, 128, 512] {
        let md = (Integer::from(1) << (64 * l)) - 1u32;
        for b in [Integer::from(&md - 1u32), Integer::from(1) << (64 * l - 1)] {
            base.push(b);
            exp.push(Integer::from(Integer::random_bits(300, &mut rng)) | 1u32);
            m.push(md.clone());
        }
    }
    let before = unsafe { (api().gpu_operations)() };
    let (mut zb, mut ze, mut zm, mut r) = (zs(&base), zs(&exp), zs(&m), zs(&vec![Integer::from(3); base.len()]));
    unsafe { (api().powm_batch)(base.len(), dst(&mut r).as_ptr(), src(&mut zb).as_ptr(), src(&mut ze).as_ptr(), src(&mut zm).as_ptr()) };
    for i in 0..base.len() {
        let mut want = Integer::new();
        unsafe { gmp_mpfr_sys::gmp::mpz_powm(want.as_raw_mut(), base[i].as_raw(), exp[i].as_raw(), m[i].as_raw()) };
        same(&format!("cugmp_powm_batch item {i}"), &r[i].get(), &want);
    }
    if std::env::var("CUGMP_GPU").as_deref() == Ok("force") && unsafe { (api().gpu_in_use)() } != 0 {
        assert!(unsafe { (api().gpu_operations)() } > before, "CUGMP_GPU=force: no powm item reached the GPU");
    }
}

/// A few items of each block kernel's size (4096 to 32768 bits; under
/// force on the GPU, whatever their number), small exponents: small
/// enough for compute-sanitizer's racecheck on the device.
#[test]
fn powm_batch_few_large_items_match_gmp() {
    let mut rng = rng(5);
    let (mut base, mut exp, mut m) = (Vec::new(), Vec::new(), Vec::new());
    for l in [64u32, 128, 256, 512] {
        let md = Integer::from(Integer::random_bits(64 * l, &mut rng)) | 1u32 | (Integer::from(1) << (64 * l - 1));
        base.push(Integer::from(Integer::random_bits(64 * l, &mut rng)));
        exp.push(Integer::from(0x1_0001));
        m.push(md);
    }
    let (mut zb, mut ze, mut zm, mut r) = (zs(&base), zs(&exp), zs(&m), zs(&vec![Integer::new(); base.len()]));
    unsafe { (api().powm_batch)(base.len(), dst(&mut r).as_ptr(), src(&mut zb).as_ptr(), src(&mut ze).as_ptr(), src(&mut zm).as_ptr()) };
    for i in 0..base.len() {
        let mut want = Integer::new();
        unsafe { gmp_mpfr_sys::gmp::mpz_powm(want.as_raw_mut(), base[i].as_raw(), exp[i].as_raw(), m[i].as_raw()) };
        same(&format!("cugmp_powm_batch item {i}"), &r[i].get(), &want);
    }
}

/// n = 0 reads nothing, NULL arrays included.
#[test]
fn empty_batches_do_nothing() {
    let (r, x) = (std::ptr::null(), std::ptr::null());
    let b = api();
    unsafe {
        (b.mul_batch)(0, r, x, x);
        (b.mod_batch)(0, r, x, x);
        (b.powm_batch)(0, r, x, x, x);
        (b.poly_mul)(r, x, 0, x, 0);
    }
}

/// Schoolbook product of two polynomials, by the reference GMP.
fn schoolbook(a: &[Integer], b: &[Integer]) -> Vec<Integer> {
    let mut c = vec![Integer::new(); (a.len() + b.len()).saturating_sub(1)];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            c[i + j] += Integer::from(x * y);
        }
    }
    c
}

fn check_poly(what: &str, a: &[Integer], b: &[Integer]) {
    let want = schoolbook(a, b);
    let (mut za, mut zb, mut r) = (zs(a), zs(b), zs(&vec![Integer::from(11); want.len()]));
    unsafe { (api().poly_mul)(dst(&mut r).as_ptr(), src(&mut za).as_ptr(), a.len(), src(&mut zb).as_ptr(), b.len()) };
    for k in 0..want.len() {
        same(&format!("cugmp_poly_mul {what}, coefficient {k}"), &r[k].get(), &want[k]);
    }
}

#[test]
fn poly_mul_matches_gmp() {
    let mut rng = rng(5);
    for t in 0..60 {
        let (na, nb) = (1 + rng.below(40) as usize, 1 + rng.below(40) as usize);
        let log = [3, 7, 10, 13][t % 4];
        let a: Vec<Integer> = (0..na).map(|_| number(&mut rng, log)).collect();
        let b: Vec<Integer> = (0..nb).map(|_| number(&mut rng, log - 2)).collect();
        check_poly(&format!("random {na} x {nb}"), &a, &b);
    }
    // Extremes of the slots: all ones of one width, every sign, a lone
    // nonzero coefficient, zero polynomials of both lengths.
    let ones = Integer::from(Integer::u_pow_u(2, 190)) - 1u32;
    check_poly("all ones", &vec![ones.clone(); 9], &vec![-ones.clone(); 7]);
    check_poly("alternating", &(0..12).map(|i| if i % 2 == 0 { ones.clone() } else { -ones.clone() }).collect::<Vec<_>>(), &vec![ones.clone(); 12]);
    check_poly("lone", &[Integer::new(), Integer::new(), Integer::from(-1)], &[Integer::new(), Integer::from(1) << 64]);
    check_poly("zero", &vec![Integer::new(); 3], &vec![ones.clone(); 4]);
    check_poly("constant", &[Integer::from(-3)], &[Integer::from(5)]);
    // Large enough for the GPU's product (about 26,000 limbs packed).
    let a: Vec<Integer> = (0..600).map(|_| number(&mut rng, 9)).collect();
    let b: Vec<Integer> = (0..600).map(|_| Integer::from(Integer::random_bits(700, &mut rng)) - (Integer::from(1) << 699)).collect();
    check_poly("600 x 600, 700 bits", &a, &b);
}

/// No coefficient on one side: the product's na + nb - 1 coefficients are
/// zero; a square (one array twice); results naming the inputs.
#[test]
fn poly_mul_edges() {
    let b = api();
    let mut r = zs(&[Integer::from(4), Integer::from(4)]);
    let mut x = zs(&[Integer::from(1), Integer::from(2), Integer::from(3)]);
    unsafe { (b.poly_mul)(dst(&mut r).as_ptr(), std::ptr::null(), 0, src(&mut x).as_ptr(), 3) };
    same("na = 0", &r[0].get(), &Integer::new());
    same("na = 0", &r[1].get(), &Integer::new());

    let v = [Integer::from(-7), Integer::from(1) << 300, Integer::from(9)];
    let want = schoolbook(&v, &v);
    let mut a = zs(&v);
    let pa = src(&mut a);
    let mut r = zs(&vec![Integer::new(); 5]);
    unsafe { (b.poly_mul)(dst(&mut r).as_ptr(), pa.as_ptr(), 3, pa.as_ptr(), 3) };
    for k in 0..5 {
        same(&format!("square, coefficient {k}"), &r[k].get(), &want[k]);
    }

    // r[0..3] are a's own variables.
    let w = [Integer::from(2), Integer::from(-5)];
    let want = schoolbook(&v, &w);
    let mut a = zs(&v);
    let mut c = zs(&w);
    let mut extra = zs(&[Integer::new(), Integer::new()]);
    let mut r = dst(&mut a);
    r.extend(dst(&mut extra).into_iter().take(1));
    let pa: Vec<SrcPtr> = r.iter().take(3).map(|&p| p as SrcPtr).collect();
    unsafe { (b.poly_mul)(r.as_ptr(), pa.as_ptr(), 3, src(&mut c).as_ptr(), 2) };
    for k in 0..3 {
        same(&format!("in place, coefficient {k}"), &a[k].get(), &want[k]);
    }
    same("in place, coefficient 3", &extra[0].get(), &want[3]);
}

/// How a child run of `bad_input_child` ended: its signal (or exit code
/// as a negative number) and its stderr.
fn child(case: &str) -> (i32, String) {
    use std::os::unix::process::ExitStatusExt;
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "bad_input_child", "--nocapture", "--test-threads=1"])
        .env("CUGMP_BATCH_CASE", case)
        .output()
        .unwrap();
    (out.status.signal().unwrap_or(-out.status.code().unwrap_or(0)), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs one case of bad input (CUGMP_BATCH_CASE), for `rejected_input_stops_as_gmp_does`.
#[test]
#[ignore]
fn bad_input_child() {
    let case = std::env::var("CUGMP_BATCH_CASE").unwrap_or_default();
    let b = api();
    let mut v = zs(&[Integer::from(10), Integer::from(3), Integer::new(), Integer::from(-1), Integer::from(4)]);
    let p = dst(&mut v);
    let s: Vec<SrcPtr> = p.iter().map(|&x| x as SrcPtr).collect();
    let mut r = zs(&[Integer::new(), Integer::new()]);
    let r = dst(&mut r);
    let mut want = Integer::new();
    unsafe {
        match case.as_str() {
            "reference mod 0" => gmp_mpfr_sys::gmp::mpz_mod(want.as_raw_mut(), Integer::from(10).as_raw(), Integer::new().as_raw()),
            "reference no inverse" => {
                gmp_mpfr_sys::gmp::mpz_powm(want.as_raw_mut(), Integer::from(2).as_raw(), Integer::from(-1).as_raw(), Integer::from(4).as_raw())
            }
            // Item 1 of 2 has the zero modulus.
            "mod 0" => (b.mod_batch)(2, r.as_ptr(), [s[0], s[0]].as_ptr(), [s[1], s[2]].as_ptr()),
            "powm 0" => (b.powm_batch)(2, r.as_ptr(), [s[0], s[0]].as_ptr(), [s[1], s[1]].as_ptr(), [s[1], s[2]].as_ptr()),
            // 10^-1 mod 4: no inverse.
            "no inverse" => (b.powm_batch)(2, r.as_ptr(), [s[1], s[0]].as_ptr(), [s[1], s[3]].as_ptr(), [s[0], s[4]].as_ptr()),
            "null" => (b.mul_batch)(2, r.as_ptr(), std::ptr::null(), s.as_ptr()),
            "null element" => (b.mul_batch)(2, r.as_ptr(), [s[0], std::ptr::null()].as_ptr(), s.as_ptr()),
            _ => return,
        }
    }
    println!("returned");
}

#[test]
fn rejected_input_stops_as_gmp_does() {
    let (gmp_zero, _) = child("reference mod 0");
    let (gmp_inverse, _) = child("reference no inverse");
    assert!(gmp_zero > 0 && gmp_inverse > 0, "GMP itself must stop on these (signals {gmp_zero}, {gmp_inverse})");
    for (case, want) in [("mod 0", gmp_zero), ("powm 0", gmp_zero), ("no inverse", gmp_inverse)] {
        let (got, err) = child(case);
        assert_eq!(got, want, "{case}: signal {got}, GMP's {want}\n{err}");
    }
    for case in ["null", "null element"] {
        let (got, err) = child(case);
        assert_eq!(got, libc::SIGABRT, "{case}: signal {got}\n{err}");
        assert!(err.contains("cuGMP: cugmp_mul_batch: a ") && err.contains("NULL"), "{case}: {err}");
    }
}

/// a + b x - a x^2 times b + a x over operands of the fuzz target's
/// patterns (all ones, one bit, sparse, random), both signs, sizes of 1 to
/// 40 limbs: every slot width and carry between slots.
#[test]
fn poly_mul_patterns_match_gmp() {
    let mut rng = rng(6);
    let mut xs = Vec::new();
    for limbs in [1u32, 2, 4, 7, 29, 40] {
        let bits = 64 * limbs;
        let ones = (Integer::from(1) << bits) - 1u32;
        let one_bit = Integer::from(1) << (bits - 1);
        let sparse = Integer::from(&one_bit + 1u32) + (Integer::from(1) << (bits / 2));
        let random = Integer::from(Integer::random_bits(bits, &mut rng));
        for x in [ones, one_bit, sparse, random] {
            xs.push(-x.clone());
            xs.push(x);
        }
    }
    for a in &xs {
        for b in xs.iter().step_by(3) {
            check_poly(&format!("a + b x - a x^2 by b + a x, {} and {} bits", a.significant_bits(), b.significant_bits()), &[a.clone(), b.clone(), Integer::from(-a)], &[b.clone(), a.clone()]);
        }
    }
}

/// A long polynomial of large coefficients by a short one: the packed
/// integer has some 262,000 limbs, so packing and unpacking run on several
/// threads, in chunks of 256 coefficients; runs of zero coefficients and
/// negative ones lie across the chunks' borders (a borrow that must
/// travel from one chunk into the next).
#[test]
fn poly_mul_on_threads_matches_gmp() {
    let mut rng = rng(7);
    let mut a: Vec<Integer> = (0..2000).map(|_| Integer::from(Integer::random_bits(4200, &mut rng)) - (Integer::from(1) << 4199)).collect();
    a[200..300].fill(Integer::new());
    a[199] = -(Integer::from(1) << 4000u32);
    a[511] = Integer::from(-1);
    a[512..770].fill(Integer::new());
    a[1999] = -(Integer::from(Integer::random_bits(4200, &mut rng)) + 1u32);
    let b = [Integer::from(Integer::random_bits(4200, &mut rng)), -Integer::from(Integer::random_bits(100, &mut rng)) - 1u32];
    check_poly("2000 x 2, 4200 bits, zeros and borrows across chunks", &a, &b);
    check_poly("2 x 2000", &b, &a);
}
