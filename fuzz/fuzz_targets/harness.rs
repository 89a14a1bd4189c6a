//! What both fuzz targets share: the library under test (libcugmp.so,
//! `CUGMP_LIBRARY` or ../target/release/libcugmp.so) opened in its own
//! symbol scope, its functions and an `mpz_t` of it, from the same code the
//! differential tests use (tests/common). The reference is GMP through rug;
//! `api()` proves the two are different libraries before the first input.
#![allow(dead_code)]

#[path = "../../tests/common/library.rs"]
mod library;
#[path = "../../tests/common/api.rs"]
mod api;

pub use api::*;

/// The library `api()` opens unless CUGMP_LIBRARY names another.
fn default_library() -> std::path::PathBuf {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/libcugmp.so").into()
}
