//! The embedded GMP's fat dispatch table (`__gmpn_cpuvec`, gmp-impl.h's
//! `struct cpuvec_t`): the loops its other routines call through, its
//! schoolbook products among them, and the thresholds its products read.
//! GMP fills the table at its first call; [`replace`] and
//! [`set_threshold`] fill it first, then put another loop in one slot (the
//! CPU engine's, or another of GMP's own) or another size in one
//! threshold.
//!
//! It knows the table's layout, nothing of the functions put there.

use super::embedded;

/// Slots of `struct cpuvec_t` (GMP 6.3's gmp-impl.h): 37 function pointers
/// in alphabetical order, then five thresholds.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    Addmul1 = 3,
    Mul1 = 25,
    MulBasecase = 26,
    SqrBasecase = 33,
}

/// The thresholds after the pointers, in limbs.
#[derive(Clone, Copy, Debug)]
pub enum Threshold {
    MulToom22 = 37,
    MulToom33 = 38,
    SqrToom2 = 39,
    SqrToom3 = 40,
    Bmod1ToMod1 = 41,
}

const WORDS: usize = 42;

unsafe extern "C" {
    static mut __gmpn_cpuvec: [usize; WORDS];
    static __gmpn_cpuvec_initialized: libc::c_int;
}

/// GMP's table, filled.
fn table() -> *mut [usize; WORDS] {
    // SAFETY: GMP's own initialiser, which every fat entry point runs on
    // first use; it fills the table from CPUID and sets the flag.
    unsafe {
        if std::ptr::read_volatile(&raw const __gmpn_cpuvec_initialized) == 0 {
            embedded::mpn_cpuvec_init();
        }
    }
    &raw mut __gmpn_cpuvec
}

/// Puts `f` in `slot` and returns what GMP had there. `f` must have the
/// slot's C signature and compute what GMP's does. Called from the
/// load-time constructor, before any thread of the program calls GMP.
pub fn replace(slot: Slot, f: usize) -> usize {
    let t = table();
    // SAFETY: a word of GMP's table, within its 42; a word write is atomic
    // on the processors a fat build runs on.
    unsafe {
        let p = (t as *mut usize).add(slot as usize);
        let old = p.read_volatile();
        p.write_volatile(f);
        old
    }
}

/// The shorter operand's length from which GMP's products take Karatsuba's
/// step over its schoolbook loop, as its table holds it for this
/// processor.
pub fn mul_toom22_threshold() -> usize {
    threshold(Threshold::MulToom22)
}

/// A threshold as GMP's table holds it for this processor.
pub fn threshold(which: Threshold) -> usize {
    let t = table();
    // SAFETY: a word of GMP's table, within its 42, filled by table().
    unsafe { (t as *const usize).add(which as usize).read_volatile() }
}

/// Sets a threshold. Called from the load-time constructor, before any
/// thread of the program calls GMP; every value gives GMP's exact results,
/// only its speed depends on it.
pub fn set_threshold(which: Threshold, limbs: usize) {
    let t = table();
    // SAFETY: as in `replace`.
    unsafe { (t as *mut usize).add(which as usize).write_volatile(limbs) }
}

/// What `slot` holds now.
pub fn function(slot: Slot) -> usize {
    let t = table();
    // SAFETY: a word of GMP's table, within its 42, filled by table().
    unsafe { (t as *const usize).add(slot as usize).read_volatile() }
}
