//! The exported C ABI, and nothing else: GMP's functions that cuGMP defines
//! itself, its own `cugmp_*` functions, the targets of the hooks inside the
//! embedded GMP, and the generated trampolines that re-export the rest of
//! the embedded GMP. Every Rust-defined export is one line through
//! [`boundary!`] or [`routed!`] into the layer below, or straight into one
//! of the CPU engine's small operations, which cannot panic (src/cpu.rs);
//! nothing below calls up into here.
//!
//! Everything exported under a GMP name in this folder is found by build.rs
//! (it greps `extern "C" fn __gmp...`) and not re-exported a second time.
//! Module per family: [`mpz`], [`mpf`], [`mpn`], [`compat`], [`hooks`], and
//! cuGMP's own `cugmp_*`: [`info`], [`batch`] for many numbers at once,
//! [`gf2x`] for binary polynomials.

#![allow(non_camel_case_types, non_snake_case, clippy::missing_safety_doc)]

pub mod batch;
pub mod compat;
pub mod gf2x;
mod hooks;
pub mod info;
pub mod mpf;
pub mod mpn;
pub mod mpz;

/// The one panic boundary. A panic is a bug in cuGMP; GMP's answer to an
/// internal failure is `abort()`, and unwinding into C is undefined, so abort
/// with the function's name.
macro_rules! boundary {
    ($name:literal, $body:expr) => {
        $crate::abi::guarded($name, || $body)
    };
}
pub(crate) use boundary;

/// `f`, aborting with `name` if it panics (the boundary itself).
#[inline(always)]
pub(crate) fn guarded<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(_) => abort_after_panic(name),
    }
}

/// An export the routing may send straight to the embedded GMP: where
/// `$fast` holds, `$cpu` (GMP's own function, reached by a tail jump, or
/// the CPU engine's in its place, which cannot panic either), else
/// `$routed` behind the panic boundary. `$fast` only reads the operands'
/// sizes and a word of the routing's table (src/algorithms/route.rs,
/// `cpu_only`): nothing in it can panic, so it stands before the boundary,
/// and the fast path saves no registers for the boundary's sake.
macro_rules! routed {
    ($name:literal, $fast:expr => $cpu:expr, $routed:expr) => {{
        // (Some checks are safe functions, some read the operands.)
        #[allow(unused_unsafe)]
        let fast = unsafe { $fast };
        if fast {
            unsafe { $cpu }
        } else {
            $crate::abi::behind_boundary($name, move || unsafe { $routed })
        }
    }};
}
pub(crate) use routed;

/// `f` behind the panic boundary, out of line: a function with a landing
/// pad saves registers on entry, and `routed!`'s fast path needs none.
#[inline(never)]
pub(crate) fn behind_boundary<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    guarded(name, f)
}

/// Input GMP's API has no answer for (a NULL array where items are asked,
/// a negative size): a message naming the function, then `abort()`, as GMP
/// stops on input it cannot serve.
#[cold]
pub(crate) fn bad_input(function: &str, what: &str) -> ! {
    eprintln!("cuGMP: {function}: {what}");
    std::process::abort()
}

#[cold]
pub(crate) fn abort_after_panic(name: &str) -> ! {
    eprintln!("cugmp: internal error in {name}; aborting");
    std::process::abort()
}

// The trampolines name the private functions untyped (`fn()`): a jump needs
// no signature. src/gmp/embedded.rs declares some of them again with their
// types.
mod trampolines {
    //! GMP functions cuGMP does not define itself, served by the embedded GMP.
    include!(concat!(env!("OUT_DIR"), "/trampolines.rs"));
}

/// Runs when the dynamic loader maps libcugmp.so: with `CUGMP_LOG=1`, one line
/// saying which library serves this process (functions served straight by the
/// embedded GMP log nothing else); with `CUGMP_STATS=1` or `CUGMP_PROFILE=1`,
/// the exit-time tables; GMP's default memory functions with huge pages
/// for large blocks (src/gmp/memory.rs); GMP's loops for Zen 3 on Zen 3
/// and later (src/gmp/zen3.rs) and the IFMA kernel where the processor has
/// it (src/cpu/ifma.rs); and the routing's fast path made ready.
extern "C" fn on_load() {
    // No panic may escape a constructor; this only reads the environment.
    let _ = std::panic::catch_unwind(|| {
        let cfg = crate::config::get();
        crate::config::log!(
            "libcugmp {} loaded (CPU engine: embedded GMP 6.3.0; CUGMP_GPU={:?}; kernels {})",
            env!("CARGO_PKG_VERSION"),
            cfg.gpu,
            if crate::gpu::KERNELS_COMPILED { "compiled in" } else { "not compiled in" }
        );
        if cfg.stats {
            crate::stats::print_at_exit();
        }
        if cfg.profile {
            crate::stats::enable_profile();
        }
        crate::gmp::memory::install();
        // GMP's Zen 3 loops first: on Zen 4 the IFMA kernel then takes the
        // schoolbook slot, and leaves GMP's Zen 3 loop the sizes it declines.
        if crate::gmp::zen3::install(cfg.cpu_zen3) {
            crate::config::log!("the embedded GMP takes GMP's loops and thresholds for Zen 3");
        }
        crate::cpu::ifma::install();
        crate::algorithms::route::settle();
    });
}

#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;
