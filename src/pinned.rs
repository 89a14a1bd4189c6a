//! Page-locked blocks for the limbs of large numbers: a pool of anonymous
//! mappings that the GPU engine pins once and that are used again and again.
//!
//! A transfer from pageable memory runs through pinned slots: each byte is
//! copied on the host before the DMA moves it, and the host's memory caps
//! the two together at 23 to 40 GB/s against the DMA's 55 (RESULTS.md,
//! "Staged transfers", "One transfer at a time"). Limbs that already lie in
//! pinned memory move by DMA alone. But pinning is slow: 2.7 to 3.8 ms for
//! 16 MiB, five times the DMA of the same bytes (RESULTS.md, "Pinned
//! blocks"). So blocks are made by a thread of their own when a size is
//! first asked for (the caller meanwhile takes ordinary memory), kept when
//! freed, and handed out again for the next product of their size.
//!
//! Blocks are anonymous private mappings, locked by the driver's
//! registration (`cuMemHostRegister`), not the driver's own allocations:
//! those are shared with a forked child, whose writes then reach the
//! parent's numbers, while a registered private mapping gives the child a
//! copy and leaves the parent's DMA moving the parent's limbs (RESULTS.md,
//! "Pinned blocks"). In a child nothing is pinned or handed out; its blocks
//! are unmapped when freed.
//!
//! Only numbers' limbs take blocks (`take`): the product paths' results and
//! GMP's `_mpz_realloc` (src/gmp/mpz.rs, `realloc`), limbs that GMP's own
//! memory functions then grow and free. The functions cuGMP installs
//! (src/gmp/memory.rs) give a block back where GMP would free it. Strings
//! and exported words, which programs may free with `free()`, never come
//! from here.
//!
//! A leaf: it imports nothing of the crate. The GPU engine installs the
//! functions that pin and unpin (`install`); until then, and where no
//! device opens, `take` gives nothing.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// The smallest block (a huge page). Smaller transfers gain little: the
/// driver's own path costs tens of microseconds at this size.
pub const MIN_BYTES: usize = 2 << 20;

/// How the GPU engine pins and unpins a range (page-locks it for DMA on
/// every device of the process, and undoes that).
#[derive(Clone, Copy)]
pub struct Pinner {
    pub pin: fn(*mut u8, usize) -> bool,
    pub unpin: fn(*mut u8, usize),
}

/// The pinner, and the process that installed it (a forked child is
/// another), set together so that no thread sees one without the other.
static PINNER: OnceLock<(Pinner, u32)> = OnceLock::new();
/// Set after the pinner refused a block: the pool gives nothing more.
static REFUSED: AtomicBool = AtomicBool::new(false);

/// Makes the pool hand out blocks pinned by `pinner`. The first call wins;
/// later ones change nothing.
pub fn install(pinner: Pinner) {
    if PINNER.set((pinner, std::process::id())).is_ok() {
        // SAFETY: the handlers only take and drop the pool's lock (below).
        unsafe { libc::pthread_atfork(Some(before_fork), Some(after_fork), Some(after_fork)) };
    }
}

/// Whether `take` can hand out blocks in this process now.
pub fn active() -> bool {
    in_owner() && !REFUSED.load(Ordering::Relaxed)
}

/// Whether a pinner is installed and this is the process that installed it.
fn in_owner() -> bool {
    PINNER.get().is_some_and(|&(_, owner)| owner == std::process::id())
}

fn pinner() -> Option<Pinner> {
    PINNER.get().map(|&(p, _)| p)
}

/// A block of at least `bytes` bytes from those kept, as (address, its
/// bytes), or None: no block of that size kept (one is then made for the
/// next request), the pool's memory at its bound, or no pinner here.
pub fn take(bytes: usize) -> Option<(*mut u8, usize)> {
    if bytes < MIN_BYTES || !active() {
        return None;
    }
    let size = class(bytes);
    let mut pool = POOL.lock();
    if let Some(i) = pool.kept.iter().position(|&(b, _)| b == size) {
        let (_, base) = pool.kept.swap_remove(i);
        pool.kept_bytes -= size;
        if let Some(block) = pool.blocks.get_mut(&base) {
            block.live = true;
        }
        return Some((base as *mut u8, size));
    }
    if pool.asked.iter().filter(|&&s| s == size).count() < ASKED_AT_ONCE && pool.pinned + size <= bounds().pinned {
        // Counted now, so requests made meanwhile stay within the bound.
        pool.pinned += size;
        pool.asked.push(size);
        drop(pool);
        maker().ask(Task::Make(size));
    }
    None
}

/// Blocks of one size asked of the maker and not yet made, at most: each
/// request that finds none kept asks for one, so that a program whose
/// numbers of one size need several (a product's two operands, made one
/// after the other) has them once each has missed, and a burst
/// of misses asks for no more than this.
const ASKED_AT_ONCE: usize = 4;

/// Gives back the block at `p` if it is one of the pool's (kept for the
/// next request, or released beyond the bound on kept memory); false for
/// any other address, which the caller frees its own way.
pub fn give_back(p: *mut u8) -> bool {
    let base = p as usize;
    let mut pool = POOL.lock();
    let Some(size) = pool.blocks.get(&base).map(|b| b.bytes) else { return false };
    if !in_owner() {
        // A forked child's copy: not pinned here, only unmapped.
        pool.blocks.remove(&base);
        drop(pool);
        unmap(base, size);
        return true;
    }
    if pool.kept_bytes + size <= bounds().kept {
        if let Some(block) = pool.blocks.get_mut(&base) {
            block.live = false;
        }
        pool.kept.push((size, base));
        pool.kept_bytes += size;
        return true;
    }
    pool.blocks.remove(&base);
    pool.pinned -= size;
    drop(pool);
    maker().ask(Task::Release(base, size));
    true
}

/// The bytes of the block in use at `p` (its start), or None where `p`
/// starts no such block.
pub fn capacity(p: *const u8) -> Option<usize> {
    let pool = POOL.lock();
    pool.blocks.get(&(p as usize)).filter(|b| b.live).map(|b| b.bytes)
}

/// Whether the `bytes` bytes at `p` lie inside one pinned block in use, so
/// that a DMA can move them directly.
pub fn holds(p: *const u8, bytes: usize) -> bool {
    if bytes == 0 || !active() {
        return false;
    }
    let at = p as usize;
    let pool = POOL.lock();
    pool.blocks.range(..=at).next_back().is_some_and(|(&base, b)| b.live && at + bytes <= base + b.bytes)
}

/// How many blocks for requests of `bytes` bytes are kept now (tests).
#[cfg(test)]
pub fn kept_for(bytes: usize) -> usize {
    let size = class(bytes);
    POOL.lock().kept.iter().filter(|&&(b, _)| b == size).count()
}

/// The pool's bytes now: pinned in all (in use, kept, being made), and kept
/// (tests).
#[cfg(test)]
pub fn bytes() -> (usize, usize) {
    let pool = POOL.lock();
    (pool.pinned, pool.kept_bytes)
}

/// Sizes come in four steps an octave (2^k, 1.25, 1.5, 1.75 times it),
/// whole huge pages: a block wastes at most a quarter of itself, and a
/// product's size finds the block freed by one of about its size.
fn class(bytes: usize) -> usize {
    let b = bytes.max(MIN_BYTES);
    let quarter = (1usize << (usize::BITS - 1 - b.leading_zeros())) / 4;
    (b.div_ceil(quarter) * quarter).next_multiple_of(MIN_BYTES)
}

/// Bounds on the pool's memory, from the host's: pinned memory cannot be
/// paged out, so a quarter of it at most in all, and a sixteenth, at most
/// 2 GiB, kept for reuse while no number holds it (memory GMP would have
/// given back; a chain of products of 10^7 limbs keeps a handful of
/// blocks of 80 to 160 MB).
struct Bounds {
    pinned: usize,
    kept: usize,
}

fn bounds() -> &'static Bounds {
    static BOUNDS: OnceLock<Bounds> = OnceLock::new();
    BOUNDS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let (pages, page) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        let host = if pages > 0 && page > 0 { pages as usize * page as usize } else { 1 << 30 };
        Bounds { pinned: host / 4, kept: (host / 16).min(2 << 30) }
    })
}

struct Block {
    bytes: usize,
    /// Handed out (held by a number), as opposed to kept.
    live: bool,
}

struct Pool {
    /// Every block of the pool, in use or kept, by address.
    blocks: BTreeMap<usize, Block>,
    /// The blocks kept, (bytes, address).
    kept: Vec<(usize, usize)>,
    kept_bytes: usize,
    /// Pinned bytes in all, blocks being made included.
    pinned: usize,
    /// Sizes asked of the maker and not yet made.
    asked: Vec<usize>,
}

/// The pool under a spin lock, held only for a few map operations, never
/// across a system call; `before_fork` holds it across fork() so that a
/// child never finds it taken by a thread it does not have.
struct Locked {
    held: AtomicBool,
    pool: std::cell::UnsafeCell<Pool>,
}

// SAFETY: the pool is reached only under `held`.
unsafe impl Sync for Locked {}

static POOL: Locked = Locked {
    held: AtomicBool::new(false),
    pool: std::cell::UnsafeCell::new(Pool { blocks: BTreeMap::new(), kept: Vec::new(), kept_bytes: 0, pinned: 0, asked: Vec::new() }),
};

struct Guard(&'static Locked);

impl Locked {
    fn lock(&'static self) -> Guard {
        self.acquire();
        Guard(self)
    }

    fn acquire(&self) {
        while self.held.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
    }

    fn release(&self) {
        self.held.store(false, Ordering::Release);
    }
}

impl std::ops::Deref for Guard {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        // SAFETY: the lock is held.
        unsafe { &*self.0.pool.get() }
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Pool {
        // SAFETY: the lock is held.
        unsafe { &mut *self.0.pool.get() }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.release();
    }
}

extern "C" fn before_fork() {
    POOL.acquire();
}

extern "C" fn after_fork() {
    POOL.release();
}

enum Task {
    Make(usize),
    Release(usize, usize),
}

/// The thread that makes and releases blocks, off the callers' path.
struct Maker {
    tasks: Mutex<VecDeque<Task>>,
    ready: Condvar,
}

fn maker() -> &'static Maker {
    static MAKER: OnceLock<Maker> = OnceLock::new();
    static STARTED: std::sync::Once = std::sync::Once::new();
    let m = MAKER.get_or_init(|| Maker { tasks: Mutex::new(VecDeque::new()), ready: Condvar::new() });
    STARTED.call_once(|| {
        if std::thread::Builder::new().name("cugmp-pinned".into()).spawn(|| maker().serve()).is_err() {
            // No thread: no blocks. Requests already counted stay counted;
            // the pool hands out nothing from now on.
            REFUSED.store(true, Ordering::Relaxed);
        }
    });
    m
}

impl Maker {
    fn ask(&self, task: Task) {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner()).push_back(task);
        self.ready.notify_one();
    }

    fn serve(&self) {
        loop {
            let task = {
                let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if let Some(t) = tasks.pop_front() {
                        break t;
                    }
                    tasks = self.ready.wait(tasks).unwrap_or_else(|p| p.into_inner());
                }
            };
            match task {
                Task::Make(size) => make(size),
                Task::Release(base, size) => {
                    if let Some(p) = pinner() {
                        (p.unpin)(base as *mut u8, size);
                    }
                    unmap(base, size);
                }
            }
        }
    }
}

/// Maps, pins and keeps a block of `size` bytes (counted in `pinned` when
/// it was asked for).
fn make(size: usize) {
    let made = map(size).and_then(|base| match pinner() {
        Some(p) if (p.pin)(base as *mut u8, size) => Some(base),
        _ => {
            unmap(base, size);
            None
        }
    });
    let mut pool = POOL.lock();
    if let Some(i) = pool.asked.iter().position(|&s| s == size) {
        pool.asked.swap_remove(i);
    }
    match made {
        Some(base) => {
            pool.blocks.insert(base, Block { bytes: size, live: false });
            pool.kept.push((size, base));
            pool.kept_bytes += size;
        }
        None => {
            pool.pinned -= size;
            REFUSED.store(true, Ordering::Relaxed);
        }
    }
}

/// A private anonymous mapping of `size` bytes (a multiple of MIN_BYTES)
/// aligned to a huge page and advised to be backed by huge ones (fewer
/// pages to pin, and no TLB miss a page for the copies that read it).
fn map(size: usize) -> Option<usize> {
    let span = size + MIN_BYTES;
    // SAFETY: a fresh anonymous mapping; nothing else refers to it.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), span, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let base = start.next_multiple_of(MIN_BYTES);
    // SAFETY: the head and tail outside [base, base + size) are this
    // mapping's own, unused.
    unsafe {
        if base > start {
            libc::munmap(start as *mut libc::c_void, base - start);
        }
        if start + span > base + size {
            libc::munmap((base + size) as *mut libc::c_void, start + span - base - size);
        }
        libc::madvise(base as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
    Some(base)
}

fn unmap(base: usize, size: usize) {
    // SAFETY: [base, base + size) is a block of `map`'s that nothing uses.
    unsafe { libc::munmap(base as *mut libc::c_void, size) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_quarters_of_an_octave_in_whole_huge_pages() {
        let mib = 1 << 20;
        assert_eq!(class(1), MIN_BYTES);
        assert_eq!(class(2 * mib), 2 * mib);
        assert_eq!(class(2 * mib + 1), 4 * mib, "2 MiB + 1 byte: a quarter of 2 MiB is not a whole huge page");
        assert_eq!(class(8 * mib + 1), 10 * mib);
        assert_eq!(class(10 * mib + 1), 12 * mib);
        assert_eq!(class(15 * mib), 16 * mib);
        assert_eq!(class(16 * mib + 1), 20 * mib);
        for b in [3 * mib, 7 * mib + 5, 100 * mib, 1 << 33] {
            let c = class(b);
            assert!(c >= b && c.is_multiple_of(MIN_BYTES) && (c - b) * 4 <= c + MIN_BYTES * 4, "{b} bytes in a class of {c}");
        }
    }
}
