//! Small products from host limbs to host limbs through prebuilt launch
//! graphs: the fixed cost of a GPU product, not its work, is what decides
//! where the GPU starts to win.
//!
//! Through the general path (src/gpu/ntt/product.rs) a small product asks
//! the driver for about twenty things one after another: two uploads from
//! pageable memory, allocations and their frees, the launches, a download.
//! The host's calls took 25 to 39 us a product at every size from 256 to
//! 16384 limbs, about as long as the device's chain of small kernels
//! (RESULTS.md, "Small products"). Here a product of up to 2^17 points
//! takes a `Slot` (its own streams, pinned host buffers mapped into the
//! device's address space, a device workspace), copies its operands into
//! the slot's pinned buffer, and launches the slot's graph for its
//! transform length: the forward transforms read the operands from host
//! memory (the second operand's on a branch beside the first's), the
//! inverse, and one block's CRT, fold and carries (cuda/ntt.cu,
//! cugmp_ntt_combine_small) writing the product into host memory. One
//! launch, one wait, no allocations, and below 2^13 points no copies
//! (`record_transforms` says where they remain). The graph's sizes are
//! fixed: operands are zero-padded to the transform's capacity on the host,
//! and the whole capacity comes back. Each slot has streams of its own, so
//! the products of many threads run beside each other.
//!
//! Products of few limb products (`by_columns`) take another graph on the
//! same slot, two kernels (cuda/schoolbook.cu): the operands staged into
//! device memory, then every limb product summed by column on many blocks
//! at once, with the carries, into the host's output. Their lengths come
//! from the slot's pinned `sizes` at each launch, so one graph serves every
//! product up to its class's limbs.
//!
//! What this module may not touch: the routing (src/algorithms/route.rs
//! decides which products come to the GPU) and the transforms' kernels
//! (src/gpu/ntt/transform.rs launches them; the graphs record those
//! launches).

use super::plan::{passes, transform_shape, Shape, COEFS_PER_LIMB, PRIMES};
use super::transform::SMALL_COMBINE_LIMBS;
use crate::config::Fault;
use crate::gpu::device::{addr, injected, reserve, Gpu, GpuError, Reservation};
use crate::stats::Phase;
use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode, CU_MEMHOSTALLOC_DEVICEMAP};
use cudarc::driver::{result, CudaEvent, CudaGraph, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg};
use std::sync::{Arc, Mutex};

/// The longest transform a small product takes (points): products of up
/// to 65,536 limbs. Its capacity, half as many limbs, is every region's
/// size. With slots only up to 2^14 points, the general path's products
/// of 4096 to 8191 limbs took 6.6 times as long from 16 threads as from
/// one, and pi.c at 10^8 digits on 16 threads 3.22 to 3.33 s against 2.83
/// to 3.18 with slots up to 2^16 or 2^17 points; a 24000 x 24000 product
/// end to end took 0.141 ms against 0.112 with 2^17 (RESULTS.md, "Small
/// products"). Sixteen slots of 2^17 points hold 84 MiB of device memory.
const POINTS: usize = 1 << 17;
/// Limbs of every region: an operand's, the product's.
const CAP: usize = POINTS / COEFS_PER_LIMB;

/// Whether the product of `un` x `vn` limbs goes through a slot: one
/// transform of at most `POINTS` points holds it.
pub(super) fn takes(un: usize, vn: usize) -> bool {
    transform_shape(un + vn).len() <= POINTS
}

/// The shortest transform whose graphs a slot made ahead records
/// (`prepare_small_products`): 2^11 points, products of 1024 limbs in all,
/// below the 768 x 768 limbs from which CUGMP_GPU=auto sends products to
/// the GPU (README); shorter ones record theirs when first met.
const PREPARED_FROM: usize = 1 << 11;

/// Products of at most this many limbs in all may be made by columns
/// (cuda/schoolbook.cu, cugmp_schoolbook): the largest of its graphs'
/// classes.
const COLUMNS_MAX: usize = 1 << 14;
/// The smallest class (limbs of the product) of the columns' graphs.
const COLUMNS_MIN: usize = 1 << 8;
/// The limbs a tile of cugmp_schoolbook writes (SCHOOLBOOK_COLUMNS), the
/// columns it sums (SCHOOLBOOK_SPAN) and a block's threads
/// (SCHOOLBOOK_THREADS, cugmp_schoolbook_stage's too).
const COLUMNS_A_TILE: usize = 125;
const COLUMNS_SPAN: usize = 128;
const COLUMNS_THREADS: u32 = 256;
/// Tiles of the largest class.
const COLUMNS_TILES_MAX: usize = COLUMNS_MAX.div_ceil(COLUMNS_A_TILE);
/// Blocks a columns graph launches at most: four for each of the
/// H200's 132 multiprocessors (three fit on one at once), so that the
/// tiles' unequal work (the middle columns have the most terms) evens out
/// over them.
const COLUMNS_BLOCKS: usize = 528;
/// The warps of a block, which share each slice's terms.
const COLUMNS_WARPS: usize = COLUMNS_THREADS as usize / 32;

/// The tiles of a columns graph of `class` limbs, and the blocks each
/// tile's terms are cut among: as many as keep the grid within
/// `COLUMNS_BLOCKS`, but no fewer than 16 terms for each warp of a balanced
/// product's middle tile, and at most 16.
const fn columns_grid(class: usize) -> (usize, usize) {
    let tiles = class.div_ceil(COLUMNS_A_TILE);
    let (by_blocks, by_terms) = (COLUMNS_BLOCKS / tiles, class / 2 / (COLUMNS_WARPS * 16));
    let slices = if by_blocks < by_terms { by_blocks } else { by_terms };
    let slices = if slices < 1 { 1 } else if slices > 16 { 16 } else { slices };
    (tiles, slices)
}
/// Products of at most COLUMNS_UPTO^2 limb products are made by columns
/// (CUGMP_GPU_SCHOOLBOOK sets it; 0: never): end to end under force, n x n
/// limbs by columns against the transforms, 0.021 against 0.038 ms at
/// 1024, 0.028 against 0.063 at 2048, 0.044 against 0.070 at 4096, 0.073
/// against 0.064 at 5120 (RESULTS.md, "Small products by columns", four
/// columns a lane).
const COLUMNS_UPTO: usize = 4096;

/// Whether the product of `un` x `vn` limbs is made by columns: few
/// enough limb products that the device's integer units make them sooner
/// than the transforms' chain of passes.
fn by_columns(un: usize, vn: usize) -> bool {
    let upto = columns_upto();
    un + vn <= COLUMNS_MAX && (un as u128) * (vn as u128) <= (upto as u128) * (upto as u128)
}

/// CUGMP_GPU_SCHOOLBOOK, else `COLUMNS_UPTO`.
fn columns_upto() -> usize {
    crate::config::get().gpu_schoolbook.unwrap_or(COLUMNS_UPTO)
}

/// A slot's graph: the transforms of a shape, or the columns kernel for
/// products of up to a class's limbs (a power of two).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Graph {
    Transform(Shape),
    Columns(usize),
}

impl Graph {
    fn of(un: usize, vn: usize) -> Graph {
        if by_columns(un, vn) {
            Graph::Columns((un + vn).next_power_of_two().max(COLUMNS_MIN))
        } else {
            Graph::Transform(transform_shape(un + vn))
        }
    }
}

/// Slots at most: a product finding none free takes the general path
/// (src/gpu/ntt/product.rs). Sixteen, the GPU machine's cores: as many
/// threads as it runs at once.
const MAX_SLOTS: usize = 16;

/// The slots not in use, made as threads first need them (at most
/// `MAX_SLOTS`) and kept for the life of the context, and the device
/// memory they share: one allocation for all of them (the stream-ordered
/// pool hands out whole 2 MiB pages an allocation), made with the first
/// slot and counted against CUGMP_GPU_MEM_LIMIT; each slot also holds 1.5
/// MiB of pinned host memory.
#[derive(Default)]
pub(in crate::gpu) struct Slots(Mutex<Pool>);

#[derive(Default)]
struct Pool {
    free: Vec<Slot>,
    made: usize,
    /// `MAX_SLOTS` workspaces of `SLOT_LIMBS` limbs, and their claim.
    arena: Option<(CudaSlice<u64>, Reservation)>,
}

const _: () = assert!(FOLD_IN_ONE_BLOCK <= SMALL_COMBINE_LIMBS, "the fold kernel's one block takes every limb of the products it folds");

/// Bytes of each of a slot's two transforms, side by side at its
/// workspace's start: PRIMES * POINTS 32-bit words.
const TRANSFORM_BYTES: usize = 4 * PRIMES * POINTS;

/// Device limbs of one slot's workspace: the two transforms
/// (`TRANSFORM_BYTES` each), then u's and v's limbs for the transforms
/// that copy them first and for the columns, and the fold's t and c for
/// the products folded by the grid (`record_transforms`), CAP each, the
/// add kernel's scan state, and the columns' lengths and carries' scan
/// state (`COLUMNS_WORDS`).
const SLOT_LIMBS: usize = 2 * TRANSFORM_BYTES / 8 + 4 * CAP + Gpu::scan_words(CAP) + COLUMNS_WORDS;

/// cugmp_schoolbook's `meta` (4 words), `state` (2 + its most tiles) and
/// `arrived` (a count a tile), apart from the add kernel's: the columns'
/// scan takes a new epoch each launch and never clears its state, the
/// transforms' clear theirs and keep one. An even count, so that every
/// slot's workspace keeps the 16 bytes' alignment the transforms' vector
/// loads need (an odd one left the second slot's misaligned:
/// CUDA_ERROR_MISALIGNED_ADDRESS).
const COLUMNS_WORDS: usize = (4 + 2 + 2 * COLUMNS_TILES_MAX).next_multiple_of(2);

/// The sums of every slice of every tile (3 words a column), written over
/// the slot's two transforms, which a columns graph does not use.
const _: () = {
    let mut class = COLUMNS_MIN;
    while class <= COLUMNS_MAX {
        let (tiles, slices) = columns_grid(class);
        assert!(tiles * slices * 3 * COLUMNS_SPAN * 8 <= 2 * TRANSFORM_BYTES, "the columns' partial sums fit in the slot's transforms");
        class *= 2;
    }
};

const _: () = assert!(SLOT_LIMBS % 2 == 0, "each slot's workspace starts 16-byte aligned in the arena");

/// Products of more limbs than this are folded by the combine kernel's
/// grid, carried by the add kernel and copied down (the way of the general
/// path, in the graph); up to it, one block does all of it and writes the
/// host's limbs itself. At 4096 x 4096 limbs one block took 0.067 to 0.073
/// ms end to end, the grid and the add kernel 0.058 to 0.059; one block won
/// at 1024 x 1024 (0.038 against 063408b's 0.050) and lost a little at
/// 2048 x 2048 (0.058 against 0.054 to 0.055), where it stays for now
/// (RESULTS.md, "Small products").
const FOLD_IN_ONE_BLOCK: usize = 4096;

/// One product's resources at a time.
struct Slot {
    /// The graphs recorded so far: which, square or not.
    graphs: Vec<(Graph, bool, CudaGraph)>,
    stream: Arc<CudaStream>,
    /// The second operand's branch of a product's graph (its upload and
    /// transform beside the first's), and the events that fork and join it.
    side: Arc<CudaStream>,
    fork: CudaEvent,
    join: CudaEvent,
    /// The operands: u in limbs [0, CAP), v in [CAP, 2 CAP), each region
    /// zeros from `filled[k]` up. Pinned and mapped: the first pass reads
    /// them over PCIe at `input_dev`, with no copy of its own.
    host_in: PinnedHostSlice<u64>,
    input: *mut u64,
    input_dev: u64,
    filled: [usize; 2],
    /// The product's CAP limbs (zeros above un + vn), written by the fold
    /// kernel over PCIe at `output_dev`.
    host_out: PinnedHostSlice<u64>,
    output: *const u64,
    output_dev: u64,
    /// The device address of the slot's two transforms in the pool's arena.
    workspace: u64,
    /// The operands' lengths for the columns kernel (un, vn), pinned and
    /// mapped: the buffer (held for the slot's life), written at `sizes`
    /// before each launch, read by the kernel at `sizes_dev`.
    _sizes_host: PinnedHostSlice<u64>,
    sizes: *mut u64,
    sizes_dev: u64,
}

// SAFETY: a slot is used by one thread at a time (it is out of the pool
// while in use); its raw pointers point into its own pinned buffers, and
// CUDA graph objects may be used from any thread when not concurrently.
unsafe impl Send for Slot {}

impl Slot {
    fn new(g: &Gpu, workspace: u64) -> Result<Slot, GpuError> {
        let (stream, side) = (g.ctx.new_stream()?, g.ctx.new_stream()?);
        let (fork, join) = (g.ctx.new_event(None)?, g.ctx.new_event(None)?);
        // Page-locked and mapped into the device's address space, not
        // write-combined (slow for the host to read back).
        let mut host_in = unsafe { g.ctx.alloc_pinned_with_flags::<u64>(2 * CAP, CU_MEMHOSTALLOC_DEVICEMAP) }?;
        let input = host_in.as_mut_ptr()?;
        // SAFETY: 2 CAP limbs at `input`, no kernel reads them yet.
        unsafe { std::ptr::write_bytes(input, 0, 2 * CAP) };
        let host_out = unsafe { g.ctx.alloc_pinned_with_flags::<u64>(CAP, CU_MEMHOSTALLOC_DEVICEMAP) }?;
        let output = host_out.as_ptr()?;
        let mut sizes_host = unsafe { g.ctx.alloc_pinned_with_flags::<u64>(2, CU_MEMHOSTALLOC_DEVICEMAP) }?;
        let sizes = sizes_host.as_mut_ptr()?;
        let (input_dev, output_dev, sizes_dev) = (mapped(input)?, mapped(output as *mut u64)?, mapped(sizes)?);
        #[rustfmt::skip]
        let slot = Slot { graphs: Vec::new(), stream, side, fork, join, host_in, input, input_dev, filled: [0; 2], host_out, output, output_dev, workspace, _sizes_host: sizes_host, sizes, sizes_dev };
        Ok(slot)
    }

    /// Operand `k` (0: u, 1: v) into its region, the region's limbs above
    /// it zero.
    fn fill(&mut self, k: usize, x: &[u64]) {
        debug_assert!(x.len() <= CAP && self.host_in.len() == 2 * CAP);
        // SAFETY: region k is CAP limbs at input + k CAP; no copy reads it
        // now (the slot's last graph was waited for).
        let region = unsafe { std::slice::from_raw_parts_mut(self.input.add(k * CAP), CAP) };
        region[..x.len()].copy_from_slice(x);
        if self.filled[k] > x.len() {
            region[x.len()..self.filled[k]].fill(0);
        }
        self.filled[k] = x.len();
    }

    /// The columns kernel's operand lengths into `sizes`, for the next
    /// launch.
    fn set_sizes(&mut self, un: usize, vn: usize) {
        // SAFETY: two limbs at `sizes`, the slot's own pinned buffer; the
        // slot's last graph, whose kernel read them, was waited for.
        unsafe {
            self.sizes.write(un as u64);
            self.sizes.add(1).write(vn as u64);
        }
    }

    /// Device addresses of the columns' `meta`, scan `state` and tiles'
    /// `arrived` counts, after the add kernel's scan state (`SLOT_LIMBS`).
    fn columns_state(&self) -> (u64, u64, u64) {
        let (_, _, [.., scan]) = self.addresses();
        let meta = scan + 8 * Gpu::scan_words(CAP) as u64;
        let state = meta + 8 * 4;
        (meta, state, state + 8 * (2 + COLUMNS_TILES_MAX) as u64)
    }

    /// Device addresses: u and v (mapped host memory), the product (the
    /// same); the two transforms; in device memory u's and v's copies, the
    /// fold's t and c, the add kernel's scan state.
    fn addresses(&self) -> ([u64; 3], [u64; 2], [u64; 5]) {
        let transform = TRANSFORM_BYTES as u64;
        let limbs = |k: u64| self.workspace + 2 * transform + 8 * k * CAP as u64;
        (
            [self.input_dev, self.input_dev + 8 * CAP as u64, self.output_dev],
            [self.workspace, self.workspace + transform],
            [limbs(0), limbs(1), limbs(2), limbs(3), limbs(4)],
        )
    }
}

/// The device's address of pinned host memory allocated mapped.
fn mapped(host: *mut u64) -> Result<u64, GpuError> {
    let mut device = 0;
    // SAFETY: `host` was returned by cuMemHostAlloc with DEVICEMAP in the
    // current context.
    unsafe { cudarc::driver::sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0) }.result()?;
    Ok(device)
}

impl Gpu {
    /// `outs[k] = pairs[k].0 * pairs[k].1` for products `takes` accepts
    /// (each `outs[k]` exactly their limbs; the same slice twice squares),
    /// one or more, launched at once on a slot each, every slot's graph on
    /// its own streams, then waited for: the device runs them beside each
    /// other, where one after another each would wait for its chain of
    /// passes alone. More products than slots to be had run in turns of as
    /// many as there are. Ok(false), `outs` untouched, when no slot is free
    /// and no more may be made. On an error `outs` hold anything.
    pub(super) fn small_products_into(&self, pairs: &[(&[u64], &[u64])], outs: &mut [&mut [u64]]) -> Result<bool, GpuError> {
        assert!(pairs.len() == outs.len(), "small_products_into takes an output a product");
        for (&(u, v), out) in pairs.iter().zip(outs.iter()) {
            assert!(takes(u.len(), v.len()) && !u.is_empty() && !v.is_empty() && out.len() == u.len() + v.len(), "small_products_into takes small products and room for each");
        }
        injected(Fault::GpuOom, "gpu-oom")?;
        injected(Fault::GpuLaunch, "gpu-launch")?;
        let mut slots = Vec::with_capacity(pairs.len());
        while slots.len() < pairs.len() {
            match self.take_slot() {
                Ok(Some(slot)) => slots.push(slot),
                Ok(None) => break,
                Err(e) if slots.is_empty() => return Err(e),
                Err(_) => break,
            }
        }
        if slots.is_empty() {
            return Ok(false);
        }
        let queue = self.queue();
        let _busy: Vec<_> = pairs.iter().map(|(u, v)| queue.busy.enter(u.len() + v.len())).collect();
        let turns = slots.len();
        let done = pairs.chunks(turns).zip(outs.chunks_mut(turns)).try_for_each(|(pairs, outs)| {
            let mut launched = 0;
            let started = slots.iter_mut().zip(pairs).try_for_each(|(slot, &(u, v))| {
                let square = std::ptr::eq(u, v);
                self.start_slot(slot, Graph::of(u.len(), v.len()), u, (!square).then_some(v))?;
                launched += 1;
                Ok(())
            });
            // Every launched product is waited for, also after a failure,
            // before its slot's buffers are used again.
            let finished = slots[..launched].iter_mut().zip(outs.iter_mut()).try_fold((), |(), (slot, out)| self.finish_slot(slot, out));
            started.and(finished)
        });
        if done.is_err() {
            for slot in &mut slots {
                // Its graphs may have been left half run: recorded again
                // next time; its streams drained first (a failed wait
                // leaves nothing more to drain).
                let _ = slot.stream.synchronize();
                slot.graphs.clear();
            }
        }
        self.small.0.lock().unwrap_or_else(|p| p.into_inner()).free.extend(slots);
        done.map(|()| true)
    }

    /// A free slot, or a new one while fewer than MAX_SLOTS exist (None
    /// also where the arena would pass CUGMP_GPU_MEM_LIMIT).
    fn take_slot(&self) -> Result<Option<Slot>, GpuError> {
        self.slot_from(&self.stream())
    }

    /// `take_slot`, the arena (if it is made now) allocated on `stream`.
    fn slot_from(&self, stream: &Arc<CudaStream>) -> Result<Option<Slot>, GpuError> {
        let mut pool = self.small.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = pool.free.pop() {
            return Ok(Some(slot));
        }
        if pool.made == MAX_SLOTS {
            return Ok(None);
        }
        if pool.arena.is_none() {
            let Ok(claim) = reserve(8 * MAX_SLOTS * SLOT_LIMBS) else { return Ok(None) };
            let arena = stream.alloc_zeros::<u64>(MAX_SLOTS * SLOT_LIMBS)?;
            // The slots' own streams use it next.
            stream.synchronize()?;
            pool.arena = Some((arena, claim));
        }
        let Some((arena, _)) = pool.arena.as_ref() else { return Ok(None) };
        let workspace = addr(arena, stream) + 8 * (pool.made * SLOT_LIMBS) as u64;
        let slot = Slot::new(self, workspace)?;
        pool.made += 1;
        Ok(Some(slot))
    }

    /// The slots' arena and a first slot made now, on the thread that
    /// opened the device, rather than in a program's first small product:
    /// that product took 12.6 to 14.1 ms at 1500 limbs, 0.73 to 0.87 with
    /// the slot made ahead, the next ones 0.04 to 0.06 (RESULTS.md, "Small
    /// products"). Nothing is made where the arena would pass
    /// CUGMP_GPU_MEM_LIMIT or the driver refuses; the first product then
    /// tries again, as before.
    ///
    /// Its graphs are recorded then too, products and squares, for every
    /// transform length from `PREPARED_FROM` points: a program's first
    /// product of each length no longer records one (0.2 to 0.3 ms each,
    /// seven of them among the prime products of a process's first
    /// fac(10^6); RESULTS.md, "Small products" and "Factorials"). Products
    /// that come meanwhile make slots of their own.
    pub(in crate::gpu) fn prepare_small_products(&self) {
        match self.slot_from(&self.first_stream()) {
            Ok(Some(mut slot)) => {
                self.record_graphs_ahead(&mut slot);
                self.small.0.lock().unwrap_or_else(|p| p.into_inner()).free.push(slot);
            }
            Ok(None) => {}
            Err(e) => crate::config::log!("small products: no slot made ahead ({e}); the first product makes one"),
        }
    }

    /// `slot`'s graphs for every transform length from `PREPARED_FROM`
    /// points to `POINTS`, shortest first, and the columns' classes from as
    /// many limbs, products and squares; on an error, those recorded so far.
    fn record_graphs_ahead(&self, slot: &mut Slot) {
        let mut ahead = Vec::new();
        let mut limbs = PREPARED_FROM / COEFS_PER_LIMB;
        while limbs <= CAP {
            let shape = transform_shape(limbs);
            ahead.push(Graph::Transform(shape));
            // The next length's first product.
            limbs = shape.len() / COEFS_PER_LIMB + 1;
        }
        let mut class = PREPARED_FROM / COEFS_PER_LIMB;
        let columns = columns_upto() > 0;
        while columns && class <= COLUMNS_MAX {
            ahead.push(Graph::Columns(class));
            class *= 2;
        }
        for which in ahead {
            for square in [false, true] {
                match self.record_graph(slot, which, square) {
                    Ok(graph) => slot.graphs.push((which, square, graph)),
                    Err(e) => {
                        crate::config::log!("small products: graphs recorded ahead up to {which:?} ({e})");
                        return;
                    }
                }
            }
        }
    }

    /// `u * v` (`v` None: u squared) launched on `slot`'s graph for it
    /// (recorded now where the slot has none yet); `finish_slot` waits for
    /// it and takes the product.
    fn start_slot(&self, slot: &mut Slot, which: Graph, u: &[u64], v: Option<&[u64]>) -> Result<(), GpuError> {
        let profiling = crate::stats::profiling();
        let start = profiling.then(std::time::Instant::now);
        slot.fill(0, u);
        if let Some(v) = v {
            slot.fill(1, v);
        }
        crate::stats::copied_to_gpu(8 * (u.len() + v.map_or(0, <[u64]>::len)));
        if let Some(t0) = start {
            crate::stats::phase(Phase::Upload, t0.elapsed());
        }
        let square = v.is_none();
        if let Graph::Columns(_) = which {
            slot.set_sizes(u.len(), v.map_or(u.len(), <[u64]>::len));
        }
        let k = match slot.graphs.iter().position(|(w, sq, _)| *w == which && *sq == square) {
            Some(k) => k,
            None => {
                let graph = self.record_graph(slot, which, square)?;
                slot.graphs.push((which, square, graph));
                slot.graphs.len() - 1
            }
        };
        slot.graphs[k].2.launch()?;
        Ok(())
    }

    /// Waits for the product `start_slot` launched on `slot` and copies its
    /// `out.len()` limbs into `out`.
    fn finish_slot(&self, slot: &mut Slot, out: &mut [u64]) -> Result<(), GpuError> {
        slot.stream.synchronize()?;
        let start = crate::stats::profiling().then(std::time::Instant::now);
        debug_assert!(slot.host_out.len() == CAP);
        // SAFETY: CAP limbs at `output`, written by the graph's last kernel,
        // which the synchronize above waited for.
        let product = unsafe { std::slice::from_raw_parts(slot.output, CAP) };
        out.copy_from_slice(&product[..out.len()]);
        crate::stats::copied_from_gpu(8 * out.len());
        if let Some(t0) = start {
            crate::stats::phase(Phase::Download, t0.elapsed());
        }
        Ok(())
    }

    /// The graph `which` of a product (`square`: of u alone) on `slot`.
    fn record_graph(&self, slot: &Slot, which: Graph, square: bool) -> Result<CudaGraph, GpuError> {
        match which {
            Graph::Transform(shape) => self.record_transforms(slot, shape, square),
            Graph::Columns(class) => self.record_columns(slot, class, square),
        }
    }

    /// The graph of a product (`square`: of u alone) of up to `class` limbs
    /// in all by columns on `slot`, two kernels (cuda/schoolbook.cu): the
    /// operands' first `class` limbs and their lengths (the slot's `sizes`,
    /// written before each launch) from the pinned buffers into device
    /// memory, then the columns and their carries into the host's output.
    fn record_columns(&self, slot: &Slot, class: usize, square: bool) -> Result<CudaGraph, GpuError> {
        debug_assert!(class <= COLUMNS_MAX && class.is_power_of_two() && class >= COLUMNS_MIN);
        let stream = &slot.stream;
        crate::config::log!("small products: a graph by columns for {class} limbs{}", if square { ", squares" } else { "" });
        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let recorded = (|| -> Result<(), GpuError> {
            let ([u, v, r], [partial, _], [u_dev, v_dev, ..]) = slot.addresses();
            let (meta, state, arrived) = slot.columns_state();
            let (v, v_dev) = if square { (0, 0) } else { (v, v_dev) };
            let (tiles, slices) = columns_grid(class);
            let (sizes, cap, tiles_arg, slices_arg) = (slot.sizes_dev, class as u64, tiles as u64, slices as u32);
            let staged = if square { class } else { 2 * class };
            let cfg = LaunchConfig { grid_dim: (staged.div_ceil(2 * COLUMNS_THREADS as usize).min(64) as u32, 1, 1), block_dim: (COLUMNS_THREADS, 1, 1), shared_mem_bytes: 0 };
            launch_with!(self, stream, schoolbook_stage, cfg, &u_dev, &v_dev, &meta, &arrived, &u, &v, &sizes, &cap, &tiles_arg);
            let second = if square { u_dev } else { v_dev };
            let cfg = LaunchConfig { grid_dim: ((tiles * slices) as u32, 1, 1), block_dim: (COLUMNS_THREADS, 1, 1), shared_mem_bytes: 0 };
            launch_with!(self, stream, schoolbook, cfg, &r, &u_dev, &second, &meta, &state, &arrived, &partial, &slices_arg);
            Ok(())
        })();
        // The capture ends whatever happened, so the stream is usable again.
        let graph = stream.end_capture(CUgraphInstantiate_flags(0));
        recorded?;
        graph?.ok_or(GpuError::TooLarge)
    }

    /// The graph of a product (`square`: of u alone) by transforms of
    /// `shape` on `slot`: the forward transforms of the regions' first
    /// shape.len() / 2 limbs, read from host memory (v's on a branch beside
    /// u's), the inverse of their product, and the fold with its carries
    /// into the host's output (from 4097 limbs the grid's fold, the add
    /// kernel and a copy down): three to seven nodes, and copies of the
    /// operands only where the first pass reads them far apart.
    fn record_transforms(&self, slot: &Slot, shape: Shape, square: bool) -> Result<CudaGraph, GpuError> {
        // The table is made (and waited for) before the capture begins.
        let table = self.table(&slot.stream, shape)?;
        let stream = &slot.stream;
        let cap = shape.len() / COEFS_PER_LIMB;
        crate::config::log!("small products: a graph for {} points{}", shape.len(), if square { ", squares" } else { "" });
        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        // A first pass that is not the only one reads its elements far
        // apart: from host memory, a PCIe request for every few words. Those
        // transforms copy the operands to the device first (2^k points
        // from 2^13: RESULTS.md, "Small products").
        let copied = shape.radix == 1 && passes(shape.log_n).len() > 1;
        let recorded = (|| -> Result<(), GpuError> {
            let ([u, v, r], [a, b], [u_dev, v_dev, t, c, scan]) = slot.addresses();
            // SAFETY: the pinned buffer lives as long as the slot, and so
            // the graph; each region holds CAP >= cap limbs.
            let input = unsafe { std::slice::from_raw_parts(slot.input as *const u64, 2 * CAP) };
            let operand = |s: &Arc<CudaStream>, k: usize, host: u64, dev: u64| -> Result<u64, GpuError> {
                if !copied {
                    return Ok(host);
                }
                unsafe { result::memcpy_htod_async(dev, &input[k * CAP..k * CAP + cap], s.cu_stream()) }?;
                Ok(dev)
            };
            if !square {
                // The second operand's transform on a branch of its own:
                // the device runs it beside the first's.
                slot.fork.record(stream)?;
                slot.side.wait(&slot.fork)?;
                let v = operand(&slot.side, 1, v, v_dev)?;
                self.forward_at(&slot.side, &table, b, v, cap)?;
                slot.join.record(&slot.side)?;
            }
            // u's transform but its last pass, which the turn with v's
            // (or, for a square, with itself) takes.
            let u = operand(stream, 0, u, u_dev)?;
            let unfinished = self.forward_unfinished_at(stream, &table, a, u, cap)?;
            if !square {
                stream.wait(&slot.join)?;
            }
            self.turn_at(stream, &table, a, unfinished, if square { a } else { b })?;
            if cap <= FOLD_IN_ONE_BLOCK {
                return self.combine_small_at(stream, &table, a, r, cap);
            }
            self.combine_at(stream, &table, a, (t, c), cap, false)?;
            // A fresh state every launch, so one epoch serves them all.
            unsafe { result::memset_d8_async(scan, 0, 8 * Gpu::scan_words(cap), stream.cu_stream()) }?;
            self.addsub_with_state(stream, false, (t, t, cap, c, cap, 0), (scan, 1))?;
            // SAFETY: the pinned output lives as long as the slot, and so
            // the graph; it holds CAP >= cap limbs.
            let output = unsafe { std::slice::from_raw_parts_mut(slot.output as *mut u64, CAP) };
            unsafe { result::memcpy_dtoh_async(&mut output[..cap], t, stream.cu_stream()) }?;
            Ok(())
        })();
        // The capture ends whatever happened, so the stream is usable again.
        let graph = stream.end_capture(CUgraphInstantiate_flags(0));
        recorded?;
        graph?.ok_or(GpuError::TooLarge)
    }
}
