//! MPFR built as a shared library against GMP's own libgmp.so.10
//! (scripts/mpfr-build.sh), and benches/programs/mpfr_ops.c on it: the same
//! binary and the same libmpfr.so.6, run on GMP's library and then on
//! libcugmp.so through the libgmp.so.10 alias, must print the same results;
//! the first run must not be cuGMP's and the second must.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn mpfr_through_the_alias_matches_gmp() {
    let built = common::run_ok(Command::new("bash").arg(common::manifest().join("scripts/mpfr-build.sh")));
    let prefix = PathBuf::from(String::from_utf8_lossy(&built.stdout).lines().last().unwrap_or_default().trim());
    assert!(prefix.join("lib/libmpfr.so.6").is_file() && prefix.join("gmp-real/libgmp.so.10").is_file(), "{}", prefix.display());
    let stage = common::stage();
    let exe = stage.join("mpfr_ops");
    common::run_ok(
        Command::new("cc")
            .args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-I"])
            .arg(common::gmp_include_dir())
            .arg("-I")
            .arg(prefix.join("include"))
            .arg(common::manifest().join("benches/programs/mpfr_ops.c"))
            .arg(format!("-L{}", prefix.join("lib").display()))
            .arg(format!("-L{}", prefix.join("gmp-real").display()))
            .args(["-l:libmpfr.so.6", "-l:libgmp.so.10", "-o"])
            .arg(&exe),
    );
    // Each row without its seconds: | work, bits | seconds | checksum |.
    let run = |gmp: &Path, bits: &str| -> (Vec<String>, String) {
        let path = format!("{}:{}", gmp.display(), prefix.join("lib").display());
        let out = common::run_ok(common::program(&exe).arg(bits).env("LD_LIBRARY_PATH", path).env("CUGMP_LOG", "1"));
        let rows = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| {
                let cells: Vec<&str> = l.split('|').collect();
                assert_eq!(cells.len(), 5, "{l}");
                format!("{}|{}", cells[1], cells[3])
            })
            .collect();
        (rows, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for bits in ["1000", "300000"] {
        let (want, gmp_log) = run(&prefix.join("gmp-real"), bits);
        assert_eq!(want.len(), 4, "{want:?}");
        assert!(!gmp_log.contains("cugmp: "), "GMP's run was served by cuGMP:\n{gmp_log}");
        let (got, log) = run(&stage.join("alias"), bits);
        assert!(log.lines().any(|l| l.starts_with("cugmp: libcugmp")), "the alias did not load cuGMP:\n{log}");
        assert_eq!(got, want, "MPFR at {bits} bits on cuGMP differs from GMP");
    }
}
