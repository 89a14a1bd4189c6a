#!/usr/bin/env bash
# Installs what a fresh machine lacks to build and test cuGMP:
#  - m4 (GMP's build), C and C++ compilers, libgmp-dev (programs linked to
#    the system's GMP and libgmpxx for the LD_PRELOAD and gmpxx tests),
#    pkg-config (the install test), libgf2x-dev (the reference of the
#    binary-polynomial tests);
#  - nvcc 13.0 from PyPI into .tools/ when no CUDA toolkit is found (the GPU
#    machines' driver is CUDA 13.0: newer PTX would not load there);
#  - gmpy2 from PyPI into .tools/python (the README's Python example, which
#    tests/usage.rs runs on cuGMP).
# Idempotent; safe to run on every CI run.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v m4 >/dev/null || need_apt+=(m4)
command -v cc >/dev/null || need_apt+=(gcc)
command -v c++ >/dev/null || need_apt+=(g++) # the gmpxx example
command -v make >/dev/null || need_apt+=(make)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v valgrind >/dev/null || need_apt+=(valgrind) # tests/c_programs.rs: the C tests under memcheck
# libgmp-dev also brings gmpxx.h and libgmpxx (the C++ example's test).
[ -e /usr/include/gmpxx.h ] && { [ -e /usr/include/gmp.h ] || [ -e /usr/include/x86_64-linux-gnu/gmp.h ]; } || need_apt+=(libgmp-dev)
# gf2x, the reference of the binary-polynomial tests (tests/gf2x.rs).
[ -e /usr/include/gf2x.h ] || need_apt+=(libgf2x-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "install-prereqs: apt-get install ${need_apt[*]}"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

have_nvcc() {
    [ -n "${NVCC:-}" ] && [ -x "$NVCC" ] && return 0
    for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
        [ -n "$d" ] && [ -x "$d/bin/nvcc" ] && return 0
    done
    command -v nvcc >/dev/null && return 0
    [ -x .tools/cuda/bin/nvcc ]
}

if ! have_nvcc; then
    echo "install-prereqs: nvcc 13.0 from PyPI into .tools/"
    python3 -m pip install -q --disable-pip-version-check --target .tools/pypi \
        'nvidia-cuda-nvcc==13.0.*' 'nvidia-cuda-crt==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-runtime==13.0.*'
    ln -sfn pypi/nvidia/cu13 .tools/cuda
    .tools/cuda/bin/nvcc --version | tail -1
fi

if ! PYTHONPATH=.tools/python python3 -c 'import gmpy2' 2>/dev/null; then
    echo "install-prereqs: gmpy2 from PyPI into .tools/python"
    python3 -m pip install -q --disable-pip-version-check --target .tools/python 'gmpy2==2.3.*'
fi
