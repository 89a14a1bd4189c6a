//! A product from host limbs to host limbs: the operands uploaded (the
//! second beside the first's forward transform, on the upload stream, where
//! it is large), the plan run on the device (whole, chunked or by pieces),
//! the result downloaded into the caller's limbs or a new vector (by
//! pieces, the transfers beside the kernels: `pieces_from_host`); and a
//! product mod B^n - 1 as one cyclic convolution. Which engine makes a product on
//! the device is chosen here too (`by_gfp`): the NTT's plans, or the
//! generalized-Fermat-prime FFT (src/gpu/gfp) where `CUGMP_PRODUCT` gives
//! it the product.

use super::small;
use super::plan::{cyclic_device_bytes, cyclic_shape_from, device_bytes, pieces_of, product_plan_from, sum_place, sums, Plan, Shape, LANES_FROM, WIDE_FROM};
use super::transform::{Primes, Table};
use crate::config::{Fault, ProductEngine};
use crate::gpu::gfp;
use crate::gpu::device::{addr, guarded, injected, reserve, Gpu, GpuError, LaneEvents, Lanes, Reservation};
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr};
use std::sync::Arc;

/// Whole products on transforms of this many points and more run in lanes
/// (`Gpu::transforms_in_lanes`): CUGMP_NTT_LANES (0: never), else plan.rs's
/// LANES_FROM.
fn lanes_from() -> usize {
    match crate::config::get().ntt_lanes {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => LANES_FROM,
    }
}

/// Products whose buffers take at most this much skip the free-memory query.
const SMALL_PRODUCT_BYTES: usize = 64 << 20;

/// The plan for a product of `un` x `vn` limbs: `product_plan_from` with
/// CUGMP_NTT_WIDE's bound, or by pieces of CUGMP_NTT_PIECE limbs where the
/// shorter operand is longer.
fn check_bounds(un: usize, vn: usize) -> Result<Plan, GpuError> {
    let forced = crate::config::get().ntt_piece.filter(|&piece| un.min(vn) > piece).and_then(pieces_of);
    forced.or_else(|| product_plan_from(un, vn, wide_from())).ok_or(GpuError::TooLarge)
}

/// Products in one convolution of this many limbs and more take the wide
/// sets: CUGMP_NTT_WIDE (0: never), else plan.rs's WIDE_FROM.
pub(in crate::gpu) fn wide_from() -> usize {
    match crate::config::get().ntt_wide {
        Some(0) => usize::MAX,
        Some(n) => n,
        None => WIDE_FROM,
    }
}

/// The transform length (log2) of the generalized-Fermat-prime engine
/// where `CUGMP_PRODUCT=gfp` gives it this product and it has a transform
/// for it. Under `auto` the NTT makes every product: since its products by
/// pieces it is the faster at every size, squares of 1.9 * 10^8 limbs
/// included, where this engine's one transform used to win (RESULTS.md,
/// "Products by pieces").
fn by_gfp(un: usize, vn: usize) -> Option<u32> {
    let chosen = crate::config::get().product == ProductEngine::Gfp;
    gfp::transform_log(un, vn).filter(|_| chosen)
}

/// A product's second operand, as it reaches `product_dev`.
#[derive(Clone, Copy)]
pub enum Second<'a> {
    /// None: the product is a square (one forward transform).
    Square,
    /// Already in device memory: its address and limb count.
    At(u64, usize),
    /// Still in host memory: uploaded on the upload stream while the
    /// first operand's forward transform runs (`product_transforms`).
    Host(&'a [u64]),
    /// In device memory once the event is done: its DMA from a pinned
    /// block, queued on the upload stream before the first operand's
    /// transform, may still run. Its readers make their stream wait for
    /// the event first (`ready`).
    Queued(u64, usize, &'a CudaEvent),
}

impl Second<'_> {
    /// Its limb count (`un`, the first operand's, for a square).
    fn limbs(&self, un: usize) -> usize {
        match *self {
            Second::Square => un,
            Second::At(_, vn) => vn,
            Second::Host(x) => x.len(),
            Second::Queued(_, vn, _) => vn,
        }
    }
}

/// `stream` made to wait for a queued second operand's upload: its address.
fn ready(stream: &CudaStream, (vp, ready): (u64, &CudaEvent)) -> Result<u64, GpuError> {
    stream.wait(ready)?;
    Ok(vp)
}

/// An upload that `on_device` queued and did not wait for. Dropped before
/// the product's end (an error, a panic), it waits on the host for the
/// streams, so the caller's limbs are never changed or freed while a DMA
/// still reads them.
///
/// The product's own stream, and the upload stream, where each holds such
/// an upload (two fields, not a list: no allocation a product).
#[derive(Default)]
struct Unwaited {
    main: Option<Arc<CudaStream>>,
    side: Option<Arc<CudaStream>>,
}

impl Unwaited {
    /// The product's download waited for every stream: nothing to wait for.
    fn done(mut self) {
        (self.main, self.side) = (None, None);
    }
}

impl Drop for Unwaited {
    fn drop(&mut self) {
        for s in [&self.main, &self.side].into_iter().flatten() {
            let _ = s.synchronize();
        }
    }
}

/// Second operands from this many limbs are uploaded beside the first
/// operand's transform, where smaller ones go before it (the extra event
/// record and wait cost microseconds, the overlap saves up to the upload's
/// time). Measured on the H100 (RESULTS.md, "Transfers beside the
/// transforms"): 10^7 x 10^7
/// limbs 20.8 and 21.2 ms against 27.2 and 23.2 ms without, 10^6 2.54 and
/// 2.83 against 2.82 and 3.03 ms; at 10^5 no difference above the noise.
/// The bound itself is not tuned.
const OVERLAP_MIN_LIMBS: usize = 1 << 16;

/// Where the operand `Plan::Pieces` cuts into pieces lies.
#[derive(Clone, Copy)]
enum Pieces<'a> {
    /// In device memory: its address and limb count.
    OnDevice(u64, usize),
    /// In host memory: uploaded piece by piece (`piece_transforms`).
    OnHost(&'a [u64]),
}

/// Lanes that may still run a product's kernels while `stream` does not wait
/// for them: where `transforms_in_lanes` stops part-way (an error, or a
/// panic that `guarded` catches), dropping this waits for them on the host,
/// before the product's buffers are freed on `stream` (stream-ordered, so
/// otherwise free to be reused at once). Emptied once `stream` waits for
/// them all.
struct Unjoined<'a>(&'a [Arc<CudaStream>]);

impl Drop for Unjoined<'_> {
    fn drop(&mut self) {
        for lane in self.0 {
            let _ = lane.synchronize();
        }
    }
}

/// A device buffer allocated and filled on the upload stream and read on the
/// main stream: on drop, the upload stream waits for the main stream's work
/// so far before the buffer is freed (stream-ordered, on the upload stream),
/// so the memory is never reused while a queued kernel still reads it.
struct Beside {
    buf: Option<CudaSlice<u64>>,
    main: Arc<CudaStream>,
    side: Arc<CudaStream>,
}

impl Drop for Beside {
    fn drop(&mut self) {
        let ordered = self.main.record_event(None).and_then(|done| self.side.wait(&done));
        if ordered.is_err() {
            // No event: wait for the main stream outright before the free.
            let _ = self.main.synchronize();
        }
        drop(self.buf.take());
    }
}

/// A claim on the device memory one product takes (TooLarge, so the CPU
/// does it, when the device or CUGMP_GPU_MEM_LIMIT lacks it), after the
/// fault switches had their say.
pub(in crate::gpu) fn claim(g: &Gpu, bytes: usize) -> Result<Reservation, GpuError> {
    // Asking the driver costs a call; a product this small fails over to
    // the CPU just as well if its allocations do.
    if bytes > SMALL_PRODUCT_BYTES {
        g.bind()?;
        let (free, _) = cudarc::driver::result::mem_get_info()?;
        // Leave a tenth of the free memory to others.
        if bytes > free / 10 * 9 {
            return Err(GpuError::TooLarge);
        }
    }
    let reservation = reserve(bytes)?;
    injected(Fault::GpuOom, "gpu-oom")?;
    injected(Fault::GpuLaunch, "gpu-launch")?;
    Ok(reservation)
}

impl Gpu {
    /// `out = u * v mod (B^n - 1)`, n = `out.len()` with a `cyclic_shape`,
    /// `u` and `v` non-empty and at most n limbs (the same slice twice
    /// squares), by one cyclic convolution of length 2n (n on the wide
    /// sets, where `cyclic_shape_from` takes them): no full product, no
    /// fold. A nonzero multiple of B^n - 1 comes out as B^n - 1, never 0
    /// (the coefficients are sums of non-negative terms, not all zero, so
    /// t + c >= 1 below). On an error `out` holds anything.
    pub fn mulmod_bnm1_into(&self, u: &[u64], v: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        let (un, vn, rn) = (u.len(), v.len(), out.len());
        assert!(un > 0 && vn > 0 && un <= rn && vn <= rn, "mulmod_bnm1_into takes operands of 1 to n limbs");
        let shape = cyclic_shape_from(rn, wide_from()).ok_or(GpuError::TooLarge)?;
        let compute = |stream: &Arc<CudaStream>, du: &CudaSlice<u64>, v: Second<'_>| {
            let _claim = claim(self, cyclic_device_bytes(shape, rn))?;
            self.convolve(stream, shape, (addr(du, stream), un), v, rn, true)
        };
        self.on_device(u, v, true, compute, |stream, t| self.copy_from_device_into(stream, t, out))
    }

    /// `u * v` (both non-empty, any lengths), `u.len() + v.len()` limbs, the
    /// top one possibly zero. Passing the same slice twice squares: one
    /// forward transform.
    pub fn mul(&self, u: &[u64], v: &[u64]) -> Result<Vec<u64>, GpuError> {
        if self.small_fits(u, v) {
            let mut out = vec![0; u.len() + v.len()];
            if self.small_products_into(&[(u, v)], &mut [&mut out[..]])? {
                return Ok(out);
            }
        }
        if let Some((shape, piece)) = self.pieces_plan(u, v) {
            let mut out = vec![0; u.len() + v.len()];
            self.pieces_from_host(shape, piece, u, v, &mut out)?;
            return Ok(out);
        }
        self.product_then(u, v, |stream, t| self.copy_from_device(stream, t))
    }

    /// The shape and piece of `u * v` where the NTT makes it by pieces
    /// (`Plan::Pieces`).
    fn pieces_plan(&self, u: &[u64], v: &[u64]) -> Option<(Shape, usize)> {
        let (un, vn) = (u.len(), v.len());
        if un == 0 || vn == 0 || by_gfp(un, vn).is_some() {
            return None;
        }
        match check_bounds(un, vn) {
            Ok(Plan::Pieces { shape, piece }) => Some((shape, piece)),
            _ => None,
        }
    }

    /// Whether `u * v` goes through a small product's graph
    /// (src/gpu/ntt/small.rs): short enough, and the NTT's.
    fn small_fits(&self, u: &[u64], v: &[u64]) -> bool {
        self.small_product_fits(u.len(), v.len())
    }

    /// Whether a product of `un` x `vn` limbs goes through a small
    /// product's graph, so that `mul_many_into` launches it beside others.
    pub fn small_product_fits(&self, un: usize, vn: usize) -> bool {
        un > 0 && vn > 0 && small::takes(un, vn) && by_gfp(un, vn).is_none()
    }

    /// Upload `u` and `v`, compute their product on the device, and hand it
    /// to `fetch`.
    fn product_then<T>(&self, u: &[u64], v: &[u64], fetch: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>) -> Result<T, GpuError>) -> Result<T, GpuError> {
        let un = u.len();
        // Past the NTT's plans, the other engine may have a transform.
        let plan = match check_bounds(un, v.len()) {
            Err(e) if by_gfp(un, v.len()).is_none() => return Err(e),
            plan => plan.ok(),
        };
        // A whole product's second operand goes up during the first's
        // forward transform (the other plans transform the short operand
        // first, whichever it is: both go up before).
        let overlap = matches!(plan, Some(Plan::Whole(_)));
        self.on_device(u, v, overlap, |stream, du, v| self.product_dev(stream, (addr(du, stream), un), v), fetch)
    }

    /// `out = u * v`, `out` of exactly `u.len() + v.len()` limbs, written
    /// straight from the device (no intermediate host buffer). On an error
    /// `out` holds anything; the caller computes it again on the CPU.
    pub fn mul_into(&self, u: &[u64], v: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        assert!(out.len() == u.len() + v.len(), "mul_into takes room for exactly the product");
        if self.small_fits(u, v) && self.small_products_into(&[(u, v)], &mut [&mut *out])? {
            return Ok(());
        }
        if let Some((shape, piece)) = self.pieces_plan(u, v) {
            return self.pieces_from_host(shape, piece, u, v, out);
        }
        self.product_then(u, v, |stream, t| self.copy_from_device_into(stream, t, out))
    }

    /// `outs[k] = pairs[k].0 * pairs[k].1` (each `outs[k]` exactly the
    /// product's limbs, no operand empty), the products that fit a small
    /// product's graph launched at once on a slot each
    /// (`small_products_into`), the others one after another as `mul_into`
    /// makes them. On an error `outs` hold anything.
    pub fn mul_many_into(&self, pairs: &[(&[u64], &[u64])], outs: &mut [&mut [u64]]) -> Result<(), GpuError> {
        assert!(pairs.len() == outs.len(), "mul_many_into takes an output a product");
        if pairs.iter().all(|&(u, v)| self.small_fits(u, v)) && self.small_products_into(pairs, outs)? {
            return Ok(());
        }
        pairs.iter().zip(outs.iter_mut()).try_for_each(|(&(u, v), out)| self.mul_into(u, v, out))
    }

    /// Upload `u` and `v` (`v` not at all when it is `u`: a square; with
    /// `overlap` perhaps beside `compute`'s first transform, see
    /// `second_operand`), `compute` from them a result on the device, and
    /// hand it to `fetch`.
    fn on_device<T>(
        &self,
        u: &[u64],
        v: &[u64],
        overlap: bool,
        compute: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>, Second<'_>) -> Result<CudaSlice<u64>, GpuError>,
        fetch: impl FnOnce(&Arc<CudaStream>, &CudaSlice<u64>) -> Result<T, GpuError>,
    ) -> Result<T, GpuError> {
        let (un, vn) = (u.len(), v.len());
        assert!(un > 0 && vn > 0, "products take non-empty operands");
        let squaring = std::ptr::eq(u, v);
        // Counted until the result is in host memory (`Gpu::in_flight`).
        let _busy = self.queue().busy.enter(un + vn);
        guarded(|| {
            let stream = self.stream();
            // CUGMP_LOG: the time of each phase (synchronising after each,
            // which only the log does).
            let phases = crate::config::get().log.then(std::time::Instant::now);
            let lap = |what: &str| -> Result<(), GpuError> {
                if let Some(t0) = phases {
                    stream.synchronize()?;
                    crate::config::log!("mul {un}x{vn}: {what} done at {:.3} ms", t0.elapsed().as_secs_f64() * 1e3);
                }
                Ok(())
            };
            // Operands in pinned blocks: both DMAs queued at once, the
            // second on the upload stream, before any host work of the
            // product (its first transform's launches included) could
            // delay the second; the host waits for neither.
            let mut unwaited = Unwaited::default();
            let du = match self.queue_pinned_upload(&stream, u)? {
                Some(d) => {
                    unwaited.main = Some(stream.clone());
                    d
                }
                None => self.copy_to_device(&stream, u)?,
            };
            let (mut slot, mut queued) = (None, None);
            let v = self.second_operand(&stream, v, squaring, overlap, &mut slot, (&mut queued, &mut unwaited))?;
            lap("upload")?;
            let t = compute(&stream, &du, v)?;
            lap("product")?;
            if crate::stats::profiling() {
                // The download's time, without the kernels it would wait for.
                stream.synchronize()?;
            }
            let out = fetch(&stream, &t)?;
            // The download waited for `stream`, which waited for the uploads.
            unwaited.done();
            lap("download")?;
            Ok(out)
        })
    }

    /// `v` as `product_dev` takes it. Where it pays to upload it beside the
    /// first operand's transform (`overlap`: the caller's plan allows it; a
    /// large operand; an upload stream): from a pinned block, its DMA
    /// queued now on the upload stream (`Second::Queued`, the buffer and
    /// the event in `queued`, the stream added to `unwaited`), else
    /// `Second::Host`. Otherwise uploaded now into `slot`.
    fn second_operand<'a>(
        &self,
        stream: &Arc<CudaStream>,
        v: &'a [u64],
        squaring: bool,
        overlap: bool,
        slot: &'a mut Option<CudaSlice<u64>>,
        (queued, unwaited): (&'a mut Option<(Beside, CudaEvent)>, &mut Unwaited),
    ) -> Result<Second<'a>, GpuError> {
        if squaring {
            return Ok(Second::Square);
        }
        if let (true, Some(side)) = (overlap && v.len() >= OVERLAP_MIN_LIMBS, self.queue().upload.as_ref()) {
            let Some(buf) = self.queue_pinned_upload(side, v)? else { return Ok(Second::Host(v)) };
            unwaited.side = Some(side.clone());
            let vp = addr(&buf, side);
            // Made Beside before the event, so that an error frees the buffer
            // after the main stream's work (none reads it yet).
            let beside = Beside { buf: Some(buf), main: stream.clone(), side: side.clone() };
            let done = side.record_event(None)?;
            let (_, done) = queued.insert((beside, done));
            return Ok(Second::Queued(vp, v.len(), done));
        }
        let d = slot.insert(self.copy_to_device(stream, v)?);
        Ok(Second::At(addr(d, stream), v.len()))
    }

    /// A product's transforms up to the combine: the first operand's
    /// forward transform, then the second's but its last pass, its turn with
    /// the first's (the pointwise product) and the inverse (`turn_at`), in
    /// the second's words; a square's one operand's transform, turned with
    /// itself. A host operand is uploaded on the upload stream now, while the
    /// main stream runs what was queued before (the first operand's
    /// transform).
    fn product_transforms(&self, stream: &Arc<CudaStream>, table: &Table, (up, un): (u64, usize), v: Second<'_>) -> Result<CudaSlice<u32>, GpuError> {
        if table.shape.len() >= lanes_from() {
            if let Some(lanes) = self.lanes() {
                return self.transforms_in_lanes(stream, lanes, table, (up, un), v);
            }
        }
        let first = match v {
            Second::Square => None,
            _ => Some(self.forward(stream, table, up, un)?),
        };
        let turn = |(xp, xn): (u64, usize)| -> Result<CudaSlice<u32>, GpuError> {
            let (x, unfinished) = self.forward_unfinished(stream, table, xp, xn)?;
            let at = x.device_ptr(stream).0;
            let by = first.as_ref().map_or(at, |f| f.device_ptr(stream).0);
            self.turn_at(stream, table, at, unfinished, by)?;
            Ok(x)
        };
        match v {
            Second::Square => turn((up, un)),
            Second::At(vp, vn) => turn((vp, vn)),
            Second::Host(x) => {
                let (beside, vp) = self.upload_beside(stream, x)?;
                let x = turn((vp, x.len()));
                // `beside` drops here, after the transforms that read it are queued.
                drop(beside);
                x
            }
            Second::Queued(vp, vn, done) => turn((ready(stream, (vp, done))?, vn)),
        }
    }

    /// `x` uploaded on the upload stream (the queue's stream where there is
    /// none) while `stream` runs what was queued on it, and `stream` made to
    /// wait for it: the buffer and its device address. Dropped after the
    /// work that reads it is queued (`Beside`).
    fn upload_beside(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<(Beside, u64), GpuError> {
        let side = self.queue().upload.clone().unwrap_or_else(|| stream.clone());
        let beside = Beside { buf: Some(self.copy_to_device(&side, x)?), main: stream.clone(), side: side.clone() };
        // The large copies were waited for on the host already; the
        // driver's own path for small ones may not have been.
        stream.wait(&side.record_event(None)?)?;
        let at = addr(beside.buf.as_ref().ok_or(GpuError::TooLarge)?, stream);
        Ok((beside, at))
    }

    /// `product_transforms` with each prime's passes on a lane of its own
    /// (`Gpu::lanes`): lane p makes the first operand's forward transform
    /// for prime p, then the second's, the turn and the inverse; the radix
    /// steps, of all primes, on `stream` before them, and `stream` waits
    /// for every lane. A pass's grid has a block a tile: at 10^6 x 10^6
    /// limbs 640 blocks of 2^14 elements, where the H200 holds 396 at once
    /// (three an SM), so a pass ran one full wave and one 38% idle. Each
    /// prime's chain of passes depends on its own alone, so the lanes'
    /// blocks fill one another's idle slots (RESULTS.md, "Primes on lanes").
    fn transforms_in_lanes(&self, stream: &Arc<CudaStream>, lanes: &Lanes, table: &Table, (up, un): (u64, usize), v: Second<'_>) -> Result<CudaSlice<u32>, GpuError> {
        let primes = table.shape.primes();
        let square = matches!(v, Second::Square);
        // The first operand's transform (none for a square), and the
        // second's, which the turn and the inverse take over.
        let first = if square { None } else { Some(self.transform_words(stream, table)?) };
        let x = self.transform_words(stream, table)?;
        let at = x.device_ptr(stream).0;
        let fp = first.as_ref().map_or(at, |f| f.device_ptr(stream).0);
        // A host operand's upload (below), kept to here so that it is freed
        // after the guard's wait.
        let mut _beside = None;
        let mut unjoined = Unjoined(&lanes.streams);
        // Each product records the lanes' events again, and waits on them,
        // under their lock (`Lanes`).
        let lock = || lanes.events.lock().unwrap_or_else(|p| p.into_inner());
        // `stream`'s work so far before the lanes' next.
        let fork = |events: &LaneEvents| -> Result<(), GpuError> {
            events.fork.record(stream)?;
            for lane in lanes.streams.iter().take(primes) {
                lane.wait(&events.fork)?;
            }
            Ok(())
        };
        let on_device = match v {
            Second::Square => Some((up, un)),
            Second::At(vp, vn) => Some((vp, vn)),
            Second::Host(_) | Second::Queued(..) => None,
        };
        if !square {
            self.forward_radix_at(stream, table, fp, up, un)?;
        }
        if let Some((vp, vn)) = on_device {
            self.forward_radix_at(stream, table, at, vp, vn)?;
        }
        let mut events = None;
        if !square {
            fork(events.insert(lock()))?;
            for (p, lane) in lanes.streams.iter().take(primes).enumerate() {
                self.forward_prime_at(lane, table, fp, up, un, p)?;
            }
        }
        // A host operand goes up on the upload stream while the lanes run
        // the first's transforms (the lock let go meanwhile), then the lanes
        // wait for it and its radix step.
        let (vp, vn) = match (on_device, v) {
            (Some(device), _) => device,
            (None, Second::Host(x)) => {
                drop(events.take());
                let (uploaded, vp) = self.upload_beside(stream, x)?;
                _beside = Some(uploaded);
                self.forward_radix_at(stream, table, at, vp, x.len())?;
                (vp, x.len())
            }
            (None, Second::Queued(vp, vn, done)) => {
                drop(events.take());
                let vp = ready(stream, (vp, done))?;
                self.forward_radix_at(stream, table, at, vp, vn)?;
                (vp, vn)
            }
            (None, _) => return Err(GpuError::TooLarge),
        };
        let events = match events {
            Some(held) => held,
            None => {
                let held = lock();
                fork(&held)?;
                held
            }
        };
        for (p, (lane, join)) in lanes.streams.iter().zip(&events.join).take(primes).enumerate() {
            let unfinished = self.forward_unfinished_of(lane, table, at, vp, vn, Primes::One(p))?;
            self.turn_of(lane, table, at, unfinished, fp, Primes::One(p))?;
            if p == 0 {
                // The first lane's kernels are queued and `stream` does not
                // wait for them yet: the failure `unjoined` is there for.
                injected(Fault::GpuLanes, "gpu-lanes")?;
            }
            join.record(lane)?;
            stream.wait(join)?;
        }
        // `stream` waits for every lane: `first` and the upload are freed
        // on it, after its waits, once this returns.
        unjoined.0 = &[];
        Ok(x)
    }

    /// The product of the `un` limbs at device address `up` and `v`, `un +
    /// vn` limbs on the device.
    pub(in crate::gpu) fn product_dev(&self, stream: &Arc<CudaStream>, (up, un): (u64, usize), v: Second<'_>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.limbs(un);
        if let Some(log_n) = by_gfp(un, vn) {
            // Where its buffers do not fit, the NTT's plans may.
            match self.gfp_product_dev(stream, (up, un), v, log_n) {
                Err(GpuError::TooLarge) => {}
                done => return done,
            }
        }
        let plan = check_bounds(un, vn)?;
        let _claim = claim(self, device_bytes(plan, un, vn, matches!(v, Second::Square)))?;
        self.product_at(stream, plan, (up, un), v)
    }

    /// `product_dev` by the generalized-Fermat-prime FFT, with a transform
    /// of 2^log_n points (`gfp::transform_log`).
    fn gfp_product_dev(&self, stream: &Arc<CudaStream>, (up, un): (u64, usize), v: Second<'_>, log_n: u32) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.limbs(un);
        let _claim = claim(self, gfp::device_bytes(log_n, un + vn, matches!(v, Second::Square)))?;
        let mut slot = None;
        let v = match v {
            Second::Square => None,
            Second::At(vp, vn) => Some((vp, vn)),
            Second::Host(x) => Some((addr(slot.insert(self.copy_to_device(stream, x)?), stream), vn)),
            Second::Queued(vp, vn, done) => Some((ready(stream, (vp, done))?, vn)),
        };
        self.gfp_product(stream, (up, un), v, log_n)
    }

    /// `product_dev` by `plan`, on device addresses and limb counts.
    fn product_at(&self, stream: &Arc<CudaStream>, plan: Plan, (up, un): (u64, usize), v: Second<'_>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.limbs(un);
        if let Plan::Whole(shape) = plan {
            return self.convolve(stream, shape, (up, un), v, un + vn, false);
        }
        // Chunked products transform the short operand first, whichever it
        // is, and products by pieces every piece: both go on the device first.
        let mut slot = None;
        let vp = match v {
            Second::At(vp, _) => vp,
            Second::Host(x) => addr(slot.insert(self.copy_to_device(stream, x)?), stream),
            Second::Queued(vp, _, done) => ready(stream, (vp, done))?,
            Second::Square => up,
        };
        let ((lp, ln), (sp, sn)) = if un >= vn { ((up, un), (vp, vn)) } else { ((vp, vn), (up, un)) };
        match plan {
            Plan::Pieces { shape, piece } => self.product_pieces(stream, shape, piece, (up, un), (vp, vn), matches!(v, Second::Square)),
            Plan::Chunked { shape, chunk } if !matches!(v, Second::Square) => self.product_chunked(stream, shape, chunk, (lp, ln), (sp, sn)),
            // A square is never chunked (its operands have one length).
            _ => Err(GpuError::TooLarge),
        }
    }

    /// The `limbs` limbs of the convolution by transforms of `shape` of the
    /// limbs at device address `u` and `v` (`Second::Square`: `u` squared,
    /// one forward transform): a product, or with `wrap` a product mod
    /// B^limbs - 1 (`to_limbs_with`).
    fn convolve(&self, stream: &Arc<CudaStream>, shape: Shape, (up, un): (u64, usize), v: Second<'_>, limbs: usize, wrap: bool) -> Result<CudaSlice<u64>, GpuError> {
        let table = self.table(stream, shape)?;
        let x = self.product_transforms(stream, &table, (up, un), v)?;
        self.to_limbs_with(stream, &table, &x, limbs, wrap)
    }

    /// `a * b` (device addresses and limb counts; `square`: b is a) by
    /// `Plan::Pieces` (`sum_pieces`).
    fn product_pieces(&self, stream: &Arc<CudaStream>, shape: Shape, piece: usize, (ap, an): (u64, usize), (bp, bn): (u64, usize), square: bool) -> Result<CudaSlice<u64>, GpuError> {
        crate::config::log!("mul {an}x{bn}: pieces of {piece} limbs, transforms of {} points", shape.len());
        let table = self.table(stream, shape)?;
        let fa = self.piece_transforms(stream, None, &table, piece, Pieces::OnDevice(ap, an))?;
        let fb = if square { Vec::new() } else { self.piece_transforms(stream, None, &table, piece, Pieces::OnDevice(bp, bn))? };
        let (r, _) = self.sum_pieces(stream, &table, piece, &fa, if square { &fa } else { &fb }, square, false)?;
        Ok(r)
    }

    /// `out = u * v` (`out` of exactly `u.len() + v.len()` limbs; the same
    /// slice twice squares) by `Plan::Pieces` from host limbs to host limbs,
    /// its transfers beside its kernels: each piece goes up on the upload
    /// stream while the main stream transforms the one before, and each
    /// stretch of the result goes down there as soon as no later sum
    /// reaches it, while the main stream makes the later sums. Without an
    /// upload stream, one after another on the main stream.
    fn pieces_from_host(&self, shape: Shape, piece: usize, u: &[u64], v: &[u64], out: &mut [u64]) -> Result<(), GpuError> {
        let (un, vn) = (u.len(), v.len());
        let square = std::ptr::eq(u, v);
        let _busy = self.queue().busy.enter(un + vn);
        guarded(|| {
            let stream = self.stream();
            let side = self.queue().upload.clone();
            let _claim = claim(self, device_bytes(Plan::Pieces { shape, piece }, un, vn, square))?;
            crate::config::log!("mul {un}x{vn}: pieces of {piece} limbs from host memory, transforms of {} points", shape.len());
            let table = self.table(&stream, shape)?;
            let fa = self.piece_transforms(&stream, side.as_ref(), &table, piece, Pieces::OnHost(u))?;
            let fb = if square { Vec::new() } else { self.piece_transforms(&stream, side.as_ref(), &table, piece, Pieces::OnHost(v))? };
            let (r, done) = self.sum_pieces(&stream, &table, piece, &fa, if square { &fa } else { &fb }, square, side.is_some())?;
            let Some(side) = side else { return self.copy_from_device_into(&stream, &r, out) };
            let rp = addr(&r, &stream);
            let mut from = 0;
            for (limit, event) in done {
                side.wait(&event)?;
                self.copy_from_device_at(&side, rp + 8 * from as u64, &mut out[from..limit])?;
                from = limit;
            }
            Ok(())
        })
    }

    /// The forward transforms of `x`'s pieces of `piece` limbs (the last
    /// may be shorter), each with its limb count. Pieces in host memory go
    /// up one at a time, on `side` where there is one: the host copies a
    /// piece while the main stream transforms the one before.
    fn piece_transforms(&self, stream: &Arc<CudaStream>, side: Option<&Arc<CudaStream>>, table: &Table, piece: usize, x: Pieces<'_>) -> Result<Vec<(CudaSlice<u32>, usize)>, GpuError> {
        let n = match x {
            Pieces::OnDevice(_, n) => n,
            Pieces::OnHost(h) => h.len(),
        };
        let mut out = Vec::with_capacity(n.div_ceil(piece));
        for o in (0..n).step_by(piece) {
            let len = piece.min(n - o);
            let f = match (x, side) {
                (Pieces::OnDevice(p, _), _) => self.forward(stream, table, p + 8 * o as u64, len)?,
                (Pieces::OnHost(h), None) => {
                    let d = self.copy_to_device(stream, &h[o..o + len])?;
                    self.forward(stream, table, addr(&d, stream), len)?
                }
                (Pieces::OnHost(h), Some(side)) => {
                    let beside = Beside { buf: Some(self.copy_to_device(side, &h[o..o + len])?), main: stream.clone(), side: side.clone() };
                    stream.wait(&side.record_event(None)?)?;
                    let d = beside.buf.as_ref().ok_or(GpuError::TooLarge)?;
                    self.forward(stream, table, addr(d, stream), len)?
                    // `beside` drops here, after the transform that reads it is queued.
                }
            };
            out.push((f, len));
        }
        Ok(out)
    }

    /// The product whose pieces' forward transforms are `fa` and `fb` (the
    /// same for a square), on the device: for each sum of products of
    /// pieces (`sums`) its inverse transform and limbs, added into the
    /// result where `sum_place` puts it. With `mark`, also (limbs, event)
    /// for each i + j: the result's limbs below `limbs` are final once the
    /// main stream passes the event (later sums start at the next piece),
    /// the last up to the top.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn sum_pieces(
        &self,
        stream: &Arc<CudaStream>,
        table: &Table,
        piece: usize,
        fa: &[(CudaSlice<u32>, usize)],
        fb: &[(CudaSlice<u32>, usize)],
        square: bool,
        mark: bool,
    ) -> Result<(CudaSlice<u64>, Vec<(usize, CudaEvent)>), GpuError> {
        let (la, lb): (Vec<usize>, Vec<usize>) = (fa.iter().map(|p| p.1).collect(), fb.iter().map(|p| p.1).collect());
        let total = la.iter().sum::<usize>() + if square { la.iter().sum::<usize>() } else { lb.iter().sum::<usize>() };
        let r = stream.alloc_zeros::<u64>(total)?;
        let rp = addr(&r, stream);
        // The sum kernel writes every word.
        let acc = unsafe { stream.alloc::<u32>(table.shape.primes() * table.shape.len()) }?;
        let accp = acc.device_ptr(stream).0;
        let sums = sums(fa.len(), fb.len(), square, piece);
        let mut done = Vec::new();
        for (s, (k, pairs)) in sums.iter().enumerate() {
            let at: Vec<(u64, u64, bool)> = pairs.iter().map(|p| (fa[p.i].0.device_ptr(stream).0, fb[p.j].0.device_ptr(stream).0, p.twice)).collect();
            self.sum_of_products_at(stream, table, accp, &at)?;
            self.inverse_passes_at(stream, table, accp)?;
            let (offset, limbs, span) = sum_place(*k, pairs, piece, &la, &lb, total);
            let sum = self.to_limbs(stream, table, &acc, limbs)?;
            let at = rp + 8 * offset as u64;
            self.addsub_dev(stream, false, at, at, span, addr(&sum, stream), limbs, 0)?;
            let last_of_k = sums.get(s + 1).is_none_or(|(next, _)| next != k);
            if mark && last_of_k {
                let limit = if s + 1 == sums.len() { total } else { (offset + piece).min(total) };
                done.push((limit, stream.record_event(None)?));
            }
        }
        Ok((r, done))
    }

    /// `long * short` (device addresses and limb counts) by `Plan::Chunked`.
    fn product_chunked(&self, stream: &Arc<CudaStream>, shape: Shape, chunk: usize, long: (u64, usize), short: (u64, usize)) -> Result<CudaSlice<u64>, GpuError> {
        let ((lp, ln), (sp, sn)) = (long, short);
        let table = self.table(stream, shape)?;
        let b = self.forward(stream, &table, sp, sn)?;
        let bp = b.device_ptr(stream).0;
        // Zeros: each chunk product lands on the top of the one before it
        // and on zeros above that.
        let r = stream.alloc_zeros::<u64>(ln + sn)?;
        let rp = addr(&r, stream);
        for offset in (0..ln).step_by(chunk) {
            let cn = chunk.min(ln - offset);
            let (a, unfinished) = self.forward_unfinished(stream, &table, lp + 8 * offset as u64, cn)?;
            self.turn_at(stream, &table, a.device_ptr(stream).0, unfinished, bp)?;
            let p = self.to_limbs(stream, &table, &a, cn + sn)?;
            // r[offset .. offset + cn + sn) += p: the partial sum is a product
            // of a prefix of `long` by `short`, so there is no carry out.
            let at = rp + 8 * offset as u64;
            self.addsub_dev(stream, false, at, at, cn + sn, addr(&p, stream), cn + sn, 0)?;
        }
        Ok(r)
    }
}
