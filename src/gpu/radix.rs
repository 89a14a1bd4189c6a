//! Radix conversion's levels from digits on device-resident numbers: the
//! leaves and the first power go up once, every level's product (the
//! NTT's, src/gpu/ntt), its sums (cuda/linear.cu), the copies that lay the
//! next level's halves into their slots and the squarings that make the
//! next power run on the device, and the number comes down once. Made from
//! host products instead, each level carried its numbers up and its
//! product down, and its sums ran on the host (RESULTS.md, "Radix
//! conversion from digits").
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

/// The joins of [`Gpu::join_levels`]: level 0 is `leaves`, 2^levels slots
/// of `first`'s length k0, and pair m of level j, numbers 2m (the high
/// one) and 2m + 1, makes hi P_j + lo in slot m of level j + 1, where P_0 =
/// `first` and P_(j+1) = P_j^2, each squared on the device in 2^(j+1) k0
/// limbs, its top ones zeros where the square is shorter. So level j's
/// slots are 2^j k0 limbs, P_j's length, and every level fills the leaves'
/// length. Each number of a level is below its power, so a slot's product
/// and sum never reach the next slot (for digits that are digits).
pub struct Joins<'a> {
    pub leaves: &'a [u64],
    pub first: &'a [u64],
    pub levels: usize,
}

impl Gpu {
    /// The last level's one number of `Joins` into `out` (the leaves'
    /// length). Each level: its high numbers laid out one to a slot twice
    /// their own with zeros between, times the level's power in one
    /// product, and its low numbers, laid out the same way, added in one
    /// sum.
    pub fn join_levels(&self, joins: &Joins<'_>, out: &mut [u64]) -> Result<(), GpuError> {
        let Joins { leaves, first, levels } = *joins;
        let k0 = first.len();
        let count0 = 1usize.checked_shl(levels as u32).unwrap_or(0);
        if levels == 0 || k0 == 0 || count0 == 0 || count0.checked_mul(k0) != Some(leaves.len()) || out.len() != leaves.len() {
            return Err(GpuError::TooLarge);
        }
        let _busy = self.queue().busy.enter(leaves.len());
        guarded(|| {
            let stream = self.stream();
            // The level, its two halves' layouts, their sum and the power,
            // each at most the leaves' length; the products claim their own.
            let _claim = reserve(8 * 5 * leaves.len())?;
            let mut level = self.copy_to_device(&stream, leaves)?;
            let mut power = self.copy_to_device(&stream, first)?;
            for j in 0..levels {
                // Level j's numbers: k limbs each, P_j's length.
                let k = k0 << j;
                let (to, pairs) = (2 * k, count0 >> (j + 1));
                let len = pairs * to;
                let at = addr(&level, &stream);
                let pa = addr(&power, &stream);
                // The last slot's upper half is zeros: left out of the product.
                let highs = stream.alloc_zeros::<u64>(len - k)?;
                self.lay_out(&stream, (addr(&highs, &stream), to), (at, to), k, pairs)?;
                let lows = stream.alloc_zeros::<u64>(len)?;
                self.lay_out(&stream, (addr(&lows, &stream), to), (at + 8 * k as u64, to), k, pairs)?;
                let joined = self.product_dev(&stream, (addr(&highs, &stream), len - k), Second::At(pa, k))?;
                drop(highs);
                let ja = addr(&joined, &stream);
                self.addsub_dev(&stream, false, ja, ja, len, addr(&lows, &stream), len, 0)?;
                if j + 1 < levels {
                    power = self.product_dev(&stream, (pa, k), Second::Square)?;
                }
                level = joined;
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

