//! The embedded GMP 6.3.0 (from gmp-mpfr-sys), its functions renamed at
//! build time to `__cugmp_cpu` + GMP's name (see build.rs), declared here
//! with their types: the CPU engine's raw material, and the reference every
//! GPU result is checked against under `CUGMP_CHECK=1`.
//!
//! GMP's data symbols keep their own names (one definition shared by the
//! program and the embedded GMP); the ones cuGMP reads are declared here too.

// The generated trampolines (src/abi) name these same private functions
// untyped, as `fn()`: a jump needs no signature. Here they carry their types.
#![allow(clashing_extern_declarations)]

use super::{bases, hgcd_matrix, mp_bitcnt_t, mp_exp_t, mp_limb_t, mp_size_t, mpf_srcptr, mpz_ptr, mpz_srcptr};
use libc::{c_char, c_int, c_void, size_t};

pub type AllocFn = unsafe extern "C" fn(size_t) -> *mut c_void;
pub type ReallocFn = unsafe extern "C" fn(*mut c_void, size_t, size_t) -> *mut c_void;
pub type FreeFn = unsafe extern "C" fn(*mut c_void, size_t);

unsafe extern "C" {
    // Data, under GMP's own names.
    // Written once, by memory::install at load time.
    pub static mut __gmp_allocate_func: AllocFn;
    pub static mut __gmp_reallocate_func: ReallocFn;
    pub static mut __gmp_free_func: FreeFn;
    pub static __gmp_version: *const c_char;
    pub static __gmpn_bases: [bases; 257];

    // Functions of the embedded GMP.
    // `_mpz_realloc` as everyone calls it: wrapped at link time
    // (`mpz::realloc`); the second, GMP's own under the wrapper.
    #[link_name = "__cugmp_cpu__gmpz_realloc"]
    pub fn mpz_realloc(x: mpz_ptr, new_alloc: mp_size_t) -> *mut c_void;
    #[link_name = "__real___cugmp_cpu__gmpz_realloc"]
    pub fn mpz_realloc_gmp(x: mpz_ptr, new_alloc: mp_size_t) -> *mut c_void;
    #[link_name = "__cugmp_cpu__gmp_overflow_in_mpz"]
    pub fn overflow_in_mpz() -> !;
    #[link_name = "__cugmp_cpu__gmpz_set_str"]
    pub fn mpz_set_str(rop: mpz_ptr, s: *const c_char, base: c_int) -> c_int;
    #[link_name = "__cugmp_cpu__gmpf_get_str"]
    pub fn mpf_get_str(s: *mut c_char, exp: *mut mp_exp_t, base: c_int, n_digits: size_t, op: mpf_srcptr) -> *mut c_char;
    #[link_name = "__cugmp_cpu__gmpz_get_str"]
    pub fn mpz_get_str(s: *mut c_char, base: c_int, op: mpz_srcptr) -> *mut c_char;
    #[link_name = "__cugmp_cpu__gmpz_import"]
    pub fn mpz_import(rop: mpz_ptr, count: size_t, order: c_int, size: size_t, endian: c_int, nails: size_t, op: *const c_void);
    #[link_name = "__cugmp_cpu__gmpz_neg"]
    pub fn mpz_neg(r: mpz_ptr, a: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_abs"]
    pub fn mpz_abs(r: mpz_ptr, a: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_add"]
    pub fn mpz_add(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_sub"]
    pub fn mpz_sub(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_mul"]
    pub fn mpz_mul(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_mul_2exp"]
    pub fn mpz_mul_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t);
    #[link_name = "__cugmp_cpu__gmpz_tdiv_q_2exp"]
    pub fn mpz_tdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t);
    #[link_name = "__cugmp_cpu__gmpz_fdiv_q_2exp"]
    pub fn mpz_fdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t);
    #[link_name = "__cugmp_cpu__gmpz_cdiv_q_2exp"]
    pub fn mpz_cdiv_q_2exp(r: mpz_ptr, a: mpz_srcptr, n: mp_bitcnt_t);
    #[link_name = "__cugmp_cpu__gmpz_and"]
    pub fn mpz_and(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_ior"]
    pub fn mpz_ior(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_xor"]
    pub fn mpz_xor(r: mpz_ptr, a: mpz_srcptr, b: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_com"]
    pub fn mpz_com(r: mpz_ptr, a: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_cmp"]
    pub fn mpz_cmp(a: mpz_srcptr, b: mpz_srcptr) -> c_int;
    #[link_name = "__cugmp_cpu__gmpz_set"]
    pub fn mpz_set(r: mpz_ptr, a: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_set_ui"]
    pub fn mpz_set_ui(r: mpz_ptr, v: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_mul_ui"]
    pub fn mpz_mul_ui(r: mpz_ptr, a: mpz_srcptr, v: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_mul_si"]
    pub fn mpz_mul_si(r: mpz_ptr, a: mpz_srcptr, v: libc::c_long);
    #[link_name = "__cugmp_cpu__gmpz_add_ui"]
    pub fn mpz_add_ui(r: mpz_ptr, a: mpz_srcptr, v: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_sub_ui"]
    pub fn mpz_sub_ui(r: mpz_ptr, a: mpz_srcptr, v: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_tdiv_q"]
    pub fn mpz_tdiv_q(q: mpz_ptr, n: mpz_srcptr, d: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_sqrt"]
    pub fn mpz_sqrt(r: mpz_ptr, a: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_bin_uiui"]
    pub fn mpz_bin_uiui(r: mpz_ptr, n: libc::c_ulong, k: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_fac_ui"]
    pub fn mpz_fac_ui(r: mpz_ptr, n: libc::c_ulong);
    #[link_name = "__cugmp_cpu__gmpz_powm"]
    pub fn mpz_powm(r: mpz_ptr, base: mpz_srcptr, exp: mpz_srcptr, m: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_mod"]
    pub fn mpz_mod(r: mpz_ptr, a: mpz_srcptr, m: mpz_srcptr);
    #[link_name = "__cugmp_cpu__gmpz_invert"]
    pub fn mpz_invert(r: mpz_ptr, a: mpz_srcptr, m: mpz_srcptr) -> c_int;
    #[link_name = "__cugmp_cpu__gmpz_swap"]
    pub fn mpz_swap(a: mpz_ptr, b: mpz_ptr);
    #[link_name = "__cugmp_cpu__gmpz_init"]
    pub fn mpz_init(r: mpz_ptr);
    #[link_name = "__cugmp_cpu__gmpz_clear"]
    pub fn mpz_clear(r: mpz_ptr);
    // GMP's routines that build.rs wraps (`--wrap`: calls to the plain
    // names reach cuGMP's hooks, src/abi/hooks.rs): the originals.
    #[link_name = "__real___cugmp_cpu__gmpn_mul"]
    pub fn mpn_mul(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t) -> mp_limb_t;
    #[link_name = "__real___cugmp_cpu__gmpn_mul_n"]
    pub fn mpn_mul_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom22_mul"]
    pub fn mpn_toom22_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom33_mul"]
    pub fn mpn_toom33_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom32_mul"]
    pub fn mpn_toom32_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom42_mul"]
    pub fn mpn_toom42_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom43_mul"]
    pub fn mpn_toom43_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom53_mul"]
    pub fn mpn_toom53_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom63_mul"]
    pub fn mpn_toom63_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom2_sqr"]
    pub fn mpn_toom2_sqr(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_toom3_sqr"]
    pub fn mpn_toom3_sqr(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_sqr"]
    pub fn mpn_sqr(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t);
    #[link_name = "__real___cugmp_cpu__gmpn_nussbaumer_mul"]
    pub fn mpn_nussbaumer_mul(pp: *mut mp_limb_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t);
    #[link_name = "__real___cugmp_cpu__gmpn_mulmod_bnm1"]
    pub fn mpn_mulmod_bnm1(rp: *mut mp_limb_t, rn: mp_size_t, ap: *const mp_limb_t, an: mp_size_t, bp: *const mp_limb_t, bn: mp_size_t, tp: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_sqrmod_bnm1"]
    pub fn mpn_sqrmod_bnm1(rp: *mut mp_limb_t, rn: mp_size_t, ap: *const mp_limb_t, an: mp_size_t, tp: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_mulmod_bnm1_next_size"]
    pub fn mpn_mulmod_bnm1_next_size(n: mp_size_t) -> mp_size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_get_str"]
    pub fn mpn_get_str(s: *mut u8, base: c_int, up: *mut mp_limb_t, un: mp_size_t) -> size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_set_str"]
    pub fn mpn_set_str(rp: *mut mp_limb_t, s: *const u8, len: size_t, base: c_int) -> mp_size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_sqrtrem"]
    pub fn mpn_sqrtrem(sp: *mut mp_limb_t, rp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t) -> mp_size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_div_q"]
    pub fn mpn_div_q(qp: *mut mp_limb_t, np: *const mp_limb_t, nn: mp_size_t, dp: *const mp_limb_t, dn: mp_size_t, scratch: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_tdiv_qr"]
    pub fn mpn_tdiv_qr(qp: *mut mp_limb_t, rp: *mut mp_limb_t, qxn: mp_size_t, np: *const mp_limb_t, nn: mp_size_t, dp: *const mp_limb_t, dn: mp_size_t);
    #[link_name = "__real___cugmp_cpu__gmpn_hgcd_matrix_adjust"]
    pub fn mpn_hgcd_matrix_adjust(m: *const hgcd_matrix, n: mp_size_t, ap: *mut mp_limb_t, bp: *mut mp_limb_t, p: mp_size_t, tp: *mut mp_limb_t) -> mp_size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_matrix22_mul"]
    pub fn mpn_matrix22_mul(r0: *mut mp_limb_t, r1: *mut mp_limb_t, r2: *mut mp_limb_t, r3: *mut mp_limb_t, rn: mp_size_t, m0: *const mp_limb_t, m1: *const mp_limb_t, m2: *const mp_limb_t, m3: *const mp_limb_t, mn: mp_size_t, tp: *mut mp_limb_t);
    #[link_name = "__real___cugmp_cpu__gmpn_hgcd"]
    pub fn mpn_hgcd(ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, m: *mut hgcd_matrix, tp: *mut mp_limb_t) -> mp_size_t;
    #[link_name = "__real___cugmp_cpu__gmpn_hgcd_reduce"]
    pub fn mpn_hgcd_reduce(m: *mut hgcd_matrix, ap: *mut mp_limb_t, bp: *mut mp_limb_t, n: mp_size_t, p: mp_size_t, tp: *mut mp_limb_t) -> mp_size_t;
    /// GMP's half-gcd pieces, as its `mpn_hgcd` calls them.
    #[link_name = "__cugmp_cpu__gmpn_hgcd_step"]
    pub fn mpn_hgcd_step(n: mp_size_t, ap: *mut mp_limb_t, bp: *mut mp_limb_t, s: mp_size_t, m: *mut hgcd_matrix, tp: *mut mp_limb_t) -> mp_size_t;
    #[link_name = "__cugmp_cpu__gmpn_hgcd_matrix_init"]
    pub fn mpn_hgcd_matrix_init(m: *mut hgcd_matrix, n: mp_size_t, p: *mut mp_limb_t);
    #[link_name = "__cugmp_cpu__gmpn_hgcd_matrix_mul"]
    pub fn mpn_hgcd_matrix_mul(m: *mut hgcd_matrix, m1: *const hgcd_matrix, tp: *mut mp_limb_t);
    /// The scratch GMP's callers give `mpn_hgcd` and `mpn_hgcd_reduce`.
    #[link_name = "__cugmp_cpu__gmpn_hgcd_itch"]
    pub fn mpn_hgcd_itch(n: mp_size_t) -> mp_size_t;
    #[link_name = "__cugmp_cpu__gmpn_hgcd_reduce_itch"]
    pub fn mpn_hgcd_reduce_itch(n: mp_size_t, p: mp_size_t) -> mp_size_t;
    /// GMP's fat initialiser: fills `__gmpn_cpuvec` (src/gmp/dispatch.rs).
    #[link_name = "__cugmp_cpu__gmpn_cpuvec_init"]
    pub fn mpn_cpuvec_init();
    #[link_name = "__cugmp_cpu__gmp_default_allocate"]
    pub fn gmp_default_allocate(n: size_t) -> *mut c_void;
    #[link_name = "__cugmp_cpu__gmp_default_reallocate"]
    pub fn gmp_default_reallocate(p: *mut c_void, old: size_t, new: size_t) -> *mut c_void;
    #[link_name = "__cugmp_cpu__gmp_default_free"]
    pub fn gmp_default_free(p: *mut c_void, n: size_t);
    #[link_name = "__cugmp_cpu__gmpn_cmp"]
    pub fn mpn_cmp(a: *const mp_limb_t, b: *const mp_limb_t, n: mp_size_t) -> c_int;
}

// GMP's Broadwell loops, named for their addresses alone (src/gmp/zen3.rs
// puts them in its dispatch table).
#[cfg(all(target_arch = "x86_64", cugmp_broadwell_loops))]
unsafe extern "C" {
    #[link_name = "__cugmp_cpu__gmpn_mul_basecase_coreibwl"]
    pub fn mpn_mul_basecase_coreibwl();
    #[link_name = "__cugmp_cpu__gmpn_sqr_basecase_coreibwl"]
    pub fn mpn_sqr_basecase_coreibwl();
    #[link_name = "__cugmp_cpu__gmpn_mul_1_coreibwl"]
    pub fn mpn_mul_1_coreibwl();
    #[link_name = "__cugmp_cpu__gmpn_addmul_1_coreibwl"]
    pub fn mpn_addmul_1_coreibwl();
}

// GMP's mpn building blocks (the compatibility entry points of
// src/abi/compat.rs, radix conversion's carries, the product fold).
unsafe extern "C" {
    // Through GMP's dispatch table: its loop for the processor, or the IFMA
    // kernel where src/cpu/ifma.rs put it there.
    #[link_name = "__cugmp_cpu__gmpn_mul_basecase"]
    pub fn mpn_mul_basecase(rp: *mut mp_limb_t, up: *const mp_limb_t, un: mp_size_t, vp: *const mp_limb_t, vn: mp_size_t);
    #[link_name = "__cugmp_cpu__gmpn_copyi"]
    pub fn mpn_copyi(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t);
    #[link_name = "__cugmp_cpu__gmpn_add_n"]
    pub fn mpn_add_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_sub_n"]
    pub fn mpn_sub_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_add_1"]
    pub fn mpn_add_1(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, v: mp_limb_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_sub_1"]
    pub fn mpn_sub_1(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, v: mp_limb_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_mul_1"]
    pub fn mpn_mul_1(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, v: mp_limb_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_lshift"]
    pub fn mpn_lshift(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, count: libc::c_uint) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_rshift"]
    pub fn mpn_rshift(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, count: libc::c_uint) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_addmul_1"]
    pub fn mpn_addmul_1(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, v: mp_limb_t) -> mp_limb_t;
    #[link_name = "__cugmp_cpu__gmpn_modexact_1c_odd"]
    pub fn mpn_modexact_1c_odd(up: *const mp_limb_t, n: mp_size_t, d: mp_limb_t, c: mp_limb_t) -> mp_limb_t;
}
