//! Radix conversion's levels from digits on device-resident numbers: the
//! leaves and the powers go up once, every level's product (the NTT's,
//! src/gpu/ntt), its sums (cuda/linear.cu) and the copies that lay the
//! next level's halves into their slots run on the device, and the number
//! comes down once. Made from host products instead, each level carried
//! its numbers up and its product down, and its sums ran on the host
//! (RESULTS.md, "Radix conversion from digits").
//!
//! The layout, the powers and the leaves are src/algorithms/radix's; this
//! file only runs the joins it describes, and decides nothing about
//! exactness: every step is an exact product or sum.

use super::device::{addr, guarded, reserve, Gpu, GpuError};
use super::ntt::Second;
use cudarc::driver::sys::{self, CUmemorytype};
use cudarc::driver::{result, CudaStream};
use std::sync::Arc;

/// Rows of a strided copy wider apart than this many bytes go one at a
/// time: the driver's two-dimensional copies take pitches below 2^31.
const MAX_PITCH: usize = (1 << 31) - 1;

/// The joins of [`Gpu::join_levels`]: level 0 is `leaves`, slots of
/// `slot0` limbs (2^levels of them, `levels = powers.len()`), and pair m of
/// level j, numbers 2m (the high one) and 2m + 1, makes hi powers[j] + lo
/// in slot m of level j + 1, of 2 powers[j].len() limbs. Each level's
/// numbers are below its power, so a slot's product and sum never reach
/// the next slot (for digits that are digits).
pub struct Joins<'a> {
    pub leaves: &'a [u64],
    pub slot0: usize,
    pub powers: &'a [Vec<u64>],
}

impl Gpu {
    /// The last level's one number of `Joins` into `out` (its slot: 2
    /// powers[last].len() limbs). Each level: its high numbers laid out one
    /// to a slot of the next level's width with zeros between, times the
    /// level's power in one product, and its low numbers, laid out the
    /// same way, added in one sum.
    pub fn join_levels(&self, joins: &Joins<'_>, out: &mut [u64]) -> Result<(), GpuError> {
        let Joins { leaves, slot0, powers } = *joins;
        let count0 = leaves.len().checked_div(slot0).unwrap_or(0);
        let last = powers.last().map_or(0, |p| 2 * p.len());
        if powers.is_empty() || count0 != 1 << powers.len() || count0 * slot0 != leaves.len() || out.len() != last {
            return Err(GpuError::TooLarge);
        }
        let _busy = self.queue().busy.enter(leaves.len());
        guarded(|| {
            let stream = self.stream();
            // The level, its two halves' layouts and their sum, each at
            // most the leaves' length (a power is at most twice as long as
            // the one before); the products claim their own.
            let _claim = reserve(8 * 4 * leaves.len())?;
            let mut level = self.copy_to_device(&stream, leaves)?;
            let mut from = slot0;
            for (j, power) in powers.iter().enumerate() {
                let k = power.len();
                let (to, pairs) = (2 * k, count0 >> (j + 1));
                // A level's numbers are below its power: k limbs of a slot of
                // `from` (from >= k: the leaves' slot is powers[0]'s length,
                // a later slot twice the power before, whose square this is).
                if k == 0 || k > from {
                    return Err(GpuError::TooLarge);
                }
                let len = pairs * to;
                let p = self.copy_to_device(&stream, power)?;
                let at = addr(&level, &stream);
                // The last slot's upper half is zeros: left out of the product.
                let highs = stream.alloc_zeros::<u64>(len - k)?;
                self.lay_out(&stream, (addr(&highs, &stream), to), (at, 2 * from), k, pairs)?;
                let lows = stream.alloc_zeros::<u64>(len)?;
                self.lay_out(&stream, (addr(&lows, &stream), to), (at + 8 * from as u64, 2 * from), k, pairs)?;
                let joined = self.product_dev(&stream, (addr(&highs, &stream), len - k), Second::At(addr(&p, &stream), k))?;
                drop(highs);
                let ja = addr(&joined, &stream);
                self.addsub_dev(&stream, false, ja, ja, len, addr(&lows, &stream), len, 0)?;
                (level, from) = (joined, to);
            }
            self.copy_from_device_into(&stream, &level, out)
        })
    }

    /// Row r < `rows` of `width` limbs from `src` (rows `apart` limbs apart)
    /// to `dst` (rows its own `apart` limbs apart), on `stream`: the
    /// driver's two-dimensional copy, or one copy a row where the rows lie
    /// too far apart for it.
    fn lay_out(&self, stream: &Arc<CudaStream>, (dst, dst_apart): (u64, usize), (src, src_apart): (u64, usize), width: usize, rows: usize) -> Result<(), GpuError> {
        let (w, dp, sp) = (8 * width, 8 * dst_apart, 8 * src_apart);
        if rows == 0 || width == 0 {
            return Ok(());
        }
        if rows == 1 || dp > MAX_PITCH || sp > MAX_PITCH {
            for r in 0..rows as u64 {
                // SAFETY: both rows lie within the caller's buffers, which
                // outlive the stream's work (freed in stream order).
                unsafe { result::memcpy_dtod_async(dst + r * dp as u64, src + r * sp as u64, w, stream.cu_stream()) }?;
            }
            return Ok(());
        }
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcPitch: sp,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: dst,
            dstArray: std::ptr::null_mut(),
            dstPitch: dp,
            WidthInBytes: w,
            Height: rows,
        };
        // SAFETY: the rows lie within the caller's device buffers (as above).
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result()?;
        Ok(())
    }
}

