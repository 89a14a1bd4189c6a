//! The C programs of c_tests/ built three ways and run:
//! 1. against include/cuGMP.h, linked only to libcugmp.so,
//! 2. against the embedded GMP's gmp.h, linked only to libcugmp.so,
//! 3. against gmp.h and GMP's static libgmp.a (the reference).
//!
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
    let mut cmd = common::program(exe);
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
    let reference = common::run_ok(common::program(&exe).arg("50000"));
    let mut on_cugmp = common::program(&exe);
    on_cugmp.arg("50000").env("LD_LIBRARY_PATH", stage.join("alias")).env("CUGMP_LOG", "1");
    let out = common::run_ok(&mut on_cugmp);
    assert!(!reference.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&reference.stdout), "gmpxx program differs on cuGMP");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("libcugmp") && log.contains("loaded"), "cuGMP did not serve the gmpxx program:\n{log}");
}

/// c_tests/bad_input.c, one case per run, on the reference GMP and on cuGMP
/// (both headers): the same stdout, the same stderr and the same way of ending (exit status or signal).
/// Under CUGMP_GPU=force (the GPU machine) the overflowing cases reach the
/// GPU engine first, which must refuse them and leave GMP to stop the program.
#[test]
fn bad_input_behaves_as_in_gmp() {
    use std::os::unix::process::ExitStatusExt;
    let stage = common::stage();
    let src = common::manifest().join("c_tests/bad_input.c");
    let bin = |suffix: &str| -> PathBuf { stage.join(format!("bad_input-{suffix}")) };
    build(&src, &bin("cugmp-h"), true, &stage);
    build(&src, &bin("gmp-h"), false, &stage);
    build(&src, &bin("ref"), false, &stage);
    let outcome = |exe: &Path, case: &str| {
        let out = common::program(exe).arg(case).env_remove("CUGMP_LOG").output().expect("run bad_input");
        let end = match (out.status.code(), out.status.signal()) {
            (Some(code), _) => format!("exit {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "unknown".to_string(),
        };
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), end)
    };
    for case in ["bases", "get_str_null", "mul_2exp_overflow", "init2_overflow", "realloc2_overflow", "pow_overflow"] {
        let reference = outcome(&bin("ref"), case);
        if case.ends_with("overflow") {
            // The reference must show what is being compared: GMP 6.3 stops
            // the program (its overflow handler raises SIGFPE).
            assert!(reference.2.starts_with("signal"), "{case}: GMP did not stop the program: {reference:?}");
        } else {
            assert_eq!(reference.2, "exit 0", "{case}: {reference:?}");
        }
        for variant in ["cugmp-h", "gmp-h"] {
            assert_eq!(outcome(&bin(variant), case), reference, "bad_input {case} built with {variant} differs from GMP");
        }
    }
}

/// The C programs on libcugmp.so (CPU engine) under valgrind's memcheck:
/// no invalid access, no use of uninitialised memory, no definite leak. A
/// planted use-after-free shows that valgrind runs and that its errors fail
/// this test.
#[test]
fn c_programs_clean_under_valgrind() {
    let stage = common::stage();
    let have = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(have, "valgrind is not installed (scripts/install-prereqs.sh installs it)");
    let memcheck = |exe: &Path, args: &[&str]| {
        let out = Command::new("valgrind")
            .args(["-q", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite", "--track-origins=yes"])
            .arg(exe)
            .args(args)
            .env("CUGMP_GPU", "off")
            .output()
            .expect("run valgrind");
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };

    let planted = stage.join("planted_use_after_free.c");
    std::fs::write(&planted, "#include <stdlib.h>\nint main(void) { volatile char *p = malloc(8); p[0] = 1; free((void *)p); return p[0] == 1 ? 0 : 1; }\n").unwrap();
    let planted_exe = stage.join("planted_use_after_free");
    common::run_ok(Command::new("cc").arg(&planted).arg("-o").arg(&planted_exe));
    let (code, log) = memcheck(&planted_exe, &[]);
    assert_eq!(code, Some(99), "valgrind missed a planted use-after-free:\n{log}");

    for (name, args) in [("mpz_ops", &[][..]), ("demo_factorial", &["3000", "20000"][..]), ("bad_input", &["bases"][..]), ("bad_input", &["get_str_null"][..])] {
        let exe = stage.join(format!("{name}-valgrind"));
        if !exe.exists() {
            build(&common::manifest().join("c_tests").join(format!("{name}.c")), &exe, true, &stage);
        }
        let (code, log) = memcheck(&exe, args);
        assert_eq!(code, Some(0), "{name} {args:?} under valgrind:\n{log}");
    }
}

/// CUGMP_STATS, CUGMP_PROFILE and CUGMP_LOG see every call the routing
/// owns, also those below the GPU's size that otherwise take the fast path
/// straight to the embedded GMP; with none set, the library says nothing.
/// The demo makes one mpz_mul and three mpz_get_str.
#[test]
fn stats_and_log_see_every_routed_call() {
    let stage = common::stage();
    let src = common::manifest().join("c_tests/demo_factorial.c");
    let exe = stage.join("demo_factorial-stats");
    build(&src, &exe, true, &stage);
    let stderr = |vars: &[(&str, &str)]| {
        let mut cmd = common::program(&exe);
        cmd.args(["300", "3000"]).env_remove("CUGMP_LOG").env_remove("CUGMP_STATS").env_remove("CUGMP_PROFILE").env("CUGMP_GPU", "off");
        cmd.envs(vars.iter().copied());
        String::from_utf8_lossy(&common::run_ok(&mut cmd).stderr).into_owned()
    };
    assert_eq!(stderr(&[]), "", "the library spoke unasked");
    let table = stderr(&[("CUGMP_STATS", "1")]);
    let cpu_calls = |op: &str| -> Option<u64> {
        table.lines().find(|l| l.split_whitespace().next() == Some(op)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
    };
    assert!(table.contains("cuGMP statistics"), "{table}");
    assert_eq!((cpu_calls("mul"), cpu_calls("get_str")), (Some(1), Some(3)), "{table}");
    // The profile: a row per operation and size, calls in the third column.
    let profile = stderr(&[("CUGMP_PROFILE", "1")]);
    let calls = |op: &str| -> u64 {
        profile.lines().filter(|l| l.split_whitespace().next() == Some(op)).filter_map(|l| l.split_whitespace().nth(2)?.parse::<u64>().ok()).sum()
    };
    assert!(profile.contains("cuGMP profile"), "{profile}");
    assert_eq!((calls("mul"), calls("get_str")), (1, 3), "{profile}");
    let log = stderr(&[("CUGMP_LOG", "1")]);
    assert_eq!(log.lines().filter(|l| l.starts_with("cugmp: get_str ") && l.ends_with("-> cpu")).count(), 3, "{log}");
    assert_eq!(log.lines().filter(|l| l.starts_with("cugmp: mul ") && l.ends_with("-> cpu")).count(), 1, "{log}");
}

/// The counts of threads that have ended are kept: benches/programs/pi.c
/// makes the same products on one thread and on three (the same tree of
/// splits, its halves on threads that end before the program does), so
/// CUGMP_STATS's CPU calls and CUGMP_PROFILE's calls of each operation
/// must be the same both ways.
#[test]
fn counts_of_ended_threads_add_up() {
    let stage = common::stage();
    let exe = stage.join("pi-cugmp-counts");
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror", "-I"]).arg(common::gmp_include_dir());
    let lib = stage.join("lib");
    cc.arg(common::manifest().join("benches/programs/pi.c")).arg("-o").arg(&exe);
    cc.arg(format!("-L{}", lib.display())).arg("-lcugmp").arg(format!("-Wl,-rpath,{}", lib.display())).arg("-lpthread");
    common::run_ok(&mut cc);
    // Calls per operation: CUGMP_STATS's, CUGMP_PROFILE's.
    type Sums = Vec<(String, u64)>;
    let counts = |threads: &str| -> (Sums, Sums) {
        let mut cmd = common::program(&exe);
        cmd.args(["20000", threads]).env_remove("CUGMP_LOG").env("CUGMP_STATS", "1").env("CUGMP_PROFILE", "1").env("CUGMP_GPU", "off");
        let err = String::from_utf8_lossy(&common::run_ok(&mut cmd).stderr).into_owned();
        // Each table from its title to the other's (atexit decides their order).
        let table = |title: &str, other: &str| -> String {
            let from = err.split_once(title).map_or("", |(_, t)| t);
            from.split_once(other).map_or(from, |(t, _)| t).to_string()
        };
        let (stats, profile) = (table("cuGMP statistics", "cuGMP profile"), table("cuGMP profile", "cuGMP statistics"));
        // Statistics: op, CPU calls. Profile: op (one word or two), sizes, calls.
        let rows = |table: &str, column: usize| -> Sums {
            let mut sums = std::collections::BTreeMap::new();
            for l in table.lines() {
                let w: Vec<&str> = l.split_whitespace().collect();
                let words = if w.first() == Some(&"gmp-internal") { 2 } else { 1 };
                if let (Some(op), Some(n)) = (w.get(..words), w.get(words + column).and_then(|v| v.parse::<u64>().ok())) {
                    *sums.entry(op.join(" ")).or_insert(0) += n;
                }
            }
            sums.into_iter().collect()
        };
        (rows(&stats, 0), rows(&profile, 1))
    };
    let (one, three) = (counts("1"), counts("3"));
    for (what, rows) in [("CUGMP_STATS", &one.0), ("CUGMP_PROFILE", &one.1)] {
        assert!(rows.iter().any(|(op, n)| op == "mul" && *n > 1000), "{what}: too few products counted: {rows:?}");
    }
    assert_eq!(one.0, three.0, "CUGMP_STATS's CPU calls on one thread and on three");
    assert_eq!(one.1, three.1, "CUGMP_PROFILE's calls on one thread and on three");
}

/// benches/programs/`name`.c built warning-free on static GMP (`name`-ref)
/// and on libcugmp.so (`name`-cugmp), in that order.
fn program_both_ways(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let stage = common::stage();
    let src = common::manifest().join(format!("benches/programs/{name}.c"));
    let (reference, ours) = (stage.join(format!("{name}-ref")), stage.join(format!("{name}-cugmp")));
    for (exe, link_static) in [(&reference, true), (&ours, false)] {
        let mut cc = Command::new("cc");
        cc.args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-I"]).arg(common::gmp_include_dir()).arg(&src).arg("-o").arg(exe);
        if link_static {
            cc.arg(common::gmp_static_lib());
        } else {
            let lib = stage.join("lib");
            cc.arg(format!("-L{}", lib.display())).arg("-lcugmp").arg(format!("-Wl,-rpath,{}", lib.display()));
        }
        common::run_ok(cc.arg("-lpthread"));
    }
    (reference, ours)
}

/// benches/programs/pi.c (Chudnovsky: mpz binary splitting, mpf square root
/// and division, mpf_get_str) on static GMP and on libcugmp.so, on one
/// thread and on three: the same digits every way.
#[test]
fn pi_program_matches_gmp() {
    let (reference, ours) = program_both_ways("pi");
    let digits = |exe: &Path, threads: &str| {
        let out = common::run_ok(common::program(exe).args(["20000", threads]));
        String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().to_string()
    };
    let want = digits(&reference, "1");
    assert!(want.starts_with("digits=20000 exp=1 ") && want.contains("head=314159265358"), "{want}");
    for threads in ["1", "3"] {
        assert_eq!(digits(&ours, threads), want, "pi on libcugmp.so, {threads} threads");
    }
    assert_eq!(digits(&reference, "3"), want);
}

/// benches/programs/transfers.c builds warning-free against libcugmp.so
/// and tables every way of moving limbs it names; without a GPU
/// (CUGMP_GPU=off) each cell says so rather than a rate.
#[test]
fn transfers_program_tables_every_way() {
    let stage = common::stage();
    let exe = stage.join("transfers-cugmp");
    let lib = stage.join("lib");
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Werror"]);
    cc.arg(common::manifest().join("benches/programs/transfers.c")).arg("-o").arg(&exe);
    cc.arg(format!("-L{}", lib.display())).arg("-lcugmp").arg(format!("-Wl,-rpath,{}", lib.display()));
    common::run_ok(&mut cc);
    let mut cmd = common::program(&exe);
    cmd.args(["4096,70000", "2"]).env("CUGMP_GPU", "off");
    let out = String::from_utf8_lossy(&common::run_ok(&mut cmd).stdout).into_owned();
    let header = out.lines().next().unwrap_or_default();
    for how in ["up", "up-gap", "down", "down-gap", "abi", "pinned-operands"] {
        assert!(header.contains(&format!(" {how} |")), "no column {how}: {out}");
    }
    for n in ["4096", "70000"] {
        let row = out.lines().find(|l| l.starts_with(&format!("| {n} |"))).unwrap_or_else(|| panic!("no row for {n} limbs: {out}"));
        assert_eq!(row.matches("(no GPU)").count(), 6, "{n} limbs without a GPU: {row}");
    }
}

/// benches/programs/chain.c (products of products, timed) builds
/// warning-free on static GMP and on libcugmp.so, and its checksums of
/// each product and square are GMP's on the CPU engine, its operands made
/// by products and by mpz_urandomb.
#[test]
fn chain_program_matches_gmp() {
    let (reference, ours) = program_both_ways("chain");
    let checksums = |exe: &Path, mode: &str| {
        let out = common::run_ok(common::program(exe).args(["3000,20000", "1", mode]));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let rows: Vec<String> = text.lines().filter(|l| l.starts_with("| 3000 |") || l.starts_with("| 20000 |")).map(|l| l.rsplit('|').nth(1).unwrap_or_default().trim().to_string()).collect();
        assert_eq!(rows.len(), 2, "{text}");
        rows
    };
    let mut seen = Vec::new();
    for mode in ["products", "random"] {
        let want = checksums(&reference, mode);
        assert!(want.iter().all(|c| c.split(' ').count() == 2 && c != "0 0"), "{want:?}");
        assert_eq!(checksums(&ours, mode), want, "chain's products ({mode}) on libcugmp.so");
        seen.push(want);
    }
    assert_ne!(seen[0], seen[1], "random operands gave the products' checksums");
}
