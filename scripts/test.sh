#!/usr/bin/env bash
# The test command (README; CI runs it after scripts/install-prereqs.sh).
# Everything runs under cargo test: Rust differential tests, the header and
# symbol checks, the C programs (and under valgrind), the LD_PRELOAD routes,
# GMP's own test suite against libcugmp.so, and the GPU tests (skipped, and
# saying so, without a GPU). Then each fuzz target for a bounded time
# (CUGMP_FUZZ_SECONDS, default 60) on the committed corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-prereqs.sh
cargo test --release "$@"
bash scripts/fuzz.sh "${CUGMP_FUZZ_SECONDS:-60}"
