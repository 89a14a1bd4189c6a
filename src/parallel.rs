//! Work spread over threads started for one call: a slice cut into items,
//! runs of consecutive items taken from a queue by each thread started and
//! by the calling thread, so that the work is done whatever number of
//! threads could be started (none: the caller does it all).
//!
//! Used where a call's work is large and its threads are few and short
//! lived: the store of a large result into an mpz or GMP's limbs
//! (src/gpu/staging.rs, `copy_limbs`: a GPU product's, a square root's),
//! radix conversion's levels and leaves (src/radix.rs).
//! The staged transfers keep threads of their own instead (staging.rs's
//! crew): they run many times a second.

use std::sync::Mutex;

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
    let worker = || loop {
        let Some((first, run)) = runs.lock().unwrap_or_else(|e| e.into_inner()).pop() else { break };
        for (i, item) in run.chunks_mut(size).enumerate() {
            f(first + i, item);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            if std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(s, worker).is_err() {
                break;
            }
        }
        worker();
    });
}
