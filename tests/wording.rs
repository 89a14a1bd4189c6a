//! The repository speaks of the product, never of how its work was
//! organised: no tracked text file says "session", "round", "call N",
//! "run N" or "issue #N" (history belongs to git log; a measured number
//! cites the RESULTS.md table it comes from). This file, which has to name
//! the words, is the one exception. `planted_words_are_caught` shows the
//! check bites, and that the words' innocent neighbours ("rounding",
//! `x.round()`, "runs the tests") pass.

mod common;

use std::path::Path;

/// This file: it names the words it looks for.
const SELF: &str = "tests/wording.rs";

/// The process words in `text`, as (line number, what was found).
fn hits(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if !chars[i].is_ascii_alphabetic() {
                // "(#3)", " #12": an issue number.
                if chars[i] == '#' && chars.get(i + 1).is_some_and(char::is_ascii_digit) && (i == 0 || chars[i - 1] == '(' || chars[i - 1] == ' ') {
                    found.push((n + 1, chars[i..].iter().take_while(|c| **c == '#' || c.is_ascii_digit()).collect()));
                }
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let before = if start > 0 { chars[start - 1] } else { ' ' };
            // ("issue #3" is the '#' rule's.)
            let number_after = chars.get(i) == Some(&' ') && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            let hit = match word.as_str() {
                "session" | "sessions" => true,
                // f64::round is a method, not a word.
                "round" | "rounds" => before != '.',
                "call" | "calls" | "run" | "runs" | "issue" | "issues" => number_after,
                _ => false,
            };
            if hit {
                found.push((n + 1, chars[start..(i + if number_after { 3 } else { 0 }).min(chars.len())].iter().collect()));
            }
        }
    }
    found
}

/// The tracked text files (git ls-files), but the fuzzers' corpus (bytes,
/// not text) and this file.
fn tracked_text_files(root: &Path) -> Vec<(String, String)> {
    let out = common::run_ok(std::process::Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]));
    let mut files = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if name == SELF || name.starts_with("fuzz/corpus/") {
            continue;
        }
        let Ok(bytes) = std::fs::read(root.join(&name)) else { continue };
        // Text only: the plot (PNG) and any other binary are not read.
        if let Ok(text) = String::from_utf8(bytes) {
            files.push((name, text));
        }
    }
    assert!(files.len() > 50, "only {} tracked text files found", files.len());
    files
}

#[test]
fn no_text_speaks_of_the_work_process() {
    let mut found = Vec::new();
    for (name, text) in tracked_text_files(&common::manifest()) {
        for (line, word) in hits(&text) {
            found.push(format!("{name}:{line}: {word:?}"));
        }
    }
    assert!(found.is_empty(), "text that speaks of how the work was organised (cite RESULTS.md tables instead):\n{}", found.join("\n"));
}

#[test]
fn planted_words_are_caught() {
    let planted = [
        "measured in the fifteenth session",
        "SESSIONS 3 to 5",
        "the bottom round of a pass",
        "three rounds in turn",
        "device call 7, library abc",
        "calls 5 and 6",
        "README table from run 11",
        "targets of issue #3",
        "a target (#12) missed",
    ];
    for line in planted {
        assert_eq!(hits(line).len(), 1, "not caught exactly once: {line:?}");
    }
    let innocent = [
        "floor and ceiling rounding, rounded down",
        "((LEFT as f64 + fx * pw).round() as i64)",
        "works around ptxas; runs the tests; calls the original",
        "issues are tracked elsewhere; one call a limb",
        "#define NTT_BATCH 8",
        "#[test]",
    ];
    for line in innocent {
        assert!(hits(line).is_empty(), "an innocent line caught: {line:?} -> {:?}", hits(line));
    }
    // And through the file scan: a scratch tree with one planted line.
    let scratch = std::env::temp_dir().join(format!("cugmp-wording-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
    let git = |args: &[&str]| common::run_ok(std::process::Command::new("git").arg("-C").arg(&scratch).args(args));
    git(&["init", "-q"]);
    let filler: String = (0..60).map(|i| format!("f{i}.txt\n")).collect();
    for name in filler.lines() {
        std::fs::write(scratch.join(name), "clean text\n").unwrap();
    }
    std::fs::write(scratch.join("notes.md"), "# Notes\nA table from call 6 of the work.\n").unwrap();
    git(&["add", "."]);
    let found: Vec<(String, usize)> = tracked_text_files(&scratch).into_iter().flat_map(|(name, text)| hits(&text).into_iter().map(move |(l, _)| (name.clone(), l))).collect();
    assert_eq!(found, [("notes.md".to_string(), 2)]);
    std::fs::remove_dir_all(&scratch).ok();
}

/// Every RESULTS.md table a comment or document cites by name
/// (`RESULTS.md, "Name"` or `RESULTS.md's "Name"`) is a heading there, so
/// that a renamed table leaves no citation pointing nowhere.
#[test]
fn cited_results_tables_exist() {
    let root = common::manifest();
    let headings: Vec<String> = std::fs::read_to_string(root.join("RESULTS.md"))
        .expect("RESULTS.md")
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .collect();
    let mut cited = 0;
    for (name, text) in tracked_text_files(&root) {
        // Comment markers out and lines joined: a citation may wrap.
        let joined: String = text
            .lines()
            .map(|l| l.trim().trim_start_matches("//!").trim_start_matches("///").trim_start_matches("//").trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ");
        for marker in ["RESULTS.md, \"", "RESULTS.md's \""] {
            for (at, _) in joined.match_indices(marker) {
                let rest = &joined[at + marker.len()..];
                let table = rest.split('"').next().unwrap_or_default();
                cited += 1;
                assert!(headings.iter().any(|h| h == table), "{name} cites RESULTS.md table {table:?}, which is not a heading there");
            }
        }
    }
    assert!(cited >= 10, "only {cited} citations found: the search is broken");
}
