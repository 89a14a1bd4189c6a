//! The `mpf` functions cuGMP defines itself: `mpf_get_str` (src/algorithms/text.rs;
//! at once to the embedded GMP below the sizes radix conversion by levels
//! takes: `routed!`). Every other `mpf` function is the embedded GMP's.

use super::routed;
use crate::algorithms::text;
use crate::gmp::{embedded, mp_exp_t, mpf_srcptr};
use libc::{c_char, c_int, size_t};

#[unsafe(no_mangle)]
pub unsafe extern "C" fn __gmpf_get_str(s: *mut c_char, exp: *mut mp_exp_t, base: c_int, n_digits: size_t, op: mpf_srcptr) -> *mut c_char {
    routed!("mpf_get_str", text::mpf_get_str_on_cpu(op) => embedded::mpf_get_str(s, exp, base, n_digits, op), text::mpf_get_str(s, exp, base, n_digits, op))
}
