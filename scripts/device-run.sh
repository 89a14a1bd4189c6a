#!/usr/bin/env bash
# Runs on the GPU machine, over a tree packed by scripts/pack-device.sh:
#   bash scripts/device-run.sh [gpu|differential|tests|gmp|bench|ab|perf|perf-ab|percall|mpfr|pi|cores|processes|ops|python|batch|gf2x|beyond|gfp|devices|first|profile|radix|transfers|chain|hostcopy|pipeline|phases|ncu|ncu-source|cpu|sanitize|fuzz|all]    (default: all)
# gpu: the GPU tests alone; differential: the differential suite under
# CUGMP_GPU=force and the C programs (cuGMP against static GMP); tests: both
# of those; gmp: GMP's own tests/mpz, tests/mpn and tests/mpf on libcugmp.so; fuzz:
# each fuzz target for CUGMP_FUZZ_SECONDS (default 120) under CUGMP_GPU=force;
# ab: the device-resident and end-to-end product rows with this tree's
# library and with each of pack/alt's (scripts/pack-device.sh --alt REV...),
# same call, one file each (ab-this.md, ab-SHORT.md);
# perf: the rows the README's table takes (products under force, GMP's
# algorithms through the hooks with auto) and the transfer variants, into
# one file; perf-ab: those rows with this tree's library and pack/alt's in
# turn; percall: the CPU path's cost per call (benches/percall.rs); batch:
# the batched API's tests and throughput, and polynomial products against
# FLINT; gf2x: binary polynomials against libgf2x; beyond: products past
# one device plan, made from halves (tests and benches/beyond.rs); gfp:
# the generalized-Fermat-prime engine's GPU test, and its device-resident
# products against the NTT's, the two engines in turn twice (gfp.md);
# devices (a host of two GPUs or more): the GPU tests with every device
# open, products of 2^26 to 2^29 limbs through mpn_mul with one device and
# with two (CUGMP_GPUS; CUGMP_DEVICE_LOGS), and the links between
# the devices (benches/nvlink.py: peer copies, NCCL's all-to-all); first:
# the first large operation of a fresh Python process (gmpy2's wheel, its
# own GMP against cuGMP preloaded, and pack/alt's libraries with
# CUGMP_FIRST_ALT=1), CUGMP_FIRST_REPEATS passes (default 15) in turn, with
# the medians (first.md); mpfr: MPFR's const_pi, const_log2, exp and log
# (benches/programs/mpfr_ops.c) on one libmpfr.so.6, GMP's own
# libgmp.so.10 against the alias (mpfr.md); pi:
# benches/programs/pi.c on static GMP and on cuGMP (off and auto) in turn;
# cores: the host's cores and their threads, then pi.c on one thread with
# the process free and pinned to one thread of each core, in turn;
# processes: several processes of pi.c at once on each library; radix: mpz_get_str over radix conversion's levels and against
# pack/alt's libraries (radix.md; CUGMP_SWEEP_HOOK=sqrt or tdiv_qr times
# that hook instead, the levels sweep then moot);
# transfers: the engine's staged transfers one way at a time, and products
# end to end (transfers.md);
# chain: products of products end to end (benches/programs/chain.c), and of
# operands from mpz_urandomb, their limbs in pinned blocks and with
# CUGMP_PINNED=0 in turn,
# CUGMP_CHAIN_PASSES times (default 2), and GMP's checksums (chain.md);
# hostcopy: the host-side copy rates alone (benches/host_copy.cu); pipeline:
# whole staged transfers over the copy settings (benches/host_copy.cu);
# phases: CUGMP_LOG's upload/product/download times of products; ncu: the
# transform passes of one device-resident product of CUGMP_NCU_SIZE limbs
# (default 10^6) under Nsight Compute (ncu.txt); ncu-source: executed
# instructions per SASS instruction of CUGMP_NCU_COUNT passes (default 2)
# of such a product (ncu-source.csv); cpu: the CPU engine's IFMA kernel
# against GMP's own loops, then each of pack/alt's kernels against this
# tree's, CUGMP_CPU_PASSES runs each (default 2; cpu.md).
# Writes logs under $OUT (or /tmp/cugmp-out) and prints a short summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/cugmp-out}; mkdir -p "$out"
what=${1:-all}
summary=()
note() { summary+=("$1"); echo "== $1"; }
# benches/host_copy.cu, built with the device's nvcc, run with arguments "$@".
host_copy() { nvcc -O2 -std=c++17 -arch=sm_90 benches/host_copy.cu -o /tmp/host_copy -lpthread && /tmp/host_copy "$@"; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/device.txt"
export CUGMP_GPU=force

if [ "$what" = gpu ] || [ "$what" = tests ] || [ "$what" = all ]; then
    pack/deps/gpu 2>&1 | tee "$out/gpu-tests.log"
    note "gpu tests: $(grep '^test result' "$out/gpu-tests.log")"
    # The products' sweep again on the narrow sets alone: with the wide sets
    # from 4096 limbs, the narrow ones make only smaller products and
    # pieces otherwise (src/gpu/ntt/plan.rs, WIDE_FROM).
    CUGMP_NTT_WIDE=0 pack/deps/gpu gpu_matches_gmp 2>&1 | tee "$out/gpu-tests-narrow.log"
    note "gpu_matches_gmp on the narrow sets (CUGMP_NTT_WIDE=0): $(grep '^test result' "$out/gpu-tests-narrow.log")"
fi

if [ "$what" = differential ] || [ "$what" = tests ] || [ "$what" = all ]; then
    pack/deps/differential --test-threads=4 2>&1 | tee "$out/differential.log"
    note "differential (CUGMP_GPU=force): $(grep '^test result' "$out/differential.log")"
    pack/deps/batch 2>&1 | tee "$out/batch-tests.log"
    note "batches (CUGMP_GPU=force): $(grep '^test result' "$out/batch-tests.log")"
    # The C programs: same output and same ending as static GMP, under force.
    c_ok=0; c_bad=()
    for run in "mpz_ops" "bad_input bases" "bad_input get_str_null" "bad_input mul_2exp_overflow" \
        "bad_input init2_overflow" "bad_input realloc2_overflow" "bad_input pow_overflow"; do
        read -r prog arg <<<"$run"
        (pack/c/$prog-ref $arg >"$out/c-ref.out" 2>&1; echo "end $?" >>"$out/c-ref.out")
        (pack/c/$prog-cugmp $arg >"$out/c-cugmp.out" 2>&1; echo "end $?" >>"$out/c-cugmp.out")
        if cmp -s "$out/c-ref.out" "$out/c-cugmp.out"; then c_ok=$((c_ok + 1)); else c_bad+=("$run"); cp "$out/c-cugmp.out" "$out/c-${prog}-${arg:-all}.diff"; fi
    done
    note "C programs on cuGMP vs static GMP (CUGMP_GPU=force): $c_ok identical, ${#c_bad[@]} differ ${c_bad[*]:-}"
fi

if [ "$what" = gmp ] || [ "$what" = all ]; then
    # Twelve at a time by default (the device machine has 16 cores; the
    # tests share the one GPU as separate programs would): one by one,
    # tests/mpn under force did not finish in 460 s. CUGMP_GMP_TESTS picks
    # tests ("mpz/logic mpn/t-div"), CUGMP_GMP_JOBS and CUGMP_GMP_TIMEOUT
    # (seconds a test) change the defaults. tests/mpn runs with
    # CUGMP_FORCE_MIN_LIMBS=16 (CUGMP_GMP_MPN_FORCE_MIN): t-gcd_22's
    # reference gcd makes millions of 1- and 2-limb operations, each a trip
    # to the device and back under plain force (past 250 s; 0.26 s on the
    # CPU).
    for d in mpz mpn mpf; do
        force_min=0
        [ "$d" = mpn ] && force_min=${CUGMP_GMP_MPN_FORCE_MIN:-16}
        tests=$(ls pack/gmp-tests/$d/*)
        if [ -n "${CUGMP_GMP_TESTS:-}" ]; then
            tests=$(for t in $CUGMP_GMP_TESTS; do [ "${t%%/*}" = "$d" ] && echo "pack/gmp-tests/$t"; done)
            [ -n "$tests" ] || continue
        fi
        mkdir -p "$out/gmp-$d"
        : >"$out/gmp-$d/status"
        start=$SECONDS
        echo "$tests" | xargs -P "${CUGMP_GMP_JOBS:-12}" -I{} bash -c '
            t=$1 log=$2/$(basename "$1").log
            (cd /tmp && LD_LIBRARY_PATH="$3/pack/alias" CUGMP_FORCE_MIN_LIMBS=$5 timeout "$4" "$3/$t") >"$log" 2>&1
            rc=$?
            echo "$(basename "$t") $rc" >>"$2/status"' _ {} "$out/gmp-$d" "$PWD" "${CUGMP_GMP_TIMEOUT:-200}" "$force_min"
        pass=$(awk '$2 == 0' "$out/gmp-$d/status" | wc -l)
        skip=$(awk '$2 == 77' "$out/gmp-$d/status" | wc -l) # automake's "skipped", as GMP's harness counts it
        failed=$(awk '$2 != 0 && $2 != 77 {print $1 "(" $2 ")"}' "$out/gmp-$d/status" | tr '\n' ' ')
        fail=$(awk '$2 != 0 && $2 != 77' "$out/gmp-$d/status" | wc -l)
        note "GMP tests/$d on libcugmp.so (CUGMP_GPU=force, CUGMP_FORCE_MIN_LIMBS=$force_min): $pass passed, $fail failed, $skip skipped ${failed} ($((SECONDS - start)) s)"
        # Only the failures' logs come back: the device tool returns a
        # limited number of files, and a run with every log kept lost the
        # status files among those left out.
        awk '$2 == 0 || $2 == 77 {print $1 ".log"}' "$out/gmp-$d/status" | (cd "$out/gmp-$d" && xargs -r rm -f)
    done
    # At most a minute: a partial count proves the point as well.
    probe=$(cd /tmp && LD_LIBRARY_PATH="$OLDPWD/pack/alias" CUGMP_LOG=1 timeout 60 "$OLDPWD/pack/gmp-tests/mpz/logic" 2>&1 | grep -c 'and .* -> gpu' || true)
    note "GMP tests/mpz/logic: $probe mpz_and calls dispatched to the GPU"
fi

if [ "$what" = sanitize ] || [ "$what" = all ]; then
    # racecheck instruments every shared-memory access: smaller sizes.
    # The generalized-Fermat-prime kernels use no shared memory, and the
    # products by pieces add only the sum kernel to the passes: memcheck.
    for run in memcheck:65536:gpu_matches_gmp racecheck:2049:gpu_matches_gmp memcheck:65536:gpu_gfp_matches_gmp memcheck:65536:gpu_pieces_match_gmp \
        memcheck:65536:gpu_lanes_failure_falls_back_to_cpu; do
        IFS=: read -r tool max test <<<"$run"
        CUGMP_TEST_MAX_LIMBS=$max compute-sanitizer --tool $tool --target-processes all --error-exitcode 9 \
            pack/deps/gpu "$test" >"$out/$tool-$test.log" 2>&1
        note "compute-sanitizer $tool ($test, sizes up to $max limbs): exit $? ($(grep -m1 'ERROR SUMMARY' "$out/$tool-$test.log"))"
    done
fi

if [ "$what" = fuzz ] || [ "$what" = all ]; then
    FUZZ_BIN=pack/fuzz CUGMP_LIBRARY=$PWD/pack/deps/libcugmp.so bash scripts/fuzz.sh "${CUGMP_FUZZ_SECONDS:-120}" 2>&1 | tee "$out/fuzz.log"
    note "fuzz (CUGMP_GPU=force): $(grep '^fuzz ' "$out/fuzz.log" | tr '\n' ';')"
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
    for b in pack/bench/*; do
        [ -x "$b" ] || continue
        CUGMP_BENCH_OUT="$out/bench" "$b" --bench 2>&1 | tee "$out/bench-$(basename "$b").log"
        note "bench $(basename "$b"): see $out/bench-$(basename "$b").log"
    done
fi

if [ "$what" = perf ]; then
    # One file back (the device tool returns few): every table row.
    for run in "mul:force" "hooks:auto" "transfer:force"; do
        only=${run%%:*} mode=${run#*:}
        echo "== $only ($mode)" >>"$out/perf.md"
        CUGMP_BENCH_OUT=/tmp/perf-$only CUGMP_GPU=$mode pack/bench/speedup --only "$only" 2>&1 | grep -E '^\| ' | tee -a "$out/perf.md"
    done
    note "perf: $out/perf.md"
fi

if [ "$what" = radix ]; then
    # mpz_get_str base 10 (hooks, auto) at CUGMP_RADIX_SIZES with this
    # tree's library over CUGMP_RADIX_SWEEP_LEVELS (CUGMP_RADIX_LEVELS,
    # src/algorithms/radix/to_digits.rs; "-" is the library's default), then with each of
    # pack/alt's libraries at their defaults, CUGMP_RADIX_REPEATS times in
    # turn. GMP is timed in the first run only. One file back: radix.md.
    gmp_flag=()
    libs=("$PWD/pack/deps/libcugmp.so")
    for alt in pack/alt/*/libcugmp.so; do [ -f "$alt" ] && libs+=("$PWD/$alt"); done
    for repeat in $(seq "${CUGMP_RADIX_REPEATS:-1}"); do
        for lib in "${libs[@]}"; do
            name=this sweep=${CUGMP_RADIX_SWEEP_LEVELS:--}
            [ "$lib" = "$PWD/pack/deps/libcugmp.so" ] || { name=$(basename "$(dirname "$lib")"); sweep=-; }
            for levels in $sweep; do
                env_args=()
                [ "$levels" != - ] && env_args+=(CUGMP_RADIX_LEVELS=$levels)
                echo "== $name, levels $levels ($repeat)" >>"$out/radix.md"
                env ${env_args[@]+"${env_args[@]}"} CUGMP_LIBRARY=$lib CUGMP_GPU=auto CUGMP_BENCH_OUT=/tmp/radix pack/bench/speedup --only hooks --hook "${CUGMP_SWEEP_HOOK:-get_str}" \
                    --sizes "${CUGMP_RADIX_SIZES:-2000,5000,10000,30000,100000,1000000}" ${gmp_flag[@]+"${gmp_flag[@]}"} --reps "${CUGMP_RADIX_REPS:-3}" 2>&1 \
                    | grep -E '^\| (get_str|sqrt|tdiv_qr)|MISMATCH|panick' >>"$out/radix.md"
                gmp_flag=(--no-gmp)
            done
        done
    done
    note "radix: $out/radix.md"
fi

if [ "$what" = cpu ]; then
    # Two copies of each library, so that dlopen gives two (the program's
    # header); CUGMP_CPU_SIZES the shapes.
    sizes=${CUGMP_CPU_SIZES:-"14 16 20 24 32 40 48 64 78 96 128 256 24x12 100x10 200x40 600x20 1000x300"}
    cp pack/deps/libcugmp.so /tmp/cpu-this-a.so && cp pack/deps/libcugmp.so /tmp/cpu-this-b.so
    for pass in $(seq "${CUGMP_CPU_PASSES:-2}"); do
        echo "== GMP's loops against this tree's kernel ($pass)" >>"$out/cpu.md"
        # shellcheck disable=SC2086
        pack/c/cpu_products /tmp/cpu-this-a.so /tmp/cpu-this-b.so mul $sizes >>"$out/cpu.md" 2>&1
        for alt in pack/alt/*/libcugmp.so; do
            [ -f "$alt" ] || continue
            short=$(cut -c1-9 "$(dirname "$alt")/REVISION")
            cp "$alt" /tmp/cpu-alt.so
            echo "== $short's kernel (copy A) against this tree's ($pass)" >>"$out/cpu.md"
            # shellcheck disable=SC2086
            CPU_PRODUCTS_KERNELS=1 pack/c/cpu_products /tmp/cpu-alt.so /tmp/cpu-this-b.so mul $sizes >>"$out/cpu.md" 2>&1
        done
    done
    note "cpu: $out/cpu.md ($(grep -c DIFFERENT "$out/cpu.md") different products)"
fi

if [ "$what" = chain ]; then
    sizes=${CUGMP_CHAIN_SIZES:-1000000,2000000,10000000}
    for pass in $(seq "${CUGMP_CHAIN_PASSES:-2}"); do
        for pinned in 1 0; do
            for made in products random; do
                echo "== pass $pass, CUGMP_PINNED=$pinned, operands made by $made" >>"$out/chain.md"
                CUGMP_GPU=auto CUGMP_PINNED=$pinned CUGMP_STATS=1 pack/c/chain-cugmp "$sizes" 21 $made >>"$out/chain.md" 2>&1
            done
        done
    done
    for made in products random; do
        echo "== GMP, operands made by $made (checksums; one timed product each)" >>"$out/chain.md"
        pack/c/chain-ref "$sizes" 1 $made >>"$out/chain.md" 2>&1
    done
    cat "$out/chain.md"
    note "chain: $out/chain.md"
fi

if [ "$what" = transfers ]; then
    # The engine's staged transfers one way at a time, back to back and
    # after idle time, and an mpz_add's (benches/programs/transfers.c), then
    # products end to end at CUGMP_TRANSFER_PRODUCTS limbs (default 10^6),
    # CUGMP_TRANSFER_PASSES times (default 2): one file, transfers.md.
    for pass in $(seq "${CUGMP_TRANSFER_PASSES:-2}"); do
        echo "== pass $pass" >>"$out/transfers.md"
        pack/c/transfers-cugmp "${CUGMP_TRANSFER_SIZES:-1000000,2000000,10000000}" >>"$out/transfers.md" 2>&1
        pack/bench/speedup --only mul --sizes "${CUGMP_TRANSFER_PRODUCTS:-1000000}" --no-gmp --reps 21 2>&1 |
            grep -E '^\| (mul|sqr)|MISMATCH' >>"$out/transfers.md"
    done
    cat "$out/transfers.md"
    note "transfers: $out/transfers.md"
fi

if [ "$what" = hostcopy ]; then
    # The host side of the transfers alone (benches/host_copy.cu), built
    # here with the device's nvcc: one table, hostcopy.md.
    host_copy | tee "$out/hostcopy.md"
    note "hostcopy: $out/hostcopy.md"
fi

if [ "$what" = pipeline ]; then
    # Whole staged transfers over staging.rs's possible settings
    # (benches/host_copy.cu, `pipeline`; CUGMP_PIPELINE_MODE=interleaved: a
    # few settings interleaved; =chunks: chunk plans interleaved;
    # =contention: the host copies beside DMAs), and the host the copies
    # run on.
    { lscpu | grep -E 'Model name|^CPU\(s\)|NUMA node\(s\)|L3'; grep MemTotal /proc/meminfo; } >"$out/host.txt" 2>&1
    host_copy "${CUGMP_PIPELINE_MODE:-pipeline}" | tee "$out/pipeline.md"
    note "pipeline: $out/pipeline.md ($(grep -c 'LOST' "$out/pipeline.md") settings lost data)"
fi

if [ "$what" = phases ]; then
    # Where an end-to-end product's time goes: CUGMP_LOG's phase times
    # (upload, product, download; it synchronises after each) of products
    # and squares at CUGMP_PHASE_SIZES (default 10^6 and 10^7 limbs).
    CUGMP_LOG=1 pack/bench/speedup --only mul --sizes "${CUGMP_PHASE_SIZES:-1000000,10000000}" --no-gmp --reps 5 >"$out/phases.log" 2>&1
    note "phases: $out/phases.log ($(grep -c 'done at' "$out/phases.log") phase lines)"
fi

if [ "$what" = gfp ]; then
    pack/deps/gpu gpu_gfp_matches_gmp 2>&1 | tee "$out/gfp-test.log"
    note "gfp test: $(grep -E '^test gpu_gfp' "$out/gfp-test.log")"
    sizes=${CUGMP_GFP_SIZES:-10000,100000,1000000,10000000,100000000}
    for pass in 1 2; do
        for engine in ntt gfp; do
            CUGMP_PRODUCT=$engine pack/bench/speedup --only resident --sizes "$sizes" 2>&1 | grep -E '^\| (mul|sqr) ' |
                sed "s/^/| $engine | $pass /" | tee -a "$out/gfp.md"
        done
    done
    note "gfp: $out/gfp.md ($(grep -c . "$out/gfp.md") rows)"
fi

if [ "$what" = devices ]; then
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    nvidia-smi topo -m | tee "$out/topology.txt"
    if [ -z "${CUGMP_DEVICES_SKIP_TESTS:-}" ]; then
        CUGMP_STRESS_SECONDS=${CUGMP_STRESS_SECONDS:-5} pack/deps/gpu 2>&1 | tee "$out/devices-tests.log"
        note "GPU tests, every device open: $(grep '^test result' "$out/devices-tests.log"); $(grep '^test gpu_devices' "$out/devices-tests.log")"
    fi
    logs=${CUGMP_DEVICE_LOGS:-26,27,28,29}
    for pass in 1 2; do
        for gpus in 1 2; do
            echo "== pass $pass, CUGMP_GPUS=$gpus" | tee -a "$out/devices.md"
            CUGMP_GPU=auto CUGMP_GPUS=$gpus pack/bench/beyond --logs "$logs" 2>&1 | grep -E '^\| 2\^' | tee -a "$out/devices.md"
        done
    done
    python3 benches/nvlink.py 2>&1 | tee "$out/nvlink.md"
    note "devices: $out/devices.md, $out/nvlink.md"
fi

if [ "$what" = first ]; then
    site=/tmp/cugmp-site
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl
    # With CUGMP_FIRST_ALT=1, each pack/alt/*/libcugmp.so in turn after this
    # tree's, named by its revision.
    libs=("$PWD/pack/deps/libcugmp.so")
    if [ -n "${CUGMP_FIRST_ALT:-}" ]; then
        for alt in pack/alt/*/libcugmp.so; do [ -f "$alt" ] && libs+=("$PWD/$alt"); done
    fi
    # CUGMP_FIRST_CPUS (a taskset list, "2-5" say) keeps every process on
    # those cores; CUGMP_FIRST_DRIVER=1 adds GMP's operation with the CUDA
    # driver opened beside it (no cuGMP in the process).
    pin=; [ -n "${CUGMP_FIRST_CPUS:-}" ] && pin="taskset -c $CUGMP_FIRST_CPUS"
    rm -f "$out/first.md"
    for repeat in $(seq "${CUGMP_FIRST_REPEATS:-15}"); do
        echo "| GMP | $repeat $(PYTHONPATH=$site $pin python3 benches/programs/python_ops.py first 2>&1)" | tee -a "$out/first.md"
        if [ -n "${CUGMP_FIRST_DRIVER:-}" ]; then
            echo "| GMP, driver opening beside | $repeat $(PYTHONPATH=$site $pin python3 benches/programs/python_ops.py first driver 2>&1)" | tee -a "$out/first.md"
        fi
        for lib in "${libs[@]}"; do
            name=cuGMP; [ "$lib" = "${libs[0]}" ] || name="cuGMP $(basename "$(dirname "$lib")")"
            for mode in ${CUGMP_FIRST_MODES:-auto}; do
                label=$name; [ "$mode" = auto ] || label="$name $mode"
                echo "| $label | $repeat $(PYTHONPATH=$site CUGMP_GPU=$mode LD_PRELOAD=$lib $pin python3 benches/programs/python_ops.py first 2>&1)" | tee -a "$out/first.md"
            done
        done
    done
    python3 - "$out/first.md" <<'PY' | tee -a "$out/first.md"
import statistics, sys
rows = [line.split("|") for line in open(sys.argv[1]) if line.startswith("| ")]
times = {}
sums = {}
for r in rows:
    times.setdefault(r[1].strip(), []).append(float(r[4]))
    sums.setdefault(r[1].strip(), set()).add(r[5].strip())
g = statistics.median(times["GMP"])
parts = []
for name, t in times.items():
    q = sorted(t)
    paired = ""
    if name != "GMP" and len(t) == len(times["GMP"]):
        # Each process against GMP's of the same pass, just before it.
        d = [a - b for a, b in zip(t, times["GMP"])]
        paired = f", paired with GMP's {1e3 * statistics.median(d):+.1f} ms at the median, faster in {sum(x < 0 for x in d)} of {len(d)}"
    parts.append(f"{name}: median {statistics.median(t):.3f} s (GMP / it {g / statistics.median(t):.2f}x), "
                 f"quartiles {q[len(q) // 4]:.3f} and {q[3 * len(q) // 4]:.3f}, {q[0]:.3f} to {q[-1]:.3f}{paired}")
same = len(set().union(*sums.values())) == 1
print(f"{len(times['GMP'])} processes each; " + "; ".join(parts) + f"; checksums {'same' if same else 'DIFFERENT'}")
PY
    note "first: $(tail -1 "$out/first.md")"
fi

if [ "$what" = ncu ]; then
    # The first product of the size warms up (twiddle tables, pools): its
    # six passes are skipped, the next product's six profiled (another
    # kernel: CUGMP_NCU_KERNEL, CUGMP_NCU_SKIP, CUGMP_NCU_COUNT).
    kernel=${CUGMP_NCU_KERNEL:-cugmp_ntt_pass}
    ncu --kernel-name "$kernel" --launch-skip "${CUGMP_NCU_SKIP:-6}" --launch-count "${CUGMP_NCU_COUNT:-6}" \
        --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section SourceCounters \
        --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum \
        pack/bench/speedup --only resident --sizes "${CUGMP_NCU_SIZE:-1000000}" >"$out/ncu.txt" 2>&1
    note "ncu: $out/ncu.txt ($(grep -c "$kernel" "$out/ncu.txt") kernel reports)"
fi

if [ "$what" = ncu-source ]; then
    # Executed instructions per SASS instruction of the first operand's two
    # forward passes (CUGMP_NCU_SKIP passes skipped, default 6: the warm-up
    # product's), one CSV a pass: where a pass's instructions go.
    rep=/tmp/cugmp-ncu-source
    rm -f "$rep.ncu-rep"
    ncu --kernel-name cugmp_ntt_pass --launch-skip "${CUGMP_NCU_SKIP:-6}" --launch-count "${CUGMP_NCU_COUNT:-2}" \
        --section SourceCounters --section InstructionStats -o "$rep" \
        pack/bench/speedup --only resident --sizes "${CUGMP_NCU_SIZE:-1000000}" >"$out/ncu-source.log" 2>&1
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$out/ncu-source.csv" 2>>"$out/ncu-source.log"
    note "ncu-source: $out/ncu-source.csv ($(wc -l <"$out/ncu-source.csv") lines)"
fi

if [ "$what" = ab ]; then
    alts=(pack/alt/*/libcugmp.so)
    [ -f "${alts[0]}" ] || { echo "no pack/alt/*/libcugmp.so: pack with --alt REV"; exit 2; }
    unset CUGMP_GPU
    # CUGMP_AB_REPEATS times in turn (default 2: this, each alt, this, each alt): the device's clocks
    # and the host's load drift within a call. --no-gmp: GMP's product once
    # per size as the reference, untimed (the builds are what is compared).
    for repeat in $(seq "${CUGMP_AB_REPEATS:-2}"); do
        for lib in "$PWD/pack/deps/libcugmp.so" "${alts[@]/#/$PWD/}"; do
            name=this
            [ "$lib" = "$PWD/pack/deps/libcugmp.so" ] || name=$(basename "$(dirname "$lib")")
            echo "== $name ($repeat)" | tee -a "$out/ab-$name.md"
            CUGMP_BENCH_OUT="/tmp/ab-$name" CUGMP_LIBRARY=$lib pack/bench/speedup --only resident 2>&1 | grep -E '^\| (mul|sqr) ' | tee -a "$out/ab-$name.md"
            CUGMP_BENCH_OUT="/tmp/ab-$name" CUGMP_LIBRARY=$lib CUGMP_GPU=force pack/bench/speedup --only mul --no-gmp --reps "${CUGMP_AB_REPS:-20}" \
                --sizes "${CUGMP_AB_SIZES:-10000,100000,1000000,3000000,10000000}" 2>&1 | grep -E '^\| (mul|sqr)' | tee -a "$out/ab-$name.md"
        done
    done
    note "ab: $out/ab-this.md and, for each alt, $out/ab-SHORT.md ($(cat pack/alt/*/REVISION | cut -c1-9 | tr '\n' ' '))"
fi

if [ "$what" = percall ]; then
    # The cost of a call on the CPU path (benches/percall.rs): GMP's small
    # calls and a whole program of them, with the GPU off and (below its
    # thresholds) in use. One file back: percall.md.
    for mode in off auto; do
        echo "== CUGMP_GPU=$mode" >>"$out/percall.md"
        CUGMP_GPU=$mode CUGMP_BENCH_OUT=/tmp/percall pack/bench/percall --digits "${CUGMP_PERCALL_DIGITS:-10000,100000,1000000}" 2>&1 | grep -E '^\||MISMATCH|differs|panick' | tee -a "$out/percall.md"
    done
    note "percall: $out/percall.md"
fi

if [ "$what" = mpfr ]; then
    # benches/programs/mpfr_ops.c at CUGMP_MPFR_BITS bits (default 10^7),
    # each of CUGMP_MPFR_WORK (default const_pi, const_log2, exp, log) a process of its
    # own: one libmpfr.so.6 (scripts/mpfr-build.sh) on GMP's own
    # libgmp.so.10 (pack/mpfr/gmp-real), then on libcugmp.so through
    # pack/alias under auto, in turn CUGMP_MPFR_REPEATS times (default 1).
    # CUGMP_MPFR_GMP=0 leaves GMP out (where it would take minutes). The
    # checksums must agree. One file back: mpfr.md.
    mpfr_bad=0
    for bits in ${CUGMP_MPFR_BITS:-10000000}; do
        for work in ${CUGMP_MPFR_WORK:-const_pi const_log2 exp log}; do
            for repeat in $(seq "${CUGMP_MPFR_REPEATS:-1}"); do
                want=""
                if [ "${CUGMP_MPFR_GMP:-1}" != 0 ]; then
                    want=$(LD_LIBRARY_PATH=$PWD/pack/mpfr/gmp-real:$PWD/pack/mpfr pack/c/mpfr_ops "$bits" "$work" 2>&1)
                    echo "| GMP $want" | tee -a "$out/mpfr.md"
                fi
                got=$(CUGMP_GPU=auto LD_LIBRARY_PATH=$PWD/pack/alias:$PWD/pack/mpfr pack/c/mpfr_ops "$bits" "$work" 2>&1)
                same=""
                if [ -n "$want" ]; then
                    same=same; [ "$(echo "$got" | awk -F'|' '{print $2 $4}')" = "$(echo "$want" | awk -F'|' '{print $2 $4}')" ] || { same=DIFFERENT; mpfr_bad=$((mpfr_bad + 1)); }
                fi
                echo "| cuGMP $got $same" | tee -a "$out/mpfr.md"
            done
        done
    done
    note "mpfr: $out/mpfr.md ($mpfr_bad results differ from GMP's)"
fi

if [ "$what" = pi ]; then
    # benches/programs/pi.c on static GMP and on libcugmp.so, in turn,
    # CUGMP_PI_REPEATS times (default 3), at CUGMP_PI_DIGITS (default 10^6
    # and 10^7) on CUGMP_PI_THREADS threads (default 1 and 16), cuGMP with
    # CUGMP_GPU=off and auto (CUGMP_PI_MODES); every output line must match
    # GMP's. With CUGMP_PI_ALT=1 each pack/alt/*/libcugmp.so in turn after
    # this tree's (scripts/pack-device.sh --alt REV); CUGMP_PI_QUEUES lists
    # CUGMP_GPU_QUEUES values to run each with. One file back: pi.md.
    libs=(this)
    if [ -n "${CUGMP_PI_ALT:-}" ]; then
        for lib in pack/alt/*/libcugmp.so; do
            short=$(basename "$(dirname "$lib")"); mkdir -p "/tmp/pi-alt/$short"
            ln -sf "$PWD/$lib" "/tmp/pi-alt/$short/libcugmp.so.10"; libs+=("$short")
        done
    fi
    for digits in ${CUGMP_PI_DIGITS:-1000000 10000000}; do
        for threads in ${CUGMP_PI_THREADS:-1 16}; do
            for repeat in $(seq "${CUGMP_PI_REPEATS:-3}"); do
                want=$(pack/c/pi-ref "$digits" "$threads")
                echo "| GMP | $digits | $threads | $repeat | $(echo "$want" | sed -n 2p) |" | tee -a "$out/pi.md"
                for lib in "${libs[@]}"; do
                    path=${LD_LIBRARY_PATH:-}; [ "$lib" = this ] || path=/tmp/pi-alt/$lib${path:+:$path}
                    for queues in ${CUGMP_PI_QUEUES:-default}; do
                        for mode in ${CUGMP_PI_MODES:-off auto}; do
                            q=(); [ "$queues" = default ] || q=(CUGMP_GPU_QUEUES="$queues")
                            got=$(env LD_LIBRARY_PATH="$path" "${q[@]}" CUGMP_GPU="$mode" pack/c/pi-cugmp "$digits" "$threads" 2>&1)
                            same=same; [ "$(echo "$got" | head -1)" = "$(echo "$want" | head -1)" ] || same=DIFFERENT
                            echo "| cuGMP $mode ($lib, queues $queues) | $digits | $threads | $repeat | $(echo "$got" | sed -n 2p) | $same |" | tee -a "$out/pi.md"
                        done
                    done
                done
            done
        done
    done
    note "pi: $out/pi.md ($(grep -c DIFFERENT "$out/pi.md") outputs differ from GMP's)"
fi

if [ "$what" = cores ]; then
    # Whether the one-thread pi.c's spread comes from the helpers sharing a
    # core with the caller: the host's topology, then pi.c at
    # CUGMP_PI_DIGITS (default 10^8) on one thread under auto, the process
    # free and pinned (taskset) to the first thread of each core, in turn,
    # CUGMP_PI_REPEATS times (default 4); each output line must match the
    # first run's (the pi mode compares them with GMP's). One file back:
    # cores.md.
    lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|Model name)' | tee -a "$out/cores.md"
    firsts=$(for c in /sys/devices/system/cpu/cpu[0-9]*; do cut -d, -f1 <"$c/topology/thread_siblings_list" | cut -d- -f1; done | sort -un | paste -sd,)
    echo "first thread of each core: $firsts" | tee -a "$out/cores.md"
    digits=${CUGMP_PI_DIGITS:-100000000}
    first=
    for repeat in $(seq "${CUGMP_PI_REPEATS:-4}"); do
        for how in free pinned; do
            pin=(); [ "$how" = pinned ] && pin=(taskset -c "$firsts")
            got=$(CUGMP_GPU=auto "${pin[@]}" pack/c/pi-cugmp "$digits" 1 2>&1)
            [ -n "$first" ] || first=$(echo "$got" | head -1)
            same=same; [ "$(echo "$got" | head -1)" = "$first" ] || same=DIFFERENT
            echo "| $how | $digits | $repeat | $(echo "$got" | sed -n 2p) | $same |" | tee -a "$out/cores.md"
        done
    done
    note "cores: $out/cores.md ($(grep -c DIFFERENT "$out/cores.md") outputs differ)"
fi

if [ "$what" = processes ]; then
    # Several processes at once, as a busy host runs them: CUGMP_PROCS
    # (default 16 and 4) processes of benches/programs/pi.c on one thread
    # each, at CUGMP_PI_DIGITS (default 10^6 and 10^7), on static GMP and
    # on libcugmp.so (auto), CUGMP_PI_REPEATS times (default 2) in turn;
    # the wall time of all, the slowest process's own total, and whether
    # every output is GMP's alone. One file back: processes.md.
    for procs in ${CUGMP_PROCS:-16 4}; do
        for digits in ${CUGMP_PI_DIGITS:-1000000 10000000}; do
            want=$(pack/c/pi-ref "$digits" 1 | head -1)
            for repeat in $(seq "${CUGMP_PI_REPEATS:-2}"); do
                for prog in pi-ref pi-cugmp; do
                    start=$(date +%s.%N)
                    for i in $(seq "$procs"); do CUGMP_GPU=auto "pack/c/$prog" "$digits" 1 > "/tmp/processes.$i" 2>&1 & done
                    wait
                    end=$(date +%s.%N)
                    slowest=$(grep -ho 'total=[0-9.]*' /tmp/processes.* | cut -d= -f2 | sort -n | tail -1)
                    same=same; [ "$(head -qn1 /tmp/processes.* | sort -u)" = "$want" ] || same=DIFFERENT
                    rm -f /tmp/processes.*
                    echo "| $prog | $procs | $digits | $repeat | $(awk "BEGIN { printf \"%.2f\", $end - $start }") | $slowest | $same |" | tee -a "$out/processes.md"
                done
            done
        done
    done
    note "processes: $out/processes.md ($(grep -c DIFFERENT "$out/processes.md") rows with an output not GMP's)"
fi

if [ "$what" = perf-ab ]; then
    # The README's rows (products under force, the hooks under auto) with
    # this tree's library and each of pack/alt's, in turn, CUGMP_AB_REPEATS
    # times (default 2); GMP timed in the first pass only. One file back:
    # perf-ab.md.
    alts=(pack/alt/*/libcugmp.so)
    [ -f "${alts[0]}" ] || { echo "no pack/alt/*/libcugmp.so: pack with --alt REV"; exit 2; }
    gmp_flag=()
    for repeat in $(seq "${CUGMP_AB_REPEATS:-2}"); do
        for lib in "$PWD/pack/deps/libcugmp.so" "${alts[@]/#/$PWD/}"; do
            name=this
            [ "$lib" = "$PWD/pack/deps/libcugmp.so" ] || name=$(basename "$(dirname "$lib")")
            for run in "mul:force" "hooks:auto"; do
                only=${run%%:*} mode=${run#*:}
                echo "== $name $only ($mode, $repeat)" >>"$out/perf-ab.md"
                CUGMP_LIBRARY=$lib CUGMP_BENCH_OUT=/tmp/perf-ab CUGMP_GPU=$mode pack/bench/speedup --only "$only" ${gmp_flag[@]+"${gmp_flag[@]}"} 2>&1 | grep -E '^\| |MISMATCH|panick' | tee -a "$out/perf-ab.md"
            done
            gmp_flag=(--no-gmp)
        done
    done
    note "perf-ab: $out/perf-ab.md"
fi

if [ "$what" = ops ]; then
    # Operations with no GPU path of their own (gcd, gcdext, invert, powm,
    # set_str, factorials, binomials, powers): cuGMP under auto against GMP
    # (benches/speedup.rs --only ops). One file back: ops.md.
    CUGMP_GPU=auto CUGMP_BENCH_OUT=/tmp/ops pack/bench/speedup --only ops ${CUGMP_OPS_SIZES:+--sizes "$CUGMP_OPS_SIZES"} 2>&1 | grep -E '^\| |MISMATCH|panick' | tee "$out/ops.md"
    note "ops: $out/ops.md"
fi

if [ "$what" = python ] && ! compgen -G ".whl/*.whl" >/dev/null; then
    note "python: no wheels in .whl/ (scripts/pack-device.sh fetches them; carry .whl)"
elif [ "$what" = python ]; then
    # benches/programs/python_ops.py on gmpy2's and mpmath's wheels (from
    # .whl/, carried: the machine has no network), first on the wheel's own
    # GMP and MPFR, then with libcugmp.so preloaded (CUGMP_GPU=auto); the
    # checksums must agree. Then the first large operation of a fresh
    # process, CUGMP_PY_REPEATS times (default 3) each way. With
    # CUGMP_PY_LARGE=1 also python_ops.py large (minutes on GMP). One file
    # back: python.md.
    site=/tmp/cugmp-site
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/*.whl
    export PYTHONPATH=$site
    lib=$PWD/pack/deps/libcugmp.so
    python3 benches/programs/python_ops.py >"$out/py-gmp.md" 2>&1
    CUGMP_GPU=auto LD_PRELOAD=$lib python3 benches/programs/python_ops.py >"$out/py-cugmp.md" 2>&1
    { echo "== GMP (gmpy2's wheel)"; cat "$out/py-gmp.md"; echo "== cuGMP (LD_PRELOAD, auto)"; cat "$out/py-cugmp.md"; } >>"$out/python.md"
    if [ -n "${CUGMP_PY_LARGE:-}" ]; then
        # The large rows (python_ops.py large), once each way.
        python3 benches/programs/python_ops.py large >"$out/py-gmp-large.md" 2>&1
        CUGMP_GPU=auto LD_PRELOAD=$lib python3 benches/programs/python_ops.py large >"$out/py-cugmp-large.md" 2>&1
        { echo "== GMP (gmpy2's wheel), large"; cat "$out/py-gmp-large.md"; echo "== cuGMP (LD_PRELOAD, auto), large"; cat "$out/py-cugmp-large.md"; } >>"$out/python.md"
        [ "$(awk -F'|' '{print $2 $4}' "$out/py-gmp-large.md")" = "$(awk -F'|' '{print $2 $4}' "$out/py-cugmp-large.md")" ] || echo "== large: checksums DIFFERENT" >>"$out/python.md"
        rm -f "$out/py-gmp-large.md" "$out/py-cugmp-large.md"
    fi
    for repeat in $(seq "${CUGMP_PY_REPEATS:-3}"); do
        echo "== first, GMP ($repeat): $(python3 benches/programs/python_ops.py first 2>&1)" >>"$out/python.md"
        echo "== first, cuGMP ($repeat): $(CUGMP_GPU=auto LD_PRELOAD=$lib python3 benches/programs/python_ops.py first 2>&1)" >>"$out/python.md"
    done
    same=same; [ "$(awk -F'|' '{print $2 $4}' "$out/py-gmp.md")" = "$(awk -F'|' '{print $2 $4}' "$out/py-cugmp.md")" ] || same=DIFFERENT
    rm -f "$out/py-gmp.md" "$out/py-cugmp.md"
    cat "$out/python.md"
    note "python: $out/python.md (checksums $same)"
fi

if [ "$what" = batch ]; then
    # The batched API: its differential tests under force, then
    # benches/batch.rs (items per second against GMP on one core and on all
    # cores; CUGMP_BATCH_OPS picks mul, mod, powm) under auto, its powm
    # rows again under force (the GPU's kernels), and benches/programs/poly_flint.py (cugmp_poly_mul against
    # python-flint's wheel on all cores; CUGMP_POLY_SIZES, DEGREE:BITS ...)
    # under auto. One file back: batch.md.
    pack/deps/batch 2>&1 | grep -E '^test result|MISMATCH|panicked' | tee -a "$out/batch.md"
    CUGMP_GPU=auto pack/bench/batch ${CUGMP_BATCH_OPS:+--ops "$CUGMP_BATCH_OPS"} 2>&1 | grep --line-buffered -E '^\||MISMATCH|panick|^CUGMP' | tee -a "$out/batch.md"
    CUGMP_GPU=force pack/bench/batch --ops powm 2>&1 | grep --line-buffered -E '^\||MISMATCH|panick|^CUGMP' | tee -a "$out/batch.md"
    if compgen -G ".whl/python_flint-*.whl" >/dev/null; then
        site=/tmp/cugmp-flint
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .whl/python_flint-*.whl
        CUGMP_GPU=auto PYTHONPATH=$site python3 benches/programs/poly_flint.py "$PWD/pack/deps/libcugmp.so" ${CUGMP_POLY_SIZES:-} 2>&1 | tee -a "$out/batch.md"
    else
        echo "no python-flint wheel in .whl/ (scripts/pack-device.sh fetches it; carry .whl)" | tee -a "$out/batch.md"
    fi
    note "batch: $out/batch.md ($(grep -c -E 'MISMATCH|DIFFERENT' "$out/batch.md") results differ from GMP's or FLINT's)"
fi

if [ "$what" = gf2x ]; then
    # Binary polynomials: tests/gf2x.rs under force (against pack/lib's
    # libgf2x; its GPU-sized test too), then benches/gf2x.rs under force and
    # off from CUGMP_GF2X_MIN_LOG to CUGMP_GF2X_MAX_LOG bits a side
    # (default 16 to 26; off to 2^24 at most; gf2x itself to
    # CUGMP_GF2X_REF_MAX_LOG, default 26, the distributive law beyond).
    # One file back: gf2x.md.
    export LD_LIBRARY_PATH=$PWD/pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    CUGMP_GPU=force pack/deps/gf2x --include-ignored 2>&1 | grep --line-buffered -E '^test result|MISMATCH|panicked' | tee -a "$out/gf2x.md"
    # off (the CPU engine) only to 2^24 bits: Karatsuba takes seconds beyond.
    for mode in force off; do
        max=${CUGMP_GF2X_MAX_LOG:-26}; [ $mode = off ] && [ "$max" -gt 24 ] && max=24
        CUGMP_GPU=$mode pack/bench/gf2x --min-log "${CUGMP_GF2X_MIN_LOG:-16}" --max-log "$max" --ref-max-log "${CUGMP_GF2X_REF_MAX_LOG:-26}" 2>&1 | grep --line-buffered -E '^\||MISMATCH|panick|^CUGMP' | tee -a "$out/gf2x.md"
    done
    note "gf2x: $out/gf2x.md ($(grep -c MISMATCH "$out/gf2x.md") products differ)"
fi

if [ "$what" = beyond ]; then
    # Products the device cannot hold in one plan: tests/gpu.rs's
    # memory-limit tests under force, then benches/beyond.rs under auto at
    # 2^CUGMP_BEYOND_LOGS limbs a side (default 26 to 30). One file back:
    # beyond.md.
    pack/deps/gpu gpu_mem_limit gpu_products_beyond 2>&1 | grep --line-buffered -E '^test |MISMATCH|panicked' | tee -a "$out/beyond.md"
    CUGMP_GPU=auto pack/bench/beyond --logs "${CUGMP_BEYOND_LOGS:-26,27,28,29,30}" 2>&1 | grep --line-buffered -E '^\||MISMATCH|panick|^CUGMP' | tee -a "$out/beyond.md"
    note "beyond: $out/beyond.md ($(grep -c MISMATCH "$out/beyond.md") products differ)"
fi

if [ "$what" = profile ]; then
    # CUGMP_PROFILE=1's table for benches/programs/pi.c at CUGMP_PI_DIGITS
    # (default 10^6) on one thread, under auto. One file back: profile.txt.
    for digits in ${CUGMP_PI_DIGITS:-1000000}; do
        echo "== pi.c $digits digits, 1 thread, CUGMP_GPU=auto CUGMP_PROFILE=1" >>"$out/profile.txt"
        CUGMP_GPU=auto CUGMP_PROFILE=1 pack/c/pi-cugmp "$digits" 1 >>"$out/profile.txt" 2>&1
    done
    cat "$out/profile.txt"
    note "profile: $out/profile.txt"
fi

echo; echo "SUMMARY"; printf '%s\n' "${summary[@]}"
