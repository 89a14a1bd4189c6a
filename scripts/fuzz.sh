#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/) and runs each for a bounded time on the
# committed corpus:
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 30, all)
# It does what `cargo fuzz run TARGET -s none` does (libFuzzer through
# libfuzzer-sys, SanitizerCoverage in the targets), so cargo-fuzz need not be
# installed; with it, `cd fuzz && cargo fuzz run arith -s none` works too.
# No AddressSanitizer: ASan refuses dlopen(RTLD_DEEPBIND), which keeps the
# library under test apart from the reference GMP. Memory errors are
# valgrind's job (tests/c_programs.rs) and compute-sanitizer's on the GPU.
# New inputs go to target/fuzz-new/TARGET; the committed corpus is read only.
# Environment: CUGMP_LIBRARY (default target/release/libcugmp.so),
# CUGMP_GPU, CUGMP_FUZZ_MAX_LIMBS, FUZZ_BIN (a directory of prebuilt targets,
# as on the GPU machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(set_str arith)

bin=${FUZZ_BIN:-}
if [ -z "$bin" ]; then
    [ -f target/release/libcugmp.so ] || cargo build --release
    # cargo-fuzz's flags for `-s none`: coverage counters and comparison
    # tracing for libFuzzer; --target keeps them off the build scripts.
    triple=$(rustc -vV | sed -n 's/^host: //p')
    (cd fuzz && RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
        -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
        -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks" \
        cargo build --release --target "$triple" --bins)
    bin=fuzz/target/$triple/release
fi
export CUGMP_LIBRARY=${CUGMP_LIBRARY:-$root/target/release/libcugmp.so}
status=0
for t in "${targets[@]}"; do
    mkdir -p "target/fuzz-new/$t"
    log=target/fuzz-new/$t.log
    echo "== fuzz $t: ${seconds}s, corpus fuzz/corpus/$t"
    if "$bin/$t" "target/fuzz-new/$t" "fuzz/corpus/$t" -max_total_time="$seconds" -timeout=60 \
        -rss_limit_mb=8192 -artifact_prefix="target/fuzz-new/$t-" -print_final_stats=1 >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz $t: $runs executions, no finding"
    else
        echo "fuzz $t: FINDING (log $log, input target/fuzz-new/$t-*)"
        tail -30 "$log"
        status=1
    fi
done
exit $status
