//! Hooks into the embedded GMP's own algorithms. build.rs links with
//! `--wrap` on the private names of GMP's product routines, so every call
//! GMP makes to them from another of its files (mpn_mul, mpn_mul_n and
//! mpn_sqr from its division, gcd, half-gcd, powm and the rest; its FFT
//! product, which those call above MUL_FFT_THRESHOLD; its division,
//! inversion and Hensel division through mulmod_bnm1, whose size they take
//! from mulmod_bnm1_next_size; its square roots through sqrmod_bnm1) lands here,
//! and src/algorithms/hooks.rs computes it on the GPU or calls the original
//! (`__real_...`, declared in src/gmp/embedded.rs). A routine's calls to itself
//! inside its own file (mulmod_bnm1's recursion) are not wrapped: they stay
//! on the CPU.
//! Then gcd, powm, inversion, Hensel division, mpf and mpq get GPU
//! products with no code of their own. Two of GMP's algorithms are hooked
//! whole, radix conversion both ways (`mpn_get_str`, `mpn_set_str`) and
//! the square root (`mpn_sqrtrem`), and so is division (`mpn_tdiv_qr`,
//! `mpn_div_q`): above their thresholds cuGMP computes them its own way
//! (src/algorithms/radix/, src/algorithms/sqrt.rs,
//! src/algorithms/quotient.rs), with GPU products. The half-gcd's matrix
//! steps (`mpn_hgcd_matrix_adjust`, `mpn_matrix22_mul`) are hooked to make
//! their products on several cores at once, and the half-gcd itself
//! (`mpn_hgcd`, `mpn_hgcd_reduce`) to recurse down to a smaller size than
//! GMP's fat build does (src/algorithms/hgcd.rs).
//!
//! GMP's Karatsuba and Toom-3 levels (`mpn_toom22_mul`, `mpn_toom33_mul`,
//! `mpn_toom2_sqr`, `mpn_toom3_sqr`) are hooked for the CPU engine: up to
//! 256 limbs, on processors with AVX-512 IFMA, src/cpu/ifma.rs makes the
//! whole product in one schoolbook pass.
//!
//! GMP's processor detection is hooked too (`__gmpn_cpuid`): the embedded
//! GMP is told what src/gmp/cpuid.rs answers.
//!
//! These are not exported: scripts/link-cdylib.sh leaves `__wrap_` names
//! out of the library's symbol table.

use super::{boundary, routed};
use crate::algorithms::{hgcd, hooks};
use crate::cpu::ifma;
use crate::gmp::{cpuid, embedded};
use crate::gmp::{hgcd_matrix, mp_limb_t, mp_size_t};
use libc::{c_int, size_t};

/// GMP's `__gmpn_cpuid` as its fat dispatch (`__gmpn_cpuvec_init`) calls
/// it: CPUID leaf `id`'s EBX, EDX and ECX into `dst`, EAX returned; the
/// registers are src/gmp/cpuid.rs's answer. It cannot panic (integer
/// operations on the registers), so it needs no boundary, and it runs
/// before anything else of GMP's has.
#[cfg(target_arch = "x86_64")]
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_cpuid(dst: *mut u8, id: c_int) -> libc::c_long {
    let regs = cpuid::on_this_processor(id as u32);
    // SAFETY: GMP passes 12 writable bytes (fat.c's `char [12]` buffers).
    unsafe {
        for (k, r) in [regs.ebx, regs.edx, regs.ecx].into_iter().enumerate() {
            std::ptr::copy_nonoverlapping(r.to_le_bytes().as_ptr(), dst.add(4 * k), 4);
        }
    }
    // GMP's own returns EAX zero-extended.
    libc::c_long::from(regs.eax)
}

/// GMP's `_mpz_realloc`, as the embedded GMP, the program and cuGMP call
/// it: large growths into pinned blocks (`mpz::realloc`). GMP's own
/// reports an overflow as GMP does.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpz_realloc(m: crate::gmp::mpz_ptr, new_alloc: mp_size_t) -> *mut libc::c_void {
    boundary!("_mpz_realloc", unsafe { crate::gmp::mpz::realloc(m, new_alloc) })
}

/// The size GMP's algorithms take for their products mod B^rn - 1 (and size
/// their scratch by): where those products go to the GPU, one whose 2 rn
/// points are one transform (src/algorithms/hooks.rs, `mulmod_bnm1_next_size`).
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_mulmod_bnm1_next_size(n: mp_size_t) -> mp_size_t {
    boundary!("mpn_mulmod_bnm1_next_size", {
        let gmp = unsafe { embedded::mpn_mulmod_bnm1_next_size(n) };
        match (usize::try_from(n), usize::try_from(gmp)) {
            (Ok(n), Ok(g)) => mp_size_t::try_from(hooks::mulmod_bnm1_next_size(n, g)).unwrap_or(gmp),
            _ => gmp,
        }
    })
}

/// GMP's `mpn_mul` as GMP's other routines call it (its division, gcd,
/// half-gcd, powm, ...): `{rp, un+vn} = {up, un} * {vp, vn}`, `un >= vn >=
/// 1`; returns the top limb. Below the internal products' threshold,
/// GMP's at once.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> mp_limb_t {
    routed!("mpn_mul", hooks::internal_mpn_on_cpu(un, vn) => embedded::mpn_mul(rp, up, un, vp, vn), {
        hooks::internal_mpn_product(rp, up, un as usize, vp, vn as usize, || {
            embedded::mpn_mul(rp, up, un, vp, vn);
        });
        *rp.add((un + vn) as usize - 1)
    })
}

/// GMP's `mpn_mul_n` as its other routines call it: `{rp, 2n} = {up, n} *
/// {vp, n}`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) {
    routed!("mpn_mul_n", hooks::internal_mpn_on_cpu(n, n) => embedded::mpn_mul_n(rp, up, vp, n), {
        hooks::internal_mpn_product(rp, up, n as usize, vp, n as usize, || embedded::mpn_mul_n(rp, up, vp, n))
    })
}

/// GMP's Toom levels as its other routines call them (`mpn_mul`,
/// `mpn_mul_n`, `mpn_sqr` and the Toom levels above), each `{pp, an + bn}
/// = {ap, an} * {bp, bn}` with `an >= bn`: on processors with AVX-512 IFMA,
/// one schoolbook pass of the kernel where `$whole` (src/cpu/ifma.rs) takes
/// the product whole; else GMP's. Karatsuba's and Toom-3's up to the
/// kernel's longest operand (`mul_whole`); those for operands of unlike
/// lengths, which `mpn_mul` takes for a shorter operand of Karatsuba's
/// sizes and more and for its chunks of a much longer one, where the
/// shorter is short enough (`mul_unbalanced_whole`).
macro_rules! toom_whole {
    ($($wrap:ident => $real:ident by $whole:ident),* $(,)?) => {$(
        #[unsafe(no_mangle)]
        unsafe extern "C" fn $wrap(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t) {
            // SAFETY: GMP's arguments (an >= bn, pp apart from both).
            unsafe {
                if !ifma::$whole(pp, ap, an, bp, bn) {
                    embedded::$real(pp, ap, an, bp, bn, scratch);
                }
            }
        }
    )*};
}

toom_whole! {
    __wrap___cugmp_cpu__gmpn_toom22_mul => mpn_toom22_mul by mul_whole,
    __wrap___cugmp_cpu__gmpn_toom33_mul => mpn_toom33_mul by mul_whole,
    __wrap___cugmp_cpu__gmpn_toom32_mul => mpn_toom32_mul by mul_unbalanced_whole,
    __wrap___cugmp_cpu__gmpn_toom42_mul => mpn_toom42_mul by mul_unbalanced_whole,
    __wrap___cugmp_cpu__gmpn_toom43_mul => mpn_toom43_mul by mul_unbalanced_whole,
    __wrap___cugmp_cpu__gmpn_toom53_mul => mpn_toom53_mul by mul_unbalanced_whole,
    __wrap___cugmp_cpu__gmpn_toom63_mul => mpn_toom63_mul by mul_unbalanced_whole,
}

#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_toom2_sqr(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, scratch: *mut mp_limb_t) {
    // SAFETY: GMP's arguments (pp apart from ap).
    unsafe {
        if !ifma::sqr_whole(pp, ap, an) {
            embedded::mpn_toom2_sqr(pp, ap, an, scratch);
        }
    }
}

#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_toom3_sqr(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, scratch: *mut mp_limb_t) {
    // SAFETY: as above.
    unsafe {
        if !ifma::sqr_whole(pp, ap, an) {
            embedded::mpn_toom3_sqr(pp, ap, an, scratch);
        }
    }
}

/// GMP's half-gcd as its gcd and gcdext call it: recursing from
/// src/algorithms/hgcd.rs's threshold instead of the 400 limbs of GMP's fat
/// build.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_hgcd(ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, m: *mut hgcd_matrix, tp: *mut mp_limb_t) -> mp_size_t {
    boundary!("mpn_hgcd", unsafe { hgcd::hgcd_for_gmp(ap, bp, n, m, tp, || embedded::mpn_hgcd(ap, bp, n, m, tp)) })
}

#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_hgcd_reduce(m: *mut hgcd_matrix, ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, p: mp_size_t, tp: *mut mp_limb_t) -> mp_size_t {
    boundary!("mpn_hgcd_reduce", unsafe { hgcd::reduce_for_gmp(m, ap, bp, n, p, tp, || embedded::mpn_hgcd_reduce(m, ap, bp, n, p, tp)) })
}

/// GMP's `mpn_sqr` as its other routines call it: `{rp, 2n} = {up, n}^2`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t) {
    routed!("mpn_sqr", hooks::internal_mpn_on_cpu(n, n) => embedded::mpn_sqr(rp, up, n), {
        hooks::internal_mpn_product(rp, up, n as usize, up, n as usize, || embedded::mpn_sqr(rp, up, n))
    })
}

/// `{pp, an+bn} = {ap, an} * {bp, bn}`, `an >= bn > 0`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_nussbaumer_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t) {
    boundary!("mpn_nussbaumer_mul", unsafe {
        hooks::internal_product(pp, ap, an as usize, bp, bn as usize, || embedded::mpn_nussbaumer_mul(pp, ap, an, bp, bn))
    })
}

/// `{rp, min(rn, an+bn)} = {ap, an} * {bp, bn} mod (B^rn - 1)`; `tp` is
/// GMP's scratch, used only by the CPU routine.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_mulmod_bnm1(
    rp: *mut mp_limb_t,
    rn: mp_size_t,
    ap: *const mp_limb_t,
    an: mp_size_t,
    bp: *const mp_limb_t,
    bn: mp_size_t,
    tp: *mut mp_limb_t,
) {
    boundary!("mpn_mulmod_bnm1", unsafe {
        hooks::internal_mulmod_bnm1(rp, rn as usize, ap, an as usize, bp, bn as usize, || {
            embedded::mpn_mulmod_bnm1(rp, rn, ap, an, bp, bn, tp)
        })
    })
}

/// `{rp, min(rn, 2an)} = {ap, an}^2 mod (B^rn - 1)`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_sqrmod_bnm1(rp: *mut mp_limb_t, rn: mp_size_t, ap: *const mp_limb_t, an: mp_size_t, tp: *mut mp_limb_t) {
    boundary!("mpn_sqrmod_bnm1", unsafe {
        hooks::internal_mulmod_bnm1(rp, rn as usize, ap, an as usize, ap, an as usize, || embedded::mpn_sqrmod_bnm1(rp, rn, ap, an, tp))
    })
}

/// GMP's division (mpz_tdiv_qr, mpz_fdiv_qr, mpz_mod, mpz_tdiv_r and the
/// rest reach it): `{qp, nn-dn+1}` and `{rp, dn}` the quotient and
/// remainder of `{np, nn}` by `{dp, dn}`, `qxn` = 0, `rp` possibly `np`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_tdiv_qr(qp: *mut mp_limb_t, rp: *mut mp_limb_t, qxn: mp_size_t, np: *const mp_limb_t, nn: mp_size_t, dp: *const mp_limb_t, dn: mp_size_t) {
    routed!("mpn_tdiv_qr", hooks::quotient_on_cpu(dn) || qxn != 0 => embedded::mpn_tdiv_qr(qp, rp, qxn, np, nn, dp, dn), {
        hooks::internal_quotient(qp, rp, np, nn as usize, dp, dn as usize, "mpn_tdiv_qr", || embedded::mpn_tdiv_qr(qp, rp, qxn, np, nn, dp, dn))
    })
}

/// GMP's quotient alone (mpz_tdiv_q, mpz_fdiv_q, mpz_cdiv_q, mpf_div and
/// mpq's reach it): `{qp, nn-dn+1}` = floor(`{np, nn}` / `{dp, dn}`);
/// `scratch` is GMP's, used only by the CPU routine.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_div_q(qp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t, dp: *const mp_limb_t, dn: mp_size_t, scratch: *mut mp_limb_t) {
    routed!("mpn_div_q", hooks::quotient_on_cpu(dn) => embedded::mpn_div_q(qp, np, nn, dp, dn, scratch), {
        hooks::internal_quotient(qp, std::ptr::null_mut(), np, nn as usize, dp, dn as usize, "mpn_div_q", || embedded::mpn_div_q(qp, np, nn, dp, dn, scratch))
    })
}

/// GMP's half-gcd adjustment (its gcd, gcdext, invert and Jacobi symbol
/// reach it): `(a; b) = M^-1 (a; b)` on `{ap, n}` and `{bp, n}`, the matrix
/// meeting their low `p` limbs; returns their new size. `tp` is GMP's
/// scratch, used only by GMP's routine.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_hgcd_matrix_adjust(m: *const hgcd_matrix, n: mp_size_t, ap: *mut mp_limb_t, bp: *mut mp_limb_t, p: mp_size_t, tp: *mut mp_limb_t) -> mp_size_t {
    boundary!("mpn_hgcd_matrix_adjust", unsafe {
        hgcd::matrix_adjust(m, n as usize, ap, bp, p as usize, || embedded::mpn_hgcd_matrix_adjust(m, n, ap, bp, p, tp))
    })
}

/// GMP's product of 2 x 2 matrices in its half-gcd: `R = R M`, R's entries
/// of `rn` limbs (each with room for `rn + mn + 1`), M's of `mn`. `tp` is
/// GMP's scratch, used only by GMP's routine.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_matrix22_mul(r0: *mut mp_limb_t, r1: *mut mp_limb_t, r2: *mut mp_limb_t, r3: *mut mp_limb_t, rn: mp_size_t, m0: *const mp_limb_t, m1: *const mp_limb_t, m2: *const mp_limb_t, m3: *const mp_limb_t, mn: mp_size_t, tp: *mut mp_limb_t) {
    boundary!("mpn_matrix22_mul", unsafe {
        hgcd::matrix22_mul([r0, r1, r2, r3], rn as usize, [m0, m1, m2, m3], mn as usize, || embedded::mpn_matrix22_mul(r0, r1, r2, r3, rn, m0, m1, m2, m3, mn, tp))
    })
}

/// GMP's radix conversion (mpz_get_str, mpz_out_str, mpf_get_str and
/// gmp_printf reach it): digit values of `{up, un}` in `base` at `s`, most
/// significant first, no leading zeros; returns their count. `{up, un}` may
/// be clobbered, as GMP's may.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_get_str(s: *mut u8, base: c_int, up: *mut mp_limb_t, un: mp_size_t) -> size_t {
    boundary!("mpn_get_str", unsafe { hooks::internal_get_str(s, base, up, un, || embedded::mpn_get_str(s, base, up, un)) })
}

/// GMP's conversion from digits (mpz_set_str, mpz_inp_str, mpf_set_str
/// and mpq_set_str reach it): `{rp, returned}` = the number whose digit
/// values, most significant first, are `{s, len}` in `base`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_set_str(rp: *mut mp_limb_t, s: *const u8, len: size_t, base: c_int) -> mp_size_t {
    boundary!("mpn_set_str", unsafe { hooks::internal_set_str(rp, s, len, base, || embedded::mpn_set_str(rp, s, len, base)) })
}

/// GMP's square root (mpz_sqrt, mpz_sqrtrem, mpz_root and mpz_rootrem for
/// k = 2, mpz_perfect_square_p reach it): `{sp, ceil(nn/2)}` = floor(sqrt(
/// {np, nn})); with `rp` not NULL the remainder at `rp` and its size
/// returned, else nonzero iff there is a remainder. `rp` may be `np`.
#[unsafe(no_mangle)]
unsafe extern "C" fn __wrap___cugmp_cpu__gmpn_sqrtrem(sp: *mut mp_limb_t, rp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t) -> mp_size_t {
    routed!("mpn_sqrtrem", hooks::sqrt_on_cpu(nn) => embedded::mpn_sqrtrem(sp, rp, np, nn), {
        hooks::internal_sqrtrem(sp, rp, np, nn, || embedded::mpn_sqrtrem(sp, rp, np, nn))
    })
}
