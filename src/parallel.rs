//! Work spread over threads for one call: a slice cut into items, runs of
//! consecutive items taken from a queue by each thread and by the calling
//! thread, so that the work is done whatever number of threads take part
//! (none: the caller does it all). The threads are kept between calls
//! (`Pool`) where one caller at a time uses them, else started for the
//! call.
//!
//! Used where a call's work is large: the store of a large result into an
//! mpz or GMP's limbs ([`copy_limbs`]: a GPU product's, a square root's),
//! radix conversion's levels and leaves (src/algorithms/radix), the
//! primes of factorials, the items of a batch (src/algorithms/batch.rs,
//! [`each_index`]). The staged transfers keep threads of their own (the
//! crew of src/gpu/staging.rs), and products of a few hundred limbs share
//! theirs with the helpers (src/helpers.rs), whose tasks last microseconds.
//!
//! A leaf: it imports nothing of the crate.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::{Acquire, Relaxed, Release}};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

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
/// cannot be started or kept ones are fewer: the work is then done by those
/// that run). `worker` claims work until none is left, so it may run on
/// any number of threads, late ones finding nothing. The kept threads
/// (`Pool`) take it where they are free; else threads are started for it.
fn on_threads(threads: usize, worker: impl Fn() + Sync) {
    if threads <= 1 {
        worker();
        return;
    }
    if let Some(pool) = Pool::free() {
        pool.run(threads - 1, &worker);
        return;
    }
    std::thread::scope(|s| {
        for _ in 1..threads {
            if std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(s, &worker).is_err() {
                break;
            }
        }
        worker();
    });
}

/// Threads kept for `on_threads`, one fewer than the cores (at most
/// MAX_KEPT), started at the first call that wants several: fifteen
/// threads started and joined for one call took 0.2 to 1.7 ms (median 0.4)
/// on the GPU machine's host, where kept ones are only woken (fac(10^6)
/// 1.37x faster with them; RESULTS.md, "Threads kept for a call's work"). One caller uses them at
/// a time; another, or one on a kept thread itself, starts threads as
/// before. A forked child, which has none of them, starts threads too.
struct Pool {
    pid: u32,
    kept: usize,
    held: AtomicBool,
    state: Mutex<State>,
    wake: Condvar,
    done: Condvar,
}

/// The job the holder lays out: its worker, how many kept threads may take
/// it, how many did and are still in it.
struct State {
    epoch: u64,
    job: Option<Job>,
    wanted: usize,
    started: usize,
    running: usize,
    panicked: bool,
}

/// The holder's worker, its lifetime erased: alive until the holder has
/// closed the job and seen no kept thread in it (`Pool::run`).
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn() + Sync));
// SAFETY: the closure is Sync, and `run` keeps it alive while any thread
// may call it.
unsafe impl Send for Job {}

/// Kept threads at most (a call's threads elsewhere stop at 16).
const MAX_KEPT: usize = 15;

static POOL: OnceLock<Option<Pool>> = OnceLock::new();

impl Pool {
    /// The pool, started if need be, where this process has one and no
    /// other caller holds it; held by this caller then.
    fn free() -> Option<&'static Pool> {
        let pool = POOL
            .get_or_init(|| {
                let kept = cores().saturating_sub(1).min(MAX_KEPT);
                let started = (0..kept).take_while(|i| std::thread::Builder::new().name(format!("cugmp-worker-{i}")).stack_size(STACK_BYTES).spawn(keep).is_ok()).count();
                let state = State { epoch: 0, job: None, wanted: 0, started: 0, running: 0, panicked: false };
                (started > 0).then(|| Pool { pid: std::process::id(), kept: started, held: AtomicBool::new(false), state: Mutex::new(state), wake: Condvar::new(), done: Condvar::new() })
            })
            .as_ref()?;
        let ours = pool.pid == std::process::id();
        (ours && pool.held.compare_exchange(false, true, Acquire, Relaxed).is_ok()).then_some(pool)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `worker` on this thread and on up to `others` kept threads; returns
    /// when every thread that took it has left it (also when this thread's
    /// own call unwinds), the pool free again. A panic on a kept thread
    /// panics here after that.
    fn run(&'static self, others: usize, worker: &(dyn Fn() + Sync)) {
        let job: *const (dyn Fn() + Sync + '_) = worker;
        {
            let mut st = self.lock();
            st.epoch += 1;
            // SAFETY: the lifetime is erased for the kept threads; `Close`
            // below clears the job and waits for every thread in it before
            // this function returns or unwinds.
            st.job = Some(Job(unsafe { std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync)>(job) }));
            st.wanted = others.min(self.kept);
            st.started = 0;
            st.panicked = false;
            // As many as may take it: a woken thread that finds the job
            // taken, closed or not its own waits again.
            for _ in 0..st.wanted {
                self.wake.notify_one();
            }
        }
        // Closes the job, waits for the kept threads in it and frees the
        // pool, also when `worker` unwinds here; notes whether one of them
        // panicked.
        struct Close<'a>(&'static Pool, &'a Cell<bool>);
        impl Drop for Close<'_> {
            fn drop(&mut self) {
                let mut st = self.0.lock();
                st.job = None;
                while st.running > 0 {
                    st = self.0.done.wait(st).unwrap_or_else(|e| e.into_inner());
                }
                self.1.set(std::mem::take(&mut st.panicked));
                drop(st);
                self.0.held.store(false, Release);
            }
        }
        let panicked = Cell::new(false);
        let close = Close(self, &panicked);
        worker();
        drop(close);
        let panicked = panicked.get();
        assert!(!panicked, "a kept thread's share of parallel work panicked");
    }
}

/// A kept thread: waits for a job of an epoch it has not taken yet, while
/// the job wants more threads, and runs it.
fn keep() {
    let Some(pool) = POOL.wait().as_ref() else { return };
    let mut seen = 0u64;
    let mut st = pool.lock();
    loop {
        let job = match st.job {
            Some(job) if st.epoch != seen && st.started < st.wanted => job,
            _ => {
                st = pool.wake.wait(st).unwrap_or_else(|e| e.into_inner());
                continue;
            }
        };
        seen = st.epoch;
        st.started += 1;
        st.running += 1;
        drop(st);
        // SAFETY: the job is open (the holder clears it and then waits for
        // `running` to fall to 0 before its closure goes).
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job.0)() }));
        st = pool.lock();
        st.running -= 1;
        st.panicked |= ran.is_err();
        if st.running == 0 {
            pool.done.notify_all();
        }
    }
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

    /// Work from several callers at once, nested calls (a kept thread's
    /// own parallel work starts threads), and a panic: every index once,
    /// the panic reaches its caller, and the pool serves the next call.
    #[test]
    fn kept_threads_serve_callers_nested_work_and_panics() {
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || {
                    for turn in 0..50 {
                        let count = 64 + t + turn;
                        let seen: Vec<AtomicUsize> = (0..count * 8).map(|_| AtomicUsize::new(0)).collect();
                        each_index(count, 1, 4, |i| each_index(8, 1, 2, |j| _ = seen[i * 8 + j].fetch_add(1, Relaxed)));
                        assert!(seen.iter().all(|x| x.load(Relaxed) == 1), "caller {t}, turn {turn}");
                    }
                });
            }
        });
        let caught = std::panic::catch_unwind(|| each_index(100, 1, 4, |i| assert!(i != 57, "planted")));
        assert!(caught.is_err(), "the panic was lost");
        let seen: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        each_index(100, 1, 4, |i| _ = seen[i].fetch_add(1, Relaxed));
        assert!(seen.iter().all(|x| x.load(Relaxed) == 1));
    }

    /// A kept thread takes a share of the work: index 0 waits until
    /// another thread has taken index 1, which then names a kept thread
    /// (where another test holds the pool, threads are started instead and
    /// the attempt is lost: attempts go on for 30 s).
    #[test]
    fn kept_threads_take_work() {
        if cores() < 2 {
            return;
        }
        let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < end {
            let by = Mutex::new(String::new());
            let taken = AtomicBool::new(false);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            each_index(2, 1, 2, |i| {
                if i == 0 {
                    while !taken.load(Acquire) && std::time::Instant::now() < deadline {
                        std::hint::spin_loop();
                    }
                } else {
                    *by.lock().unwrap() = std::thread::current().name().unwrap_or("").to_string();
                    taken.store(true, Release);
                }
            });
            if by.lock().unwrap().starts_with("cugmp-worker") {
                return;
            }
        }
        panic!("in 30 s of attempts no kept thread took a share of the work");
    }

    #[test]
    fn every_item_runs_once() {
        let mut v = vec![0u64; 1003];
        each_item(&mut v, 10, 4, |i, run| run.iter_mut().for_each(|x| *x += 1 + i as u64));
        assert!(v.iter().enumerate().all(|(k, &x)| x == 1 + (k / 10) as u64));
    }
}
