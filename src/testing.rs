//! Helpers the unit tests of several modules share (test builds only).
//!
//! A leaf: it imports nothing of the crate.

/// The next number of Marsaglia's xorshift64 sequence from `seed` (which
/// must not be 0): random enough for operands, the same on every machine.
pub fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// `n` limbs of `xorshift` from `seed`.
pub fn random_limbs(n: usize, seed: &mut u64) -> Vec<u64> {
    (0..n).map(|_| xorshift(seed)).collect()
}
