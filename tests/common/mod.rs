//! Shared by the integration tests: where the built library is, a staged copy
//! with its soname and the libgmp.so.10 alias, and libcugmp.so loaded with
//! `dlopen(RTLD_DEEPBIND)` so that it never shares symbols with the reference
//! GMP (rug's static copy) linked into the test binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod library;
#[allow(unused_imports)]
pub use library::{Library, Mpz};
pub mod api;
pub mod mulmod;

/// The library `api()` opens unless CUGMP_LIBRARY names another.
fn default_library() -> PathBuf {
    cdylib()
}

impl Library {
    /// The library cargo built for this test run.
    pub fn open() -> Library {
        Library::open_at(&cdylib())
    }
}

/// target/<profile>/ (tests run from target/<profile>/deps/).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target dir").to_path_buf()
}

/// The library cargo built for this test run: `deps/libcugmp.so` (cargo test
/// builds it there and does not copy it up to target/<profile>/).
pub fn cdylib() -> PathBuf {
    let p = target_dir().join("deps").join("libcugmp.so");
    assert!(p.is_file(), "{} not built", p.display());
    p
}

/// A directory holding `lib/libcugmp.so.10` (the soname), `lib/libcugmp.so`,
/// `alias/libgmp.so.10` -> libcugmp, and `include/cuGMP.h`. Made once per test
/// binary (its tests run in parallel).
pub fn stage() -> PathBuf {
    static STAGE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    STAGE.get_or_init(make_stage).clone()
}

fn make_stage() -> PathBuf {
    let name = std::env::current_exe().unwrap().file_name().unwrap().to_string_lossy().into_owned();
    let dir = target_dir().join("stage").join(name);
    let lib = dir.join("lib");
    let alias = dir.join("alias");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::create_dir_all(&alias).unwrap();
    std::fs::create_dir_all(dir.join("include")).unwrap();
    std::fs::copy(cdylib(), lib.join("libcugmp.so.10")).unwrap();
    std::os::unix::fs::symlink("libcugmp.so.10", lib.join("libcugmp.so")).unwrap();
    std::os::unix::fs::symlink(lib.join("libcugmp.so.10"), alias.join("libgmp.so.10")).unwrap();
    std::fs::copy(manifest().join("include/cuGMP.h"), dir.join("include/cuGMP.h")).unwrap();
    dir
}

pub fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The embedded GMP's gmp.h and static libgmp.a (the reference GMP 6.3.0).
pub fn gmp_include_dir() -> PathBuf {
    PathBuf::from(env!("CUGMP_GMP_INCLUDE_DIR"))
}
pub fn gmp_static_lib() -> PathBuf {
    PathBuf::from(env!("CUGMP_GMP_LIB_DIR")).join("libgmp.a")
}

/// A command for a program the tests built or installed, with none of the
/// library search path cargo gives tests (target/<profile> and its deps/,
/// where build.rs leaves a `libcugmp.so.10` link to whatever library cargo
/// built last: LD_LIBRARY_PATH outranks a program's RUNPATH) and no
/// preload; a test that wants either sets it.
pub fn program(exe: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(exe);
    cmd.env_remove("LD_LIBRARY_PATH").env_remove("LD_PRELOAD");
    cmd
}

pub fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}


/// This test binary run again on exactly `tests`, one at a time, with
/// `env` (a value of None removes the variable): whether the run
/// succeeded, and its stdout and stderr together. For settings that are
/// read once per process (CUGMP_*).
pub fn rerun_tests(tests: &[&str], env: &[(&str, Option<&str>)]) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().expect("current_exe"));
    cmd.arg("--exact").args(tests).arg("--test-threads=1");
    for &(name, value) in env {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot rerun {tests:?}: {e}"));
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
}
