//! The README's examples in other languages, run as a user runs them: each
//! program once on the GMP it was built for and once on cuGMP, the outputs
//! identical and cuGMP's load line (CUGMP_LOG=1) present in the second run.
//! (C and C++ are tests/c_programs.rs's and tests/install.rs's.)
//!
//! * Python: examples/gmpy2_product.py on gmpy2's own wheel (which bundles
//!   its GMP), then under LD_PRELOAD of libcugmp.so.
//! * Rust: examples/rug, rug built with gmp-mpfr-sys's use-system-libs
//!   against the system's libgmp.so.10, then run through the
//!   libgmp.so.10 alias directory.

mod common;

use std::path::Path;
use std::process::Command;

/// Digits and checksums, not the timing column.
fn without_times(out: &[u8]) -> String {
    String::from_utf8_lossy(out).split_whitespace().filter(|w| !w.contains("_ms=")).collect::<Vec<_>>().join(" ")
}

fn served_by_cugmp(stderr: &[u8]) -> bool {
    let log = String::from_utf8_lossy(stderr);
    log.contains("libcugmp") && log.contains("loaded")
}

/// `program()`'s command run on the GMP it was built for, then with
/// `route` (LD_PRELOAD or LD_LIBRARY_PATH) set to `to` so that cuGMP serves
/// it: the same digits, and cuGMP's load line in the second run only.
fn same_on_cugmp(what: &str, program: impl Fn() -> Command, route: &str, to: &Path) {
    let run = |routed: bool| {
        let mut cmd = program();
        cmd.env("CUGMP_LOG", "1");
        if routed {
            cmd.env(route, to);
        }
        common::run_ok(&mut cmd)
    };
    let own = run(false);
    assert!(String::from_utf8_lossy(&own.stdout).starts_with("digits=1908486 "), "{what}: {own:?}");
    assert!(!served_by_cugmp(&own.stderr), "{what} was served by cuGMP unasked");
    let ours = run(true);
    assert_eq!(without_times(&ours.stdout), without_times(&own.stdout), "{what}'s product differs on cuGMP");
    assert!(served_by_cugmp(&ours.stderr), "cuGMP did not serve {what}: {}", String::from_utf8_lossy(&ours.stderr));
}

#[test]
fn python_gmpy2_runs_on_cugmp_by_preload() {
    let root = common::manifest();
    // gmpy2 from .tools/python: scripts/install-prereqs.sh installs it.
    let python = || {
        let mut cmd = common::program("python3");
        cmd.arg(root.join("examples/gmpy2_product.py")).env("PYTHONPATH", root.join(".tools/python"));
        cmd
    };
    same_on_cugmp("gmpy2", python, "LD_PRELOAD", &common::stage().join("lib/libcugmp.so.10"));
}

#[test]
fn rust_rug_runs_on_cugmp_through_the_alias() {
    let root = common::manifest();
    let project = root.join("examples/rug");
    // gmp-mpfr-sys checks the system header's version (it takes GMP 6.3):
    // the embedded GMP's header, where the system's is older.
    common::run_ok(
        Command::new(env!("CARGO"))
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(project.join("Cargo.toml"))
            .env("CPATH", common::gmp_include_dir())
            .env_remove("CARGO_TARGET_DIR"),
    );
    let exe = project.join("target/release/rug-on-cugmp");
    let linked = common::run_ok(Command::new("ldd").arg(&exe));
    assert!(String::from_utf8_lossy(&linked.stdout).contains("libgmp.so.10"), "rug was not linked to libgmp.so.10");
    same_on_cugmp("rug", || common::program(&exe), "LD_LIBRARY_PATH", &common::stage().join("alias"));
}
