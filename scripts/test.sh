#!/usr/bin/env bash
# The test command (README; CI runs it after scripts/install-prereqs.sh).
# Everything runs under cargo test: Rust differential tests, the header and
# symbol checks, the C programs, the LD_PRELOAD routes, GMP's own test suite
# against libcugmp.so, and the GPU tests (skipped, and saying so, without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-prereqs.sh
exec cargo test --release "$@"
