//! The cost of a call on the CPU path: GMP's small operations through
//! libcugmp.so's exported ABI against the reference GMP (rug's static copy)
//! in the same run, and one whole program made of such calls (pi by the
//! Chudnovsky series: binary splitting on mpz, then a square root, a
//! division and the decimal string), its digits checked equal.
//!
//!   cargo bench --bench percall [-- --quick] [--sizes 1,2,4] [--digits 10000,100000]
//!
//! CUGMP_GPU is `off` unless the environment says otherwise (`auto` on the
//! GPU machine measures the path below the GPU's thresholds with a GPU
//! present). Both libraries are called through function pointers, so a call
//! costs the same indirection on both sides; what differs is cuGMP's own
//! code before the embedded GMP, and that GMP being position-independent
//! code inside a shared library. Each figure is the median of repeats that
//! alternate the two libraries, so drift in the host's load falls on both.
//! Prints markdown rows: per call, ns and the difference; per program, ms.
#[path = "../tests/common/mod.rs"]
mod common;

use common::api::api;
use common::Mpz;
use gmp_mpfr_sys::gmp;
use libc::{c_char, c_int, c_long, c_ulong};
use std::time::Instant;

type P = *mut Mpz;
type S = *const Mpz;

/// One library's functions, as a program calls them.
struct Engine {
    name: &'static str,
    init: unsafe extern "C" fn(P),
    init2: unsafe extern "C" fn(P, c_ulong),
    clear: unsafe extern "C" fn(P),
    set: unsafe extern "C" fn(P, S),
    set_ui: unsafe extern "C" fn(P, c_ulong),
    set_si: unsafe extern "C" fn(P, c_long),
    neg: unsafe extern "C" fn(P, S),
    add: unsafe extern "C" fn(P, S, S),
    mul: unsafe extern "C" fn(P, S, S),
    mul_ui: unsafe extern "C" fn(P, S, c_ulong),
    tdiv_q: unsafe extern "C" fn(P, S, S),
    sqrt: unsafe extern "C" fn(P, S),
    ui_pow_ui: unsafe extern "C" fn(P, c_ulong, c_ulong),
    get_str: unsafe extern "C" fn(*mut c_char, c_int, S) -> *mut c_char,
}

/// `f`, a C function on GMP's `mpz_t`, as the same function on `Mpz` (the
/// same struct under another name).
fn same<F: Copy, G: Copy>(f: F) -> G {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<G>());
    // SAFETY: both are function pointers of one C signature up to the
    // struct's name.
    unsafe { std::mem::transmute_copy(&f) }
}

/// The reference: rug's GMP.
fn reference() -> Engine {
    type Z = *mut gmp::mpz_t;
    type Zs = *const gmp::mpz_t;
    Engine {
        name: "GMP",
        init: same(gmp::mpz_init as unsafe extern "C" fn(Z)),
        init2: same(gmp::mpz_init2 as unsafe extern "C" fn(Z, gmp::bitcnt_t)),
        clear: same(gmp::mpz_clear as unsafe extern "C" fn(Z)),
        set: same(gmp::mpz_set as unsafe extern "C" fn(Z, Zs)),
        set_ui: same(gmp::mpz_set_ui as unsafe extern "C" fn(Z, c_ulong)),
        set_si: same(gmp::mpz_set_si as unsafe extern "C" fn(Z, c_long)),
        neg: same(gmp::mpz_neg as unsafe extern "C" fn(Z, Zs)),
        add: same(gmp::mpz_add as unsafe extern "C" fn(Z, Zs, Zs)),
        mul: same(gmp::mpz_mul as unsafe extern "C" fn(Z, Zs, Zs)),
        mul_ui: same(gmp::mpz_mul_ui as unsafe extern "C" fn(Z, Zs, c_ulong)),
        tdiv_q: same(gmp::mpz_tdiv_q as unsafe extern "C" fn(Z, Zs, Zs)),
        sqrt: same(gmp::mpz_sqrt as unsafe extern "C" fn(Z, Zs)),
        ui_pow_ui: same(gmp::mpz_ui_pow_ui as unsafe extern "C" fn(Z, c_ulong, c_ulong)),
        get_str: same(gmp::mpz_get_str as unsafe extern "C" fn(*mut c_char, c_int, Zs) -> *mut c_char),
    }
}

/// libcugmp.so, opened in its own namespace (tests/common/library.rs).
fn cugmp() -> Engine {
    let lib = &api().lib;
    // SAFETY: each symbol is GMP's function of that name, with its C type.
    unsafe {
        Engine {
            name: "cuGMP",
            init: lib.sym("__gmpz_init"),
            init2: lib.sym("__gmpz_init2"),
            clear: lib.sym("__gmpz_clear"),
            set: lib.sym("__gmpz_set"),
            set_ui: lib.sym("__gmpz_set_ui"),
            set_si: lib.sym("__gmpz_set_si"),
            neg: lib.sym("__gmpz_neg"),
            add: lib.sym("__gmpz_add"),
            mul: lib.sym("__gmpz_mul"),
            mul_ui: lib.sym("__gmpz_mul_ui"),
            tdiv_q: lib.sym("__gmpz_tdiv_q"),
            sqrt: lib.sym("__gmpz_sqrt"),
            ui_pow_ui: lib.sym("__gmpz_ui_pow_ui"),
            get_str: lib.sym("__gmpz_get_str"),
        }
    }
}

/// An mpz_t of one engine, cleared by it on drop.
struct Var<'e> {
    z: Box<Mpz>,
    e: &'e Engine,
}

impl<'e> Var<'e> {
    fn new(e: &'e Engine) -> Var<'e> {
        let mut z = Box::new(Mpz::blank());
        unsafe { (e.init)(&mut *z) };
        Var { z, e }
    }

    /// `limbs` limbs of room, value 0.
    fn with_room(e: &'e Engine, limbs: usize) -> Var<'e> {
        let mut z = Box::new(Mpz::blank());
        unsafe { (e.init2)(&mut *z, 64 * limbs.max(1) as c_ulong) };
        Var { z, e }
    }

    /// A value of `limbs` limbs from `seed` (top limb nonzero).
    fn random(e: &'e Engine, limbs: usize, seed: u64) -> Var<'e> {
        let mut v = Var::with_room(e, limbs);
        let mut x = seed | 1;
        for i in 0..limbs {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            unsafe { *v.z.d.add(i) = x | if i + 1 == limbs { 1 << 63 } else { 0 } };
        }
        v.z.size = limbs as c_int;
        v
    }

    fn p(&mut self) -> P {
        &mut *self.z
    }

    fn s(&self) -> S {
        &*self.z
    }
}

impl Drop for Var<'_> {
    fn drop(&mut self) {
        unsafe { (self.e.clear)(&mut *self.z) };
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds of `f` run `iters` times.
fn seconds(iters: usize, f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..iters {
        f();
    }
    t.elapsed().as_secs_f64()
}

/// Median nanoseconds a call of each of the two bodies, over `repeats`
/// alternating runs of `iters` calls.
fn per_call(repeats: usize, iters: usize, a: &mut dyn FnMut(), b: &mut dyn FnMut()) -> (f64, f64) {
    seconds(iters / 10 + 1, a);
    seconds(iters / 10 + 1, b);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        ta.push(seconds(iters, a) / iters as f64 * 1e9);
        tb.push(seconds(iters, b) / iters as f64 * 1e9);
    }
    (median(ta), median(tb))
}

/// The small operations, each on both engines at `n`-limb operands.
fn small_ops(g: &Engine, c: &Engine, n: usize, repeats: usize, budget_ns: f64) {
    let ops = ["mpz_mul", "mpz_add", "mpz_mul_ui", "mpz_set", "mpz_neg", "mpz_get_str"];
    for op in ops {
        let (ga, gb, ca, cb) = (Var::random(g, n, 3), Var::random(g, n, 5), Var::random(c, n, 3), Var::random(c, n, 5));
        let (mut gr, mut cr) = (Var::with_room(g, 2 * n + 1), Var::with_room(c, 2 * n + 1));
        let mut gbuf = vec![0 as c_char; 20 * n + 2];
        let mut cbuf = vec![0 as c_char; 20 * n + 2];
        let body = |e: &Engine, r: &mut Var, a: &Var, b: &Var, buf: &mut Vec<c_char>| unsafe {
            match op {
                "mpz_mul" => (e.mul)(r.p(), a.s(), b.s()),
                "mpz_add" => (e.add)(r.p(), a.s(), b.s()),
                "mpz_mul_ui" => (e.mul_ui)(r.p(), a.s(), 0x9e37_79b9_7f4a_7c15),
                "mpz_set" => (e.set)(r.p(), a.s()),
                "mpz_neg" => (e.neg)(r.p(), a.s()),
                _ => {
                    (e.get_str)(buf.as_mut_ptr(), 10, a.s());
                }
            }
        };
        // Calls for about `budget_ns` a run, from GMP's own time.
        let once = seconds(1000, &mut || body(g, &mut gr, &ga, &gb, &mut gbuf)) / 1000.0 * 1e9;
        let iters = ((budget_ns / once.max(1.0)) as usize).clamp(100, 10_000_000);
        let (gmp_ns, cu_ns) = per_call(repeats, iters, &mut || body(g, &mut gr, &ga, &gb, &mut gbuf), &mut || body(c, &mut cr, &ca, &cb, &mut cbuf));
        if op == "mpz_get_str" {
            assert_eq!(unsafe { std::ffi::CStr::from_ptr(gbuf.as_ptr()) }, unsafe { std::ffi::CStr::from_ptr(cbuf.as_ptr()) }, "get_str differs at {n} limbs");
        } else {
            assert_eq!(gr.z.size, cr.z.size, "{op} at {n} limbs: sizes differ");
            let k = gr.z.size.unsigned_abs() as usize;
            assert!(unsafe { std::slice::from_raw_parts(gr.z.d, k) == std::slice::from_raw_parts(cr.z.d, k) }, "{op} at {n} limbs differs");
        }
        println!("| {op} | {n} | {gmp_ns:.1} | {cu_ns:.1} | {:+.1} | {:.3}x |", cu_ns - gmp_ns, gmp_ns / cu_ns);
    }
}

/// (P, Q, T) of the Chudnovsky series' terms [a, b) by binary splitting.
struct Pqt<'e> {
    p: Var<'e>,
    q: Var<'e>,
    t: Var<'e>,
}

const A: c_ulong = 13_591_409;
const B: c_ulong = 545_140_134;
const C3_OVER_24: c_ulong = 10_939_058_860_032_000; // 640320^3 / 24

fn split<'e>(e: &'e Engine, a: u64, b: u64) -> Pqt<'e> {
    let (mut p, mut q, mut t) = (Var::new(e), Var::new(e), Var::new(e));
    unsafe {
        if b - a == 1 {
            if a == 0 {
                (e.set_ui)(p.p(), 1);
                (e.set_ui)(q.p(), 1);
            } else {
                // P = -(6a - 5)(2a - 1)(6a - 1), Q = a^3 C^3 / 24.
                (e.set_si)(p.p(), -((6 * a - 5) as c_long));
                (e.mul_ui)(p.p(), p.s(), 2 * a - 1);
                (e.mul_ui)(p.p(), p.s(), 6 * a - 1);
                (e.set_ui)(q.p(), a);
                (e.mul_ui)(q.p(), q.s(), a);
                (e.mul_ui)(q.p(), q.s(), a);
                (e.mul_ui)(q.p(), q.s(), C3_OVER_24);
            }
            // T = P (A + B a).
            (e.mul_ui)(t.p(), p.s(), A + B * a);
        } else {
            let m = (a + b) / 2;
            let (mut l, r) = (split(e, a, m), split(e, m, b));
            // T = T1 Q2 + P1 T2, P = P1 P2, Q = Q1 Q2.
            (e.mul)(t.p(), l.t.s(), r.q.s());
            (e.mul)(l.t.p(), l.p.s(), r.t.s());
            (e.add)(t.p(), t.s(), l.t.s());
            (e.mul)(p.p(), l.p.s(), r.p.s());
            (e.mul)(q.p(), l.q.s(), r.q.s());
        }
    }
    Pqt { p, q, t }
}

/// The first `digits` decimal digits of pi (as "31415..."), on one engine.
fn pi(e: &Engine, digits: u64) -> String {
    // Each term adds about 14.18 digits.
    let terms = digits / 14 + 2;
    let s = split(e, 0, terms);
    let (mut root, mut x) = (Var::new(e), Var::new(e));
    unsafe {
        // pi = 426880 sqrt(10005) Q / T, scaled by 10^digits.
        (e.ui_pow_ui)(x.p(), 10, 2 * digits);
        (e.mul_ui)(x.p(), x.s(), 10005);
        (e.sqrt)(root.p(), x.s());
        (e.mul)(x.p(), root.s(), s.q.s());
        (e.mul_ui)(x.p(), x.s(), 426_880);
        (e.tdiv_q)(root.p(), x.s(), s.t.s());
        let mut buf = vec![0 as c_char; digits as usize + 16];
        (e.get_str)(buf.as_mut_ptr(), 10, root.s());
        std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    }
}

fn main() {
    if std::env::var_os("CUGMP_GPU").is_none() {
        // SAFETY: before any thread is started and before the library loads.
        unsafe { std::env::set_var("CUGMP_GPU", "off") };
    }
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let list = |flag: &str, default: &[usize]| -> Vec<usize> {
        args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).map_or(default.to_vec(), |v| v.split(',').filter_map(|x| x.parse().ok()).collect())
    };
    let sizes = list("--sizes", &[1, 2, 4, 10, 30, 100]);
    let digits = list("--digits", if quick { &[10_000, 100_000] } else { &[10_000, 100_000, 1_000_000] });
    let repeats = if quick { 5 } else { 15 };
    let (g, c) = (reference(), cugmp());
    // With a GPU (CUGMP_GPU=auto) the steady state: the device open before
    // anything is timed (a first large operation would open it on a thread
    // of its own meanwhile).
    let gpu = unsafe { (api().gpu_in_use)() } == 1;
    assert_ne!(g.mul as usize, c.mul as usize, "the reference is the library under test");
    println!("CUGMP_GPU={}, GPU in use: {gpu}; {} repeats a figure, the two libraries in turn", std::env::var("CUGMP_GPU").unwrap_or_default(), repeats);
    println!("\n| call | limbs | {} ns | {} ns | difference ns | GMP / cuGMP |\n|---|---|---|---|---|---|", g.name, c.name);
    for &n in &sizes {
        small_ops(&g, &c, n, repeats, if quick { 1e6 } else { 3e6 });
    }
    println!("\n| program | digits | GMP ms | cuGMP ms | GMP / cuGMP |\n|---|---|---|---|---|");
    for &d in &digits {
        let d = d as u64;
        let runs = if d >= 1_000_000 { 3 } else { repeats };
        let (mut tg, mut tc) = (Vec::new(), Vec::new());
        let want = pi(&g, d);
        assert!(want.starts_with("31415926535897932384626"), "pi from GMP: {}", &want[..20.min(want.len())]);
        for _ in 0..runs {
            let t = Instant::now();
            assert_eq!(pi(&g, d), want);
            tg.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let got = pi(&c, d);
            tc.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(got == want, "pi to {d} digits from cuGMP differs from GMP's");
        }
        let (mg, mc) = (median(tg), median(tc));
        println!("| pi (Chudnovsky, mpz) | {d} | {mg:.3} | {mc:.3} | {:.3}x |", mg / mc);
    }
}
