//! Work spread over threads started for one call: a slice cut into items,
//! runs of consecutive items taken from a queue by each thread started and
//! by the calling thread, so that the work is done whatever number of
//! threads could be started (none: the caller does it all).
//!
//! Used where a call's work is large and its threads are few and short
//! lived: the store of a large result into an mpz or GMP's limbs
//! ([`copy_limbs`]: a GPU product's, a square root's), radix conversion's
//! levels and leaves (src/algorithms/radix/to_digits.rs), the items of a
//! batch (src/algorithms/batch.rs, [`each_index`]).
//! The staged transfers keep threads of their own instead (the crew of
//! src/gpu/staging.rs): they run many times a second.
//!
//! A leaf: it imports nothing of the crate.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Stack of a thread started here: radix conversion's leaves run GMP's
/// conversion, whose temporaries below 32 KiB live on the stack (its
/// TMP_ALLOC) at every level of its recursion.
const STACK_BYTES: usize = 4 << 20;

/// The host's cores (1 where that cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f(i, item)` for every `item` of `items` cut `size` long (the last may
/// be shorter), on up to `threads` threads, this one among them. A panic in
/// `f` reaches the caller once every thread has stopped.
pub fn each_item<T: Send>(items: &mut [T], size: usize, threads: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let count = items.len().div_ceil(size);
    let threads = threads.min(count).max(1);
    let per = count.div_ceil(threads).max(1);
    let runs: Mutex<Vec<(usize, &mut [T])>> = Mutex::new(items.chunks_mut(per * size).enumerate().map(|(t, run)| (t * per, run)).collect());
    on_threads(threads, || loop {
        let Some((first, run)) = runs.lock().unwrap_or_else(|e| e.into_inner()).pop() else { break };
        for (i, item) in run.chunks_mut(size).enumerate() {
            f(first + i, item);
        }
    });
}

/// `f(i)` for every `i` in `0..count`, on up to `threads` threads, this one
/// among them, each thread claiming the next `grain` indices when it is
/// free: work of uneven sizes (a batch's items) spreads evenly. A panic in
/// `f` reaches the caller once every thread has stopped.
pub fn each_index(count: usize, grain: usize, threads: usize, f: impl Fn(usize) + Sync) {
    let grain = grain.max(1);
    let next = AtomicUsize::new(0);
    on_threads(threads.min(count.div_ceil(grain)).max(1), || loop {
        let first = next.fetch_add(grain, Relaxed);
        if first >= count {
            break;
        }
        (first..count.min(first + grain)).for_each(&f);
    });
}

/// `worker` on `threads` threads, this one among them (fewer where threads
/// cannot be started: the work is then done by those that run).
fn on_threads(threads: usize, worker: impl Fn() + Sync) {
    std::thread::scope(|s| {
        for _ in 1..threads {
            if std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(s, &worker).is_err() {
                break;
            }
        }
        worker();
    });
}

/// A value the threads of one call share although Rust's rules say it is
/// not `Sync` (raw pointers, a closure holding them): the caller vouches
/// that each thread writes only what no other thread touches.
pub struct Shared<T>(pub T);
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// (A method: a closure that named the field would capture the field
    /// alone, not this `Sync` wrapper.)
    pub fn get(&self) -> &T {
        &self.0
    }
}

/// Copies below this many bytes run on the calling thread: a thread's start
/// costs more than it saves.
const THREADED_COPY_BYTES: usize = 4 << 20;
/// Limbs a copy thread takes at least (2 MiB).
const COPY_LIMBS_PER_THREAD: usize = 1 << 18;
/// Threads `copy_limbs` starts at most.
const MAX_COPY_THREADS: usize = 8;

/// `dst.copy_from_slice(src)`, by several threads when it is large: a copy
/// into freshly allocated memory also takes its page faults, which then run
/// in parallel too.
pub fn copy_limbs(dst: &mut [u64], src: &[u64]) {
    assert_eq!(dst.len(), src.len(), "copy_limbs takes slices of one length");
    if 8 * src.len() < THREADED_COPY_BYTES {
        dst.copy_from_slice(src);
        return;
    }
    let threads = src.len().div_ceil(COPY_LIMBS_PER_THREAD).clamp(1, MAX_COPY_THREADS.min(cores()));
    let per = src.len().div_ceil(threads);
    each_item(dst, per, threads, |i, d| d.copy_from_slice(&src[i * per..][..d.len()]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_runs_once() {
        for (count, grain, threads) in [(0, 1, 4), (1, 1, 4), (7, 3, 2), (1000, 1, 8), (1000, 64, 3), (5, 10, 16)] {
            let seen: Vec<AtomicUsize> = (0..count).map(|_| AtomicUsize::new(0)).collect();
            each_index(count, grain, threads, |i| {
                seen[i].fetch_add(1, Relaxed);
            });
            assert!(seen.iter().all(|s| s.load(Relaxed) == 1), "count {count} grain {grain} threads {threads}");
        }
    }

    #[test]
    fn every_item_runs_once() {
        let mut v = vec![0u64; 1003];
        each_item(&mut v, 10, 4, |i, run| run.iter_mut().for_each(|x| *x += 1 + i as u64));
        assert!(v.iter().enumerate().all(|(k, &x)| x == 1 + (k / 10) as u64));
    }
}
