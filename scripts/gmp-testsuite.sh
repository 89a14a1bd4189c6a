#!/usr/bin/env bash
# Runs GMP 6.3's own test suite (its tests/ tree, from the gmp-mpfr-sys source
# in the cargo registry; never committed) against libcugmp.so in place of
# libgmp.so.10.
#
#   scripts/gmp-testsuite.sh LIBCUGMP_SO [SUBDIR...]     (default: mpz)
#   e.g. scripts/gmp-testsuite.sh target/release/libcugmp.so mpz mpn mpq mpf rand misc cxx
# CUGMP_GMP_BUILD_ONLY=1 builds the test programs without running them
# (scripts/pack-device.sh takes them to the GPU machine).
#
# How: configure and build GMP as gmp-mpfr-sys does (fat, PIC) but shared, in
# target/gmp-tests (kept between runs); build the chosen test programs against
# it; then overwrite the built libgmp.so.10 file with libcugmp.so, so every
# test program (NEEDED libgmp.so.10) runs on cuGMP; run `make check`.
# Before the run it proves the swap took: a test run with CUGMP_LOG=1 must
# print cuGMP's dispatch lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$(realpath "$1"); shift
dirs=("$@"); [ ${#dirs[@]} -gt 0 ] || dirs=(mpz)
jobs=$(nproc)

src=$(bash "$root/scripts/crate-source.sh")/gmp-6.3.0-c
[ -f "$src/configure" ] || { echo "gmp-testsuite: GMP source not found at $src" >&2; exit 1; }

work=${CUGMP_GMP_TESTS_DIR:-$root/target/gmp-tests}
build=$work/build
if [ ! -f "$build/.built" ]; then
    echo "gmp-testsuite: configuring and building GMP 6.3.0 in $build (once; a few minutes)"
    rm -rf "$work"; mkdir -p "$work"
    cp -a "$src" "$work/src"
    mkdir -p "$build"
    (cd "$build" && "$work/src/configure" --enable-fat --enable-shared --disable-static --with-pic >configure.log 2>&1 \
        && make -j"$jobs" >make.log 2>&1) || { tail -30 "$build"/*.log >&2; exit 1; }
    # Keep the real library to restore before any rebuild.
    cp "$(readlink -f "$build/.libs/libgmp.so.10")" "$build/libgmp-real.so"
    touch "$build/.built"
fi
real=$(readlink -f "$build/.libs/libgmp.so.10")

# Build the test programs against GMP's real library (libtool's link checks),
# then put cuGMP in its place for the run.
cp "$build/libgmp-real.so" "$real"
make -C "$build/tests" -j"$jobs" libtests.la >/dev/null
for d in "${dirs[@]}"; do
    make -C "$build/tests/$d" -j"$jobs" check TESTS= >/dev/null
done
if [ -n "${CUGMP_GMP_BUILD_ONLY:-}" ]; then
    echo "gmp-testsuite: built tests/${dirs[*]} (not run)"
    exit 0
fi
cp "$lib" "$real"
trap 'cp "$build/libgmp-real.so" "$real"' EXIT

probe=$(cd "$build/tests/mpz" && CUGMP_LOG=1 ./t-mul 2>&1 | grep -m1 '^cugmp: ' || true)
[ -n "$probe" ] || { echo "gmp-testsuite: the tests are not running on libcugmp.so (no CUGMP_LOG output)" >&2; exit 1; }
echo "gmp-testsuite: running on libcugmp.so (probe: $probe)"

status=0
for d in "${dirs[@]}"; do
    echo "gmp-testsuite: tests/$d"
    if ! make -C "$build/tests/$d" -j"$jobs" check >"$work/check-$d.log" 2>&1; then
        status=1
        grep -E '^(FAIL|ERROR)|^# ' "$work/check-$d.log" >&2 || tail -40 "$work/check-$d.log" >&2
    fi
    grep -E '^# (TOTAL|PASS|FAIL|XFAIL|ERROR|SKIP):' "$work/check-$d.log" || true
done
exit $status
