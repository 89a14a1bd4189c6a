//! Products of binary polynomials (`cugmp_gf2x_mul`, `cugmp_mpz_gf2x_mul`)
//! against the gf2x library (the distribution's libgf2x, opened at run
//! time; scripts/install-prereqs.sh installs it) and, for small sizes,
//! against the definition bit by bit: random sizes from 1 bit to 2^26
//! bits, unbalanced, all ones, overlapping results, products split for
//! want of device memory, and beyond gf2x the algebraic checks
//! (a b) c = a (b c) and a (b + c) = a b + a c (to 2^29 bits on the GPU).

mod common;

use common::api::{api, Ptr, SrcPtr, Z};
use rug::rand::RandState;
use rug::Integer;
use std::ffi::CString;
use std::process::Command;

type Gf2xMul = unsafe extern "C" fn(*mut u64, *const u64, i64, *const u64, i64);
type MpzGf2xMul = unsafe extern "C" fn(Ptr, SrcPtr, SrcPtr);
type Reference = unsafe extern "C" fn(*mut u64, *const u64, libc::c_ulong, *const u64, libc::c_ulong) -> libc::c_int;

fn ours() -> (Gf2xMul, MpzGf2xMul) {
    let lib = &api().lib;
    unsafe { (lib.sym("cugmp_gf2x_mul"), lib.sym("cugmp_mpz_gf2x_mul")) }
}

/// gf2x's `gf2x_mul`, from libgf2x.so.3 (or the unversioned name).
fn reference() -> Reference {
    static REF: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let f = *REF.get_or_init(|| {
        for name in ["libgf2x.so.3", "libgf2x.so"] {
            let c = CString::new(name).unwrap();
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if !h.is_null() {
                let f = unsafe { libc::dlsym(h, c"gf2x_mul".as_ptr()) };
                assert!(!f.is_null(), "{name} has no gf2x_mul");
                return f as usize;
            }
        }
        panic!("libgf2x not found: scripts/install-prereqs.sh installs libgf2x-dev");
    });
    unsafe { std::mem::transmute::<usize, Reference>(f) }
}

fn gf2x(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut c = vec![0; a.len() + b.len()];
    if a.is_empty() || b.is_empty() {
        return c;
    }
    let rc = unsafe { reference()(c.as_mut_ptr(), a.as_ptr(), a.len() as _, b.as_ptr(), b.len() as _) };
    assert_eq!(rc, 0, "gf2x_mul failed");
    c
}

fn cugmp(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut c = vec![0xdead; a.len() + b.len()];
    unsafe { ours().0(c.as_mut_ptr(), a.as_ptr(), a.len() as i64, b.as_ptr(), b.len() as i64) };
    c
}

fn limbs(n: usize, rng: &mut RandState) -> Vec<u64> {
    let x = Integer::from(Integer::random_bits(64 * n as u32, rng));
    x.as_limbs().iter().copied().chain(std::iter::repeat(0)).take(n).collect()
}

fn xor(a: &[u64], b: &[u64]) -> Vec<u64> {
    (0..a.len().max(b.len())).map(|i| a.get(i).unwrap_or(&0) ^ b.get(i).unwrap_or(&0)).collect()
}

/// The definition, bit by bit.
fn naive(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = vec![0; a.len() + b.len()];
    for i in (0..64 * a.len()).filter(|&i| a[i / 64] >> (i % 64) & 1 != 0) {
        for j in (0..64 * b.len()).filter(|&j| b[j / 64] >> (j % 64) & 1 != 0) {
            out[(i + j) / 64] ^= 1 << ((i + j) % 64);
        }
    }
    out
}

#[test]
fn the_reference_is_gf2x() {
    // x^63 * x = x^64; (x + 1)^2 = x^2 + 1.
    assert_eq!(gf2x(&[1 << 63], &[2]), vec![0, 1]);
    assert_eq!(gf2x(&[3], &[3]), vec![5, 0]);
}

#[test]
fn small_products_match_the_definition_and_gf2x() {
    let mut rng = RandState::new();
    for an in 0..12 {
        for bn in 0..12 {
            let (a, b) = (limbs(an, &mut rng), limbs(bn, &mut rng));
            let want = naive(&a, &b);
            assert_eq!(cugmp(&a, &b), want, "{an} x {bn} against the definition");
            assert_eq!(gf2x(&a, &b), want, "gf2x itself, {an} x {bn}");
        }
    }
}

/// Random sizes from 1 limb to 2^16 limbs (2^22 bits) a side, balanced and
/// not, against gf2x.
#[test]
fn products_match_gf2x() {
    let mut rng = RandState::new();
    rng.seed(&Integer::from(28));
    let mut sizes: Vec<(usize, usize)> = vec![(1, 1), (24, 24), (25, 23), (48, 48), (100, 3), (777, 512), (1 << 14, 1 << 14), (1 << 16, 1 << 16), (1 << 16, 1000)];
    for _ in 0..40 {
        let (la, lb) = (rng.below(14), rng.below(14));
        let an = 1 + rng.below(1 << la) as usize;
        let bn = 1 + rng.below(1 << lb) as usize;
        sizes.push((an, bn));
    }
    for (an, bn) in sizes {
        let (a, b) = (limbs(an, &mut rng), limbs(bn, &mut rng));
        assert!(cugmp(&a, &b) == gf2x(&a, &b), "MISMATCH: {an} x {bn} limbs");
    }
    let ones = vec![!0u64; 5000];
    assert!(cugmp(&ones, &ones) == gf2x(&ones, &ones), "MISMATCH: all ones, 5000 limbs");
}

/// With 4 MiB of device memory (a child run of `products_match_gf2x`):
/// under force the GPU refuses products from 2^16 limbs a side and they
/// are made from halves, each on the GPU.
#[test]
fn products_larger_than_the_device_are_split() {
    let (ok, log) = common::rerun_tests(&["products_match_gf2x"], &[("CUGMP_GPU_MEM_LIMIT", Some("4M")), ("CUGMP_LOG", Some("1"))]);
    assert!(ok && log.contains("1 passed"), "products with 4 MiB of device memory failed:\n{log}");
    if std::env::var("CUGMP_GPU").as_deref() == Ok("force") && unsafe { (api().gpu_in_use)() } != 0 {
        assert!(log.contains("split in halves"), "CUGMP_GPU=force with 4 MiB of device memory: no product was split\n{log}");
    }
}

/// Sizes near 2^26 bits a side against gf2x: one balanced, one not.
#[test]
fn products_of_2_26_bits_match_gf2x() {
    let mut rng = RandState::new();
    rng.seed(&Integer::from(26));
    for (an, bn) in [(1 << 20, (1 << 20) - 1 - rng.below(1000) as usize), ((1 << 19) + rng.below(1 << 19) as usize, 3 << 17)] {
        let (a, b) = (limbs(an, &mut rng), limbs(bn, &mut rng));
        assert!(cugmp(&a, &b) == gf2x(&a, &b), "MISMATCH: {an} x {bn} limbs");
    }
}

/// Beyond 2^26 bits, where gf2x takes minutes: (a b) c = a (b c) and
/// a (b + c) = a b + a c with a and b of 2^28 bits, c of 2^27. On the
/// GPU only (the CPU engine takes minutes too): `device-run.sh gf2x` runs
/// it under force.
#[test]
#[ignore = "GPU sizes: device-run.sh gf2x runs it under CUGMP_GPU=force"]
fn products_beyond_2_26_bits_are_associative_and_distributive() {
    let mut rng = RandState::new();
    rng.seed(&Integer::from(27));
    laws_hold(&limbs(1 << 22, &mut rng), &limbs(1 << 22, &mut rng), &limbs(1 << 21, &mut rng));
}

/// Past what the tests ask of gf2x: (a b) c = a (b c), a (b + c) = a b + a c.
#[test]
fn products_are_associative_and_distributive() {
    let mut rng = RandState::new();
    laws_hold(&limbs(1 << 15, &mut rng), &limbs(1 << 15, &mut rng), &limbs(3 << 14, &mut rng));
}

/// (a b) c = a (b c) and a (b + c) = a b + a c by `cugmp`.
fn laws_hold(a: &[u64], b: &[u64], c: &[u64]) {
    assert!(cugmp(&cugmp(a, b), c) == cugmp(a, &cugmp(b, c)), "MISMATCH: (a b) c != a (b c)");
    assert!(cugmp(a, &xor(b, c)) == xor(&cugmp(a, b), &cugmp(a, c)), "MISMATCH: a (b + c) != a b + a c");
}

/// The result over its operands: rp = ap, rp = bp, ap = bp = rp.
#[test]
fn overlapping_results() {
    let mut rng = RandState::new();
    let (a, b) = (limbs(70, &mut rng), limbs(30, &mut rng));
    let want = gf2x(&a, &b);
    let mut buf = a.clone();
    buf.resize(100, 0);
    unsafe { ours().0(buf.as_mut_ptr(), buf.as_ptr(), 70, b.as_ptr(), 30) };
    assert_eq!(buf, want, "rp = ap");
    let mut buf = b.clone();
    buf.resize(100, 0);
    unsafe { ours().0(buf.as_mut_ptr(), a.as_ptr(), 70, buf.as_ptr(), 30) };
    assert_eq!(buf, want, "rp = bp");
    let mut buf = a.clone();
    buf.resize(140, 0);
    let square = gf2x(&a, &a);
    unsafe { ours().0(buf.as_mut_ptr(), buf.as_ptr(), 70, buf.as_ptr(), 70) };
    assert_eq!(buf, square, "rp = ap = bp");
}

/// The mpz form: signs ignored, zero, the result one of the operands.
#[test]
fn mpz_products() {
    let f = ours().1;
    let mut rng = RandState::new();
    for (an, bn) in [(0, 5), (1, 1), (3, 40), (200, 200)] {
        let (a, b) = (limbs(an, &mut rng), limbs(bn, &mut rng));
        let want = Integer::from_digits(&gf2x(&a, &b), rug::integer::Order::Lsf);
        let ia = -Integer::from_digits(&a, rug::integer::Order::Lsf);
        let ib = Integer::from_digits(&b, rug::integer::Order::Lsf);
        let (mut za, mut zb, mut r) = (Z::from(&ia), Z::from(&ib), Z::from(&Integer::from(-5)));
        unsafe { f(r.ptr(), za.ptr(), zb.ptr()) };
        assert_eq!(r.get(), want, "{an} x {bn}");
        unsafe { f(za.ptr(), za.ptr(), zb.ptr()) };
        assert_eq!(za.get(), want, "r = a, {an} x {bn}");
        let mut zb2 = Z::from(&ib);
        unsafe { f(zb2.ptr(), zb2.ptr(), zb2.ptr()) };
        assert_eq!(zb2.get(), Integer::from_digits(&gf2x(&b, &b), rug::integer::Order::Lsf), "r = a = b, {bn}");
    }
}

/// A negative size stops the program with a message naming the function.
#[test]
fn negative_sizes_stop_the_program() {
    if std::env::var_os("CUGMP_GF2X_CHILD").is_some() {
        let a = [1u64];
        let mut r = [0u64; 2];
        unsafe { ours().0(r.as_mut_ptr(), a.as_ptr(), -1, a.as_ptr(), 1) };
        println!("returned");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "negative_sizes_stop_the_program", "--nocapture"])
        .env("CUGMP_GF2X_CHILD", "1")
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(err.contains("cuGMP: cugmp_gf2x_mul: a negative size"), "{err}");
}
