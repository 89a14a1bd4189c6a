#!/usr/bin/env bash
# The demo: builds libcugmp.so and runs one unmodified GMP program
# (c_tests/demo_factorial.c: n!, Fibonacci F(m) and their product, decimal
# digits checksummed) twice: linked with GMP 6.3 (static, the embedded copy)
# and linked with libcugmp.so. Prints both results and times side by side.
#   scripts/demo.sh [n] [m]        (defaults: 200000 2000000)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-prereqs.sh >/dev/null
cargo build --release --quiet
n=${1:-200000}; m=${2:-2000000}
gmp_out=$(ls -d target/release/build/gmp-mpfr-sys-*/out | head -1)
work=target/demo; mkdir -p "$work"
cc -O2 -I"$gmp_out/include" c_tests/demo_factorial.c "$gmp_out/lib/libgmp.a" -o "$work/demo-gmp"
# Linked as the README says, against the build tree (target/release has the
# soname link libcugmp.so.10).
cc -O2 -DUSE_CUGMP_H -Iinclude c_tests/demo_factorial.c -Ltarget/release -lcugmp -Wl,-rpath,"$root/target/release" -o "$work/demo-cugmp"
"$work/demo-gmp" "$n" "$m" > "$work/gmp.txt"
"$work/demo-cugmp" "$n" "$m" > "$work/cugmp.txt"
printf '%-12s %-10s %-18s %10s %10s  %s\n' result digits checksum "GMP s" "cuGMP s" same?
paste -d' ' "$work/gmp.txt" "$work/cugmp.txt" | while read -r name d c t name2 d2 c2 t2; do
    same=no; [ "$d $c" = "$d2 $c2" ] && same=yes
    printf '%-12s %-10s %-18s %10s %10s  %s\n' "$name" "${d#digits=}" "${c#checksum=}" "${t#seconds=}" "${t2#seconds=}" "$same"
done
echo "GPU in use: $(CUGMP_LOG=1 "$work/demo-cugmp" 10 10 2>&1 >/dev/null | grep -m1 -o 'GPU: .*\|CPU engine only' || echo 'no (CUGMP_GPU=auto keeps these sizes on the CPU)')"
cmp -s <(awk '{print $1, $2, $3}' "$work/gmp.txt") <(awk '{print $1, $2, $3}' "$work/cugmp.txt") && echo "identical results" || { echo "RESULTS DIFFER"; exit 1; }
