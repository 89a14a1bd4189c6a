#!/usr/bin/env bash
# Installs cuGMP the way C libraries are installed.
#
#   bash scripts/install.sh [--prefix DIR] [--alias] [--lib FILE --info FILE]
#
#   DIR/lib/libcugmp.so.10.VERSION      the library (soname libcugmp.so.10)
#   DIR/lib/libcugmp.so.10 -> libcugmp.so.10.VERSION
#   DIR/lib/libcugmp.so    -> libcugmp.so.10   (for -lcugmp)
#   DIR/lib/pkgconfig/cugmp.pc           (pkg-config --cflags --libs cugmp)
#   DIR/include/cuGMP.h
#   DIR/bin/cugmp-info
#   with --alias: DIR/lib/cugmp/libgmp.so.10 -> ../libcugmp.so.10, so that
#   LD_LIBRARY_PATH=DIR/lib/cugmp runs unmodified GMP programs on cuGMP.
#
# DIR defaults to /usr/local. Without --lib/--info it builds first (cargo
# build --release, after scripts/install-prereqs.sh); with them it installs
# those prebuilt files (the install test does this).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local alias=0 lib= info=
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --alias) alias=1; shift ;;
        --lib) lib=$2; shift 2 ;;
        --info) info=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)

if [ -z "$lib" ] || [ -z "$info" ]; then
    bash "$root/scripts/install-prereqs.sh"
    (cd "$root" && cargo build --release --lib --bin cugmp-info)
    lib=${lib:-$root/target/release/libcugmp.so}
    info=${info:-$root/target/release/cugmp-info}
fi
[ -f "$lib" ] || { echo "install.sh: no library at $lib" >&2; exit 1; }
[ -f "$info" ] || { echo "install.sh: no cugmp-info at $info" >&2; exit 1; }

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
real=libcugmp.so.10.$version
install -m 755 "$lib" "$prefix/lib/$real"
ln -sfn "$real" "$prefix/lib/libcugmp.so.10"
ln -sfn libcugmp.so.10 "$prefix/lib/libcugmp.so"
install -m 644 "$root/include/cuGMP.h" "$prefix/include/cuGMP.h"
install -m 755 "$info" "$prefix/bin/cugmp-info"
cat >"$prefix/lib/pkgconfig/cugmp.pc" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: cuGMP
Description: GMP 6.3-compatible big-integer library whose large-number arithmetic runs on the GPU
URL: https://github.com/cugmp/cugmp
Version: $version
Libs: -L\${libdir} -lcugmp
Cflags: -I\${includedir}
PC
if [ "$alias" = 1 ]; then
    mkdir -p "$prefix/lib/cugmp"
    ln -sfn ../libcugmp.so.10 "$prefix/lib/cugmp/libgmp.so.10"
fi
if [ "$(id -u)" = 0 ] && [ "$prefix" = /usr/local ] && command -v ldconfig >/dev/null; then
    ldconfig
fi
echo "installed cuGMP $version under $prefix (pkg-config: PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
