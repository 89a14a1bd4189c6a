//! Radix conversion's levels on device-resident numbers, both ways.
//!
//! From digits ([`Gpu::join_levels`]): the leaves and the first power go
//! up once, every level's product (the NTT's, src/gpu/ntt), its sums
//! (cuda/linear.cu), the copies that lay the next level's halves into
//! their slots and the squarings that make the next power run on the
//! device, and the number comes down once. Made from host products
//! instead, each level carried its numbers up and its product down, and
//! its sums ran on the host (RESULTS.md, "Radix conversion from digits").
//!
//! To digits ([`Gpu::split_levels`]): the number, the powers and their
//! inverses go up once, every level's two products, its remainders and
//! their corrections run on the device, and the leaves come down once.
//!
//! The layouts, the powers, their inverses and the quotients' error bounds
//! are src/algorithms/radix's; this file only runs the joins and splits it
//! describes: every step is an exact product, sum or copy, and the
//! corrections are the ones the bounds there allow.

use super::device::{addr, guarded, injected, reserve, Gpu, GpuError};
use super::ntt::Second;
use crate::config::Fault;
use cudarc::driver::sys::{self, CUmemorytype};
use cudarc::driver::{result, CudaSlice, CudaStream, PushKernelArg};
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

/// The splits of [`Gpu::split_levels`]: `number` (below P_(L-1)^2, L =
/// `levels`) split by P_(L-1) into its quotient and remainder, each of
/// those by P_(L-2), and so on down to 2^L leaves, each below P_0 (`first`:
/// P_0, trimmed, and its Barrett inverse with `guard` extra limbs,
/// floor(B^(2k + guard) / P_0) for P_0 of k limbs). P_(j+1) = P_j^2, and
/// the device makes it and its inverse itself, by the Newton step of
/// src/algorithms/radix/to_digits.rs (`inverse_of_square`, which has the
/// bound: an inverse at most 2 below the exact one, each step's numbers
/// within the lengths used here, which the device checks). With a level's
/// numbers' tops q1 (limbs k - 1 .. 2k of each, k = P_j's length) side by
/// side `2k + guard + 2` limbs apart, the limbs from `k + 1 + guard` of each
/// one's product by the inverse are a quotient at most 2 below the true
/// one (`split_level` there).
pub struct Splits<'a> {
    pub number: &'a [u64],
    pub first: (&'a [u64], &'a [u64]),
    pub levels: usize,
    pub guard: usize,
    /// Limbs apart the leaves come back (at least P_0's length).
    pub leaf_slot: usize,
}

/// A device buffer and the limbs of it in use (from its start).
type Held = (CudaSlice<u64>, usize);

/// Corrections a quotient estimate of [`Splits`] takes at most.
const CORRECTIONS: usize = 2;

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
            injected(Fault::GpuLaunch, "gpu-launch")?;
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

    /// The leaves of `Splits`, most significant first, `leaf_slot` limbs
    /// apart, into `out` (2^L of them). Each level: its numbers' tops laid
    /// side by side, times the inverse in one product; the quotients cut
    /// from that, times the power in one product; the remainders as one
    /// difference of the whole level (a number minus an underestimate of
    /// its multiple never borrows from the next slot); then each
    /// correction: B^(k+1) - P added to every remainder in one sum, whose
    /// limb k + 1 of a slot says the remainder was at least P; where it
    /// does, the sum replaces the remainder and the quotient gains one.
    pub fn split_levels(&self, splits: &Splits<'_>, out: &mut [u64]) -> Result<(), GpuError> {
        let Splits { number, first: (p0, nu0), levels, guard, leaf_slot } = *splits;
        let count0 = 1usize.checked_shl(levels as u32).unwrap_or(0);
        let k0 = p0.len();
        let fits = levels > 0
            && count0 > 0
            && p0.last().is_some_and(|&l| l != 0)
            && !nu0.is_empty()
            && nu0.len() <= k0 + guard + 1
            && leaf_slot >= k0
            && count0.checked_mul(leaf_slot) == Some(out.len());
        if !fits {
            return Err(GpuError::TooLarge);
        }
        let _busy = self.queue().busy.enter(number.len());
        guarded(|| {
            let stream = self.stream();
            let (powers, inverses) = self.powers_and_inverses(&stream, (p0, nu0), levels, guard)?;
            let top = powers[levels - 1].1;
            if number.len() > 2 * top {
                return Err(GpuError::TooLarge);
            }
            // Level j + 1's numbers, `apart` limbs apart: below P_j^2, so
            // 2 k_j limbs each (the top level's one number, zeros after it).
            let numbers_up = self.copy_to_device(&stream, number)?;
            let mut numbers = self.in_every_slot(&stream, (addr(&numbers_up, &stream), number.len()), 2 * top, 1)?;
            drop(numbers_up);
            let mut apart = 2 * top;
            for j in (0..levels).rev() {
                let ((p_dev, k), (nu_dev, nun)) = (&powers[j], &inverses[j]);
                let (k, nun) = (*k, *nun);
                let count = count0 >> (j + 1);
                let wide = 2 * k + guard + 2;
                let len = count * wide;
                // The layouts of this level (wide apart): five of about the
                // number's length at once; the products claim their own.
                let _claim = reserve(8 * 6 * len)?;
                let na = addr(&numbers, &stream);
                let tops = stream.alloc_zeros::<u64>(len)?;
                self.lay_out(&stream, (addr(&tops, &stream), wide), (na + 8 * (k as u64 - 1), apart), k + 1, count)?;
                let estimates = self.product_dev(&stream, (addr(&tops, &stream), len - nun), Second::At(addr(nu_dev, &stream), nun))?;
                drop(tops);
                let quotients = stream.alloc_zeros::<u64>(len)?;
                let qa = addr(&quotients, &stream);
                self.lay_out(&stream, (qa, wide), (addr(&estimates, &stream) + 8 * (k + 1 + guard) as u64, wide), k + 1, count)?;
                drop(estimates);
                let multiples = self.product_dev(&stream, (qa, len - k), Second::At(addr(p_dev, &stream), k))?;
                let rests = stream.alloc_zeros::<u64>(len)?;
                let ra = addr(&rests, &stream);
                self.lay_out(&stream, (ra, wide), (na, apart), 2 * k, count)?;
                drop(numbers);
                self.addsub_dev(&stream, true, ra, ra, len, addr(&multiples, &stream), len, 0)?;
                drop(multiples);
                // Below 3P < B^(k+1) now; B^(k+1) - P (0 - P over k + 1
                // limbs) in every slot.
                let complement = stream.alloc_zeros::<u64>(k + 1)?;
                let ca = addr(&complement, &stream);
                self.addsub_dev(&stream, true, ca, ca, k + 1, addr(p_dev, &stream), k, 0)?;
                let complements = self.in_every_slot(&stream, (ca, k + 1), wide, count)?;
                drop(complement);
                let sums = stream.alloc_zeros::<u64>(len)?;
                let flags = stream.alloc_zeros::<u64>(len)?;
                let (sa, fa) = (addr(&sums, &stream), addr(&flags, &stream));
                for _ in 0..CORRECTIONS {
                    self.addsub_dev(&stream, false, sa, ra, len, addr(&complements, &stream), len, 0)?;
                    let (n, w, width) = (count as u64, wide as u64, k as u64 + 1);
                    launch!(self, &stream, slots_select, count * (k + 1), &ra, &sa, &fa, &n, &w, &width);
                    self.addsub_dev(&stream, false, qa, qa, len, fa, len, 0)?;
                }
                drop((sums, flags, complements));
                // The next level: each number's quotient, then its
                // remainder, both below P_j < B^k.
                let next_apart = if j == 0 { leaf_slot } else { 2 * powers[j - 1].1 };
                let next = stream.alloc_zeros::<u64>(2 * count * next_apart)?;
                let xa = addr(&next, &stream);
                self.lay_out(&stream, (xa, 2 * next_apart), (qa, wide), k, count)?;
                self.lay_out(&stream, (xa + 8 * next_apart as u64, 2 * next_apart), (ra, wide), k, count)?;
                drop((quotients, rests));
                numbers = next;
                apart = next_apart;
            }
            self.copy_from_device_into(&stream, &numbers, out)
        })
    }

    /// P_j and its inverse for j < `levels` (`Splits`), each with its
    /// length: P_0 and its inverse uploaded, each further power squared
    /// and inverted on the device. Err(Inexact) where a step's numbers
    /// left the lengths the bound gives them.
    fn powers_and_inverses(&self, stream: &Arc<CudaStream>, (p0, nu0): (&[u64], &[u64]), levels: usize, guard: usize) -> Result<(Vec<Held>, Vec<Held>), GpuError> {
        let mut powers: Vec<Held> = vec![(self.copy_to_device(stream, p0)?, p0.len())];
        let mut inverses: Vec<Held> = vec![(self.copy_to_device(stream, nu0)?, nu0.len())];
        // Four words a level, each 0 unless its step's bound failed.
        let faults = stream.alloc_zeros::<u64>(4 * levels)?;
        let fa = addr(&faults, stream);
        for j in 1..levels {
            let (p, k) = &powers[j - 1];
            let k = *k;
            let square = self.product_dev(stream, (addr(p, stream), k), Second::Square)?;
            // P_(j-1) >= B^(k-1), so its square has 2k or 2k - 1 limbs.
            let top = stream.clone_dtoh(&square.slice(2 * k - 1..2 * k))?;
            let big_k = if top[0] == 0 { 2 * k - 1 } else { 2 * k };
            let nu = self.inverse_of_square(stream, &inverses[j - 1], k, (addr(&square, stream), big_k), guard, fa + 32 * j as u64)?;
            powers.push((square, big_k));
            inverses.push(nu);
        }
        if stream.clone_dtoh(&faults)?.iter().any(|&w| w != 0) {
            return Err(GpuError::Inexact);
        }
        Ok((powers, inverses))
    }

    /// The inverse of P^2 (`p2`, K limbs) from `nu`, P's (P of k limbs), in
    /// K + guard + 1 limbs: y = floor(nu^2 / B^s), s = 4k + guard - 2K,
    /// then y + floor(y t / B^(2K+guard)) with t = B^(2K+guard) - y P^2
    /// (to_digits.rs, `inverse_of_square`). The bound there puts y and the
    /// result below B^(K+guard+1) and t within 0 and B^(K+k+2); the four
    /// words at `faults` become nonzero where one of them is not.
    fn inverse_of_square(&self, stream: &Arc<CudaStream>, (nu, nun): &Held, k: usize, (p2, big_k): (u64, usize), guard: usize, faults: u64) -> Result<Held, GpuError> {
        let (nun, yn, big) = (*nun, big_k + guard + 1, 2 * big_k + guard);
        let s = (4 * k + guard).checked_sub(2 * big_k).filter(|&s| s <= 2 * nun).ok_or(GpuError::TooLarge)?;
        let nu2 = self.product_dev(stream, (addr(nu, stream), nun), Second::Square)?;
        let y = stream.alloc_zeros::<u64>(yn)?;
        let ya = addr(&y, stream);
        let kept = yn.min(2 * nun - s);
        let na = addr(&nu2, stream);
        // SAFETY: `kept` limbs from nu2's limb s (s + kept <= 2 nun) into y
        // (kept <= yn); both alive until the copy runs.
        unsafe { result::memcpy_dtod_async(ya, na + 8 * s as u64, 8 * kept, stream.cu_stream()) }?;
        self.any_nonzero(stream, faults, (na + 8 * (s + kept) as u64, 2 * nun - s - kept))?;
        drop(nu2);
        let yp2 = self.product_dev(stream, (ya, yn), Second::At(p2, big_k))?;
        // t = B^big - y P^2 over big + 1 limbs (y P^2 has yn + K = big + 1),
        // borrowing where y P^2 > B^big.
        let mut t = stream.alloc_zeros::<u64>(big + 1)?;
        {
            let mut top = t.slice_mut(big..big + 1);
            stream.memcpy_htod(&[1u64], &mut top)?;
        }
        let ta = addr(&t, stream);
        self.addsub_dev(stream, true, ta, ta, big + 1, addr(&yp2, stream), big + 1, faults + 8)?;
        drop(yp2);
        let tn = (big_k + k + 2).min(big + 1);
        self.any_nonzero(stream, faults + 16, (ta + 8 * tn as u64, big + 1 - tn))?;
        let yt = self.product_dev(stream, (ya, yn), Second::At(ta, tn))?;
        let above = yn + tn - big.min(yn + tn);
        if above > 0 {
            self.addsub_dev(stream, false, ya, ya, yn, addr(&yt, stream) + 8 * big as u64, above, faults + 24)?;
        }
        Ok((y, yn))
    }

    /// Sets the word at `flag` (left alone otherwise) where any of the `n`
    /// limbs at `x` is nonzero.
    fn any_nonzero(&self, stream: &Arc<CudaStream>, flag: u64, (x, n): (u64, usize)) -> Result<(), GpuError> {
        if n > 0 {
            let limbs = n as u64;
            launch!(self, stream, any_low_bits, n, &flag, &x, &limbs, &limbs, &0u32);
        }
        Ok(())
    }

    /// The `n` limbs at device address `x` in the first limbs of each of
    /// `count` slots `apart` (at least n) limbs apart, zeros elsewhere:
    /// one copy, then copies that double the slots filled.
    fn in_every_slot(&self, stream: &Arc<CudaStream>, (x, n): (u64, usize), apart: usize, count: usize) -> Result<CudaSlice<u64>, GpuError> {
        let slots = stream.alloc_zeros::<u64>(count * apart)?;
        let base = addr(&slots, stream);
        // SAFETY: n <= apart limbs into the new buffer, from the caller's,
        // both alive until the copies run (freed in stream order).
        unsafe { result::memcpy_dtod_async(base, x, 8 * n, stream.cu_stream()) }?;
        let mut filled = 1;
        while filled < count {
            let more = filled.min(count - filled);
            let bytes = 8 * more * apart;
            // SAFETY: slots [0, filled) and [filled, filled + more) lie in
            // the buffer and do not overlap; it outlives the copy (freed in
            // stream order).
            unsafe { result::memcpy_dtod_async(base + (8 * filled * apart) as u64, base, bytes, stream.cu_stream()) }?;
            filled += more;
        }
        Ok(slots)
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


