//! The GPU engine, at GMP's `mpn` level: limb slices in, limb slices out
//! (or signed magnitudes for the linear operations); no `mpz_t`, no
//! allocation policy of the caller's, no routing: those belong to the layers
//! above. Every operation returns `Result`; the layer above finishes
//! failures on the CPU.
//!
//! | module        | owns                                                                 |
//! |---------------|----------------------------------------------------------------------|
//! | [`device`]    | the driver (cudarc, loaded dynamically), the context, the module of kernels, streams, errors, device-memory claims |
//! | [`staging`]   | limbs between host and device: pinned slots, copy threads kept between transfers |
//! | [`ntt`]       | exact products: transform plans, twiddle tables, the passes, the CRT and carries (cuda/ntt.cu) |
//! | [`gfp`]       | the second product engine (`CUGMP_PRODUCT=gfp`): the FFT over the generalized Fermat prime (2^61 + 2^41)^8 + 1 (cuda/gfp.cu) |
//! | [`linear`]    | add, sub, shifts, two's-complement logic (cuda/linear.cu); the products' carry pass |
//! | [`root`]      | a square root's last Newton steps and its correction on device-resident numbers, at positions the algorithm layer gives |
//! | [`ladder`]    | squarings and products one after another on device-resident numbers, then a shift: a factorial's or binomial's odd part |
//! | [`quotient`]  | a quotient's last Newton steps for the inverse, its estimate and its remainder's low limbs on device-resident numbers, the same way |
//! | [`powm`]      | modular exponentiation of many items at once, odd moduli (cuda/powm.cu) |
//! | [`gf2x`]      | products of binary polynomials by the additive FFT over GF(2^64) (cuda/gf2x.cu) |
//! | [`resident`]  | measurements the benchmarks ask for (operands already on the device, transfer variants) |
//!
//! It may use the ground floor (`gmp`, in tests) and the leaves; it knows
//! nothing of `mpz_t`s, of routing or of the ABI.

/// Launch kernel `$name` with geometry `$cfg` on `$stream`.
macro_rules! launch_with {
    ($gpu:expr, $stream:expr, $name:ident, $cfg:expr, $($arg:expr),+) => {{
        let mut builder = $stream.launch_builder(&$gpu.kernels.$name);
        $( builder.arg($arg); )+
        unsafe { builder.launch($cfg) }?;
    }};
}

/// Launch grid-stride kernel `$name` over `$n` elements on `$stream`.
macro_rules! launch {
    ($gpu:expr, $stream:expr, $name:ident, $n:expr, $($arg:expr),+) => {
        launch_with!($gpu, $stream, $name, $gpu.grid_for($n), $($arg),+)
    };
}

/// Launch element-wise kernel `$name` (ELEMENT(k) in cuda/cugmp.cuh) over `$n` limbs.
macro_rules! launch_elementwise {
    ($gpu:expr, $stream:expr, $name:ident, $n:expr, $($arg:expr),+) => {
        launch_with!($gpu, $stream, $name, $gpu.elementwise_grid($n)?, $($arg),+)
    };
}

pub mod device;
pub mod linear;
pub(crate) mod ntt;
pub(crate) mod gfp;
pub mod gf2x;
pub mod ladder;
pub mod powm;
pub mod quotient;
pub mod radix;
pub mod root;
pub mod resident;
pub mod staging;

pub use device::{all, available, get, opened, opened_within, reserve, Availability, Gpu, GpuError, InFlight, Reservation, KERNELS_COMPILED};
