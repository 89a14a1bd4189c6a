//! Algorithms and routing: which engine computes each operation, and the
//! algorithms cuGMP runs in GMP's place. Limb slices and `mpz_t`s in (as
//! the ABI hands them down), the engines below called, results stored back.
//!
//! | module        | owns                                                                 |
//! |---------------|----------------------------------------------------------------------|
//! | [`route`]     | the policy: CUGMP_GPU, the measured thresholds, which engine; a thread's CPU references |
//! | [`product`]   | every GPU product (counted, checked, faults, fallback to the CPU); GMP's mpn products |
//! | [`radix`]     | radix conversion a whole level at a time, both ways (GMP's mpn_get_str, mpn_set_str) |
//! | [`sqrt`]      | square roots by Newton's iteration (GMP's mpn_sqrtrem)                |
//! | [`quotient`]  | quotients of large numbers by Newton's iteration (GMP's mpn_tdiv_qr, mpn_div_q) |
//! | [`factorial`] | n! and C(n, k) from the exponents of their primes (mpz_fac_ui, mpz_bin_uiui) |
//! | [`hgcd`]      | GMP's half-gcd matrix steps with their products on several cores |
//! | [`hooks`]     | the targets of the hooks into the embedded GMP                        |
//! | [`text`]      | mpz_get_str and mpz_set_str                                           |
//! | [`mpz`]       | the mpz operations cuGMP routes itself (add, sub, mul, shifts, logic) |
//! | [`mpn`]       | mpn sums, differences and shifts of long operands on the host's cores |
//! | [`self_test`] | `cugmp_self_test`: GPU results against the CPU engine                 |
//! | [`gf2x`]      | products of binary polynomials (cugmp_gf2x_mul, cugmp_mpz_gf2x_mul) |
//! | [`batch`]     | many independent mpz_mul, mpz_powm, mpz_mod in one call, over the cores |
//! | [`poly`]      | products of integer polynomials by Kronecker substitution            |
//!
//! Within this layer the order is route, product, then radix, sqrt,
//! factorial and hgcd, then quotient (it takes sqrt's Newton precisions), then hooks, text, mpz, mpn, self_test and gf2x, then batch and poly
//! (tests/layers.rs holds it, from src/lib.rs's table).

pub mod batch;
pub mod factorial;
pub mod gf2x;
pub mod hgcd;
pub mod hooks;
pub mod mpn;
pub mod mpz;
pub mod poly;
pub mod product;
pub mod quotient;
pub mod radix;
pub mod route;
pub mod self_test;
pub mod sqrt;
pub mod text;
