//! Modular exponentiation of many independent items at once
//! (cuda/powm.cu): odd moduli of up to 512 limbs (32768 bits), Montgomery
//! multiplication with a fixed window; below [`BLOCK_FROM`] limbs one
//! thread an item, from it one block an item and a thread a limb. The
//! items of one call share a limb count `L` (one of [`POWM_LIMBS`]); the
//! layer above groups a batch by it, reduces each base, computes R^2 mod m
//! (R = 2^(64 L)) and, for the block kernels, -m^-1 mod R, and leaves every
//! other case (even or unit moduli, exponents <= 0) to GMP.

use super::device::{guarded, injected, Gpu, GpuError};
use crate::config::Fault;
use cudarc::driver::{LaunchConfig, PushKernelArg};

/// The limb counts the kernels are built for (POWM_KERNEL and
/// POWM_BLOCK_KERNEL in cuda/powm.cu).
pub(crate) const POWM_LIMBS: [usize; 8] = [4, 8, 16, 32, 64, 128, 256, 512];
/// The limb count from which an item takes a block of its own (cuda/powm.cu,
/// `powm_block_item`).
pub(crate) const BLOCK_FROM: usize = 64;

/// Shared memory of a block item of `l` limbs (POWM_BLOCK_WORDS in
/// cuda/powm.cu).
pub fn block_shared_bytes(l: usize) -> usize {
    8 * (31 * l + 5)
}
/// Threads a block of the powm kernels: each keeps its window's table of
/// 16 L limbs in local memory.
const POWM_THREADS: u32 = 64;

/// The kernels' limb count for a modulus of `limbs` limbs, if any.
pub fn powm_limbs(limbs: usize) -> Option<usize> {
    POWM_LIMBS.iter().copied().find(|&l| l >= limbs)
}

/// Items of one limb count `l`, item-major: `l` limbs each of the base
/// (reduced mod m), the odd modulus and R^2 mod m; the exponents
/// (positive) concatenated, item i's at `exp_at[i]`, `exp_len[i]` limbs
/// with its top limb nonzero; for the block kernels (`l >= BLOCK_FROM`)
/// also -m^-1 mod R, `l` limbs an item (else empty).
pub struct PowmItems<'a> {
    pub l: usize,
    pub base: &'a [u64],
    pub modulus: &'a [u64],
    pub r2: &'a [u64],
    pub exp: &'a [u64],
    pub exp_at: &'a [u64],
    pub exp_len: &'a [u64],
    pub ninv: &'a [u64],
}

impl Gpu {
    /// `base^exp mod m` of every item, `l` limbs each, item-major.
    pub fn powm_odd(&self, items: &PowmItems) -> Result<Vec<u64>, GpuError> {
        guarded(|| {
            let (l, n) = (items.l, items.exp_len.len());
            let f = match l {
                4 => &self.kernels.powm_4,
                8 => &self.kernels.powm_8,
                16 => &self.kernels.powm_16,
                32 => &self.kernels.powm_32,
                64 if l < BLOCK_FROM => &self.kernels.powm_64,
                64 => &self.kernels.powm_block_64,
                128 => &self.kernels.powm_block_128,
                256 => &self.kernels.powm_block_256,
                512 => &self.kernels.powm_block_512,
                _ => return Err(GpuError::TooLarge),
            };
            if n == 0 {
                return Ok(Vec::new());
            }
            let block = l >= BLOCK_FROM;
            let parts: &[&[u64]] = if block { &[items.base, items.modulus, items.r2, items.ninv] } else { &[items.base, items.modulus, items.r2] };
            for part in parts {
                assert_eq!(part.len(), n * l, "powm_odd: an operand array of the wrong length");
            }
            injected(Fault::GpuLaunch, "gpu-launch")?;
            let stream = self.stream();
            let _claim = super::device::reserve(8 * (5 * n * l + items.exp.len() + 2 * n) + 64)?;
            let up = |x: &[u64]| self.copy_to_device(&stream, x);
            let (base, modulus, r2, exp, at, len) = (up(items.base)?, up(items.modulus)?, up(items.r2)?, up(items.exp)?, up(items.exp_at)?, up(items.exp_len)?);
            let mut out = stream.alloc_zeros::<u64>(n * l)?;
            let count = n as u64;
            if block {
                let ninv = up(items.ninv)?;
                let blocks = u32::try_from(n).unwrap_or(u32::MAX >> 1).min(i32::MAX as u32);
                let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (l as u32, 1, 1), shared_mem_bytes: block_shared_bytes(l) as u32 };
                let mut builder = stream.launch_builder(f);
                builder.arg(&count).arg(&base).arg(&exp).arg(&at).arg(&len).arg(&modulus).arg(&r2).arg(&ninv).arg(&mut out);
                unsafe { builder.launch(cfg) }?;
            } else {
                let blocks = u32::try_from(n.div_ceil(POWM_THREADS as usize)).map_err(|_| GpuError::TooLarge)?;
                let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (POWM_THREADS, 1, 1), shared_mem_bytes: 0 };
                let mut builder = stream.launch_builder(f);
                builder.arg(&count).arg(&base).arg(&exp).arg(&at).arg(&len).arg(&modulus).arg(&r2).arg(&mut out);
                unsafe { builder.launch(cfg) }?;
            }
            let mut host = vec![0; n * l];
            self.copy_from_device_into(&stream, &out, &mut host)?;
            Ok(host)
        })
    }
}
