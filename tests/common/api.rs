//! The library under test as the tests, the benchmarks and the fuzz targets
//! call it: its functions (`api()`, opened once: `CUGMP_LIBRARY`, else the
//! includer's `default_library()`), an `mpz_t` of it (`Z`), and the
//! comparisons with the reference GMP (rug). `api()` proves the two are
//! different libraries before anything is compared.
#![allow(dead_code)]

use super::library::{Library, Mpz};
use gmp_mpfr_sys::gmp;
use libc::{c_char, c_int, c_ulong, c_void};
use rug::Integer;
use std::ffi::CStr;
use std::sync::OnceLock;

pub type Ptr = *mut Mpz;
/// GMP's `mpz_srcptr`: an operand the function only reads.
pub type SrcPtr = *const Mpz;
pub type Bin = unsafe extern "C" fn(Ptr, SrcPtr, SrcPtr);
pub type Un = unsafe extern "C" fn(Ptr, SrcPtr);
pub type Shift = unsafe extern "C" fn(Ptr, SrcPtr, c_ulong);
/// mpn_add_n, mpn_sub_n: rp, up, vp, n; the carry or borrow out.
pub type MpnAddSub = unsafe extern "C" fn(*mut u64, *const u64, *const u64, i64) -> u64;
/// mpn_lshift, mpn_rshift: rp, up, n, count; the bits shifted out.
pub type MpnShift = unsafe extern "C" fn(*mut u64, *const u64, i64, libc::c_uint) -> u64;
/// A batch of two-operand items: (n, r, a, b).
pub type Batch3 = unsafe extern "C" fn(usize, *const Ptr, *const SrcPtr, *const SrcPtr);

pub struct Api {
    pub init: unsafe extern "C" fn(Ptr),
    pub init2: unsafe extern "C" fn(Ptr, c_ulong),
    pub clear: unsafe extern "C" fn(Ptr),
    pub set_str: unsafe extern "C" fn(Ptr, *const c_char, c_int) -> c_int,
    pub get_str: unsafe extern "C" fn(*mut c_char, c_int, SrcPtr) -> *mut c_char,
    pub add: Bin,
    pub sub: Bin,
    pub mul: Bin,
    pub set: Un,
    pub mul_ui: Shift,
    pub mul_si: unsafe extern "C" fn(Ptr, SrcPtr, libc::c_long),
    pub add_ui: Shift,
    pub sub_ui: Shift,
    pub and: Bin,
    pub ior: Bin,
    pub xor: Bin,
    pub com: Un,
    pub mul_2exp: Shift,
    pub tdiv_q_2exp: Shift,
    pub fdiv_q_2exp: Shift,
    pub cdiv_q_2exp: Shift,
    pub mpn_mul: unsafe extern "C" fn(*mut u64, *const u64, i64, *const u64, i64) -> u64,
    pub mpn_mul_n: unsafe extern "C" fn(*mut u64, *const u64, *const u64, i64),
    pub mpn_sqr: unsafe extern "C" fn(*mut u64, *const u64, i64),
    pub mpn_add_n: MpnAddSub,
    pub mpn_sub_n: MpnAddSub,
    pub mpn_lshift: MpnShift,
    pub mpn_rshift: MpnShift,
    pub tdiv_qr: unsafe extern "C" fn(Ptr, Ptr, SrcPtr, SrcPtr),
    pub tdiv_q: Bin,
    pub sqrt: Un,
    pub sqrtrem: unsafe extern "C" fn(Ptr, Ptr, SrcPtr),
    pub rootrem: unsafe extern "C" fn(Ptr, Ptr, SrcPtr, c_ulong),
    pub root: unsafe extern "C" fn(Ptr, SrcPtr, c_ulong) -> c_int,
    pub perfect_square_p: unsafe extern "C" fn(SrcPtr) -> c_int,
    pub gcd: Bin,
    pub gcdext: unsafe extern "C" fn(Ptr, Ptr, Ptr, SrcPtr, SrcPtr),
    pub powm: unsafe extern "C" fn(Ptr, SrcPtr, SrcPtr, SrcPtr),
    pub invert: unsafe extern "C" fn(Ptr, SrcPtr, SrcPtr) -> c_int,
    pub jacobi: unsafe extern "C" fn(SrcPtr, SrcPtr) -> c_int,
    pub fac_ui: unsafe extern "C" fn(Ptr, c_ulong),
    pub bin_uiui: unsafe extern "C" fn(Ptr, c_ulong, c_ulong),
    pub ui_pow_ui: unsafe extern "C" fn(Ptr, c_ulong, c_ulong),
    /// cugmp_mul_batch, cugmp_mod_batch: (n, r, a, b).
    pub mul_batch: Batch3,
    pub mod_batch: Batch3,
    /// cugmp_powm_batch: (n, r, base, exp, mod).
    pub powm_batch: unsafe extern "C" fn(usize, *const Ptr, *const SrcPtr, *const SrcPtr, *const SrcPtr),
    /// cugmp_mpz_gf2x_mul: (r, a, b).
    pub gf2x_mul: Bin,
    /// cugmp_poly_mul: (r, a, na, b, nb).
    pub poly_mul: unsafe extern "C" fn(*const Ptr, *const SrcPtr, usize, *const SrcPtr, usize),
    /// GMP's `__gmp_free_func` variable (read at each use).
    pub free_func: *const unsafe extern "C" fn(*mut c_void, usize),
    // cuGMP's own functions (src/abi/info.rs).
    pub gpu_in_use: unsafe extern "C" fn() -> c_int,
    pub gpu_operations: unsafe extern "C" fn() -> c_ulong,
    pub pinned_transfers: unsafe extern "C" fn() -> c_ulong,
    pub gpu_fallbacks: unsafe extern "C" fn() -> c_ulong,
    pub gpu_name: unsafe extern "C" fn(*mut c_char, usize) -> c_int,
    pub threshold: unsafe extern "C" fn(*const c_char) -> libc::c_long,
    pub bench_resident: unsafe extern "C" fn(*const c_char, usize, c_int, *mut f64, *mut f64) -> c_int,
    pub bench_transfer: unsafe extern "C" fn(*const c_char, usize, c_int, *mut f64) -> c_int,
    pub lib: Library,
}

unsafe impl Send for Api {}
unsafe impl Sync for Api {}

pub fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        let path = std::env::var_os("CUGMP_LIBRARY").map(std::path::PathBuf::from).unwrap_or_else(super::default_library);
        let lib = Library::open_at(&path);
        lib.assert_reference_is_independent(gmp::mpz_mul as *const () as usize);
        unsafe {
            Api {
                init: lib.sym("__gmpz_init"),
                init2: lib.sym("__gmpz_init2"),
                clear: lib.sym("__gmpz_clear"),
                set_str: lib.sym("__gmpz_set_str"),
                get_str: lib.sym("__gmpz_get_str"),
                add: lib.sym("__gmpz_add"),
                sub: lib.sym("__gmpz_sub"),
                mul: lib.sym("__gmpz_mul"),
                set: lib.sym("__gmpz_set"),
                mul_ui: lib.sym("__gmpz_mul_ui"),
                mul_si: lib.sym("__gmpz_mul_si"),
                add_ui: lib.sym("__gmpz_add_ui"),
                sub_ui: lib.sym("__gmpz_sub_ui"),
                and: lib.sym("__gmpz_and"),
                ior: lib.sym("__gmpz_ior"),
                xor: lib.sym("__gmpz_xor"),
                com: lib.sym("__gmpz_com"),
                mul_2exp: lib.sym("__gmpz_mul_2exp"),
                tdiv_q_2exp: lib.sym("__gmpz_tdiv_q_2exp"),
                fdiv_q_2exp: lib.sym("__gmpz_fdiv_q_2exp"),
                cdiv_q_2exp: lib.sym("__gmpz_cdiv_q_2exp"),
                mpn_mul: lib.sym("__gmpn_mul"),
                mpn_mul_n: lib.sym("__gmpn_mul_n"),
                mpn_sqr: lib.sym("__gmpn_sqr"),
                mpn_add_n: lib.sym("__gmpn_add_n"),
                mpn_sub_n: lib.sym("__gmpn_sub_n"),
                mpn_lshift: lib.sym("__gmpn_lshift"),
                mpn_rshift: lib.sym("__gmpn_rshift"),
                tdiv_qr: lib.sym("__gmpz_tdiv_qr"),
                tdiv_q: lib.sym("__gmpz_tdiv_q"),
                sqrt: lib.sym("__gmpz_sqrt"),
                sqrtrem: lib.sym("__gmpz_sqrtrem"),
                rootrem: lib.sym("__gmpz_rootrem"),
                root: lib.sym("__gmpz_root"),
                perfect_square_p: lib.sym("__gmpz_perfect_square_p"),
                gcd: lib.sym("__gmpz_gcd"),
                gcdext: lib.sym("__gmpz_gcdext"),
                powm: lib.sym("__gmpz_powm"),
                invert: lib.sym("__gmpz_invert"),
                jacobi: lib.sym("__gmpz_jacobi"),
                fac_ui: lib.sym("__gmpz_fac_ui"),
                bin_uiui: lib.sym("__gmpz_bin_uiui"),
                ui_pow_ui: lib.sym("__gmpz_ui_pow_ui"),
                mul_batch: lib.sym("cugmp_mul_batch"),
                mod_batch: lib.sym("cugmp_mod_batch"),
                powm_batch: lib.sym("cugmp_powm_batch"),
                poly_mul: lib.sym("cugmp_poly_mul"),
                gf2x_mul: lib.sym("cugmp_mpz_gf2x_mul"),
                free_func: lib.sym("__gmp_free_func"),
                gpu_in_use: lib.sym("cugmp_gpu_in_use"),
                gpu_operations: lib.sym("cugmp_gpu_operations"),
                pinned_transfers: lib.sym("cugmp_pinned_transfers"),
                gpu_fallbacks: lib.sym("cugmp_gpu_fallbacks"),
                gpu_name: lib.sym("cugmp_gpu_name"),
                threshold: lib.sym("cugmp_threshold"),
                bench_resident: lib.sym("cugmp_bench_resident"),
                bench_transfer: lib.sym("cugmp_bench_transfer"),
                lib,
            }
        }
    })
}

/// An mpz_t of the library under test.
pub struct Z(Box<Mpz>);

impl Z {
    pub fn new() -> Z {
        let mut m = Box::new(Mpz::blank());
        unsafe { (api().init)(&mut *m) };
        Z(m)
    }

    pub fn from(x: &Integer) -> Z {
        Z(Box::new(Mpz::load(api().init, api().init2, x)))
    }

    pub fn ptr(&mut self) -> Ptr {
        &mut *self.0
    }

    pub fn get(&self) -> Integer {
        self.0.value()
    }
}

impl Drop for Z {
    fn drop(&mut self) {
        unsafe { (api().clear)(&mut *self.0) };
    }
}

#[track_caller]
pub fn same(what: &str, got: &Integer, want: &Integer) {
    if got != want {
        panic!(
            "MISMATCH in {what}: got {} limbs (sign {}), want {} limbs (sign {}); low limb got {:#x} want {:#x}",
            got.significant_digits::<u64>(),
            got.cmp0() as i32,
            want.significant_digits::<u64>(),
            want.cmp0() as i32,
            got.as_limbs().first().copied().unwrap_or(0),
            want.as_limbs().first().copied().unwrap_or(0),
        );
    }
}

/// GMP's own mpz_get_str (rug's copy), for bases rug's API does not cover.
pub fn reference_get_str(x: &Integer, base: i32) -> Option<String> {
    unsafe {
        let p = gmp::mpz_get_str(std::ptr::null_mut(), base, x.as_raw());
        if p.is_null() {
            return None;
        }
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        let mut free: Option<unsafe extern "C" fn(*mut c_void, usize)> = None;
        gmp::get_memory_functions(std::ptr::null_mut(), std::ptr::null_mut(), &mut free);
        free.unwrap()(p as *mut c_void, s.len() + 1);
        Some(s)
    }
}

pub fn get_str(z: &mut Z, base: i32) -> Option<String> {
    unsafe {
        let p = (api().get_str)(std::ptr::null_mut(), base, z.ptr());
        if p.is_null() {
            return None;
        }
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        (*api().free_func)(p as *mut c_void, s.len() + 1);
        Some(s)
    }
}


/// `mpz_set_str(z, text, base)` on a variable holding 7, in the library and
/// in the reference: the return values must agree, and the values too where
/// the string was valid. Returns the library's variable.
pub fn check_set_str(text: &CStr, base: i32) -> Z {
    let mut z = Z::from(&Integer::from(7));
    let got = unsafe { (api().set_str)(z.ptr(), text.as_ptr(), base) };
    let mut want_value = Integer::from(7);
    let want = unsafe { gmp::mpz_set_str(want_value.as_raw_mut(), text.as_ptr(), base) };
    assert_eq!(got, want, "mpz_set_str({text:?}, {base}) return value");
    if want == 0 {
        same(&format!("mpz_set_str({text:?}, {base})"), &z.get(), &want_value);
    }
    z
}
