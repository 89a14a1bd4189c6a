//! Differential arithmetic: the operation, the operands' signs, sizes and
//! limb patterns, the aliasing of result and operands, and the shift count
//! all come from the input; the result must be GMP's. Sizes reach
//! `CUGMP_FUZZ_MAX_LIMBS` (default 2^16), so with `CUGMP_GPU=force` on the
//! GPU machine every operation goes through the GPU engine. `sqrt`, `tdiv_qr`
//! and `gcd` are GMP's own algorithms, whose inner products (and, for sqrt,
//! Newton's iteration in src/algorithms/sqrt.rs; for tdiv_qr from 64 limbs
//! of divisor and quotient, the quotient on device-resident numbers in
//! src/algorithms/quotient.rs) reach the GPU through the hooks.
//! `fac_ui` and `bin_uiui` take n from the shift count (times 4) and k from
//! the first operand (src/algorithms/factorial.rs); `set_str` reads the first
//! operand's text in one of five bases back (src/algorithms/radix/).
//! `powm_batch` is a batch of one item, a to the power shift count + 1
//! modulo b (1 for a zero b; the GPU's kernels under force where b is odd
//! and at most 64 limbs); `poly_mul` multiplies a + b x - a x^2 by
//! b + a x + x^2 (src/algorithms/poly.rs).
#![no_main]

#[path = "harness.rs"]
mod harness;

use gmp_mpfr_sys::gmp;
use harness::{api, reference_get_str, same, Z};
use libfuzzer_sys::fuzz_target;
use rug::Integer;

const OPS: [&str; 20] = [
    "add", "sub", "mul", "and", "ior", "xor", "com", "mul_2exp", "tdiv_q_2exp", "fdiv_q_2exp", "cdiv_q_2exp", "sqrt", "tdiv_qr",
    "gcd", "fac_ui", "bin_uiui", "set_str", "powm_batch", "poly_mul", "gf2x_mul",
];

/// The carry-less product of the bits of |a| and |b|, limb by limb with a
/// bit-by-bit 64 x 64 product: the reference of `gf2x_mul`.
fn carry_less(a: &Integer, b: &Integer) -> Integer {
    let (x, y) = (a.as_limbs(), b.as_limbs());
    let mut out = vec![0u64; x.len() + y.len()];
    for (i, &u) in x.iter().enumerate() {
        for (j, &v) in y.iter().enumerate() {
            let (mut lo, mut hi) = (0u64, 0u64);
            for k in (0..64).filter(|k| v >> k & 1 != 0) {
                lo ^= u << k;
                hi ^= if k == 0 { 0 } else { u >> (64 - k) };
            }
            out[i + j] ^= lo;
            out[i + j + 1] ^= hi;
        }
    }
    Integer::from_digits(&out, rug::integer::Order::Lsf)
}

fn max_limbs() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| std::env::var("CUGMP_FUZZ_MAX_LIMBS").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 16))
}

/// An operand: `len` limbs filled from `seed` in one of four patterns that
/// stress carries and borrows (raw bytes, all ones with a few seed bits
/// cleared, sparse bits, a single limb set), then signed.
fn operand(len: usize, pattern: u8, negative: bool, seed: &[u8]) -> Integer {
    let word = |i: usize| -> u64 {
        if seed.is_empty() {
            return i as u64;
        }
        let mut w = [0u8; 8];
        for (k, b) in w.iter_mut().enumerate() {
            *b = seed[(i * 8 + k) % seed.len()];
        }
        u64::from_le_bytes(w).rotate_left(i as u32 % 64)
    };
    let limbs: Vec<u64> = (0..len)
        .map(|i| match pattern % 4 {
            0 => word(i),
            1 => !(1u64 << (word(i) % 64)) | u64::from(i + 1 != len),
            2 => 1u64 << (word(i) % 64) & if word(i) & 0x700 == 0 { !0 } else { 0 },
            _ => u64::from(i == len / 2) * word(i),
        })
        .collect();
    let x = Integer::from_digits(&limbs, rug::integer::Order::Lsf);
    if negative {
        -x
    } else {
        x
    }
}

/// A length from one byte: mostly small, sometimes near powers of two and
/// tile boundaries, sometimes large.
fn length(b: u8, scale: u8) -> usize {
    let n = match scale % 4 {
        0 => (b % 9) as usize,
        1 => b as usize,
        2 => (1usize << (b % 17)).saturating_add(b as usize % 3).saturating_sub(1),
        _ => (b as usize) << 8,
    };
    n.min(max_limbs())
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (head, seed) = data.split_at(8);
    let op = OPS[head[0] as usize % OPS.len()];
    let flags = head[1];
    let a = operand(length(head[2], head[4]), head[5], flags & 1 != 0, seed);
    let b = operand(length(head[3], head[4] >> 2), head[5] >> 2, flags & 2 != 0, seed.get(1..).unwrap_or(&[]));
    let bits = u16::from_le_bytes([head[6], head[7]]) as u64;
    // Aliasing: 0 none, 1 rop = a, 2 rop = b, 3 rop = a = b, 4 a = b.
    let alias = (flags >> 2) % 5;
    // GMP has no root of a negative number (it raises SIGFPE), nor a
    // quotient by zero: those take |a| and a divisor of 1 (where alias 3
    // or 4 makes the divisor a itself, a zero a becomes 1).
    let a = match op {
        "sqrt" => a.abs(),
        "gf2x_mul" => a.keep_bits(64 * 256),
        "tdiv_qr" | "powm_batch" if alias >= 3 && a == 0 => Integer::from(1),
        _ => a,
    };
    let b = if op == "gf2x_mul" { b.keep_bits(64 * 256) } else { b };
    let b = if alias >= 3 { a.clone() } else if matches!(op, "tdiv_qr" | "powm_batch") && b == 0 { Integer::from(1) } else { b };
    let exponent = Integer::from(bits + 1);
    // tdiv_qr's remainder, in a variable of its own (GMP's quotient and
    // remainder must be distinct); the quotient aliases as the other results.
    let mut want_rem = Integer::new();
    // fac_ui and bin_uiui: n and k; set_str: the text and its base.
    let n = bits * 4;
    let k = a.to_u64_wrapping() % (n + 2);
    let base = [10, 3, 36, 62, 7][head[7] as usize % 5];
    let text = std::ffi::CString::new(reference_get_str(&a, base).unwrap_or_default()).unwrap_or_default();

    // The reference, through GMP's own functions on fresh variables.
    let mut want = Integer::new();
    unsafe {
        let (w, x, y) = (want.as_raw_mut(), a.as_raw(), b.as_raw());
        match op {
            "add" => gmp::mpz_add(w, x, y),
            "sub" => gmp::mpz_sub(w, x, y),
            "mul" => gmp::mpz_mul(w, x, y),
            "and" => gmp::mpz_and(w, x, y),
            "ior" => gmp::mpz_ior(w, x, y),
            "xor" => gmp::mpz_xor(w, x, y),
            "com" => gmp::mpz_com(w, x),
            "mul_2exp" => gmp::mpz_mul_2exp(w, x, bits),
            "tdiv_q_2exp" => gmp::mpz_tdiv_q_2exp(w, x, bits),
            "fdiv_q_2exp" => gmp::mpz_fdiv_q_2exp(w, x, bits),
            "cdiv_q_2exp" => gmp::mpz_cdiv_q_2exp(w, x, bits),
            "sqrt" => gmp::mpz_sqrt(w, x),
            "tdiv_qr" => gmp::mpz_tdiv_qr(w, want_rem.as_raw_mut(), x, y),
            "fac_ui" => gmp::mpz_fac_ui(w, n),
            "bin_uiui" => gmp::mpz_bin_uiui(w, n, k),
            "set_str" => assert_eq!(gmp::mpz_set_str(w, text.as_ptr(), base), 0, "GMP reads its own text"),
            "powm_batch" => gmp::mpz_powm(w, x, exponent.as_raw(), y),
            "gf2x_mul" => gmp::mpz_set(w, carry_less(&a, &b).as_raw()),
            // Its four coefficients are compared where it is called.
            "poly_mul" => {}
            _ => gmp::mpz_gcd(w, x, y),
        }
    }

    let api = api();
    let (mut za, mut zb, mut zr) = (Z::from(&a), Z::from(&b), Z::from(&Integer::from(-3)));
    let mut zrem = Z::from(&Integer::from(5));
    let (pa, pb) = (za.ptr(), if alias >= 3 { za.ptr() } else { zb.ptr() });
    let pr = match alias {
        1 | 3 => pa,
        2 => pb,
        _ => zr.ptr(),
    };
    unsafe {
        match op {
            "add" => (api.add)(pr, pa, pb),
            "sub" => (api.sub)(pr, pa, pb),
            "mul" => (api.mul)(pr, pa, pb),
            "and" => (api.and)(pr, pa, pb),
            "ior" => (api.ior)(pr, pa, pb),
            "xor" => (api.xor)(pr, pa, pb),
            "com" => (api.com)(pr, pa),
            "mul_2exp" => (api.mul_2exp)(pr, pa, bits),
            "tdiv_q_2exp" => (api.tdiv_q_2exp)(pr, pa, bits),
            "fdiv_q_2exp" => (api.fdiv_q_2exp)(pr, pa, bits),
            "cdiv_q_2exp" => (api.cdiv_q_2exp)(pr, pa, bits),
            "sqrt" => (api.sqrt)(pr, pa),
            "tdiv_qr" => (api.tdiv_qr)(pr, zrem.ptr(), pa, pb),
            "fac_ui" => (api.fac_ui)(pr, n),
            "bin_uiui" => (api.bin_uiui)(pr, n, k),
            "set_str" => assert_eq!((api.set_str)(pr, text.as_ptr(), base), 0, "mpz_set_str of GMP's own text"),
            "gf2x_mul" => (api.gf2x_mul)(pr, pa, pb),
            "powm_batch" => {
                let mut ze = Z::from(&exponent);
                let pe = ze.ptr() as *const _;
                (api.powm_batch)(1, &pr, &(pa as *const _), &pe, &(pb as *const _))
            }
            "poly_mul" => {
                let (mut minus_a, mut one) = (Z::from(&Integer::from(-&a)), Z::from(&Integer::from(1)));
                let mut coefficients = [Z::new(), Z::new(), Z::new(), Z::new(), Z::new()];
                let r: Vec<_> = coefficients.iter_mut().map(|z| z.ptr()).collect();
                let first = [pa as *const _, pb as *const _, minus_a.ptr() as *const _];
                let second = [pb as *const _, pa as *const _, one.ptr() as *const _];
                (api.poly_mul)(r.as_ptr(), first.as_ptr(), 3, second.as_ptr(), 3);
                // (a + b x - a x^2)(b + a x + x^2)
                let aa = Integer::from(&a * &a);
                let want = [Integer::from(&a * &b), Integer::from(&aa + &b * &b), a.clone(), Integer::from(&b - &aa), Integer::from(-&a)];
                for (k, (z, w)) in coefficients.iter().zip(want.iter()).enumerate() {
                    same(&format!("cugmp_poly_mul coefficient {k} ({} and {} bits)", a.significant_bits(), b.significant_bits()), &z.get(), w);
                }
                return;
            }
            _ => (api.gcd)(pr, pa, pb),
        }
    }
    let got = match alias {
        1 | 3 => za.get(),
        2 => zb.get(),
        _ => zr.get(),
    };
    same(&format!("mpz_{op} ({} and {} bits, alias {alias}, shift {bits})", a.significant_bits(), b.significant_bits()), &got, &want);
    if op == "tdiv_qr" {
        same("remainder", &zrem.get(), &want_rem);
    }
    // Operands the result does not alias are unchanged.
    if alias == 0 {
        same("first operand left unchanged", &za.get(), &a);
        same("second operand left unchanged", &zb.get(), &b);
    }
});
