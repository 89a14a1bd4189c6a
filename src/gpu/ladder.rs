//! A ladder of squarings and products on device-resident numbers: x, then
//! x^2 p_1, then (x^2 p_1)^2 p_2 and so on, then times a power of two. A
//! factorial's or binomial's odd part is such a ladder over the products
//! of its primes by exponent bit (src/algorithms/factorial.rs); made from
//! host products, each step carried the whole number up and its square
//! down, most of the ladder's time at fac(10^6) (RESULTS.md,
//! "Factorials"). Here x and each p go up once, every square and product
//! is the NTT's on the device, the shift is cuda/linear.cu's, and the
//! result comes down once.
//!
//! The numbers are not trimmed between steps: a square of L limbs is 2L
//! limbs, its top ones zeros where it is shorter, and the next step takes
//! all of them (a product with zero limbs on top is the same product).
//! [`Ladder::limbs`] is that untrimmed length; the caller trims.

use super::device::{addr, guarded, injected, reserve, Gpu, GpuError};
use super::ntt::Second;
use crate::config::Fault;
use cudarc::driver::PushKernelArg;

/// `start`, squared and multiplied by each of `parts` in turn (a part
/// `[1]` squares only), times 2^`shift`.
pub struct Ladder<'a> {
    pub start: &'a [u64],
    pub parts: &'a [&'a [u64]],
    pub shift: u64,
}

impl Ladder<'_> {
    /// Limbs of the result before any trimming: each square doubles the
    /// length, each product adds its part's, and the shift adds its limbs
    /// and one for the bits (cuda/linear.cu's `cugmp_shl`). None past
    /// usize.
    pub fn limbs(&self) -> Option<usize> {
        let mut n = self.start.len();
        for p in self.parts {
            n = n.checked_mul(2)?.checked_add(if is_one(p) { 0 } else { p.len() })?;
        }
        n.checked_add(usize::try_from(self.shift / 64).ok()?)?.checked_add(1)
    }
}

fn is_one(p: &[u64]) -> bool {
    p == [1]
}

impl Gpu {
    /// The number of `ladder` into `out`, exactly `ladder.limbs()` limbs
    /// (top ones zeros where it is shorter). On an error `out` holds
    /// anything.
    pub fn ladder_into(&self, ladder: &Ladder<'_>, out: &mut [u64]) -> Result<(), GpuError> {
        let Ladder { start, parts, shift } = *ladder;
        if start.is_empty() || ladder.limbs() != Some(out.len()) {
            return Err(GpuError::TooLarge);
        }
        let total = out.len();
        let _busy = self.queue().busy.enter(total);
        guarded(|| {
            injected(Fault::GpuLaunch, "gpu-launch")?;
            let stream = self.stream();
            // The number, its next step and the shifted result, each at
            // most `total` limbs; the products claim their own.
            let _claim = reserve(8 * 3 * total)?;
            let mut x = self.copy_to_device(&stream, start)?;
            let mut xn = start.len();
            for p in parts {
                x = self.product_dev(&stream, (addr(&x, &stream), xn), Second::Square)?;
                xn *= 2;
                if !is_one(p) {
                    // A part's upload goes beside the square's transform.
                    x = self.product_dev(&stream, (addr(&x, &stream), xn), Second::Host(p))?;
                    xn += p.len();
                }
            }
            let (limbs, bits) = (shift / 64, (shift % 64) as u32);
            // cugmp_shl writes every one of its n + limbs + 1 limbs.
            let mut r = unsafe { stream.alloc::<u64>(total) }?;
            let n = xn as u64;
            launch_elementwise!(self, stream, shl, total, &mut r, &x, &n, &limbs, &bits);
            self.copy_from_device_into(&stream, &r, out)
        })
    }
}
