//! Differential tests: every function cuGMP defines, against GMP 6.3 through
//! rug, on zero, signs, aliasing, carry/borrow chains, powers of two, sparse
//! operands, every shift-count class, every base, invalid input, and sizes
//! from 0 to 10^6 limbs.
//!
//! The library under test is dlopen'ed with RTLD_DEEPBIND (tests/common), the
//! reference is rug's static GMP linked into this binary: two namespaces.
//! `reference_is_independent` and `planted_fault_is_caught` prove it.
//! With CUGMP_GPU=force (on the GPU machine) the same tests exercise the GPU.

mod common;

use common::api::{api, check_set_str, get_str, reference_get_str, same, Bin, Ptr, Shift, SrcPtr, Z};
use common::{Library, Mpz};
use gmp_mpfr_sys::gmp;
use libc::{c_char, c_ulong};
use rug::rand::RandState;
use rug::{Assign, Integer};
use std::ffi::{CStr, CString};

/// Operands: every size class, patterns that stress carries and borrows, both signs.
fn operands(sizes: &[usize], rng: &mut RandState) -> Vec<Integer> {
    let mut v = vec![Integer::new()];
    for &n in sizes {
        if n == 0 {
            continue;
        }
        let bits = (n * 64) as u32;
        let random = Integer::from(Integer::random_bits(bits, rng));
        let all_ones = (Integer::from(1) << bits) - 1u32;
        let power = Integer::from(1) << (bits - 1);
        let mut sparse = Integer::new();
        sparse.set_bit(bits - 1, true);
        sparse.set_bit(bits / 2, true);
        sparse.set_bit(0, true);
        let one_limb_set = Integer::from(0xdead_beef_u32) << (64 * (n as u32 / 2));
        for x in [random, all_ones, power, sparse, one_limb_set] {
            v.push(x.clone());
            v.push(-x);
        }
    }
    v
}

fn rng() -> RandState<'static> {
    let mut r = RandState::new();
    r.seed(&Integer::from(0x5eed_cafe_u64));
    r
}

const SMALL: &[usize] = &[1, 2, 3, 4, 5, 7, 8, 16, 17, 33, 64, 100];

/// `op` on every pair, with `rop` distinct, `rop == a`, `rop == b`, and `rop == a == b`.
fn check_binary(name: &str, op: Bin, reference: impl Fn(&Integer, &Integer) -> Integer, xs: &[Integer]) {
    for a in xs {
        for b in xs {
            let want = reference(a, b);
            let (mut za, mut zb, mut r) = (Z::from(a), Z::from(b), Z::new());
            unsafe { op(r.ptr(), za.ptr(), zb.ptr()) };
            same(name, &r.get(), &want);
            assert_eq!(za.get(), *a, "{name} modified an input");
            unsafe { op(za.ptr(), za.ptr(), zb.ptr()) };
            same(&format!("{name} (rop = a)"), &za.get(), &want);
            let mut za = Z::from(a);
            unsafe { op(zb.ptr(), za.ptr(), zb.ptr()) };
            same(&format!("{name} (rop = b)"), &zb.get(), &want);
        }
        let want = reference(a, a);
        let mut za = Z::from(a);
        unsafe { op(za.ptr(), za.ptr(), za.ptr()) };
        same(&format!("{name} (rop = a = b)"), &za.get(), &want);
    }
}

#[test]
fn add_matches_gmp() {
    check_binary("mpz_add", api().add, |a, b| Integer::from(a + b), &operands(SMALL, &mut rng()));
}

#[test]
fn sub_matches_gmp() {
    check_binary("mpz_sub", api().sub, |a, b| Integer::from(a - b), &operands(SMALL, &mut rng()));
}

#[test]
fn mul_matches_gmp() {
    check_binary("mpz_mul", api().mul, |a, b| Integer::from(a * b), &operands(SMALL, &mut rng()));
    // Unbalanced and larger products.
    let mut r = rng();
    for (na, nb) in [(1000, 1), (3000, 17), (10_000, 10_000), (40_000, 900), (100_000, 100_000)] {
        let a = Integer::from(Integer::random_bits(64 * na, &mut r));
        let b = -Integer::from(Integer::random_bits(64 * nb, &mut r));
        let (mut za, mut zb, mut z) = (Z::from(&a), Z::from(&b), Z::new());
        unsafe { (api().mul)(z.ptr(), za.ptr(), zb.ptr()) };
        same(&format!("mpz_mul {na}x{nb}"), &z.get(), &Integer::from(&a * &b));
    }
}

/// `op(r, a)` with r distinct (without room, and with room for 8 limbs)
/// and r = a, against `want`.
fn check_in_place(name: &str, a: &Integer, want: &Integer, op: impl Fn(Ptr, SrcPtr)) {
    let mut za = Z::from(a);
    for mut r in [Z::new(), Z::from(&(Integer::from(1) << (64 * 8 - 1)))] {
        op(r.ptr(), za.ptr());
        same(name, &r.get(), want);
        assert_eq!(za.get(), *a, "{name} modified an input");
    }
    op(za.ptr(), za.ptr());
    same(&format!("{name} (rop = a)"), &za.get(), want);
}

/// `mpz_set`, `mpz_mul_ui`, `mpz_mul_si`, `mpz_add_ui` and `mpz_sub_ui`
/// (the CPU engine's own on 1 to 4 limbs, GMP's beyond) on every operand,
/// with limbs that reach each of their branches: zero, one, the extremes
/// of either reading, the operand's low limb and its neighbours
/// (differences of zero and of one).
#[test]
fn limb_operations_match_gmp() {
    let api = api();
    for a in &operands(&[1, 2, 3, 4, 5, 8], &mut rng()) {
        check_in_place("mpz_set", a, a, |r, x| unsafe { (api.set)(r, x) });
        let low = Integer::from(a.abs_ref()).to_u64_wrapping();
        for v in [0, 1, 2, 0xdead_beef, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, low, low.wrapping_add(1), low.wrapping_sub(1)] {
            let s = v as i64;
            check_in_place(&format!("mpz_mul_ui {v:#x}"), a, &Integer::from(a * v), |r, x| unsafe { (api.mul_ui)(r, x, v) });
            check_in_place(&format!("mpz_mul_si {s}"), a, &Integer::from(a * s), |r, x| unsafe { (api.mul_si)(r, x, s) });
            check_in_place(&format!("mpz_add_ui {v:#x}"), a, &Integer::from(a + v), |r, x| unsafe { (api.add_ui)(r, x, v) });
            check_in_place(&format!("mpz_sub_ui {v:#x}"), a, &Integer::from(a - v), |r, x| unsafe { (api.sub_ui)(r, x, v) });
        }
    }
}

/// Products and squares at every size where the CPU engine's own small
/// products (src/cpu/ifma.rs, on processors with AVX-512 IFMA) or GMP's
/// loops may take them, across each of their thresholds: GMP's schoolbook
/// sizes, its Karatsuba and Toom-3 levels taken whole, the longer operand in
/// pieces, and the sizes just past the kernel's longest.
#[test]
fn small_products_match_gmp() {
    let mut r = rng();
    let mut sizes: Vec<usize> = (1..=40).collect();
    sizes.extend([47, 48, 49, 63, 64, 65, 100, 127, 128, 129, 130, 131, 200, 255, 256, 257, 300, 511, 512, 513]);
    let mut count = 0;
    // Exactly `limbs` limbs: random with the top bit set, all ones, or the
    // top and bottom bits alone.
    let pattern = |k: usize, limbs: usize, r: &mut RandState| {
        let bits = 64 * limbs as u32;
        match k % 3 {
            0 => Integer::from(Integer::random_bits(bits, r)) | (Integer::from(1) << (bits - 1)),
            1 => (Integer::from(1) << bits) - 1u32,
            _ => (Integer::from(1) << (bits - 1)) + 1u32,
        }
    };
    for (i, &n) in sizes.iter().enumerate() {
        let a = pattern(i, n, &mut r);
        // The square: rop distinct and rop = a = b.
        let want = Integer::from(a.square_ref());
        let (mut za, mut z) = (Z::from(&a), Z::new());
        unsafe { (api().mul)(z.ptr(), za.ptr(), za.ptr()) };
        same(&format!("mpz_mul {n} limbs squared"), &z.get(), &want);
        unsafe { (api().mul)(za.ptr(), za.ptr(), za.ptr()) };
        same(&format!("mpz_mul {n} limbs squared in place"), &za.get(), &want);
        // Against shorter and longer operands, both signs.
        for &m in &[1, 2, 7, 8, 9, 13, 14, 15, 16, 24, 28, 29, n / 2 + 1, n, n + 1, 3 * n + 5, 1000] {
            let b = -pattern(i + m, m, &mut r);
            let want = Integer::from(&a * &b);
            let (mut za, mut zb, mut z) = (Z::from(&a), Z::from(&b), Z::new());
            unsafe { (api().mul)(z.ptr(), za.ptr(), zb.ptr()) };
            same(&format!("mpz_mul {n} x {m} limbs"), &z.get(), &want);
            count += 1;
        }
    }
    assert!(count > 900, "{count} products");
}

#[test]
fn logic_matches_gmp() {
    let xs = operands(SMALL, &mut rng());
    check_binary("mpz_and", api().and, |a, b| Integer::from(a & b), &xs);
    check_binary("mpz_ior", api().ior, |a, b| Integer::from(a | b), &xs);
    check_binary("mpz_xor", api().xor, |a, b| Integer::from(a ^ b), &xs);
    for a in &xs {
        let (mut za, mut r) = (Z::from(a), Z::new());
        unsafe { (api().com)(r.ptr(), za.ptr()) };
        same("mpz_com", &r.get(), &Integer::from(!a));
        unsafe { (api().com)(za.ptr(), za.ptr()) };
        same("mpz_com (rop = op)", &za.get(), &Integer::from(!a));
    }
}

#[test]
fn shifts_match_gmp() {
    let xs = operands(&[1, 2, 3, 5, 17], &mut rng());
    type Reference = fn(&Integer, u32) -> Integer;
    let ops: [(&str, Shift, Reference); 4] = [
        ("mpz_mul_2exp", api().mul_2exp, |a, n| Integer::from(a << n)),
        ("mpz_tdiv_q_2exp", api().tdiv_q_2exp, |a, n| {
            let q = Integer::from(a.abs_ref()) >> n;
            if *a < 0 { -q } else { q }
        }),
        ("mpz_fdiv_q_2exp", api().fdiv_q_2exp, |a, n| Integer::from(a >> n)),
        ("mpz_cdiv_q_2exp", api().cdiv_q_2exp, |a, n| -(Integer::from(-a) >> n)),
    ];
    for a in &xs {
        let bits = a.significant_bits();
        let mut counts = vec![0u32, 1, 2, 31, 63, 64, 65, 127, 128, 129, 640, 100_000];
        counts.extend([bits.saturating_sub(1), bits, bits + 1, bits + 64, bits + 1000]);
        for n in counts {
            for (name, op, reference) in &ops {
                let want = reference(a, n);
                let (mut za, mut r) = (Z::from(a), Z::new());
                unsafe { op(r.ptr(), za.ptr(), n as c_ulong) };
                same(&format!("{name} by {n}"), &r.get(), &want);
                unsafe { op(za.ptr(), za.ptr(), n as c_ulong) };
                same(&format!("{name} by {n} (rop = op)"), &za.get(), &want);
            }
        }
    }
}

#[test]
fn get_str_matches_gmp() {
    let xs = operands(&[1, 2, 3, 9], &mut rng());
    let bases: Vec<i32> = (2..=62).chain(-36..=-2).chain([0, 1, -1, 63, -37, 100]).collect();
    for x in &xs {
        let mut z = Z::from(x);
        for &base in &bases {
            assert_eq!(get_str(&mut z, base), reference_get_str(x, base), "mpz_get_str base {base}");
        }
        // Caller's buffer, sized as GMP documents: sizeinbase + 2.
        let mut buf = vec![0 as c_char; x.significant_bits() as usize + 3];
        let p = unsafe { (api().get_str)(buf.as_mut_ptr(), 2, z.ptr()) };
        assert_eq!(p, buf.as_mut_ptr(), "mpz_get_str must return the caller's buffer");
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        assert_eq!(Some(s), reference_get_str(x, 2));
    }
}

/// Radix conversion of large numbers: where the GPU takes GMP's internal
/// products (under force on the GPU machine), mpz_get_str converts in pieces
/// on several threads (src/algorithms/radix/to_digits.rs); the digits, signs and letters must be
/// GMP's. Random numbers, powers of the base and one less (the pieces'
/// edges: runs of zeros and of the top digit), negative numbers, and bases
/// with upper- and lower-case letters. On CI this checks GMP's own path.
#[test]
fn large_get_str_matches_gmp() {
    let mut r = rng();
    for n in [2_500u32, 9_000, 40_000] {
        let random = Integer::from(Integer::random_bits(64 * n, &mut r));
        let ten = Integer::from(Integer::u_pow_u(10, (64 * n) * 3 / 10));
        let cases = [random.clone(), -random, ten.clone(), ten.clone() - 1u32, -(ten + 1u32)];
        for (i, x) in cases.iter().enumerate() {
            let mut z = Z::from(x);
            let bases: &[i32] = if n == 40_000 { &[10] } else { &[10, 3, 36, -36, 62] };
            for &base in bases {
                let got = get_str(&mut z, base);
                assert!(got == reference_get_str(x, base), "MISMATCH in mpz_get_str base {base}, {n} limbs, case {i}");
            }
        }
    }
}

#[test]
fn set_str_matches_gmp() {
    let mut cases: Vec<(String, i32)> = vec![];
    for x in operands(&[1, 2, 5], &mut rng()) {
        for base in [2, 8, 10, 16, 36, 37, 62] {
            cases.push((reference_get_str(&x, base).unwrap(), base));
        }
        cases.push((format!("0x{}", reference_get_str(&x, 16).unwrap()), 0));
    }
    for (s, b) in [
        ("", 10), ("-", 10), ("+5", 10), ("12a", 10), ("  1 2 3 ", 10), ("0b101", 0), ("0B11", 0), ("017", 0),
        ("0x", 0), ("0xg", 0), ("z", 36), ("Z", 36), ("z", 62), ("Z", 62), ("10", 1), ("10", 63), ("10", -2),
        ("10", 64), ("- 5", 10), ("99999999999999999999999999999999999999", 10), ("\t-42\n", 10),
    ] {
        cases.push((s.to_string(), b));
    }
    for (s, base) in cases {
        check_set_str(&CString::new(s).unwrap(), base);
    }
}

/// Radix conversion of large numbers from text: where the GPU takes GMP's
/// internal products (under force on the GPU machine), mpz_set_str reads
/// the text on threads and joins whole levels of leaves at once
/// (src/algorithms/radix/from_digits.rs); the value and the return must be
/// GMP's. Random numbers, powers of the base, one less and one more (runs
/// of zeros and of the top digit across the leaves' edges), signs, leading
/// zeros, white space within the digits, and a bad character at the end
/// (an error after a long valid prefix). On CI this checks GMP's own path.
#[test]
fn large_set_str_matches_gmp() {
    let mut r = rng();
    for n in [300u32, 2_500, 9_000, 40_000] {
        let random = Integer::from(Integer::random_bits(64 * n, &mut r));
        let ten = Integer::from(Integer::u_pow_u(10, (64 * n) * 3 / 10));
        let cases = [random.clone(), -random, ten.clone(), ten.clone() - 1u32, -(ten + 1u32)];
        for (i, x) in cases.iter().enumerate() {
            let bases: &[i32] = if n == 40_000 { &[10] } else { &[10, 3, 36, 62] };
            for &base in bases {
                let text = reference_get_str(x, base).unwrap();
                check_set_str(&CString::new(text.as_str()).unwrap(), base);
                if i == 0 {
                    let spaced = format!("  000{}\n", &text[..text.len() / 2]) + " " + &text[text.len() / 2..];
                    check_set_str(&CString::new(spaced).unwrap(), base);
                    check_set_str(&CString::new(text.clone() + "!").unwrap(), base);
                }
            }
        }
    }
}

/// mpz_fac_ui: where the GPU takes GMP's internal products (under force on
/// the GPU machine), n! from its primes' exponents
/// (src/algorithms/factorial.rs); below, and on CI, GMP's own. Small n
/// (GMP's table), powers of two and their neighbours (the power of two's
/// shift), and n up to 3 x 10^5 (a 4.8 million-digit result); into a
/// variable that held a larger number, and one that held a negative one.
#[test]
fn factorials_match_gmp() {
    let mut z = Z::from(&-Integer::from(Integer::u_pow_u(7, 100_000)));
    for n in [0u32, 1, 2, 20, 21, 63, 64, 65, 400, 1023, 1024, 1025, 5000, 65_536, 100_003, 300_000] {
        unsafe { (api().fac_ui)(z.ptr(), n.into()) };
        same(&format!("mpz_fac_ui({n})"), &z.get(), &Integer::from(Integer::factorial(n)));
    }
}

/// mpz_bin_uiui: where the GPU takes GMP's internal products (under force
/// on the GPU machine) and C(n, k) is large against n, from its primes'
/// exponents (src/algorithms/factorial.rs); else, and on CI, GMP's own.
/// k = 0, k = n, k > n, both halves, powers of two (the carries of k + (n -
/// k) in base 2), small k of a large n (GMP's), and C(2k, k) to 4 x 10^5.
#[test]
fn binomials_match_gmp() {
    let mut z = Z::from(&-Integer::from(Integer::u_pow_u(7, 100_000)));
    let cases = [(0u32, 0u32), (5, 0), (5, 5), (5, 6), (1000, 1), (1000, 999), (4096, 2048), (4097, 2048), (65_536, 1000), (65_536, 64_536), (10_000_000, 3), (400_000, 200_000), (300_001, 77_777)];
    for (n, k) in cases {
        unsafe { (api().bin_uiui)(z.ptr(), n.into(), k.into()) };
        same(&format!("mpz_bin_uiui({n}, {k})"), &z.get(), &Integer::from(Integer::binomial_u(n, k)));
    }
}

#[test]
fn mpn_products_match_gmp() {
    let mut r = rng();
    let shapes = [(1, 1), (2, 1), (5, 5), (17, 3), (64, 64), (300, 299), (1000, 1), (2500, 2500), (9000, 70)];
    for (un, vn) in shapes {
        for pattern in 0..3 {
            let gen = |n: usize, r: &mut RandState| -> Vec<u64> {
                match pattern {
                    0 => Integer::from(Integer::random_bits(64 * n as u32, r)).as_limbs().to_vec()
                        .into_iter().chain(std::iter::repeat(1)).take(n).collect(),
                    1 => vec![u64::MAX; n],
                    _ => (0..n).map(|i| if i == n - 1 { 1 << 63 } else { 0 }).collect(),
                }
            };
            let (u, v) = (gen(un, &mut r), gen(vn, &mut r));
            let mut want = vec![0u64; un + vn];
            let want_top = unsafe { gmp::mpn_mul(want.as_mut_ptr(), u.as_ptr(), un as i64, v.as_ptr(), vn as i64) };
            let mut got = vec![0x5a5a_5a5a_5a5a_5a5a_u64; un + vn];
            let top = unsafe { (api().mpn_mul)(got.as_mut_ptr(), u.as_ptr(), un as i64, v.as_ptr(), vn as i64) };
            assert!(got == want && top == want_top, "MISMATCH in mpn_mul {un}x{vn} pattern {pattern}");
            if un == vn {
                got.fill(0x5a);
                unsafe { (api().mpn_mul_n)(got.as_mut_ptr(), u.as_ptr(), v.as_ptr(), un as i64) };
                unsafe { gmp::mpn_mul_n(want.as_mut_ptr(), u.as_ptr(), v.as_ptr(), un as i64) };
                assert!(got == want, "MISMATCH in mpn_mul_n {un} pattern {pattern}");
            }
            got.truncate(2 * un);
            got.resize(2 * un, 0x5a);
            want.resize(2 * un, 0);
            unsafe { (api().mpn_sqr)(got.as_mut_ptr(), u.as_ptr(), un as i64) };
            unsafe { gmp::mpn_sqr(want.as_mut_ptr(), u.as_ptr(), un as i64) };
            assert!(got == want, "MISMATCH in mpn_sqr {un} pattern {pattern}");
        }
    }
}

/// mpn_add_n, mpn_sub_n, mpn_lshift and mpn_rshift, which MPFR calls on
/// its mantissas: one thread's sizes and the host's cores' (from 2^19
/// limbs), the result apart and in place of each operand, carries and
/// borrows through all limbs, and the shifts' overlaps GMP allows besides
/// (lshift to a higher address, rshift to a lower), every shift class.
#[test]
fn mpn_sums_and_shifts_match_gmp() {
    let mut r = rng();
    for n in [1usize, 5, 1000, (1 << 19) + 333] {
        let random = |r: &mut RandState| -> Vec<u64> {
            Integer::from(Integer::random_bits(64 * n as u32, r)).as_limbs().iter().copied().chain(std::iter::repeat(7)).take(n).collect()
        };
        let mut one = vec![0u64; n];
        one[0] = 1;
        let pairs = [(random(&mut r), random(&mut r)), (vec![u64::MAX; n], one.clone()), (vec![0; n], one)];
        for (u, v) in &pairs {
            for (name, ours, theirs) in [
                ("mpn_add_n", api().mpn_add_n, gmp::mpn_add_n as unsafe extern "C" fn(*mut u64, *const u64, *const u64, i64) -> u64),
                ("mpn_sub_n", api().mpn_sub_n, gmp::mpn_sub_n),
            ] {
                let mut want = vec![0u64; n];
                let want_out = unsafe { theirs(want.as_mut_ptr(), u.as_ptr(), v.as_ptr(), n as i64) };
                let (mut apart, mut first, mut second) = (vec![0x5a; n], u.clone(), v.clone());
                let outs = unsafe {
                    [
                        ours(apart.as_mut_ptr(), u.as_ptr(), v.as_ptr(), n as i64),
                        ours(first.as_mut_ptr(), first.as_ptr(), v.as_ptr(), n as i64),
                        ours(second.as_mut_ptr(), u.as_ptr(), second.as_ptr(), n as i64),
                    ]
                };
                assert!(outs == [want_out; 3] && apart == want && first == want && second == want, "MISMATCH in {name} of {n} limbs");
            }
        }
        let u = &pairs[0].0;
        for cnt in [1u32, 31, 63] {
            for (name, ours, theirs, shift_up) in [
                ("mpn_lshift", api().mpn_lshift, gmp::mpn_lshift as unsafe extern "C" fn(*mut u64, *const u64, i64, libc::c_uint) -> u64, true),
                ("mpn_rshift", api().mpn_rshift, gmp::mpn_rshift, false),
            ] {
                let mut want = vec![0u64; n];
                let want_out = unsafe { theirs(want.as_mut_ptr(), u.as_ptr(), n as i64, cnt) };
                let (mut apart, mut in_place) = (vec![0x5a; n], u.clone());
                // The overlap GMP allows: the result 3 limbs above (lshift)
                // or below (rshift) the operand in one buffer.
                let mut shared = vec![0u64; n + 3];
                let (from, to) = if shift_up { (0, 3) } else { (3, 0) };
                shared[from..from + n].copy_from_slice(u);
                let outs = unsafe {
                    [
                        ours(apart.as_mut_ptr(), u.as_ptr(), n as i64, cnt),
                        ours(in_place.as_mut_ptr(), in_place.as_ptr(), n as i64, cnt),
                        ours(shared.as_mut_ptr().add(to), shared.as_ptr().add(from), n as i64, cnt),
                    ]
                };
                let overlapped = &shared[to..to + n];
                assert!(outs == [want_out; 3] && apart == want && in_place == want && overlapped == want, "MISMATCH in {name} of {n} limbs by {cnt}");
            }
        }
    }
}

/// 10^6 limbs (64 million bits) through every operation once.
#[test]
fn million_limbs_match_gmp() {
    let mut r = rng();
    let n = 1_000_000u32;
    let a = Integer::from(Integer::random_bits(64 * n, &mut r));
    let b = -Integer::from(Integer::random_bits(64 * n - 5, &mut r));
    let (mut za, mut zb, mut z) = (Z::from(&a), Z::from(&b), Z::new());
    let bin: [(&str, Bin, Integer); 6] = [
        ("mpz_add", api().add, Integer::from(&a + &b)),
        ("mpz_sub", api().sub, Integer::from(&a - &b)),
        ("mpz_mul", api().mul, Integer::from(&a * &b)),
        ("mpz_and", api().and, Integer::from(&a & &b)),
        ("mpz_ior", api().ior, Integer::from(&a | &b)),
        ("mpz_xor", api().xor, Integer::from(&a ^ &b)),
    ];
    for (name, op, want) in bin {
        unsafe { op(z.ptr(), za.ptr(), zb.ptr()) };
        same(&format!("{name} 10^6 limbs"), &z.get(), &want);
    }
    unsafe { (api().mul_2exp)(z.ptr(), zb.ptr(), 64 * 1000 + 7) };
    same("mpz_mul_2exp 10^6 limbs", &z.get(), &Integer::from(&b << (64 * 1000 + 7)));
    unsafe { (api().fdiv_q_2exp)(z.ptr(), zb.ptr(), 64 * 1000 + 7) };
    same("mpz_fdiv_q_2exp 10^6 limbs", &z.get(), &Integer::from(&b >> (64 * 1000 + 7)));
    // Radix conversion both ways at 10^5 limbs (GMP's subquadratic paths).
    let c = Integer::from(Integer::random_bits(64 * 100_000, &mut r));
    let mut zc = Z::from(&c);
    let s = get_str(&mut zc, 10).unwrap();
    assert_eq!(s, c.to_string(), "mpz_get_str base 10, 10^5 limbs");
    let cs = CString::new(s).unwrap();
    let mut back = Z::new();
    assert_eq!(unsafe { (api().set_str)(back.ptr(), cs.as_ptr(), 10) }, 0);
    same("mpz_set_str 10^5 limbs", &back.get(), &c);
}

/// GMP's own algorithms, whose large products go through cuGMP's hooks
/// (src/abi/hooks.rs: mpn_nussbaumer_mul, mpn_mulmod_bnm1,
/// mpn_sqrmod_bnm1): division (2n by n), square root, radix conversion, gcd
/// and modular powers at sizes where GMP uses its FFT and mu-division paths.
/// Under CUGMP_GPU=force those products run on the GPU; on CI, on the CPU
/// through the hooks. `planted_fault_is_caught` corrupts the hooks' products
/// and requires this test to notice.
#[test]
fn gmp_internal_products_match_gmp() {
    let mut r = rng();
    for n in [3_000u32, 20_000, 70_000] {
        let a = Integer::from(Integer::random_bits(64 * 2 * n, &mut r));
        let d = Integer::from(Integer::random_bits(64 * n, &mut r)) | (Integer::from(1) << (64 * n - 1));
        let (mut za, mut zd, mut q, mut rem) = (Z::from(&a), Z::from(&d), Z::new(), Z::new());
        unsafe { (api().tdiv_qr)(q.ptr(), rem.ptr(), za.ptr(), zd.ptr()) };
        let (wq, wr) = a.clone().div_rem(d.clone());
        same(&format!("mpz_tdiv_qr {}/{n} limbs (quotient)", 2 * n), &q.get(), &wq);
        same(&format!("mpz_tdiv_qr {}/{n} limbs (remainder)", 2 * n), &rem.get(), &wr);
        unsafe { (api().sqrt)(q.ptr(), za.ptr()) };
        same(&format!("mpz_sqrt {} limbs", 2 * n), &q.get(), &a.clone().sqrt());
        let b = Integer::from(&a * &d) + 1u32;
        let mut zb = Z::from(&b);
        unsafe { (api().gcd)(q.ptr(), za.ptr(), zb.ptr()) };
        same(&format!("mpz_gcd {} limbs", 2 * n), &q.get(), &Integer::from(a.gcd_ref(&b)));
        if n <= 20_000 {
            let s = get_str(&mut zd, 10).unwrap();
            assert!(s == d.to_string(), "MISMATCH in mpz_get_str base 10, {n} limbs");
        }
    }
    let base = Integer::from(Integer::random_bits(64 * 5000, &mut r));
    let modulus = Integer::from(Integer::random_bits(64 * 5000, &mut r)) | 1u32;
    let exp = Integer::from(0x1234_5678_9abc_def1_u64);
    let (mut zb, mut ze, mut zm, mut z) = (Z::from(&base), Z::from(&exp), Z::from(&modulus), Z::new());
    unsafe { (api().powm)(z.ptr(), zb.ptr(), ze.ptr(), zm.ptr()) };
    same("mpz_powm 5000 limbs", &z.get(), &base.pow_mod(&exp, &modulus).unwrap());
}

/// Square roots (src/algorithms/sqrt.rs under the GPU's thresholds, GMP's own root
/// below and on CI): mpz_sqrt, mpz_sqrtrem, mpz_rootrem with k = 2 and
/// mpz_perfect_square_p, which all reach GMP's mpn_sqrtrem, on every size
/// class from 16 limbs (the method's least), odd and even lengths, perfect
/// squares and their neighbours (remainders 0 and 2 sqrt, the corrections'
/// edges), and the root and remainder written over the operand.
#[test]
fn square_roots_match_gmp() {
    let mut r = rng();
    let mut xs: Vec<Integer> = Vec::new();
    for n in [15u32, 16, 17, 40, 255, 1000, 4095, 4096, 9001, 40_000, 150_001] {
        let random = Integer::from(Integer::random_bits(64 * n, &mut r)) | (Integer::from(1) << (64 * n - 1));
        let small_top = Integer::from(Integer::random_bits(64 * (n - 1) + 3, &mut r)) | (Integer::from(1) << (64 * (n - 1) + 2));
        let all_ones = (Integer::from(1) << (64 * n)) - 1u32;
        let power = Integer::from(1) << (64 * n - 1);
        xs.extend([random, small_top, all_ones, power]);
        let root = Integer::from(Integer::random_bits(32 * n, &mut r)) | (Integer::from(1) << (32 * n - 1));
        let square = Integer::from(&root * &root);
        xs.extend([square.clone() - 1u32, square.clone(), square + 1u32, Integer::from(&root * &root) + Integer::from(&root * 2u32)]);
    }
    for (i, x) in xs.iter().enumerate() {
        let limbs = x.significant_digits::<u64>();
        let what = |f: &str| format!("{f}, case {i} ({limbs} limbs)");
        let (want_root, want_rem) = x.clone().sqrt_rem(Integer::new());
        let (mut zx, mut root, mut rem) = (Z::from(x), Z::new(), Z::new());
        unsafe { (api().sqrt)(root.ptr(), zx.ptr()) };
        same(&what("mpz_sqrt"), &root.get(), &want_root);
        unsafe { (api().sqrtrem)(root.ptr(), rem.ptr(), zx.ptr()) };
        same(&what("mpz_sqrtrem root"), &root.get(), &want_root);
        same(&what("mpz_sqrtrem remainder"), &rem.get(), &want_rem);
        unsafe { (api().rootrem)(root.ptr(), rem.ptr(), zx.ptr(), 2) };
        same(&what("mpz_rootrem k = 2 root"), &root.get(), &want_root);
        same(&what("mpz_rootrem k = 2 remainder"), &rem.get(), &want_rem);
        let square = unsafe { (api().perfect_square_p)(zx.ptr()) } != 0;
        assert_eq!(square, x.is_perfect_square(), "{}", what("mpz_perfect_square_p"));
        // The remainder over the operand, then the root over it.
        let mut zy = Z::from(x);
        let y = zy.ptr();
        unsafe { (api().sqrtrem)(root.ptr(), y, y) };
        same(&what("mpz_sqrtrem, remainder over the operand"), &zy.get(), &want_rem);
        let mut zy = Z::from(x);
        let y = zy.ptr();
        unsafe { (api().sqrt)(y, y) };
        same(&what("mpz_sqrt, root over the operand"), &zy.get(), &want_root);
    }
}

/// Roots of higher degree (mpz_root, mpz_rootrem with k = 3, 4, 5, 7 and
/// 31): GMP's own algorithm, whose products and quotients go through the
/// hooks (on the GPU under force from 64 limbs). Random operands, perfect
/// powers and their neighbours, negative operands with odd k, sizes from
/// one limb to 30,000, and the root written over the operand.
#[test]
fn higher_roots_match_gmp() {
    let mut r = rng();
    for k in [3u32, 4, 5, 7, 31] {
        let mut xs: Vec<Integer> = vec![Integer::new(), Integer::from(1)];
        for n in [1u32, 3, 40, 700, 5_000, 30_000] {
            if k == 31 && n > 5_000 {
                continue;
            }
            let random = Integer::from(Integer::random_bits(64 * n, &mut r)) | (Integer::from(1) << (64 * n - 1));
            let root = Integer::from(Integer::random_bits((64 * n).div_ceil(k), &mut r)) + 2u32;
            let power = Integer::from(rug::ops::Pow::pow(&root, k));
            xs.extend([random, power.clone() - 1u32, power.clone(), power + 1u32]);
        }
        for x in xs {
            for x in [x.clone(), -x] {
                if x < 0 && k % 2 == 0 {
                    continue;
                }
                let what = |f: &str| format!("{f} k = {k}, {} limbs, sign {}", x.significant_digits::<u64>(), x.cmp0() as i32);
                let (want_root, want_rem) = <(Integer, Integer)>::from(x.root_rem_ref(k));
                let (mut zx, mut root, mut rem) = (Z::from(&x), Z::new(), Z::new());
                let exact = unsafe { (api().root)(root.ptr(), zx.ptr(), k.into()) };
                same(&what("mpz_root"), &root.get(), &want_root);
                assert_eq!(exact != 0, want_rem == 0, "{}: the exactness flag", what("mpz_root"));
                unsafe { (api().rootrem)(root.ptr(), rem.ptr(), zx.ptr(), k.into()) };
                same(&what("mpz_rootrem root"), &root.get(), &want_root);
                same(&what("mpz_rootrem remainder"), &rem.get(), &want_rem);
                let mut zy = Z::from(&x);
                let y = zy.ptr();
                unsafe { (api().root)(y, y, k.into()) };
                same(&what("mpz_root, root over the operand"), &zy.get(), &want_root);
            }
        }
    }
}

/// GMP's products mod B^rn - 1 through the library's mpn_mulmod_bnm1,
/// mpn_sqrmod_bnm1 and mpn_mulmod_bnm1_next_size (tests/common/mulmod.rs).
/// Without a GPU the sizes are GMP's own; under force GMP's own below 2048
/// limbs (the products made whole and folded), from there cyclic lengths
/// (one convolution on the GPU; 2500 limbs takes 2560, 5 * 2^9).
#[test]
fn mulmod_bnm1_matches_gmp() {
    let mut r = rng();
    let gpu = unsafe { (api().gpu_in_use)() } == 1;
    let force = std::env::var("CUGMP_GPU").is_ok_and(|v| v == "force");
    for (n, rn, gmp_rn) in common::mulmod::mulmod_sweep(api(), &[17, 100, 1000, 2500, 5000, 30_000], &mut r) {
        if !gpu {
            assert_eq!(rn, gmp_rn, "without a GPU mpn_mulmod_bnm1_next_size({n}) must be GMP's");
        } else if force && n >= common::mulmod::CYCLIC_FROM {
            assert!(common::mulmod::is_cyclic_size(rn), "mpn_mulmod_bnm1_next_size({n}) = {rn} is no cyclic length");
        } else if force {
            assert_eq!(rn, gmp_rn, "mpn_mulmod_bnm1_next_size({n}) must be GMP's below the cyclic products' size");
        }
    }
}

#[test]
fn init2_and_clear_follow_gmp() {
    for bits in [0u64, 1, 63, 64, 65, 1000] {
        let mut m = Mpz::blank();
        unsafe { (api().init2)(&mut m, bits) };
        let want = 1 + (bits.max(1) - 1) / 64;
        assert_eq!((m.alloc as u64, m.size), (want, 0), "mpz_init2({bits})");
        unsafe { (api().clear)(&mut m) };
    }
    // A fresh variable is readable zero and clearing it frees nothing.
    let mut m = Mpz::blank();
    unsafe { (api().init)(&mut m) };
    assert!(!m.d.is_null() && m.alloc == 0 && m.size == 0);
    unsafe { (api().clear)(&mut m) };
    let mut x = Integer::new();
    x.assign(1);
}

/// The reference GMP is rug's, not the library under test.
#[test]
fn reference_is_independent() {
    api().lib.assert_reference_is_independent(gmp::mpz_mul as *const () as usize);
}

/// A corrupted product (CUGMP_FAULT=mul) must make the suite fail.
#[test]
fn planted_fault_is_caught() {
    let run = |fault: Option<&str>| common::rerun_tests(&["mul_matches_gmp", "mpn_products_match_gmp", "gmp_internal_products_match_gmp"], &[("CUGMP_FAULT", fault)]);
    let (clean_ok, clean_log) = run(None);
    assert!(clean_ok && clean_log.contains("3 passed"), "the unfaulted run must pass the three tests:\n{clean_log}");
    let (faulted_ok, faulted_log) = run(Some("mul"));
    assert!(!faulted_ok, "CUGMP_FAULT=mul went unnoticed:\n{faulted_log}");
    for what in ["MISMATCH in mpz_mul", "MISMATCH in mpn_mul", "MISMATCH in mpz_tdiv_qr"] {
        assert!(faulted_log.contains(what), "CUGMP_FAULT=mul: no \"{what}\":\n{faulted_log}");
    }
}

/// Products shared among cores (`CUGMP_CPU_SHARE`, src/cpu.rs's
/// `mul_on_cores`): mpz_mul's cases (signs, aliasing, squares, unbalanced
/// and large operands) and 16 threads at once, in a child run that shares
/// every product from 2 limbs with the GPU off, equal GMP's; the child's
/// statistics prove that products were shared. (Whether the helpers were
/// free to take part depends on the host's load; src/helpers.rs's tests
/// prove that they take tasks, src/cpu.rs's that the cut products are
/// right.) The helpers do not step back from a busy host there
/// (`CUGMP_CPU_STEP_BACK=0`): the test machine's other tests keep it busy.
#[test]
fn shared_products_match_gmp() {
    let env = [("CUGMP_FAULT", None), ("CUGMP_CPU_SHARE", Some("2")), ("CUGMP_CPU_STEP_BACK", Some("0")), ("CUGMP_GPU", Some("off")), ("CUGMP_STATS", Some("1"))];
    let (ok, log) = common::rerun_tests(&["mul_matches_gmp", "threads_match_gmp"], &env);
    assert!(ok && log.contains("2 passed"), "the shared products' run failed:\n{log}");
    let counts = counts_after(&log, "mpz_mul products shared among cores: ");
    assert!(counts.len() == 2 && counts[0] > 0, "no product was shared: {counts:?}\n{log}");
}

/// The numbers on the line of `log` that begins with `prefix` (a line of
/// CUGMP_STATS's table); none where there is no such line.
fn counts_after(log: &str, prefix: &str) -> Vec<u64> {
    log.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|rest| rest.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect())
        .unwrap_or_default()
}

/// gcd, gcdext, invert and the Jacobi symbol, whose half-gcds make their
/// matrix steps through the hooks (src/algorithms/hgcd.rs): sizes below
/// and well above GMP's half-gcd threshold, operands with a large common
/// factor (so that the gcd is long) and coprime ones, both signs,
/// unbalanced sizes, zero, and the result written over an operand.
#[test]
fn gcds_match_gmp() {
    let mut r = rng();
    for n in [0u32, 1, 40, 700, 3_000, 12_000] {
        for (shift, factor) in [(0u32, 0u32), (n / 3 + 1, n / 2), (n / 2 + 7, 1)] {
            let mut a = Integer::from(Integer::random_bits(64 * n, &mut r));
            let mut b = Integer::from(Integer::random_bits(64 * (n + shift), &mut r));
            if factor > 0 {
                let c = Integer::from(Integer::random_bits(64 * factor, &mut r)) + 1u32;
                a *= &c;
                b *= &c;
            }
            if shift % 2 == 1 {
                b = -b;
            }
            let what = format!("{n} and {} limbs", n + shift);
            let (mut za, mut zb, mut g, mut s, mut t) = (Z::from(&a), Z::from(&b), Z::new(), Z::new(), Z::new());
            unsafe { (api().gcd)(g.ptr(), za.ptr(), zb.ptr()) };
            same(&format!("mpz_gcd {what}"), &g.get(), &Integer::from(a.gcd_ref(&b)));
            let (wg, ws, wt) = <(Integer, Integer, Integer)>::from(a.extended_gcd_ref(&b));
            unsafe { (api().gcdext)(g.ptr(), s.ptr(), t.ptr(), za.ptr(), zb.ptr()) };
            same(&format!("mpz_gcdext {what} (gcd)"), &g.get(), &wg);
            same(&format!("mpz_gcdext {what} (s)"), &s.get(), &ws);
            same(&format!("mpz_gcdext {what} (t)"), &t.get(), &wt);
            let mut alias = Z::from(&a);
            unsafe { (api().gcd)(alias.ptr(), alias.ptr(), zb.ptr()) };
            same(&format!("mpz_gcd {what}, result over the first operand"), &alias.get(), &wg);
            // The Jacobi symbol (a / m), m odd and positive.
            let m = Integer::from(b.abs_ref()) | 1u32;
            let mut zm = Z::from(&m);
            let jacobi = unsafe { (api().jacobi)(za.ptr(), zm.ptr()) };
            assert_eq!(jacobi, a.jacobi(&m), "mpz_jacobi {what}");
            if b != 0 {
                let got = unsafe { (api().invert)(g.ptr(), za.ptr(), zb.ptr()) };
                match a.invert_ref(&b).map(Integer::from) {
                    Some(inverse) => {
                        assert!(got != 0, "mpz_invert {what}: no inverse found, GMP finds one");
                        same(&format!("mpz_invert {what}"), &g.get(), &inverse);
                    }
                    None => assert_eq!(got, 0, "mpz_invert {what}: an inverse where GMP finds none"),
                }
            }
        }
    }
}

/// The half-gcd's matrix steps with their products on several cores
/// (`CUGMP_CPU_SHARE`, src/algorithms/hgcd.rs): `gcds_match_gmp` in a
/// child run that shares them with the GPU off, the helpers not stepping
/// back from the busy test machine (`CUGMP_CPU_STEP_BACK=0`); the child's
/// statistics prove that steps were shared. Then again with the half-gcd's
/// own recursion from 64 limbs and the adjustments' products cut in halves
/// (from 32 limbs, `CUGMP_HGCD_HALVES`, which cuts them whatever the
/// helpers' number).
#[test]
fn shared_hgcd_steps_match_gmp() {
    let env = [("CUGMP_FAULT", None), ("CUGMP_CPU_SHARE", Some("2")), ("CUGMP_CPU_STEP_BACK", Some("0")), ("CUGMP_GPU", Some("off")), ("CUGMP_STATS", Some("1"))];
    let (ok, log) = common::rerun_tests(&["gcds_match_gmp"], &env);
    assert!(ok && log.contains("1 passed"), "the shared steps' run failed:\n{log}");
    let counts = counts_after(&log, "half-gcd matrix steps with their products shared among cores: ");
    assert!(counts.len() == 2 && counts[0] > 0, "no half-gcd step was shared: {counts:?}\n{log}");
    let halves = [("CUGMP_HGCD_THRESHOLD", Some("64")), ("CUGMP_HGCD_HALVES", Some("32"))];
    let (ok, log) = common::rerun_tests(&["gcds_match_gmp"], &[&env[..], &halves[..]].concat());
    assert!(ok && log.contains("1 passed"), "the run with the steps' products in halves failed:\n{log}");
    let counts = counts_after(&log, "half-gcd matrix steps with their products cut in halves: ");
    assert!(counts.len() == 2 && counts[0] > 0, "no half-gcd step's products were cut in halves: {counts:?}\n{log}");
}

/// The half-gcd recursing from the least threshold it takes, from the one
/// it takes by default while a device serves, and GMP's own
/// (`CUGMP_HGCD_THRESHOLD` 16, 64 and 0, src/algorithms/hgcd.rs):
/// `gcds_match_gmp` in child runs. The one from 64 limbs under
/// `CUGMP_PROFILE`, whose table gives the recursion's own rows: its steps
/// and its matrix steps' sums.
#[test]
fn half_gcd_thresholds_match_gmp() {
    for t in ["16", "64", "0"] {
        let profile = (t == "64").then_some("1");
        let env = [("CUGMP_FAULT", None), ("CUGMP_HGCD_THRESHOLD", Some(t)), ("CUGMP_PROFILE", profile)];
        let (ok, log) = common::rerun_tests(&["gcds_match_gmp"], &env);
        assert!(ok && log.contains("1 passed"), "gcds with the half-gcd from {t} limbs failed:\n{log}");
        if profile.is_some() {
            for row in ["half-gcd steps ", "half-gcd matrix sums "] {
                let calls: u64 = log.lines().filter_map(|l| l.strip_prefix(row)).filter_map(|rest| rest.split_whitespace().nth(1)?.parse::<u64>().ok()).sum();
                assert!(calls > 0, "no calls in the profile's rows {row:?}:\n{log}");
            }
        }
    }
}

/// cugmp_threshold reports the routing's crossovers, and rejects bad names.
#[test]
fn thresholds_are_reported() {
    let lib = Library::open();
    let threshold: unsafe extern "C" fn(*const c_char) -> libc::c_long = unsafe { lib.sym("cugmp_threshold") };
    let ask = |name: &str| unsafe { threshold(CString::new(name).unwrap().as_ptr()) };
    // The tuning knobs' values where the environment sets them
    // (`thresholds_follow_the_tuning_knobs`), else the measured crossovers.
    let set = |name: &str, measured: libc::c_long| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(measured);
    assert_eq!(ask("mul"), set("CUGMP_GPU_FROM_MUL", 768), "measured product crossover (RESULTS.md)");
    assert_eq!(ask("gmp-internal mul"), set("CUGMP_GPU_FROM_INTERNAL", 1024), "GMP's own products (RESULTS.md)");
    assert_eq!(ask("get_str"), 4096, "radix conversion by whole levels (RESULTS.md)");
    assert_eq!(ask("set_str"), 6144, "radix conversion from digits by whole levels (RESULTS.md)");
    assert_eq!(ask("fac_ui"), 8192, "factorials from their primes' exponents (RESULTS.md)");
    assert_eq!(ask("bin_uiui"), 32768, "binomials from their primes' exponents (RESULTS.md)");
    assert_eq!(ask("sqrt"), 8192, "square roots by Newton's iteration (RESULTS.md)");
    assert_eq!(ask("div"), 2048, "quotients on device-resident numbers (RESULTS.md)");
    assert_eq!(ask("add"), 100_000_000, "add wins end to end only from 10^8 limbs (RESULTS.md)");
    assert_eq!(ask("and"), -1, "logic never goes to the GPU under auto");
    assert_eq!(ask("no-such-op"), -2);
    assert_eq!(unsafe { threshold(std::ptr::null()) }, -2);
}

/// CUGMP_GPU_FROM_MUL and CUGMP_GPU_FROM_INTERNAL move the products'
/// crossovers: a child process with both set reports them.
#[test]
fn thresholds_follow_the_tuning_knobs() {
    let env = [("CUGMP_FAULT", None), ("CUGMP_GPU_FROM_MUL", Some("700")), ("CUGMP_GPU_FROM_INTERNAL", Some("900"))];
    let (ok, log) = common::rerun_tests(&["thresholds_are_reported"], &env);
    assert!(ok && log.contains("1 passed"), "the child with the knobs set failed:\n{log}");
}

/// GMP is reentrant and so must cuGMP be: 16 threads, each on its own
/// variables, run mixed products, sums and logic for CUGMP_STRESS_SECONDS
/// (default 2) with every result checked. (The GPU version with 64 threads
/// and throughput figures is in tests/gpu.rs.)
#[test]
fn threads_match_gmp() {
    let seconds: u64 = std::env::var("CUGMP_STRESS_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let api = api();
    let checked: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..16u64)
            .map(|t| {
                scope.spawn(move || {
                    let mut rng = rng();
                    rng.seed(&Integer::from(t + 1));
                    let mut ops = 0u64;
                    while std::time::Instant::now() < deadline {
                        let n = 1 + rng.bits(12);
                        let a = Integer::from(Integer::random_bits(64 * n, &mut rng));
                        let b = -Integer::from(Integer::random_bits(64 * (1 + rng.bits(12)), &mut rng));
                        let (op, want, name): (Bin, Integer, &str) = match rng.bits(2) {
                            0 => (api.mul, Integer::from(&a * &b), "mpz_mul"),
                            1 => (api.add, Integer::from(&a + &b), "mpz_add"),
                            2 => (api.xor, Integer::from(&a ^ &b), "mpz_xor"),
                            _ => (api.and, Integer::from(&a & &b), "mpz_and"),
                        };
                        let (mut za, mut zb, mut r) = (Z::from(&a), Z::from(&b), Z::new());
                        unsafe { op(r.ptr(), za.ptr(), zb.ptr()) };
                        same(&format!("{name} in thread {t}"), &r.get(), &want);
                        ops += 1;
                    }
                    ops
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a worker panicked")).sum()
    });
    assert!(checked >= 16, "the threads did no work");
}
