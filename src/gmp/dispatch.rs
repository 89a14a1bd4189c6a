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

/// Word `index` of GMP's table, filled.
fn word(index: usize) -> *mut usize {
    debug_assert!(index < WORDS);
    // SAFETY: within the table's 42 words (the enums' values).
    unsafe { (table() as *mut usize).add(index) }
}

/// Puts `f` in `slot` and returns what GMP had there. `f` must have the
/// slot's C signature and compute what GMP's does. Called from the
/// load-time constructor, before any thread of the program calls GMP.
pub fn replace(slot: Slot, f: usize) -> usize {
    let p = word(slot as usize);
    // SAFETY: a word of GMP's table; a word write is atomic on the
    // processors a fat build runs on.
    unsafe {
        let old = p.read_volatile();
        p.write_volatile(f);
        old
    }
}

/// What `slot` holds now.
pub fn function(slot: Slot) -> usize {
    // SAFETY: a word of GMP's table.
    unsafe { word(slot as usize).read_volatile() }
}

/// The shorter operand's length from which GMP's products take Karatsuba's
/// step over its schoolbook loop, as its table holds it for this
/// processor.
pub fn mul_toom22_threshold() -> usize {
    threshold(Threshold::MulToom22)
}

/// A threshold as GMP's table holds it for this processor.
pub fn threshold(which: Threshold) -> usize {
    // SAFETY: a word of GMP's table.
    unsafe { word(which as usize).read_volatile() }
}

/// Sets a threshold. Called from the load-time constructor, before any
/// thread of the program calls GMP; every value gives GMP's exact results,
/// only its speed depends on it.
pub fn set_threshold(which: Threshold, limbs: usize) {
    // SAFETY: as in `replace`.
    unsafe { word(which as usize).write_volatile(limbs) }
}
