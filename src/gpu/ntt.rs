//! Exact products on the GPU: a number-theoretic transform over the prime
//! p = 2^64 - 2^32 + 1 with 16-bit coefficients (cuda/ntt.cu states the
//! exactness bound: the shorter operand up to 2^30 - 1 limbs, the product up
//! to 2^30 limbs; device memory is the practical limit, checked here).
//!
//! First version, correct before fast: one kernel launch per radix-2 stage,
//! twiddles computed per product. The last carry pass is the add kernel's
//! parallel carry (src/gpu/linear.rs), on the device.

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
    // Two transforms, the twiddles, the folded limbs and their carries, the
    // add kernel's tile states.
    8 * (2 * n + n / 2) + 8 * (un + vn) * 2 + 4 * (un + vn).div_ceil(1024)
}

/// Largest operand the exactness bound allows (cuda/ntt.cu).
const MAX_SHORT_LIMBS: usize = (1 << 30) - 1;
const MAX_PRODUCT_LIMBS: usize = 1 << 30;

fn check_bounds(un: usize, vn: usize) -> Result<(), GpuError> {
    if un.min(vn) > MAX_SHORT_LIMBS || un + vn > MAX_PRODUCT_LIMBS {
        Err(GpuError::TooLarge)
    } else {
        Ok(())
    }
}

/// Device memory traffic of one product (un x vn limbs, or a square), in
/// bytes, as the kernels are written now: each radix-2 stage reads and writes
/// the whole transform once (twiddle reads, mostly cache hits, not counted).
/// For reporting against the memory bandwidth.
pub fn bytes_moved(un: usize, vn: usize, squaring: bool) -> u64 {
    let n = transform_len(un + vn) as u64;
    let stages = n.trailing_zeros() as u64;
    let transforms = if squaring { 2 } else { 3 };
    let split = 8 * (un + vn) as u64 + 8 * n * (transforms - 1);
    let passes = transforms * stages * 16 * n; // each stage: read + write 8n
    let pointwise = if squaring { 16 * n } else { 24 * n };
    let combine = 32 * (un + vn) as u64 + 8 * n; // coefficients in, limbs and carries out
    let carry = 24 * (un + vn) as u64;
    split + passes + pointwise + combine + carry
}

impl Gpu {
    /// `u * v` (both non-empty, any lengths), `u.len() + v.len()` limbs, the
    /// top one possibly zero. Passing the same slice twice squares: one
    /// forward transform.
    pub fn mul(&self, u: &[u64], v: &[u64]) -> Result<Vec<u64>, GpuError> {
        let (un, vn) = (u.len(), v.len());
        assert!(un > 0 && vn > 0, "mul takes non-empty operands");
        check_bounds(un, vn)?;
        let squaring = std::ptr::eq(u, v);
        super::guarded(|| {
            let stream = self.stream();
            let du = self.htod(&stream, u)?;
            let dv = if squaring { None } else { Some(self.htod(&stream, v)?) };
            let t = self.product_dev(&stream, &du, un, dv.as_ref().map(|d| (d, vn)))?;
            self.dtoh(&stream, &t)
        })
    }

    /// The product of device operands `u` (`un` limbs) and `v` (or `u`
    /// squared when `v` is None), `un + vn` limbs on the device.
    pub(super) fn product_dev(&self, stream: &Arc<CudaStream>, u: &CudaSlice<u64>, un: usize, v: Option<(&CudaSlice<u64>, usize)>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.map_or(un, |(_, vn)| vn);
        check_bounds(un, vn)?;
        let (free, _) = cudarc::driver::result::mem_get_info()?;
        // Leave a tenth of the free memory to others.
        if device_bytes(un, vn) > free / 10 * 9 {
            return Err(GpuError::TooLarge);
        }
        let _claim = super::reserve(device_bytes(un, vn))?;
        injected(Fault::GpuOom, "gpu-oom")?;
        let n = transform_len(un + vn);
        let w = pow_mod(GENERATOR, (P - 1) / n as u64);
        let n_inv = pow_mod(n as u64, P - 2);

        let mut tw = stream.alloc_zeros::<u64>(n / 2)?;
        let half = (n / 2) as u64;
        injected(Fault::GpuLaunch, "gpu-launch")?;
        launch!(self, stream, ntt_twiddles, n / 2, &mut tw, &w, &half);
        let mut a = self.forward(stream, u, un, n, &tw)?;
        let b = match v {
            Some((v, vn)) => Some(self.forward(stream, v, vn, n, &tw)?),
            None => None,
        };
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
        let mut c = stream.alloc_zeros::<u64>(un + vn)?;
        launch!(self, stream, ntt_combine16, un + vn, &mut t, &mut c, &a, &limbs);
        self.add_in_place(stream, &mut t, &c, un + vn)?;
        Ok(t)
    }

    /// Cut device limbs `x` (`xn` of them) into coefficients and transform
    /// them (DIF, output in bit-reversed order).
    fn forward(&self, stream: &Arc<CudaStream>, dx: &CudaSlice<u64>, xn: usize, n: usize, tw: &CudaSlice<u64>) -> Result<CudaSlice<u64>, GpuError> {
        let mut a = stream.alloc_zeros::<u64>(n)?;
        let (nn, xn) = (n as u64, xn as u64);
        launch!(self, stream, ntt_split16, n, &mut a, dx, &xn, &nn);
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
