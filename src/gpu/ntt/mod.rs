//! Exact products on the GPU: number-theoretic transforms over three 32-bit
//! primes with 32-bit coefficients, joined by the CRT (cuda/ntt.cu states the
//! primes and the exactness bounds: transforms of 2^k or 3 * 2^k points up to
//! 3 * 2^25, and of 5 * 2^k up to 5 * 2^23 on a second set of primes for
//! whole products; products up to 3 * 2^24 limbs in one transform; device
//! memory is the practical limit, checked here); and, for products made in
//! one convolution (whole, chunks, mod B^n - 1) up to 3 * 2^23 limbs, over
//! the five primes of the wide sets with a limb a coefficient: half the
//! points, five transforms for three.
//!
//! | module        | owns                                                                 |
//! |---------------|----------------------------------------------------------------------|
//! | [`plan`]      | host arithmetic only: transform lengths, how a product runs (whole, chunked against the short operand, both operands in pieces with their products summed in the transform domain), the passes of a transform, the device bytes a product needs |
//! | [`transform`] | twiddle tables (built once per length and kept), the forward and inverse transforms' launches, the CRT and carries back to limbs |
//! | [`product`]   | a product from host limbs to host limbs: the uploads (the second operand beside the first's transform), the plan run on the device, the download |
//! | [`small`]     | small products from host limbs to host limbs in one launch graph each, on slots of pinned and device memory kept for them |
//!
//! A 2^k transform runs as one to three passes of up to 14 radix-2 stages in
//! shared memory (cuda/ntt.cu's cugmp_ntt_pass), all the primes in one
//! launch, or from 3 * 2^18 points each prime's on a stream of its own (a lane,
//! `product::transforms_in_lanes`); a 3 * 2^k or 5 * 2^k one as a radix-3 or radix-5 step
//! (cugmp_ntt_radix3, cugmp_ntt_radix5) and three or five of 2^k. The
//! radix step or else the first forward pass cuts the limbs into
//! coefficients itself; one operand's last forward pass, the pointwise
//! product and the first inverse pass are one pass (the turn), the CRT is in
//! the kernel that folds coefficients into limbs
//! (with the inverse's radix step, cugmp_ntt_combine3 and
//! cugmp_ntt_combine5), and the last carry is the add kernel's
//! (src/gpu/linear.rs), but for a wide product on 2^k points, whose CRT,
//! fold and carries are one kernel (cugmp_ntt_combine_wide_carry).

pub mod plan;
pub mod product;
pub(super) mod small;
pub mod transform;
#[cfg(test)]
mod model;

pub use plan::{bytes_moved, cyclic_shape, cyclic_size};
pub(crate) use plan::{tile_bytes, TILE_LOG};
pub(super) use plan::LANES;
pub(super) use product::{claim, wide_from, Second};
pub(super) use small::Slots;
pub(super) use transform::Tables;
