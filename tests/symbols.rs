//! libcugmp.so exports every global symbol (function and data) of the embedded
//! GMP 6.3 archive, and none of the embedded GMP's private names.

mod common;

use std::collections::BTreeSet;
use std::process::Command;

fn dynamic_symbols() -> Vec<(String, String)> {
    let out = common::run_ok(Command::new("nm").args(["-D", "--defined-only", "-P"]).arg(common::cdylib()));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next()?.to_string()))
        })
        .collect()
}

/// Global symbols of gmp-mpfr-sys's libgmp.a with default visibility (what
/// GMP's own libgmp.so exports), read fresh here, not from build.rs's list.
fn archive_globals() -> BTreeSet<String> {
    let out = common::run_ok(Command::new("readelf").arg("-sW").arg(common::gmp_static_lib()));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            // Num: Value Size Type Bind Vis Ndx Name
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() == 8 && f[4] != "LOCAL" && f[5] == "DEFAULT" && f[6] != "UND").then(|| f[7].to_string())
        })
        .collect()
}

/// The system's libgmp.so.10 (Debian's GMP 6.2), where present: everything it
/// exports, cuGMP exports too (6.3 only adds).
#[test]
fn exports_what_the_system_libgmp_exports() {
    let system = std::path::Path::new("/usr/lib/x86_64-linux-gnu/libgmp.so.10");
    assert!(system.exists(), "no system libgmp.so.10 (scripts/install-prereqs.sh installs libgmp-dev)");
    let out = common::run_ok(Command::new("nm").args(["-D", "--defined-only", "-P"]).arg(system));
    let exported: BTreeSet<String> = dynamic_symbols().into_iter().map(|(n, _)| n).collect();
    let missing: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("__gmp") && !exported.contains(*n))
        .map(str::to_string)
        .collect();
    assert!(missing.is_empty(), "libcugmp.so lacks symbols of the system's libgmp.so.10: {missing:?}");
}

#[test]
fn exports_every_gmp_symbol() {
    let exported: BTreeSet<String> = dynamic_symbols().into_iter().map(|(n, _)| n).collect();
    let gmp = archive_globals();
    assert!(gmp.len() > 800, "only {} globals in libgmp.a", gmp.len());
    let missing: Vec<_> = gmp.difference(&exported).collect();
    assert!(missing.is_empty(), "libcugmp.so lacks {} of GMP's symbols: {missing:?}", missing.len());
    for must in ["__gmp_version", "__gmp_bits_per_limb", "__gmp_errno", "__gmp_allocate_func", "__gmp_reallocate_func", "__gmp_free_func", "__gmpz_add", "__gmpn_mul"] {
        assert!(exported.contains(must), "{must} not exported");
    }
}

#[test]
fn data_symbols_are_data() {
    let syms = dynamic_symbols();
    for (name, kind) in &syms {
        if ["__gmp_version", "__gmp_bits_per_limb", "__gmp_errno", "__gmp_allocate_func", "__gmpn_bases"].contains(&name.as_str()) {
            assert!(matches!(kind.as_str(), "D" | "B" | "R"), "{name} exported as {kind}, not as data");
        }
    }
}

#[test]
fn private_names_stay_private() {
    let leaked: Vec<_> = dynamic_symbols().into_iter().filter(|(n, _)| n.starts_with("__cugmp_cpu") || n.starts_with("__wrap_") || n.starts_with("__real_")).collect();
    assert!(leaked.is_empty(), "embedded GMP's private names are exported: {leaked:?}");
}

#[test]
fn soname_is_libcugmp_so_10() {
    let out = common::run_ok(Command::new("readelf").arg("-d").arg(common::cdylib()));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Library soname: [libcugmp.so.10]"));
}
