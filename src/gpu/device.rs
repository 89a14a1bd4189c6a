//! The driver and the contexts: the process's [`Gpu`]s, one a device
//! (context, module of kernels, streams), opened once, all together, by
//! [`get`]; which of them a thread's work goes to; the errors every GPU
//! operation returns; the claims on device memory against
//! `CUGMP_GPU_MEM_LIMIT`; the fault switches; launch geometry.
//!
//! [`get`] returns None, silently unless `CUGMP_LOG=1`, when the GPU is
//! off, the library was built without kernels, libcuda is absent, there is
//! no device, or anything in initialisation fails; [`available`] says the
//! same without waiting for the devices' opening, which it starts on a
//! thread of its own. A device that fails to open leaves the others.

use super::{gfp, linear, ntt, staging};
use crate::config::{self, log, Fault, GpuMode};
use crate::stats::Fallback;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, DevicePtr, DriverError, LaunchConfig};

/// The kernels, compiled by build.rs from `cuda/*.cu` into one fatbin.
#[cfg(cugmp_kernels)]
static FATBIN: &[u8] = include_bytes!(env!("CUGMP_FATBIN"));

/// Whether this build carries kernels at all.
pub const KERNELS_COMPILED: bool = cfg!(cugmp_kernels);

#[derive(Debug)]
pub enum GpuError {
    Driver(DriverError),
    /// `CUGMP_FAULT` asked for this failure.
    Injected(&'static str),
    /// cudarc panicked; caught so the operation can finish on the CPU.
    Panic,
    /// Beyond the exactness bound or the device memory free now.
    TooLarge,
    /// A copy thread could not be started.
    Thread,
    /// A check on the device failed (a product's, src/gpu/gfp/mod.rs; an
    /// inverse's error bound, src/gpu/radix.rs): the result is discarded.
    Inexact,
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Driver(e) => write!(f, "CUDA error: {e:?}"),
            GpuError::Injected(what) => write!(f, "injected fault {what}"),
            GpuError::Panic => write!(f, "panic in the CUDA bindings"),
            GpuError::TooLarge => write!(f, "operands too large for the device"),
            GpuError::Thread => write!(f, "no copy thread could be started"),
            GpuError::Inexact => write!(f, "a result failed its exactness check on the device"),
        }
    }
}

impl GpuError {
    /// The reason `CUGMP_STATS` counts this failure under.
    pub fn fallback(&self) -> Fallback {
        match self {
            GpuError::Driver(_) => Fallback::Driver,
            GpuError::Injected(_) => Fallback::Injected,
            GpuError::Panic => Fallback::Panic,
            GpuError::TooLarge => Fallback::TooLarge,
            GpuError::Thread => Fallback::Thread,
            GpuError::Inexact => Fallback::Inexact,
        }
    }
}

impl From<DriverError> for GpuError {
    fn from(e: DriverError) -> Self {
        GpuError::Driver(e)
    }
}

/// The element-wise kernels' geometry (ELEMENTWISE_THREADS, ELEMENTWISE_BLOCK
/// in cuda/cugmp.cuh): threads a block, limbs a block.
const ELEMENTWISE_THREADS: u32 = 256;
const ELEMENTWISE_BLOCK: usize = 4 * ELEMENTWISE_THREADS as usize;

pub(super) struct Kernels {
    pub(super) add: CudaFunction,
    pub(super) sub: CudaFunction,
    pub(super) shl: CudaFunction,
    pub(super) shr: CudaFunction,
    pub(super) any_low_bits: CudaFunction,
    pub(super) window: CudaFunction,
    pub(super) slots_select: CudaFunction,
    pub(super) bitwise: CudaFunction,
    pub(super) ntt_tables: CudaFunction,
    pub(super) ntt_pass: CudaFunction,
    pub(super) ntt_pass_wide: CudaFunction,
    pub(super) ntt_radix3_wide: CudaFunction,
    pub(super) ntt_radix5_wide: CudaFunction,
    pub(super) ntt_combine_wide: CudaFunction,
    pub(super) ntt_combine3_wide: CudaFunction,
    pub(super) ntt_combine5_wide: CudaFunction,
    pub(super) ntt_combine_wide_carry: CudaFunction,
    pub(super) ntt_radix3: CudaFunction,
    pub(super) ntt_radix5: CudaFunction,
    pub(super) ntt_combine: CudaFunction,
    pub(super) ntt_combine3: CudaFunction,
    pub(super) ntt_combine5: CudaFunction,
    pub(super) ntt_combine_small: CudaFunction,
    pub(super) schoolbook_stage: CudaFunction,
    pub(super) schoolbook: CudaFunction,
    pub(super) ntt_sum: CudaFunction,
    pub(super) powm_4: CudaFunction,
    pub(super) powm_8: CudaFunction,
    pub(super) powm_16: CudaFunction,
    pub(super) powm_32: CudaFunction,
    pub(super) powm_64: CudaFunction,
    pub(super) powm_block_64: CudaFunction,
    pub(super) powm_block_128: CudaFunction,
    pub(super) powm_block_256: CudaFunction,
    pub(super) powm_block_512: CudaFunction,
    pub(super) gf2x_chunks: CudaFunction,
    pub(super) gf2x_pointwise: CudaFunction,
    pub(super) gf2x_gather: CudaFunction,
    pub(super) gf2x_taylor: CudaFunction,
    pub(super) gf2x_convert_tile: CudaFunction,
    pub(super) gf2x_fft_tile: CudaFunction,
    pub(super) gfp_roots: CudaFunction,
    pub(super) gfp_split: CudaFunction,
    pub(super) gfp_radix4: CudaFunction,
    pub(super) gfp_radix2: CudaFunction,
    pub(super) gfp_pointwise: CudaFunction,
    pub(super) gfp_combine: CudaFunction,
}

pub struct Gpu {
    /// The device's ordinal in the driver's list.
    pub ordinal: usize,
    pub name: String,
    pub total_mem: usize,
    pub compute_capability: (i32, i32),
    pub multiprocessors: u32,
    pub(super) ctx: Arc<CudaContext>,
    pub(super) kernels: Kernels,
    /// The streams operations run on, one a thread (`queue`).
    queues: Vec<Queue>,
    /// The NTT's twiddle tables, one per transform length used so far.
    pub(super) tables: ntt::Tables,
    /// The generalized-Fermat-prime FFT's roots table (src/gpu/gfp).
    pub(super) gfp_roots: gfp::Roots,
    /// Pinned host slots for large copies (src/gpu/staging.rs).
    pub(super) staging: staging::Staging,
    /// Small products' slots: streams, pinned buffers, workspaces and
    /// launch graphs (src/gpu/ntt/small.rs).
    pub(super) small: ntt::Slots,
}

/// A stream of the device's and what goes with it. A thread's GPU work all
/// goes to one device and one of its queues (`thread_slot`), the threads
/// spread over the devices and queues in turn: one thread's operations stay
/// in order, other threads' run beside them, each operation's buffers on its
/// own queue's streams. pi.c at 10^8
/// digits on 16 threads, its products on one stream, waited 3.9 ms for each
/// GPU product of 1024 to 2047 limbs (RESULTS.md, "Products from many
/// threads").
pub(super) struct Queue {
    pub(super) stream: Arc<CudaStream>,
    /// A second stream for uploads that overlap the queue's kernels
    /// (src/gpu/ntt/product.rs, `product_transforms`); None if it could not be
    /// made.
    pub(super) upload: Option<Arc<CudaStream>>,
    /// Streams on which a large product runs each prime's transforms beside
    /// the others' (src/gpu/ntt/product.rs, `transforms_in_lanes`), made at
    /// the first such product; None where the driver gave none.
    pub(super) lanes: OnceLock<Option<Lanes>>,
    /// The add/sub kernels' scan state (cuda/linear.cu), kept across calls:
    /// one a queue, for kernels of two queues may run at once.
    pub(super) scan: Mutex<linear::ScanState>,
    /// Products from host limbs to host limbs in progress on the queue, for
    /// the routing (`Gpu::in_flight`).
    pub(super) busy: Busy,
}

/// A queue's lanes (`Queue::lanes`) and the events that order a product's
/// work on them after the queue's stream (`fork`) and the stream after each
/// lane (`join`). Each product records them again, holding the lock from
/// its first record to its last wait, so that two threads of one queue
/// never wait on each other's records; made once, where an event a product
/// cost a create and a destroy on the caller's thread (RESULTS.md, "Primes
/// on lanes").
pub(super) struct Lanes {
    pub(super) streams: Vec<Arc<CudaStream>>,
    pub(super) events: Mutex<LaneEvents>,
}

pub(super) struct LaneEvents {
    pub(super) fork: CudaEvent,
    pub(super) join: Vec<CudaEvent>,
}

thread_local! {
    /// This thread's place among the devices' queues, given on its first
    /// GPU operation (usize::MAX: none yet): device `slot % devices`, queue
    /// `slot / devices` of that device's (modulo its queues).
    static SLOT: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}
/// The slot the next thread gets.
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

fn thread_slot() -> usize {
    SLOT.with(|l| {
        if l.get() == usize::MAX {
            l.set(NEXT_SLOT.fetch_add(1, Relaxed));
        }
        l.get()
    })
}

/// Products in progress on a queue and their result limbs: a new one of
/// the queue's waits behind them.
#[derive(Default)]
pub(super) struct Busy {
    products: AtomicUsize,
    limbs: AtomicUsize,
}

/// A product counted in `Busy` until it drops.
pub(super) struct BusyWith<'a>(&'a Busy, usize);

impl Busy {
    /// Count a product of `limbs` result limbs until the guard drops.
    pub(super) fn enter(&self, limbs: usize) -> BusyWith<'_> {
        self.products.fetch_add(1, Relaxed);
        self.limbs.fetch_add(limbs, Relaxed);
        BusyWith(self, limbs)
    }
}

impl Drop for BusyWith<'_> {
    fn drop(&mut self) {
        self.0.products.fetch_sub(1, Relaxed);
        self.0.limbs.fetch_sub(self.1, Relaxed);
    }
}

/// What the device holds now: products in progress, and their result
/// limbs, on all its queues; and how many queues it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InFlight {
    pub products: usize,
    pub limbs: usize,
    pub queues: usize,
}

/// The devices opened (none: the CPU engine serves the process).
static GPUS: OnceLock<Vec<Gpu>> = OnceLock::new();
/// The process that first asked for the device: a CUDA context does not
/// survive fork(), so a child (another pid) computes on the CPU engine, and
/// never waits on an opening its parent's thread was doing.
static OWNER: OnceLock<u32> = OnceLock::new();
/// Whether a thread has been started to open the device (`available`).
static OPENING: AtomicBool = AtomicBool::new(false);

fn in_owner() -> bool {
    if *OWNER.get_or_init(std::process::id) == std::process::id() {
        return true;
    }
    log!("forked child: the parent's CUDA context is unusable here; CPU engine only");
    false
}

/// This thread's device (the devices opened on this thread if no one has
/// yet), or None (see the module doc).
pub fn get() -> Option<&'static Gpu> {
    thread_device(all())
}

/// Every device opened (opened on this thread if no one has yet); empty
/// where [`get`] gives None.
pub fn all() -> &'static [Gpu] {
    if !in_owner() {
        return &[];
    }
    GPUS.get_or_init(init)
}

fn thread_device(gpus: &'static [Gpu]) -> Option<&'static Gpu> {
    if gpus.is_empty() {
        return None;
    }
    Some(&gpus[thread_slot() % gpus.len()])
}

/// The GPU engine as it stands, without waiting for it.
pub enum Availability {
    Ready(&'static Gpu),
    /// Being opened on a thread of its own: the CPU serves meanwhile.
    Opening,
    /// None to be had in this process.
    Absent,
}

/// The GPU engine if it is open; else the quick refusals (GPU off, no
/// kernels) answered at once, and the device's opening (driver, context,
/// module: a few hundred milliseconds, which a program's first large
/// operation would otherwise wait for) started on a thread of its own.
/// Whether the driver is there at all is the opener's question too: asking
/// it loads and unloads libcuda, 1.5 ms the first large operation would
/// otherwise wait for (RESULTS.md, "The first large operation of a
/// process").
pub fn available() -> Availability {
    if !in_owner() {
        return Availability::Absent;
    }
    if let Some(opened) = GPUS.get() {
        return thread_device(opened).map_or(Availability::Absent, Availability::Ready);
    }
    if quick_refusal().is_some() {
        // init() refuses at once; the answer is kept.
        return get().map_or(Availability::Absent, Availability::Ready);
    }
    if !OPENING.swap(true, Ordering::AcqRel) {
        let opener = std::thread::Builder::new().name("cugmp-open".into()).spawn(|| {
            get();
            // Beside the caller, which computes on the CPU or already on
            // the device: a product that wants a slot meanwhile waits for
            // the pool's lock, as for a slot it would make itself.
            for g in all() {
                g.prepare_small_products();
                g.prepare_staging();
            }
        });
        if opener.is_err() {
            // No thread: open it here.
            return get().map_or(Availability::Absent, Availability::Ready);
        }
    }
    Availability::Opening
}

/// Whether a device is open and serving this process now, without
/// starting its opening or waiting for it.
pub fn opened() -> bool {
    in_owner() && GPUS.get().is_some_and(|g| !g.is_empty())
}

/// The GPU engine once its opening (begun by [`available`]) has finished,
/// waiting for it at most `limit`: None if it is absent, or still opening
/// when the limit passes.
pub fn opened_within(limit: std::time::Duration) -> Option<&'static Gpu> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match available() {
            Availability::Ready(g) => return Some(g),
            Availability::Absent => return None,
            Availability::Opening if std::time::Instant::now() >= deadline => return None,
            // The opening takes a few hundred milliseconds; a check each
            // quarter millisecond costs nothing beside it.
            Availability::Opening => std::thread::sleep(std::time::Duration::from_micros(250)),
        }
    }
}

/// Why this process can have no GPU, known without loading the driver.
fn quick_refusal() -> Option<&'static str> {
    if config::get().gpu == GpuMode::Off {
        return Some("GPU disabled (CUGMP_GPU=off)");
    }
    if !KERNELS_COMPILED {
        return Some("built without GPU kernels (no nvcc at build time): CPU engine only");
    }
    None
}

/// Device bytes cuGMP's operations hold now, against `CUGMP_GPU_MEM_LIMIT`.
static RESERVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A claim on `bytes` of the device memory cuGMP may use, released on drop.
pub struct Reservation(usize);

impl Drop for Reservation {
    fn drop(&mut self) {
        RESERVED.fetch_sub(self.0, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Claim `bytes` for one operation: TooLarge (the CPU takes the operation)
/// when that would take cuGMP past `CUGMP_GPU_MEM_LIMIT`. Whether the device
/// has the memory is the allocator's answer; a failure there falls back too.
pub fn reserve(bytes: usize) -> Result<Reservation, GpuError> {
    use std::sync::atomic::Ordering::Relaxed;
    let limit = config::get().gpu_mem_limit.unwrap_or(usize::MAX);
    let before = RESERVED.fetch_add(bytes, Relaxed);
    if before.saturating_add(bytes) > limit {
        RESERVED.fetch_sub(bytes, Relaxed);
        return Err(GpuError::TooLarge);
    }
    Ok(Reservation(bytes))
}

fn init() -> Vec<Gpu> {
    let began = std::time::Instant::now();
    if let Some(why) = quick_refusal() {
        log!("{why}");
        return Vec::new();
    }
    // cudarc panics on the first driver call when libcuda is missing: ask first.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        log!("no CUDA driver (libcuda) found: CPU engine only");
        return Vec::new();
    }
    let mut phases = Phases::new(began);
    phases.mark("libcuda found");
    let count = match std::panic::catch_unwind(CudaContext::device_count) {
        Ok(Ok(n)) => n.max(0) as usize,
        Ok(Err(e)) => {
            log!("GPU unavailable ({e}): CPU engine only");
            return Vec::new();
        }
        Err(_) => {
            log!("GPU unavailable (the CUDA bindings panicked): CPU engine only");
            return Vec::new();
        }
    };
    // The opening's phases, for CUGMP_LOG: where its few hundred
    // milliseconds go, which a program's large products spend on the CPU.
    phases.mark("driver initialised");
    log!("GPU opening: {}", phases.line);
    let wanted = count.min(config::get().gpus.unwrap_or(usize::MAX));
    let mut gpus = Vec::new();
    for ordinal in 0..wanted {
        match std::panic::catch_unwind(|| open(ordinal)) {
            Ok(Ok(gpu)) => {
                log!(
                    "GPU {ordinal}: {} (compute {}.{}, {} SMs, {} MiB); kernels loaded {:.1} ms after the opening began",
                    gpu.name,
                    gpu.compute_capability.0,
                    gpu.compute_capability.1,
                    gpu.multiprocessors,
                    gpu.total_mem >> 20,
                    began.elapsed().as_secs_f64() * 1e3
                );
                gpus.push(gpu);
            }
            Ok(Err(e)) => log!("GPU {ordinal} unavailable ({e})"),
            Err(_) => log!("GPU {ordinal} unavailable (the CUDA bindings panicked)"),
        }
    }
    if gpus.is_empty() {
        log!("no device opened ({count} found): CPU engine only");
    }
    gpus
}

#[cfg(cugmp_kernels)]
fn fatbin() -> &'static [u8] {
    FATBIN
}

#[cfg(not(cugmp_kernels))]
fn fatbin() -> &'static [u8] {
    &[]
}

fn open(ordinal: usize) -> Result<Gpu, GpuError> {
    let mut phases = Phases::new(std::time::Instant::now());
    let ctx = CudaContext::new(ordinal)?;
    phases.mark("context");
    super::staging::pin_for_pool(&ctx);
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_binary(fatbin().to_vec()))?;
    phases.mark("module");
    let kernels = Kernels {
        add: module.load_function("cugmp_add")?,
        sub: module.load_function("cugmp_sub")?,
        shl: module.load_function("cugmp_shl")?,
        shr: module.load_function("cugmp_shr")?,
        any_low_bits: module.load_function("cugmp_any_low_bits")?,
        window: module.load_function("cugmp_window")?,
        slots_select: module.load_function("cugmp_slots_select")?,
        bitwise: module.load_function("cugmp_bitwise")?,
        ntt_tables: module.load_function("cugmp_ntt_tables")?,
        ntt_pass: module.load_function("cugmp_ntt_pass")?,
        ntt_pass_wide: module.load_function("cugmp_ntt_pass_wide")?,
        ntt_radix3_wide: module.load_function("cugmp_ntt_radix3_wide")?,
        ntt_radix5_wide: module.load_function("cugmp_ntt_radix5_wide")?,
        ntt_combine_wide: module.load_function("cugmp_ntt_combine_wide")?,
        ntt_combine3_wide: module.load_function("cugmp_ntt_combine3_wide")?,
        ntt_combine5_wide: module.load_function("cugmp_ntt_combine5_wide")?,
        ntt_combine_wide_carry: module.load_function("cugmp_ntt_combine_wide_carry")?,
        ntt_radix3: module.load_function("cugmp_ntt_radix3")?,
        ntt_radix5: module.load_function("cugmp_ntt_radix5")?,
        ntt_combine: module.load_function("cugmp_ntt_combine")?,
        ntt_combine3: module.load_function("cugmp_ntt_combine3")?,
        ntt_combine5: module.load_function("cugmp_ntt_combine5")?,
        ntt_combine_small: module.load_function("cugmp_ntt_combine_small")?,
        schoolbook_stage: module.load_function("cugmp_schoolbook_stage")?,
        schoolbook: module.load_function("cugmp_schoolbook")?,
        ntt_sum: module.load_function("cugmp_ntt_sum")?,
        powm_4: module.load_function("cugmp_powm_4")?,
        powm_8: module.load_function("cugmp_powm_8")?,
        powm_16: module.load_function("cugmp_powm_16")?,
        powm_32: module.load_function("cugmp_powm_32")?,
        powm_64: module.load_function("cugmp_powm_64")?,
        powm_block_64: module.load_function("cugmp_powm_block_64")?,
        powm_block_128: module.load_function("cugmp_powm_block_128")?,
        powm_block_256: module.load_function("cugmp_powm_block_256")?,
        powm_block_512: module.load_function("cugmp_powm_block_512")?,
        gf2x_chunks: module.load_function("cugmp_gf2x_chunks")?,
        gf2x_pointwise: module.load_function("cugmp_gf2x_pointwise")?,
        gf2x_gather: module.load_function("cugmp_gf2x_gather")?,
        gf2x_taylor: module.load_function("cugmp_gf2x_taylor")?,
        gf2x_convert_tile: module.load_function("cugmp_gf2x_convert_tile")?,
        gf2x_fft_tile: module.load_function("cugmp_gf2x_fft_tile")?,
        gfp_roots: module.load_function("cugmp_gfp_roots")?,
        gfp_split: module.load_function("cugmp_gfp_split")?,
        gfp_radix4: module.load_function("cugmp_gfp_radix4")?,
        gfp_radix2: module.load_function("cugmp_gfp_radix2")?,
        gfp_pointwise: module.load_function("cugmp_gfp_pointwise")?,
        gfp_combine: module.load_function("cugmp_gfp_combine")?,
    };
    phases.mark("kernels");
    // cugmp_ntt_pass keeps a tile of up to 2^14 elements in shared memory
    // (72 KiB, ntt::tile_bytes): past the 48 KiB a kernel gets without
    // asking. The driver still fits three blocks an SM; asking it for the
    // largest carveout of shared memory from L1 made every product slower
    // (RESULTS.md, "Transform passes").
    for f in [&kernels.ntt_pass, &kernels.ntt_pass_wide] {
        f.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ntt::tile_bytes(ntt::TILE_LOG, true) as i32)?;
    }
    // The powm block kernels keep an item's numbers in shared memory: up
    // to 124 KiB at 512 limbs.
    for (f, l) in [(&kernels.powm_block_64, 64), (&kernels.powm_block_128, 128), (&kernels.powm_block_256, 256), (&kernels.powm_block_512, 512)] {
        f.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, super::powm::block_shared_bytes(l) as i32)?;
    }
    // A device without stream-ordered pools (cudarc then allocates
    // synchronously) still computes; it only loses the reuse.
    if let Err(e) = keep_freed_memory(&ctx, config::get().gpu_pool) {
        log!("GPU: the allocation pool's release threshold was not set ({e}); freed memory goes back at once");
    }
    let sms = ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    // cudarc records an event at every use of every buffer once a context
    // has a second stream, unless told not to: each operation's buffers
    // stay on its queue's two streams, which the engine orders itself
    // (src/gpu/ntt/product.rs, `Beside`), and a product's launches stay as
    // cheap as with one stream. SAFETY: no buffer exists yet, so
    // none was made with tracking on.
    unsafe { ctx.disable_event_tracking() };
    // The first queue computes on the default stream, as a program of one
    // thread always does; the others on streams of their own (non-blocking:
    // they never wait for the default stream's work, nor it for theirs).
    let mut queues = Vec::new();
    for k in 0..config::get().gpu_queues {
        let stream = if k == 0 { ctx.default_stream() } else {
            match ctx.new_stream() {
                Ok(s) => s,
                Err(e) => {
                    log!("GPU: {k} queues, no more streams ({e})");
                    break;
                }
            }
        };
        let upload = match ctx.new_stream() {
            Ok(s) => Some(s),
            Err(e) => {
                log!("GPU: no upload stream ({e}); uploads go before the transforms");
                None
            }
        };
        queues.push(Queue { stream, upload, lanes: Default::default(), scan: Mutex::new(linear::ScanState::default()), busy: Busy::default() });
    }
    phases.mark("streams and pool");
    log!("GPU {ordinal} opening: {}", phases.line);
    Ok(Gpu {
        ordinal,
        name: ctx.name()?,
        total_mem: ctx.total_mem()?,
        compute_capability: ctx.compute_capability()?,
        multiprocessors: sms.max(1) as u32,
        queues,
        tables: ntt::Tables::default(),
        gfp_roots: gfp::Roots::default(),
        staging: staging::Staging::default(),
        small: ntt::Slots::default(),
        ctx,
        kernels,
    })
}

/// The steps of a device's opening, timed one after another.
struct Phases {
    last: std::time::Instant,
    line: String,
}

impl Phases {
    /// Steps timed from `start`.
    fn new(start: std::time::Instant) -> Phases {
        Phases { last: start, line: String::new() }
    }

    /// The step `what` ended now.
    fn mark(&mut self, what: &str) {
        let now = std::time::Instant::now();
        let sep = if self.line.is_empty() { "" } else { ", " };
        self.line += &format!("{sep}{what} {:.1} ms", (now - self.last).as_secs_f64() * 1e3);
        self.last = now;
    }
}

/// Let the device's stream-ordered allocator (cudarc allocates with
/// cuMemAllocAsync) keep up to `bytes` of freed memory for the next
/// allocation. With the default threshold of 0 every synchronisation hands
/// it back, and every product maps its buffers afresh.
fn keep_freed_memory(ctx: &CudaContext, bytes: usize) -> Result<(), GpuError> {
    use cudarc::driver::sys;
    let mut pool = std::mem::MaybeUninit::<sys::CUmemoryPool>::uninit();
    unsafe { sys::cuDeviceGetDefaultMemPool(pool.as_mut_ptr(), ctx.cu_device()) }.result()?;
    let mut threshold = bytes as u64;
    let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD;
    unsafe { sys::cuMemPoolSetAttribute(pool.assume_init(), attr, (&mut threshold as *mut u64).cast()) }.result()?;
    Ok(())
}

/// Run a GPU operation, turning a panic in the bindings into an error.
pub(super) fn guarded<T>(f: impl FnOnce() -> Result<T, GpuError>) -> Result<T, GpuError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(Err(GpuError::Panic))
}

pub(super) fn injected(fault: Fault, what: &'static str) -> Result<(), GpuError> {
    if config::get().fault == Some(fault) {
        Err(GpuError::Injected(what))
    } else {
        Ok(())
    }
}

impl Gpu {
    /// Launch geometry for a grid-stride kernel over `n` elements.
    pub(super) fn grid_for(&self, n: usize) -> LaunchConfig {
        const THREADS: u32 = 256;
        let blocks = n.div_ceil(THREADS as usize).clamp(1, 32 * self.multiprocessors as usize);
        LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
    }

    /// Launch geometry for an element-wise kernel over `n` limbs: one block
    /// per ELEMENTWISE_BLOCK of them (cuda/cugmp.cuh).
    pub(super) fn elementwise_grid(&self, n: usize) -> Result<LaunchConfig, GpuError> {
        let blocks = u32::try_from(n.div_ceil(ELEMENTWISE_BLOCK).max(1)).map_err(|_| GpuError::TooLarge)?;
        Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (ELEMENTWISE_THREADS, 1, 1), shared_mem_bytes: 0 })
    }

    /// The products from host limbs to host limbs in progress now on this
    /// device, all its queues together: its queues' kernels share its
    /// multiprocessors and its copy engines, so a product of this thread's
    /// shares the device with every one of them, not only its own queue's.
    pub fn in_flight(&self) -> InFlight {
        self.queues.iter().fold(InFlight { queues: self.queues.len(), ..InFlight::default() }, |sum, q| InFlight {
            products: sum.products + q.busy.products.load(Relaxed),
            limbs: sum.limbs + q.busy.limbs.load(Relaxed),
            ..sum
        })
    }

    /// This thread's queue on this device.
    pub(super) fn queue(&self) -> &Queue {
        let devices = GPUS.get().map_or(1, |g| g.len().max(1));
        // At least one queue: the first is the default stream, always there.
        &self.queues[(thread_slot() / devices) % self.queues.len()]
    }

    /// Make this device's context the thread's current one, for the
    /// driver's calls that act on the current context (free memory).
    pub(super) fn bind(&self) -> Result<(), GpuError> {
        Ok(self.ctx.bind_to_thread()?)
    }

    /// This thread's queue's stream.
    pub(super) fn stream(&self) -> Arc<CudaStream> {
        self.queue().stream.clone()
    }

    /// This thread's queue's lanes (`Queue::lanes`), made on first use:
    /// ntt::LANES of them, or None where the driver would not make them.
    pub(super) fn lanes(&self) -> Option<&Lanes> {
        self.queue()
            .lanes
            .get_or_init(|| {
                let made = || -> Result<Lanes, DriverError> {
                    let streams = (0..ntt::LANES).map(|_| self.ctx.new_stream()).collect::<Result<Vec<_>, _>>()?;
                    let join = (0..ntt::LANES).map(|_| self.ctx.new_event(None)).collect::<Result<Vec<_>, _>>()?;
                    Ok(Lanes { streams, events: Mutex::new(LaneEvents { fork: self.ctx.new_event(None)?, join }) })
                };
                made().map_err(|e| log!("GPU: no lanes ({e}); each transform's primes in one launch")).ok()
            })
            .as_ref()
    }

    /// The first queue's stream, for work of no thread's own.
    pub(super) fn first_stream(&self) -> Arc<CudaStream> {
        self.queues[0].stream.clone()
    }
}

/// A device address, for kernels whose operands may alias or start inside a
/// buffer. Only valid while `s` lives; every use here is on the stream of
/// the buffer's own queue.
pub(super) fn addr(s: &CudaSlice<u64>, stream: &CudaStream) -> u64 {
    s.device_ptr(stream).0
}
