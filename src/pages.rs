//! How large fresh buffers are backed: transparent huge pages for blocks
//! that are about to be written in full (a download's destination, radix
//! conversion's levels and digits).
//!
//! Memory written for the first time takes a page fault for every page,
//! and a copy into memory of 4 KiB pages misses the TLB on every page: 80
//! MiB copied on 16 threads into fresh memory took 4.25 ms with small
//! pages, 1.74 ms with huge ones (RESULTS.md, "Huge pages for downloads").
//! In the kernel's "madvise" mode (the GPU machine's) only memory so marked
//! gets huge pages.
//!
//! A leaf: it imports nothing of the crate.

/// A huge page's bytes.
const HUGE: usize = 2 << 20;
/// glibc's largest threshold for serving a block by a mapping of its own
/// (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit hosts).
const HUGE_FROM: usize = 32 << 20;

/// Asks for transparent huge pages on the 2 MiB-aligned interior of the
/// `bytes` bytes at `start`, which the caller is about to write in full
/// (`madvise(MADV_HUGEPAGE)`). Pages not yet there then fault in 2 MiB at a
/// time. Pages already there stay as they are, and a refusal (no huge
/// pages, an older kernel) changes nothing: the advice is all this does.
/// Only from HUGE_FROM bytes: glibc's malloc serves smaller blocks from its
/// heap once one of their size has been freed, memory whose pages are
/// there already, where the advice gains nothing and cost MPFR's
/// `const_pi` (downloads of 25 MB) about 2%. Returns whether it advised.
pub fn prefer_huge_pages(start: *mut u8, bytes: usize) -> bool {
    let Some((from, to)) = huge_interior(start as usize, bytes) else { return false };
    // SAFETY: [from, to) lies inside the caller's block; the advice changes
    // how its pages are backed, never their contents.
    unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) == 0 }
}

/// `n` zero limbs, their pages not yet there and, for a large block,
/// advised to be huge (`prefer_huge_pages`): for a buffer whose first
/// writers are threads or a download.
pub fn fresh_limbs(n: usize) -> Vec<u64> {
    // A zeroed block this large is a fresh mapping: calloc writes nothing.
    let mut v = vec![0u64; n];
    prefer_huge_pages(v.as_mut_ptr() as *mut u8, 8 * n);
    v
}

/// The whole huge pages inside `bytes` bytes at address `start`, as the
/// range [from, to), where the block is HUGE_FROM bytes or more and holds
/// one; else None.
fn huge_interior(start: usize, bytes: usize) -> Option<(usize, usize)> {
    if bytes < HUGE_FROM {
        return None;
    }
    let (from, to) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
    (to > from).then_some((from, to))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice covers exactly the whole huge pages inside a large
    /// block, never a byte outside it, and nothing of a small one.
    #[test]
    fn huge_pages_lie_inside_the_block() {
        let base = 1usize << 40;
        // Aligned at both ends: all of it.
        assert_eq!(huge_interior(base, 32 << 20), Some((base, base + (32 << 20))));
        // Below HUGE_FROM: nothing, aligned or not.
        assert_eq!(huge_interior(base, (32 << 20) - 8), None);
        // Unaligned ends: the pages inside, rounded in at both ends.
        for (offset, bytes) in [(8, 40 << 20), (HUGE - 8, 33 << 20), (4096, (64 << 20) + 24)] {
            let start = base + offset;
            let (from, to) = huge_interior(start, bytes).expect("a large block holds whole huge pages");
            assert!(from >= start && to <= start + bytes, "advice outside the block: offset {offset}, {bytes} bytes");
            assert!(from % HUGE == 0 && to % HUGE == 0 && to > from);
            assert!(from - start < HUGE && start + bytes - to < HUGE, "a whole huge page left out: offset {offset}");
        }
    }

    /// A fresh block is zero, large or small.
    #[test]
    fn fresh_limbs_are_zero() {
        for n in [0, 1, 1000, (HUGE_FROM / 8) + 3] {
            let v = fresh_limbs(n);
            assert!(v.len() == n && v.iter().all(|&l| l == 0));
        }
    }
}
