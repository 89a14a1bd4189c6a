// Exact multiplication by number-theoretic transforms over three 31-bit primes.
//
// Operands are cut into 32-bit coefficients (two a limb). Each product is
// three transforms, one per prime p < 2^31, all with 32-bit arithmetic
// (Montgomery products; the butterflies' products by stage roots by Shoup's
// method, the roots' quotients in the tables), and the coefficients of the product come back by the
// Chinese remainder theorem. Two sets of primes (ntt_arith.cuh):
//
//   p0 = 27 * 2^26 + 1 = 1811939329 (generator 13)
//   p1 = 15 * 2^27 + 1 = 2013265921 (generator 31)
//   p2 = 63 * 2^25 + 1 = 2113929217 (generator 5)
//
// and, for transforms of 5 * 2^k points,
//
//   q0 = 105 * 2^23 + 1 =  880803841 (generator 26)
//   q1 = 155 * 2^23 + 1 = 1300234241 (generator 3)
//   q2 =  15 * 2^27 + 1 = 2013265921 (generator 31).
//
// Every p - 1 is divisible by 3 * 2^25, so transforms of length M = 2^m and
// 3M exist for m <= 25 (NTT_MAX_LOG); a length 3M transform is one radix-3
// step (cugmp_ntt_radix3) and three transforms of length M. Every q - 1 is
// divisible by 5 * 2^23: a length 5M transform (m <= 23) is a radix-5 step
// (cugmp_ntt_radix5) and five of length M. No three primes below 2^31 have 15 * 2^25 | p - 1,
// hence two sets. The host takes the shortest of 2^k, 3 * 2^k and 5 * 2^k
// with N >= 2 * (un + vn), so the cyclic convolution does not wrap: products
// of up to 3 * 2^24 limbs (384 MiB); 5 * 2^k for products made in one
// convolution (whole, a chunk's, mod B^n - 1), never for the sums of
// products by pieces (src/gpu/ntt/plan.rs, `product_shape`).
// Why below 2^31: a sum of two residues fits 32 bits, so (a + b) mod p is
// min(a + b, a + b - p) (an add and one VIADDMNMX on sm_90, where the sum
// mod p2 = 3 * 2^30 + 1, which could pass 2^32, took five instructions), and the forward butterfly hands x - y + p to its Montgomery
// product unreduced (below 2p, and 2p * p < 2^32 p). Only two primes below
// 2^31 have 3 * 2^26 | p - 1, so the longest transform is 3 * 2^25; longer
// products go to the GPU in pieces (src/gpu/ntt/plan.rs, Plan::Pieces).
//
// Exactness: a coefficient of the product is a sum of at most 2m products of
// two coefficients below 2^32, m the shorter operand's limbs, so it is below
// 2m * 2^64 <= 3 * 2^24 * 2^64 < 2^90 (m <= 3 * 2^23 when the product has at
// most 3 * 2^24 limbs), and P = p0 p1 p2 > 2^92.6: the CRT gives it exactly.
// With the second set, a product has at most 5 * 2^22 limbs, so m <= 5 *
// 2^21, 2m * 2^64 < 2^88.4, and Q = q0 q1 q2 > 2^90.8; a cyclic one of
// length 2n = 5 * 2^k <= 5 * 2^23 (below) has coefficients below 2n * 2^64
// < 2^89.4 < Q.
// A product mod B^n - 1 (GMP's mulmod_bnm1) is one cyclic convolution of
// length exactly N = 2n (2^k, 3 * 2^k or 5 * 2^k, so n <= 3 * 2^24,
// operands of at most n limbs): coefficient j sums the products a_i b_k with i + k = j mod
// N, at most one for each of the shorter operand's 2m coefficients, so again
// below 2m * 2^64 <= 3 * 2^25 * 2^64 < 2^91 < P. A sum of w products of
// pieces of m limbs in the transform domain (Plan::Pieces, cugmp_ntt_sum)
// has coefficients below w * 2m * 2^64, so w <= 8 at m < 3 * 2^23
// (src/gpu/ntt/plan.rs, `pairs_a_sum`).
//
// The wide sets: for products made in one convolution (whole, a chunk's,
// mod B^n - 1; src/gpu/ntt/plan.rs, `wide_shape`, `cyclic_shape_from`), a
// limb is one 64-bit coefficient, and the transforms run over five primes
// (ntt_arith.cuh):
//
//   p0 = 1711276033, p1 = 1811939329, p2 = 2013265921, p3 = 2088763393,
//   p4 = 2113929217 (3 * 2^23 divides every p - 1: 2^k and 3 * 2^k points
//   up to 3 * 2^23), and
//   q0 = 1300234241, q1 = 1321205761, q2 = 1572864001, q3 = 1866465281,
//   q4 = 2013265921 (5 * 2^22 divides every q - 1: 5 * 2^k up to 5 * 2^22).
//
// Half the points of the narrow sets' transform, five transforms for
// three: 5/6 of their work. A coefficient of the product is below m 2^128,
// m the shorter operand's limbs, at most half the transform's points: below
// 3 * 2^22 * 2^128 < 2^151.6 < P = p0 .. p4 (> 2^154.2), and below 5 * 2^21
// * 2^128 < 2^151.4 < Q = q0 .. q4 (> 2^152.8); a cyclic convolution of
// length n sums at most n such products, below 3 * 2^23 * 2^128 < 2^152.6 <
// P and 5 * 2^22 * 2^128 < 2^152.4 < Q. The CRT gives three words,
// which span three limbs (ntt_crt.cuh, crt_wide and ntt_fold_pair). The
// passes are the same kernel for every set; only a pass that reads limbs
// (cugmp_ntt_pass_wide), the radix steps and the combines have kernels of
// their own.
//
// Forward: decimation in frequency (natural order in, bit-reversed out);
// inverse: decimation in time (bit-reversed in, natural out): no bit-reversal
// pass. Both in passes of up to 14 stages in shared memory (cugmp_ntt_pass).
//
// The parts, each in its own header: the arithmetic (ntt_arith.cuh), the
// twiddle tables and the radix-3 and radix-5 steps (ntt_tables.cuh), the passes of
// radix-2 stages in shared memory (ntt_pass.cuh), and the CRT back to limbs
// (ntt_crt.cuh). This file holds the kernels the host launches.
#include "ntt_arith.cuh"
#include "ntt_tables.cuh"
#include "ntt_pass.cuh"
#include "ntt_crt.cuh"

#ifndef CUGMP_HOST_MODEL
#include "carry_scan.cuh"

// (wide: the wide sets' five primes.)
extern "C" __global__ void cugmp_ntt_tables(u32 *tab, u32 log_n, u32 h, u32 radix, u32 wide) {
    const u64 len = NTT_TABLE_STRIDE(log_n, h, radix);
    GRID_STRIDE(i, (wide ? NTT_WIDE_PRIMES : NTT_PRIMES) * len) {
        tab[i] = ntt_table_entry(i % len, log_n, h, radix, ntt_prime(radix, (u32)(i / len), wide != 0));
    }
}

// The radix-R step (ntt_radix_column) of transforms of length R * 2^log_n,
// all three primes, one thread a column j < 2^log_n. A kernel a radix, so
// that the radix-3 one keeps its registers (the radix-5 one needs more).
template <int R, bool WIDE = false>
__device__ __forceinline__ void ntt_radix_kernel(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 log_n, u32 h,
                                                 u32 inverse) {
    const u32 stride = (u32)NTT_TABLE_STRIDE(log_n, h, R);
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < (1u << log_n); j += gridDim.x * blockDim.x)
        ntt_radix_column<R, WIDE>(a, limbs, xn, tab, stride, log_n, h, j, inverse != 0);
}
extern "C" __global__ void cugmp_ntt_radix3(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *__restrict__ tab,
                                            u32 log_n, u32 h, u32 inverse) {
    ntt_radix_kernel<3>(a, limbs, xn, tab, log_n, h, inverse);
}
extern "C" __global__ void cugmp_ntt_radix5(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *__restrict__ tab,
                                            u32 log_n, u32 h, u32 inverse) {
    ntt_radix_kernel<5>(a, limbs, xn, tab, log_n, h, inverse);
}
// The same over the wide sets' five primes.
extern "C" __global__ void cugmp_ntt_radix3_wide(u32 *a, const limb_t *__restrict__ limbs, u64 xn,
                                                 const u32 *__restrict__ tab, u32 log_n, u32 h, u32 inverse) {
    ntt_radix_kernel<3, true>(a, limbs, xn, tab, log_n, h, inverse);
}
extern "C" __global__ void cugmp_ntt_radix5_wide(u32 *a, const limb_t *__restrict__ limbs, u64 xn,
                                                 const u32 *__restrict__ tab, u32 log_n, u32 h, u32 inverse) {
    ntt_radix_kernel<5, true>(a, limbs, xn, tab, log_n, h, inverse);
}

// Shared memory: 4 * 2^log_t bytes, 4 * NTT_TILE_WORDS(log_t) in a pass
// without a twist (padded, tile_word): 72 KiB at the largest tile, 2^14
// elements, of which three blocks an SM take 216 of its 228. The
// grid's y index is prime * radix + block: a holds each prime's radix
// transforms of length N one after another (and b, a turn's other
// operand, the same way), and tab the three tables, NTT_TABLE_STRIDE apart.
// kind: NTT_FORWARD, NTT_INVERSE or NTT_TURN (ntt_pass.cuh); wide: the wide
// sets' primes (five, so the grid's y goes up to 5 * radix). first_y: the
// grid's first y, where a launch takes one prime's blocks (a lane's,
// src/gpu/ntt/transform.rs, `Primes`), else 0.
template <int LIMBS>
__device__ __forceinline__ void ntt_pass_kernel(u32 *a, const limb_t *limbs, u64 xn, const u32 *b, const u32 *tab,
                                                u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 kind, u32 radix,
                                                u32 wide, u32 first_y) {
    extern __shared__ u32 tile[];
    const u32 y = blockIdx.y + first_y;
    const u32 prime = y / radix;
    // 32 bits: y < 5 * 5 and N <= 2^25, 2^23 where it is 15 and
    // 2^22 where it is 25 (a 64-bit offset made every element's address a
    // 64-bit sum of three terms).
    const u32 offset = y << log_n;
    ntt_pass_block<LIMBS>(a, offset, limbs, xn, b, tab + prime * NTT_TABLE_STRIDE(log_n, h, radix),
                          ntt_prime(radix, prime, wide != 0), log_n, h, log_t, log_s, k, kind, blockIdx.x, threadIdx.x,
                          blockDim.x, ntt_group_log(log_t, blockDim.x), tile);
}
extern "C" __global__ void __launch_bounds__(512, 3)
    cugmp_ntt_pass(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *b, const u32 *__restrict__ tab,
                   u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 kind, u32 radix, u32 wide, u32 first_y) {
    ntt_pass_kernel<NTT_LOAD_LIMBS>(a, limbs, xn, b, tab, log_n, h, log_t, log_s, k, kind, radix, wide, first_y);
}
// The wide sets' passes that read limbs, whole coefficients (the first pass
// of a transform of 2^k points, or its turn); their other passes are
// cugmp_ntt_pass's.
extern "C" __global__ void __launch_bounds__(512, 3)
    cugmp_ntt_pass_wide(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *b, const u32 *__restrict__ tab,
                        u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 kind, u32 radix, u32 wide, u32 first_y) {
    ntt_pass_kernel<NTT_LOAD_LIMBS64>(a, limbs, xn, b, tab, log_n, h, log_t, log_s, k, kind, radix, wide, first_y);
}

// The most products of forward transforms one cugmp_ntt_sum adds
// (src/gpu/ntt/plan.rs, MAX_PAIRS).
#define NTT_MAX_PAIRS 8

// Where the products' forward transforms lie: pair k is x[k] * y[k].
struct NttPairs {
    const u32 *x[NTT_MAX_PAIRS];
    const u32 *y[NTT_MAX_PAIRS];
};

// The sum of `count` pointwise products of forward transforms (pair k
// counted twice where bit k of `twice` is set: a square's x_i y_j and x_j
// y_i), into acc: what a product's turn makes in the middle of its pass
// (ntt_pass.cuh), for a sum of them (the inverse then runs plain). As
// there, it applies the inverse's scale where the transform is one pass
// (`scaled`); otherwise the inverse's last pass does. The host keeps each
// sum within the exactness bound (src/gpu/ntt/plan.rs, `pairs_a_sum`). The
// grid's y index is the prime; each prime's words, radix * 2^log_n of
// them, lie one after another.
extern "C" __global__ void cugmp_ntt_sum(u32 *acc, NttPairs pairs, u32 count, u32 twice, const u32 *__restrict__ tab,
                                          u32 log_n, u32 h, u32 radix, u32 scaled) {
    const u32 prime = blockIdx.y;
    const NttPrime q = ntt_prime(radix, prime);
    const u32 len = radix << log_n;
    const u32 scale = LDG(&tab[prime * NTT_TABLE_STRIDE(log_n, h, radix) + NTT_TABLE_LEN(log_n, h) - 1]);
    const u32 base = prime * len;
    for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += gridDim.x * blockDim.x) {
        u32 s = 0;
        for (u32 k = 0; k < count; k++) {
            u32 v = mont_mul(pairs.x[k][base + i], pairs.y[k][base + i], q);
            if ((twice >> k) & 1) v = mod_add(v, v, q);
            s = mod_add(s, v, q);
        }
        acc[base + i] = scaled ? mont_mul(s, scale, q) : s;
    }
}

// ntt_combine_at over limbs 0 .. n - 1.
extern "C" __global__ void cugmp_ntt_combine(limb_t *__restrict__ t, limb_t *__restrict__ c, const u32 *__restrict__ coef,
                                              u64 n_len, u64 n, u32 wrap) {
    GRID_STRIDE(i, n) ntt_combine_at(t, c, coef, n_len, n, wrap != 0, i);
}

// ntt_combine_radix_at over column pairs 0 .. 2^(log_n - 1) - 1: the
// inverse's radix-R step and the fold into n limbs, all three primes (tab
// their tables, NTT_TABLE_STRIDE apart). A kernel a radix, as above.
template <int R>
__device__ __forceinline__ void ntt_combine_kernel(limb_t *t, limb_t *c, const u32 *a, const u32 *tab, u32 log_n, u32 h,
                                                   u64 n, u32 wrap) {
    const u32 stride = (u32)NTT_TABLE_STRIDE(log_n, h, R);
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < (1u << (log_n - 1)); u += gridDim.x * blockDim.x)
        ntt_combine_radix_at<R>(t, c, a, tab, stride, log_n, h, n, wrap != 0, u);
}
extern "C" __global__ void cugmp_ntt_combine3(limb_t *__restrict__ t, limb_t *__restrict__ c, const u32 *__restrict__ a,
                                              const u32 *__restrict__ tab, u32 log_n, u32 h, u64 n, u32 wrap) {
    ntt_combine_kernel<3>(t, c, a, tab, log_n, h, n, wrap);
}
extern "C" __global__ void cugmp_ntt_combine5(limb_t *__restrict__ t, limb_t *__restrict__ c, const u32 *__restrict__ a,
                                              const u32 *__restrict__ tab, u32 log_n, u32 h, u64 n, u32 wrap) {
    ntt_combine_kernel<5>(t, c, a, tab, log_n, h, n, wrap);
}

// ntt_combine_wide_at over column pairs 0 .. 2^(log_n - 1) - 1: the wide
// sets' way back to limbs (R = 1: no radix step).
template <int R>
__device__ __forceinline__ void ntt_combine_wide_kernel(limb_t *t, limb_t *c, const u32 *a, const u32 *tab, u32 log_n,
                                                        u32 h, u64 n, u32 wrap) {
    const u32 stride = (u32)NTT_TABLE_STRIDE(log_n, h, R);
    for (u32 u = blockIdx.x * blockDim.x + threadIdx.x; u < (1u << (log_n - 1)); u += gridDim.x * blockDim.x)
        ntt_combine_wide_at<R>(t, c, a, tab, stride, log_n, h, n, wrap != 0, u);
}
extern "C" __global__ void cugmp_ntt_combine_wide(limb_t *__restrict__ t, limb_t *__restrict__ c,
                                                  const u32 *__restrict__ a, const u32 *__restrict__ tab, u32 log_n, u32 h,
                                                  u64 n, u32 wrap) {
    ntt_combine_wide_kernel<1>(t, c, a, tab, log_n, h, n, wrap);
}
extern "C" __global__ void cugmp_ntt_combine3_wide(limb_t *__restrict__ t, limb_t *__restrict__ c,
                                                   const u32 *__restrict__ a, const u32 *__restrict__ tab, u32 log_n, u32 h,
                                                   u64 n, u32 wrap) {
    ntt_combine_wide_kernel<3>(t, c, a, tab, log_n, h, n, wrap);
}
extern "C" __global__ void cugmp_ntt_combine5_wide(limb_t *__restrict__ t, limb_t *__restrict__ c,
                                                   const u32 *__restrict__ a, const u32 *__restrict__ tab, u32 log_n, u32 h,
                                                   u64 n, u32 wrap) {
    ntt_combine_wide_kernel<5>(t, c, a, tab, log_n, h, n, wrap);
}

// A whole product on the wide sets' transforms of 2^log_n points (R = 1),
// from its inverse passes' output `a` to its n limbs at r, carries
// included (ntt_crt.cuh, ntt_wide_run): one tile of NTT_CARRY_TILE limbs a
// block, a run of NTT_WIDE_RUN a thread, and the carry between tiles by
// carry_scan.cuh's look-back (`state`, `epoch`: the add kernel's scan
// state, cuda/linear.cu). The limb below a tile comes from the two pairs
// under it, so most tiles know their carry in without waiting. The combine
// and the add kernel moved t and c through device memory: at 10^6 x 10^6
// limbs 27.5 and 16.5 us (RESULTS.md, "The wide sets").
// The tile is the add kernel's (LINEAR_TILE), whose scan state the host
// sizes (src/gpu/linear.rs, `with_scan_state`).
#define NTT_CARRY_THREADS 256
#define NTT_CARRY_TILE (NTT_CARRY_THREADS * NTT_WIDE_RUN)
extern "C" __global__ void __launch_bounds__(NTT_CARRY_THREADS)
    cugmp_ntt_combine_wide_carry(limb_t *__restrict__ r, const u32 *__restrict__ a, u32 log_n, u64 n,
                                 unsigned long long *state, u64 epoch) {
    constexpr u32 WARPS = NTT_CARRY_THREADS / 32;
    // carry_into_tile first, as in cuda/linear.cu's add kernel.
    __shared__ u32 carry_into_tile;
    __shared__ u64 tile_s;
    __shared__ u32 warp_gp[WARPS];
    __shared__ u64 warp_up[WARPS][2];
    __shared__ u32 below_gp;
    __shared__ u64 below_t1, below_c3;
    if (threadIdx.x == 0) tile_s = atomicAdd(&state[0], 1ull);
    __syncthreads();
    const u64 tile = tile_s;
    // 32 bits: n <= 2^log_n <= 2^23.
    const u32 base = (u32)tile * NTT_CARRY_TILE;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 e0 = base + threadIdx.x * NTT_WIDE_RUN;
    // What passes into the tile's first two limbs, and the limb below it:
    // its own word (t1) from the pair under the tile, what passes into it
    // (c3) from the pair under that. The first tile has nothing below (a
    // product's pair 0 receives nothing: ntt_fold_pair). Two threads of two
    // warps make the two pairs before their runs, where one thread made
    // both after its run while the block waited for it at the barrier
    // (the kernel 30.8 to 31.7 -> 29.4 to 29.5 us at 10^6 x 10^6 limbs, RESULTS.md,
    // "Primes on lanes").
    u64 into0 = 0, into1 = 0;
    if (threadIdx.x == 0) {
        u64 t0 = 0, t1 = 0;
        if (tile > 0) ntt_wide_pair_at(a, log_n, base - 2, &t0, &t1, &into0, &into1);
        below_t1 = t1;
    } else if (threadIdx.x == 32) {
        u64 u0, u1, c2, c3 = 0;
        if (tile > 0) ntt_wide_pair_at(a, log_n, base - 4, &u0, &u1, &c2, &c3);
        below_c3 = c3;
    }
    // (Past n the coefficients are zero, and 2^log_n is a multiple of the
    // tile: every run reads inside the transform.)
    u64 t[NTT_WIDE_RUN], c[NTT_WIDE_RUN], up[2];
    ntt_wide_run(a, log_n, e0, t, c, up);
    u64 from0 = __shfl_up_sync(0xffffffffu, up[0], 1), from1 = __shfl_up_sync(0xffffffffu, up[1], 1);
    if (lane == 31) warp_up[warp][0] = up[0], warp_up[warp][1] = up[1];
    __syncthreads();
    if (threadIdx.x == 0) {
        const u64 t1 = below_t1, below = t1 + below_c3;
        below_gp = tile > 0 ? (u32)(below < t1) | (u32)(below == ~0ull) << 1 : 0;
    }
    if (lane == 0) {
        from0 = warp ? warp_up[warp - 1][0] : into0;
        from1 = warp ? warp_up[warp - 1][1] : into1;
    }
    c[0] = from0, c[1] = from1;
    // Each limb's sum before carries in, and the run's (g, p); limbs at or
    // past n (zero) carry nothing.
    u32 gen = 0, keep = 0, run_gp = 2;
#pragma unroll
    for (u32 i = 0; i < NTT_WIDE_RUN; i++) {
        const u64 s = t[i] + c[i];
        const bool inside = e0 + i < n;
        const u32 g = inside && s < t[i], p = !inside || s == ~0ull;
        t[i] = s;
        gen |= g << i, keep |= p << i;
        run_gp = gp_combine(g | p << 1, run_gp);
    }
    // The warp's inclusive scan of the runs' (g, p), then the warps'.
    u32 exclusive;
    const u32 inclusive = warp_scan_gp(run_gp, lane, &exclusive);
    if (lane == 31) warp_gp[warp] = inclusive;
    __syncthreads();
    u32 warp_prefix;
    const u32 tile_carry = scan_block_carry<WARPS>(warp_gp, warp, &warp_prefix, below_gp, &carry_into_tile, state, tile,
                                                   (n - 1) / NTT_CARRY_TILE, epoch, nullptr);
    const u32 prefix = gp_combine(exclusive, warp_prefix);
    u32 carry = (prefix & 1) | ((prefix >> 1) & tile_carry);
#pragma unroll
    for (u32 i = 0; i < NTT_WIDE_RUN; i++) {
        const u64 s = t[i];
        t[i] = s + carry;
        carry = ((gen >> i) & 1) | ((keep >> i) & carry);
    }
    if (e0 + NTT_WIDE_RUN <= n) {
#pragma unroll
        for (u32 i = 0; i < NTT_WIDE_RUN; i += 2) *(ulonglong2 *)&r[e0 + i] = ulonglong2{t[i], t[i + 1]};
    } else {
#pragma unroll
        for (u32 i = 0; i < NTT_WIDE_RUN; i++)
            if (e0 + i < n) r[e0 + i] = t[i];
    }
}

// The scan of a small fold's carries and its limbs' write (ntt_small_carry),
// once each of the block's NTT_SMALL_THREADS threads holds its run's values
// and `top`, the high bits of its run's last limb.
__device__ __forceinline__ void ntt_small_fold(limb_t *r, const u64 *lo, const u64 *hi, u32 len, u64 first, u64 top) {
    __shared__ u64 tops[NTT_SMALL_THREADS];
    __shared__ u32 scan[NTT_SMALL_THREADS];
    const u32 k = threadIdx.x;
    tops[k] = top;
    __syncthreads();
    // A run with limbs follows a full one.
    const u64 below = k ? tops[k - 1] : 0;
    u32 f = ntt_small_carry(lo, hi, len, below, 0, nullptr, 0) | ntt_small_carry(lo, hi, len, below, 1, nullptr, 0) << 1;
    scan[k] = f;
    __syncthreads();
    for (u32 d = 1; d < blockDim.x; d <<= 1) {
        const u32 earlier = k >= d ? scan[k - d] : NTT_CARRY_SAME;
        __syncthreads();
        f = ntt_carry_compose(f, earlier);
        scan[k] = f;
        __syncthreads();
    }
    ntt_small_carry(lo, hi, len, below, k ? scan[k - 1] & 1 : 0, r, first);
}

// A small product's CRT, fold and carries in one block of NTT_SMALL_THREADS:
// its n <= NTT_SMALL_THREADS * NTT_SMALL_RUN limbs into r, which may be
// pinned host memory the device writes over PCIe.
extern "C" __global__ void __launch_bounds__(NTT_SMALL_THREADS)
    cugmp_ntt_combine_small(limb_t *r, const u32 *__restrict__ coef, u64 n_len, u64 n) {
    const u64 run = (n + blockDim.x - 1) / blockDim.x;
    const u64 first = min((u64)threadIdx.x * run, n);
    const u32 len = (u32)(min(first + run, n) - first);
    u64 lo[NTT_SMALL_RUN], hi[NTT_SMALL_RUN];
    const u64 top = ntt_small_values(coef, n_len, first, len, lo, hi);
    ntt_small_fold(r, lo, hi, len, first, top);
}
#endif
