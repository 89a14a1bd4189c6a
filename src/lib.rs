//! cuGMP: `libcugmp.so`, a drop-in replacement for GMP 6.3's `libgmp.so.10`
//! whose large-operand arithmetic runs in handwritten CUDA kernels.
//!
//! Data flows down the layers once: the exported C ABI, then algorithms and
//! routing, then the engines (CPU, GPU), then GMP's types and limb storage.
//! A module may import from a layer below its own, never from one above or
//! from another unit of its own layer; the leaves (layer 0) import nothing
//! of the crate. This table is the one declaration of that order:
//! `tests/layers.rs` reads it and fails on any import that breaks it.
//! docs/ARCHITECTURE.md draws the layers and one product's way through them.
//!
//! | layer | module                     | owns                                                                 |
//! |-------|----------------------------|----------------------------------------------------------------------|
//! | 4     | `abi`                      | every exported symbol (GMP's ABI, `cugmp_*`, the hooks' entries), the one panic boundary, the load-time constructor |
//! | 3.5   | `algorithms::batch`        | many independent mul, powm, mod at once, spread over the cores        |
//! | 3.5   | `algorithms::poly`         | products of integer polynomials by Kronecker substitution            |
//! | 3.4   | `algorithms::mpz`          | the mpz operations cuGMP routes itself (add, sub, mul, shifts, logic) |
//! | 3.4   | `algorithms::mpn`          | mpn sums, differences and shifts of long operands on the host's cores |
//! | 3.4   | `algorithms::text`         | mpz_get_str, mpz_set_str, mpf_get_str                                |
//! | 3.4   | `algorithms::hooks`        | the targets of the hooks into the embedded GMP                       |
//! | 3.4   | `algorithms::gf2x`         | products of binary polynomials, GF(2)[x]                             |
//! | 3.4   | `algorithms::self_test`    | the GPU engine checked against the CPU engine                        |
//! | 3.35  | `algorithms::quotient`     | quotients of large numbers by Newton's iteration, on the device      |
//! | 3.3   | `algorithms::radix`        | radix conversion a whole level at a time, both ways                  |
//! | 3.3   | `algorithms::sqrt`         | square roots by Newton's iteration                                   |
//! | 3.3   | `algorithms::factorial`    | n! and C(n, k) from the exponents of their primes                    |
//! | 3.3   | `algorithms::hgcd`         | GMP's half-gcd matrix steps with their products on several cores     |
//! | 3.2   | `algorithms::product`      | every GPU product: counted, checked, faults, fallback to the CPU     |
//! | 3.1   | `algorithms::route`        | the routing policy: CUGMP_GPU, thresholds, which engine              |
//! | 3     | `algorithms`               | (the folder: module declarations only)                               |
//! | 2     | `cpu`                      | the CPU engine at mpn level: limb slices through the embedded GMP, and its own schoolbook products on AVX-512 IFMA |
//! | 2     | `gpu`                      | the GPU engine at mpn level: driver, memory and staging, transforms, products, linear kernels |
//! | 1     | `gmp`                      | GMP's C types, limb access, mpz storage, the embedded GMP's entry points, its default memory functions, what its processor detection is told and its fat dispatch table |
//! | 0     | `config`                   | the environment, read once                                           |
//! | 0     | `stats`                    | counts, bytes and times per operation (`CUGMP_STATS`)                |
//! | 0     | `parallel`                 | a call's work on threads kept between calls or started for it         |
//! | 0     | `helpers`                  | threads kept to take part of a short call's work                     |
//! | 0     | `pages`                    | how large fresh buffers are backed (huge pages)                      |
//! | 0     | `pinned`                   | page-locked blocks for large products' limbs, made once and reused   |
//! | 0     | `testing`                  | the unit tests' shared helpers (test builds only)                    |

pub mod abi;
pub mod algorithms;
pub mod config;
pub mod cpu;
pub mod gmp;
pub mod gpu;
pub mod helpers;
pub mod pages;
pub mod pinned;
pub mod parallel;
pub mod stats;
#[cfg(test)]
mod testing;
