//! A quotient on device-resident numbers: the last Newton steps for the
//! divisor's inverse, the quotient's estimate from the dividend's top
//! limbs, and the low limbs of the remainder it leaves, at the positions
//! src/algorithms/quotient.rs works out and passes down
//! ([`QuotientPlan`]; the error bounds live there). Every product is the
//! NTT's (src/gpu/ntt), every sum, shift and bit window between them
//! cuda/linear.cu's, through the helpers the square root uses
//! (src/gpu/root.rs). N and D go up once; the estimate and the
//! remainder's low limbs come down once.
//!
//! Nothing here decides exactness: the caller takes the estimate only
//! where the remainder it leaves is in [0, D) after at most a few
//! corrections by D. A step's E = 2^(dK+k) - D_top X_k is signed; its
//! window's flipped top bit keeps it natural (src/gpu/root.rs's module doc).

use super::device::{addr, guarded, reserve, Gpu, GpuError};
use super::ntt::Second;
use super::root::{Difference, Term};

/// One Newton step for the inverse, X_k to X_K, as
/// src/algorithms/quotient.rs's `ReciprocalStep` defines it: P = D_top
/// X_k with D_top = D's limbs from `d_from`; v = the bits [from, from +
/// count) of P, top bit flipped; G = X_k v; X_K = floor((X_k 2^up +
/// X_k 2^(count-1) - G) / 2^down) in `keep` limbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReciprocalStep {
    pub d_from: usize,
    pub from: u64,
    pub count: u64,
    pub up: u64,
    pub down: u64,
    pub keep: usize,
}

/// A quotient's positions, all from src/algorithms/quotient.rs.
pub struct QuotientPlan<'a> {
    /// The dividend N and the divisor D (top limb nonzero).
    pub n: &'a [u64],
    pub d: &'a [u64],
    /// The inverse at the first step's precision.
    pub x: &'a [u64],
    pub steps: &'a [ReciprocalStep],
    /// The estimate Q = floor(N[top_from..] X / 2^q_shift), in
    /// `q_limbs` limbs.
    pub top_from: usize,
    pub q_shift: u64,
    pub q_limbs: usize,
}

impl Gpu {
    /// The quotient's estimate Q into `q_out` (q_limbs limbs) and N - Q D +
    /// 2^(64 m - 1) modulo B^m into `low_out` (m = its length, at most N's
    /// limbs; src/gpu/root.rs's `low_difference`), by
    /// `plan` (see the module doc). The caller's rooms, whose pages are in
    /// memory already.
    pub fn quotient(&self, plan: &QuotientPlan<'_>, q_out: &mut [u64], low_out: &mut [u64]) -> Result<Difference, GpuError> {
        let (nn, dn, m) = (plan.n.len(), plan.d.len(), low_out.len());
        if nn < m || dn == 0 || plan.x.is_empty() || plan.q_limbs == 0 || q_out.len() != plan.q_limbs || plan.top_from >= nn {
            return Err(GpuError::TooLarge);
        }
        let _busy = self.queue().busy.enter(nn);
        guarded(|| {
            let stream = self.stream();
            // N, D and the sums' buffers; each product claims its own.
            let _claim = reserve(8 * (2 * nn + 2 * dn))?;
            let dev_n = self.copy_to_device(&stream, plan.n)?;
            let dev_d = self.copy_to_device(&stream, plan.d)?;
            let (np, dp) = (addr(&dev_n, &stream), addr(&dev_d, &stream));
            let mut x = self.copy_to_device(&stream, plan.x)?;
            let mut xl = plan.x.len();
            for s in plan.steps {
                if s.d_from >= dn || s.count == 0 {
                    return Err(GpuError::TooLarge);
                }
                let xa = (addr(&x, &stream), xl);
                let p = self.product_dev(&stream, (dp + 8 * s.d_from as u64, dn - s.d_from), Second::At(xa.0, xl))?;
                let v = self.window(&stream, (addr(&p, &stream), dn - s.d_from + xl), s.from, s.count)?;
                drop(p);
                let vl = s.count.div_ceil(64) as usize;
                let g = self.product_dev(&stream, xa, Second::At(addr(&v, &stream), vl))?;
                drop(v);
                let z = self.combination(
                    &stream,
                    &[
                        Term { at: xa, shift: s.up, subtract: false },
                        Term { at: xa, shift: s.count - 1, subtract: false },
                        Term { at: (addr(&g, &stream), xl + vl), shift: 0, subtract: true },
                    ],
                )?;
                drop(g);
                (x, xl) = self.shifted_down(&stream, (addr(&z, &stream), z.len()), s.down, s.keep)?;
            }
            let nx = self.product_dev(&stream, (np + 8 * plan.top_from as u64, nn - plan.top_from), Second::At(addr(&x, &stream), xl))?;
            drop(x);
            let (q, ql) = self.shifted_down(&stream, (addr(&nx, &stream), nx.len()), plan.q_shift, plan.q_limbs)?;
            drop(nx);
            let qd = self.product_dev(&stream, (addr(&q, &stream), ql), Second::At(dp, dn))?;
            let (low, words) = self.low_difference(&stream, (np, nn), (addr(&qd, &stream), ql + dn), m)?;
            drop(qd);
            // Q's buffer may hold a limb more than kept (`shifted_down`),
            // and fewer where N X has fewer: the first ql come down.
            self.copy_from_device_into(&stream, &q, &mut q_out[..ql])?;
            q_out[ql..].fill(0);
            self.copy_from_device_into(&stream, &low, low_out)?;
            self.difference_found(&stream, &words)
        })
    }
}
