//! cuGMP against GMP (rug) in the same process and run, random operands, end
//! to end from host limbs to host limbs, plus the GPU's own figures. Prints
//! markdown tables and writes, under $CUGMP_BENCH_OUT (default
//! target/bench-results): speedup.csv, speedup.png (speedup against GMP versus
//! operand size, one line per operation, log scale) and tables.md.
//!
//!   cargo bench --bench speedup [-- --quick] [--only e2e|mul|resident|transfer|hooks|ops] [--sizes n,n,..] [--no-gmp] [--reps N]
//!                               [--hook tdiv_qr|sqrt|get_str]
//!   cargo bench --bench speedup -- --from-rows ROWS.md --device NAME --date DATE
//!
//! `--from-rows` measures nothing: it reads the end-to-end rows this
//! benchmark printed (`| op | n limbs | GMP ms | cuGMP ms | ratio | auto |`,
//! e.g. collected from several device runs) and writes the CSV, the table
//! and the plot for them, so that the README's plot can show rows measured
//! in different device runs on one device.
//!
//! cuGMP is dlopen'ed in its own namespace (as in the tests) with
//! CUGMP_GPU=force unless the environment says otherwise, so every size shows
//! what the GPU does; the "auto" column says where the routing sends it.
//! `--only ops` (a run of its own, CUGMP_GPU=auto unless set): the GMP
//! operations whole programs spend their time in that cuGMP passes to GMP
//! whole (gcd, gcdext, set_str, factorial, binomial, power, powm, invert, root),
//! their large products through the hooks.
//! `--only hooks` (a run of its own, CUGMP_GPU=auto unless set): GMP's own
//! algorithms whose products reach the GPU through the hooks (division,
//! square root, radix conversion).
#[path = "../tests/common/mod.rs"]
mod common;
mod plot;

use common::api::{api, Api};
use common::Mpz;
use libc::c_char;
use rug::rand::RandState;
use rug::{Assign, Integer};
use std::fmt::Write as _;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Median milliseconds over `reps` runs, after one warm-up run.
fn time_ms(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn cstr(s: &str) -> std::ffi::CString {
    std::ffi::CString::new(s).unwrap()
}

impl Api {
    fn load(&self, x: &Integer) -> Mpz {
        Mpz::load(self.init, self.init2, x)
    }

    /// "gpu from N limbs" or "cpu" for CUGMP_GPU=auto.
    fn auto(&self, op: &str) -> String {
        match unsafe { (self.threshold)(cstr(op).as_ptr()) } {
            t if t >= 0 => format!("GPU from {t} limbs"),
            _ => "CPU".into(),
        }
    }
}

struct Row {
    op: &'static str,
    limbs: usize,
    gmp_ms: f64,
    cugmp_ms: f64,
}

/// The end-to-end rows in a file of this benchmark's markdown output.
fn rows_from(path: &str) -> Vec<Row> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("--from-rows {path}: {e}"));
    text.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            let [op, limbs, gmp_ms, cugmp_ms, _, _] = cells[..] else { return None };
            Some(Row { op: Box::leak(op.to_string().into_boxed_str()), limbs: limbs.parse().ok()?, gmp_ms: gmp_ms.parse().ok()?, cugmp_ms: cugmp_ms.parse().ok()? })
        })
        .collect()
}

/// speedup.csv, tables.md (`md`) and speedup.png (one line per operation) of `rows` under `out_dir`.
fn write_outputs(out_dir: &std::path::Path, md: &str, rows: &[Row], device: &str, date: &str) {
    let mut series: Vec<plot::Series> = Vec::new();
    let mut csv = String::from("op,limbs,gmp_ms,cugmp_ms,speedup\n");
    for row in rows {
        let speedup = row.gmp_ms / row.cugmp_ms;
        let _ = writeln!(csv, "{},{},{},{},{speedup}", row.op, row.limbs, row.gmp_ms, row.cugmp_ms);
        let label = row.op.split(' ').next().unwrap_or(row.op).to_string();
        let point = (row.limbs as f64, speedup);
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push(point),
            None => series.push(plot::Series { label, points: vec![point] }),
        }
    }
    std::fs::create_dir_all(out_dir).expect("output directory");
    std::fs::write(out_dir.join("speedup.csv"), csv).expect("write csv");
    std::fs::write(out_dir.join("tables.md"), md).expect("write tables");
    let title = format!("cuGMP vs GMP 6.3, {device}, {date}");
    plot::write_png(&out_dir.join("speedup.png"), &title, "operand size (limbs)", "speedup (GMP time / cuGMP time)", &series).expect("write png");
    println!("\nwrote {}/speedup.csv, tables.md, speedup.png", out_dir.display());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let out_dir = std::env::var_os("CUGMP_BENCH_OUT").map(std::path::PathBuf::from).unwrap_or_else(|| common::target_dir().join("../bench-results"));
    if let Some(path) = value("--from-rows") {
        let rows = rows_from(&path);
        let (device, date) = (value("--device").unwrap_or_default(), value("--date").unwrap_or_default());
        let md: String = std::fs::read_to_string(&path).unwrap_or_default();
        write_outputs(&out_dir, &md, &rows, &device, &date);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    // --no-gmp (products): cuGMP's times alone, to compare two builds of it
    // quickly; --reps N: that many timed runs per product.
    let no_gmp = args.iter().any(|a| a == "--no-gmp");
    let reps_override: Option<usize> = value("--reps").and_then(|r| r.parse().ok());
    // --only e2e|resident|transfer|hooks: one section (the others are
    // skipped; `mul` is the end-to-end products alone). The hooks section
    // runs only when asked for.
    let only = value("--only");
    let want = |section: &str| only.as_deref().is_none_or(|o| o == section) && (!matches!(section, "hooks" | "ops") || only.is_some());
    if std::env::var_os("CUGMP_GPU").is_none() {
        // Under force GMP's internal products down to 64 limbs would go to
        // the GPU: the hooks and the operations made of them are measured
        // as a program would run them.
        std::env::set_var("CUGMP_GPU", if want("hooks") || want("ops") { "auto" } else { "force" });
    }
    let api = api();
    let mut name = [0 as c_char; 128];
    let device = if unsafe { (api.gpu_name)(name.as_mut_ptr(), name.len()) } == 0 {
        unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()
    } else {
        "no GPU (CPU engine)".into()
    };
    let date = std::process::Command::new("date").arg("+%Y-%m-%d").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();

    let mut md = String::new();
    let _ = writeln!(md, "Device: {device}; date {date}; GMP 6.3.0 (rug) on one core of the same host; CUGMP_GPU={}.\n", std::env::var("CUGMP_GPU").unwrap_or_default());
    let _ = writeln!(md, "### End to end (host limbs to host limbs), random operands, median\n");
    let _ = writeln!(md, "| op | n limbs | GMP ms | cuGMP ms | GMP / cuGMP | CUGMP_GPU=auto sends it to |");
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    print!("{md}");
    let mut rows: Vec<Row> = Vec::new();
    let mut rng = RandState::new();
    // n random limbs, the top bit set. random_bits and shifts take u32 bit
    // counts, and 10^8 limbs is more bits than that: built from the top in
    // pieces of at most 2^24 limbs.
    let random = |n: usize, rng: &mut RandState| {
        let mut x = Integer::new();
        let mut left = n;
        while left > 0 {
            let k = left.min(1 << 24) as u32;
            let mut piece = Integer::from(Integer::random_bits(64 * k, rng));
            if x == 0 {
                piece.set_bit(64 * k - 1, true);
            }
            x = (x << (64 * k)) | piece;
            left -= k as usize;
        }
        x
    };

    // --sizes 1000000,10000000: the products at these sizes only (end to
    // end, and device-resident ones alone).
    let sizes: Option<Vec<usize>> = value("--sizes").map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect());
    let mul_sizes: Vec<usize> = if !want("e2e") && only.as_deref() != Some("mul") {
        vec![]
    } else if let Some(s) = sizes.clone() {
        s
    } else if quick { vec![1024, 10_000, 100_000] } else { vec![256, 512, 1024, 4096, 10_000, 100_000, 1_000_000, 10_000_000] };
    let linear_sizes: Vec<usize> = if !want("e2e") {
        vec![]
    } else if quick { vec![10_000, 100_000] } else { vec![10_000, 100_000, 1_000_000, 10_000_000, 100_000_000] };
    let mut emit = |md: &mut String, row: Row, auto: String| {
        let line = format!("| {} | {} | {:.3} | {:.3} | {:.2}x | {} |", row.op, row.limbs, row.gmp_ms, row.cugmp_ms, row.gmp_ms / row.cugmp_ms, auto);
        println!("{line}");
        let _ = writeln!(md, "{line}");
        rows.push(row);
    };

    for &n in &mul_sizes {
        for square in [false, true] {
            let a = random(n, &mut rng);
            let b = if square { a.clone() } else { random(n, &mut rng) };
            let reps = reps_override.unwrap_or((2_000_000 / n).clamp(3, 200));
            let mut r = Integer::new();
            let mut gmp = || if square { r.assign(a.square_ref()) } else { r.assign(&a * &b) };
            // --no-gmp: GMP's product once, as the reference, untimed.
            let gmp_ms = if no_gmp { gmp(); f64::NAN } else { time_ms(reps, gmp) };
            let (ma, mb, mut mr) = (api.load(&a), api.load(&b), api.load(&Integer::new()));
            let cugmp_ms = time_ms(reps, || unsafe { if square { (api.mul)(&mut mr, &ma, &ma) } else { (api.mul)(&mut mr, &ma, &mb) } });
            assert!(mr.value() == r, "MISMATCH: mpz_mul at {n} limbs");
            for mut m in [ma, mb, mr] {
                unsafe { (api.clear)(&mut m) };
            }
            let op = if square { "sqr (mpz_mul a, a)" } else { "mul" };
            emit(&mut md, Row { op, limbs: n, gmp_ms, cugmp_ms }, api.auto("mul"));
        }
    }

    for &n in &linear_sizes {
        let (a, b) = (random(n, &mut rng), random(n, &mut rng));
        let reps = (20_000_000 / n).clamp(3, 100);
        let linear: [(&'static str, &str); 4] = [("add", "add"), ("sub", "sub"), ("shift (mul_2exp 100001)", "shift"), ("and", "and")];
        for (op, dispatch_name) in linear {
            let mut r = Integer::new();
            let gmp_ms = time_ms(reps, || match dispatch_name {
                "add" => r.assign(&a + &b),
                "sub" => r.assign(&a - &b),
                "shift" => r.assign(&a << 100_001u32),
                _ => r.assign(&a & &b),
            });
            let (ma, mb, mut mr) = (api.load(&a), api.load(&b), api.load(&Integer::new()));
            let cugmp_ms = time_ms(reps, || unsafe {
                match dispatch_name {
                    "add" => (api.add)(&mut mr, &ma, &mb),
                    "sub" => (api.sub)(&mut mr, &ma, &mb),
                    "shift" => (api.mul_2exp)(&mut mr, &ma, 100_001),
                    _ => (api.and)(&mut mr, &ma, &mb),
                }
            });
            assert!(mr.value() == r, "MISMATCH: {op} at {n} limbs");
            for mut m in [ma, mb, mr] {
                unsafe { (api.clear)(&mut m) };
            }
            emit(&mut md, Row { op, limbs: n, gmp_ms, cugmp_ms }, api.auto(dispatch_name));
        }
    }

    // GMP's algorithms whose products go through the hooks. --sizes and
    // --no-gmp (GMP once, as the reference) apply here too; --hook NAME
    // times that algorithm alone.
    let hook_sizes: Vec<usize> = if !want("hooks") {
        vec![]
    } else if let Some(s) = sizes.clone() {
        s
    } else if quick { vec![10_000] } else { vec![10_000, 100_000, 1_000_000] };
    let hook = value("--hook");
    let hook_wanted = |name: &str| hook.as_deref().is_none_or(|h| h == name);
    let reps = reps_override.unwrap_or(3);
    let timed_gmp = |f: &mut dyn FnMut()| if no_gmp { f(); f64::NAN } else { time_ms(reps, f) };
    for &n in &hook_sizes {
        let a = random(2 * n, &mut rng);
        let d = random(n, &mut rng);
        let (ma, mdiv, mut mq, mut mr) = (api.load(&a), api.load(&d), api.load(&Integer::new()), api.load(&Integer::new()));
        let (mut q, mut r) = (Integer::new(), Integer::new());
        if hook_wanted("tdiv_qr") {
            let gmp_ms = timed_gmp(&mut || (&mut q, &mut r).assign(a.div_rem_ref(&d)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.tdiv_qr)(&mut mq, &mut mr, &ma, &mdiv) });
            assert!(mq.value() == q && mr.value() == r, "MISMATCH: mpz_tdiv_qr at {n} limbs");
            emit(&mut md, Row { op: "tdiv_qr (2n by n)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("sqrt") {
            let gmp_ms = timed_gmp(&mut || q.assign(a.sqrt_ref()));
            let cugmp_ms = time_ms(reps, || unsafe { (api.sqrt)(&mut mq, &ma) });
            assert!(mq.value() == q, "MISMATCH: mpz_sqrt at {n} limbs");
            emit(&mut md, Row { op: "sqrt (2n limbs)", limbs: n, gmp_ms, cugmp_ms }, api.auto("sqrt"));
        }
        if hook_wanted("get_str") {
            let mut text = String::new();
            let gmp_ms = timed_gmp(&mut || text = d.to_string());
            let mut ours = String::new();
            let cugmp_ms = time_ms(reps, || unsafe {
                let p = (api.get_str)(std::ptr::null_mut(), 10, &mdiv);
                ours = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
                (*api.free_func)(p as *mut libc::c_void, ours.len() + 1);
            });
            assert!(ours == text, "MISMATCH: mpz_get_str at {n} limbs");
            emit(&mut md, Row { op: "get_str base 10", limbs: n, gmp_ms, cugmp_ms }, api.auto("get_str"));
        }
        for mut m in [ma, mdiv, mq, mr] {
            unsafe { (api.clear)(&mut m) };
        }
    }

    // Whole GMP operations, their large products through the hooks: sizes
    // in limbs of the operands (of the result for factorial, binomial and
    // power). --sizes and --no-gmp apply; --hook NAME times one.
    let op_sizes: Vec<usize> = if !want("ops") {
        vec![]
    } else if let Some(s) = sizes.clone() {
        s
    } else if quick { vec![10_000] } else { vec![10_000, 100_000] };
    for &n in &op_sizes {
        let (a, b) = (random(n, &mut rng), random(n, &mut rng));
        let modulus = random(n, &mut rng) | 1u32;
        let (ma, mb, mm) = (api.load(&a), api.load(&b), api.load(&modulus));
        let (mut mr, mut ms, mut mt) = (api.load(&Integer::new()), api.load(&Integer::new()), api.load(&Integer::new()));
        let mut r = Integer::new();
        // The factorial, binomial and power whose results have about n limbs.
        let bits = 64.0 * n as f64;
        let fac_of = {
            let mut k = (bits / 20.0).max(2.0);
            for _ in 0..60 {
                // log2(k!) ~ k (log2 k - log2 e)
                k = bits / (k.log2() - std::f64::consts::LOG2_E).max(1.0);
            }
            k as u32
        };
        let power = (bits / 3f64.log2()) as u32;
        let mut text = String::new();
        if hook_wanted("gcd") {
            let gmp_ms = timed_gmp(&mut || r.assign(a.gcd_ref(&b)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.gcd)(&mut mr, &ma, &mb) });
            assert!(mr.value() == r, "MISMATCH: mpz_gcd at {n} limbs");
            emit(&mut md, Row { op: "gcd", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("gcdext") {
            let (mut g, mut s, mut t) = (Integer::new(), Integer::new(), Integer::new());
            let gmp_ms = timed_gmp(&mut || (&mut g, &mut s, &mut t).assign(a.extended_gcd_ref(&b)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.gcdext)(&mut mr, &mut ms, &mut mt, &ma, &mb) });
            assert!(mr.value() == g && ms.value() == s && mt.value() == t, "MISMATCH: mpz_gcdext at {n} limbs");
            emit(&mut md, Row { op: "gcdext", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("invert") {
            let mut exists = None;
            let gmp_ms = timed_gmp(&mut || exists = a.invert_ref(&modulus).map(|i| r.assign(i)));
            let mut found = 0;
            let cugmp_ms = time_ms(reps, || found = unsafe { (api.invert)(&mut mr, &ma, &mm) });
            assert!((found != 0) == exists.is_some() && (found == 0 || mr.value() == r), "MISMATCH: mpz_invert at {n} limbs");
            emit(&mut md, Row { op: "invert", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("root") {
            // A cube root: GMP's root by Newton's iteration, its products
            // and quotients through the hooks.
            let gmp_ms = timed_gmp(&mut || r.assign(a.root_ref(3)));
            let cugmp_ms = time_ms(reps, || unsafe {
                (api.root)(&mut mr, &ma, 3);
            });
            assert!(mr.value() == r, "MISMATCH: mpz_root(3) at {n} limbs");
            emit(&mut md, Row { op: "root (k = 3)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("powm") {
            // A 64-bit exponent: 64 modular squarings of n limbs.
            let e = Integer::from(0x9e37_79b9_7f4a_7c15u64);
            let me = api.load(&e);
            let gmp_ms = timed_gmp(&mut || r.assign(a.pow_mod_ref(&e, &modulus).expect("a modulus")));
            let cugmp_ms = time_ms(reps, || unsafe { (api.powm)(&mut mr, &ma, &me, &mm) });
            assert!(mr.value() == r, "MISMATCH: mpz_powm at {n} limbs");
            emit(&mut md, Row { op: "powm (64-bit exponent)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
            unsafe { (api.clear)(&mut { me }) };
        }
        if hook_wanted("set_str") {
            text = a.to_string();
            let c = std::ffi::CString::new(text.as_str()).expect("digits");
            // GMP's own mpz_set_str (rug's parser reads the text its own way).
            let gmp_ms = timed_gmp(&mut || assert_eq!(unsafe { gmp_mpfr_sys::gmp::mpz_set_str(r.as_raw_mut(), c.as_ptr(), 10) }, 0));
            let cugmp_ms = time_ms(reps, || unsafe {
                (api.set_str)(&mut mr, c.as_ptr(), 10);
            });
            assert!(mr.value() == a, "MISMATCH: mpz_set_str at {n} limbs");
            emit(&mut md, Row { op: "set_str base 10", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("fac") {
            let gmp_ms = timed_gmp(&mut || r.assign(Integer::factorial(fac_of)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.fac_ui)(&mut mr, fac_of.into()) });
            assert!(mr.value() == Integer::from(Integer::factorial(fac_of)), "MISMATCH: mpz_fac_ui({fac_of})");
            emit(&mut md, Row { op: "fac_ui (result's limbs)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("bin") {
            // C(2k, k) has about 2k bits.
            let k = (bits / 2.0) as u32;
            let gmp_ms = timed_gmp(&mut || r.assign(Integer::binomial_u(2 * k, k)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.bin_uiui)(&mut mr, (2 * k).into(), k.into()) });
            assert!(mr.value() == r, "MISMATCH: mpz_bin_uiui({}, {k})", 2 * k);
            emit(&mut md, Row { op: "bin_uiui (result's limbs)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        if hook_wanted("pow") {
            let gmp_ms = timed_gmp(&mut || r.assign(Integer::u_pow_u(3, power)));
            let cugmp_ms = time_ms(reps, || unsafe { (api.ui_pow_ui)(&mut mr, 3, power.into()) });
            assert!(mr.value() == r, "MISMATCH: mpz_ui_pow_ui(3, {power})");
            emit(&mut md, Row { op: "ui_pow_ui (result's limbs)", limbs: n, gmp_ms, cugmp_ms }, api.auto("gmp-internal mul"));
        }
        drop(text);
        for mut m in [ma, mb, mm, mr, ms, mt] {
            unsafe { (api.clear)(&mut m) };
        }
    }

    // The GPU alone: operands already in device memory.
    let mut resident = String::new();
    let _ = writeln!(resident, "\n### Device-resident kernels (operands in device memory, CUDA events, mean)\n");
    let _ = writeln!(resident, "| op | n limbs | ms | bytes moved | GB/s | of copy |");
    let _ = writeln!(resident, "|---|---|---|---|---|---|");
    let resident_cases: Vec<(&str, usize)> = if !want("resident") {
        vec![]
    } else if quick {
        vec![("copy", 1 << 20), ("add", 1 << 20), ("mul", 100_000)]
    } else if let Some(s) = &sizes {
        // --sizes: the products alone, at those sizes (a profiler's run).
        s.iter().flat_map(|&n| [("mul", n), ("sqr", n)]).collect()
    } else {
        // 2^22 limbs is 2^28 bits, the smallest size the linear kernels are
        // held to 80% of the bandwidth at.
        // The copy at each size comes first: it is the ceiling the others are
        // put against ("of copy").
        let mut v = Vec::new();
        for n in [1usize << 22, 1 << 24, 1 << 26] {
            for op in ["copy", "add", "sub", "shl", "shr", "and"] {
                v.push((op, n));
            }
        }
        v.extend([("mul", 10_000), ("mul", 100_000), ("mul", 1_000_000), ("sqr", 1_000_000), ("mul", 10_000_000), ("sqr", 10_000_000)]);
        v
    };
    let mut copy_gbs = std::collections::HashMap::new();
    for (op, n) in resident_cases {
        let (mut s, mut bytes) = (0.0, 0.0);
        let reps = if op == "mul" || op == "sqr" { 5 } else { 50 };
        if unsafe { (api.bench_resident)(cstr(op).as_ptr(), n, reps, &mut s, &mut bytes) } == 0 {
            let gbs = bytes / s / 1e9;
            if op == "copy" {
                copy_gbs.insert(n, gbs);
            }
            let of_copy = copy_gbs.get(&n).map(|c| format!("{:.0}%", 100.0 * gbs / c)).unwrap_or_default();
            let _ = writeln!(resident, "| {op} | {n} | {:.4} | {:.0} | {gbs:.0} | {of_copy} |", s * 1e3, bytes);
        } else {
            let _ = writeln!(resident, "| {op} | {n} | (no GPU) | | | |");
        }
    }
    print!("{resident}");
    md.push_str(&resident);

    // Ways of getting host operands to the add kernel.
    let mut transfer = String::new();
    let _ = writeln!(transfer, "\n### mpz_add end to end: staging variants (ms, mean; GMP median)\n");
    let _ = writeln!(transfer, "| n limbs | GMP | the ABI path (threaded pinned copies) | one thread's pinned staging | zero-copy | pinned operands (DMA only) | the caller's buffers page-locked for the call (registration included) |");
    let _ = writeln!(transfer, "|---|---|---|---|---|---|---|");
    let transfer_sizes = if !want("transfer") {
        &[][..]
    } else if quick {
        &[100_000usize][..]
    } else {
        &[1_000_000usize, 10_000_000, 100_000_000][..]
    };
    for &n in transfer_sizes {
        let (a, b) = (random(n, &mut rng), random(n, &mut rng));
        let mut r = Integer::new();
        let gmp_ms = time_ms(5, || r.assign(&a + &b));
        let mut cells = vec![format!("{gmp_ms:.3}")];
        for how in ["abi", "pinned", "zero-copy", "pinned-operands", "registered"] {
            let mut s = 0.0;
            cells.push(if unsafe { (api.bench_transfer)(cstr(how).as_ptr(), n, 5, &mut s) } == 0 { format!("{:.3}", s * 1e3) } else { "(no GPU)".into() });
        }
        let _ = writeln!(transfer, "| {n} | {} |", cells.join(" | "));
    }
    print!("{transfer}");
    md.push_str(&transfer);

    write_outputs(&out_dir, &md, &rows, &device, &date);
}
