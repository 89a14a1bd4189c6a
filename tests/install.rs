//! The install route: scripts/install.sh into a temporary prefix, then a C
//! program built with `pkg-config --cflags --libs cugmp` against it (output
//! identical to the same program on static GMP), cugmp-info run from the
//! prefix (it finds the library through its RUNPATH), and the libgmp.so.10
//! alias directory serving an unmodified GMP program.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(prefix: &Path, args: &[&str]) -> String {
    let out = common::run_ok(Command::new("pkg-config").args(args).env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn install_pkg_config_and_cugmp_info() {
    let prefix = common::target_dir().join("install-test");
    let _ = std::fs::remove_dir_all(&prefix);
    common::run_ok(
        Command::new("bash")
            .arg(common::manifest().join("scripts/install.sh"))
            .args(["--alias", "--prefix"])
            .arg(&prefix)
            .arg("--lib")
            .arg(common::cdylib())
            .arg("--info")
            .arg(env!("CARGO_BIN_EXE_cugmp-info")),
    );
    for f in ["lib/libcugmp.so", "lib/libcugmp.so.10", "include/cuGMP.h", "lib/pkgconfig/cugmp.pc", "bin/cugmp-info", "lib/cugmp/libgmp.so.10"] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    assert_eq!(std::fs::read_link(prefix.join("lib/libcugmp.so")).unwrap(), Path::new("libcugmp.so.10"));

    assert_eq!(pkg_config(&prefix, &["--modversion", "cugmp"]), env!("CARGO_PKG_VERSION"));
    let flags = pkg_config(&prefix, &["--cflags", "--libs", "cugmp"]);
    assert!(flags.contains(&format!("-I{}", prefix.join("include").display())) && flags.contains("-lcugmp"), "pkg-config says {flags}");

    // The example program, built against the installed header and library.
    let src = common::manifest().join("c_tests/demo_factorial.c");
    let exe = prefix.join("demo");
    let mut cc = Command::new("cc");
    cc.args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-DUSE_CUGMP_H"]).arg(&src).arg("-o").arg(&exe);
    cc.args(flags.split_whitespace());
    common::run_ok(&mut cc);
    let reference = prefix.join("demo-ref");
    common::run_ok(
        Command::new("cc")
            .args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-I"])
            .arg(common::gmp_include_dir())
            .arg(&src)
            .arg("-o")
            .arg(&reference)
            .arg(common::gmp_static_lib()),
    );
    let checksums = |exe: &Path, lib_path: Option<&Path>| {
        let mut cmd = common::program(exe);
        cmd.args(["3000", "20000"]).env("CUGMP_LOG", "1");
        if let Some(p) = lib_path {
            cmd.env("LD_LIBRARY_PATH", p);
        }
        let out = common::run_ok(&mut cmd);
        // Name, digits, checksum: everything but the time column.
        let text = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n");
        (text, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (want, _) = checksums(&reference, None);
    let (got, log) = checksums(&exe, Some(&prefix.join("lib")));
    assert!(!want.is_empty());
    assert_eq!(got, want, "the pkg-config build differs from static GMP");
    assert!(log.contains("libcugmp") && log.contains("loaded"), "cuGMP did not serve the pkg-config build: {log}");

    // cugmp-info from the prefix, without LD_LIBRARY_PATH.
    let out = common::run_ok(&mut common::program(prefix.join("bin/cugmp-info")));
    let text = String::from_utf8_lossy(&out.stdout);
    let lib_dir = std::fs::canonicalize(prefix.join("lib")).unwrap();
    assert!(text.contains(&format!("from {}\n", lib_dir.display())), "cugmp-info loaded another library:\n{text}");
    assert!(text.contains("embedded GMP:     6.3.0") && text.contains("self-test:"), "{text}");
    // Every routed operation's threshold, GMP's internal products included.
    assert!(text.contains("  gmp-internal mul 1024\n") && text.contains("  powm_batch       1024\n"), "{text}");
}

/// The build tree as the README uses it: a program linked with
/// `-L<build dir> -lcugmp` starts with `LD_LIBRARY_PATH=<build dir>` (a file
/// named as the soname is there), and an unmodified program linked to the
/// system's libgmp runs on cuGMP with `LD_LIBRARY_PATH=<build dir>/alias`.
/// cargo test's library is in target/<profile>/deps; `cargo build` puts the
/// same links beside target/<profile>/libcugmp.so.
#[test]
fn build_tree_runs_as_documented() {
    let deps = common::cdylib().parent().unwrap().to_path_buf();
    for dir in [deps.clone(), common::target_dir()] {
        assert_eq!(std::fs::read_link(dir.join("libcugmp.so.10")).ok().as_deref(), Some(Path::new("libcugmp.so")), "{}", dir.display());
        assert_eq!(std::fs::read_link(dir.join("alias/libgmp.so.10")).ok().as_deref(), Some(Path::new("../libcugmp.so")), "{}", dir.display());
    }
    let dir = common::target_dir().join("build-tree-test");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = common::manifest().join("c_tests/mpz_ops.c");
    let relinked = dir.join("mpz_ops");
    common::run_ok(
        Command::new("cc")
            .args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L", "-DUSE_CUGMP_H", "-I"])
            .arg(common::manifest().join("include"))
            .arg(&src)
            .arg("-o")
            .arg(&relinked)
            .arg("-L")
            .arg(&deps)
            .arg("-lcugmp"),
    );
    let system = dir.join("mpz_ops-system");
    common::run_ok(Command::new("cc").args(["-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L"]).arg(&src).arg("-o").arg(&system).arg("-lgmp"));
    let run = |exe: &Path, lib_path: Option<PathBuf>| {
        let mut cmd = common::program(exe);
        cmd.env("CUGMP_LOG", "1");
        if let Some(p) = lib_path {
            cmd.env("LD_LIBRARY_PATH", p);
        }
        let out = common::run_ok(&mut cmd);
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (want, log) = run(&system, None);
    assert!(!want.is_empty() && !log.contains("cugmp: "));
    for (exe, lib_path) in [(&relinked, deps.clone()), (&system, deps.join("alias"))] {
        let (got, log) = run(exe, Some(lib_path));
        assert_eq!(got, want, "{} differs on cuGMP", exe.display());
        assert!(log.contains("libcugmp") && log.contains("loaded"), "cuGMP did not serve {}: {log}", exe.display());
    }
}
