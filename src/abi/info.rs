//! cuGMP's own functions (`cugmp_*`): what was built, which device is used,
//! which thresholds are in force.

use super::boundary;
use crate::algorithms::{route, self_test};
use crate::gmp::embedded;
use crate::gpu;
use crate::stats::Op;
use libc::{c_char, c_int, c_long, size_t};
use std::ffi::CStr;

static VERSION: &CStr = match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
    Ok(v) => v,
    Err(_) => panic!("version string"),
};

/// cuGMP's version, e.g. "0.1.0".
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_version() -> *const c_char {
    VERSION.as_ptr()
}

/// The version of the embedded GMP (the CPU engine), e.g. "6.3.0".
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_gmp_version() -> *const c_char {
    unsafe { embedded::__gmp_version }
}

/// 1 if this build carries GPU kernels (nvcc was found at build time), else 0.
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_kernels_compiled() -> c_int {
    gpu::KERNELS_COMPILED as c_int
}

/// 1 if a GPU is in use by this process (initialising the engine if needed),
/// else 0: CUGMP_GPU=off, no kernels, no driver, no device, or a failed start.
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_gpu_in_use() -> c_int {
    boundary!("cugmp_gpu_in_use", gpu::get().is_some() as c_int)
}

/// Writes the GPU's name, NUL-terminated and truncated to `size` bytes, into
/// `buf`. Returns 0, or -1 (and writes nothing) when no GPU is in use or
/// `buf` is NULL or `size` is 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_gpu_name(buf: *mut c_char, size: size_t) -> c_int {
    boundary!("cugmp_gpu_name", {
        match gpu::get() {
            Some(g) if !buf.is_null() && size > 0 => {
                let bytes = g.name.as_bytes();
                let n = bytes.len().min(size - 1);
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr() as *const c_char, buf, n);
                    *buf.add(n) = 0;
                }
                0
            }
            _ => -1,
        }
    })
}

/// The operand size in limbs from which CUGMP_GPU=auto sends `op` ("mul",
/// "add", "sub", "shift", "and", "ior", "xor", "com", "set_str", "get_str", "fac_ui",
/// "bin_uiui", "gf2x_mul"; "powm_batch" in items of a batch the GPU's
/// kernels take)
/// to the GPU; -1 where it always stays on the CPU, -2 for an unknown name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_threshold(op: *const c_char) -> c_long {
    boundary!("cugmp_threshold", {
        if op.is_null() {
            return -2;
        }
        let name = unsafe { CStr::from_ptr(op) }.to_bytes();
        match Op::ALL.iter().find(|o| o.name().as_bytes() == name) {
            Some(o) => route::auto_threshold(*o).map_or(-1, |t| t as c_long),
            None => -2,
        }
    })
}

/// How many GPU attempts this process has finished on the CPU after a GPU
/// failure (out of memory, launch failure, injected fault, operands too
/// large for the device): the results are right either way.
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_gpu_fallbacks() -> libc::c_ulong {
    crate::stats::fallback_total() as libc::c_ulong
}

/// How many operations this process has completed on the GPU (CPU fallbacks
/// after a GPU failure are not counted).
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_gpu_operations() -> libc::c_ulong {
    crate::stats::gpu_total() as libc::c_ulong
}

/// How many transfers between host and device this process has made by DMA
/// alone, their limbs lying in pinned blocks (the large products' limbs;
/// `CUGMP_PINNED`), and so with no copy on the host.
#[unsafe(no_mangle)]
pub extern "C" fn cugmp_pinned_transfers() -> libc::c_ulong {
    crate::stats::pinned_transfers().0 as libc::c_ulong
}

/// Benchmark support: the mean time in seconds of `op` ("copy" (a
/// device-to-device copy, the bandwidth ceiling), "add", "sub", "shl", "shr",
/// "and", "mul", "sqr") on `limbs`-limb operands already in device memory,
/// over `reps` runs timed with CUDA events, into `*seconds`, and the bytes the
/// operation reads and writes in device memory into `*bytes`. Returns 0, -1
/// when no GPU is in use or it fails, -2 for an unknown name or NULL pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_bench_resident(op: *const c_char, limbs: size_t, reps: c_int, seconds: *mut f64, bytes: *mut f64) -> c_int {
    boundary!("cugmp_bench_resident", {
        use gpu::resident::Resident;
        if op.is_null() || seconds.is_null() || bytes.is_null() || limbs == 0 {
            return -2;
        }
        let Some(which) = Resident::named(unsafe { CStr::from_ptr(op) }.to_bytes()) else { return -2 };
        match gpu::get().map(|g| g.time_resident(which, limbs, reps.max(1) as usize)) {
            Some(Ok((s, b))) => {
                unsafe {
                    *seconds = s;
                    *bytes = b as f64;
                }
                0
            }
            _ => -1,
        }
    })
}

/// Benchmark support: the mean time in seconds of adding two `limbs`-limb
/// operands from host memory into host memory on the GPU, staged as `how`
/// says: "abi" (what mpz_add does under CUGMP_GPU=force: the engine's own
/// copies, threaded through pinned slots when large; "pageable" is the same,
/// its name from before those copies), "pinned" (one thread's host copies
/// through pinned staging buffers), "zero-copy" (the kernel
/// reads and writes pinned host memory over PCIe), "pinned-operands" (DMA
/// only, as if the operands lived in pinned memory), "registered" (the
/// caller's buffers page-locked for the call, DMA straight from and to
/// them, registration included); or one transfer alone, staged by the
/// engine's copies: "up" (n host limbs to the device), "down" (n device
/// limbs into a host buffer already written), "up-gap" and "down-gap" (the
/// same with 300 us idle before each, untimed). Returns as
/// `cugmp_bench_resident`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_bench_transfer(how: *const c_char, limbs: size_t, reps: c_int, seconds: *mut f64) -> c_int {
    boundary!("cugmp_bench_transfer", {
        use gpu::resident::Transfer;
        if how.is_null() || seconds.is_null() || limbs == 0 {
            return -2;
        }
        let Some(which) = Transfer::named(unsafe { CStr::from_ptr(how) }.to_bytes()) else { return -2 };
        match gpu::get().map(|g| g.time_transfer(which, limbs, reps.max(1) as usize)) {
            Some(Ok(s)) => {
                unsafe { *seconds = s };
                0
            }
            _ => -1,
        }
    })
}

/// The GPU in use: total memory in bytes, compute capability, multiprocessor
/// count (any pointer may be NULL). Returns 0, or -1 when no GPU is in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_gpu_info(total_mem: *mut size_t, cc_major: *mut c_int, cc_minor: *mut c_int, multiprocessors: *mut c_int) -> c_int {
    boundary!("cugmp_gpu_info", {
        let Some(g) = gpu::get() else { return -1 };
        unsafe {
            if !total_mem.is_null() {
                *total_mem = g.total_mem;
            }
            if !cc_major.is_null() {
                *cc_major = g.compute_capability.0;
            }
            if !cc_minor.is_null() {
                *cc_minor = g.compute_capability.1;
            }
            if !multiprocessors.is_null() {
                *multiprocessors = g.multiprocessors as c_int;
            }
        }
        0
    })
}

/// A quick self-test: products (1 to 10^5 limbs, squares among them), sums
/// and two's-complement logic computed by the GPU engine and compared with
/// the embedded GMP. Returns how many differed (0 is a pass) and writes how
/// many were checked to `*checked` (if not NULL); -1 when no GPU is in use,
/// -2 when the GPU failed (an error, not a wrong result).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cugmp_self_test(checked: *mut c_int) -> c_int {
    boundary!("cugmp_self_test", {
        let Some(g) = gpu::get() else { return -1 };
        match self_test::run(g) {
            Ok((done, wrong)) => {
                if !checked.is_null() {
                    unsafe { *checked = done as c_int };
                }
                wrong as c_int
            }
            Err(_) => -2,
        }
    })
}
