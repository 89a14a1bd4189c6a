//! Shared by the integration tests: where the built library is, a staged copy
//! with its soname and the libgmp.so.10 alias, and libcugmp.so loaded with
//! `dlopen(RTLD_DEEPBIND)` so that it never shares symbols with the reference
//! GMP (rug's static copy) linked into the test binary.
#![allow(dead_code)]

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// target/<profile>/ (tests run from target/<profile>/deps/).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target dir").to_path_buf()
}

/// The library cargo built for this test run: `deps/libcugmp.so` (cargo test
/// builds it there and does not copy it up to target/<profile>/).
pub fn cdylib() -> PathBuf {
    let p = target_dir().join("deps").join("libcugmp.so");
    assert!(p.is_file(), "{} not built", p.display());
    p
}

/// A directory holding `lib/libcugmp.so.10` (the soname), `lib/libcugmp.so`,
/// `alias/libgmp.so.10` -> libcugmp, and `include/cuGMP.h`. Made once per test
/// binary (its tests run in parallel).
pub fn stage() -> PathBuf {
    static STAGE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    STAGE.get_or_init(make_stage).clone()
}

fn make_stage() -> PathBuf {
    let name = std::env::current_exe().unwrap().file_name().unwrap().to_string_lossy().into_owned();
    let dir = target_dir().join("stage").join(name);
    let lib = dir.join("lib");
    let alias = dir.join("alias");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&alias).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::copy(cdylib(), lib.join("libcugmp.so.10")).unwrap();
    std::os::unix::fs::symlink("libcugmp.so.10", lib.join("libcugmp.so")).unwrap();
    std::os::unix::fs::symlink(lib.join("libcugmp.so.10"), alias.join("libgmp.so.10")).unwrap();
    std::fs::copy(manifest().join("include/cuGMP.h"), dir.join("include/cuGMP.h")).unwrap();
    dir
}

pub fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The embedded GMP's gmp.h and static libgmp.a (the reference GMP 6.3.0).
pub fn gmp_include_dir() -> PathBuf {
    PathBuf::from(env!("CUGMP_GMP_INCLUDE_DIR"))
}
pub fn gmp_static_lib() -> PathBuf {
    PathBuf::from(env!("CUGMP_GMP_LIB_DIR")).join("libgmp.a")
}

pub fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// libcugmp.so opened in its own symbol scope.
pub struct Library {
    handle: *mut libc::c_void,
}

unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    pub fn open() -> Library {
        let path = CString::new(cdylib().to_str().unwrap()).unwrap();
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
