//! `mpz_set_str` on any bytes in any base (valid or not), then `mpz_get_str`
//! of the result: return values, values and strings must be GMP's.
#![no_main]

#[path = "harness.rs"]
mod harness;

use gmp_mpfr_sys::gmp;
use harness::{api, get_str, reference_get_str, same, Z};
use libfuzzer_sys::fuzz_target;
use rug::Integer;
use std::ffi::CString;

fuzz_target!(|data: &[u8]| {
    let Some((&b, rest)) = data.split_first() else { return };
    // Bases -6..=69: GMP's valid ones (0, 2..=62 to read; -36..=-2 and 2..=62
    // to write) and invalid ones on both sides.
    let base = (b % 76) as i32 - 6;
    // A C string: the bytes up to the first NUL.
    let text: Vec<u8> = rest.iter().copied().take_while(|&c| c != 0).collect();
    let Ok(text) = CString::new(text) else { return };

    let mut ours = Z::from(&Integer::from(7));
    let got = unsafe { (api().set_str)(ours.ptr(), text.as_ptr(), base) };
    let mut want_value = Integer::from(7);
    let want = unsafe { gmp::mpz_set_str(want_value.as_raw_mut(), text.as_ptr(), base) };
    assert_eq!(got, want, "mpz_set_str return value, base {base}");
    if want == 0 {
        same(&format!("mpz_set_str base {base}"), &ours.get(), &want_value);
    }
    // Write the value back in the same base (often invalid for writing: NULL).
    let value = ours.get();
    assert_eq!(get_str(&mut ours, base), reference_get_str(&value, base), "mpz_get_str base {base}");
});
