//! GMP 6.3's own test suite (tests/mpz, mpn, mpq, mpf, rand, misc; choose with
//! CUGMP_GMP_TEST_DIRS) run against libcugmp.so in place of libgmp.so.10, by
//! scripts/gmp-testsuite.sh.

mod common;

#[test]
fn gmp_own_tests_pass_on_cugmp() {
    let dirs = std::env::var("CUGMP_GMP_TEST_DIRS").unwrap_or_else(|_| "mpz mpn mpq mpf rand misc".into());
    let out = common::run_ok(
        std::process::Command::new("bash")
            .arg(common::manifest().join("scripts/gmp-testsuite.sh"))
            .arg(common::cdylib())
            .args(dirs.split_whitespace()),
    );
    let log = String::from_utf8_lossy(&out.stdout);
    println!("{log}");
    assert!(log.contains("running on libcugmp.so"), "{log}");
    for d in dirs.split_whitespace() {
        assert!(log.contains(&format!("tests/{d}")), "tests/{d} did not run:\n{log}");
    }
    assert!(log.contains("# PASS:") && !log.lines().any(|l| l.starts_with("# FAIL:") && l.trim() != "# FAIL:  0"), "{log}");
}
