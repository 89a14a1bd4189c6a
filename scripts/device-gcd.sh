#!/usr/bin/env bash
# On the GPU machine: the small products and the half-gcd steps under force, then the gcd of 10^7 digits under its settings in turn, and its profile.
set -u
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
lscpu | grep -E 'Model name'; nvidia-smi --query-gpu=name --format=csv,noheader; date -u
t0=$(date +%s)
CUGMP_GPU=force timeout 200 pack/deps/gpu small_products hgcd_steps launch_failure > "$OUT/gpu.log" 2>&1; echo "gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E '^test result|^gpu_|passed|skipped' "$OUT/gpu.log" | cut -c1-300 | head -8; grep -E 'FAILED|panicked|MISMATCH' "$OUT/gpu.log" | head -5
t0=$(date +%s)
CUGMP_GPU=force timeout 180 pack/deps/differential --test-threads=8 > "$OUT/diff.log" 2>&1; echo "diff force rc=$? $(( $(date +%s)-t0 ))s"; grep '^test result' "$OUT/diff.log"; grep -E 'FAILED|panicked' "$OUT/diff.log" | head -5
echo "GMP: $(pack/c/gcds-ref 1 519052 1 warm)"
for k in 1 2 3; do
  echo "default: $(CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
  echo "halves 0: $(CUGMP_HGCD_HALVES=0 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
  echo "halves 32: $(CUGMP_HGCD_HALVES=32 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
  echo "internal 2048: $(CUGMP_GPU_FROM_INTERNAL=2048 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
  echo "schoolbook 0: $(CUGMP_GPU_SCHOOLBOOK=0 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
  echo "schoolbook 0 step 512: $(CUGMP_GPU_SCHOOLBOOK=0 CUGMP_GPU_FROM_STEP=512 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm)"
done
CUGMP_STATS=1 CUGMP_PROFILE=1 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm > "$OUT/prof.txt" 2>&1
CUGMP_PROFILE=1 CUGMP_GPU_SCHOOLBOOK=0 CUGMP_GPU=auto pack/c/gcds-cugmp 1 519052 1 warm > "$OUT/prof0.txt" 2>&1
grep -E "internal|half-gcd|in all|seconds|among|halves" "$OUT/prof.txt" | sed -E "s/ +/ /g" | cut -c1-120
date -u
echo "== schoolbook 0"; grep -E "internal mul +2\^(9|1[0-3])|in all|seconds" "$OUT/prof0.txt" | sed -E "s/ +/ /g" | cut -c1-120
date -u
