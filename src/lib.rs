//! cuGMP: `libcugmp.so`, a drop-in replacement for GMP 6.3's `libgmp.so.10`
//! whose large-operand arithmetic runs in handwritten CUDA kernels.
//!
//! | module       | owns                                                          | may not touch            |
//! |--------------|---------------------------------------------------------------|--------------------------|
//! | [`abi`]      | every exported symbol, GMP's types, the panic boundary, limbs' allocation through GMP's memory functions | the driver, kernels |
//! | [`dispatch`] | per operation: CPU or GPU, fault injection, the run-time check | memory layout of `mpz_t` beyond [`abi::Mpz`] |
//! | [`cpu`]      | the embedded GMP 6.3 (renamed `__cugmp_cpu__gmp*`), typed     | anything GPU             |
//! | [`gpu`]      | the CUDA driver (through cudarc), device memory, kernels; works on limb slices and signed magnitudes | `mpz_t`, GMP's allocator |
//! | [`radix`]    | radix conversion (GMP's mpn_get_str) a whole level of divisions at a time, its products through the dispatcher | the driver, `mpz_t` |
//! | [`sqrt`]     | square roots (GMP's mpn_sqrtrem) by Newton's iteration, its products through the dispatcher | the driver, the caller's `mpz_t` |
//! | [`parallel`] | a call's work on threads started for it                        | everything else          |
//! | [`config`]   | the environment variables, read once                          |                          |
//! | [`stats`]    | per operation counts, bytes and times (`CUGMP_STATS`)         |                          |
//!
//! Data flows top to bottom once: abi -> dispatch -> (cpu | gpu).

pub mod abi;
pub mod config;
pub mod cpu;
pub mod dispatch;
pub mod gpu;
pub mod parallel;
pub mod radix;
pub mod sqrt;
pub mod stats;
