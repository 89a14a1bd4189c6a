//! The C programs of c_tests/ built three ways and run:
//!   1. against include/cuGMP.h, linked only to libcugmp.so,
//!   2. against the embedded GMP's gmp.h, linked only to libcugmp.so,
//!   3. against gmp.h and GMP's static libgmp.a (the reference).
//! The three outputs must be byte-identical, and builds 1 and 2 must show
//! (CUGMP_LOG=1) that cuGMP served them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn build(src: &Path, out: &Path, cugmp_header: bool, stage: &Path) {
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-Wno-unused-result"]).arg(src).arg("-o").arg(out);
    if cugmp_header {
        cc.arg("-DUSE_CUGMP_H").arg("-I").arg(stage.join("include"));
    } else {
        cc.arg("-I").arg(common::gmp_include_dir());
    }
    match stage.to_str() {
        Some(_) if out.to_string_lossy().ends_with("-ref") => {
            cc.arg(common::gmp_static_lib());
        }
        _ => {
            let lib = stage.join("lib");
            cc.arg(format!("-L{}", lib.display())).arg("-lcugmp").arg(format!("-Wl,-rpath,{}", lib.display()));
        }
    }
    common::run_ok(&mut cc);
}

fn run(exe: &Path, args: &[&str], log: bool) -> (String, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    if log {
        cmd.env("CUGMP_LOG", "1");
    }
    let out = common::run_ok(&mut cmd);
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn three_ways(name: &str, args: &[&str]) {
    let stage = common::stage();
    let src = common::manifest().join("c_tests").join(format!("{name}.c"));
    let bin = |suffix: &str| -> PathBuf { stage.join(format!("{name}-{suffix}")) };
    build(&src, &bin("cugmp-h"), true, &stage);
    build(&src, &bin("gmp-h"), false, &stage);
    build(&src, &bin("ref"), false, &stage);
    let needed = common::run_ok(Command::new("readelf").arg("-d").arg(bin("cugmp-h")));
    let needed = String::from_utf8_lossy(&needed.stdout);
    assert!(needed.contains("[libcugmp.so.10]") && !needed.contains("[libgmp.so"), "{needed}");

    let (reference, _) = run(&bin("ref"), args, false);
    assert!(!reference.is_empty());
    // Times differ between runs: compare everything but the seconds column.
    let strip = |s: &str| s.lines().map(|l| l.split(" seconds=").next().unwrap_or(l).to_string()).collect::<Vec<_>>();
    for variant in ["cugmp-h", "gmp-h"] {
        let (out, log) = run(&bin(variant), args, true);
        assert_eq!(strip(&out), strip(&reference), "{name} built with {variant} differs from GMP");
        assert!(log.lines().any(|l| l.starts_with("cugmp: ")), "{name}-{variant} was not served by cuGMP:\n{log}");
    }
}

#[test]
fn mpz_ops_matches_gmp() {
    three_ways("mpz_ops", &[]);
}

#[test]
fn demo_matches_gmp() {
    three_ways("demo_factorial", &["20000", "100000"]);
}

/// The C++ example on gmpxx.h and the system's libgmpxx: built once, run on
/// the system's libgmp (the reference) and on cuGMP through the
/// libgmp.so.10 alias; the outputs must be identical and cuGMP must have
/// served the second run.
#[test]
fn gmpxx_program_runs_on_cugmp() {
    let stage = common::stage();
    let src = common::manifest().join("c_tests/fib_gmpxx.cpp");
    let exe = stage.join("fib_gmpxx");
    common::run_ok(Command::new("c++").args(["-O2", "-std=c++17", "-Wall", "-Werror"]).arg(&src).arg("-o").arg(&exe).args(["-lgmpxx", "-lgmp"]));
    let reference = common::run_ok(Command::new(&exe).arg("50000"));
    let mut on_cugmp = Command::new(&exe);
    on_cugmp.arg("50000").env("LD_LIBRARY_PATH", stage.join("alias")).env("CUGMP_LOG", "1");
    let out = common::run_ok(&mut on_cugmp);
    assert!(!reference.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&reference.stdout), "gmpxx program differs on cuGMP");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("libcugmp") && log.contains("loaded"), "cuGMP did not serve the gmpxx program:\n{log}");
}
