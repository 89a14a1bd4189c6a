//! What both fuzz targets share: the library under test (libcugmp.so,
//! `CUGMP_LIBRARY` or ../target/release/libcugmp.so) opened in its own
//! symbol scope, its functions, and an `mpz_t` of it. The reference is GMP
//! through rug; `api()` proves the two are different libraries before the
//! first input runs.
#![allow(dead_code)]

#[path = "../../tests/common/library.rs"]
mod library;

pub use library::{Library, Mpz};
use gmp_mpfr_sys::gmp;
use libc::{c_char, c_int, c_ulong, c_void};
use rug::Integer;
use std::ffi::CStr;
use std::sync::OnceLock;

pub type Ptr = *mut Mpz;
pub type Bin = unsafe extern "C" fn(Ptr, Ptr, Ptr);
pub type Un = unsafe extern "C" fn(Ptr, Ptr);
pub type Shift = unsafe extern "C" fn(Ptr, Ptr, c_ulong);

pub struct Api {
    pub init: unsafe extern "C" fn(Ptr),
    pub init2: unsafe extern "C" fn(Ptr, c_ulong),
    pub clear: unsafe extern "C" fn(Ptr),
    pub set_str: unsafe extern "C" fn(Ptr, *const c_char, c_int) -> c_int,
    pub get_str: unsafe extern "C" fn(*mut c_char, c_int, Ptr) -> *mut c_char,
    pub add: Bin,
    pub sub: Bin,
    pub mul: Bin,
    pub and: Bin,
    pub ior: Bin,
    pub xor: Bin,
    pub com: Un,
    pub mul_2exp: Shift,
    pub tdiv_q_2exp: Shift,
    pub fdiv_q_2exp: Shift,
    pub cdiv_q_2exp: Shift,
    pub free_func: *const unsafe extern "C" fn(*mut c_void, usize),
    _lib: Library,
}

unsafe impl Send for Api {}
unsafe impl Sync for Api {}

pub fn api() -> &'static Api {
    static API: OnceLock<Api> = OnceLock::new();
    API.get_or_init(|| {
        let path = std::env::var_os("CUGMP_LIBRARY")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/libcugmp.so").into());
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
                and: lib.sym("__gmpz_and"),
                ior: lib.sym("__gmpz_ior"),
                xor: lib.sym("__gmpz_xor"),
                com: lib.sym("__gmpz_com"),
                mul_2exp: lib.sym("__gmpz_mul_2exp"),
                tdiv_q_2exp: lib.sym("__gmpz_tdiv_q_2exp"),
                fdiv_q_2exp: lib.sym("__gmpz_fdiv_q_2exp"),
                cdiv_q_2exp: lib.sym("__gmpz_cdiv_q_2exp"),
                free_func: lib.sym("__gmp_free_func"),
                _lib: lib,
            }
        }
    })
}

/// An mpz_t of the library under test.
pub struct Z(Box<Mpz>);

impl Z {
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

/// `mpz_get_str(NULL, base, z)` of the library under test.
pub fn get_str(z: &mut Z, base: i32) -> Option<Vec<u8>> {
    unsafe {
        let p = (api().get_str)(std::ptr::null_mut(), base, z.ptr());
        if p.is_null() {
            return None;
        }
        let s = CStr::from_ptr(p).to_bytes().to_vec();
        (*api().free_func)(p as *mut c_void, s.len() + 1);
        Some(s)
    }
}

/// The same through the reference GMP.
pub fn reference_get_str(x: &Integer, base: i32) -> Option<Vec<u8>> {
    unsafe {
        let p = gmp::mpz_get_str(std::ptr::null_mut(), base, x.as_raw());
        if p.is_null() {
            return None;
        }
        let s = CStr::from_ptr(p).to_bytes().to_vec();
        let mut free: Option<unsafe extern "C" fn(*mut c_void, usize)> = None;
        gmp::get_memory_functions(std::ptr::null_mut(), std::ptr::null_mut(), &mut free);
        if let Some(free) = free {
            free(p as *mut c_void, s.len() + 1);
        }
        Some(s)
    }
}

/// Panics (the fuzzer's finding) with both values' sizes when they differ.
#[track_caller]
pub fn same(what: &str, got: &Integer, want: &Integer) {
    if got != want {
        panic!(
            "MISMATCH in {what}: got {} bits (sign {}), want {} bits (sign {})",
            got.significant_bits(),
            got.cmp0() as i32,
            want.significant_bits(),
            want.cmp0() as i32
        );
    }
}
