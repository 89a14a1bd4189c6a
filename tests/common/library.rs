//! libcugmp.so opened in its own symbol scope, and GMP's `mpz_t` as the
//! library lays it out. Shared by the integration tests (tests/common) and the
//! fuzz targets (fuzz/), so it names no build-time paths.
#![allow(dead_code)]

use std::ffi::{CStr, CString};
use std::path::Path;

/// libcugmp.so opened in its own symbol scope.
pub struct Library {
    handle: *mut libc::c_void,
}

unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    pub fn open_at(path: &Path) -> Library {
        let path = CString::new(path.to_str().expect("library path is UTF-8")).expect("library path has no NUL");
        // RTLD_DEEPBIND: the library resolves its own references to itself first,
        // never to rug's GMP in this executable; RTLD_LOCAL keeps its names out
        // of the global scope.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND) };
        if handle.is_null() {
            let err = unsafe { CStr::from_ptr(libc::dlerror()) };
            panic!("dlopen libcugmp.so: {err:?}");
        }
        Library { handle }
    }

    /// Proves the reference is GMP and not this library: the library's names
    /// stay out of the global scope, and `reference_mul` (the reference's
    /// `mpz_mul`) is another function than the library's `__gmpz_mul`.
    pub fn assert_reference_is_independent(&self, reference_mul: usize) {
        let name = CString::new("cugmp_version").unwrap();
        assert!(
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }.is_null(),
            "libcugmp.so leaked into the global scope: the reference could be resolving to it"
        );
        let ours: usize = unsafe { self.sym::<usize>("__gmpz_mul") };
        assert_ne!(reference_mul, ours, "the reference mpz_mul is the library under test");
        let version: usize = unsafe { self.sym::<usize>("cugmp_version") };
        assert_ne!(version, 0, "the library under test is not cuGMP");
    }

    /// # Safety
    /// `T` must be the symbol's true type (a function pointer type or a pointer).
    pub unsafe fn sym<T: Copy>(&self, name: &str) -> T {
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut libc::c_void>());
        let c = CString::new(name).unwrap();
        let p = unsafe { libc::dlsym(self.handle, c.as_ptr()) };
        assert!(!p.is_null(), "libcugmp.so does not export {name}");
        unsafe { std::mem::transmute_copy(&p) }
    }
}

/// GMP's `__mpz_struct`, as the library under test lays it out.
#[repr(C)]
pub struct Mpz {
    pub alloc: libc::c_int,
    pub size: libc::c_int,
    pub d: *mut u64,
}

impl Mpz {
    /// An unset variable for the library's init functions to fill.
    pub fn blank() -> Mpz {
        Mpz { alloc: -1, size: -1, d: std::ptr::null_mut() }
    }

    /// `x` in a fresh variable of the library under test: zero through its
    /// `mpz_init` (GMP's shared dummy limb), anything else through its
    /// `mpz_init2` with the limbs copied in.
    pub fn load(init: unsafe extern "C" fn(*mut Mpz), init2: unsafe extern "C" fn(*mut Mpz, libc::c_ulong), x: &rug::Integer) -> Mpz {
        let mut m = Mpz::blank();
        let limbs = x.as_limbs();
        unsafe {
            if limbs.is_empty() {
                init(&mut m);
                return m;
            }
            init2(&mut m, 64 * limbs.len() as libc::c_ulong);
            assert!(m.alloc as usize >= limbs.len(), "mpz_init2 allocated too little");
            std::ptr::copy_nonoverlapping(limbs.as_ptr(), m.d, limbs.len());
        }
        m.size = if *x < 0 { -(limbs.len() as libc::c_int) } else { limbs.len() as libc::c_int };
        m
    }

    /// The value, checking GMP's invariants on the way: `_mp_d` never NULL,
    /// `|size| <= alloc` (or the shared limb of a fresh zero), no high zero limb.
    pub fn value(&self) -> rug::Integer {
        let n = self.size.unsigned_abs() as usize;
        assert!(!self.d.is_null(), "_mp_d is NULL");
        assert!(n <= self.alloc as usize || (n == 0 && self.alloc == 0), "size {n} > alloc {}", self.alloc);
        let limbs = unsafe { std::slice::from_raw_parts(self.d, n) };
        assert!(n == 0 || limbs[n - 1] != 0, "result not normalized: high limb zero (size {n})");
        let v = rug::Integer::from_digits(limbs, rug::integer::Order::Lsf);
        if self.size < 0 { -v } else { v }
    }
}
