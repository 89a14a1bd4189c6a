//! Exact products on the GPU: a number-theoretic transform over the prime
//! p = 2^64 - 2^32 + 1 with 16-bit coefficients (cuda/ntt.cu states the
//! exactness bound: the shorter operand up to 2^30 - 1 limbs, the product up
//! to 2^30 limbs; device memory is the practical limit, checked here).
//!
//! Each transform runs as two or three passes of up to 12 radix-2 stages in
//! shared memory (`passes`, cuda/ntt.cu's cugmp_ntt_pass); the first forward
//! pass cuts the limbs into coefficients itself. Twiddle tables are built once
//! per transform length and kept. The last carry pass is the add kernel's
//! parallel carry (src/gpu/linear.rs), on the device.

use super::{injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use std::sync::{Arc, Mutex};

const P: u64 = 0xffff_ffff_0000_0001;
/// A generator of the multiplicative group mod P.
const GENERATOR: u64 = 7;
/// Coefficients per limb (16 bits each).
const COEFS_PER_LIMB: usize = 4;

fn mul_mod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

fn pow_mod(mut b: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul_mod(r, b);
        }
        b = mul_mod(b, b);
        e >>= 1;
    }
    r
}

/// Transform length for a product of `limbs` limbs: no wrap-around.
pub fn transform_len(limbs: usize) -> usize {
    (COEFS_PER_LIMB * limbs).next_power_of_two().max(2)
}

/// Device bytes one product of `un` x `vn` limbs needs.
pub fn device_bytes(un: usize, vn: usize) -> usize {
    let n = transform_len(un + vn);
    // Two transforms, the folded limbs and their carries, the add kernel's
    // tile states (the twiddle tables are kept: `Tables`).
    8 * 2 * n + 8 * (un + vn) * 2 + 4 * (un + vn).div_ceil(1024)
}

/// Elements a block of cugmp_ntt_pass holds in shared memory (NTT_TILE_LOG).
pub(super) const TILE_LOG: u32 = 13;
const PASS_THREADS: u32 = 512;
/// Stages in the last forward pass (span 1 up: whole contiguous groups) and
/// in each other pass (at most 2^TILE_LOG / 4 elements a group, so a block
/// takes 4 consecutive residues: whole 32-byte sectors).
const LAST_PASS_MAX: u32 = 12;
const PASS_MAX: u32 = TILE_LOG - 2;

/// The forward transform's passes for length 2^log_n, in order, as
/// (log2 of the smallest span, stages). The inverse runs them in reverse.
pub fn passes(log_n: u32) -> Vec<(u32, u32)> {
    let last = log_n.min(LAST_PASS_MAX);
    let mut rest = log_n - last;
    let mut count = rest.div_ceil(PASS_MAX);
    let mut out = Vec::new();
    let mut span_log = log_n;
    while count > 0 {
        let k = rest.div_ceil(count);
        span_log -= k;
        out.push((span_log, k));
        rest -= k;
        count -= 1;
    }
    out.push((0, last));
    out
}

/// Twiddle tables of one transform length (cuda/ntt.cu, cugmp_ntt_tables).
struct Table {
    log_n: u32,
    h: u32,
    words: CudaSlice<u64>,
}

/// The tables built so far, one per transform length, kept for the life of
/// the context (2 * (2^11 + 2^(log_n/2 + 1)) words each: at most a few MiB).
#[derive(Default)]
pub(super) struct Tables(Mutex<Vec<Arc<Table>>>);

/// Largest operand the exactness bound allows (cuda/ntt.cu).
const MAX_SHORT_LIMBS: usize = (1 << 30) - 1;
const MAX_PRODUCT_LIMBS: usize = 1 << 30;

fn check_bounds(un: usize, vn: usize) -> Result<(), GpuError> {
    if un.min(vn) > MAX_SHORT_LIMBS || un + vn > MAX_PRODUCT_LIMBS {
        Err(GpuError::TooLarge)
    } else {
        Ok(())
    }
}

/// Device memory traffic of one product (un x vn limbs, or a square), in
/// bytes, as the kernels are written now: each pass reads and writes the
/// whole transform once, except that the first forward pass reads limbs
/// (twiddle-table reads, cache hits, not counted). For reporting against the
/// memory bandwidth.
pub fn bytes_moved(un: usize, vn: usize, squaring: bool) -> u64 {
    let n = transform_len(un + vn) as u64;
    let later_passes = passes(n.trailing_zeros()).len() as u64 - 1;
    let forward = |limbs: usize| 8 * limbs as u64 + 8 * n + later_passes * 16 * n;
    let forwards = if squaring { forward(un) } else { forward(un) + forward(vn) };
    let pointwise = if squaring { 16 * n } else { 24 * n };
    let inverse = (later_passes + 1) * 16 * n;
    let combine = 8 * n + 16 * (un + vn) as u64; // coefficients in, limbs and carries out
    let carry = 24 * (un + vn) as u64;
    forwards + pointwise + inverse + combine + carry
}

impl Gpu {
    /// `u * v` (both non-empty, any lengths), `u.len() + v.len()` limbs, the
    /// top one possibly zero. Passing the same slice twice squares: one
    /// forward transform.
    pub fn mul(&self, u: &[u64], v: &[u64]) -> Result<Vec<u64>, GpuError> {
        let (un, vn) = (u.len(), v.len());
        assert!(un > 0 && vn > 0, "mul takes non-empty operands");
        check_bounds(un, vn)?;
        let squaring = std::ptr::eq(u, v);
        super::guarded(|| {
            let stream = self.stream();
            let du = self.htod(&stream, u)?;
            let dv = if squaring { None } else { Some(self.htod(&stream, v)?) };
            let t = self.product_dev(&stream, &du, un, dv.as_ref().map(|d| (d, vn)))?;
            self.dtoh(&stream, &t)
        })
    }

    /// The product of device operands `u` (`un` limbs) and `v` (or `u`
    /// squared when `v` is None), `un + vn` limbs on the device.
    pub(super) fn product_dev(&self, stream: &Arc<CudaStream>, u: &CudaSlice<u64>, un: usize, v: Option<(&CudaSlice<u64>, usize)>) -> Result<CudaSlice<u64>, GpuError> {
        let vn = v.map_or(un, |(_, vn)| vn);
        check_bounds(un, vn)?;
        let (free, _) = cudarc::driver::result::mem_get_info()?;
        // Leave a tenth of the free memory to others.
        if device_bytes(un, vn) > free / 10 * 9 {
            return Err(GpuError::TooLarge);
        }
        let _claim = super::reserve(device_bytes(un, vn))?;
        injected(Fault::GpuOom, "gpu-oom")?;
        let n = transform_len(un + vn);
        let n_inv = pow_mod(n as u64, P - 2);
        injected(Fault::GpuLaunch, "gpu-launch")?;
        let table = self.table(stream, n.trailing_zeros())?;

        let mut a = self.transform(stream, &table, Some((u, un)), None)?;
        let nn = n as u64;
        match v {
            Some((v, vn)) => {
                let b = self.transform(stream, &table, Some((v, vn)), None)?;
                launch!(self, stream, ntt_pointwise, n, &mut a, &b, &nn, &n_inv);
            }
            None => launch!(self, stream, ntt_pointwise_sqr, n, &mut a, &nn, &n_inv),
        }
        let a = self.transform(stream, &table, None, Some(a))?;
        let limbs = (un + vn) as u64;
        let mut t = stream.alloc_zeros::<u64>(un + vn)?;
        let mut c = stream.alloc_zeros::<u64>(un + vn)?;
        launch!(self, stream, ntt_combine16, un + vn, &mut t, &mut c, &a, &limbs);
        self.add_in_place(stream, &mut t, &c, un + vn)?;
        Ok(t)
    }

    /// The twiddle tables for length 2^log_n, built on first use.
    fn table(&self, stream: &Arc<CudaStream>, log_n: u32) -> Result<Arc<Table>, GpuError> {
        let mut tables = self.tables.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.iter().find(|t| t.log_n == log_n) {
            return Ok(t.clone());
        }
        let h = log_n.div_ceil(2);
        let len = 2 * 2048 + 2 * (1usize << h) + 2 * (1usize << (log_n - h));
        let mut words = stream.alloc_zeros::<u64>(len)?;
        let w = pow_mod(GENERATOR, (P - 1) >> log_n);
        let r12 = pow_mod(GENERATOR, (P - 1) >> 12);
        let (w_inv, r12_inv) = (pow_mod(w, P - 2), pow_mod(r12, P - 2));
        launch!(self, stream, ntt_tables, len, &mut words, &w, &w_inv, &r12, &r12_inv, &log_n, &h);
        let table = Arc::new(Table { log_n, h, words });
        tables.push(table.clone());
        Ok(table)
    }

    /// Forward transform of limbs `x` (`Some((limbs, count))`: cut into
    /// coefficients by the first pass; the result is bit-reversed), or the
    /// inverse of `coefs` (bit-reversed in, natural order out), in place.
    fn transform(&self, stream: &Arc<CudaStream>, table: &Table, x: Option<(&CudaSlice<u64>, usize)>, coefs: Option<CudaSlice<u64>>) -> Result<CudaSlice<u64>, GpuError> {
        let log_n = table.log_n;
        let n = 1usize << log_n;
        let mut a = match coefs {
            Some(a) => a,
            None => stream.alloc_zeros::<u64>(n)?,
        };
        let inverse = x.is_none() as u32;
        let mut plan = passes(log_n);
        if inverse == 1 {
            plan.reverse();
        }
        let tile = 1usize << log_n.min(TILE_LOG);
        let cfg = LaunchConfig { grid_dim: ((n / tile) as u32, 1, 1), block_dim: (PASS_THREADS, 1, 1), shared_mem_bytes: 8 * tile as u32 };
        for (i, &(log_s, k)) in plan.iter().enumerate() {
            // The first forward pass reads the limbs; every other pass reads a.
            let (limbs, xn) = match x {
                Some((limbs, xn)) if i == 0 => (super::linear::addr(limbs, stream), xn as u64),
                _ => (0u64, 0u64),
            };
            launch_with!(self, stream, ntt_pass, cfg, &mut a, &limbs, &xn, &table.words, &log_n, &table.h, &log_s, &k, &inverse);
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_have_the_right_order() {
        for log in [1u32, 5, 23, 32] {
            let n = 1u64 << log;
            let w = pow_mod(GENERATOR, (P - 1) / n);
            assert_eq!(pow_mod(w, n), 1);
            assert_ne!(pow_mod(w, n / 2), 1, "w must be a primitive root of order 2^{log}");
        }
    }

    #[test]
    fn passes_cover_every_stage_once() {
        for log_n in 1..=32u32 {
            let plan = passes(log_n);
            // Spans from 2^(log_n - 1) down to 1, each stage in exactly one pass.
            let mut top = log_n;
            for &(log_s, k) in &plan {
                assert!(k >= 1 && log_s + k == top, "log_n {log_n}: {plan:?}");
                assert!(k <= if log_s == 0 { LAST_PASS_MAX } else { PASS_MAX });
                // A block of a pass with a span above 1 takes at least 4 residues.
                assert!(log_s == 0 || log_s >= 2);
                top = log_s;
            }
            assert_eq!(top, 0);
            assert!(plan.len() <= 3 || log_n > 34);
        }
    }

    #[test]
    fn transform_has_no_wraparound() {
        for limbs in [1usize, 2, 3, 1000, 2_000_000] {
            assert!(transform_len(limbs) >= COEFS_PER_LIMB * limbs);
        }
    }
}
