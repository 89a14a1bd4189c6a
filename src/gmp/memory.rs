//! GMP's default memory functions, with huge pages for large blocks.
//!
//! GMP's own temporaries and results of tens of megabytes are fresh
//! mappings that one thread writes for the first time: `mpf_sqrt_ui` and
//! `mpf_div` zero and fill twice their precision, `mpf_set_z` copies a
//! number into a buffer `mpf_init2` made. Into small pages that writing
//! is the slow part (80 MiB by memcpy on one thread: 42.06 ms into a
//! fresh mapping against 18.40 with huge pages; RESULTS.md, "Huge pages
//! for downloads"). So the defaults a process starts with are GMP's own
//! functions followed by `pages::prefer_huge_pages`, which advises blocks
//! of 32 MiB and more only (glibc maps those on their own) and changes
//! nothing for smaller ones. Memory is still malloc's: a block from them
//! may be freed by free(), as GMP's defaults allow.
//!
//! Growing a block is much of what a program of many small numbers asks
//! of them: GMP reallocates a number's limbs each time they are outgrown,
//! often by one limb, and in a process with threads (the library's helpers
//! and copy threads are there wherever a GPU serves) glibc's `realloc`
//! takes its arena's lock on each call. So a growth that fits the block
//! malloc actually made (`malloc_usable_size`) keeps it, blocks start at
//! `SMALLEST` bytes, and a small block that must move gets room for twice
//! what it held: a splitting's leaves 1.3x to 2.2x faster with a thread
//! beside them on the build machine, a few percent on the H200's host
//! (RESULTS.md, "Memory functions in a program of many small numbers").
//!
//! The limbs of large GPU products may lie in pinned blocks (src/pinned.rs),
//! which only these functions free and grow: a block given to `free` or
//! `reallocate` that is the pool's goes back to the pool. Every other
//! block is malloc's. Only blocks of `pinned::MIN_BYTES` or more can be
//! the pool's, so smaller ones never look it up.
//!
//! A program's own `mp_set_memory_functions` replaces them as it replaces
//! GMP's; with NULLs it gets these back.

use super::embedded;
use crate::pages::prefer_huge_pages;
use crate::pinned;
use libc::{c_void, size_t};

/// GMP's `__gmp_default_allocate`, then the advice.
///
/// # Safety
/// GMP's allocation function's contract (called by GMP, or by a program
/// through `mp_get_memory_functions`).
pub unsafe extern "C" fn allocate(n: size_t) -> *mut c_void {
    // SAFETY: GMP's default allocation function (it aborts on failure).
    let p = unsafe { embedded::gmp_default_allocate(n.max(SMALLEST)) };
    prefer_huge_pages(p as *mut u8, n);
    p
}

/// The least a block from `allocate` holds: five limbs (a 48-byte chunk of
/// malloc's), where a number's first limb would get a chunk of three and
/// its fourth would move it.
const SMALLEST: size_t = 40;

/// Blocks up to this many bytes that must move for a growth get room for
/// twice their old size; larger ones get what was asked (their copies
/// cost more than the calls, and their memory is the program's).
const SLACK_UP_TO: size_t = 4096;

/// A growth that fits the block malloc made keeps the block; otherwise
/// GMP's `__gmp_default_reallocate`, with room to spare for small blocks,
/// then the advice on a grown block. Shrinking is GMP's (it returns
/// memory).
///
/// # Safety
/// `p` is a block of `old` bytes from these functions or GMP's defaults.
pub unsafe extern "C" fn reallocate(p: *mut c_void, old: size_t, new: size_t) -> *mut c_void {
    if old >= pinned::MIN_BYTES {
        if let Some(room) = pinned::capacity(p as *const u8) {
            // A pool block: kept while the new size fits it and is a pool
            // size; else the limbs move to malloc's memory.
            if new <= room && new >= pinned::MIN_BYTES {
                return p;
            }
            // SAFETY: a fresh block of `new` bytes (GMP's allocation aborts
            // on failure); both hold min(old, new) bytes.
            let q = unsafe { allocate(new) };
            unsafe { std::ptr::copy_nonoverlapping(p as *const u8, q as *mut u8, old.min(new)) };
            pinned::give_back(p as *mut u8);
            return q;
        }
    }
    let mut ask = new;
    if new > old && !p.is_null() {
        // SAFETY: a live block of malloc's (these functions and GMP's
        // defaults allocate with malloc).
        if unsafe { libc::malloc_usable_size(p) } >= new {
            return p;
        }
        if new <= SLACK_UP_TO {
            ask = new.max(2 * old);
        }
    }
    // SAFETY: the caller's block from these functions (GMP's contract).
    let q = unsafe { embedded::gmp_default_reallocate(p, old, ask) };
    if new > old {
        prefer_huge_pages(q as *mut u8, new);
    }
    q
}

/// A pool block back to the pool, any other block to GMP's
/// `__gmp_default_free` (malloc's free).
///
/// # Safety
/// `p` is a block of `n` bytes from these functions or GMP's defaults.
pub unsafe extern "C" fn free(p: *mut c_void, n: size_t) {
    if n >= pinned::MIN_BYTES && pinned::give_back(p as *mut u8) {
        return;
    }
    // SAFETY: a block of malloc's (GMP's contract).
    unsafe { embedded::gmp_default_free(p, n) }
}

/// Makes `allocate`, `reallocate` and `free` the functions GMP calls,
/// where GMP's own defaults are still in place. Called once, from the
/// load-time constructor, before any other thread of the library runs.
pub fn install() {
    // SAFETY: reads of GMP's function pointers, then written only while
    // they hold GMP's defaults (no program has set its own yet, so no
    // number is alive), from the loader's thread.
    unsafe {
        if embedded::__gmp_allocate_func as *const () == embedded::gmp_default_allocate as *const ()
            && embedded::__gmp_reallocate_func as *const () == embedded::gmp_default_reallocate as *const ()
            && embedded::__gmp_free_func as *const () == embedded::gmp_default_free as *const ()
        {
            set_functions(None, None, None);
        }
    }
}

/// `mp_set_memory_functions`: a program's functions in place of these, and
/// for each one given as NULL these again (where GMP puts back its plain
/// defaults, whose free cannot give a pool block back).
///
/// # Safety
/// GMP's contract: no number made with the functions replaced is still
/// alive, and no other thread is inside GMP.
pub unsafe fn set_functions(a: Option<embedded::AllocFn>, r: Option<embedded::ReallocFn>, f: Option<embedded::FreeFn>) {
    // SAFETY: GMP's function pointers, written as GMP's own setter writes
    // them (the caller's contract covers the threads).
    unsafe {
        (&raw mut embedded::__gmp_allocate_func).write(a.unwrap_or(allocate));
        (&raw mut embedded::__gmp_reallocate_func).write(r.unwrap_or(reallocate));
        (&raw mut embedded::__gmp_free_func).write(f.unwrap_or(free));
    }
}

/// Whether GMP's memory functions are those `install` put in place
/// (thread safe, malloc's blocks or the pool's), not a program's: only then
/// may limbs come from the pool (`mpz::pinned_limbs`).
pub fn defaults_in_place() -> bool {
    // SAFETY: reads of GMP's function pointers.
    unsafe {
        let (a, r, f) = (embedded::__gmp_allocate_func as *const (), embedded::__gmp_reallocate_func as *const (), embedded::__gmp_free_func as *const ());
        a == allocate as *const () && r == reallocate as *const () && f == free as *const ()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` line of the mapping of /proc/self/smaps that holds
    /// `address`.
    fn flags_at(address: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((from, to)) = range.split_once('-') {
                    if let (Ok(from), Ok(to)) = (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16)) {
                        inside = (from..to).contains(&address);
                        continue;
                    }
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return line.to_string();
            }
        }
        panic!("no mapping holds {address:#x}");
    }

    /// A growth that fits malloc's block keeps it and its limbs; a small
    /// block that moves gets room for twice its old size, contents kept;
    /// shrinking and large growth go to GMP's reallocation.
    #[test]
    fn growth_keeps_what_fits_and_leaves_slack() {
        unsafe {
            let p = allocate(8) as *mut u64;
            assert!(libc::malloc_usable_size(p as *mut c_void) >= SMALLEST, "a one-limb block is smaller than SMALLEST");
            p.write(0x1234_5678_9abc_def0);
            let q = reallocate(p as *mut c_void, 8, 32) as *mut u64;
            assert_eq!(q, p, "a growth to four limbs moved a block of five");
            assert_eq!(q.read(), 0x1234_5678_9abc_def0);
            let usable = libc::malloc_usable_size(q as *mut c_void);
            for i in 0..usable / 8 {
                q.add(i).write(i as u64 * 3 + 1);
            }
            let r = reallocate(q as *mut c_void, usable, usable + 8) as *mut u64;
            assert!(libc::malloc_usable_size(r as *mut c_void) >= 2 * usable, "a small block that moved got no slack");
            for i in 0..usable / 8 {
                assert_eq!(r.add(i).read(), i as u64 * 3 + 1, "limb {i} lost in the move");
            }
            let large = 1 << 20;
            let s = reallocate(r as *mut c_void, usable + 8, large) as *mut u8;
            let got = libc::malloc_usable_size(s as *mut c_void);
            assert!(got >= large && got < large + (64 << 10), "a large growth got {got} bytes for {large}");
            let t = reallocate(s as *mut c_void, large, 64);
            assert!(libc::malloc_usable_size(t) < large, "shrinking kept the whole block");
            libc::free(t);
        }
    }

    /// A pinner that pins nothing (no device here): the pool's bookkeeping
    /// alone, which is what GMP's memory functions meet. It takes 50 ms a
    /// block, as a real one takes milliseconds, so that requests made
    /// microseconds apart all find none made yet.
    fn pool_without_device() {
        crate::pinned::install(crate::pinned::Pinner {
            pin: |_, _| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                true
            },
            unpin: |_, _| {},
        });
    }

    /// A pool block of `bytes` bytes, once the pool's thread has made one
    /// for the request that found none.
    fn pool_block(bytes: usize) -> (*mut u8, usize) {
        pool_without_device();
        let asked = std::time::Instant::now();
        loop {
            if let Some(b) = crate::pinned::take(bytes) {
                return b;
            }
            assert!(asked.elapsed().as_secs() < 10, "no pool block of {bytes} bytes after 10 s");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// GMP's functions grow, shrink and free a pool block as the pool's:
    /// growth within it keeps it, growth past it and shrinking below the
    /// pool's sizes move the limbs (kept whole) to malloc's memory and give
    /// the block back, freeing gives it back, and a block given back is
    /// the next one of its size handed out.
    #[test]
    fn pool_blocks_grow_shrink_and_free_as_the_pools() {
        let (p, room) = pool_block(3 << 20);
        assert_eq!(room, 4 << 20, "3 MiB asked: a block of the 4 MiB size");
        assert!(crate::pinned::holds(p, room) && !crate::pinned::holds(p, room + 8));
        let limbs = room / 8;
        unsafe {
            let x = std::slice::from_raw_parts_mut(p as *mut u64, limbs);
            for (i, l) in x.iter_mut().enumerate() {
                *l = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            let same = (embedded::__gmp_reallocate_func)(p.cast(), 3 << 20, room);
            assert_eq!(same as *mut u8, p, "a growth within the block moved it");
            let grown = (embedded::__gmp_reallocate_func)(p.cast(), room, 2 * room) as *mut u64;
            assert_ne!(grown as *mut u8, p);
            assert!(!crate::pinned::holds(p, 8), "the block is still in use after its limbs moved");
            for i in (0..limbs).step_by(4093) {
                assert_eq!(grown.add(i).read(), (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15), "limb {i} lost in the move");
            }
            (embedded::__gmp_free_func)(grown.cast(), 2 * room);
            let (again, _) = pool_block(room);
            assert_eq!(again, p, "the block given back was not handed out again");
            let small = (embedded::__gmp_reallocate_func)(again.cast(), room, 64) as *mut u64;
            assert_eq!(small.read(), 0, "limb 0 lost when shrinking out of the block");
            assert_eq!(small.add(7).read(), 7u64.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            assert!(libc::malloc_usable_size(small.cast()) >= 64, "shrinking left the limbs outside malloc's memory");
            (embedded::__gmp_free_func)(small.cast(), 64);
            let (last, _) = pool_block(room);
            assert_eq!(last, p);
            (embedded::__gmp_free_func)(last.cast(), room);
            assert!(!crate::pinned::holds(p, 8));
        }
    }

    /// An `mpz_t` that GMP's own code grows (`mpz_mul_2exp`, through
    /// `_mpz_realloc`, which build.rs wraps: `mpz::realloc`) to a pinned
    /// block's size takes a pool block once one is kept, its value right;
    /// growths below the pool's sizes stay GMP's.
    #[test]
    fn mpz_growth_takes_pool_blocks() {
        pool_without_device();
        // About 38 MiB: a size no other test asks for.
        let limbs = 5_000_000usize;
        let shift = 64 * (limbs as u64 - 1);
        let asked = std::time::Instant::now();
        unsafe {
            let mut y = std::mem::MaybeUninit::<super::super::__mpz_struct>::uninit();
            let y = y.as_mut_ptr();
            loop {
                super::super::mpz::init(y);
                embedded::mpz_realloc(y, 4);
                assert!(!crate::pinned::holds((*y)._mp_d as *const u8, 8), "four limbs in a pool block");
                (*y)._mp_d.write(77);
                (*y)._mp_size = -1;
                embedded::mpz_mul_2exp(y, y, shift);
                let d = std::slice::from_raw_parts((*y)._mp_d, limbs);
                assert!((*y)._mp_size == -(limbs as libc::c_int) && d[limbs - 1] == 77 && d[..limbs - 1].iter().step_by(997).all(|&l| l == 0), "-77 * 2^{shift} wrong after its growth");
                let pinned = crate::pinned::holds((*y)._mp_d as *const u8, 8 * (*y)._mp_alloc as usize);
                assert!((*y)._mp_alloc as usize >= limbs);
                super::super::mpz::clear(y);
                if pinned {
                    break;
                }
                assert!(asked.elapsed().as_secs() < 10, "no growth of {limbs} limbs took a pool block in 10 s");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }

    /// Two requests of one size that find none kept each ask for a block:
    /// both are then handed out, two blocks (a product's two operands).
    #[test]
    fn each_miss_asks_for_a_block() {
        pool_without_device();
        let size = 12 << 20;
        assert!(crate::pinned::take(size).is_none() && crate::pinned::take(size).is_none(), "a block of 12 MiB was kept before any was asked for");
        // The pool's thread makes them after what the other tests asked
        // for (50 ms a block here); no request meanwhile asks for more.
        let asked = std::time::Instant::now();
        while crate::pinned::kept_for(size) < 2 && asked.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let (a, b) = (crate::pinned::take(size), crate::pinned::take(size));
        let (Some(a), Some(b)) = (a, b) else {
            panic!("two misses of one size: {} block(s) made, not two (pool active {}, bytes {:?})", a.is_some() as u32 + b.is_some() as u32, crate::pinned::active(), crate::pinned::bytes())
        };
        assert_ne!(a.0, b.0, "one block handed out twice");
        unsafe {
            (embedded::__gmp_free_func)(a.0.cast(), a.1);
            (embedded::__gmp_free_func)(b.0.cast(), b.1);
        }
    }

    /// A forked child reads the numbers in pool blocks and frees them
    /// (unmapped there, not given to a pool it cannot pin for), and its
    /// writes never reach the parent's limbs.
    #[test]
    fn a_forked_child_reads_and_frees_pool_blocks() {
        let (p, room) = pool_block(6 << 20);
        let x = p as *mut u64;
        unsafe {
            for i in 0..room / 8 {
                x.add(i).write(!(i as u64));
            }
            let pid = libc::fork();
            assert!(pid >= 0, "fork failed");
            if pid == 0 {
                let seen = (0..room / 8).step_by(511).all(|i| x.add(i).read() == !(i as u64));
                x.write(42);
                (embedded::__gmp_free_func)(p.cast(), room);
                libc::_exit(if seen { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child could not read or free the block: {status:#x}");
            assert_eq!(x.read(), !0u64, "the child's write reached the parent");
            assert!(crate::pinned::holds(p, room), "the child's free took the parent's block");
            (embedded::__gmp_free_func)(p.cast(), room);
        }
    }

    /// `mp_set_memory_functions` with NULLs puts cuGMP's functions back,
    /// whose free knows the pool's blocks; a program's own replace them.
    #[test]
    fn null_memory_functions_are_cugmps() {
        unsafe extern "C" fn counted(n: size_t) -> *mut c_void {
            unsafe { libc::malloc(n) }
        }
        // The other tests of this binary may allocate meanwhile: malloc's
        // blocks, which cuGMP's functions grow and free as their own.
        unsafe {
            set_functions(Some(counted), None, None);
            assert!(!defaults_in_place());
            assert!(embedded::__gmp_allocate_func as *const () == counted as *const ());
            set_functions(None, None, None);
        }
        assert!(defaults_in_place());
    }

    /// The load-time constructor installed the functions (the test binary
    /// runs it too), and a large block from them is advised huge (`hg`),
    /// a small one is not touched.
    #[test]
    fn large_blocks_are_advised_huge() {
        assert!(unsafe { embedded::__gmp_allocate_func as *const () == allocate as *const () }, "GMP's allocate function is not cuGMP's");
        assert!(defaults_in_place());
        let n = 64 << 20;
        let p = unsafe { (embedded::__gmp_allocate_func)(n) };
        let flags = flags_at(p as usize + (8 << 20));
        unsafe { (embedded::__gmp_free_func)(p, n) };
        assert!(flags.split_whitespace().any(|f| f == "hg"), "a block of 64 MiB is not advised huge: {flags}");
        let p = unsafe { (embedded::__gmp_reallocate_func)((embedded::__gmp_allocate_func)(4096), 4096, n) };
        let flags = flags_at(p as usize + (8 << 20));
        unsafe { (embedded::__gmp_free_func)(p, n) };
        assert!(flags.split_whitespace().any(|f| f == "hg"), "a block grown to 64 MiB is not advised huge: {flags}");
    }
}
