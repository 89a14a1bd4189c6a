//! A square root on device-resident numbers: the last Newton steps for the
//! inverse root and Karp and Markstein's correction, at the positions
//! src/algorithms/sqrt.rs works out and passes down ([`RootPlan`]; the
//! error bounds live there), every product on the device (src/gpu/ntt) and
//! every sum, shift and bit window between them too (cuda/linear.cu). N
//! goes up once; the root T and the low limbs of N - T^2 come down once.
//! Made from host products instead, each of a root's dozen large products
//! carried its operands up and its result down.
//!
//! Nothing here decides exactness: the caller takes T only where 0 <= N -
//! T^2 <= 2T. Quantities that are signed on the host (a Newton step's E'',
//! the correction's D') are kept natural here by the window's flipped top
//! bit: a count-bit two's complement w plus 2^(count-1) is in [0,
//! 2^count), and the 2^(count-1) times the other factor is subtracted back
//! in the same sum that shifts the result into place.

use super::device::{addr, guarded, reserve, Gpu, GpuError};
use super::ntt::Second;
use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use std::sync::Arc;

/// One Newton step from X_k to X_K, as src/algorithms/sqrt.rs's `step`
/// defines it: P = X_k^2; A P with A = N's limbs from `a_from`; E'' = minus
/// the bits [d, d + m) of A P read as m-bit two's complement; X_K = X_k
/// 2^(K-k) + floor(X_k E'' / 2^(k+3)), below 2^(K+2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewtonStep {
    pub k: u64,
    pub big_k: u64,
    pub a_from: usize,
    pub d: u64,
    pub m: u64,
}

/// A root's positions, all from src/algorithms/sqrt.rs.
pub struct RootPlan<'a> {
    /// N, its top limb nonzero.
    pub n: &'a [u64],
    /// The iterate at the first step's k (the last step's K when there are
    /// no steps).
    pub x: &'a [u64],
    pub steps: &'a [NewtonStep],
    /// y = floor(N[top_from..] X / 2^y_shift).
    pub top_from: usize,
    pub y_shift: u64,
    /// D' = N[high_from..] - y^2, read from its low `d_limbs` limbs as two's
    /// complement: |D'| is below 2^(64 d_limbs - 1).
    pub high_from: usize,
    pub d_limbs: usize,
    /// T = y 2^w + floor(D' X / 2^c_shift).
    pub w: u64,
    pub c_shift: u64,
    /// The root's limbs, ceil(N's limbs / 2).
    pub root_limbs: usize,
}

/// What the device found of N - P besides its low m limbs (`Gpu::root`,
/// P = T^2; `Gpu::quotient`, P = Q D).
pub struct Difference {
    /// Whether N - P is in [-2^(64 m - 1), 2^(64 m - 1)): then the low
    /// limbs that came down, their top bit flipped, are N - P as m-limb
    /// two's complement (`low_difference`).
    pub fits: bool,
}

/// A term of `combination`: the number at a device address and limb
/// count, times 2^shift, added or subtracted.
pub(super) struct Term {
    pub(super) at: (u64, usize),
    pub(super) shift: u64,
    pub(super) subtract: bool,
}

impl Gpu {
    /// The root's estimate and remainder by `plan` (see the module doc):
    /// T into `t` (root_limbs + 1 limbs, high zeros possible; a T that
    /// needs more is cut to them, and the caller's check refuses it), N -
    /// T^2 + 2^(64 m - 1) modulo B^m into `low` (m = root_limbs + 2;
    /// `low_difference`). The caller's rooms, whose
    /// pages are in memory already: a fresh buffer's pages fault in one at
    /// a time inside the download.
    pub fn root(&self, plan: &RootPlan<'_>, t_out: &mut [u64], low_out: &mut [u64]) -> Result<Difference, GpuError> {
        let nn = plan.n.len();
        let m = plan.root_limbs + 2;
        if nn < m || plan.x.is_empty() || plan.d_limbs == 0 || t_out.len() != m - 1 || low_out.len() != m {
            return Err(GpuError::TooLarge);
        }
        let _busy = self.queue().busy.enter(nn);
        guarded(|| {
            let stream = self.stream();
            // N and the sums' buffers; each product claims its own.
            let _claim = reserve(8 * 4 * nn)?;
            let dn = self.copy_to_device(&stream, plan.n)?;
            let np = addr(&dn, &stream);
            let n_from = |from: usize| (np + 8 * from as u64, nn - from);
            let mut x = self.copy_to_device(&stream, plan.x)?;
            let mut xl = plan.x.len();
            for s in plan.steps {
                if s.a_from >= nn {
                    return Err(GpuError::TooLarge);
                }
                let p = self.product_dev(&stream, (addr(&x, &stream), xl), Second::Square)?;
                let ap = self.product_dev(&stream, n_from(s.a_from), Second::At(addr(&p, &stream), 2 * xl))?;
                drop(p);
                let v = self.window(&stream, (addr(&ap, &stream), nn - s.a_from + 2 * xl), s.d, s.m)?;
                drop(ap);
                let vl = s.m.div_ceil(64) as usize;
                let xa = (addr(&x, &stream), xl);
                let g = self.product_dev(&stream, xa, Second::At(addr(&v, &stream), vl))?;
                // X_k E'' = X_k 2^(m-1) - G.
                let z = self.combination(
                    &stream,
                    &[
                        Term { at: xa, shift: s.big_k + 3, subtract: false },
                        Term { at: xa, shift: s.m - 1, subtract: false },
                        Term { at: (addr(&g, &stream), xl + vl), shift: 0, subtract: true },
                    ],
                )?;
                let keep = (s.big_k + 2).div_ceil(64) as usize;
                (x, xl) = self.shifted_down(&stream, (addr(&z, &stream), z.len()), s.k + 3, keep)?;
            }
            let xa = (addr(&x, &stream), xl);
            let (top, top_limbs) = n_from(plan.top_from);
            if plan.top_from >= nn {
                return Err(GpuError::TooLarge);
            }
            let ny = self.product_dev(&stream, (top, top_limbs), Second::At(xa.0, xl))?;
            let (y, yl) = self.shifted_down(&stream, (addr(&ny, &stream), ny.len()), plan.y_shift, usize::MAX)?;
            drop(ny);
            let ya = (addr(&y, &stream), yl);
            let y2 = self.product_dev(&stream, ya, Second::Square)?;
            let dl = plan.d_limbs;
            if 2 * yl < dl || plan.high_from + dl > nn {
                return Err(GpuError::TooLarge);
            }
            // D' modulo B^dl, then read with its top bit flipped: D' + 2^(64 dl - 1).
            let d = stream.alloc_zeros::<u64>(dl)?;
            self.addsub_dev(&stream, true, addr(&d, &stream), n_from(plan.high_from).0, dl, addr(&y2, &stream), dl, 0)?;
            drop(y2);
            let v = self.window(&stream, (addr(&d, &stream), dl), 0, 64 * dl as u64)?;
            let g = self.product_dev(&stream, (addr(&v, &stream), dl), Second::At(xa.0, xl))?;
            // T 2^c = y 2^(w+c) + D' X = y 2^(w+c) + G - X 2^(64 dl - 1).
            let z = self.combination(
                &stream,
                &[
                    Term { at: ya, shift: plan.w + plan.c_shift, subtract: false },
                    Term { at: (addr(&g, &stream), dl + xl), shift: 0, subtract: false },
                    Term { at: xa, shift: 64 * dl as u64 - 1, subtract: true },
                ],
            )?;
            let tl = plan.root_limbs + 1;
            let (t, tl) = self.shifted_down(&stream, (addr(&z, &stream), z.len()), plan.c_shift, tl)?;
            drop(z);
            // N - T^2: its low m limbs and their borrow; whether the limbs
            // above agree.
            let t2 = self.product_dev(&stream, (addr(&t, &stream), tl), Second::Square)?;
            if 2 * tl < m {
                return Err(GpuError::TooLarge);
            }
            let (low, words) = self.low_difference(&stream, (np, nn), (addr(&t2, &stream), 2 * tl), m)?;
            // T's buffer may hold a limb more than kept (`shifted_down`):
            // the first tl limbs come down.
            self.copy_from_device_into(&stream, &t, &mut t_out[..tl])?;
            t_out[tl..].fill(0);
            self.copy_from_device_into(&stream, &low, low_out)?;
            self.difference_found(&stream, &words)
        })
    }

    /// N - P (both at device addresses with their limb counts, each at
    /// least m limbs) plus 2^(64 m - 1), into a buffer whose low `m` limbs
    /// are the caller's to download, and three words for
    /// `difference_found`: the borrow out of N - P's first nn limbs, any
    /// bit set above the low m limbs of the sum or in P's limbs above
    /// N's, and the carry out of adding the bias. Where N - P is in
    /// [-2^(64 m - 1), 2^(64 m - 1)), and only there, the sum is below B^m
    /// with the borrow and the carry equal: the low limbs with their top
    /// bit flipped are then N - P as m-limb two's complement. (Comparing
    /// N's high limbs with P's instead refuses N - P = R >= 0 where P's
    /// low limbs plus R carry into them: every N whose low limbs are zeros,
    /// as mpf's square roots and quotients give.)
    pub(super) fn low_difference(&self, stream: &Arc<CudaStream>, (np, nn): (u64, usize), (pp, pn): (u64, usize), m: usize) -> Result<(CudaSlice<u64>, CudaSlice<u64>), GpuError> {
        if nn < m || pn < m || m == 0 {
            return Err(GpuError::TooLarge);
        }
        let words = stream.alloc_zeros::<u64>(3)?;
        let wa = addr(&words, stream);
        let f = stream.alloc_zeros::<u64>(nn)?;
        let fa = addr(&f, stream);
        self.addsub_dev(stream, true, fa, np, nn, pp, pn.min(nn), wa)?;
        let bias = self.copy_to_device(stream, &[1u64 << 63])?;
        let top = fa + 8 * (m - 1) as u64;
        self.addsub_dev(stream, false, top, top, nn - m + 1, addr(&bias, stream), 1, wa + 16)?;
        let flag = wa + 8;
        if nn > m {
            let (above, at) = ((nn - m) as u64, fa + 8 * m as u64);
            launch!(self, stream, any_low_bits, nn - m, &flag, &at, &above, &above, &0u32);
        }
        if pn > nn {
            let (above, at) = ((pn - nn) as u64, pp + 8 * nn as u64);
            launch!(self, stream, any_low_bits, pn - nn, &flag, &at, &above, &above, &0u32);
        }
        Ok((f, words))
    }

    /// `low_difference`'s words, downloaded.
    pub(super) fn difference_found(&self, stream: &Arc<CudaStream>, words: &CudaSlice<u64>) -> Result<Difference, GpuError> {
        let words = self.copy_from_device(stream, words)?;
        Ok(Difference { fits: words[0] == words[2] && words[1] == 0 })
    }

    /// The bits [from, from + count) of the `an` limbs at `ap`, the window's
    /// top bit flipped, in ceil(count / 64) limbs.
    pub(super) fn window(&self, stream: &Arc<CudaStream>, (ap, an): (u64, usize), from: u64, count: u64) -> Result<CudaSlice<u64>, GpuError> {
        let width = count.div_ceil(64) as usize;
        let r = stream.alloc_zeros::<u64>(width.max(1))?;
        let (rp, n) = (addr(&r, stream), an as u64);
        launch!(self, stream, window, width, &rp, &ap, &n, &from, &count, &1u32);
        Ok(r)
    }

    /// The sum of `terms` (each shifted left by its shift, added or
    /// subtracted in order), which the caller knows to be non-negative, in
    /// a buffer one limb longer than the longest shifted term.
    pub(super) fn combination(&self, stream: &Arc<CudaStream>, terms: &[Term]) -> Result<CudaSlice<u64>, GpuError> {
        let zl = terms.iter().map(|t| t.at.1 + (t.shift / 64) as usize + 1).max().unwrap_or(0) + 1;
        let z = stream.alloc_zeros::<u64>(zl)?;
        let za = addr(&z, stream);
        for (i, t) in terms.iter().enumerate() {
            let (whole, bits) = (t.shift / 64, (t.shift % 64) as u32);
            let len = t.at.1 + whole as usize + 1;
            let n = t.at.1 as u64;
            if i == 0 && !t.subtract {
                // z is zeros: the first term is shifted straight into it.
                launch_elementwise!(self, stream, shl, len, &za, &t.at.0, &n, &whole, &bits);
                continue;
            }
            let mut shifted = None;
            let at = if t.shift == 0 {
                t.at.0
            } else {
                let s = shifted.insert(stream.alloc_zeros::<u64>(len)?);
                let sa = addr(s, stream);
                launch_elementwise!(self, stream, shl, len, &sa, &t.at.0, &n, &whole, &bits);
                sa
            };
            let m = if t.shift == 0 { t.at.1 } else { len };
            self.addsub_dev(stream, t.subtract, za, za, zl, at, m, 0)?;
        }
        Ok(z)
    }

    /// floor(z / 2^bits) for the `zn` limbs at `zp`, in at most `keep` limbs
    /// (higher ones cut off), and that limb count.
    pub(super) fn shifted_down(&self, stream: &Arc<CudaStream>, (zp, zn): (u64, usize), bits: u64, keep: usize) -> Result<(CudaSlice<u64>, usize), GpuError> {
        let whole = (bits / 64) as usize;
        if whole >= zn {
            return Err(GpuError::TooLarge);
        }
        let keep = keep.min(zn - whole);
        // Read one limb past the kept ones, for the top limb's high bits.
        let n = (whole + keep + 1).min(zn);
        let r = stream.alloc_zeros::<u64>(n - whole)?;
        let (rp, nn, ww, b) = (addr(&r, stream), n as u64, whole as u64, (bits % 64) as u32);
        launch_elementwise!(self, stream, shr, n - whole, &rp, &zp, &nn, &ww, &b);
        Ok((r, keep))
    }
}
