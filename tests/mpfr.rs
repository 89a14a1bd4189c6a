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
    // Each row without its seconds: | work, bits | seconds | checksum |;
    // and the run's stderr (with `log`, CUGMP_LOG=1: every call logged).
    let run = |gmp: &Path, bits: &str, works: &[&str], log: bool| -> (Vec<String>, String) {
        let path = format!("{}:{}", gmp.display(), prefix.join("lib").display());
        let mut cmd = common::program(&exe);
        cmd.arg(bits).args(works).env("LD_LIBRARY_PATH", path);
        if log {
            cmd.env("CUGMP_LOG", "1");
        }
        let out = common::run_ok(&mut cmd);
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
    // The constants and functions at two sizes; at the small one also the
    // many calls of a program at small precision.
    let all = ["const_pi", "const_log2", "exp", "log", "arith", "elementary"];
    let (gmp, alias) = (prefix.join("gmp-real"), stage.join("alias"));
    let (_, gmp_log) = run(&gmp, "1000", &["const_pi"], true);
    assert!(!gmp_log.contains("cugmp: "), "GMP's run was served by cuGMP:\n{gmp_log}");
    let (_, log) = run(&alias, "1000", &["const_pi"], true);
    assert!(log.lines().any(|l| l.starts_with("cugmp: libcugmp")), "the alias did not load cuGMP:\n{log}");
    for (bits, works) in [("1000", &all[..]), ("300000", &all[..4])] {
        let (want, _) = run(&gmp, bits, works, false);
        assert_eq!(want.len(), works.len(), "{want:?}");
        let (got, _) = run(&alias, bits, works, false);
        assert_eq!(got, want, "MPFR at {bits} bits on cuGMP differs from GMP");
    }
}
