//! `mpz_set_str` on any bytes in any base (valid or not), then `mpz_get_str`
//! of the result: return values, values and strings must be GMP's.
#![no_main]

#[path = "harness.rs"]
mod harness;

use harness::{check_set_str, get_str, reference_get_str};
use libfuzzer_sys::fuzz_target;
use std::ffi::CString;

fuzz_target!(|data: &[u8]| {
    let Some((&b, rest)) = data.split_first() else { return };
    // Bases -6..=69: GMP's valid ones (0, 2..=62 to read; -36..=-2 and 2..=62
    // to write) and invalid ones on both sides.
    let base = (b % 76) as i32 - 6;
    // A C string: the bytes up to the first NUL.
    let text: Vec<u8> = rest.iter().copied().take_while(|&c| c != 0).collect();
    let Ok(text) = CString::new(text) else { return };

    let mut ours = check_set_str(&text, base);
    // Write the value back in the same base (often invalid for writing: NULL).
    let value = ours.get();
    assert_eq!(get_str(&mut ours, base), reference_get_str(&value, base), "mpz_get_str base {base}");
});
