//! Many independent operations in one call: `cugmp_mul_batch`,
//! `cugmp_powm_batch` and `cugmp_mod_batch`. Item i gets exactly what
//! GMP's mpz_mul, mpz_powm or mpz_mod gives for item i, errors included.
//!
//! The items are spread over the host's cores, claimed a few at a time so
//! that items of uneven sizes balance (`parallel::each_index`); an item
//! large enough for the GPU gets it through mpz_mul's routing, the rest is
//! the embedded GMP. A batch of small numbers stays on the CPU: its bytes
//! cross PCIe slower than the host's cores multiply them (RESULTS.md,
//! "Batches").
//!
//! Results are as if computed from the inputs as they were at entry: where
//! a result variable is also an input of another item, or is named twice,
//! every result goes to a temporary first and is swapped in afterwards, in
//! item order (so a variable named twice ends with its last item's result).
//!
//! An item GMP rejects (a zero modulus, a negative exponent with no
//! inverse) is left by the workers and given to GMP's own function on the
//! caller's thread, in item order: the program stops as it would on GMP.
//!
//! Owns the batches' scheduling and aliasing; it may not touch the GPU
//! engine (products reach it only through `mpz::mul`) nor limbs beyond
//! GMP's API.
//!
//! # Safety
//! Every `pub unsafe fn` here takes slices of `n` initialised `mpz_t`
//! pointers, as the C functions of the same name document.
#![allow(clippy::missing_safety_doc)]

use super::mpz;
use super::route::{self, gmp_allocates_by_default};
use crate::gmp::mpz::{self as storage, Int};
use crate::gmp::{self, embedded, mpz_ptr, mpz_srcptr};
use crate::parallel::{self, Shared};
use crate::{gpu, stats};
use crate::stats::Op;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Work (in about half-nanoseconds of one core: one limb by limb product)
/// that pays for starting a thread, some 20 us.
const WORK_PER_THREAD: u64 = 200_000;
/// Device memory a GPU powm launch takes at most (its items' operands,
/// exponents and results): a larger batch goes in several launches.
const GPU_CHUNK_BYTES: usize = 1 << 30;
/// Items whose sizes estimate a batch's work.
const WORK_SAMPLES: usize = 64;
/// Work a thread claims at once, at least: the claim is an atomic add.
const WORK_PER_CLAIM: u64 = 20_000;

/// Whether some result variable is also an input of another item, or is
/// named by two items: then results wait in temporaries. First in one
/// pass over the pointers, with no sort: results in ascending or
/// descending address order (an array of mpz_t) are all different, and
/// inputs that lie outside the results' address range (separate arrays)
/// are none of them. Else the result variables sorted by address, an
/// input is looked up only where it lies between the lowest and the
/// highest of them. (The sort runs on the caller's thread before any
/// item starts: every core waits for it.)
fn needs_temporaries(r: &[mpz_ptr], inputs: &[&[mpz_srcptr]]) -> bool {
    let (lo, hi) = r.iter().fold((usize::MAX, 0), |(lo, hi), &p| (lo.min(p as usize), hi.max(p as usize)));
    let ordered = r.windows(2).all(|w| w[0] < w[1]) || r.windows(2).all(|w| w[0] > w[1]);
    let inside = |list: &&[mpz_srcptr]| list.iter().zip(r).any(|(&p, &own)| (lo..=hi).contains(&(p as usize)) && !std::ptr::eq(p, own.cast_const()));
    if ordered && !inputs.iter().any(inside) {
        return false;
    }
    let mut outs: Vec<usize> = r.iter().map(|&p| p as usize).collect();
    outs.sort_unstable();
    if outs.windows(2).any(|w| w[0] == w[1]) {
        return true;
    }
    let (Some(&lo), Some(&hi)) = (outs.first(), outs.last()) else { return false };
    inputs.iter().any(|list| {
        list.iter().zip(r).any(|(&p, &own)| {
            let p = p as usize;
            (lo..=hi).contains(&p) && p != own as usize && outs.binary_search(&p).is_ok()
        })
    })
}

/// `item(dst, i)` for every item: into `r[i]`, or into a temporary swapped
/// into `r[i]` afterwards. `item` returns false for an item GMP rejects,
/// untouched; `reject(i)` then calls GMP's function for it on this thread
/// (which stops the program as GMP does), in item order. `work(i)`
/// estimates item i's cost for the number of threads.
unsafe fn run(
    r: &[mpz_ptr],
    inputs: &[&[mpz_srcptr]],
    work: impl Fn(usize) -> u64,
    item: impl Fn(mpz_ptr, usize) -> bool,
    reject: impl Fn(usize),
) {
    let n = r.len();
    if n == 0 {
        return;
    }
    // The work, estimated from at most WORK_SAMPLES items spread over the
    // batch: reading every item's sizes on this one thread touched each
    // operand's mpz_t, scattered in memory, before any thread started.
    let samples = n.min(WORK_SAMPLES);
    let sampled: u64 = (0..samples).map(|j| work(j * n / samples).max(1)).fold(0, u64::saturating_add);
    let total = (sampled / samples as u64).max(1).saturating_mul(n as u64);
    // A program's own memory functions need not be thread-safe in a
    // program without threads: then the caller does every item.
    let threads = if gmp_allocates_by_default() { parallel::cores().min((total / WORK_PER_THREAD) as usize).max(1) } else { 1 };
    let grain = ((WORK_PER_CLAIM * n as u64 / total) as usize).clamp(1, n.div_ceil(4 * threads));
    let mut temporaries: Vec<Int> = if needs_temporaries(r, inputs) { (0..n).map(|_| Int::new()).collect() } else { Vec::new() };
    let dst: Vec<usize> = temporaries.iter_mut().map(|t| t.m() as usize).collect();
    let rejected: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let (items, results) = (Shared(item), Shared(r));
    parallel::each_index(n, grain, threads, |i| {
        let to = dst.get(i).map_or(results.get()[i], |&t| t as mpz_ptr);
        if !(items.get())(to, i) {
            rejected[i].store(true, Relaxed);
        }
    });
    for i in 0..n {
        if rejected[i].load(Relaxed) {
            reject(i);
        } else if let Some(t) = temporaries.get_mut(i) {
            unsafe { embedded::mpz_swap(r[i], t.m()) };
        }
    }
}

fn size(x: mpz_srcptr) -> u64 {
    unsafe { gmp::limbs(x) }.len() as u64
}

/// `r[i] = a[i] b[i]`.
pub unsafe fn mul(r: &[mpz_ptr], a: &[mpz_srcptr], b: &[mpz_srcptr]) {
    unsafe {
        run(
            r,
            &[a, b],
            |i| size(a[i]) * size(b[i]),
            |dst, i| {
                mpz::mul_routed(dst, a[i], b[i]);
                true
            },
            |_| {},
        )
    }
}

/// `r[i] = a[i] mod m[i]` (never negative), GMP's division by zero for a
/// zero modulus.
pub unsafe fn modulo(r: &[mpz_ptr], a: &[mpz_srcptr], m: &[mpz_srcptr]) {
    unsafe {
        run(
            r,
            &[a, m],
            |i| (size(a[i]).saturating_sub(size(m[i])) + 1) * size(m[i]),
            |dst, i| {
                if size(m[i]) == 0 {
                    return false;
                }
                embedded::mpz_mod(dst, a[i], m[i]);
                true
            },
            |i| embedded::mpz_mod(r[i], a[i], m[i]),
        )
    }
}

/// `r[i] = base[i]^exp[i] mod m[i]`, GMP's division by zero for a zero
/// modulus or a negative exponent of a base with no inverse. The items the
/// GPU's kernels take (`gpu_powm`) are computed there first, from the
/// inputs as they are at entry; the rest by GMP.
pub unsafe fn powm(r: &[mpz_ptr], base: &[mpz_srcptr], exp: &[mpz_srcptr], m: &[mpz_srcptr]) {
    let on_gpu = unsafe { gpu_powm(base, exp, m) };
    unsafe {
        run(
            r,
            &[base, exp, m],
            |i| if on_gpu.contains(i) { 1 } else { size(m[i]) * size(m[i]) * 64 * size(exp[i]) },
            |dst, i| {
                if let Some(limbs) = on_gpu.result(i) {
                    if crate::config::get().check {
                        mpz::check_against_cpu("powm_batch item", limbs, false, &|t| embedded::mpz_powm(t, base[i], exp[i], m[i]));
                    }
                    storage::store(dst, limbs, false);
                    return true;
                }
                if size(m[i]) == 0 {
                    return false;
                }
                if gmp::negative(exp[i]) {
                    // GMP's test, on a scratch variable: dst may be an input.
                    let mut inverse = Int::new();
                    if embedded::mpz_invert(inverse.m(), base[i], m[i]) == 0 {
                        return false;
                    }
                }
                embedded::mpz_powm(dst, base[i], exp[i], m[i]);
                true
            },
            |i| embedded::mpz_powm(r[i], base[i], exp[i], m[i]),
        )
    }
}

/// The results the GPU computed for some items of a powm batch.
#[derive(Default)]
struct GpuResults {
    /// Per item: its group and its place there, for the items computed.
    at: Vec<Option<(usize, usize)>>,
    /// Per group: its limb count and its results, item-major.
    groups: Vec<(usize, Vec<u64>)>,
}

impl GpuResults {
    fn contains(&self, i: usize) -> bool {
        self.at.get(i).is_some_and(|a| a.is_some())
    }

    fn result(&self, i: usize) -> Option<&[u64]> {
        let (g, k) = (*self.at.get(i)?)?;
        let (l, limbs) = &self.groups[g];
        Some(&limbs[k * l..(k + 1) * l])
    }
}

/// The items of a powm batch the GPU takes, when the routing sends their
/// number there: an odd modulus of more than one and at most 64 limbs'
/// magnitude, a positive exponent. Grouped by the kernels' limb count;
/// each base reduced mod |m| and R^2 mod |m| computed here, on all cores.
/// A group the GPU fails is left to GMP.
unsafe fn gpu_powm(base: &[mpz_srcptr], exp: &[mpz_srcptr], m: &[mpz_srcptr]) -> GpuResults {
    let n = m.len();
    let kernel_limbs = |i: usize| -> Option<usize> {
        let (ml, el) = unsafe { (gmp::limbs(m[i]), gmp::limbs(exp[i])) };
        let odd = ml.first().is_some_and(|&l| l & 1 == 1) && !(ml.len() == 1 && ml[0] == 1);
        (odd && !el.is_empty() && unsafe { !gmp::negative(exp[i]) }).then(|| gpu::powm::powm_limbs(ml.len())).flatten()
    };
    let limbs: Vec<Option<usize>> = (0..n).map(kernel_limbs).collect();
    if limbs.iter().all(|l| l.is_none()) {
        return GpuResults::default();
    }
    // Routed by items, a block kernel's counting for several: the GPU takes
    // about as long for one of them as for a device full, so fewer fill it
    // enough to win (RESULTS.md, "Batches": 4096-bit items 11.4x GMP on 16
    // threads at 1024 items, 8192-bit 12.8x at 2048).
    let weight = |l: usize| if l < gpu::powm::BLOCK_FROM { 1 } else if l == gpu::powm::BLOCK_FROM { 4 } else { 8 };
    let count = limbs.iter().flatten().map(|&l| weight(l)).sum();
    let Some(g) = route::route(Op::PowmBatch, count, true) else { return GpuResults::default() };
    let mut results = GpuResults { at: vec![None; n], groups: Vec::new() };
    // Groups by limb count, each cut into chunks of at most GPU_CHUNK_BYTES
    // on the device (and a quarter of CUGMP_GPU_MEM_LIMIT), so that a batch
    // larger than its memory still runs there.
    let most = GPU_CHUNK_BYTES.min(crate::config::get().gpu_mem_limit.map_or(usize::MAX, |b| b / 4));
    let mut chunks: Vec<(usize, Vec<usize>)> = Vec::new();
    for &l in gpu::powm::POWM_LIMBS.iter() {
        let mut bytes = 0;
        for i in (0..n).filter(|&i| limbs[i] == Some(l)) {
            let item = 8 * (5 * l + 2 + unsafe { gmp::limbs(exp[i]) }.len());
            if chunks.last().is_none_or(|c| c.0 != l) || bytes + item > most {
                chunks.push((l, Vec::new()));
                bytes = 0;
            }
            bytes += item;
            if let Some(c) = chunks.last_mut() {
                c.1.push(i);
            }
        }
    }
    for (l, members) in chunks {
        let k = members.len();
        let (mut b, mut md, mut r2) = (vec![0u64; k * l], vec![0u64; k * l], vec![0u64; k * l]);
        // -m^-1 mod R, for the kernels of a block an item.
        let block = l >= gpu::powm::BLOCK_FROM;
        let mut ninv = vec![0u64; if block { k * l } else { 0 }];
        let mut exp_at = Vec::with_capacity(k);
        let mut exp_len = Vec::with_capacity(k);
        let mut e = Vec::new();
        for &i in &members {
            let el = unsafe { gmp::limbs(exp[i]) };
            exp_at.push(e.len() as u64);
            exp_len.push(el.len() as u64);
            e.extend_from_slice(el);
        }
        {
            // Each item writes its own l limbs of the three arrays.
            let out = Shared((b.as_mut_ptr() as usize, md.as_mut_ptr() as usize, r2.as_mut_ptr() as usize, ninv.as_mut_ptr() as usize));
            let inputs = Shared((base, m));
            let work = (k * l * l) as u64 * 16;
            let threads = parallel::cores().min((work / WORK_PER_THREAD) as usize).max(1);
            parallel::each_index(k, 64, if gmp_allocates_by_default() { threads } else { 1 }, |j| {
                let i = members[j];
                let ((bp, mp, rp, np), (base, m)) = (*out.get(), *inputs.get());
                let slot = |p: usize| unsafe { std::slice::from_raw_parts_mut((p as *mut u64).add(j * l), l) };
                let ml = unsafe { gmp::limbs(m[i]) };
                slot(mp)[..ml.len()].copy_from_slice(ml);
                let modulus = storage::view(ml);
                let mut t = Int::new();
                unsafe {
                    embedded::mpz_mod(t.m(), base[i], &modulus);
                    slot(bp)[..t.limbs().len()].copy_from_slice(t.limbs());
                    embedded::mpz_set_ui(t.m(), 1);
                    embedded::mpz_mul_2exp(t.m(), t.p(), 128 * l as u64);
                    embedded::mpz_mod(t.m(), t.p(), &modulus);
                    slot(rp)[..t.limbs().len()].copy_from_slice(t.limbs());
                    if block {
                        // m is odd: invertible mod R = 2^(64 l).
                        let mut r = Int::new();
                        embedded::mpz_set_ui(r.m(), 1);
                        embedded::mpz_mul_2exp(r.m(), r.p(), 64 * l as u64);
                        embedded::mpz_invert(t.m(), &modulus, r.p());
                        embedded::mpz_sub(t.m(), r.p(), t.p());
                        slot(np)[..t.limbs().len()].copy_from_slice(t.limbs());
                    }
                }
            });
        }
        let items = gpu::powm::PowmItems { l, base: &b, modulus: &md, r2: &r2, exp: &e, exp_at: &exp_at, exp_len: &exp_len, ninv: &ninv };
        stats::gpu_attempt_starts();
        let started = std::time::Instant::now();
        match g.powm_odd(&items) {
            Ok(out) => {
                for (j, &i) in members.iter().enumerate() {
                    results.at[i] = Some((results.groups.len(), j));
                }
                stats::gpu_call(Op::PowmBatch, k, started.elapsed());
                results.groups.push((l, out));
            }
            Err(e) => stats::fallback(Op::PowmBatch, e.fallback()),
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: usize) -> mpz_ptr {
        x as mpz_ptr
    }

    #[test]
    fn temporaries_only_where_results_meet_inputs() {
        let r = [p(8), p(16), p(24)];
        // Each result its own item's input: GMP handles that overlap.
        assert!(!needs_temporaries(&r, &[&[p(8) as mpz_srcptr, p(16), p(40)], &[p(8) as mpz_srcptr, p(48), p(24)]]));
        // Item 1 reads item 0's result.
        assert!(needs_temporaries(&r, &[&[p(32) as mpz_srcptr, p(8), p(40)]]));
        // One variable named twice as a result.
        assert!(needs_temporaries(&[p(8), p(8)], &[&[p(32) as mpz_srcptr, p(40)]]));
        assert!(!needs_temporaries(&[], &[&[]]));
    }
}
