//! Exact products by the FFT over the generalized Fermat prime
//! p = r^8 + 1, r = 2^61 + 2^41 (Mohajerani 2016, "FFT over prime fields of
//! large characteristic"): the GPU's second product engine, chosen by
//! `CUGMP_PRODUCT=gfp` for whole products (src/gpu/ntt/product.rs,
//! `product_at`). The arithmetic is in [`field`]; the kernels in
//! cuda/gfp.cu.
//!
//! A product of un x vn limbs:
//! * the limbs are cut into 192-bit coefficients (three limbs), ca and cb of
//!   them, and the transform has n = 2^log_n >= ca + cb - 1 points (at least
//!   4): the cyclic convolution does not wrap;
//! * forward: radix-4 stages by decimation in frequency over blocks of 2^s
//!   points, s = log_n, log_n - 2, ... down to 2, and a radix-2 stage if
//!   log_n is odd. The DFT of four points multiplies by r^4 (a move of
//!   digits, no multiplication); the twiddles between stages are general
//!   products, from one table of the powers of a root of unity;
//! * the pointwise product, then the inverse: the same stages in reverse
//!   order by decimation in time, with inverse twiddles. It gives n c_i mod
//!   p for every coefficient c_i of the product;
//! * exactness: c_i <= min(ca, cb) (2^192 - 1)^2 < 2^(log_n - 1 + 384), so
//!   n c_i < 2^(2 log_n + 383) <= 2^437 < p for log_n <= MAX_LOG: the
//!   residue is n c_i itself, whose low log_n bits must be zero (the
//!   combine kernel checks them; a product that fails is discarded) and
//!   whose shift right by log_n is c_i;
//! * the coefficients are added at limb 3i in three lanes (i mod 3), and the
//!   lanes added by the add kernel.
//!
//! The roots table holds w^e, e < 2^t, for the longest transform so far
//! (2^t x 64 bytes: 8 GiB at the longest); a shorter transform reads every
//! 2^(t - log_n)-th entry. Built on the device from two tables of 2^(t/2)
//! powers the host computes ([`field::root_of_unity`]).
//!
//! It uses the device layer (kernels, streams, the add kernel) and
//! [`field`]; it knows nothing of routing or of `mpz_t`s.

pub(crate) mod field;
#[cfg(test)]
mod model;

use crate::gpu::device::{Gpu, GpuError, Reservation};
use crate::gpu::ntt::claim;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, PushKernelArg};
use field::Elem;
use std::sync::{Arc, Mutex};

/// Limbs a coefficient holds.
pub(crate) const COEFF_LIMBS: usize = 3;
/// The longest transform (exactness bound above; 8 GiB an operand, as much
/// for the roots table). Transforms of 2^28 points fit the bound too, but
/// squares of 2^28 limbs under them did not run on an 80 GiB H100 beside
/// the benchmark's operands (RESULTS.md, "The generalized-Fermat-prime
/// FFT"): the NTT made them all.
pub(crate) const MAX_LOG: u32 = 27;

/// log2 of the transform length of a un x vn-limb product, None past
/// MAX_LOG.
pub(crate) fn transform_log(un: usize, vn: usize) -> Option<u32> {
    let coeffs = un.div_ceil(COEFF_LIMBS) + vn.div_ceil(COEFF_LIMBS) - 1;
    let log = coeffs.next_power_of_two().trailing_zeros().max(2);
    (log <= MAX_LOG).then_some(log)
}

/// One stage of a transform of 2^log_n points, in forward order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Radix 4 over blocks of 2^s points.
    Radix4(u32),
    /// Radix 2 over pairs (odd log_n: the last forward stage).
    Radix2,
}

/// The forward transform's stages; the inverse runs them in reverse order.
pub(crate) fn stages(log_n: u32) -> Vec<Stage> {
    let mut v: Vec<Stage> = (0..log_n / 2).map(|i| Stage::Radix4(log_n - 2 * i)).collect();
    if log_n % 2 == 1 {
        v.push(Stage::Radix2);
    }
    v
}

/// The two host tables the device's roots table is built from: w^i and
/// w^(i 2^h), i < 2^h and i < 2^(log_t - h), w of order 2^log_t.
pub(crate) fn root_factors(log_t: u32, h: u32) -> (Vec<Elem>, Vec<Elem>) {
    let w = field::root_of_unity(log_t);
    let powers = |base: Elem, count: usize| {
        let mut v = Vec::with_capacity(count);
        let mut x = Elem::ONE;
        for _ in 0..count {
            v.push(x);
            x = x.mul(&base);
        }
        v
    };
    (powers(w, 1 << h), powers(w.square_times(h), 1 << (log_t - h)))
}

/// The roots table of the longest transform so far (one per context).
#[derive(Default)]
pub(in crate::gpu) struct Roots(Mutex<Option<Arc<RootTable>>>);

pub(in crate::gpu) struct RootTable {
    log: u32,
    table: CudaSlice<i64>,
    /// The table's bytes, counted against `CUGMP_GPU_MEM_LIMIT` while it is
    /// kept or a product still holds it.
    _claim: Reservation,
}

/// Device bytes a product with a transform of 2^log_n points takes beside
/// the roots table: two transforms (one for a square) and three lanes.
pub(crate) fn device_bytes(log_n: u32, limbs: usize, squaring: bool) -> usize {
    let elems = if squaring { 1 } else { 2 };
    ((elems * field::K * 8) << log_n) + 3 * 8 * limbs
}

impl Gpu {
    /// The roots table for transforms of up to 2^log_n points: the one
    /// kept, or a new one that replaces it.
    fn gfp_roots(&self, stream: &Arc<CudaStream>, log_n: u32) -> Result<Arc<RootTable>, GpuError> {
        let mut kept = self.gfp_roots.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = kept.as_ref().filter(|t| t.log >= log_n) {
            return Ok(t.clone());
        }
        // The shorter table goes first (products already running keep
        // theirs). A table that would not fit leaves the product to the
        // NTT (TooLarge), as the product's own buffers do.
        *kept = None;
        let claim = claim(self, (field::K * 8) << log_n)?;
        let h = log_n.div_ceil(2);
        let (a, b) = root_factors(log_n, h);
        let flat = |v: Vec<Elem>| v.iter().flat_map(|e| e.0).collect::<Vec<i64>>();
        let (da, db) = (stream.clone_htod(&flat(a))?, stream.clone_htod(&flat(b))?);
        let n = 1u64 << log_n;
        // The kernel writes every entry.
        let mut table = unsafe { stream.alloc::<i64>(field::K << log_n) }?;
        launch!(self, stream, gfp_roots, n as usize, &mut table, &da, &db, &h, &n);
        // Other queues read the table as soon as it is kept.
        stream.synchronize()?;
        let t = Arc::new(RootTable { log: log_n, table, _claim: claim });
        *kept = Some(t.clone());
        Ok(t)
    }

    /// The `un + vn` limbs of the product of the limbs at device addresses
    /// `u` and `v` (`v` None: `u` squared), by a transform of 2^log_n
    /// points (`transform_log`).
    pub(in crate::gpu) fn gfp_product(&self, stream: &Arc<CudaStream>, (up, un): (u64, usize), v: Option<(u64, usize)>, log_n: u32) -> Result<CudaSlice<u64>, GpuError> {
        crate::config::log!("product {un}x{} limbs by the FFT over the generalized Fermat prime, 2^{log_n} points", v.map_or(un, |(_, vn)| vn));
        let roots = self.gfp_roots(stream, log_n)?;
        let n = 1u64 << log_n;
        let mut x = self.gfp_forward(stream, &roots, (up, un), log_n)?;
        let y = match v {
            Some(v) => Some(self.gfp_forward(stream, &roots, v, log_n)?),
            None => None,
        };
        let yp = match &y {
            Some(y) => y.device_ptr(stream).0,
            None => x.device_ptr(stream).0,
        };
        launch!(self, stream, gfp_pointwise, n as usize, &mut x, &yp, &n);
        drop(y);
        self.gfp_stages(stream, &roots, &mut x, log_n, true)?;
        let limbs = un + v.map_or(un, |(_, vn)| vn);
        // The lanes start zeroed (the kernel writes only the coefficients'
        // limbs); the flag too.
        let mut lanes = [stream.alloc_zeros::<u64>(limbs)?, stream.alloc_zeros::<u64>(limbs)?, stream.alloc_zeros::<u64>(limbs)?];
        let mut inexact = stream.alloc_zeros::<u32>(1)?;
        let limbs64 = limbs as u64;
        let [l0, l1, l2] = &mut lanes;
        launch!(self, stream, gfp_combine, n as usize, &mut *l0, &mut *l1, &mut *l2, &x, &n, &log_n, &limbs64, &mut inexact);
        drop(x);
        self.add_in_place(stream, l0, l1, limbs)?;
        self.add_in_place(stream, l0, l2, limbs)?;
        if stream.clone_dtoh(&inexact)?.first().copied().unwrap_or(1) != 0 {
            return Err(GpuError::Inexact);
        }
        let [l0, _, _] = lanes;
        Ok(l0)
    }

    /// The forward transform of the `xn` limbs at device address `xp`.
    fn gfp_forward(&self, stream: &Arc<CudaStream>, roots: &RootTable, (xp, xn): (u64, usize), log_n: u32) -> Result<CudaSlice<i64>, GpuError> {
        let n = 1u64 << log_n;
        let xn = xn as u64;
        // The split kernel writes every element.
        let mut x = unsafe { stream.alloc::<i64>(field::K << log_n) }?;
        launch!(self, stream, gfp_split, n as usize, &mut x, &xp, &xn, &n);
        self.gfp_stages(stream, roots, &mut x, log_n, false)?;
        Ok(x)
    }

    /// The forward stages (natural order in, digit-reversed out) or the
    /// inverse ones (the reverse), in place.
    fn gfp_stages(&self, stream: &Arc<CudaStream>, roots: &RootTable, x: &mut CudaSlice<i64>, log_n: u32, inverse: bool) -> Result<(), GpuError> {
        let n = 1u64 << log_n;
        let mut plan = stages(log_n);
        if inverse {
            plan.reverse();
        }
        let inverse = inverse as u32;
        for stage in plan {
            match stage {
                Stage::Radix4(s) => launch!(self, stream, gfp_radix4, (n / 4) as usize, &mut *x, &roots.table, &n, &s, &roots.log, &inverse),
                Stage::Radix2 => launch!(self, stream, gfp_radix2, (n / 2) as usize, &mut *x, &n),
            }
        }
        Ok(())
    }
}
