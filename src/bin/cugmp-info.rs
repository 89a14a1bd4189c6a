//! `cugmp-info`: what the libcugmp.so this program finds (the dynamic
//! loader's usual search: LD_LIBRARY_PATH, then this binary's RUNPATH
//! `$ORIGIN/../lib`, then the system) was built with, which GPU it uses,
//! the thresholds in force, and a quick self-test of the GPU engine against
//! the embedded GMP. Exit status: 0 when the self-test passed or there is no
//! GPU to test, 1 when a GPU result was wrong or the library is missing.
//!
//! It loads the library with dlopen rather than linking it, so it reports on
//! the installed library, never on a copy of its own.

use libc::{c_char, c_int, c_long, size_t};
use std::ffi::{CStr, CString};

fn sym<T: Copy>(handle: *mut libc::c_void, name: &str) -> Option<T> {
    let c = CString::new(name).ok()?;
    let p = unsafe { libc::dlsym(handle, c.as_ptr()) };
    if p.is_null() {
        None
    } else {
        // SAFETY: T is the function pointer type of `name` as cuGMP.h declares it.
        Some(unsafe { std::mem::transmute_copy::<*mut libc::c_void, T>(&p) })
    }
}

fn text(f: Option<extern "C" fn() -> *const c_char>) -> String {
    match f {
        Some(f) => unsafe { CStr::from_ptr(f()) }.to_string_lossy().into_owned(),
        None => "(not exported)".into(),
    }
}

fn main() {
    let lib = CString::new("libcugmp.so.10").unwrap_or_default();
    let handle = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        let why = unsafe { CStr::from_ptr(libc::dlerror()) }.to_string_lossy().into_owned();
        eprintln!("cugmp-info: cannot load libcugmp.so.10: {why}");
        std::process::exit(1);
    }
    let mut path = [0 as c_char; 4096];
    let info_path = if unsafe { libc::dlinfo(handle, libc::RTLD_DI_ORIGIN, path.as_mut_ptr() as *mut libc::c_void) } == 0 {
        let dir = unsafe { CStr::from_ptr(path.as_ptr()) }.to_string_lossy().into_owned();
        std::fs::canonicalize(&dir).map_or(dir, |p| p.display().to_string())
    } else {
        "?".into()
    };
    println!("library:          libcugmp.so.10 from {info_path}");
    println!("cuGMP version:    {}", text(sym(handle, "cugmp_version")));
    println!("embedded GMP:     {}", text(sym(handle, "cugmp_gmp_version")));
    let kernels: Option<extern "C" fn() -> c_int> = sym(handle, "cugmp_kernels_compiled");
    println!("GPU kernels:      {}", if kernels.is_some_and(|f| f() == 1) { "compiled in" } else { "not compiled in (CPU engine only)" });
    println!("CUGMP_GPU:        {}", std::env::var("CUGMP_GPU").unwrap_or_else(|_| "(unset: auto)".into()));

    let info: Option<unsafe extern "C" fn(*mut size_t, *mut c_int, *mut c_int, *mut c_int) -> c_int> = sym(handle, "cugmp_gpu_info");
    let name: Option<unsafe extern "C" fn(*mut c_char, size_t) -> c_int> = sym(handle, "cugmp_gpu_name");
    let (mut mem, mut major, mut minor, mut sms) = (0usize, 0, 0, 0);
    let mut buf = [0 as c_char; 256];
    let gpu = match (info, name) {
        (Some(info), Some(name)) => unsafe { info(&mut mem, &mut major, &mut minor, &mut sms) == 0 && name(buf.as_mut_ptr(), buf.len()) == 0 },
        _ => false,
    };
    if gpu {
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        println!("device:           {name}, {} MiB, compute capability {major}.{minor}, {sms} multiprocessors", mem >> 20);
    } else {
        println!("device:           none in use (no driver, no device, CUGMP_GPU=off, or no kernels): everything runs on the embedded GMP");
    }

    println!("thresholds (CUGMP_GPU=auto sends an operation to the GPU from this many limbs; powm_batch: items):");
    let threshold: Option<unsafe extern "C" fn(*const c_char) -> c_long> = sym(handle, "cugmp_threshold");
    let ops = [
        "mul", "gmp-internal mul", "add", "sub", "shift", "and", "ior", "xor", "com", "set_str", "get_str", "sqrt", "div", "fac_ui", "bin_uiui", "powm_batch", "gf2x_mul",
    ];
    for op in ops {
        let c = CString::new(op).unwrap_or_default();
        let t = threshold.map_or(-2, |f| unsafe { f(c.as_ptr()) });
        println!("  {op:<16} {}", if t >= 0 { format!("{t}") } else { "never (CPU)".into() });
    }

    let self_test: Option<unsafe extern "C" fn(*mut c_int) -> c_int> = sym(handle, "cugmp_self_test");
    let mut checked = 0;
    let status = match self_test.map(|f| unsafe { f(&mut checked) }) {
        Some(0) => {
            println!("self-test:        passed ({checked} GPU results identical to the embedded GMP's)");
            0
        }
        Some(-1) | None => {
            println!("self-test:        skipped (no GPU in use)");
            0
        }
        Some(-2) => {
            println!("self-test:        the GPU failed with an error (results would fall back to the CPU)");
            1
        }
        Some(n) => {
            println!("self-test:        FAILED: {n} of {checked} GPU results differ from the embedded GMP's");
            1
        }
    };
    std::process::exit(status);
}
