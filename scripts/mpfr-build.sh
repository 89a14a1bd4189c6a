#!/usr/bin/env bash
# Builds MPFR (the gmp-mpfr-sys source in the cargo registry; never
# committed) as a shared library against GMP 6.3's shared libgmp.so.10, the
# one scripts/gmp-testsuite.sh builds in target/gmp-tests, so that one
# libmpfr.so.6 runs on GMP's own library or on libcugmp.so through the alias
# (pack/alias/libgmp.so.10), whichever LD_LIBRARY_PATH names first.
#
#   scripts/mpfr-build.sh            prints the install prefix (target/mpfr)
#
# The prefix holds include/mpfr.h, lib/libmpfr.so.6 and gmp-real/libgmp.so.10
# (GMP's own library, the reference). Kept between runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
prefix=$root/target/mpfr
if [ -f "$prefix/.built" ]; then
    echo "$prefix"
    exit 0
fi

gmp_build=$root/target/gmp-tests/build
if [ ! -f "$gmp_build/.built" ]; then
    # GMP's shared library, built once by the test-suite script.
    CUGMP_GMP_BUILD_ONLY=1 bash "$root/scripts/gmp-testsuite.sh" /dev/null mpz >&2
fi
src=$(bash "$root/scripts/crate-source.sh")/mpfr-4.2.2-c
[ -f "$src/configure" ] || { echo "mpfr-build: MPFR source not found at $src" >&2; exit 1; }

work=$root/target/mpfr-build
rm -rf "$work" "$prefix"
mkdir -p "$work" "$prefix/gmp-real"
# GMP's headers and its real library side by side (the test-suite tree
# swaps libcugmp.so into .libs while its tests run; libgmp-real.so is
# GMP's own, kept there for that).
mkdir -p "$work/gmp/include" "$work/gmp/lib"
cp "$gmp_build/gmp.h" "$work/gmp/include/"
cp "$gmp_build/libgmp-real.so" "$prefix/gmp-real/libgmp.so.10"
ln -s "$prefix/gmp-real/libgmp.so.10" "$work/gmp/lib/libgmp.so"
# Timestamps kept (cp -a), so make does not ask for autotools.
cp -a "$src" "$work/src"
(cd "$work/src" && ./configure --with-gmp-include="$work/gmp/include" --with-gmp-lib="$work/gmp/lib" \
    --enable-shared --disable-static --prefix="$prefix" >configure.log 2>&1 \
    && make -j"$jobs" -C src >make.log 2>&1 && make -C src install >install.log 2>&1) \
    || { tail -30 "$work"/src/*.log >&2; exit 1; }
touch "$prefix/.built"
echo "$prefix"
