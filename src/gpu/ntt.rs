//! Exact products on the GPU: a number-theoretic transform over the prime
//! p = 2^64 - 2^32 + 1 with 16-bit coefficients (cuda/ntt.cu states the
//! exactness bound: the shorter operand up to 2^30 - 1 limbs, the product up
//! to 2^30 limbs; device memory is the practical limit, checked here).
//!
//! First version, correct before fast: one kernel launch per radix-2 stage,
//! twiddles computed per product, and the last carry pass on the host (the
//! GPU folds coefficients into limbs and leaves one carry bit per limb).

use super::{injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use std::sync::Arc;

const P: u64 = 0xffff_ffff_0000_0001;
/// A generator of the multiplicative group mod P.
const GENERATOR: u64 = 7;
/// Coefficients per limb (16 bits each).
const COEFS_PER_LIMB: usize = 4;

fn mul_mod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

fn pow_mod(mut b: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b);
        }
        b = mul_mod(b, b);
        e >>= 1;
    }
    r
}

/// Transform length for a product of `limbs` limbs: no wrap-around.
pub fn transform_len(limbs: usize) -> usize {
    (COEFS_PER_LIMB * limbs).next_power_of_two().max(2)
}

/// Device bytes one product of `un` x `vn` limbs needs.
pub fn device_bytes(un: usize, vn: usize) -> usize {
    let n = transform_len(un + vn);
    8 * (2 * n + n / 2) + 8 * (un + vn) * 2 + (un + vn)
}

/// Largest operand the exactness bound allows (cuda/ntt.cu).
const MAX_SHORT_LIMBS: usize = (1 << 30) - 1;
const MAX_PRODUCT_LIMBS: usize = 1 << 30;

impl Gpu {
    /// `u * v` (both non-empty, any lengths), `u.len() + v.len()` limbs, the
    /// top one possibly zero. Passing the same slice twice squares: one
    /// forward transform.
    pub fn mul(&self, u: &[u64], v: &[u64]) -> Result<Vec<u64>, GpuError> {
        let (un, vn) = (u.len(), v.len());
        assert!(un > 0 && vn > 0, "mul takes non-empty operands");
        if un.min(vn) > MAX_SHORT_LIMBS || un + vn > MAX_PRODUCT_LIMBS {
            return Err(GpuError::TooLarge);
        }
        let squaring = std::ptr::eq(u, v);
        super::guarded(|| {
            let stream = self.stream();
            let (free, _) = cudarc::driver::result::mem_get_info()?;
            // Leave a tenth of the free memory to others.
            if device_bytes(un, vn) > free / 10 * 9 {
                return Err(GpuError::TooLarge);
            }
            injected(Fault::GpuOom, "gpu-oom")?;
            let n = transform_len(un + vn);
            let w = pow_mod(GENERATOR, (P - 1) / n as u64);
            let n_inv = pow_mod(n as u64, P - 2);

            let mut tw = stream.alloc_zeros::<u64>(n / 2)?;
            let half = (n / 2) as u64;
            injected(Fault::GpuLaunch, "gpu-launch")?;
            launch!(self, stream, ntt_twiddles, n / 2, &mut tw, &w, &half);
            let mut a = self.forward(&stream, u, n, &tw)?;
            let b = if squaring { None } else { Some(self.forward(&stream, v, n, &tw)?) };
            let (nn, limbs) = (n as u64, (un + vn) as u64);
            match &b {
                Some(b) => launch!(self, stream, ntt_pointwise, n, &mut a, b, &nn, &n_inv),
                None => launch!(self, stream, ntt_pointwise_sqr, n, &mut a, &nn, &n_inv),
            }
            let mut len = 1u64;
            while len < nn {
                launch!(self, stream, ntt_dit_stage, n / 2, &mut a, &tw, &nn, &len);
                len *= 2;
            }
            let mut t = stream.alloc_zeros::<u64>(un + vn)?;
            let mut c = stream.alloc_zeros::<u8>(un + vn)?;
            launch!(self, stream, ntt_combine16, un + vn, &mut t, &mut c, &a, &limbs);
            let mut limbs_out = stream.clone_dtoh(&t)?;
            let carries = stream.clone_dtoh(&c)?;
            // The remaining carries: each limb's carry bit plus the carry out of
            // adding the previous one. The product fits in un + vn limbs, so
            // nothing is left at the end.
            let mut carry = 0u64;
            for (limb, &bit) in limbs_out.iter_mut().zip(&carries) {
                let (sum, overflow) = limb.overflowing_add(carry);
                *limb = sum;
                carry = bit as u64 + overflow as u64;
            }
            debug_assert_eq!(carry, 0);
            Ok(limbs_out)
        })
    }

    /// Upload `x`, cut it into coefficients and transform it (DIF, output in
    /// bit-reversed order).
    fn forward(&self, stream: &Arc<CudaStream>, x: &[u64], n: usize, tw: &CudaSlice<u64>) -> Result<CudaSlice<u64>, GpuError> {
        let dx = stream.clone_htod(x)?;
        let mut a = stream.alloc_zeros::<u64>(n)?;
        let (nn, xn) = (n as u64, x.len() as u64);
        launch!(self, stream, ntt_split16, n, &mut a, &dx, &xn, &nn);
        let mut len = nn / 2;
        while len >= 1 {
            launch!(self, stream, ntt_dif_stage, n / 2, &mut a, tw, &nn, &len);
            len /= 2;
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_have_the_right_order() {
        for log in [1u32, 5, 23, 32] {
            let n = 1u64 << log;
            let w = pow_mod(GENERATOR, (P - 1) / n);
            assert_eq!(pow_mod(w, n), 1);
            assert_ne!(pow_mod(w, n / 2), 1, "w must be a primitive root of order 2^{log}");
        }
    }

    #[test]
    fn transform_has_no_wraparound() {
        for limbs in [1usize, 2, 3, 1000, 2_000_000] {
            assert!(transform_len(limbs) >= COEFS_PER_LIMB * limbs);
        }
    }
}
