//! The source tree's layers hold: no module imports from a layer above its
//! own or from another unit of its own layer. The order is declared once,
//! in src/lib.rs's module table (`| layer | module | owns |`); this test
//! reads it, finds every path a file names into the crate (`use crate::...`
//! trees, inline `crate::...` paths, `super::...` resolved from the file's
//! place), and checks each edge. `an_upward_import_is_caught` plants such
//! imports in a scratch copy of src/ and shows each one is reported.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The declared units: module path (segments) -> layer.
type Layers = BTreeMap<Vec<String>, f64>;

/// src/lib.rs's table rows: `//! | 3.2 | `algorithms::product` | ... |`.
fn declared_layers(src: &Path) -> Layers {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let mut layers = Layers::new();
    for line in lib.lines() {
        let cells: Vec<&str> = line.trim_start_matches("//!").trim().split('|').map(str::trim).collect();
        // "", layer, module, owns, ""
        if cells.len() < 4 {
            continue;
        }
        let (Ok(layer), Some(module)) = (cells[1].parse::<f64>(), cells[2].strip_prefix('`').and_then(|m| m.strip_suffix('`'))) else {
            continue;
        };
        layers.insert(module.split("::").map(str::to_string).collect(), layer);
    }
    assert!(layers.len() >= 8, "src/lib.rs's layer table has only {} rows", layers.len());
    layers
}

/// The unit a module path belongs to: the longest declared prefix.
fn unit_of<'a>(layers: &'a Layers, path: &[String]) -> Option<(&'a Vec<String>, f64)> {
    (1..=path.len()).rev().find_map(|n| layers.get_key_value(&path[..n]).map(|(k, &v)| (k, v)))
}

/// A file's module path: src/gpu/ntt/plan.rs -> gpu::ntt::plan,
/// src/gpu/mod.rs -> gpu.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let mut segments: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = segments.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        segments.push(stem.to_string());
    }
    segments
}

/// The text without comments (line, doc and block comments): paths in
/// documentation are not imports.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            out.push(c as char);
            if c == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            in_string = c != b'"';
            i += 1;
        } else if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
            i = end;
        } else {
            // A char literal of a quote ('"') is not the start of a string.
            in_string = c == b'"' && !(i > 0 && bytes[i - 1] == b'\'' && bytes.get(i + 1) == Some(&b'\''));
            out.push(c as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths of a use tree starting at `s` (after `crate::` or `super::`):
/// `a::b`, `a::{b, c::d}`, `a::*` (each path's segments, `self` dropped).
fn use_tree(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut segments = prefix;
    let mut i = 0;
    let b: Vec<char> = s.chars().collect();
    loop {
        while i < b.len() && b[i].is_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            out.push(segments);
            return i;
        }
        if b[i] == '{' {
            i += 1;
            loop {
                let rest: String = b[i..].iter().collect();
                i += use_tree(&rest, segments.clone(), out);
                while i < b.len() && (b[i].is_whitespace() || b[i] == ',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == '}' {
                    return i + 1;
                }
            }
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        if i == start {
            // `*`, or the end of the path.
            out.push(segments);
            return i + usize::from(i < b.len() && b[i] == '*');
        }
        let word: String = b[start..i].iter().collect();
        if word != "self" {
            segments.push(word);
        }
        if b.get(i) == Some(&':') && b.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            out.push(segments);
            return i;
        }
    }
}

/// Every path into the crate that `code` names, resolved to segments from
/// the crate root; `module` is the file's own module path.
fn paths_named(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) && c != '$') {
            continue;
        }
        use_tree(&code[at + "crate::".len()..], Vec::new(), &mut out);
    }
    // super:: from the file's place: its parent module (a `mod tests`'s
    // super is the file itself, which resolves inside the same unit or to
    // the parent, a unit below or the same).
    for (at, _) in code.match_indices("super::") {
        if code[..at].chars().next_back().is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let mut base: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
        let mut rest = &code[at + "super::".len()..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        use_tree(rest, base, &mut out);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            // src/bin: programs of their own, not modules of the library.
            if path.file_name().is_some_and(|n| n != "bin") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every import in `src` that breaks the declared order, as
/// "file: path (unit, layer) -> target (unit, layer)".
fn violations(src: &Path) -> Vec<String> {
    let layers = declared_layers(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let module = module_of(src, &file);
        if module.is_empty() {
            continue; // lib.rs: the module declarations
        }
        let (own_unit, own_layer) = unit_of(&layers, &module).unwrap_or_else(|| panic!("{} belongs to no unit of src/lib.rs's table", file.display()));
        let code = code_only(&std::fs::read_to_string(&file).expect("read a source file"));
        for path in paths_named(&code, &module) {
            let Some((unit, layer)) = unit_of(&layers, &path) else { continue };
            if unit != own_unit && layer >= own_layer {
                found.push(format!(
                    "{}: {} ({}, layer {own_layer}) -> {} ({}, layer {layer})",
                    file.strip_prefix(src).unwrap_or(&file).display(),
                    module.join("::"),
                    own_unit.join("::"),
                    path.join("::"),
                    unit.join("::")
                ));
            }
        }
    }
    found
}

#[test]
fn no_module_imports_upward() {
    let src = common::manifest().join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "imports against src/lib.rs's layer order:\n{}", found.join("\n"));
}

#[test]
fn every_module_has_a_unit() {
    let src = common::manifest().join("src");
    let layers = declared_layers(&src);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for file in files {
        let module = module_of(&src, &file);
        assert!(module.is_empty() || unit_of(&layers, &module).is_some(), "{} has no row in src/lib.rs's table", file.display());
    }
}

/// The parser sees what Rust sees: grouped trees, nested groups, `self`,
/// globs, inline paths, `super` chains; not comments.
#[test]
fn paths_are_parsed_like_use_trees() {
    let module: Vec<String> = ["gpu", "ntt", "plan"].iter().map(|s| s.to_string()).collect();
    let code = code_only(
        "use crate::gmp::{self, embedded::{mpn_mul, mpn_sqr}, mp_limb_t};\n\
         // use crate::abi::boundary;\n\
         /// [`crate::abi`]\n\
         let x = crate::stats::Op::Mul; use super::device::addr; use super::super::cpu::*;\n\
         let s = \"crate::abi\";",
    );
    let got: Vec<String> = paths_named(&code, &module).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        ["gmp", "gmp::embedded::mpn_mul", "gmp::embedded::mpn_sqr", "gmp::mp_limb_t", "stats::Op::Mul", "abi", "gpu::ntt::device::addr", "gpu::cpu"],
        "(the string literal's path is read too: conservative)"
    );
}

/// Planted imports in a scratch copy of src/: one upward (the ground floor
/// reaching the ABI), one sideways (an engine reaching the other engine),
/// one out of a leaf; each is reported, and nothing else.
#[test]
fn an_upward_import_is_caught() {
    let src = common::manifest().join("src");
    let scratch = std::env::temp_dir().join(format!("cugmp-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    copy_tree(&src, &scratch);
    assert!(violations(&scratch).is_empty(), "the copy starts clean");
    let plants = [
        ("gmp/mod.rs", "use crate::abi::info;", "gmp -> abi::info"),
        ("cpu.rs", "use crate::gpu::{self, Gpu};", "cpu -> gpu::Gpu"),
        ("config.rs", "fn f() { crate::stats::gpu_total(); }", "config -> stats::gpu_total"),
        ("algorithms/route.rs", "use super::product::own_product;", "algorithms::route -> algorithms::product::own_product"),
    ];
    for (file, line, edge) in plants {
        let path = scratch.join(file);
        let original = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{original}\n{line}\n")).unwrap();
        let found = violations(&scratch);
        assert!(!found.is_empty() && found.iter().all(|v| v.starts_with(file)), "planting `{line}` in {file}: {found:?}");
        let (from, to) = edge.split_once(" -> ").unwrap();
        assert!(found.iter().any(|v| v.contains(&format!(": {from} (")) && v.contains(&format!("-> {to} ("))), "{edge} not reported: {found:?}");
        std::fs::write(&path, original).unwrap();
    }
    assert!(violations(&scratch).is_empty());
    std::fs::remove_dir_all(&scratch).ok();
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}
