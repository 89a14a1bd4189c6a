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
//! A program's own `mp_set_memory_functions` replaces them as it replaces
//! GMP's; with NULLs it gets GMP's plain defaults back.

use super::embedded;
use crate::pages::prefer_huge_pages;
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

/// Makes `allocate` and `reallocate` the functions GMP calls, where GMP's
/// own defaults are still in place. Called once, from the load-time
/// constructor, before any other thread of the library runs.
pub fn install() {
    // SAFETY: GMP's function pointers, written here only while they hold
    // GMP's defaults (no program has set its own yet), from the loader's
    // thread; GMP's free is kept (the blocks are malloc's).
    unsafe {
        let p = &raw mut embedded::__gmp_allocate_func;
        let r = &raw mut embedded::__gmp_reallocate_func;
        if *p as *const () == embedded::gmp_default_allocate as *const () && *r as *const () == embedded::gmp_default_reallocate as *const () {
            p.write(allocate);
            r.write(reallocate);
        }
    }
}

/// Whether GMP's memory functions are its defaults or those `install`
/// put in their place (thread safe, malloc's blocks), not a program's.
pub fn defaults_in_place() -> bool {
    // SAFETY: reads of GMP's function pointers.
    unsafe {
        let (a, r, f) = (embedded::__gmp_allocate_func as *const (), embedded::__gmp_reallocate_func as *const (), embedded::__gmp_free_func as *const ());
        (a == embedded::gmp_default_allocate as *const () || a == allocate as *const ())
            && (r == embedded::gmp_default_reallocate as *const () || r == reallocate as *const ())
            && f == embedded::gmp_default_free as *const ()
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
