//! Helpers the unit tests of several modules share (test builds only).
//!
//! A leaf: it imports nothing of the crate.

/// The next number of Marsaglia's xorshift64 sequence from `seed` (which
/// must not be 0): random enough for operands, the same on every machine.
pub fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// `n` limbs of `xorshift` from `seed`.
pub fn random_limbs(n: usize, seed: &mut u64) -> Vec<u64> {
    (0..n).map(|_| xorshift(seed)).collect()
}

/// A host model: c_tests/`name`.cpp (a kernel file compiled as host C++)
/// built into a directory of this process's own, removed on drop.
pub struct HostModel {
    dir: std::path::PathBuf,
    exe: std::path::PathBuf,
}

impl HostModel {
    /// Compile c_tests/`name`.cpp with the host's C++ compiler (`CXX`, else
    /// c++), warnings as errors.
    pub fn build(name: &str) -> HostModel {
        let dir = std::env::temp_dir().join(format!("cugmp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(name);
        let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
        let built = std::process::Command::new(&cxx)
            .args(["-O2", "-std=c++17", "-Wall", "-Werror", "-Wno-unknown-pragmas", "-o"])
            .arg(&exe)
            .arg(format!("{}/c_tests/{name}.cpp", env!("CARGO_MANIFEST_DIR")))
            .status()
            .unwrap();
        assert!(built.success(), "{cxx} failed on c_tests/{name}.cpp");
        HostModel { dir, exe }
    }

    /// Run it on `input`: the hex limbs it prints, or its exit status.
    pub fn run(&self, input: &str) -> Result<Vec<u64>, std::process::ExitStatus> {
        let mut child = std::process::Command::new(&self.exe).stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        if !out.status.success() {
            return Err(out.status);
        }
        Ok(String::from_utf8(out.stdout).unwrap().split_whitespace().map(|w| u64::from_str_radix(w, 16).unwrap()).collect())
    }
}

impl Drop for HostModel {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// Limbs in hex, space-separated: the host models' input.
pub fn hex(x: &[u64]) -> String {
    x.iter().map(|l| format!("{l:x}")).collect::<Vec<_>>().join(" ")
}
