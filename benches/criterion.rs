//! Criterion benchmarks: each case measured for GMP (rug) and for cuGMP
//! (dlopen'ed as in the tests, CUGMP_GPU=force unless set) in the same run,
//! random operands, end to end from host limbs to host limbs. The summary
//! table and the plot come from benches/speedup.rs.
//!
//!   cargo bench --bench criterion [-- filter]
#[path = "../tests/common/mod.rs"]
mod common;

use common::api::{api, Bin};
use common::Mpz;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use rug::{rand::RandState, Assign, Integer};
use std::time::Duration;

fn products(c: &mut Criterion) {
    if std::env::var_os("CUGMP_GPU").is_none() {
        std::env::set_var("CUGMP_GPU", "force");
    }
    let api = api();
    let load = |x: &Integer| Mpz::load(api.init, api.init2, x);
    type RugOp = fn(&mut Integer, &Integer, &Integer);
    let ops: [(&str, Bin, RugOp); 3] = [
        ("mul", api.mul, |r, a, b| r.assign(a * b)),
        ("sqr", api.mul, |r, a, _| r.assign(a.square_ref())),
        ("add", api.add, |r, a, b| r.assign(a + b)),
    ];
    let mut rng = RandState::new();
    for (name, cugmp, gmp) in ops {
        let mut group = c.benchmark_group(name);
        group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
        for n in [1024u32, 10_000, 100_000, 1_000_000] {
            let a = Integer::from(Integer::random_bits(64 * n, &mut rng));
            let b = if name == "sqr" { a.clone() } else { Integer::from(Integer::random_bits(64 * n, &mut rng)) };
            let mut r = Integer::new();
            group.bench_with_input(BenchmarkId::new("GMP", n), &n, |bench, _| bench.iter(|| gmp(&mut r, &a, &b)));
            let (ma, mb, mut mr) = (load(&a), load(&b), load(&Integer::new()));
            let second = if name == "sqr" { &ma as *const Mpz } else { &mb as *const Mpz };
            group.bench_with_input(BenchmarkId::new("cuGMP", n), &n, |bench, _| bench.iter(|| unsafe { cugmp(&mut mr, &ma, second) }));
        }
        group.finish();
    }
}

criterion_group!(benches, products);
criterion_main!(benches);
