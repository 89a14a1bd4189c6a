//! Limbs between host memory and the device, at PCIe speed where the size
//! pays for it.
//!
//! A copy from pageable memory (the caller's limbs, a `Vec`) is staged by the
//! driver through its own pinned buffers on one thread: about 8 GB/s on the
//! GPU machine (RESULTS.md, "pinned staging"), a seventh of PCIe. Large
//! transfers here are cut into chunks that several threads copy through
//! pinned slots of their own while the DMA of the previous chunk runs, so the
//! host copies run in parallel with each other and with PCIe. The pinned
//! slots are allocated once, on first use, and kept.

use super::{Gpu, GpuError};
use cudarc::driver::{result, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};
use std::sync::{Arc, Mutex};

/// Below this the driver's own path is as fast (and takes no threads).
const THREADED_MIN_BYTES: usize = 4 << 20;
/// Limbs a thread moves through one slot at once (1 MiB).
const CHUNK: usize = 1 << 17;
/// Copy threads at most; each has two slots (double buffering).
const MAX_THREADS: usize = 8;

/// The pinned slots, two per copy thread, allocated on first use.
#[derive(Default)]
pub(super) struct Staging(Mutex<Vec<PinnedHostSlice<u64>>>);

/// Copy threads for `limbs` limbs: one per 2 chunks, at most MAX_THREADS and
/// the host's parallelism.
fn threads_for(limbs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    limbs.div_ceil(2 * CHUNK).clamp(1, MAX_THREADS.min(cores))
}

/// `dst.copy_from_slice(src)`, by several threads when it is large: a copy
/// into freshly allocated memory also takes its page faults, which then run
/// in parallel too.
pub(crate) fn copy_limbs(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len(), "copy_limbs takes slices of one length");
    if 8 * src.len() < THREADED_MIN_BYTES {
        dst.copy_from_slice(src);
        return;
    }
    let per = src.len().div_ceil(threads_for(src.len()));
    std::thread::scope(|s| {
        for (d, x) in dst.chunks_mut(per).zip(src.chunks(per)) {
            s.spawn(move || d.copy_from_slice(x));
        }
    });
}

/// One thread's pinned slots and what it moves through them.
struct Lane<'a> {
    slots: [&'a mut [u64]; 2],
    /// The chunks of this lane: every `stride`-th from `first`.
    first: usize,
    stride: usize,
}

impl Gpu {
    /// The pinned slots for `lanes` copy threads, locked for one transfer.
    fn slots(&self, lanes: usize) -> Result<std::sync::MutexGuard<'_, Vec<PinnedHostSlice<u64>>>, GpuError> {
        let mut slots = self.staging.0.lock().unwrap_or_else(|p| p.into_inner());
        while slots.len() < 2 * lanes {
            // Plain page-locked memory: write-combined memory (cudarc's
            // default) is slow for the host to read back.
            slots.push(unsafe { self.ctx.alloc_pinned_with_flags::<u64>(CHUNK, 0) }?);
        }
        Ok(slots)
    }

    /// Run `work` on each copy thread's lane over `limbs` limbs in chunks.
    fn in_lanes(&self, limbs: usize, work: impl Fn(&mut Lane<'_>) -> Result<(), GpuError> + Sync) -> Result<(), GpuError> {
        let lanes = threads_for(limbs);
        let mut slots = self.slots(lanes)?;
        let mut views = Vec::with_capacity(2 * lanes);
        for s in slots.iter_mut().take(2 * lanes) {
            views.push(s.as_mut_slice()?);
        }
        let mut views = views.into_iter();
        let mut lane_list = Vec::with_capacity(lanes);
        for first in 0..lanes {
            let (Some(a), Some(b)) = (views.next(), views.next()) else { return Err(GpuError::TooLarge) };
            lane_list.push(Lane { slots: [a, b], first, stride: lanes });
        }
        let results: Vec<Result<(), GpuError>> = std::thread::scope(|s| {
            let work = &work;
            let handles: Vec<_> = lane_list.into_iter().map(|mut lane| s.spawn(move || work(&mut lane))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or(Err(GpuError::Panic))).collect()
        });
        results.into_iter().collect()
    }

    /// Host limbs to a new device buffer of the same length (at least one
    /// limb: an empty `x` gives one zero limb, so every buffer has an address).
    pub(super) fn copy_to_device(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<CudaSlice<u64>, GpuError> {
        crate::stats::copied_to_gpu(std::mem::size_of_val(x));
        if x.is_empty() {
            return Ok(stream.alloc_zeros::<u64>(1)?);
        }
        if 8 * x.len() < THREADED_MIN_BYTES {
            return Ok(stream.clone_htod(x)?);
        }
        // Every limb is written by the copies below before anything reads it.
        let dev = unsafe { stream.alloc::<u64>(x.len()) }?;
        let base = super::linear::addr(&dev, stream);
        let ctx = &self.ctx;
        self.in_lanes(x.len(), |lane| {
            ctx.bind_to_thread()?;
            let mut pending: [Option<CudaEvent>; 2] = [None, None];
            for (i, c) in (lane.first..x.len().div_ceil(CHUNK)).step_by(lane.stride).enumerate() {
                let k = i % 2;
                // The slot's previous DMA must be done before it is refilled.
                if let Some(e) = pending[k].take() {
                    e.synchronize()?;
                }
                let (start, end) = (c * CHUNK, ((c + 1) * CHUNK).min(x.len()));
                let slot = &mut lane.slots[k][..end - start];
                slot.copy_from_slice(&x[start..end]);
                unsafe { result::memcpy_htod_async(base + 8 * start as u64, slot, stream.cu_stream()) }?;
                pending[k] = Some(stream.record_event(None)?);
            }
            // The slots are free again for the next transfer.
            for e in pending.into_iter().flatten() {
                e.synchronize()?;
            }
            Ok(())
        })?;
        Ok(dev)
    }

    /// A device buffer's first `dst.len()` limbs into `dst`.
    pub(super) fn copy_from_device_into(&self, stream: &Arc<CudaStream>, src: &CudaSlice<u64>, dst: &mut [u64]) -> Result<(), GpuError> {
        if 8 * dst.len() < THREADED_MIN_BYTES {
            assert!(dst.len() <= src.len(), "copy_from_device_into past the end of the device buffer");
            crate::stats::copied_from_gpu(std::mem::size_of_val(dst));
            if !dst.is_empty() {
                stream.memcpy_dtoh(&src.slice(..dst.len()), dst)?;
            }
            return Ok(());
        }
        // SAFETY: dst is valid for dst.len() limbs.
        unsafe { self.copy_from_device_raw(stream, src, dst.as_mut_ptr(), dst.len()) }
    }

    /// `n` limbs (`8 n >= THREADED_MIN_BYTES`) of `src` to `dst`, which must be
    /// valid for writing `n` limbs (they need not be initialised).
    unsafe fn copy_from_device_raw(&self, stream: &Arc<CudaStream>, src: &CudaSlice<u64>, dst: *mut u64, n: usize) -> Result<(), GpuError> {
        assert!(n <= src.len(), "copy_from_device past the end of the device buffer");
        crate::stats::copied_from_gpu(8 * n);
        let base = super::linear::addr(src, stream);
        // Each lane writes only its own chunks of dst (c = first + i * stride).
        let out = SendPtr(dst);
        let ctx = &self.ctx;
        self.in_lanes(n, |lane| {
            ctx.bind_to_thread()?;
            let out = &out;
            let chunks: Vec<usize> = (lane.first..n.div_ceil(CHUNK)).step_by(lane.stride).collect();
            let range = |c: usize| (c * CHUNK, ((c + 1) * CHUNK).min(n));
            let mut pending: [Option<(CudaEvent, usize)>; 2] = [None, None];
            // Keep one DMA in flight while the previous chunk is copied out.
            for (i, &c) in chunks.iter().enumerate() {
                let k = i % 2;
                let (start, end) = range(c);
                unsafe { result::memcpy_dtoh_async(&mut lane.slots[k][..end - start], base + 8 * start as u64, stream.cu_stream()) }?;
                pending[k] = Some((stream.record_event(None)?, c));
                if let Some((e, prev)) = pending[1 - k].take() {
                    e.synchronize()?;
                    copy_out(out, lane.slots[1 - k], range(prev));
                }
            }
            for (k, p) in pending.iter_mut().enumerate() {
                if let Some((e, prev)) = p.take() {
                    e.synchronize()?;
                    copy_out(out, lane.slots[k], range(prev));
                }
            }
            Ok(())
        })
    }

    /// A device buffer into a new `Vec`.
    pub(super) fn copy_from_device(&self, stream: &Arc<CudaStream>, src: &CudaSlice<u64>) -> Result<Vec<u64>, GpuError> {
        let n = src.len();
        if 8 * n < THREADED_MIN_BYTES {
            crate::stats::copied_from_gpu(8 * n);
            return Ok(stream.clone_dtoh(src)?);
        }
        // Not zeroed: a zeroed large Vec costs a memset where the allocator
        // reuses memory (glibc does after its first free of that size).
        let mut v = Vec::with_capacity(n);
        unsafe {
            self.copy_from_device_raw(stream, src, v.as_mut_ptr(), n)?;
            v.set_len(n);
        }
        Ok(v)
    }
}

/// A destination pointer shared by copy threads that write disjoint chunks.
struct SendPtr(*mut u64);
unsafe impl Sync for SendPtr {}

fn copy_out(out: &SendPtr, slot: &[u64], (start, end): (usize, usize)) {
    // SAFETY: [start, end) lies in the destination (copy_from_device_into checked its
    // length) and only this lane writes it.
    unsafe { std::ptr::copy_nonoverlapping(slot.as_ptr(), out.0.add(start), end - start) };
}
