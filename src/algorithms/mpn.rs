//! GMP's `mpn` sums, differences and shifts as cuGMP exports them: a
//! program's own calls (MPFR's, on its mantissas), not the embedded GMP's,
//! whose internal calls stay its own. Operands from the CPU engine's
//! THREADED_LIMBS limbs go to the host's cores: one thread moves a few GB/s,
//! and MPFR's `const_pi` at 10^8 bits, whose additions and shifts pass over
//! 1.56 x 10^6 limbs, ran 1.16x faster with them there (RESULTS.md,
//! "Python: gmpy2, MPFR and mpmath"). The GPU is not asked: the operands
//! would cross PCIe at about the rate the cores pass over them ("Linear
//! operations end to end").
//!
//! It may use the CPU engine and the ground floor; it knows nothing of the
//! GPU.

use crate::cpu;
use crate::gmp::{mp_limb_t, mp_size_t};

/// Whether an operation of `n` limbs stays on one thread (GMP's own): the
/// exports' fast path asks this first. A size below 1, which GMP does not
/// take, goes to GMP as it would without cuGMP.
#[inline(always)]
pub fn on_one_thread(n: mp_size_t) -> bool {
    n < cpu::THREADED_LIMBS as mp_size_t
}

/// GMP's mpn_add_n (`subtract` false) or mpn_sub_n on the host's cores.
///
/// # Safety
/// GMP's contract for those functions.
pub unsafe fn add_or_sub_n(rp: *mut mp_limb_t, up: *const mp_limb_t, vp: *const mp_limb_t, n: mp_size_t, subtract: bool) -> mp_limb_t {
    // SAFETY: GMP's contract, which is cpu::add_or_sub_n's.
    unsafe { cpu::add_or_sub_n(rp, up, vp, n as usize, subtract) }
}

/// GMP's mpn_lshift (`left`) or mpn_rshift on the host's cores where the
/// result is the operand itself or apart from it; GMP's one thread for the
/// overlaps GMP allows besides (rp above up for lshift, below for rshift)
/// and for shift counts outside 1 to 63, which GMP does not take.
///
/// # Safety
/// GMP's contract for those functions.
pub unsafe fn shift(rp: *mut mp_limb_t, up: *const mp_limb_t, n: mp_size_t, cnt: libc::c_uint, left: bool) -> mp_limb_t {
    let len = n as usize;
    let (r, u) = (rp as usize, up as usize);
    let bytes = len * std::mem::size_of::<mp_limb_t>();
    let apart = r + bytes <= u || u + bytes <= r;
    if (1..=63).contains(&cnt) && (r == u || apart) {
        // SAFETY: rp is up or apart from it; 1 <= cnt <= 63; GMP's contract.
        return unsafe { cpu::shift_n(rp, up, len, cnt, left) };
    }
    // SAFETY: GMP's contract.
    unsafe {
        if left {
            crate::gmp::embedded::mpn_lshift(rp, up, n, cnt)
        } else {
            crate::gmp::embedded::mpn_rshift(rp, up, n, cnt)
        }
    }
}
