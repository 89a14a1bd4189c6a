//! O(n) operations on the GPU with GMP's `mpz` semantics: add, subtract,
//! shifts with truncating, floor and ceiling rounding, and bitwise logic on
//! infinite two's complement, all built from the four kernels of
//! `cuda/linear.cu` (carry/borrow scan, shift left, shift right, bitwise) on
//! magnitudes. The multiplication engine's carry pass uses the same add.
//!
//! GMP's two's complement: a negative x is ...111 ~(|x| - 1), so with
//! D(x) = |x| - 1 (one borrow scan) every case is one bitwise pass with some
//! operands complemented, and results that come out negative are -(R + 1)
//! (one carry scan):
//!
//! | op  | a >= 0, b >= 0 | a >= 0 > b                     | a, b < 0                  |
//! |-----|----------------|--------------------------------|---------------------------|
//! | and | A & B          | A & ~D(B), |a| limbs           | -((D(A) or D(B)) + 1)     |
//! | ior | A or B         | -((~A & D(B)) + 1), |b| limbs  | -((D(A) & D(B)) + 1)      |
//! | xor | A ^ B          | -((A ^ D(B)) + 1)              | D(A) ^ D(B)               |
//!
//! (`or` is `|`; the table uses a word so the markdown stays a table.)

use super::device::{addr, guarded, injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// Limbs per block of the add/sub kernels (LINEAR_TILE in cuda/linear.cu),
/// and of the wide products' combine with its carries (NTT_CARRY_TILE in
/// cuda/ntt.cu), which take their scan state from `with_scan_state`.
pub(super) const LINEAR_TILE: usize = 256 * 8;
const LINEAR_THREADS: u32 = 256;

/// A number as GMP holds it: a sign and a magnitude with no high zero limbs.
#[derive(Clone, Copy, Debug)]
pub struct Signed<'a> {
    pub negative: bool,
    pub magnitude: &'a [u64],
}

/// A result in the same form (normalized; zero is never negative).
#[derive(Debug, PartialEq, Eq)]
pub struct Owned {
    pub negative: bool,
    pub magnitude: Vec<u64>,
}

impl Owned {
    pub fn new(negative: bool, mut magnitude: Vec<u64>) -> Owned {
        while magnitude.last() == Some(&0) {
            magnitude.pop();
        }
        Owned { negative: negative && !magnitude.is_empty(), magnitude }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift {
    /// `mpz_mul_2exp`
    Left,
    /// `mpz_tdiv_q_2exp`: toward zero
    RightTrunc,
    /// `mpz_fdiv_q_2exp`: toward minus infinity
    RightFloor,
    /// `mpz_cdiv_q_2exp`: toward plus infinity
    RightCeil,
}

/// The kernel's operation codes (BITWISE_* in cuda/linear.cu).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    And = 0,
    Ior = 1,
    Xor = 2,
}

const ALL_ONES: u64 = !0;

/// The add/sub kernels' scan state (see cuda/linear.cu): two counters the
/// kernel resets itself, then one published word per tile tagged with the
/// call's epoch, so the buffer is allocated once (grown when a longer
/// operand comes) and never cleared.
#[derive(Default)]
pub(crate) struct ScanState {
    words: Option<CudaSlice<u64>>,
    epoch: u64,
}

/// A result known without device work (a zero operand, every bit shifted
/// out). It still honours CUGMP_FAULT, so a fault test sees every call of the
/// GPU engine fail and fall back.
fn trivial(negative: bool, magnitude: Vec<u64>) -> Result<Owned, GpuError> {
    injected(Fault::GpuOom, "gpu-oom")?;
    injected(Fault::GpuLaunch, "gpu-launch")?;
    Ok(Owned::new(negative, magnitude))
}

/// |a| vs |b| for normalized magnitudes (the host reads from the top, and for
/// operands that differ it stops at the first limb).
fn magnitude_cmp(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

impl Gpu {
    /// `r[0..n) = a[0..n) +/- b[0..m)`, m <= n, n >= 1, carry or borrow out to
    /// `cout` (0 for none). `r` may be `a`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn addsub_dev(&self, stream: &Arc<CudaStream>, subtract: bool, r: u64, a: u64, n: usize, b: u64, m: usize, cout: u64) -> Result<(), GpuError> {
        debug_assert!(n >= 1 && m <= n);
        let tiles = n.div_ceil(LINEAR_TILE);
        if tiles > i32::MAX as usize {
            return Err(GpuError::TooLarge);
        }
        injected(Fault::GpuLaunch, "gpu-launch")?;
        self.with_scan_state(stream, n, |state, epoch| self.addsub_with_state(stream, subtract, (r, a, n, b, m, cout), (state, epoch)))
    }

    /// `launch(state, epoch)` with the context's scan state (cuda/carry_scan.cuh)
    /// for `n` limbs in tiles of LINEAR_TILE: its device address, grown to
    /// `scan_words(n)` words where shorter, and a new epoch. Held until the
    /// launch is queued: kernels on the stream then use the buffer one
    /// after another, each with its own epoch.
    pub(super) fn with_scan_state(&self, stream: &Arc<CudaStream>, n: usize, launch: impl FnOnce(u64, u64) -> Result<(), GpuError>) -> Result<(), GpuError> {
        let tiles = n.div_ceil(LINEAR_TILE);
        let mut scan = self.queue().scan.lock().unwrap_or_else(|p| p.into_inner());
        if scan.words.as_ref().is_none_or(|w| w.len() < Self::scan_words(n)) {
            // A fresh buffer is zeros: epoch 0 is never a call's, so none of
            // it reads as published. The old one is freed in stream order.
            scan.words = Some(stream.alloc_zeros::<u64>(2 + tiles.next_power_of_two())?);
        }
        scan.epoch += 1;
        let epoch = scan.epoch;
        let state = scan.words.as_ref().ok_or(GpuError::TooLarge)?;
        launch(addr(state, stream), epoch)
    }

    /// Scan state words `addsub_with_state` needs for `n` limbs: the two
    /// counters and a word a tile.
    pub(super) const fn scan_words(n: usize) -> usize {
        2 + n.div_ceil(LINEAR_TILE)
    }

    /// The add or sub kernel of `addsub_dev` with the scan state at device
    /// address `state` (`scan_words(n)` words), published words stamped
    /// with `epoch`: words of an earlier call with the same epoch read as
    /// published, so such a state must be zeros (the counters too) unless
    /// the epoch is new.
    pub(super) fn addsub_with_state(&self, stream: &Arc<CudaStream>, subtract: bool, (r, a, n, b, m, cout): (u64, u64, usize, u64, usize, u64), (state, epoch): (u64, u64)) -> Result<(), GpuError> {
        let tiles = n.div_ceil(LINEAR_TILE);
        let (nn, mm) = (n as u64, m as u64);
        let f = if subtract { &self.kernels.sub } else { &self.kernels.add };
        let mut builder = stream.launch_builder(f);
        builder.arg(&r).arg(&a).arg(&nn).arg(&b).arg(&mm).arg(&cout).arg(&state).arg(&epoch);
        let cfg = LaunchConfig { grid_dim: (tiles as u32, 1, 1), block_dim: (LINEAR_THREADS, 1, 1), shared_mem_bytes: 0 };
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    /// `t += c` in place on the device, both `n` limbs, no carry out: the
    /// multiplication engine's last carry pass.
    pub(super) fn add_in_place(&self, stream: &Arc<CudaStream>, t: &mut CudaSlice<u64>, c: &CudaSlice<u64>, n: usize) -> Result<(), GpuError> {
        let (tp, cp) = (addr(t, stream), addr(c, stream));
        self.addsub_dev(stream, false, tp, tp, n, cp, n, 0)
    }

    /// Upload a magnitude (at least one limb on the device, so every buffer
    /// has an address).
    fn upload(&self, stream: &Arc<CudaStream>, x: &[u64]) -> Result<CudaSlice<u64>, GpuError> {
        injected(Fault::GpuOom, "gpu-oom")?;
        self.copy_to_device(stream, x)
    }

    fn download(&self, stream: &Arc<CudaStream>, x: &CudaSlice<u64>, negative: bool) -> Result<Owned, GpuError> {
        Ok(Owned::new(negative, self.copy_from_device(stream, x)?))
    }

    /// `-(R + 1)` for `R` of `n` limbs held in `r`, which has room for n + 1.
    fn negate_plus_one(&self, stream: &Arc<CudaStream>, r: &CudaSlice<u64>, n: usize, one: &CudaSlice<u64>) -> Result<Owned, GpuError> {
        let rp = addr(r, stream);
        self.addsub_dev(stream, false, rp, rp, n, addr(one, stream), 1, rp + 8 * n as u64)?;
        self.download(stream, r, true)
    }

    /// `|x| - 1` into a new buffer of |x| limbs (x nonzero).
    fn minus_one(&self, stream: &Arc<CudaStream>, x: &CudaSlice<u64>, n: usize, one: &CudaSlice<u64>) -> Result<CudaSlice<u64>, GpuError> {
        let d = stream.alloc_zeros::<u64>(n)?;
        self.addsub_dev(stream, true, addr(&d, stream), addr(x, stream), n, addr(one, stream), 1, 0)?;
        Ok(d)
    }

    /// `r[0..n) = (a ^ ia) OP (b ^ ib)` with a, b read as zero past na, nb.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn bitwise_dev(&self, stream: &Arc<CudaStream>, op: Logic, r: &mut CudaSlice<u64>, n: usize, a: &CudaSlice<u64>, na: usize, ia: u64, b: &CudaSlice<u64>, nb: usize, ib: u64) -> Result<(), GpuError> {
        injected(Fault::GpuLaunch, "gpu-launch")?;
        let (nn, na, nb, code) = (n as u64, na as u64, nb as u64, op as u32);
        launch_elementwise!(self, stream, bitwise, n, r, &nn, a, &na, &ia, b, &nb, &ib, &code);
        Ok(())
    }

    /// `a + b` (`mpz_add`; `mpz_sub` passes b with its sign flipped).
    pub fn add(&self, a: Signed, b: Signed) -> Result<Owned, GpuError> {
        guarded(|| {
            // Same signs: |big| + |small|, big the longer. Opposite signs:
            // |big| - |small|, big the larger magnitude (equal ones cancel).
            // Either way the result takes big's sign.
            let subtract = a.negative != b.negative;
            let (big, small) = match (subtract, magnitude_cmp(a.magnitude, b.magnitude)) {
                (_, std::cmp::Ordering::Equal) if subtract || a.magnitude.is_empty() => return trivial(false, Vec::new()),
                (_, std::cmp::Ordering::Less) => (b, a),
                _ => (a, b),
            };
            let (n, m) = (big.magnitude.len(), small.magnitude.len());
            let stream = self.stream();
            let _claim = super::device::reserve(8 * (n + m + n + 1) + n / 512 + 64)?;
            let (db, ds) = (self.upload(&stream, big.magnitude)?, self.upload(&stream, small.magnitude)?);
            // A sum has a carry limb on top; a difference of m <= n limbs does not.
            let r = stream.alloc_zeros::<u64>(n + !subtract as usize)?;
            let rp = addr(&r, &stream);
            let cout = if subtract { 0 } else { rp + 8 * n as u64 };
            self.addsub_dev(&stream, subtract, rp, addr(&db, &stream), n, addr(&ds, &stream), m, cout)?;
            self.download(&stream, &r, big.negative)
        })
    }

    /// `a * 2^bits` or `a / 2^bits` rounded as `kind` says.
    pub fn shift(&self, kind: Shift, a: Signed, bits: u64) -> Result<Owned, GpuError> {
        guarded(|| {
            let n = a.magnitude.len();
            if n == 0 {
                return trivial(false, Vec::new());
            }
            let stream = self.stream();
            let (limbs, bit) = ((bits / 64) as usize, (bits % 64) as u32);
            let round_up = match kind {
                Shift::Left | Shift::RightTrunc => false,
                Shift::RightFloor => a.negative,
                Shift::RightCeil => !a.negative,
            };
            if kind != Shift::Left && limbs >= n {
                // Every bit shifted out, and a is nonzero: 0 or one unit away.
                return trivial(a.negative, if round_up { vec![1] } else { Vec::new() });
            }
            let _claim = super::device::reserve(8 * (2 * n + limbs + 2) + n / 512 + 64)?;
            let da = self.upload(&stream, a.magnitude)?;
            let (nn, ll) = (n as u64, limbs as u64);
            let out = if kind == Shift::Left { n.checked_add(limbs + 1).ok_or(GpuError::TooLarge)? } else { n - limbs + 1 };
            let mut r = stream.alloc_zeros::<u64>(out)?;
            injected(Fault::GpuLaunch, "gpu-launch")?;
            if kind == Shift::Left {
                launch_elementwise!(self, stream, shl, out, &mut r, &da, &nn, &ll, &bit);
            } else {
                launch_elementwise!(self, stream, shr, n - limbs, &mut r, &da, &nn, &ll, &bit);
            }
            if round_up {
                // Plus one when any bit shifted out was set; the spare top limb takes the carry.
                let mut flag = stream.alloc_zeros::<u64>(1)?;
                launch!(self, stream, any_low_bits, limbs + 1, &mut flag, &da, &nn, &ll, &bit);
                let (rp, kept) = (addr(&r, &stream), n - limbs);
                self.addsub_dev(&stream, false, rp, rp, kept, addr(&flag, &stream), 1, rp + 8 * kept as u64)?;
            }
            self.download(&stream, &r, a.negative)
        })
    }

    /// `a OP b` on infinite two's complement (the table in the module doc).
    pub fn logic(&self, op: Logic, a: Signed, b: Signed) -> Result<Owned, GpuError> {
        // Each op is symmetric: put a non-negative operand first.
        let (a, b) = if a.negative && !b.negative { (b, a) } else { (a, b) };
        let (na, nb) = (a.magnitude.len(), b.magnitude.len());
        guarded(|| {
            let stream = self.stream();
            // Operands, their decrements, the result.
            let _claim = super::device::reserve(8 * (3 * (na + nb) + 2) + (na + nb) / 256 + 64)?;
            let (da, db) = (self.upload(&stream, a.magnitude)?, self.upload(&stream, b.magnitude)?);
            // The 1 of |x| - 1 and -(R + 1), for the cases with a negative operand.
            let one = || self.copy_to_device(&stream, &[1u64]);
            match (a.negative, b.negative) {
                (false, false) => {
                    let n = if op == Logic::And { na.min(nb) } else { na.max(nb) };
                    if n == 0 {
                        return trivial(false, Vec::new());
                    }
                    let mut r = stream.alloc_zeros::<u64>(n)?;
                    self.bitwise_dev(&stream, op, &mut r, n, &da, na, 0, &db, nb, 0)?;
                    self.download(&stream, &r, false)
                }
                (false, true) => {
                    let one = one()?;
                    let db1 = self.minus_one(&stream, &db, nb, &one)?;
                    match op {
                        Logic::And => {
                            if na == 0 {
                                return trivial(false, Vec::new());
                            }
                            let mut r = stream.alloc_zeros::<u64>(na)?;
                            self.bitwise_dev(&stream, op, &mut r, na, &da, na, 0, &db1, nb, ALL_ONES)?;
                            self.download(&stream, &r, false)
                        }
                        Logic::Ior => {
                            let mut r = stream.alloc_zeros::<u64>(nb + 1)?;
                            self.bitwise_dev(&stream, Logic::And, &mut r, nb, &da, na, ALL_ONES, &db1, nb, 0)?;
                            self.negate_plus_one(&stream, &r, nb, &one)
                        }
                        Logic::Xor => {
                            let n = na.max(nb);
                            let mut r = stream.alloc_zeros::<u64>(n + 1)?;
                            self.bitwise_dev(&stream, op, &mut r, n, &da, na, 0, &db1, nb, 0)?;
                            self.negate_plus_one(&stream, &r, n, &one)
                        }
                    }
                }
                (true, true) => {
                    let one = one()?;
                    let (da1, db1) = (self.minus_one(&stream, &da, na, &one)?, self.minus_one(&stream, &db, nb, &one)?);
                    match op {
                        Logic::And | Logic::Ior => {
                            // And of negatives is the ior of D's, and vice versa.
                            let (inner, n) = if op == Logic::And { (Logic::Ior, na.max(nb)) } else { (Logic::And, na.min(nb)) };
                            let mut r = stream.alloc_zeros::<u64>(n + 1)?;
                            self.bitwise_dev(&stream, inner, &mut r, n, &da1, na, 0, &db1, nb, 0)?;
                            self.negate_plus_one(&stream, &r, n, &one)
                        }
                        Logic::Xor => {
                            let n = na.max(nb);
                            let mut r = stream.alloc_zeros::<u64>(n)?;
                            self.bitwise_dev(&stream, op, &mut r, n, &da1, na, 0, &db1, nb, 0)?;
                            self.download(&stream, &r, false)
                        }
                    }
                }
                (true, false) => unreachable!("operands were ordered non-negative first"),
            }
        })
    }

    /// `~a = -a - 1` (`mpz_com`).
    pub fn com(&self, a: Signed) -> Result<Owned, GpuError> {
        let one = [1u64];
        if a.negative {
            // |a| - 1
            self.add(Signed { negative: false, magnitude: a.magnitude }, Signed { negative: true, magnitude: &one })
        } else {
            // -(a + 1)
            self.add(Signed { negative: true, magnitude: a.magnitude }, Signed { negative: true, magnitude: &one })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_normalized_and_zero_is_positive() {
        assert_eq!(Owned::new(true, vec![0, 0]), Owned { negative: false, magnitude: vec![] });
        assert_eq!(Owned::new(true, vec![5, 0]), Owned { negative: true, magnitude: vec![5] });
    }

    #[test]
    fn magnitudes_compare_from_the_top() {
        use std::cmp::Ordering::*;
        assert_eq!(magnitude_cmp(&[1, 2], &[9]), Greater);
        assert_eq!(magnitude_cmp(&[9, 1], &[1, 2]), Less);
        assert_eq!(magnitude_cmp(&[3, 2], &[3, 2]), Equal);
        assert_eq!(magnitude_cmp(&[], &[]), Equal);
    }
}
