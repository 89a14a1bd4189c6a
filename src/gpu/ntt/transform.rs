//! A transform on the device: its twiddle tables (cuda/ntt.cu,
//! cugmp_ntt_tables; built once per length and kept for the life of the
//! context), the forward transform (the radix-3 or radix-5 step or else the
//! first pass cuts the limbs into coefficients), a product's turn (the last
//! forward pass of one operand, the pointwise product with the other's
//! transform and the first inverse pass, in one pass: cuda/ntt_pass.cuh,
//! NTT_TURN) and the inverse's other passes, and the way back to limbs: the
//! inverse's radix-3 or radix-5 step where there is one, the CRT and the
//! fold (cugmp_ntt_combine3 and cugmp_ntt_combine5 do all three,
//! cugmp_ntt_combine the last two), then the add kernel's carries; a wide
//! product on 2^k points in one kernel with its carries
//! (cugmp_ntt_combine_wide_carry).

use super::plan::{carries_in_combine, one_pass, pass_threads, tile_bytes, Shape, MAX_PAIRS, PRIMES, ROOT_LOG};
use crate::gpu::device::{addr, Gpu, GpuError};
use crate::gpu::linear::LINEAR_TILE;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use std::sync::{Arc, Mutex};

/// Threads of cugmp_ntt_combine_small's one block (NTT_SMALL_THREADS), and
/// the most limbs it folds (NTT_SMALL_RUN a thread).
const SMALL_COMBINE_THREADS: u32 = 1024;
pub(super) const SMALL_COMBINE_LIMBS: usize = SMALL_COMBINE_THREADS as usize * 8;
/// Threads of cugmp_ntt_combine_wide_carry's blocks (NTT_CARRY_THREADS), a
/// run of 8 limbs each: the add kernel's tile, LINEAR_TILE.
const CARRY_THREADS: u32 = 256;

/// What a pass does (cugmp_ntt_pass's `kind`; cuda/ntt_pass.cuh, NTT_FORWARD,
/// NTT_INVERSE, NTT_TURN).
const FORWARD: u32 = 0;
const INVERSE: u32 = 1;
const TURN: u32 = 2;

/// A forward transform but its last pass (`forward_unfinished_at`), which a
/// product's turn takes (`turn_at`): the operand's limbs (device address,
/// count) where no pass ran yet, the turn's pass being the transform's
/// first; (0, 0) otherwise.
pub(super) struct Unfinished(u64, u64);

/// Which of a transform's primes a launch of its passes takes: all of them
/// in one grid, or one prime's blocks alone (a lane's: src/gpu/ntt/product.rs,
/// `transforms_in_lanes`).
#[derive(Clone, Copy)]
pub(super) enum Primes {
    All,
    One(usize),
}

/// Twiddle tables of one transform length and set of primes (cuda/ntt.cu,
/// cugmp_ntt_tables), one a prime.
pub(super) struct Table {
    pub(super) shape: Shape,
    h: u32,
    words: CudaSlice<u32>,
}

/// Words of one prime's table (NTT_TABLE_STRIDE: rounded up to four, so
/// that each prime's stage roots are 16-byte aligned).
fn table_len(shape: Shape, h: u32) -> usize {
    let powers = 2 * (1usize << h) + 2 * (1usize << (shape.log_n - h));
    // The stage roots and their quotients, both directions, in two layouts
    // (NTT_ROOT_WORDS).
    let base = 8 * (1usize << ROOT_LOG) + powers + 1;
    (base + if shape.radix == 1 { 0 } else { powers }).next_multiple_of(4)
}

/// The tables built so far, one per transform length, kept for the life of
/// the context (3 * (2^17 + 2^(log_n/2 + 2)) words each: at most a few MiB).
#[derive(Default)]
pub(in crate::gpu) struct Tables(Mutex<Vec<Arc<Table>>>);

impl Gpu {
    /// The `limbs` limbs of a product from its inverse passes' output `a`
    /// (`turn_at`, `inverse_passes_at`): the inverse's radix-3 step if any, the CRT and
    /// the fold into limbs (combine kernel), then the carries (add kernel).
    pub(super) fn to_limbs(&self, stream: &Arc<CudaStream>, table: &Table, a: &CudaSlice<u32>, limbs: usize) -> Result<CudaSlice<u64>, GpuError> {
        self.to_limbs_with(stream, table, a, limbs, false)
    }

    /// `to_limbs`, or with `wrap` the `limbs` limbs of a product mod
    /// B^limbs - 1 from its cyclic convolution (cuda/ntt.cu,
    /// ntt_combine_at): t + c, whose carry out (in one more limb of t) is
    /// worth 1 and goes back in at the bottom. t + c < 2 B^limbs, so after
    /// that the sum is below B^limbs: no carry out of the second add.
    pub(super) fn to_limbs_with(&self, stream: &Arc<CudaStream>, table: &Table, a: &CudaSlice<u32>, limbs: usize, wrap: bool) -> Result<CudaSlice<u64>, GpuError> {
        if carries_in_combine(table.shape) && !wrap {
            return self.to_limbs_wide(stream, table, a, limbs);
        }
        // The combine kernel writes every limb of both; the add kernel the
        // carry limb.
        let t = unsafe { stream.alloc::<u64>(limbs + wrap as usize) }?;
        let c = unsafe { stream.alloc::<u64>(limbs) }?;
        let (tp, cp) = (addr(&t, stream), addr(&c, stream));
        self.combine_at(stream, table, a.device_ptr(stream).0, (tp, cp), limbs, wrap)?;
        if wrap {
            let top = tp + 8 * limbs as u64;
            self.addsub_dev(stream, false, tp, tp, limbs, cp, limbs, top)?;
            self.addsub_dev(stream, false, tp, tp, limbs, top, 1, 0)?;
        } else {
            self.addsub_dev(stream, false, tp, tp, limbs, cp, limbs, 0)?;
        }
        Ok(t)
    }

    /// `to_limbs` of a whole product on the wide sets' transforms of 2^k
    /// points in one kernel: the CRT, the fold and the carries
    /// (cuda/ntt.cu, cugmp_ntt_combine_wide_carry), with the add kernel's
    /// scan state and tiles, for transforms of whole tiles.
    fn to_limbs_wide(&self, stream: &Arc<CudaStream>, table: &Table, a: &CudaSlice<u32>, limbs: usize) -> Result<CudaSlice<u64>, GpuError> {
        let r = unsafe { stream.alloc::<u64>(limbs) }?;
        let (rp, ap) = (addr(&r, stream), a.device_ptr(stream).0);
        let (log_n, n) = (table.shape.log_n, limbs as u64);
        let cfg = LaunchConfig { grid_dim: (limbs.div_ceil(LINEAR_TILE) as u32, 1, 1), block_dim: (CARRY_THREADS, 1, 1), shared_mem_bytes: 0 };
        self.with_scan_state(stream, limbs, |state, epoch| {
            launch_with!(self, stream, ntt_combine_wide_carry, cfg, &rp, &ap, &log_n, &n, &state, &epoch);
            Ok(())
        })?;
        Ok(r)
    }

    /// The end of the inverse at device address `a` (its passes done,
    /// `turn_at`, `inverse_passes_at`), the CRT and the fold into `limbs` limbs at `t`
    /// plus the carries at `c` (cuda/ntt.cu, ntt_combine_at): the product is
    /// t + c. A transform of length 3 * 2^k or 5 * 2^k takes its radix-3 or
    /// radix-5 step in the same kernel (ntt_combine_radix_at), a column pair
    /// a thread.
    pub(super) fn combine_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, (t, c): (u64, u64), limbs: usize, wrap: bool) -> Result<(), GpuError> {
        let (n, wrap) = (limbs as u64, wrap as u32);
        let (log_n, pairs) = (table.shape.log_n, 1usize << (table.shape.log_n - 1));
        if table.shape.wide {
            match table.shape.radix {
                5 => launch!(self, stream, ntt_combine5_wide, pairs, &t, &c, &a, &table.words, &log_n, &table.h, &n, &wrap),
                3 => launch!(self, stream, ntt_combine3_wide, pairs, &t, &c, &a, &table.words, &log_n, &table.h, &n, &wrap),
                _ => launch!(self, stream, ntt_combine_wide, pairs, &t, &c, &a, &table.words, &log_n, &table.h, &n, &wrap),
            }
        } else if table.shape.radix == 3 {
            launch!(self, stream, ntt_combine3, pairs, &t, &c, &a, &table.words, &log_n, &table.h, &n, &wrap);
        } else if table.shape.radix == 5 {
            launch!(self, stream, ntt_combine5, pairs, &t, &c, &a, &table.words, &log_n, &table.h, &n, &wrap);
        } else {
            let n_len = table.shape.len() as u64;
            launch!(self, stream, ntt_combine, limbs, &t, &c, &a, &n_len, &n, &wrap);
        }
        Ok(())
    }

    /// `combine_at` and the carries of a product of at most
    /// SMALL_COMBINE_LIMBS limbs in one block (cuda/ntt.cu,
    /// cugmp_ntt_combine_small): its `limbs` limbs into `r`, device memory or
    /// pinned host memory mapped for the device.
    pub(super) fn combine_small_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, r: u64, limbs: usize) -> Result<(), GpuError> {
        assert!(limbs <= SMALL_COMBINE_LIMBS, "combine_small_at takes at most SMALL_COMBINE_LIMBS limbs");
        // Its CRT is the first set of primes' (the small products' graphs
        // keep 2^k and 3 * 2^k points, plan.rs `product_shape`).
        assert!(table.shape.radix != 5 && !table.shape.wide, "combine_small_at takes transforms of 2^k and 3 * 2^k points");
        if table.shape.radix == 3 {
            self.radix_step(stream, table, a, 0, 0, true)?;
        }
        let (n_len, n) = (table.shape.len() as u64, limbs as u64);
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (SMALL_COMBINE_THREADS, 1, 1), shared_mem_bytes: 0 };
        launch_with!(self, stream, ntt_combine_small, cfg, &r, &a, &n_len, &n);
        Ok(())
    }

    /// The twiddle tables for transforms of `shape`, built on first use.
    pub(super) fn table(&self, stream: &Arc<CudaStream>, shape: Shape) -> Result<Arc<Table>, GpuError> {
        let mut tables = self.tables.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = tables.iter().find(|t| t.shape == shape) {
            return Ok(t.clone());
        }
        let h = shape.log_n.div_ceil(2);
        let len = shape.primes() * table_len(shape, h);
        // The kernel writes every word.
        let mut words = unsafe { stream.alloc::<u32>(len) }?;
        let wide = shape.wide as u32;
        launch!(self, stream, ntt_tables, len, &mut words, &shape.log_n, &h, &shape.radix, &wide);
        // Other queues' streams use the table as soon as it is listed: it is
        // finished first (once a shape).
        stream.synchronize()?;
        let table = Arc::new(Table { shape, h, words });
        tables.push(table.clone());
        Ok(table)
    }

    /// The forward transform of the `xn` limbs at device address `limbs`
    /// (radix blocks, each bit-reversed), cut into coefficients by the
    /// radix-3 or radix-5 step or else the first pass.
    pub(super) fn forward(&self, stream: &Arc<CudaStream>, table: &Table, limbs: u64, xn: usize) -> Result<CudaSlice<u32>, GpuError> {
        let a = self.transform_words(stream, table)?;
        self.forward_at(stream, table, a.device_ptr(stream).0, limbs, xn)?;
        Ok(a)
    }

    /// `forward` into the primes * shape.len() words at device address `a`.
    pub(super) fn forward_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: usize) -> Result<(), GpuError> {
        self.forward_passes_at(stream, table, a, limbs, xn as u64, false, Primes::All).map(|_| ())
    }

    /// One prime's `forward_at`, its radix step, if any, made already
    /// (`forward_radix_at`).
    pub(super) fn forward_prime_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: usize, prime: usize) -> Result<(), GpuError> {
        self.forward_passes_at(stream, table, a, limbs, xn as u64, false, Primes::One(prime)).map(|_| ())
    }

    /// The forward transform's radix step, all primes, where its length has
    /// one: what the transforms of one prime each (`Primes::One`) need
    /// first.
    pub(super) fn forward_radix_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: usize) -> Result<(), GpuError> {
        if table.shape.radix != 1 {
            self.radix_step(stream, table, a, limbs, xn as u64, false)?;
        }
        Ok(())
    }

    /// `forward` but its last pass, which the product's turn takes
    /// (`turn_at`): one operand's transform in a product, the other one
    /// finished (or none, for a square).
    pub(super) fn forward_unfinished(&self, stream: &Arc<CudaStream>, table: &Table, limbs: u64, xn: usize) -> Result<(CudaSlice<u32>, Unfinished), GpuError> {
        let a = self.transform_words(stream, table)?;
        let unfinished = self.forward_unfinished_at(stream, table, a.device_ptr(stream).0, limbs, xn)?;
        Ok((a, unfinished))
    }

    /// `forward_unfinished` into the primes * shape.len() words at device
    /// address `a`.
    pub(super) fn forward_unfinished_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: usize) -> Result<Unfinished, GpuError> {
        self.forward_unfinished_of(stream, table, a, limbs, xn, Primes::All)
    }

    /// `forward_unfinished_at` for `primes`; one prime's transform has had
    /// its radix step, if any, already (`forward_radix_at`).
    pub(super) fn forward_unfinished_of(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: usize, primes: Primes) -> Result<Unfinished, GpuError> {
        let count = self.forward_passes_at(stream, table, a, limbs, xn as u64, true, primes)?;
        // The turn is the transform's first pass: it cuts the limbs.
        let uncut = table.shape.radix == 1 && count == 0;
        Ok(if uncut { Unfinished(limbs, xn as u64) } else { Unfinished(0, 0) })
    }

    /// Words for one transform, all primes: the radix step or the first pass
    /// writes every one.
    pub(super) fn transform_words(&self, stream: &Arc<CudaStream>, table: &Table) -> Result<CudaSlice<u32>, GpuError> {
        Ok(unsafe { stream.alloc::<u32>(table.shape.primes() * table.shape.len()) }?)
    }

    /// The forward transform's radix step, if any (of all primes only: one
    /// prime's had it already, `forward_radix_at`), and its passes but the
    /// last where `unfinished`, at device address `a`; returns how many
    /// passes ran.
    fn forward_passes_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: u64, unfinished: bool, primes: Primes) -> Result<usize, GpuError> {
        let plan = table.shape.passes();
        let count = plan.len() - unfinished as usize;
        if let Primes::All = primes {
            self.forward_radix_at(stream, table, a, limbs, xn as usize)?;
        }
        // The radix step cut the limbs, or else the first pass does.
        let first = if table.shape.radix != 1 { (0, 0, 0) } else { (limbs, xn, 0) };
        self.launch_passes(stream, table, a, FORWARD, &plan[..count], first, primes)?;
        Ok(count)
    }

    /// The radix-3 or radix-5 step over all the primes (cuda/ntt.cu,
    /// cugmp_ntt_radix3 and cugmp_ntt_radix5, and their `_wide` kernels for
    /// the wide sets).
    fn radix_step(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, limbs: u64, xn: u64, inverse: bool) -> Result<(), GpuError> {
        let inverse = inverse as u32;
        let (log_n, columns) = (table.shape.log_n, 1usize << table.shape.log_n);
        match (table.shape.radix, table.shape.wide) {
            (5, false) => launch!(self, stream, ntt_radix5, columns, &a, &limbs, &xn, &table.words, &log_n, &table.h, &inverse),
            (5, true) => launch!(self, stream, ntt_radix5_wide, columns, &a, &limbs, &xn, &table.words, &log_n, &table.h, &inverse),
            (_, false) => launch!(self, stream, ntt_radix3, columns, &a, &limbs, &xn, &table.words, &log_n, &table.h, &inverse),
            (_, true) => launch!(self, stream, ntt_radix3_wide, columns, &a, &limbs, &xn, &table.words, &log_n, &table.h, &inverse),
        }
        Ok(())
    }

    /// The sum of the pointwise products `x[k] * y[k]` of forward
    /// transforms at those device addresses (at most MAX_PAIRS; `twice[k]`
    /// counts the k-th twice), into the transform at
    /// `acc` (cuda/ntt.cu, cugmp_ntt_sum): `inverse_passes_at(acc)` and
    /// the combine then give the sum of their products. The caller keeps the sum exact
    /// (plan.rs, `sums`).
    pub(super) fn sum_of_products_at(&self, stream: &Arc<CudaStream>, table: &Table, acc: u64, pairs: &[(u64, u64, bool)]) -> Result<(), GpuError> {
        assert!(!pairs.is_empty() && pairs.len() <= MAX_PAIRS, "sum_of_products_at takes 1 to MAX_PAIRS products");
        // Sums of products are the narrow sets' (plan.rs, `pairs_a_sum`).
        assert!(!table.shape.wide, "sum_of_products_at takes the narrow sets");
        // NttPairs: the x pointers, then the y pointers (unused ones null).
        let mut at = [0u64; 2 * MAX_PAIRS];
        let mut twice = 0u32;
        for (k, &(x, y, two)) in pairs.iter().enumerate() {
            (at[k], at[MAX_PAIRS + k]) = (x, y);
            twice |= (two as u32) << k;
        }
        let (log_n, radix, count) = (table.shape.log_n, table.shape.radix, pairs.len() as u32);
        let mut cfg = self.grid_for(table.shape.len());
        cfg.grid_dim.1 = PRIMES as u32;
        // The sum applies the inverse's scale where the inverse is one
        // plain pass; otherwise the inverse's last pass does (cuda/ntt.cu).
        let scaled = one_pass(log_n) as u32;
        launch_with!(self, stream, ntt_sum, cfg, &acc, &at, &count, &twice, &table.words, &log_n, &table.h, &radix, &scaled);
        Ok(())
    }

    /// A product's turn at device address `a`, whose forward transform is
    /// `unfinished` (`forward_unfinished_at`): its last forward pass, the
    /// pointwise product with the forward transform at `b` (`b` = `a`: the
    /// square), scaled for the inverse, and the inverse's first pass, in one
    /// pass (cuda/ntt_pass.cuh, NTT_TURN); then the inverse's other passes
    /// (natural order out), all in place at `a`. A transform of length 3 *
    /// 2^k or 5 * 2^k still needs its radix step, which the combine takes
    /// (`combine_at`, `combine_small_at`), so only they may read the result.
    pub(super) fn turn_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, unfinished: Unfinished, b: u64) -> Result<(), GpuError> {
        self.turn_of(stream, table, a, unfinished, b, Primes::All)
    }

    /// `turn_at` for `primes`.
    pub(super) fn turn_of(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, unfinished: Unfinished, b: u64, primes: Primes) -> Result<(), GpuError> {
        let mut plan = table.shape.passes();
        plan.reverse();
        let Unfinished(limbs, xn) = unfinished;
        self.launch_passes(stream, table, a, TURN, &plan[..1], (limbs, xn, b), primes)?;
        self.launch_passes(stream, table, a, INVERSE, &plan[1..], (0, 0, 0), primes)
    }

    /// The inverse passes of a scaled sum of pointwise products at device
    /// address `a` (`sum_of_products_at`), in place; the radix step, if
    /// any, is the combine's (`turn_at`).
    pub(super) fn inverse_passes_at(&self, stream: &Arc<CudaStream>, table: &Table, a: u64) -> Result<(), GpuError> {
        let mut plan = table.shape.passes();
        plan.reverse();
        self.launch_passes(stream, table, a, INVERSE, &plan, (0, 0, 0), Primes::All)
    }

    /// Launch `plan`'s passes (log2 of the smallest span, stages) of the
    /// length-2^log_n transforms over `a` (all the primes, all radix
    /// blocks), each of `kind`; the first gets `first` = (limbs, limb count,
    /// b) (cuda/ntt.cu, cugmp_ntt_pass), the others read `a` alone. A pass
    /// of the wide sets that reads limbs is cugmp_ntt_pass_wide's. Each
    /// launch takes `primes`' blocks: all of them, or one prime's.
    fn launch_passes(&self, stream: &Arc<CudaStream>, table: &Table, a: u64, kind: u32, plan: &[(u32, u32)], first: (u64, u64, u64), primes: Primes) -> Result<(), GpuError> {
        let (log_n, radix) = (table.shape.log_n, table.shape.radix);
        let log_t = table.shape.tile_log();
        let tile = 1usize << log_t;
        let blocks = ((1usize << log_n) / tile) as u32;
        let threads = pass_threads(log_t);
        let wide = table.shape.wide as u32;
        // The grid's y is prime * radix + radix block (cuda/ntt.cu).
        let (ys, first_y) = match primes {
            Primes::All => (table.shape.primes() as u32 * radix, 0),
            Primes::One(p) => (radix, p as u32 * radix),
        };
        for (i, &(log_s, k)) in plan.iter().enumerate() {
            let cfg = LaunchConfig { grid_dim: (blocks, ys, 1), block_dim: (threads, 1, 1), shared_mem_bytes: tile_bytes(log_t, log_s == 0) };
            let (limbs, xn, b) = if i == 0 { first } else { (0, 0, 0) };
            if wide != 0 && limbs != 0 {
                launch_with!(self, stream, ntt_pass_wide, cfg, &a, &limbs, &xn, &b, &table.words, &log_n, &table.h, &log_t, &log_s, &k, &kind, &radix, &wide, &first_y);
            } else {
                launch_with!(self, stream, ntt_pass, cfg, &a, &limbs, &xn, &b, &table.words, &log_n, &table.h, &log_t, &log_s, &k, &kind, &radix, &wide, &first_y);
            }
        }
        Ok(())
    }
}
