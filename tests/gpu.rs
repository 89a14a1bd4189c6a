//! GPU tests, run on the GPU machine with the library's GPU engine forced on.
//! Without a usable GPU every test reports itself skipped (never passes).
//! Output follows libtest's format.
//!
//! Each test is run in a child process of this binary (`--child NAME`), since
//! CUGMP_* settings are read once per process.

mod common;

use common::api::{api, reference_get_str, Api, Bin, Shift};
use common::Mpz;
use libc::c_ulong;
use rug::rand::RandState;
use rug::Integer;
use std::process::Command;

/// The four shifts, in the order `shift_reference` numbers them.
fn shifts(api: &Api) -> [(&'static str, Shift); 4] {
    [
        ("mpz_mul_2exp", api.mul_2exp),
        ("mpz_tdiv_q_2exp", api.tdiv_q_2exp),
        ("mpz_fdiv_q_2exp", api.fdiv_q_2exp),
        ("mpz_cdiv_q_2exp", api.cdiv_q_2exp),
    ]
}

fn to_mpz(api: &Api, x: &Integer) -> Box<Mpz> {
    Box::new(Mpz::load(api.init, api.init2, x))
}

fn from_mpz(m: &Mpz) -> Integer {
    m.value()
}

/// `a * b` by the library's `mpz_mul`, into a fresh rop.
fn mpz_product(api: &Api, a: &Integer, b: &Integer) -> Integer {
    let (ma, mb, mut r) = (to_mpz(api, a), to_mpz(api, b), to_mpz(api, &Integer::new()));
    unsafe { (api.mul)(&mut *r, &*ma, &*mb) };
    let product = from_mpz(&r);
    for mut m in [ma, mb, r] {
        unsafe { (api.clear)(&mut *m) };
    }
    product
}

/// CUGMP_TEST_MAX_LIMBS bounds the sizes (compute-sanitizer runs are slow).
fn max_limbs() -> u32 {
    std::env::var("CUGMP_TEST_MAX_LIMBS").ok().and_then(|v| v.parse().ok()).unwrap_or(u32::MAX)
}

/// GMP's shifts, from rug: truncating, floor and ceiling quotients by 2^n.
fn shift_reference(kind: usize, a: &Integer, n: u32) -> Integer {
    match kind {
        0 => Integer::from(a << n),
        1 => {
            let q = Integer::from(a.abs_ref()) >> n;
            if *a < 0 { -q } else { q }
        }
        2 => Integer::from(a >> n),
        _ => -(Integer::from(-a) >> n),
    }
}

/// Add, sub, and, ior, xor, com and the four shifts on the GPU against GMP:
/// all sign combinations, zero, aliasing (rop = a), operands of equal and
/// very different lengths, carry and borrow chains through the whole number
/// (all ones plus one, a power of two minus one), every shift-count class,
/// 1 to 2^24 limbs. Returns (operations the GPU completed, calls made).
fn linear_sweep(api: &Api) -> (u64, u64) {
    let mut rng = RandState::new();
    let before = unsafe { (api.gpu_operations)() };
    let mut calls = 0u64;
    type Reference = fn(&Integer, &Integer) -> Integer;
    let binary: [(&str, Bin, Reference); 5] = [
        ("mpz_add", api.add, |a, b| Integer::from(a + b)),
        ("mpz_sub", api.sub, |a, b| Integer::from(a - b)),
        ("mpz_and", api.and, |a, b| Integer::from(a & b)),
        ("mpz_ior", api.ior, |a, b| Integer::from(a | b)),
        ("mpz_xor", api.xor, |a, b| Integer::from(a ^ b)),
    ];
    // Around the kernels' tile of 2048 limbs, and up to 2^24 limbs (2^30 bits).
    let sizes = [1u32, 2, 3, 2047, 2048, 2049, 6145, 65_537, 1 << 20, 1 << 24];
    for &n in sizes.iter().filter(|n| **n <= max_limbs()) {
        let bits = 64 * n;
        let all_ones = (Integer::from(1) << bits) - 1u32;
        let power = Integer::from(1) << bits; // n + 1 limbs: minus one borrows through all
        let random = Integer::from(Integer::random_bits(bits, &mut rng)) | (Integer::from(1) << (bits - 1));
        let shorter = Integer::from(Integer::random_bits(bits / 2 + 1, &mut rng));
        let mut xs = vec![Integer::new(), Integer::from(1), Integer::from(-1)];
        // From 2^20 limbs on, fewer pairs (each call moves megabytes over PCIe).
        let huge = n >= 1 << 20;
        // Carry and borrow chains that start and end inside tiles: limbs
        // n/4..3n/4 all ones in `run` and `run2` (equal there: a borrow
        // passes through), zero in `hole` (run + hole: a carry passes).
        let (lo, hi) = (64 * (n / 4), 64 * (3 * n / 4));
        let mask = (Integer::from(1) << hi) - (Integer::from(1) << lo);
        let run = Integer::from(&random | &mask);
        let run2 = Integer::from(Integer::random_bits(bits, &mut rng)) | &mask | (Integer::from(1) << (bits - 1));
        let hole = Integer::from(Integer::random_bits(bits, &mut rng)) & Integer::from(!&mask);
        let patterns = if huge { vec![all_ones, random] } else { vec![all_ones, power, random, shorter, run, run2, hole] };
        for x in patterns {
            xs.push(-x.clone());
            xs.push(x);
        }
        for (i, a) in xs.iter().enumerate() {
            if huge && i < 3 {
                continue; // small first operands: covered by the swapped pairs
            }
            for b in &xs {
                let (ma, mb) = (to_mpz(api, a), to_mpz(api, b));
                for (name, op, reference) in &binary {
                    let want = reference(a, b);
                    let mut r = to_mpz(api, &Integer::new());
                    unsafe { op(&mut *r, &*ma, &*mb) };
                    assert!(from_mpz(&r) == want, "MISMATCH: {name} on the GPU, {n} limbs, signs {} {}", a.cmp0() as i32, b.cmp0() as i32);
                    if huge {
                        calls += 1;
                        unsafe { (api.clear)(&mut *r) };
                        continue;
                    }
                    // Aliased: rop = a.
                    let mut ra = to_mpz(api, a);
                    unsafe { op(&mut *ra, &*ra, &*mb) };
                    assert!(from_mpz(&ra) == want, "MISMATCH: {name} (rop = a) on the GPU, {n} limbs");
                    calls += 2;
                    for mut m in [r, ra] {
                        unsafe { (api.clear)(&mut *m) };
                    }
                }
                for mut m in [ma, mb] {
                    unsafe { (api.clear)(&mut *m) };
                }
            }
            let mut ra = to_mpz(api, a);
            unsafe { (api.com)(&mut *ra, &*ra) };
            assert!(from_mpz(&ra) == Integer::from(!a), "MISMATCH: mpz_com on the GPU, {n} limbs");
            calls += 1;
            unsafe { (api.clear)(&mut *ra) };
            let mut ma = to_mpz(api, a);
            let top = a.significant_bits();
            for count in [0, 1, 63, 64, 65, 128, 640, top.saturating_sub(1), top, top + 1, top + 64, top + 1000] {
                for (kind, (name, op)) in shifts(api).iter().enumerate() {
                    let mut r = to_mpz(api, &Integer::new());
                    unsafe { op(&mut *r, &*ma, count as c_ulong) };
                    assert!(from_mpz(&r) == shift_reference(kind, a, count), "MISMATCH: {name} by {count} on the GPU, {n} limbs, sign {}", a.cmp0() as i32);
                    calls += 1;
                    unsafe { (api.clear)(&mut *r) };
                }
            }
            unsafe { (api.clear)(&mut *ma) };
        }
    }
    (unsafe { (api.gpu_operations)() } - before, calls)
}

fn operand(n: u32, pattern: u32, rng: &mut RandState) -> Integer {
    match pattern {
        0 => Integer::from(Integer::random_bits(64 * n, rng)) | Integer::from(1) << (64 * n - 1),
        1 => (Integer::from(1) << (64 * n)) - 1u32,
        _ => (Integer::from(1) << (64 * n - 1)) | 1u32,
    }
}

/// Products on the GPU: balanced, unbalanced (up to 1000x), squaring,
/// aliasing, signs, all-ones and sparse operands, 1 to 2^22 limbs;
/// transforms of 2^k, 3 * 2^k and 5 * 2^k points (700,000 x 400,000 and
/// 1,100,000 x 1,000,000: 5 * 2^19 and 5 * 2^20, the second set of
/// primes; 2,000,000 x 300,000 in chunks on 5 * 2^19).
fn mul_sweep(api: &Api) -> u64 {
    let mut rng = RandState::new();
    let before = unsafe { (api.gpu_operations)() };
    let shapes: &[(u32, u32)] = &[
        (1, 1), (2, 1), (3, 3), (17, 5), (64, 64), (100, 99), (1000, 1), (1000, 1000), (4097, 4095),
        (10_000, 10), (65_536, 65_536), (100_000, 100), (1_000_000, 1_000_000), (1 << 22, 1 << 22), (1 << 21, 1 << 11),
        (700_000, 400_000), (1_100_000, 1_000_000), (2_000_000, 300_000),
    ];
    let max = max_limbs();
    for &(un, vn) in shapes.iter().filter(|(un, _)| *un <= max) {
        for pattern in 0..3 {
            let a = operand(un, pattern, &mut rng);
            let b = -operand(vn, (pattern + 1) % 3, &mut rng);
            let want = Integer::from(&a * &b);
            let (ma, mb) = (to_mpz(api, &a), to_mpz(api, &b));
            let mut r = to_mpz(api, &Integer::new());
            unsafe { (api.mul)(&mut *r, &*ma, &*mb) };
            assert!(from_mpz(&r) == want, "MISMATCH: mpz_mul on the GPU, {un}x{vn} limbs, pattern {pattern}");
            // Squaring, aliased: rop = a = b.
            let mut sq = to_mpz(api, &a);
            unsafe { (api.mul)(&mut *sq, &*sq, &*sq) };
            assert!(from_mpz(&sq) == Integer::from(a.square_ref()), "MISMATCH: mpz_mul square on the GPU, {un} limbs");
            for mut m in [ma, mb, r, sq] {
                unsafe { (api.clear)(&mut *m) };
            }
            // Up to 10^6 limbs: the product then comes back through the
            // threaded pinned copies straight into the caller's limbs.
            if un <= 1_000_000 {
                let (u, v) = (a.as_limbs(), b.as_limbs());
                let mut got = vec![0u64; u.len() + v.len()];
                let top = unsafe { (api.mpn_mul)(got.as_mut_ptr(), u.as_ptr(), u.len() as i64, v.as_ptr(), v.len() as i64) };
                let want = Integer::from(a.abs_ref()) * Integer::from(b.abs_ref());
                let mut want_limbs = want.as_limbs().to_vec();
                want_limbs.resize(got.len(), 0);
                assert!(got == want_limbs && top == *want_limbs.last().unwrap(), "MISMATCH: mpn_mul on the GPU {un}x{vn}");
                let mut got = vec![0u64; 2 * u.len()];
                unsafe { (api.mpn_sqr)(got.as_mut_ptr(), u.as_ptr(), u.len() as i64) };
                let mut want_sq = Integer::from(a.square_ref()).as_limbs().to_vec();
                want_sq.resize(got.len(), 0);
                assert!(got == want_sq, "MISMATCH: mpn_sqr on the GPU {un}");
            }
        }
    }
    unsafe { (api.gpu_operations)() - before }
}

/// GMP's products mod B^rn - 1 (tests/common/mulmod.rs) under force: the
/// sizes GMP's algorithms get from mpn_mulmod_bnm1_next_size are GMP's own
/// below 2048 limbs (the products made whole and folded), from there
/// cyclic lengths (2 rn = 2^k, 3 * 2^k or 5 * 2^k: one convolution on the
/// GPU; 2500 limbs takes 2560, 5 * 2^9), and
/// the products match GMP's, whole and folded, cyclic (at those sizes) and
/// folded (at rn = n).
fn mulmod_sweep(api: &Api) -> u64 {
    let mut rng = RandState::new();
    let before = unsafe { (api.gpu_operations)() };
    let sizes: Vec<i64> = [17i64, 100, 1000, 2500, 5000, 70_000, 1_000_005].into_iter().filter(|&n| n <= max_limbs() as i64).collect();
    for (n, rn, gmp_rn) in common::mulmod::mulmod_sweep(api, &sizes, &mut rng) {
        // Under force GMP's internal products from 64 limbs go to the GPU.
        if n < common::mulmod::CYCLIC_FROM {
            assert_eq!(rn, gmp_rn, "mpn_mulmod_bnm1_next_size({n}) must be GMP's below the cyclic products' size");
        } else {
            assert!(common::mulmod::is_cyclic_size(rn), "mpn_mulmod_bnm1_next_size({n}) = {rn} (GMP's {gmp_rn}) is no cyclic length");
        }
    }
    unsafe { (api.gpu_operations)() - before }
}

/// Radix conversion both ways at 40,000 limbs, base 10 (the levels on the
/// device from 32,768 limbs): mpz_get_str's text and mpz_set_str's number
/// must be GMP's. Returns the GPU operations counted meanwhile (under an
/// injected fault: none, the host's levels and GMP's products instead).
fn radix_round_trip(api: &Api) -> u64 {
    let mut rng = RandState::new();
    let before = unsafe { (api.gpu_operations)() };
    let x = random_limbs(40_000, &mut rng);
    let want = reference_get_str(&x, 10).expect("GMP's digits");
    let mut m = to_mpz(api, &x);
    let s = unsafe { (api.get_str)(std::ptr::null_mut(), 10, &*m) };
    assert!(!s.is_null(), "mpz_get_str returned NULL");
    let text = unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned();
    unsafe { (*api.free_func)(s as *mut libc::c_void, text.len() + 1) };
    assert!(text == want, "MISMATCH: mpz_get_str base 10, 40,000 limbs");
    let c_text = std::ffi::CString::new(text).expect("digits have no NUL");
    assert_eq!(unsafe { (api.set_str)(&mut *m, c_text.as_ptr(), 10) }, 0, "mpz_set_str refused GMP's own digits");
    assert!(from_mpz(&m) == x, "MISMATCH: mpz_set_str base 10, 40,000 limbs");
    unsafe { (api.clear)(&mut *m) };
    unsafe { (api.gpu_operations)() - before }
}

/// `limbs` random limbs, the top bit set: two halves from random_bits, whose
/// bit count (a u32) cannot take 2^26 limbs at once.
fn random_limbs(limbs: usize, rng: &mut RandState) -> Integer {
    let low_bits = 64 * (limbs / 2) as u32;
    let high_bits = 64 * (limbs - limbs / 2) as u32;
    let low = Integer::from(Integer::random_bits(low_bits, rng));
    let mut high = Integer::from(Integer::random_bits(high_bits, rng));
    high.set_bit(high_bits - 1, true);
    (high << low_bits) + low
}

/// A balanced product past the longest transform (2^26 x 2^26 limbs: 2^27
/// limbs of product, one transform takes 3 * 2^24) runs on the GPU in
/// pieces (src/gpu/ntt/plan.rs, Plan::Pieces) and matches GMP's.
fn split_product(api: &Api) -> String {
    let n = 1usize << 26;
    if (max_limbs() as usize) < n {
        return format!("not run: CUGMP_TEST_MAX_LIMBS below {n}");
    }
    let mut rng = RandState::new();
    let (a, b) = (random_limbs(n, &mut rng), -random_limbs(n, &mut rng));
    let start = std::time::Instant::now();
    let want = Integer::from(&a * &b);
    let gmp_s = start.elapsed().as_secs_f64();
    let before = unsafe { (api.gpu_operations)() };
    let start = std::time::Instant::now();
    let got = mpz_product(api, &a, &b);
    let gpu_s = start.elapsed().as_secs_f64();
    assert!(got == want, "MISMATCH: mpz_mul on the GPU, {n}x{n} limbs (split)");
    assert_eq!(unsafe { (api.gpu_operations)() }, before + 1, "the {n}x{n} product did not run on the GPU");
    format!("{n}x{n} limbs right, on the GPU in {gpu_s:.2} s (GMP {gmp_s:.1} s)")
}

/// `CUGMP_GPU_MEM_LIMIT=32M`: products needing more device memory than that
/// are made from halves on the GPU (src/algorithms/product.rs,
/// `product_in_halves`), halved again while they do not fit, and match
/// GMP's: balanced, unbalanced, a square, negative.
fn beyond_device_memory(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut products = 0;
    for (an, bn) in [(1usize << 20, 1usize << 20), ((1 << 20) + 123, (1 << 19) - 7), (300_001, 1 << 21)] {
        let (a, b) = (random_limbs(an, &mut rng), -random_limbs(bn, &mut rng));
        let before = unsafe { (api.gpu_operations)() };
        assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: {an}x{bn} limbs made from halves");
        let made = unsafe { (api.gpu_operations)() } - before;
        assert!(made > 1, "{an}x{bn} limbs under CUGMP_GPU_MEM_LIMIT=32M: {made} GPU products (not split)");
        products += made;
    }
    let a = random_limbs(1 << 20, &mut rng);
    assert!(mpz_product(api, &a, &a) == Integer::from(&a * &a), "MISMATCH: a square of 2^20 limbs made from halves");
    format!("3 products and a square of up to 2^21 limbs right, from {products}+ products on the GPU")
}

/// `CUGMP_GPU_MEM_LIMIT=1M`: products that need more device memory than that
/// are right and come from the CPU; small ones still run on the GPU.
fn mem_limit(api: &Api) -> String {
    let mut rng = RandState::new();
    let ops = || unsafe { (api.gpu_operations)() };
    let mut product = |n: u32| {
        let (a, b) = (operand(n, 0, &mut rng), operand(n, 0, &mut rng));
        assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: {n}-limb product under CUGMP_GPU_MEM_LIMIT");
    };
    let fallbacks = || unsafe { (api.gpu_fallbacks)() };
    let refused = fallbacks();
    product(100_000);
    assert!(fallbacks() > refused, "a product needing more than CUGMP_GPU_MEM_LIMIT was not refused by the GPU");
    // GMP's own products inside the CPU's product, each under the limit,
    // may still reach the GPU through the hooks.
    let (before, refused) = (ops(), fallbacks());
    product(100);
    assert_eq!((ops(), fallbacks()), (before + 1, refused), "a small product under the limit did not run on the GPU");
    "100000-limb product refused by the GPU and made on the CPU, 100-limb product on the GPU".into()
}

/// `CUGMP_FAULT=gpu-lanes`: every product on lanes fails after the first
/// lane's kernels are queued, so its buffers are freed while they may still
/// run (`transforms_in_lanes`' `Unjoined` waits for them first). Each such
/// product must come from the CPU, equal to GMP's, and products past it
/// (on the GPU, below the lanes, reusing the freed memory at once) must be
/// right too. Run under compute-sanitizer memcheck, a kernel writing freed
/// memory shows as an error.
fn lanes_failure(api: &Api) -> String {
    let mut rng = RandState::new();
    let (ops, fallbacks) = (|| unsafe { (api.gpu_operations)() }, || unsafe { (api.gpu_fallbacks)() });
    let (mut failed, mut on_gpu) = (0, 0);
    // Products of 800,000 limbs and more take transforms of 2^20 points and
    // more on the wide sets (a limb a point): lanes (LANES_FROM, 3 * 2^18);
    // those of 200,000 limbs take 2^18 points: none.
    let cases = [(450_000u32, 450_000u32, false, true), (400_000, 400_000, true, true), (100_000, 100_000, false, false), (600_000, 500_000, false, true), (100_000, 90_000, false, false)];
    for &(un, vn, square, on_lanes) in &cases {
        for pattern in 0..2 {
            let a = operand(un, pattern, &mut rng);
            let b = if square { a.clone() } else { -operand(vn, pattern + 1, &mut rng) };
            let (before, refused) = (ops(), fallbacks());
            let got = if square {
                let mut sq = to_mpz(api, &a);
                unsafe { (api.mul)(&mut *sq, &*sq, &*sq) };
                let v = from_mpz(&sq);
                unsafe { (api.clear)(&mut *sq) };
                v
            } else {
                mpz_product(api, &a, &b)
            };
            assert!(got == Integer::from(&a * &b), "MISMATCH: {un}x{vn}-limb product (square {square}) under CUGMP_FAULT=gpu-lanes");
            if on_lanes {
                assert!(fallbacks() > refused, "a {un}x{vn}-limb product on lanes did not fail under CUGMP_FAULT=gpu-lanes");
                failed += 1;
            } else {
                assert_eq!((ops(), fallbacks()), (before + 1, refused), "a {un}x{vn}-limb product below the lanes did not run on the GPU");
                on_gpu += 1;
            }
        }
    }
    let queued = lanes_failure_pinned(api);
    format!("{failed} products on lanes failed part-way and came from the CPU, {on_gpu} below the lanes from the GPU, all equal to GMP's; {queued}")
}

/// The same failure where both operands lie in pinned blocks: their DMAs
/// are queued and not waited for (`Gpu::on_device`), so the failed product
/// must wait for them before the CPU computes the result, into one of the
/// operands in the last case. x and y (450,000 limbs, products below the
/// lanes on the GPU, in pool blocks once the pool has their size) make a
/// product on lanes.
fn lanes_failure_pinned(api: &Api) -> String {
    let mut rng = RandState::new();
    let (fallbacks, dma) = (|| unsafe { (api.gpu_fallbacks)() }, || unsafe { (api.pinned_transfers)() });
    let leaves: Vec<Integer> = (0..4).map(|k| operand(225_000, k % 3, &mut rng)).collect();
    let (wx, wy) = (Integer::from(&leaves[0] * &leaves[1]), Integer::from(&leaves[2] * &leaves[3]));
    let wz = Integer::from(&wx * &wy);
    let m: Vec<_> = leaves.iter().map(|l| to_mpz(api, l)).collect();
    let (mut x, mut y, mut z) = (to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
    let (mut queued_failures, mut checked) = (0, 0);
    for pass in 0..8 {
        unsafe {
            (api.mul)(&mut *x, &*m[0], &*m[1]);
            (api.mul)(&mut *y, &*m[2], &*m[3]);
        }
        assert!(from_mpz(&x) == wx && from_mpz(&y) == wy, "MISMATCH: 225,000-limb leaves' products, pass {pass}");
        let (refused, before) = (fallbacks(), dma());
        unsafe { (api.mul)(&mut *z, &*x, &*y) };
        let uploads = dma() - before;
        assert!(from_mpz(&z) == wz, "MISMATCH: a product on lanes of pinned operands under CUGMP_FAULT=gpu-lanes, pass {pass}");
        assert!(fallbacks() > refused, "a product on lanes did not fail under CUGMP_FAULT=gpu-lanes, pass {pass}");
        // Both operands by DMA alone: their uploads were queued unwaited.
        queued_failures += usize::from(uploads >= 2);
        let xr: *mut Mpz = &mut *x;
        unsafe { (api.mul)(xr, xr, &*y) };
        assert!(from_mpz(&x) == wz, "MISMATCH: x = x y on lanes under CUGMP_FAULT=gpu-lanes, pass {pass}");
        checked += 2;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(queued_failures > 0, "no failed product had both its operands' uploads queued from pinned blocks");
    for mut v in m.into_iter().chain([x, y, z]) {
        unsafe { (api.clear)(&mut *v) };
    }
    format!("{checked} products of pinned operands failed on lanes and came from the CPU, {queued_failures} with both uploads queued, all equal to GMP's")
}

/// Factorials and binomials whose ladders run on the device
/// (src/gpu/ladder.rs; under force from small sizes), each equal to GMP's.
/// The ladder's result comes down into the result's new limbs, a pinned
/// block once the pool keeps one of its size: then by one DMA. The host's
/// ladder makes its products into ordinary memory and no such transfer, so
/// a factorial of 2 MiB or more whose three passes made none did not take
/// the device's. (The first pass asks the pool for a block; the second
/// takes it; the third asks for another, the second's result still
/// holding the first.)
/// Under CUGMP_FAULT=gpu-launch every ladder fails and the host makes it
/// from the same numbers.
fn ladders(api: &Api) -> String {
    let faulty = std::env::var("CUGMP_FAULT").is_ok();
    let (fallbacks, dma) = (|| unsafe { (api.gpu_fallbacks)() }, || unsafe { (api.pinned_transfers)() });
    let mut r = to_mpz(api, &Integer::new());
    let mut report = Vec::new();
    for (n, k) in [(1_000_000u32, 0u32), (2_000_000, 0), (300_000, 0), (2_000_000, 1_000_000), (300_001, 77_777)] {
        let want = if k == 0 { Integer::from(Integer::factorial(n)) } else { Integer::from(Integer::binomial_u(n, k)) };
        let (mut moved, refused) = (0, fallbacks());
        for pass in 0..3 {
            let before = dma();
            unsafe {
                if k == 0 {
                    (api.fac_ui)(&mut *r, n.into());
                } else {
                    (api.bin_uiui)(&mut *r, n.into(), k.into());
                }
            }
            moved += dma() - before;
            assert!(from_mpz(&r) == want, "MISMATCH: {} pass {pass}", if k == 0 { format!("{n}!") } else { format!("C({n}, {k})") });
            // The pool's thread makes the block the first miss asked for.
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let bytes = want.significant_digits::<u64>() * 8;
        if faulty {
            assert!(fallbacks() > refused, "no ladder of {n}, {k} failed under CUGMP_FAULT=gpu-launch");
            assert_eq!(moved, 0, "a ladder under CUGMP_FAULT=gpu-launch still moved its result by DMA");
        } else if k == 0 && bytes >= 2 << 20 {
            assert!(moved >= 1, "{n}! ({bytes} bytes) came down by no DMA alone in three passes: its ladder was not the device's");
        }
        report.push(format!("{}: {moved} transfers by DMA alone in three passes", if k == 0 { format!("{n}!") } else { format!("C({n}, {k})") }));
    }
    unsafe { (api.clear)(&mut *r) };
    report.join("; ")
}

/// Products whose limbs the pool of pinned blocks holds (src/pinned.rs):
/// chains of products, each taking earlier ones as operands (into a result
/// with room, into an operand, negative), equal to GMP's every time; with
/// the pool on, the last pass's product of two pinned operands makes its
/// three transfers by DMA alone, and with `CUGMP_PINNED=0` none at all.
fn pinned_products(api: &Api) -> String {
    let on = std::env::var("CUGMP_PINNED").as_deref() != Ok("0");
    let mut rng = RandState::new();
    let (mut checked, mut last) = (0, 0);
    let dma = || unsafe { (api.pinned_transfers)() };
    let start = dma();
    for n in [150_000u32, 400_000] {
        let leaves: Vec<Integer> = (0..4).map(|k| operand(n, k % 3, &mut rng)).collect();
        let minus = Integer::from(-&leaves[1]);
        let (a, b, c, d) = (to_mpz(api, &leaves[0]), to_mpz(api, &minus), to_mpz(api, &leaves[2]), to_mpz(api, &leaves[3]));
        let (mut x, mut y, mut z) = (to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
        let (wx, wy) = (Integer::from(&leaves[0] * &minus), Integer::from(&leaves[2] * &leaves[3]));
        let wz = Integer::from(&wx * &wy);
        for pass in 0..8 {
            unsafe {
                (api.mul)(&mut *x, &*a, &*b);
                (api.mul)(&mut *y, &*c, &*d);
            }
            assert!(from_mpz(&x) == wx && from_mpz(&y) == wy, "MISMATCH: leaves' product of {n} limbs, pass {pass}");
            let before = dma();
            unsafe { (api.mul)(&mut *z, &*x, &*y) };
            last = dma() - before;
            assert!(from_mpz(&z) == wz, "MISMATCH: product of two products of {n} limbs, pass {pass}");
            // The result one of the operands, then a square of it.
            let xr: *mut Mpz = &mut *x;
            unsafe { (api.mul)(xr, xr, &*y) };
            assert!(from_mpz(&x) == wz, "MISMATCH: x = x y, {n} limbs, pass {pass}");
            unsafe { (api.mul)(&mut *z, &*y, &*y) };
            assert!(from_mpz(&z) == Integer::from(wy.square_ref()), "MISMATCH: y^2 of {n} limbs, pass {pass}");
            checked += 4;
            // The pool's thread makes the blocks the misses asked for.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for mut m in [a, b, c, d, x, y, z] {
            unsafe { (api.clear)(&mut *m) };
        }
    }
    let all = dma() - start;
    if on {
        assert!(last >= 3, "the last product of two pinned operands made {last} transfers by DMA alone, not its three");
    } else {
        assert_eq!(all, 0, "CUGMP_PINNED=0, yet {all} transfers went by DMA alone");
    }
    format!("{checked} products on pinned limbs equal to GMP's; {all} transfers by DMA alone ({last} in the last product of two products)")
}

/// The process uses the GPU, forks; the child computes (on the CPU engine:
/// the parent's context is not valid there) and must be right and not hang;
/// the parent goes on using the GPU.
fn fork_child(api: &Api) -> String {
    let mut rng = RandState::new();
    let (a, b) = (operand(20_000, 0, &mut rng), operand(20_000, 2, &mut rng));
    let want = Integer::from(&a * &b);
    let check = |what: &str| {
        let ok = mpz_product(api, &a, &b) == want;
        assert!(ok, "MISMATCH: product in the {what}");
    };
    let before = unsafe { (api.gpu_operations)() };
    check("parent before fork");
    assert_eq!(unsafe { (api.gpu_operations)() }, before + 1, "the parent's product did not run on the GPU");
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let start = unsafe { (api.gpu_operations)() };
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check("forked child"))).is_ok();
        let on_gpu = unsafe { (api.gpu_operations)() } - start;
        unsafe { libc::_exit(if ok && on_gpu == 0 { 0 } else { 1 }) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut status = 0;
    loop {
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if std::time::Instant::now() > deadline {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the forked child hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the forked child got a wrong result or used the GPU (status {status})");
    check("parent after fork");
    assert_eq!(unsafe { (api.gpu_operations)() }, before + 2, "the parent's product after fork did not run on the GPU");
    "child right on the CPU engine, parent still on the GPU".into()
}

/// GMP's own algorithms through the hooks (src/abi/hooks.rs): division,
/// square root, radix conversion both ways, factorials and binomials must
/// match GMP and must have put
/// products on the GPU (under force, GMP's internal products from 64 limbs).
fn hooks(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut report = Vec::new();
    for n in [20_000u32, 100_000] {
        let a = operand(2 * n, 0, &mut rng);
        let d = operand(n, 0, &mut rng);
        let (ma, md, mut q, mut r) = (to_mpz(api, &a), to_mpz(api, &d), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
        let ops = || unsafe { (api.gpu_operations)() };
        let before = ops();
        unsafe { (api.tdiv_qr)(&mut *q, &mut *r, &*ma, &*md) };
        let (wq, wr) = a.clone().div_rem(d.clone());
        assert!(from_mpz(&q) == wq && from_mpz(&r) == wr, "MISMATCH: mpz_tdiv_qr {}/{n} limbs", 2 * n);
        let div_ops = ops() - before;
        let before = ops();
        unsafe { (api.sqrt)(&mut *q, &*ma) };
        assert!(from_mpz(&q) == a.clone().sqrt(), "MISMATCH: mpz_sqrt {} limbs", 2 * n);
        let sqrt_ops = ops() - before;
        let before = ops();
        let s = unsafe { (api.get_str)(std::ptr::null_mut(), 10, &*md) };
        assert!(!s.is_null(), "mpz_get_str returned NULL");
        let text = unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned();
        unsafe { (*api.free_func)(s as *mut libc::c_void, text.len() + 1) };
        assert!(text == d.to_string(), "MISMATCH: mpz_get_str base 10, {n} limbs");
        let str_ops = ops() - before;
        let before = ops();
        let c_text = std::ffi::CString::new(text).expect("digits have no NUL");
        assert_eq!(unsafe { (api.set_str)(&mut *r, c_text.as_ptr(), 10) }, 0, "mpz_set_str refused GMP's own digits");
        assert!(from_mpz(&r) == d, "MISMATCH: mpz_set_str base 10, {n} limbs");
        let from_str_ops = ops() - before;
        // n! of about n limbs (n log2(n) / 64 bits).
        let fac_of = n * 4;
        let before = ops();
        unsafe { (api.fac_ui)(&mut *r, fac_of.into()) };
        assert!(from_mpz(&r) == Integer::from(Integer::factorial(fac_of)), "MISMATCH: mpz_fac_ui({fac_of})");
        let fac_ops = ops() - before;
        let before = ops();
        unsafe { (api.bin_uiui)(&mut *r, (2 * fac_of).into(), fac_of.into()) };
        assert!(from_mpz(&r) == Integer::from(Integer::binomial_u(2 * fac_of, fac_of)), "MISMATCH: mpz_bin_uiui({}, {fac_of})", 2 * fac_of);
        let bin_ops = ops() - before;
        assert!(
            div_ops > 0 && sqrt_ops > 0 && str_ops > 0 && from_str_ops > 0 && fac_ops > 0 && bin_ops > 0,
            "a GMP algorithm made no GPU product: division {div_ops}, sqrt {sqrt_ops}, get_str {str_ops}, set_str {from_str_ops}, fac_ui {fac_ops}, bin_uiui {bin_ops}"
        );
        report.push(format!(
            "{n} limbs: GPU products in tdiv_qr {div_ops}, sqrt {sqrt_ops}, get_str {str_ops}, set_str {from_str_ops}, fac_ui({fac_of}) {fac_ops}, bin_uiui({}, {fac_of}) {bin_ops}",
            2 * fac_of
        ));
        for mut m in [ma, md, q, r] {
            unsafe { (api.clear)(&mut *m) };
        }
    }
    report.join("; ")
}

/// Square roots from device-resident numbers (src/gpu/root.rs): N of
/// 2^13 limbs (where they start) and more, odd and even lengths, random,
/// all ones (remainder 2T), sparse, perfect squares and their neighbours,
/// low limbs all zeros; `mpz_sqrtrem` must match GMP, and the log must
/// show every one of these roots made on the device, remainder included
/// (a process of its own with CUGMP_LOG).
fn roots_on_device(_api: &Api) -> String {
    let (log, summary) = every_case_on_device("gpu_roots_sweep", "the root from device-resident numbers", "roots");
    let on_host = log.lines().filter(|l| l.contains("N - T^2 on the host")).count();
    assert!(on_host == 0, "{on_host} roots' remainders made again on the host\n{}", log_tail(&log));
    summary
}

/// Runs sweep `child` with CUGMP_LOG; every one of its cases (its stdout's
/// `cases=N`) must have logged `phrase`. Its log, and a summary line.
fn every_case_on_device(child: &str, phrase: &str, what: &str) -> (String, String) {
    let (ok, stdout, log) = logged_child(child, &[]);
    assert!(ok, "the {what} sweep failed: {stdout}\n{}", log_tail(&log));
    let on_device = log.lines().filter(|l| l.contains(phrase)).count();
    let cases: usize = stdout.split_whitespace().find_map(|w| w.strip_prefix("cases=")).and_then(|c| c.parse().ok()).unwrap_or(0);
    assert!(cases > 0 && on_device == cases, "{on_device} of {cases} {what} made on the device\n{}", log_tail(&log));
    let summary = format!("{on_device} {what} on the device, all equal to GMP's; {}", stdout.trim());
    (log, summary)
}

/// The body of `roots_on_device`.
fn roots_sweep(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut cases = 0;
    let max = max_limbs() as usize;
    for n in [1usize << 13, (1 << 13) + 1, 50_001, (1 << 17) + 2, (1 << 20) + 3, 6_250_008].into_iter().filter(|&n| n <= max) {
        let root = random_limbs(n.div_ceil(2), &mut rng);
        let square = Integer::from(root.square_ref());
        let mut numbers = vec![random_limbs(n, &mut rng), (Integer::from(1) << (64 * n as u32)) - 1u32, (Integer::from(1) << (64 * n as u32 - 1)) | 1u32];
        numbers.extend([square.clone(), Integer::from(&square - 1u32), Integer::from(&square + 1u32)]);
        // Low limbs all zeros, as mpf_sqrt_ui's: T^2's low limbs plus the
        // remainder carry into the limbs above them.
        numbers.push(Integer::from(10005) << (64 * (n as u32 - 1)));
        for (i, a) in numbers.iter().enumerate() {
            let (ma, mut s, mut r) = (to_mpz(api, a), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
            unsafe { (api.sqrtrem)(&mut *s, &mut *r, &*ma) };
            let (ws, wr) = a.clone().sqrt_rem(Integer::new());
            assert!(from_mpz(&s) == ws && from_mpz(&r) == wr, "MISMATCH: mpz_sqrtrem, {} limbs, case {i}", a.significant_digits::<u64>());
            for mut m in [ma, s, r] {
                unsafe { (api.clear)(&mut *m) };
            }
            cases += 1;
        }
    }
    format!("cases={cases}")
}

/// Radix conversion from digits with its levels joined on the device
/// (src/gpu/radix.rs): mpz_set_str of numbers from 33,000 limbs (the
/// device joins them from 32,768) to 10^7 digits, in bases 10, 3, 7, 36
/// and 62; random, base^k and its neighbours (runs of zeros and of the top
/// digit across every leaf's edge), all ones in binary, leading zeros and
/// a sign. Every value must be GMP's (rug's), and the log must show every
/// conversion's levels joined on the device (a process of its own with
/// CUGMP_LOG).
fn joins_on_device(_api: &Api) -> String {
    every_case_on_device("gpu_joins_sweep", "levels joined on the device", "conversions").1
}

/// Under CUGMP_FAULT=gpu-launch every join on the device fails (after
/// the room for its download into the mpz_t was taken) and the host joins
/// the same leaves: every value must be GMP's and every conversion's
/// failure logged (a process of its own with CUGMP_LOG).
fn join_failure(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_joins_sweep", &[("CUGMP_FAULT", "gpu-launch")]);
    assert!(ok, "the joins' sweep failed under CUGMP_FAULT=gpu-launch: {stdout}\n{}", log_tail(&log));
    let failed = log.lines().filter(|l| l.contains("GPU failed joining the levels")).count();
    let cases: usize = stdout.split_whitespace().find_map(|w| w.strip_prefix("cases=")).and_then(|c| c.parse().ok()).unwrap_or(0);
    assert!(cases > 0 && failed == cases, "{failed} of {cases} joins failed on the device under CUGMP_FAULT=gpu-launch\n{}", log_tail(&log));
    format!("{failed} joins failed on the device and were made on the host, all equal to GMP's; {}", stdout.trim())
}

/// Radix conversion's cases on the device, both ways: from 33,000 limbs
/// (where the device's levels start at 32,768) to 10^7 digits, bases 10,
/// 3, 7, 36 and 62 (10 alone from 10^5 limbs); random, base^k and its
/// neighbours, all ones in binary, a negative number. Calls `each(n, base,
/// case, x)` for each; returns the count.
fn radix_cases(mut each: impl FnMut(usize, i32, usize, &Integer)) -> usize {
    let mut rng = RandState::new();
    let mut cases = 0;
    let max = max_limbs() as usize;
    for n in [33_000usize, 40_000, 100_003, 520_000].into_iter().filter(|&n| n <= max) {
        let bases: &[i32] = if n >= 100_000 { &[10] } else { &[10, 3, 7, 36, 62] };
        for &base in bases {
            let bits = 64 * n as u32;
            let k = (f64::from(bits) / f64::from(base).log2()) as u32;
            let power = Integer::from(Integer::u_pow_u(base as u32, k));
            let numbers = [random_limbs(n, &mut rng), Integer::from(&power - 1u32), power.clone(), Integer::from(&power + 1u32), (Integer::from(1) << bits) - 1u32, -random_limbs(n, &mut rng)];
            for (i, x) in numbers.iter().enumerate() {
                each(n, base, i, x);
                cases += 1;
            }
        }
    }
    cases
}

/// The body of `joins_on_device`: each case's digits (the first with
/// leading zeros) read by mpz_set_str.
fn joins_sweep(api: &Api) -> String {
    let cases = radix_cases(|n, base, i, x| {
        let mut text = reference_get_str(x, base).expect("GMP's digits");
        if i == 0 {
            text.insert_str(0, "000000");
        }
        let c_text = std::ffi::CString::new(text).expect("digits have no NUL");
        let mut r = to_mpz(api, &Integer::new());
        assert_eq!(unsafe { (api.set_str)(&mut *r, c_text.as_ptr(), base) }, 0, "mpz_set_str refused GMP's own digits");
        assert!(from_mpz(&r) == *x, "MISMATCH: mpz_set_str base {base}, {n} limbs, case {i}");
        unsafe { (api.clear)(&mut *r) };
    });
    format!("cases={cases}")
}

/// Radix conversion to digits with its levels split on the device
/// (src/gpu/radix.rs): mpz_get_str of numbers from 33,000 limbs (the
/// device splits them from 32,768) to 10^7 digits, in bases 10, 3, 7, 36
/// and 62; random, base^k and its neighbours (runs of zeros and of the top
/// digit across every leaf's edge, remainders of P - 1 and quotients whose
/// low limbs are all ones), all ones in binary, a sign. Every text must be
/// GMP's (rug's), and the log must show every conversion's levels split on
/// the device (a process of its own with CUGMP_LOG).
fn splits_on_device(_api: &Api) -> String {
    every_case_on_device("gpu_splits_sweep", "levels split on the device", "conversions").1
}

/// The body of `splits_on_device`: each case written by mpz_get_str.
fn splits_sweep(api: &Api) -> String {
    let cases = radix_cases(|n, base, i, x| {
        let want = reference_get_str(x, base).expect("GMP's digits");
        let mut m = to_mpz(api, x);
        let s = unsafe { (api.get_str)(std::ptr::null_mut(), base, &*m) };
        assert!(!s.is_null(), "mpz_get_str returned NULL");
        let text = unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned();
        unsafe { (*api.free_func)(s as *mut libc::c_void, text.len() + 1) };
        assert!(text == want, "MISMATCH: mpz_get_str base {base}, {n} limbs, case {i}");
        unsafe { (api.clear)(&mut *m) };
    });
    format!("cases={cases}")
}

/// Quotients on device-resident numbers (src/algorithms/quotient.rs) in
/// a child with CUGMP_LOG: every one equal to GMP's (rug's) and made on
/// the device, as its log line says.
fn quotients_on_device(_api: &Api) -> String {
    every_case_on_device("gpu_quotients_sweep", "the quotient from device-resident numbers", "quotients").1
}

/// The body of `quotients_on_device`: mpz_tdiv_qr (GMP's mpn_tdiv_qr) and
/// mpz_tdiv_q (its mpn_div_q) of dividends and divisors from 64 limbs to
/// 2 x 10^6 by 10^6, quotients shorter and longer than the divisor; random,
/// all ones, a divisor just above a power of two (its inverse near 2),
/// dividends with zero low limbs (a power of two among them), exact
/// multiples and remainders of D - 1 (where a correction goes wrong),
/// negative operands.
fn quotients_sweep(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut cases = 0;
    let max = max_limbs() as usize;
    let shapes = [(200usize, 100usize), (130, 65), (16_385, 8192), (20_000, 12_000), (100_000, 60_000), (300_000, 100_000), (2_000_001, 1_000_000)];
    for (nn, dn) in shapes.into_iter().filter(|&(nn, _)| nn <= max) {
        let (n, d) = (random_limbs(nn, &mut rng), random_limbs(dn, &mut rng));
        let q = random_limbs(nn - dn, &mut rng);
        let ones = |limbs: usize| (Integer::from(1) << (64 * limbs as u32)) - 1u32;
        let power = (Integer::from(1) << (64 * dn as u32 - 1)) + 1u32;
        let multiple = Integer::from(&q * &d);
        let low_zeros = Integer::from(&n >> (64 * dn as u32)) << (64 * dn as u32);
        let pairs = [
            (n.clone(), d.clone()),
            // Low limbs all zeros, as mpf_div's dividends: Q D's low limbs
            // plus the remainder carry into the limbs above them.
            (low_zeros, d.clone()),
            (Integer::from(1) << (64 * nn as u32 - 1), d.clone()),
            (ones(nn), ones(dn)),
            (n.clone(), power),
            (multiple.clone(), d.clone()),
            (multiple + &d - 1u32, d.clone()),
            (-n, d),
        ];
        for (i, (a, b)) in pairs.iter().enumerate() {
            let (ma, mb) = (to_mpz(api, a), to_mpz(api, b));
            let (mut q, mut r, mut q_alone) = (to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
            unsafe {
                (api.tdiv_qr)(&mut *q, &mut *r, &*ma, &*mb);
                (api.tdiv_q)(&mut *q_alone, &*ma, &*mb);
            }
            let (wq, wr) = a.clone().div_rem(b.clone());
            assert!(from_mpz(&q) == wq && from_mpz(&r) == wr, "MISMATCH: mpz_tdiv_qr {nn}/{dn} limbs, case {i}");
            assert!(from_mpz(&q_alone) == wq, "MISMATCH: mpz_tdiv_q {nn}/{dn} limbs, case {i}");
            for mut m in [ma, mb, q, r, q_alone] {
                unsafe { (api.clear)(&mut *m) };
            }
            cases += 2;
        }
    }
    format!("cases={cases}")
}

/// CUGMP_FORCE_MIN_LIMBS=16 (the device runs of GMP's own test suites use
/// it): under force, products below 16 limbs stay on the CPU, those from 16
/// go to the GPU, and both are exact.
fn force_min(api: &Api) -> String {
    let mut rng = RandState::new();
    let ops = || unsafe { (api.gpu_operations)() };
    let mut counts = Vec::new();
    for n in [1u32, 15, 16, 64] {
        let (a, b) = (random_limbs(n as usize, &mut rng), random_limbs(n as usize, &mut rng));
        let before = ops();
        assert!(mpz_product(api, &a, &b) == a.clone() * &b, "MISMATCH: mpz_mul {n} limbs");
        counts.push(ops() - before);
    }
    assert_eq!(counts, [0, 0, 1, 1], "GPU products at 1, 15, 16, 64 limbs under CUGMP_FORCE_MIN_LIMBS=16");
    "1 and 15 limbs on the CPU, 16 and 64 on the GPU".into()
}

/// The process's first product, of two random numbers of `limbs` limbs:
/// its time and GMP's (rug's) for the same product, which it must equal.
fn first_product(api: &Api, limbs: usize, rng: &mut RandState) -> (f64, f64) {
    let (a, b) = (random_limbs(limbs, rng), random_limbs(limbs, rng));
    let start = std::time::Instant::now();
    let first = mpz_product(api, &a, &b);
    let first_s = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let want = Integer::from(&a * &b);
    let gmp_s = start.elapsed().as_secs_f64();
    assert!(first == want, "MISMATCH: the first product");
    (first_s, gmp_s)
}

/// Under CUGMP_GPU=auto the first operation that wants the GPU does not
/// wait for the device's opening (driver, context, module): it runs on the
/// CPU, in about GMP's time, while a thread opens the device; products after
/// that reach the GPU.
fn opens_beside(api: &Api) -> String {
    let mut rng = RandState::new();
    let (first_s, gmp_s) = first_product(api, 1_000_000, &mut rng);
    let ops = || unsafe { (api.gpu_operations)() };
    assert_eq!(ops(), 0, "the first product waited for the device and ran on it");
    assert!(first_s < gmp_s + 0.1, "the first product took {first_s:.3} s, GMP {gmp_s:.3} s: it waited for the device");
    let (c, d) = (random_limbs(100_000, &mut rng), random_limbs(100_000, &mut rng));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut products = 0;
    while ops() == 0 {
        assert!(std::time::Instant::now() < deadline, "no product reached the GPU within 60 s of the first");
        assert!(mpz_product(api, &c, &d) == Integer::from(&c * &d), "MISMATCH: a product while the device opened");
        products += 1;
    }
    format!("first product {first_s:.3} s on the CPU (GMP {gmp_s:.3} s); the GPU took over after {products} more")
}

/// Under CUGMP_GPU=auto a first operation of several openings' work on the
/// CPU (src/algorithms/route.rs, `engine`) waits for the device instead:
/// a product of 2^22 x 2^22 limbs as a process's first runs on the GPU,
/// opening included faster than GMP's.
fn waits_for_opening(api: &Api) -> String {
    let (first_s, gmp_s) = first_product(api, 1 << 22, &mut RandState::new());
    // One GPU product, or its halves where the other tests hold the
    // device's memory.
    assert!(unsafe { (api.gpu_operations)() } > 0, "the first product did not wait for the device");
    assert!(first_s < gmp_s, "the first product took {first_s:.3} s with the opening, GMP {gmp_s:.3} s");
    format!("first product {first_s:.3} s with the device's opening (GMP {gmp_s:.3} s)")
}

/// Device memory free now, from this process's own view of the device (the
/// library's context is the device's primary context, which this shares).
fn device_free() -> usize {
    let ctx = cudarc::driver::CudaContext::new(0).expect("CUDA context for the test");
    // A context-wide synchronize also hands memory that stream-ordered frees
    // returned to the allocation pool back to the device (release threshold 0).
    ctx.synchronize().expect("cuCtxSynchronize");
    ctx.mem_get_info().expect("cuMemGetInfo").0
}

/// Resident host memory of this process, bytes (/proc/self/statm).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
}

/// `--hog`: another process that takes all but 256 MiB of the device's free
/// memory, says how much on its first line, and holds it until its stdin closes.
fn hog() {
    use cudarc::driver::result;
    let ctx = cudarc::driver::CudaContext::new(0).expect("CUDA context for the hog");
    ctx.bind_to_thread().expect("bind the hog's context");
    // Plain cuMemAlloc: backed at once, outside any stream-ordered pool.
    let mut held = Vec::new();
    let keep_free = 256usize << 20;
    for chunk in [1usize << 30, 1 << 28, 1 << 26] {
        while result::mem_get_info().map(|(free, _)| free > keep_free + chunk).unwrap_or(false) {
            match unsafe { result::malloc_sync(chunk) } {
                Ok(p) => held.push((p, chunk)),
                Err(e) => {
                    eprintln!("hog: cuMemAlloc of {chunk} bytes failed: {e:?}");
                    break;
                }
            }
        }
    }
    let total: usize = held.iter().map(|h| h.1).sum();
    println!("held {} MiB, {} MiB left free", total >> 20, result::mem_get_info().map(|(f, _)| f >> 20).unwrap_or(0));
    let mut sink = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut sink);
    for (p, _) in held {
        let _ = unsafe { result::free_sync(p) };
    }
}

/// Another process holds all but 256 MiB of the device: products too big for
/// what is left must still be right (the library falls back to the CPU), and
/// once the memory is released the same products run on the GPU again.
fn memory_held_elsewhere(api: &Api) -> String {
    use std::io::BufRead;
    let mut hog = Command::new(std::env::current_exe().unwrap())
        .arg("--hog")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the hog");
    let mut line = String::new();
    std::io::BufReader::new(hog.stdout.take().expect("hog stdout")).read_line(&mut line).expect("hog's report");
    assert!(line.starts_with("held ") && !line.starts_with("held 0 "), "the hog did not take the device's memory: {line:?}");
    let mut rng = RandState::new();
    // Per phase: GPU attempts finished on the CPU. GMP's own products inside
    // a fallen-back product may still reach the GPU through the hooks, so
    // the count of GPU operations says less than the count of fallbacks.
    let mut products = |sizes: &[u32]| -> u64 {
        let before = unsafe { (api.gpu_fallbacks)() };
        for &n in sizes {
            let (a, b) = (operand(n, 0, &mut rng), operand(n, 1, &mut rng));
            assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: {n}-limb product with the device's memory held elsewhere");
        }
        unsafe { (api.gpu_fallbacks)() - before }
    };
    let sizes = [1_000, 100_000, 1_000_000, 4_000_000];
    let held = products(&sizes);
    drop(hog.stdin.take());
    let _ = hog.wait();
    let released = products(&sizes);
    assert!(held > 0, "with the device's memory held elsewhere ({}) no product fell back: the test proved nothing", line.trim());
    assert_eq!(released, 0, "after the memory was released, products still fell back to the CPU");
    format!("hog: {}; {held} GPU attempts fell back to the CPU while held, every result right; none after release", line.trim())
}

/// Threads on their own variables, mixed GPU-sized products, adds and logic,
/// every result checked against GMP, for CUGMP_STRESS_SECONDS (default 20)
/// per thread count; throughput in operations per second for each count.
fn threads(api: &Api) -> String {
    let seconds: u64 = std::env::var("CUGMP_STRESS_SECONDS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let mut report = Vec::new();
    let gpu_before = unsafe { (api.gpu_operations)() };
    // One small product first: the small products' slots share one device
    // allocation, made with the first slot and kept for the life of the
    // context (84 MiB), which the baseline includes.
    {
        let mut rng = RandState::new();
        let (a, b) = (operand(2048, 0, &mut rng), operand(2048, 1, &mut rng));
        let (ma, mb, mut r) = (to_mpz(api, &a), to_mpz(api, &b), to_mpz(api, &Integer::new()));
        unsafe { (api.mul)(&mut *r, &*ma, &*mb) };
        assert!(from_mpz(&r) == Integer::from(&a * &b), "MISMATCH: the first small product");
        for mut m in [ma, mb, r] {
            unsafe { (api.clear)(&mut *m) };
        }
    }
    let (device_before, host_before) = (device_free(), resident_bytes());
    for count in [1usize, 4, 16, 64] {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        let done: u64 = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..count)
                .map(|t| {
                    scope.spawn(move || {
                        let mut rng = RandState::new();
                        rng.seed(&Integer::from(t as u64 * 7919 + count as u64));
                        let mut ops = 0u64;
                        while std::time::Instant::now() < deadline {
                            let kind = rng.bits(2);
                            let n = 4096 + rng.bits(14);
                            let a = operand(n, rng.bits(1), &mut rng);
                            let b = -operand(n / (1 + rng.bits(3)), 0, &mut rng);
                            let (op, want): (Bin, Integer) = match kind {
                                0 | 1 => (api.mul, Integer::from(&a * &b)),
                                2 => (api.add, Integer::from(&a + &b)),
                                _ => (api.and, Integer::from(&a & &b)),
                            };
                            let (ma, mb, mut r) = (to_mpz(api, &a), to_mpz(api, &b), to_mpz(api, &Integer::new()));
                            unsafe { op(&mut *r, &*ma, &*mb) };
                            assert!(from_mpz(&r) == want, "MISMATCH: thread {t} of {count}, kind {kind}, {n} limbs");
                            for mut m in [ma, mb, r] {
                                unsafe { (api.clear)(&mut *m) };
                            }
                            ops += 1;
                        }
                        ops
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().expect("a worker thread panicked")).sum()
        });
        report.push(format!("{count} threads: {done} ops checked, {:.0} ops/s", done as f64 / seconds as f64));
    }
    let on_gpu = unsafe { (api.gpu_operations)() } - gpu_before;
    assert!(on_gpu > 0, "no threaded operation ran on the GPU");
    // Back to baseline: the device memory free again within 128 MiB (the
    // add/sub scan state, the driver's own allocations and the small
    // products' launch graphs may stay: up to 16 slots keep a graph for each
    // transform length they met, products and squares apart, up to 62 a
    // slot; 32 to 68 MiB stayed in five runs of this test), the process's
    // resident memory within 256 MiB (the allocator keeps some).
    let (device_after, host_after) = (device_free(), resident_bytes());
    let device_kept = device_before.saturating_sub(device_after);
    let host_grew = host_after.saturating_sub(host_before);
    assert!(device_kept <= 128 << 20, "device memory not back to baseline: {} MiB still taken", device_kept >> 20);
    assert!(host_grew <= 256 << 20, "host memory not back to baseline: grew {} MiB", host_grew >> 20);
    format!(
        "{}; {on_gpu} on the GPU; device memory afterwards {} MiB below baseline, host resident {} MiB above",
        report.join("; "),
        device_kept >> 20,
        host_grew >> 20
    )
}

/// The transform lengths small products' graphs take (src/gpu/ntt/small.rs:
/// 2^k and 3 * 2^k points up to 2^17; a product of two limbs takes 4).
fn small_lengths() -> Vec<usize> {
    let mut lengths: Vec<usize> = (2..=17).map(|k| 1usize << k).chain((1..=15).map(|k| 3usize << k)).filter(|&l| l <= 1 << 17).collect();
    lengths.sort_unstable();
    lengths
}

/// Small products through their launch graphs, in processes of their own
/// with CUGMP_LOG: by transforms alone (CUGMP_GPU_SCHOOLBOOK=0), every
/// length's graph recorded (products and squares); by columns wherever
/// they may (up to 2^14 limbs in all), every class's graph recorded; every
/// result equal to GMP's.
fn small_products(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_small_sweep", &[("CUGMP_GPU_SCHOOLBOOK", "0")]);
    assert!(ok, "the small products' sweep by transforms failed: {stdout}\n{}", log_tail(&log));
    assert!(!log.contains("by columns for"), "a product by columns where CUGMP_GPU_SCHOOLBOOK=0\n{}", log_tail(&log));
    for points in small_lengths() {
        // No square takes 6 points: a square of one limb takes 4, of two 8.
        let kinds: &[&str] = if points == 6 { &[" points\n"] } else { &[" points\n", " points, squares\n"] };
        for kind in kinds {
            let phrase = format!("a graph for {points}{kind}");
            assert!(log.contains(&phrase), "no graph recorded for {points} points ({kind:?})\n{}", log_tail(&log));
        }
    }
    let (ok, by_columns, log) = logged_child("gpu_small_sweep", &[("CUGMP_GPU_SCHOOLBOOK", "65536")]);
    assert!(ok, "the small products' sweep by columns failed: {by_columns}\n{}", log_tail(&log));
    for class in (8..=14).map(|k| 1usize << k) {
        for kind in [" limbs\n", " limbs, squares\n"] {
            let phrase = format!("a graph by columns for {class}{kind}");
            assert!(log.contains(&phrase), "no graph by columns recorded for {class} limbs ({kind:?})\n{}", log_tail(&log));
        }
    }
    format!("graphs for every length from 4 to 2^17 points, {}; by columns for every class from 2^8 to 2^14 limbs, {}", stdout.trim(), by_columns.trim())
}

/// The body of `small_products`: for every length, products of its most
/// and its least limbs (balanced, one limb against the rest, squared and
/// aliased), the longest first and then the shortest first, so that short
/// operands land in a slot's regions a longer one filled; on four threads
/// at once, so that several slots are made and shared.
fn small_sweep(api: &Api) -> String {
    let lengths = small_lengths();
    // Product limbs: each length's most (len / 2) and least (the length
    // before's most plus one).
    let mut totals: Vec<usize> = lengths.iter().map(|l| l / 2).chain(lengths.windows(2).map(|w| w[0] / 2 + 1)).filter(|&n| n >= 2).collect();
    totals.sort_unstable();
    totals.dedup();
    let order: Vec<usize> = totals.iter().rev().chain(totals.iter()).copied().collect();
    let cases: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let order = &order;
                scope.spawn(move || {
                    let mut rng = RandState::new();
                    rng.seed(&Integer::from(t * 104_729 + 1));
                    let mut cases = 0;
                    for &n in order {
                        let (half, pattern) = ((n / 2) as u32, (n % 3) as u32);
                        for (un, vn) in [(n as u32 - half, half), (n as u32 - 1, 1)] {
                            let a = operand(un, pattern, &mut rng);
                            let b = -operand(vn, (pattern + 1) % 3, &mut rng);
                            assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: small mpz_mul, {un}x{vn} limbs, thread {t}");
                            cases += 1;
                        }
                        if n % 2 == 0 {
                            let a = operand(half, pattern, &mut rng);
                            let mut sq = to_mpz(api, &a);
                            unsafe { (api.mul)(&mut *sq, &*sq, &*sq) };
                            assert!(from_mpz(&sq) == Integer::from(a.square_ref()), "MISMATCH: small square, {half} limbs, thread {t}");
                            unsafe { (api.clear)(&mut *sq) };
                            cases += 1;
                        }
                    }
                    cases
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a worker thread panicked")).sum()
    });
    format!("{cases} small products and squares on 4 threads, product sizes {} to {} limbs", totals[0], totals[totals.len() - 1])
}

/// A half-gcd step's products made at once on the device
/// (src/algorithms/hgcd.rs, `step_products`), in a process of their own
/// with CUGMP_LOG, whose log shows steps of four products (an adjustment)
/// and of eight (a matrix product) made so; every gcd, gcdext and inverse
/// equal to GMP's.
fn hgcd_steps(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_hgcd_steps_sweep", &[]);
    assert!(ok, "the half-gcd steps' sweep failed: {stdout}\n{}", log_tail(&log));
    let at_once = |k: usize| log.lines().filter(|l| l.contains("half-gcd step's products: ") && l.contains(&format!(": {k} products of"))).count();
    let (fours, eights) = (at_once(4), at_once(8));
    assert!(fours > 0 && eights > 0, "the half-gcd steps' products were not made at once on the device: {fours} adjustments, {eights} matrix products\n{}", log_tail(&log));
    format!("{fours} adjustments and {eights} matrix products at once on the device; {}", stdout.trim())
}

/// The body of `hgcd_steps`: gcd, gcdext and invert of random numbers and
/// of numbers with a common factor (the reduction ends early), 3000 to
/// 60,000 limbs, one operand negative, results against GMP's.
fn hgcd_steps_sweep(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut cases = 0;
    for (an, bn) in [(3000u32, 3000u32), (20_000, 19_000), (60_000, 60_000)] {
        for common in [false, true] {
            let (mut a, mut b) = (operand(an, 0, &mut rng), -operand(bn, 0, &mut rng));
            if common {
                let f = operand(an / 3, 0, &mut rng);
                a *= &f;
                b *= &f;
            }
            let (ma, mb) = (to_mpz(api, &a), to_mpz(api, &b));
            let (mut g, mut s, mut t) = (to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
            unsafe { (api.gcd)(&mut *g, &*ma, &*mb) };
            let want = Integer::from(a.gcd_ref(&b));
            assert!(from_mpz(&g) == want, "MISMATCH: mpz_gcd {an}x{bn} limbs, common factor {common}");
            unsafe { (api.gcdext)(&mut *g, &mut *s, &mut *t, &*ma, &*mb) };
            let (wg, ws, wt) = a.clone().extended_gcd(b.clone(), Integer::new());
            assert!(from_mpz(&g) == wg && from_mpz(&s) == ws && from_mpz(&t) == wt, "MISMATCH: mpz_gcdext {an}x{bn} limbs, common factor {common}");
            let modulus = Integer::from(b.abs_ref());
            let invertible = unsafe { (api.invert)(&mut *g, &*ma, &*mb) } != 0;
            let want = a.clone().invert(&modulus).ok();
            assert!(invertible == want.is_some() && want.is_none_or(|w| from_mpz(&g) == w), "MISMATCH: mpz_invert {an}x{bn} limbs, common factor {common}");
            for mut m in [ma, mb, g, s, t] {
                unsafe { (api.clear)(&mut *m) };
            }
            cases += 3;
        }
    }
    format!("{cases} gcds, gcdexts and inverses of 3000 to 60,000 limbs")
}

/// Products by the second engine (CUGMP_PRODUCT=gfp): the product sweep
/// and GMP's algorithms through the hooks, in a process of their own with
/// CUGMP_LOG, whose log shows that the engine took the products.
fn gfp_engine(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_gfp_sweep", &[("CUGMP_PRODUCT", "gfp")]);
    assert!(ok, "the sweep failed under CUGMP_PRODUCT=gfp: {stdout}\n{}", log_tail(&log));
    let by_gfp = log.lines().filter(|l| l.contains("generalized Fermat prime")).count();
    assert!(by_gfp > 0, "no product ran on the generalized-Fermat-prime engine");
    format!("{by_gfp} products by the generalized-Fermat-prime FFT; {}", stdout.trim())
}

/// Products by pieces (src/gpu/ntt/plan.rs, `Plan::Pieces`), which the NTT
/// takes past its longest transform, here with pieces of 3000 limbs
/// (CUGMP_NTT_PIECE), in a process of their own with CUGMP_LOG, whose log
/// shows the plan taken.
fn pieces_engine(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_pieces_sweep", &[("CUGMP_NTT_PIECE", "3000")]);
    assert!(ok, "the products by pieces failed: {stdout}\n{}", log_tail(&log));
    let from_host = log.lines().filter(|l| l.contains("pieces of 3000 limbs from host memory")).count();
    let on_device = log.lines().filter(|l| l.contains("pieces of 3000 limbs, transforms")).count();
    assert!(from_host > 0, "no product from host limbs ran by pieces under CUGMP_NTT_PIECE=3000");
    assert!(on_device > 0, "no product of device-resident numbers ran by pieces under CUGMP_NTT_PIECE=3000");
    format!("{from_host} products from host limbs and {on_device} of device-resident numbers by pieces; {}", stdout.trim())
}

/// The body of `pieces_engine`: sums of more than the eight products a sum
/// takes (34 pieces a side), squares (a product of two pieces counted
/// twice), unbalanced operands, last pieces of one limb, all-ones
/// operands, signs and aliasing, through mpz_mul, mpn_mul and mpn_sqr
/// (from host limbs), and square roots and quotients, whose products are
/// of device-resident numbers;
/// every product over the small products' 2^16 limbs, which never go by
/// pieces (src/gpu/ntt/small.rs). CUGMP_TEST_MAX_LIMBS bounds the longer
/// operand (at 65,536 two cases stay, sums of up to 21 products among them).
fn pieces_sweep(api: &Api) -> String {
    let mut rng = RandState::new();
    let mut cases = 0;
    for (an, bn) in [(100_000u32, 100_000u32), (60_001, 60_001), (77_777, 3_001), (36_001, 33_001)].into_iter().filter(|&(an, _)| an <= max_limbs()) {
        for pattern in 0..2 {
            let a = operand(an, pattern, &mut rng);
            let b = -operand(bn, pattern, &mut rng);
            assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: {an}x{bn} limbs by pieces, pattern {pattern}");
            // A square, aliased: rop = a = b.
            let mut sq = to_mpz(api, &a);
            unsafe { (api.mul)(&mut *sq, &*sq, &*sq) };
            assert!(from_mpz(&sq) == Integer::from(a.square_ref()), "MISMATCH: a square of {an} limbs by pieces, pattern {pattern}");
            unsafe { (api.clear)(&mut *sq) };
            let (u, v) = (a.as_limbs(), b.as_limbs());
            let mut got = vec![0u64; u.len() + v.len()];
            unsafe { (api.mpn_mul)(got.as_mut_ptr(), u.as_ptr(), u.len() as i64, v.as_ptr(), v.len() as i64) };
            let mut want = (Integer::from(a.abs_ref()) * Integer::from(b.abs_ref())).as_limbs().to_vec();
            want.resize(got.len(), 0);
            assert!(got == want, "MISMATCH: mpn_mul {an}x{bn} by pieces, pattern {pattern}");
            let mut got = vec![0u64; 2 * u.len()];
            unsafe { (api.mpn_sqr)(got.as_mut_ptr(), u.as_ptr(), u.len() as i64) };
            let mut want = Integer::from(a.square_ref()).as_limbs().to_vec();
            want.resize(got.len(), 0);
            assert!(got == want, "MISMATCH: mpn_sqr of {an} limbs by pieces, pattern {pattern}");
            cases += 4;
        }
    }
    // Square roots and quotients on device-resident numbers (src/gpu/root.rs,
    // src/gpu/quotient.rs): their products by pieces from device memory.
    for n in [20_000u32, 50_001].into_iter().filter(|&n| n <= max_limbs()) {
        let a = operand(n, 0, &mut rng);
        let (ma, mut sq, mut rem) = (to_mpz(api, &a), to_mpz(api, &Integer::new()), to_mpz(api, &Integer::new()));
        unsafe { (api.sqrtrem)(&mut *sq, &mut *rem, &*ma) };
        let (ws, wr) = a.clone().sqrt_rem(Integer::new());
        assert!(from_mpz(&sq) == ws && from_mpz(&rem) == wr, "MISMATCH: mpz_sqrtrem of {n} limbs with products by pieces");
        let d = operand(n * 3 / 5, 0, &mut rng);
        let md = to_mpz(api, &d);
        unsafe { (api.tdiv_qr)(&mut *sq, &mut *rem, &*ma, &*md) };
        let (wq, wr) = a.clone().div_rem(d.clone());
        assert!(from_mpz(&sq) == wq && from_mpz(&rem) == wr, "MISMATCH: mpz_tdiv_qr {n} / {} limbs with products by pieces", n * 3 / 5);
        for mut m in [ma, md, sq, rem] {
            unsafe { (api.clear)(&mut *m) };
        }
        cases += 2;
    }
    format!("{cases} products, squares, roots and quotients of up to {} limbs right", max_limbs().min(100_000))
}

/// This binary's child test `name` run with `env` and CUGMP_LOG: whether it
/// passed, its output, its log (stderr).
fn logged_child(name: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.args(["--child", name]).env("CUGMP_LOG", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A log's last 20 lines, for a failure's message.
fn log_tail(log: &str) -> String {
    let mut tail: Vec<&str> = log.lines().rev().take(20).collect();
    tail.reverse();
    tail.join("\n")
}

fn gfp_sweep(api: &Api) -> String {
    format!("{} GPU operations in the product sweep; hooks: {}", mul_sweep(api), hooks(api))
}

/// Products shared among the devices (src/algorithms/product.rs,
/// `product_over_devices`), which takes the products one device cannot
/// hold: under `CUGMP_GPU_MEM_LIMIT=32M` here, products from about 2^17
/// limbs. The product sweep, the cases below and threads spread over the
/// devices, in a process of their own with CUGMP_LOG, whose log shows the
/// devices opened and the products shared. Skipped (exit 3) where fewer
/// than two devices open.
fn devices_engine(_api: &Api) -> String {
    let (ok, stdout, log) = logged_child("gpu_devices_sweep", &[("CUGMP_GPU_MEM_LIMIT", "32M")]);
    let opened = log.lines().filter(|l| l.starts_with("cugmp: GPU ") && l.contains("kernels loaded")).count();
    if opened < 2 {
        println!("{opened} device(s) opened: a product has no second device to share");
        std::process::exit(SKIPPED);
    }
    assert!(ok, "the sweep failed over {opened} devices: {stdout}\n{}", log_tail(&log));
    let shared = log.lines().filter(|l| l.contains("shared among")).count();
    assert!(shared > 0, "no product was shared among the devices");
    format!("{opened} devices, {shared} products shared among them; {}", stdout.trim())
}

/// The body of `devices_engine`: the sweep, products cut unevenly, a
/// square, and 8 threads at once (their products on both devices).
fn devices_sweep(api: &Api) -> String {
    let on_gpu = mul_sweep(api);
    let mut rng = RandState::new();
    for (an, bn) in [((1usize << 17) + 1, 1usize << 17), ((1 << 17) + 123, (1 << 16) - 7), (70_001, 1 << 18), (1 << 16, 1)] {
        let (a, b) = (random_limbs(an, &mut rng), -random_limbs(bn, &mut rng));
        assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: {an}x{bn} limbs over the devices");
    }
    let a = random_limbs(3 << 16, &mut rng);
    assert!(mpz_product(api, &a, &a) == Integer::from(a.square_ref()), "MISMATCH: a square of 3 * 2^16 limbs over the devices");
    let checked: usize = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8u64)
            .map(|t| {
                scope.spawn(move || {
                    let mut rng = RandState::new();
                    rng.seed(&Integer::from(t * 7919 + 1));
                    for k in 0..6 {
                        let n = if k == 0 { 1 << 17 } else { 2048 + rng.bits(14) as usize };
                        let (a, b) = (random_limbs(n, &mut rng), -random_limbs(n / 2 + 1, &mut rng));
                        assert!(mpz_product(api, &a, &b) == Integer::from(&a * &b), "MISMATCH: thread {t}, {n} limbs");
                    }
                    6
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a worker thread panicked")).sum()
    });
    format!("{on_gpu} GPU operations in the product sweep; {checked} products from 8 threads right")
}

/// A child's exit status for a test it could not run here.
const SKIPPED: i32 = 3;

/// The tests; each runs in its own child process with its own environment.
const TESTS: &[(&str, &[(&str, &str)])] = &[
    ("gpu_mem_limit_falls_back", &[("CUGMP_GPU_MEM_LIMIT", "1M")]),
    ("gpu_products_beyond_device_memory", &[("CUGMP_GPU_MEM_LIMIT", "32M")]),
    ("gpu_fork_child_computes", &[]),
    ("gpu_pinned_products_match_gmp", &[]),
    ("gpu_pinned_off_stages", &[("CUGMP_PINNED", "0")]),
    ("gpu_matches_gmp", &[]),
    ("gpu_gfp_matches_gmp", &[]),
    ("gpu_pieces_match_gmp", &[]),
    ("gpu_small_products_match_gmp", &[]),
    ("gpu_hgcd_steps_match_gmp", &[]),
    ("gpu_devices_match_gmp", &[]),
    // The fallback does not depend on size: these stop at 2^20 limbs.
    ("gpu_oom_falls_back_to_cpu", &[("CUGMP_FAULT", "gpu-oom"), ("CUGMP_TEST_MAX_LIMBS", "1048576")]),
    ("gpu_launch_failure_falls_back_to_cpu", &[("CUGMP_FAULT", "gpu-launch"), ("CUGMP_TEST_MAX_LIMBS", "1048576")]),
    ("gpu_lanes_failure_falls_back_to_cpu", &[("CUGMP_FAULT", "gpu-lanes")]),
    ("gpu_ladders_match_gmp", &[]),
    ("gpu_ladder_failure_falls_back", &[("CUGMP_FAULT", "gpu-launch")]),
    ("gpu_ladders_checked", &[("CUGMP_CHECK", "1")]),
    ("gpu_check_mode_passes", &[("CUGMP_CHECK", "1")]),
    ("gpu_hooks_match_gmp", &[]),
    ("gpu_roots_match_gmp", &[]),
    ("gpu_quotients_match_gmp", &[]),
    ("gpu_joins_match_gmp", &[]),
    ("gpu_join_failure_falls_back", &[("CUGMP_FAULT", "gpu-launch")]),
    ("gpu_splits_match_gmp", &[]),
    // One device's plan in pieces: with several devices, this product
    // would be shared among them.
    ("gpu_split_product_matches_gmp", &[("CUGMP_GPUS", "1")]),
    ("gpu_force_min_limbs", &[("CUGMP_FORCE_MIN_LIMBS", "16")]),
    // Last: these run alone, after the others have finished. The first two
    // time a process's first product against GMP's: beside sixteen other
    // test processes the device's opening took so long that a 2^22-limb
    // first product lost to GMP (2.733 s against 2.727; alone, 0.323
    // against 3.730). The third holds the device's memory; the last one's
    // throughput figures must be its own.
    ("gpu_opens_beside_the_first_operation", &[("CUGMP_GPU", "auto")]),
    ("gpu_waits_for_the_opening_for_a_long_first_operation", &[("CUGMP_GPU", "auto")]),
    ("gpu_memory_held_elsewhere", &[("CUGMP_LOG", "1")]),
    // Its check that device memory returns to baseline needs the allocator
    // to keep no freed memory for reuse (CUGMP_GPU_POOL, default 4 GiB).
    ("gpu_threads_stress", &[("CUGMP_GPU_POOL", "0")]),
];

fn child(name: &str) {
    let api = api();
    if name == "gpu_opens_beside_the_first_operation" {
        // Before anything opens the device.
        println!("{name}: {}", opens_beside(api));
        return;
    }
    if name == "gpu_waits_for_the_opening_for_a_long_first_operation" {
        println!("{name}: {}", waits_for_opening(api));
        return;
    }
    assert_eq!(unsafe { (api.gpu_in_use)() }, 1, "no GPU in the child");
    let special: Option<fn(&Api) -> String> = match name {
        "gpu_mem_limit_falls_back" => Some(mem_limit),
        "gpu_lanes_failure_falls_back_to_cpu" => Some(lanes_failure),
        "gpu_products_beyond_device_memory" => Some(beyond_device_memory),
        "gpu_fork_child_computes" => Some(fork_child),
        "gpu_pinned_products_match_gmp" | "gpu_pinned_off_stages" => Some(pinned_products),
        "gpu_threads_stress" => Some(threads),
        "gpu_memory_held_elsewhere" => Some(memory_held_elsewhere),
        "gpu_hooks_match_gmp" => Some(hooks),
        "gpu_ladders_match_gmp" | "gpu_ladder_failure_falls_back" | "gpu_ladders_checked" => Some(ladders),
        "gpu_roots_match_gmp" => Some(roots_on_device),
        "gpu_roots_sweep" => Some(roots_sweep),
        "gpu_quotients_match_gmp" => Some(quotients_on_device),
        "gpu_quotients_sweep" => Some(quotients_sweep),
        "gpu_joins_match_gmp" => Some(joins_on_device),
        "gpu_join_failure_falls_back" => Some(join_failure),
        "gpu_joins_sweep" => Some(joins_sweep),
        "gpu_splits_match_gmp" => Some(splits_on_device),
        "gpu_splits_sweep" => Some(splits_sweep),
        "gpu_split_product_matches_gmp" => Some(split_product),
        "gpu_force_min_limbs" => Some(force_min),
        "gpu_gfp_matches_gmp" => Some(gfp_engine),
        "gpu_small_products_match_gmp" => Some(small_products),
        "gpu_small_sweep" => Some(small_sweep),
        "gpu_hgcd_steps_match_gmp" => Some(hgcd_steps),
        "gpu_hgcd_steps_sweep" => Some(hgcd_steps_sweep),
        "gpu_gfp_sweep" => Some(gfp_sweep),
        "gpu_pieces_match_gmp" => Some(pieces_engine),
        "gpu_pieces_sweep" => Some(pieces_sweep),
        "gpu_devices_match_gmp" => Some(devices_engine),
        "gpu_devices_sweep" => Some(devices_sweep),
        _ => None,
    };
    if let Some(test) = special {
        println!("{name}: {}", test(api));
        return;
    }
    let start = std::time::Instant::now();
    let (linear_on_gpu, linear_calls) = linear_sweep(api);
    let linear_s = start.elapsed().as_secs_f64();
    let on_gpu = linear_on_gpu + mul_sweep(api) + mulmod_sweep(api) + radix_round_trip(api);
    match name {
        "gpu_matches_gmp" | "gpu_check_mode_passes" => {
            // Under CUGMP_GPU=force every add/sub/shift/logic call is the GPU's.
            assert_eq!(linear_on_gpu, linear_calls, "some add/sub/shift/logic calls did not run on the GPU");
            assert!(on_gpu > linear_on_gpu, "no product ran on the GPU");
        }
        _ => assert_eq!(on_gpu, 0, "an injected GPU fault still counted as a GPU result"),
    }
    println!("{name}: {on_gpu} operations completed on the GPU; add/sub/shift/logic sweep {linear_s:.0} s, all {:.0} s", start.elapsed().as_secs_f64());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--hog") {
        hog();
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1]);
        return;
    }
    let filter: Vec<&String> = args.iter().skip(1).filter(|a| !a.starts_with('-')).collect();
    let selected: Vec<_> = TESTS.iter().filter(|(n, _)| filter.is_empty() || filter.iter().any(|f| n.contains(f.as_str()))).collect();

    if args.iter().any(|a| a == "--probe") {
        let api = api();
        std::process::exit(if unsafe { (api.gpu_in_use)() } == 1 { 0 } else { 3 });
    }
    // Is there a GPU the library will use? Ask it, in a process of its own.
    let gpu = Command::new(std::env::current_exe().unwrap())
        .arg("--probe")
        .env("CUGMP_GPU", "force")
        .output()
        .map(|o| o.status.code() == Some(0))
        .unwrap_or(false);

    println!("\nrunning {} tests", selected.len());
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    // The children run at once (they share the one GPU, as threads of
    // separate programs would), except the last four of TESTS (`alone`),
    // which run alone afterwards, one after the other. Results are printed
    // in order.
    let spawn = |name: &str, env: &[(&str, &str)]| {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--child", name]).env("CUGMP_GPU", "force").env_remove("CUGMP_FAULT").env_remove("CUGMP_CHECK");
        for (k, v) in env.iter() {
            cmd.env(k, v);
        }
        std::thread::spawn(move || cmd.output().expect("run child"))
    };
    let alone = |name: &str| TESTS[TESTS.len() - 4..].iter().any(|(n, _)| *n == name);
    let children: Vec<_> = selected
        .iter()
        .map(|(name, env)| (*name, *env, if gpu && !alone(name) { Some(spawn(name, env)) } else { None }))
        .collect();
    let finished: Vec<_> = children
        .into_iter()
        .map(|(name, env, running)| {
            let out = match running {
                Some(c) => Some(c.join().expect("child thread")),
                None if gpu => Some(spawn(name, env).join().expect("child thread")),
                None => None,
            };
            (name, out)
        })
        .collect();
    for (name, child) in finished {
        let Some(child) = child else {
            println!("test {name} ... skipped (no usable GPU: cugmp_gpu_in_use() = 0 under CUGMP_GPU=force)");
            skipped += 1;
            continue;
        };
        let out = child;
        if out.status.code() == Some(SKIPPED) {
            println!("test {name} ... skipped ({})", String::from_utf8_lossy(&out.stdout).trim());
            skipped += 1;
        } else if out.status.success() {
            println!("test {name} ... ok ({})", String::from_utf8_lossy(&out.stdout).trim());
            passed += 1;
        } else {
            println!("test {name} ... FAILED\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            failed += 1;
        }
    }
    println!(
        "\ntest result: {}. {passed} passed; {failed} failed; {skipped} ignored; 0 measured; {} filtered out\n",
        if failed == 0 { "ok" } else { "FAILED" },
        TESTS.len() - selected.len()
    );
    if skipped > 0 {
        println!("{skipped} GPU tests skipped, each for the reason given above");
    }
    std::process::exit(if failed == 0 { 0 } else { 1 });
}
