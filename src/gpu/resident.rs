//! Measurements the benchmarks ask the library for (through
//! `cugmp_bench_resident` and `cugmp_bench_transfer`): kernel throughput with
//! operands already on the device, and the ways of getting host operands to
//! an add kernel and back, so the routing's thresholds rest on numbers.

use super::device::{addr, guarded, Gpu, GpuError};
use cudarc::driver::sys::{self, CUevent_flags, CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTALLOC_PORTABLE};
use cudarc::driver::result;
use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice, PushKernelArg};
use std::sync::Arc;
use std::time::Instant;

/// Operations `time_resident` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resident {
    /// A device-to-device copy of n limbs: the ceiling the O(n) kernels are measured against.
    Copy,
    Add,
    Sub,
    Shl,
    Shr,
    And,
    Mul,
    Sqr,
}

impl Resident {
    /// The operation `cugmp_bench_resident` names.
    pub fn named(name: &[u8]) -> Option<Resident> {
        Some(match name {
            b"copy" => Resident::Copy,
            b"add" => Resident::Add,
            b"sub" => Resident::Sub,
            b"shl" => Resident::Shl,
            b"shr" => Resident::Shr,
            b"and" => Resident::And,
            b"mul" => Resident::Mul,
            b"sqr" => Resident::Sqr,
            _ => return None,
        })
    }
}

/// How host operands reach the add kernel (`time_transfer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// What the ABI path does: the engine's own copies (src/gpu/staging.rs:
    /// several threads through pinned slots for large operands).
    AbiPath,
    /// One thread's host copies into pinned staging buffers, DMA both ways.
    PinnedStaging,
    /// Host copies into pinned buffers; the kernel reads and writes them over PCIe.
    ZeroCopy,
    /// DMA from and to pinned buffers, no host copies: the floor if the
    /// caller's limbs were pinned already.
    PinnedOperands,
    /// The caller's own buffers page-locked for the call (cuMemHostRegister,
    /// then unregistered), DMA straight from and to them: what pinning the
    /// limbs in place, instead of copying them through slots, would cost.
    Registered,
    /// One upload of n limbs by the engine's copies, no kernel: the rate
    /// of a product's operand going up. `gap` leaves 300 us idle before
    /// each one (untimed), as a product's kernels leave the copy threads
    /// between its transfers.
    Up { gap: bool },
    /// One download of n limbs into a host buffer already written, the
    /// same way.
    Down { gap: bool },
}

/// The idle time before each transfer of `Transfer::Up` and `Down` with a
/// gap: about a product's device time at 10^6 limbs.
const GAP: std::time::Duration = std::time::Duration::from_micros(300);

impl Transfer {
    /// The staging `cugmp_bench_transfer` names ("pageable" is "abi"'s
    /// older name).
    pub fn named(name: &[u8]) -> Option<Transfer> {
        Some(match name {
            b"abi" | b"pageable" => Transfer::AbiPath,
            b"pinned" => Transfer::PinnedStaging,
            b"zero-copy" => Transfer::ZeroCopy,
            b"pinned-operands" => Transfer::PinnedOperands,
            b"registered" => Transfer::Registered,
            b"up" => Transfer::Up { gap: false },
            b"up-gap" => Transfer::Up { gap: true },
            b"down" => Transfer::Down { gap: false },
            b"down-gap" => Transfer::Down { gap: true },
            _ => return None,
        })
    }
}

/// Host memory page-locked while this lives (cuMemHostRegister), so DMA
/// reaches it directly; unregistered on drop.
struct Registered(*mut std::ffi::c_void);

impl Registered {
    fn new<T>(x: &[T]) -> Result<Self, GpuError> {
        let p = x.as_ptr() as *mut std::ffi::c_void;
        // SAFETY: x is valid for size_of_val(x) bytes for as long as the
        // guard lives (the caller keeps it borrowed).
        unsafe { sys::cuMemHostRegister_v2(p, std::mem::size_of_val(x), 0) }.result()?;
        Ok(Self(p))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: registered in new(); nothing else unregisters it.
        let _ = unsafe { sys::cuMemHostUnregister(self.0) };
    }
}

/// Deterministic limbs (xorshift), top limb nonzero.
pub fn pseudo_random(n: usize, seed: u64) -> Vec<u64> {
    let mut x = seed | 1;
    let mut v: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect();
    if let Some(top) = v.last_mut() {
        *top |= 1 << 63;
    }
    v
}

impl Gpu {
    /// Seconds per operation (mean over `reps`, timed with CUDA events) of
    /// `op` on `n`-limb operands already on the device, and the bytes it
    /// reads and writes in device memory.
    pub fn time_resident(&self, op: Resident, n: usize, reps: usize) -> Result<(f64, u64), GpuError> {
        guarded(|| {
            let stream = self.stream();
            let a = stream.clone_htod(&pseudo_random(n, 1))?;
            let b = stream.clone_htod(&pseudo_random(n, 2))?;
            let mut r = stream.alloc_zeros::<u64>(2 * n + 1)?;
            let run = |stream: &Arc<CudaStream>, r: &mut CudaSlice<u64>| -> Result<u64, GpuError> {
                let nn = n as u64;
                Ok(match op {
                    Resident::Add | Resident::Sub => {
                        let rp = addr(r, stream);
                        self.addsub_dev(stream, op == Resident::Sub, rp, addr(&a, stream), n, addr(&b, stream), n, rp + 8 * nn)?;
                        24 * nn
                    }
                    Resident::Copy => {
                        stream.memcpy_dtod(&a, &mut r.slice_mut(..n))?;
                        16 * nn
                    }
                    Resident::Shl => {
                        let (limbs, bits) = (0u64, 17u32);
                        launch_elementwise!(self, stream, shl, n + 1, r, &a, &nn, &limbs, &bits);
                        16 * nn
                    }
                    Resident::Shr => {
                        let (limbs, bits) = (0u64, 17u32);
                        launch_elementwise!(self, stream, shr, n, r, &a, &nn, &limbs, &bits);
                        16 * nn
                    }
                    Resident::And => {
                        self.bitwise_dev(stream, super::linear::Logic::And, r, n, &a, n, 0, &b, n, 0)?;
                        24 * nn
                    }
                    Resident::Mul => {
                        self.product_dev(stream, (addr(&a, stream), n), super::ntt::Second::At(addr(&b, stream), n))?;
                        super::ntt::bytes_moved(n, n, false, super::ntt::wide_from())
                    }
                    Resident::Sqr => {
                        self.product_dev(stream, (addr(&a, stream), n), super::ntt::Second::Square)?;
                        super::ntt::bytes_moved(n, n, true, super::ntt::wide_from())
                    }
                })
            };
            run(&stream, &mut r)?; // warm-up
            let start = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            let end = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            start.record(&stream)?;
            let mut bytes = 0;
            for _ in 0..reps.max(1) {
                bytes = run(&stream, &mut r)?;
            }
            end.record(&stream)?;
            let ms = start.elapsed_ms(&end)? as f64;
            Ok((ms / 1e3 / reps.max(1) as f64, bytes))
        })
    }

    /// Seconds per add of two `n`-limb host operands into a host result
    /// (mean over `reps`, wall clock), staging as `how` says. Buffers are
    /// allocated before timing, as a pool would hold them.
    pub fn time_transfer(&self, how: Transfer, n: usize, reps: usize) -> Result<f64, GpuError> {
        guarded(|| {
            let (a, b) = (pseudo_random(n, 3), pseudo_random(n, 4));
            let mut out = vec![0u64; n + 1];
            let stream = self.stream();
            let reps = reps.max(1);
            if how == Transfer::AbiPath {
                let (sa, sb) = (super::linear::Signed { negative: false, magnitude: &a }, super::linear::Signed { negative: false, magnitude: &b });
                return mean_seconds(reps, || self.add(sa, sb).map(|r| drop(std::hint::black_box(r))));
            }
            if let Transfer::Up { gap } | Transfer::Down { gap } = how {
                // A download's source on the device, and `b` as its
                // destination (written already, so no page faults in the copy).
                let mut down = match how {
                    Transfer::Down { .. } => Some((stream.clone_htod(&a)?, b)),
                    _ => None,
                };
                let mut once = || -> Result<(), GpuError> {
                    match &mut down {
                        Some((dev, host)) => self.copy_from_device_into(&stream, dev, host)?,
                        None => drop(self.copy_to_device(&stream, &a)?),
                    }
                    Ok(())
                };
                once()?;
                let mut seconds = 0.0;
                for _ in 0..reps {
                    if gap {
                        std::thread::sleep(GAP);
                    }
                    let t = Instant::now();
                    once()?;
                    seconds += t.elapsed().as_secs_f64();
                }
                return Ok(seconds / reps as f64);
            }
            if how == Transfer::Registered {
                let da = stream.alloc_zeros::<u64>(n)?;
                let db = stream.alloc_zeros::<u64>(n)?;
                let dr = stream.alloc_zeros::<u64>(n + 1)?;
                let once = || -> Result<(), GpuError> {
                    let (_ra, _rb, _rr) = (Registered::new(&a)?, Registered::new(&b)?, Registered::new(&out)?);
                    let (ap, bp, rp) = (addr(&da, &stream), addr(&db, &stream), addr(&dr, &stream));
                    // SAFETY: the host slices are registered and outlive the
                    // synchronize below; the device buffers hold n, n, n + 1 limbs.
                    unsafe {
                        result::memcpy_htod_async(ap, &a, stream.cu_stream())?;
                        result::memcpy_htod_async(bp, &b, stream.cu_stream())?;
                    }
                    self.addsub_dev(&stream, false, rp, ap, n, bp, n, rp + 8 * n as u64)?;
                    unsafe { result::memcpy_dtoh_async(&mut out, rp, stream.cu_stream())? };
                    stream.synchronize()?;
                    Ok(())
                };
                return mean_seconds(reps, once);
            }
            let flags = CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE;
            let mut pa: PinnedHostSlice<u64> = unsafe { self.ctx.alloc_pinned_with_flags(n, flags) }?;
            let mut pb: PinnedHostSlice<u64> = unsafe { self.ctx.alloc_pinned_with_flags(n, flags) }?;
            let mut pr: PinnedHostSlice<u64> = unsafe { self.ctx.alloc_pinned_with_flags(n + 1, flags) }?;
            let mut da = stream.alloc_zeros::<u64>(n)?;
            let mut db = stream.alloc_zeros::<u64>(n)?;
            let dr = stream.alloc_zeros::<u64>(n + 1)?;
            let once = || -> Result<(), GpuError> {
                let stream = &stream;
                if how != Transfer::PinnedOperands {
                    pa.as_mut_slice()?.copy_from_slice(&a);
                    pb.as_mut_slice()?.copy_from_slice(&b);
                }
                if how == Transfer::ZeroCopy {
                    // Unified addressing: a mapped pinned buffer's host address is its device address.
                    let (ap, bp, rp) = (pa.as_ptr()? as u64, pb.as_ptr()? as u64, pr.as_mut_ptr()? as u64);
                    self.addsub_dev(stream, false, rp, ap, n, bp, n, rp + 8 * n as u64)?;
                } else {
                    stream.memcpy_htod(&pa, &mut da)?;
                    stream.memcpy_htod(&pb, &mut db)?;
                    let rp = addr(&dr, stream);
                    self.addsub_dev(stream, false, rp, addr(&da, stream), n, addr(&db, stream), n, rp + 8 * n as u64)?;
                    stream.memcpy_dtoh(&dr, &mut pr)?;
                }
                stream.synchronize()?;
                if how != Transfer::PinnedOperands {
                    out.copy_from_slice(pr.as_slice()?);
                }
                Ok(())
            };
            mean_seconds(reps, once)
        })
    }
}

/// Wall-clock seconds per call of `once` over `reps` calls, after one untimed.
fn mean_seconds(reps: usize, mut once: impl FnMut() -> Result<(), GpuError>) -> Result<f64, GpuError> {
    once()?;
    let t = Instant::now();
    for _ in 0..reps {
        once()?;
    }
    Ok(t.elapsed().as_secs_f64() / reps as f64)
}
