#!/usr/bin/env bash
# Prints the directory of the gmp-mpfr-sys crate's source in the cargo
# registry (the version Cargo.lock pins), where GMP's and MPFR's sources
# lie (gmp-6.3.0-c, mpfr-4.2.2-c): scripts/gmp-testsuite.sh and
# scripts/mpfr-build.sh build from them; nothing of them is committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest=$(cd "$root" && cargo metadata --format-version 1 --locked 2>/dev/null | python3 -c \
  'import json,sys; print([p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="gmp-mpfr-sys"][0])')
dirname "$manifest"
