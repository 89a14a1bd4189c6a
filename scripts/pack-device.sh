#!/usr/bin/env bash
# Builds everything here (the GPU machine has no Rust and no network) and packs
# what the GPU machine runs into pack/ (git-ignored; pass `pack` in the device
# tool's `carry`). Then on the device: `bash scripts/device-run.sh`.
#   pack/deps/        stripped test binaries and libcugmp.so (the tests find
#                     the library at ../deps/libcugmp.so, as under target/)
#   pack/alias/       libgmp.so.10 -> libcugmp.so (the LD_LIBRARY_PATH route)
#   pack/gmp-tests/   GMP 6.3's own test programs (tests/mpz, tests/mpn, tests/mpf), linked
#                     to libgmp.so.10, run there through pack/alias
#   pack/bench/       benchmark binaries, when benches/ has any
#   pack/install/     scripts/install.sh's tree: bin/cugmp-info, bin/demo_factorial
#   pack/c/           c_tests/mpz_ops.c and bad_input.c built on cuGMP (-cugmp,
#                     through the installed tree) and on static GMP (-ref);
#                     benches/programs/pi.c the same two ways; mpfr_ops on
#                     pack/mpfr's libmpfr.so.6 and GMP's or the alias;
#                     transfers (benches/programs/transfers.c) on cuGMP;
#                     chain (benches/programs/chain.c) on static GMP and cuGMP
#   pack/mpfr/        libmpfr.so.6 (scripts/mpfr-build.sh) and gmp-real/libgmp.so.10
#   pack/fuzz/        the fuzz targets (scripts/fuzz.sh) and their corpus
#   pack/lib/         libgf2x.so.3, the binary-polynomial tests' reference
#   .whl/             gmpy2's and mpmath's wheels for `device-run.sh python`,
#                     python-flint's for `device-run.sh batch`
#   pack/alt/SHORT/   with --alt REV (repeatable): libcugmp.so built from git
#                     revision REV (SHORT: its short hash), for
#                     `device-run.sh ab` (the same benchmark binaries timing
#                     this tree's library against each REV's, in one call)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
alts=()
while [ $# -gt 0 ]; do
    case $1 in
        --alt) alts+=("${2:?usage: pack-device.sh [--alt REV]...}"); shift 2 ;;
        *) echo "usage: pack-device.sh [--alt REV]..." >&2; exit 2 ;;
    esac
done
bash scripts/install-prereqs.sh
# The wheels `device-run.sh python` installs there (the GPU machine has no
# network; carry `.whl` as well): gmpy2 and mpmath for its Python 3.12.
if ! compgen -G ".whl/gmpy2-*.whl" >/dev/null; then
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps --python-version 3.12 \
        --platform manylinux2014_x86_64 -d .whl 'gmpy2==2.3.2' 'mpmath==1.3.0' ||
        echo "pack-device.sh: no wheels in .whl/ (device-run.sh python will not run)" >&2
fi
# python-flint, the peer of cugmp_poly_mul in `device-run.sh batch`.
if ! compgen -G ".whl/python_flint-*.whl" >/dev/null; then
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps --python-version 3.12 \
        --platform manylinux2014_x86_64 -d .whl 'python-flint==0.9.0' ||
        echo "pack-device.sh: no python-flint wheel in .whl/ (device-run.sh batch will skip FLINT)" >&2
fi
rm -rf pack
mkdir -p pack/deps pack/alias pack/gmp-tests pack/bench

for alt in "${alts[@]}"; do
    # REV's library, built in a scratch worktree with this tree's target
    # directory (the dependencies are shared), before this tree's own build.
    short=$(git rev-parse --short "$alt")
    wt=$(mktemp -d)
    git worktree add --detach "$wt" "$alt" >/dev/null
    (cd "$wt" && ln -s "$root/.tools" .tools && CARGO_TARGET_DIR="$root/target/alt" cargo build --release --lib 2>&1 | tail -1)
    mkdir -p "pack/alt/$short"
    cp target/alt/release/deps/libcugmp.so "pack/alt/$short/libcugmp.so"
    strip --strip-unneeded "pack/alt/$short/libcugmp.so"
    git worktree remove --force "$wt"
    echo "packed alt libcugmp.so from $alt ($short)"
    git rev-parse "$alt" >"pack/alt/$short/REVISION"
done

# Test binaries: the ones that run on the device.
cargo test --release --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys, shutil
wanted = {"differential", "gpu", "batch", "gf2x"}
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in wanted and "test" in m["target"]["kind"]:
        shutil.copy(m["executable"], "pack/deps/" + m["target"]["name"])
        print("packed test", m["target"]["name"])
'
if compgen -G "benches/*.rs" >/dev/null; then
    cargo bench --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys, shutil
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        shutil.copy(m["executable"], "pack/bench/" + m["target"]["name"])
        print("packed bench", m["target"]["name"])
'
fi
cp target/release/deps/libcugmp.so pack/deps/libcugmp.so
# The gf2x library, the reference of tests/gf2x.rs and benches/gf2x.rs
# (the GPU machine has no package manager's network): `device-run.sh gf2x`
# puts pack/lib on LD_LIBRARY_PATH.
mkdir -p pack/lib
for f in /usr/lib/x86_64-linux-gnu/libgf2x.so.3*; do [ -e "$f" ] && cp -L "$f" pack/lib/; done
# Programs linked to it record its soname.
ln -s libcugmp.so pack/deps/libcugmp.so.10
ln -s ../deps/libcugmp.so pack/alias/libgmp.so.10

# An installed tree (scripts/install.sh) with cugmp-info and the C example
# built through pkg-config, for checking cugmp-info and CUGMP_STATS there.
cargo build --release --bin cugmp-info 2>/dev/null
bash scripts/install.sh --prefix "$root/pack/install" --lib target/release/deps/libcugmp.so --info target/release/cugmp-info >/dev/null
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DUSE_CUGMP_H c_tests/demo_factorial.c -o pack/install/bin/demo_factorial \
    $(PKG_CONFIG_PATH=pack/install/lib/pkgconfig pkg-config --cflags --libs cugmp) -Wl,-rpath,'$ORIGIN/../lib'

# GMP's own test programs, built (not run) by the test-suite script's tree.
CUGMP_GMP_BUILD_ONLY=1 bash scripts/gmp-testsuite.sh target/release/deps/libcugmp.so mpz mpn mpf >/dev/null
for d in mpz mpn mpf; do
    mkdir -p "pack/gmp-tests/$d"
    for f in target/gmp-tests/build/tests/$d/*; do
        # The test programs: ELF executables (libtool links them directly).
        [ -f "$f" ] && [ -x "$f" ] && [ "$(head -c4 "$f" | tr -d '\0')" = $'\x7fELF' ] && cp "$f" "pack/gmp-tests/$d/"
    done
done
# The C programs two ways, to compare on the device under CUGMP_GPU=force.
mkdir -p pack/c
gmp_out=$(dirname "$(dirname "$(ls target/release/build/gmp-mpfr-sys-*/out/lib/libgmp.a | head -1)")")
for prog in mpz_ops bad_input; do
    # shellcheck disable=SC2046
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -DUSE_CUGMP_H "c_tests/$prog.c" -o "pack/c/$prog-cugmp" \
        $(PKG_CONFIG_PATH=pack/install/lib/pkgconfig pkg-config --cflags --libs cugmp) -Wl,-rpath,'$ORIGIN/../install/lib'
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" "c_tests/$prog.c" "$gmp_out/lib/libgmp.a" -o "pack/c/$prog-ref"
done
# The whole program (benches/programs/pi.c) on static GMP (-ref) and on
# libcugmp.so (-cugmp), for device-run.sh pi.
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" benches/programs/pi.c "$gmp_out/lib/libgmp.a" -lpthread -o pack/c/pi-ref
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" benches/programs/pi.c -Lpack/deps -l:libcugmp.so -Wl,-rpath,'$ORIGIN/../deps' -lpthread -o pack/c/pi-cugmp
# benches/programs/mpfr_ops.c on one shared libmpfr.so.6 (scripts/mpfr-build.sh),
# with GMP's own libgmp.so.10 beside it (pack/mpfr/gmp-real) for
# device-run.sh mpfr, which names GMP's or the alias in LD_LIBRARY_PATH.
mpfr=$(bash scripts/mpfr-build.sh)
mkdir -p pack/mpfr/gmp-real
cp -L "$mpfr/lib/libmpfr.so.6" pack/mpfr/
cp -L "$mpfr/gmp-real/libgmp.so.10" pack/mpfr/gmp-real/
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" -I "$mpfr/include" benches/programs/mpfr_ops.c \
    -L"$mpfr/lib" -L"$mpfr/gmp-real" -l:libmpfr.so.6 -l:libgmp.so.10 -o pack/c/mpfr_ops
# benches/programs/gcds.c (gcds from many threads at once) and growing.c
# (numbers that grow from nothing) the same two ways.
for prog in gcds growing; do
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" "benches/programs/$prog.c" "$gmp_out/lib/libgmp.a" -lpthread -o "pack/c/$prog-ref"
    cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" "benches/programs/$prog.c" -Lpack/deps -l:libcugmp.so -Wl,-rpath,'$ORIGIN/../deps' -lpthread -o "pack/c/$prog-cugmp"
done

# benches/programs/chain.c (products of products end to end) on static GMP
# (-ref, the checksums) and on cuGMP.
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" benches/programs/chain.c "$gmp_out/lib/libgmp.a" -o pack/c/chain-ref
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I "$gmp_out/include" benches/programs/chain.c -Lpack/deps -l:libcugmp.so -Wl,-rpath,'$ORIGIN/../deps' -o pack/c/chain-cugmp
# benches/programs/cpu_products.c (the CPU engine's IFMA kernel against GMP's
# loops, or two libraries' kernels), for device-run.sh cpu.
cc -O2 benches/programs/cpu_products.c -ldl -o pack/c/cpu_products
# benches/programs/transfers.c (the engine's staged transfers alone) on cuGMP.
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L benches/programs/transfers.c -Lpack/deps -l:libcugmp.so -Wl,-rpath,'$ORIGIN/../deps' -o pack/c/transfers-cugmp

# The fuzz targets (built here by scripts/fuzz.sh's recipe, run for 1 s to build them).
bash scripts/fuzz.sh 1 >/dev/null
mkdir -p pack/fuzz
cp fuzz/target/*/release/set_str fuzz/target/*/release/arith pack/fuzz/

find pack -type f -perm -u+x -exec strip --strip-unneeded {} + 2>/dev/null || true
du -sh pack
