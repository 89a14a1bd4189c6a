//! Limbs between host memory and the device, at PCIe speed where the size
//! pays for it.
//!
//! A copy from pageable memory (the caller's limbs, a `Vec`) is staged by the
//! driver through its own pinned buffers on one thread: about 8 GB/s on the
//! GPU machine (RESULTS.md, "Transfer variants"), a seventh of PCIe. Large
//! transfers here are cut into chunks that several threads copy through
//! pinned slots of their own while the DMA of the previous chunk runs, so the
//! host copies run in parallel with each other and with PCIe. The pinned
//! slots and the copy threads are made as the device opens (those of
//! transfers up to 8 MiB) or on first use, and kept: starting the
//! threads for every transfer cost an 8 MiB upload 40% of its rate (11.9
//! against 20.4 GB/s; RESULTS.md, "Staged transfers"). A large download's
//! destination gets huge pages, faulted in while the kernels before the
//! download still run (`pages::prefer_huge_pages`, `touch_pages`).
//!
//! Limbs that lie in a pinned block of the pool (src/pinned.rs: large
//! products' limbs, which this module pins for it, `pin_for_pool`) move by
//! one DMA, with no copy on the host.

use super::device::{addr, Gpu, GpuError};
use crate::stats::Phase;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// The context the pool's blocks are pinned in (the first device's); the
/// registration is portable, so every device of the process reaches them.
static POOL_CONTEXT: OnceLock<Arc<CudaContext>> = OnceLock::new();

/// Makes the pool of pinned blocks (src/pinned.rs) pin in `ctx`, unless
/// `CUGMP_PINNED=0`. The first device opened calls it.
pub(super) fn pin_for_pool(ctx: &Arc<CudaContext>) {
    if !crate::config::get().pinned || POOL_CONTEXT.set(ctx.clone()).is_err() {
        return;
    }
    crate::pinned::install(crate::pinned::Pinner { pin: pin_block, unpin: unpin_block });
}

fn pin_block(p: *mut u8, bytes: usize) -> bool {
    let Some(ctx) = POOL_CONTEXT.get() else { return false };
    // SAFETY: [p, p + bytes) is a mapping of the pool's, not yet pinned.
    ctx.bind_to_thread().is_ok() && unsafe { sys::cuMemHostRegister_v2(p.cast(), bytes, sys::CU_MEMHOSTREGISTER_PORTABLE) }.result().is_ok()
}

fn unpin_block(p: *mut u8, _bytes: usize) {
    if let Some(ctx) = POOL_CONTEXT.get() {
        // SAFETY: a block pin_block registered, no longer used.
        if ctx.bind_to_thread().is_ok() {
            let _ = unsafe { sys::cuMemHostUnregister(p.cast()) };
        }
    }
}

/// Whether `x` lies in a pinned block of the pool (a DMA moves it alone).
fn in_pinned_block(x: &[u64]) -> bool {
    8 * x.len() >= crate::pinned::MIN_BYTES && crate::pinned::holds(x.as_ptr() as *const u8, 8 * x.len())
}

/// Below this the driver's own path is as fast (and takes no threads).
const THREADED_MIN_BYTES: usize = 4 << 20;
/// Limbs a thread moves through one slot at once (1 MiB).
const CHUNK: usize = 1 << 17;
/// Copy threads a transfer uses at most; each has two slots (double
/// buffering). Sixteen (the GPU machine's cores), not eight: a 16 MiB
/// download, one chunk a thread, came back at 33.3 GB/s against 21.3 with
/// eight threads of two chunks each, whose second chunks' copies out ran
/// last, one after another (RESULTS.md, "Staged transfers"; both
/// settings there with non-temporal copies out).
const MAX_LANES: usize = 16;

/// The pinned slots (two per copy thread) and the copy threads, made on
/// first use; the lock is held for a whole transfer.
#[derive(Default)]
pub(super) struct Staging(Mutex<Kept>);

#[derive(Default)]
pub(super) struct Kept {
    slots: Vec<PinnedHostSlice<u64>>,
    crew: Crew,
}

/// Transfers up to this many bytes find their pinned slots and copy
/// threads made when the device opens ([`Gpu::prepare_staging`]).
const PREPARED_BYTES: usize = 8 << 20;

impl Kept {
    /// The slots and the copy threads of `lanes` lanes, made where fewer
    /// are kept.
    fn make(&mut self, ctx: &Arc<CudaContext>, lanes: usize) -> Result<(), GpuError> {
        while self.slots.len() < 2 * lanes {
            // Plain page-locked memory: write-combined memory (cudarc's
            // default) is slow for the host to read back.
            self.slots.push(unsafe { ctx.alloc_pinned_with_flags::<u64>(CHUNK, 0) }?);
        }
        self.crew.grow(lanes)
    }
}

/// Copy threads (lanes) of a staged transfer of `limbs` limbs: one a chunk,
/// at most MAX_LANES and the host's parallelism.
fn lanes_for(limbs: usize) -> usize {
    limbs.div_ceil(CHUNK).clamp(1, MAX_LANES.min(crate::parallel::cores()))
}

/// `dst.copy_from_slice(src)` into a pinned slot with non-temporal stores
/// (x86-64): the slot is read next by the DMA engine, not by this core, so
/// its lines need not be fetched into the cache first. Measured on the GPU
/// machine (RESULTS.md, "Staged transfers", 8 kept threads): 8 and 16 MiB
/// uploads at 22.1 and 29.1 GB/s against 20.4 and 26.1 with memcpy, 80 MiB
/// the same (39.0, 40.1). The download's copies out of the slots stay
/// memcpy: with these stores 80 and 160 MiB came down at 31.5 and 31.9 GB/s
/// against 36.2 and 39.9.
fn copy_streaming(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len(), "copy_streaming takes slices of one length");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // Up to one limb until dst is 16-byte aligned (pinned slots are
        // page aligned, so none there), then 64 bytes a step.
        let head = (dst.as_ptr() as usize % 16 / 8).min(dst.len());
        dst[..head].copy_from_slice(&src[..head]);
        let body = (dst.len() - head) / 8 * 8;
        let (d, x) = (dst[head..].as_mut_ptr(), src[head..].as_ptr());
        for i in (0..body).step_by(8) {
            // SAFETY: limbs i..i + 8 lie in both slices (i + 8 <= body);
            // d + i is 16-byte aligned (d is, and i is a multiple of 2).
            unsafe {
                for k in (0..8).step_by(2) {
                    let v = _mm_loadu_si128(x.add(i + k) as *const __m128i);
                    _mm_stream_si128(d.add(i + k) as *mut __m128i, v);
                }
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
        // The streaming stores must be visible before the DMA is queued.
        unsafe { _mm_sfence() };
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Threads kept for the copies: `run(n, task)` calls `task(i)` for each i
/// below n, each on its own thread, and returns when all calls have.
#[derive(Default)]
struct Crew {
    shared: Arc<CrewState>,
    threads: usize,
}

#[derive(Default)]
struct CrewState {
    job: Mutex<Job>,
    go: Condvar,
    done: Condvar,
}

/// The task of the current run, its width, the calls still running.
#[derive(Default)]
struct Job {
    generation: u64,
    task: Option<TaskPtr>,
    width: usize,
    left: usize,
}

/// A task whose borrow `Crew::run` outlives (it returns only when every call
/// of the task has), so the threads may hold it without a lifetime.
#[derive(Clone, Copy)]
struct TaskPtr(*const (dyn Fn(usize) + Sync));
// SAFETY: the task is Sync, and `run` keeps it alive while threads use it.
unsafe impl Send for TaskPtr {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Crew {
    /// At least `n` threads, started now where fewer run.
    fn grow(&mut self, n: usize) -> Result<(), GpuError> {
        while self.threads < n {
            let (i, shared) = (self.threads, self.shared.clone());
            let seen = lock(&shared.job).generation;
            std::thread::Builder::new()
                .name(format!("cugmp-copy-{i}"))
                .spawn(move || crew_thread(&shared, i, seen))
                .map_err(|_| GpuError::Thread)?;
            self.threads += 1;
        }
        Ok(())
    }

    /// `task(i)` for i in 0..n (n at most the threads started), each on its
    /// own thread; returns when all have returned. A call that panics has
    /// returned too (the task records its own results).
    fn run(&self, n: usize, task: &(dyn Fn(usize) + Sync)) {
        assert!(n <= self.threads, "Crew::run on more threads than were started");
        // SAFETY: only the lifetime is erased; this function returns only
        // when `left` is 0, after every thread's last use of the task.
        let task: *const (dyn Fn(usize) + Sync + '_) = task;
        let task = TaskPtr(unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(task) });
        let mut job = lock(&self.shared.job);
        job.generation += 1;
        job.task = Some(task);
        job.width = n;
        job.left = n;
        self.shared.go.notify_all();
        while job.left > 0 {
            job = self.shared.done.wait(job).unwrap_or_else(|p| p.into_inner());
        }
        job.task = None;
    }
}

/// Copy thread `i`: each new run of width above `i` calls its task once.
fn crew_thread(shared: &CrewState, i: usize, mut seen: u64) {
    loop {
        let task = {
            let mut job = lock(&shared.job);
            while job.generation == seen {
                job = shared.go.wait(job).unwrap_or_else(|p| p.into_inner());
            }
            seen = job.generation;
            match job.task {
                Some(task) if i < job.width => task,
                _ => continue,
            }
        };
        // SAFETY: `run` waits for this call before the task goes away.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*task.0)(i) }));
        let mut job = lock(&shared.job);
        job.left -= 1;
        if job.left == 0 {
            shared.done.notify_one();
        }
    }
}

/// One thread's pinned slots and what it moves through them.
struct Lane<'a> {
    slots: [&'a mut [u64]; 2],
    /// The chunks of this lane: every `stride`-th from `first`.
    first: usize,
    stride: usize,
}

impl Gpu {
    /// The slots and copy threads of a staged transfer of
    /// `PREPARED_BYTES`, made as the device opens, beside the caller.
    /// Before, a program's first staged transfer made them itself, and a
    /// process's first 4 MiB upload took 5.2 ms, the next ones 0.4 to 1.1
    /// (RESULTS.md, "Radix conversion from digits").
    pub(super) fn prepare_staging(&self) {
        let lanes = lanes_for(PREPARED_BYTES / 8);
        if let Err(e) = lock(&self.staging.0).make(&self.ctx, lanes) {
            crate::config::log!("staging: no slots made ahead ({e}); the first large transfer makes them");
        }
    }

    /// Run `work` on each copy thread's lane over `limbs` limbs in chunks.
    fn in_lanes(&self, limbs: usize, work: impl Fn(&mut Lane<'_>) -> Result<(), GpuError> + Sync) -> Result<(), GpuError> {
        let lanes = lanes_for(limbs);
        // Another thread's transfer holds the slots for its whole length.
        let asked = std::time::Instant::now();
        let mut kept = lock(&self.staging.0);
        crate::stats::phase(Phase::Wait, asked.elapsed());
        let kept = &mut *kept;
        kept.make(&self.ctx, lanes)?;
        let mut views = Vec::with_capacity(2 * lanes);
        for s in kept.slots.iter_mut().take(2 * lanes) {
            views.push(s.as_mut_slice()?);
        }
        let mut views = views.into_iter();
        let mut lane_list = Vec::with_capacity(lanes);
        for first in 0..lanes {
            let (Some(a), Some(b)) = (views.next(), views.next()) else { return Err(GpuError::TooLarge) };
            lane_list.push(Mutex::new(Lane { slots: [a, b], first, stride: lanes }));
        }
        // A lane whose call panicked keeps this.
        let results: Vec<Mutex<Result<(), GpuError>>> = (0..lanes).map(|_| Mutex::new(Err(GpuError::Panic))).collect();
        kept.crew.run(lanes, &|i| {
            let r = work(&mut lock(&lane_list[i]));
            *lock(&results[i]) = r;
        });
        results.into_iter().try_for_each(|r| r.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Host limbs to a new device buffer of the same length (at least one
    /// limb: an empty `x` gives one zero limb, so every buffer has an address).
    pub(super) fn copy_to_device(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<CudaSlice<u64>, GpuError> {
        timed(Phase::Upload, || self.copy_to_device_untimed(stream, x))
    }

    /// Where `x` (non-empty) lies in a pinned block: a new device buffer
    /// of its length, its DMA queued on `stream` and not waited for. The
    /// caller keeps `x` alive and unchanged until `stream`'s work so far is
    /// done (a product waits for it with its download, `Gpu::on_device`).
    /// None where `x` is elsewhere (`copy_to_device` stages it).
    pub(super) fn queue_pinned_upload(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<Option<CudaSlice<u64>>, GpuError> {
        timed(Phase::Upload, || {
            let queued = self.queue_pinned_upload_untimed(stream, x)?;
            if queued.is_some() {
                crate::stats::copied_to_gpu(std::mem::size_of_val(x));
                if crate::stats::profiling() {
                    // The profile's upload column holds the DMA, not only its queueing.
                    stream.synchronize()?;
                }
            }
            Ok(queued)
        })
    }

    fn queue_pinned_upload_untimed(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<Option<CudaSlice<u64>>, GpuError> {
        if x.is_empty() || !in_pinned_block(x) {
            return Ok(None);
        }
        let began = crate::config::get().log.then(std::time::Instant::now);
        // Written whole by the DMA before anything reads it.
        let dev = unsafe { stream.alloc::<u64>(x.len()) }?;
        crate::stats::pinned_transfer(8 * x.len());
        unsafe { result::memcpy_htod_async(addr(&dev, stream), x, stream.cu_stream()) }?;
        if let Some(t) = began {
            crate::config::log!("upload by DMA alone, {} limbs: buffer and DMA queued in {:.3} ms", x.len(), t.elapsed().as_secs_f64() * 1e3);
        }
        Ok(Some(dev))
    }

    fn copy_to_device_untimed(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<CudaSlice<u64>, GpuError> {
        crate::stats::copied_to_gpu(std::mem::size_of_val(x));
        if x.is_empty() {
            return Ok(stream.alloc_zeros::<u64>(1)?);
        }
        if let Some(dev) = self.queue_pinned_upload_untimed(stream, x)? {
            // x is the caller's only until this returns, as when staged.
            stream.record_event(None)?.synchronize()?;
            return Ok(dev);
        }
        if 8 * x.len() < THREADED_MIN_BYTES {
            return Ok(stream.clone_htod(x)?);
        }
        // Every limb is written by the copies below before anything reads it.
        let dev = unsafe { stream.alloc::<u64>(x.len()) }?;
        let base = addr(&dev, stream);
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
                copy_streaming(slot, &x[start..end]);
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
        timed(Phase::Download, || self.copy_from_device_into_untimed(stream, src, dst))
    }

    fn copy_from_device_into_untimed(&self, stream: &Arc<CudaStream>, src: &CudaSlice<u64>, dst: &mut [u64]) -> Result<(), GpuError> {
        assert!(dst.len() <= src.len(), "copy_from_device_into past the end of the device buffer");
        self.copy_from_device_at_untimed(stream, addr(src, stream), dst)
    }

    /// The `dst.len()` limbs at device address `at` into `dst`, on `stream`
    /// (after what is queued there before). The caller keeps the device
    /// buffer alive and at least that long.
    pub(super) fn copy_from_device_at(&self, stream: &Arc<CudaStream>, at: u64, dst: &mut [u64]) -> Result<(), GpuError> {
        timed(Phase::Download, || self.copy_from_device_at_untimed(stream, at, dst))
    }

    fn copy_from_device_at_untimed(&self, stream: &Arc<CudaStream>, at: u64, dst: &mut [u64]) -> Result<(), GpuError> {
        if in_pinned_block(dst) {
            crate::stats::copied_from_gpu(std::mem::size_of_val(dst));
            crate::stats::pinned_transfer(std::mem::size_of_val(dst));
            unsafe { result::memcpy_dtoh_async(dst, at, stream.cu_stream()) }?;
            stream.synchronize()?;
            return Ok(());
        }
        if 8 * dst.len() < THREADED_MIN_BYTES {
            crate::stats::copied_from_gpu(std::mem::size_of_val(dst));
            if !dst.is_empty() {
                unsafe { result::memcpy_dtoh_async(dst, at, stream.cu_stream()) }?;
                stream.synchronize()?;
            }
            return Ok(());
        }
        // SAFETY: dst is valid for dst.len() limbs.
        unsafe { self.copy_from_device_raw(stream, at, dst.as_mut_ptr(), dst.len()) }
    }

    /// `n` limbs (`8 n >= THREADED_MIN_BYTES`) at device address `base` to
    /// `dst`, which must be valid for writing `n` limbs (they need not be
    /// initialised).
    unsafe fn copy_from_device_raw(&self, stream: &Arc<CudaStream>, base: u64, dst: *mut u64, n: usize) -> Result<(), GpuError> {
        crate::stats::copied_from_gpu(8 * n);
        // Then the lanes fault its pages in ahead of their copies (`touch_pages`).
        let huge = crate::pages::prefer_huge_pages(dst as *mut u8, 8 * n);
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
                if i == 0 && huge {
                    // The first DMA waits for the kernels before it; the
                    // lane meanwhile faults in its chunks' huge pages.
                    for &c in &chunks {
                        touch_pages(out, range(c));
                    }
                }
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
        timed(Phase::Download, || self.copy_from_device_untimed(stream, src))
    }

    fn copy_from_device_untimed(&self, stream: &Arc<CudaStream>, src: &CudaSlice<u64>) -> Result<Vec<u64>, GpuError> {
        let n = src.len();
        if 8 * n < THREADED_MIN_BYTES {
            crate::stats::copied_from_gpu(8 * n);
            return Ok(stream.clone_dtoh(src)?);
        }
        // Not zeroed: a zeroed large Vec costs a memset where the allocator
        // reuses memory (glibc does after its first free of that size).
        let mut v = Vec::with_capacity(n);
        unsafe {
            self.copy_from_device_raw(stream, addr(src, stream), v.as_mut_ptr(), n)?;
            v.set_len(n);
        }
        Ok(v)
    }
}

/// Limbs a small page holds.
const PAGE_LIMBS: usize = 4096 / 8;

/// Writes a zero limb on every small page of the destination's limbs
/// [start, end), which the download overwrites afterwards: a page not yet
/// there faults in now (a huge one where advised), while the device still
/// computes, rather than under the copy out of the slots. The destination
/// never overlaps an operand (the products' rule), and the operands are on
/// the device before a download begins.
fn touch_pages(out: &SendPtr, (start, end): (usize, usize)) {
    for i in (start..end).step_by(PAGE_LIMBS) {
        // SAFETY: i lies in this lane's chunk of the destination.
        unsafe { std::ptr::write_volatile(out.0.add(i), 0) };
    }
}

/// `f`, one copy, its time given to CUGMP_PROFILE as `phase` (less the wait
/// for the slots, which `in_lanes` gives as its own).
fn timed<T>(phase: Phase, f: impl FnOnce() -> T) -> T {
    if !crate::stats::profiling() {
        return f();
    }
    let start = std::time::Instant::now();
    let waited = crate::stats::phase_so_far(Phase::Wait);
    let value = f();
    let waited = crate::stats::phase_so_far(Phase::Wait) - waited;
    crate::stats::phase(phase, start.elapsed().saturating_sub(waited));
    value
}

/// A destination pointer shared by copy threads that write disjoint chunks.
struct SendPtr(*mut u64);
unsafe impl Sync for SendPtr {}

fn copy_out(out: &SendPtr, slot: &[u64], (start, end): (usize, usize)) {
    // SAFETY: [start, end) lies in the destination (copy_from_device_into checked its
    // length) and only this lane writes it.
    unsafe { std::ptr::copy_nonoverlapping(slot.as_ptr(), out.0.add(start), end - start) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_streaming_copies_every_limb() {
        let src: Vec<u64> = (0..300u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).collect();
        // Every length to past a few 64-byte steps, at an aligned and an
        // unaligned (by one limb) destination, with guard limbs either side.
        for offset in 0..2 {
            for len in 0..40 {
                let mut dst = vec![0u64; len + offset + 2];
                copy_streaming(&mut dst[offset + 1..offset + 1 + len], &src[..len]);
                assert_eq!(&dst[offset + 1..offset + 1 + len], &src[..len], "length {len}, offset {offset}");
                assert!(dst[..offset + 1].iter().chain(&dst[offset + 1 + len..]).all(|&l| l == 0), "wrote outside: length {len}");
            }
        }
        let mut dst = vec![0u64; src.len()];
        copy_streaming(&mut dst, &src);
        assert_eq!(dst, src);
    }

    #[test]
    fn crew_runs_each_index_once_per_run() {
        let mut crew = Crew::default();
        crew.grow(3).expect("threads");
        let counts: Vec<Mutex<usize>> = (0..5).map(|_| Mutex::new(0)).collect();
        for width in [3, 1, 2, 3] {
            crew.run(width, &|i| *lock(&counts[i]) += 1);
        }
        // Index 0 ran in all four runs, 1 in three, 2 in two; none beyond.
        let got: Vec<usize> = counts.iter().map(|c| *lock(c)).collect();
        assert_eq!(got, [4, 3, 2, 0, 0]);
        // Threads started later take part in the runs after.
        crew.grow(5).expect("threads");
        crew.run(5, &|i| *lock(&counts[i]) += 10);
        let got: Vec<usize> = counts.iter().map(|c| *lock(c)).collect();
        assert_eq!(got, [14, 13, 12, 10, 10]);
    }

    #[test]
    fn crew_survives_a_panicking_task() {
        let mut crew = Crew::default();
        crew.grow(2).expect("threads");
        let ran = Mutex::new(Vec::new());
        crew.run(2, &|i| {
            lock(&ran).push(i);
            assert!(i != 1, "planted panic in copy thread 1");
        });
        // run returned; both threads serve the next run.
        crew.run(2, &|i| lock(&ran).push(10 + i));
        let mut got = lock(&ran).clone();
        got.sort();
        assert_eq!(got, [0, 1, 10, 11]);
    }
}
