//! Existing binaries linked to the system's libgmp.so.10 run on cuGMP unchanged:
//! through LD_PRELOAD and through a `libgmp.so.10` alias on LD_LIBRARY_PATH.
//! Same output as on the system's GMP, and CUGMP_LOG=1 shows cuGMP served.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

enum Route {
    System,
    Preload,
    Alias,
}

fn run(exe: &Path, args: &[&str], route: Route) -> (String, String) {
    let stage = common::stage();
    let mut cmd = common::program(exe);
    cmd.args(args).env("CUGMP_LOG", "1");
    match route {
        Route::System => {}
        Route::Preload => {
            cmd.env("LD_PRELOAD", stage.join("lib/libcugmp.so.10"));
        }
        Route::Alias => {
            cmd.env("LD_LIBRARY_PATH", stage.join("alias"));
        }
    }
    let out = common::run_ok(&mut cmd);
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn assert_served(exe: &Path, args: &[&str]) {
    let linked = common::run_ok(Command::new("ldd").arg(exe));
    assert!(String::from_utf8_lossy(&linked.stdout).contains("libgmp.so.10"), "{} is not linked to libgmp.so.10", exe.display());
    let (system, system_log) = run(exe, args, Route::System);
    assert!(!system_log.contains("cugmp: "), "the plain run already used cuGMP");
    for route in [Route::Preload, Route::Alias] {
        let (out, log) = run(exe, args, route);
        assert_eq!(out, system, "{} output differs on cuGMP", exe.display());
        assert!(log.lines().any(|l| l.starts_with("cugmp: ")), "cuGMP did not serve {}:\n{log}", exe.display());
    }
}

#[test]
fn coreutils_expr_runs_on_cugmp() {
    let expr = PathBuf::from("/usr/bin/expr");
    assert_served(&expr, &["123456789012345678901234567890123456789", "*", "98765432109876543210987654321"]);
    assert_served(&expr, &["-340282366920938463463374607431768211456", "/", "18446744073709551617"]);
}

#[test]
fn program_built_against_system_libgmp_runs_on_cugmp() {
    let stage = common::stage();
    let exe = stage.join("mpz_ops-system");
    common::run_ok(
        Command::new("cc")
            .args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L"])
            .arg(common::manifest().join("c_tests/mpz_ops.c"))
            .arg("-o")
            .arg(&exe)
            .arg("-lgmp"),
    );
    assert_served(&exe, &[]);
}
