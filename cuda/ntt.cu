// Exact multiplication by a number-theoretic transform over one 64-bit prime.
//
// p = 2^64 - 2^32 + 1 ("Goldilocks"): p - 1 = 2^32 * (2^32 - 1), so
// transforms of every power-of-two length up to 2^32 exist, and 2^64 = 2^32 - 1
// (mod p), 2^96 = -1 (mod p) make the 128-bit reduction a few adds.
//
// Operands are cut into 16-bit coefficients. A coefficient of the cyclic
// convolution is a sum of at most m products of two coefficients below 2^16,
// where m = 4 * (limbs of the shorter operand), so it is below
// m * (2^16 - 1)^2 < m * 2^32. It is exact (it equals its residue mod p) when
// m * 2^32 <= p, i.e. m < 2^32 - 1: the shorter operand may have up to
// 2^30 - 1 limbs. The transform length N is a power of two with
// N >= 4 * (un + vn) (no wrap-around), N <= 2^32: the product may have up to
// 2^30 limbs. Both bounds are far beyond device memory (a 2^30-limb product
// needs 3 * 2^32 * 8 bytes = 96 GiB of transforms); the host checks memory.
//
// Forward: decimation in frequency (natural order in, bit-reversed out);
// inverse: decimation in time (bit-reversed in, natural out): no bit-reversal
// pass. Both in passes of up to 13 stages in shared memory (cugmp_ntt_pass).
#include "cugmp.cuh"

#define GL_P 0xffffffff00000001ULL
#define GL_EPS 0xffffffffULL // 2^64 mod p

__device__ __forceinline__ u64 gl_add(u64 a, u64 b) {
    u64 r = a + b;
    if (r < a) r += GL_EPS;  // wrapped: + 2^64 = + EPS (no second wrap: a, b < p)
    if (r >= GL_P) r -= GL_P;
    return r;
}

__device__ __forceinline__ u64 gl_sub(u64 a, u64 b) {
    u64 r = a - b;
    if (a < b) r -= GL_EPS;  // a - b + p, computed mod 2^64
    return r;
}

// (hi * 2^64 + lo) mod p, canonical.
__device__ __forceinline__ u64 gl_reduce128(u64 lo, u64 hi) {
    u64 hh = hi >> 32, hl = hi & 0xffffffffULL;
    u64 t0 = lo - hh;                 // hh * 2^96 = -hh (mod p)
    if (lo < hh) t0 -= GL_EPS;
    u64 t1 = hl * GL_EPS;             // hl * 2^64 = hl * EPS, < 2^64
    u64 r = t0 + t1;
    if (r < t1) r += GL_EPS;
    if (r >= GL_P) r -= GL_P;
    return r;
}

__device__ __forceinline__ u64 gl_mul(u64 a, u64 b) {
    return gl_reduce128(a * b, __umul64hi(a, b));
}

__device__ u64 gl_pow(u64 b, u64 e) {
    u64 r = 1;
    while (e) {
        if (e & 1) r = gl_mul(r, b);
        b = gl_mul(b, b);
        e >>= 1;
    }
    return r;
}


// ---------------------------------------------------------------------------
// Twiddle tables, built once per transform length (src/gpu/ntt.rs caches
// them). w is a root of order N = 2^log_n, r one of order 2^13, both powers
// of the same generator, so r^(x * 2^13 / 2^(q+1)) = w^(x * N / 2^(q+1)):
//   [0, 4096)             r^x            stage roots inside a pass (forward)
//   [4096, 8192)          r^-x           (inverse)
//   then, with H = 2^h and M = N / H:
//   A  [H]  w^i,   Ai [H]  w^-i          w^e = A[e mod H] * B[e / H] for e < N:
//   B  [M]  w^(iH), Bi [M] w^-(iH)       two small tables instead of one of N
// ---------------------------------------------------------------------------
#define NTT_ROOT_LOG 13                        // r has order 2^NTT_ROOT_LOG
#define NTT_ROOTS (1 << (NTT_ROOT_LOG - 1))   // r^x for x < 2^12: every stage root of a pass of up to 13 stages

extern "C" __global__ void cugmp_ntt_tables(u64 *tab, u64 w, u64 w_inv, u64 r, u64 r_inv, u32 log_n, u32 h) {
    const u64 H = 1ull << h, M = 1ull << (log_n - h);
    const u64 total = 2 * NTT_ROOTS + 2 * H + 2 * M;
    GRID_STRIDE(i, total) {
        u64 base, e;
        if (i < 2 * NTT_ROOTS) {
            base = i < NTT_ROOTS ? r : r_inv;
            e = i % NTT_ROOTS;
        } else if (i < 2 * NTT_ROOTS + 2 * H) {
            u64 k = i - 2 * NTT_ROOTS;
            base = k < H ? w : w_inv;
            e = k % H;
        } else {
            u64 k = i - 2 * NTT_ROOTS - 2 * H;
            base = k < M ? w : w_inv;
            e = (k % M) << h;
        }
        tab[i] = gl_pow(base, e);
    }
}

// w^e (or w^-e), e < N, from the tables above.
__device__ __forceinline__ u64 ntt_power(const u64 *tab, u32 log_n, u32 h, u64 e, bool inverse) {
    const u64 H = 1ull << h, M = 1ull << (log_n - h);
    const u64 *A = tab + 2 * NTT_ROOTS + (inverse ? H : 0);
    const u64 *B = tab + 2 * NTT_ROOTS + 2 * H + (inverse ? M : 0);
    return gl_mul(__ldg(&A[e & (H - 1)]), __ldg(&B[e >> h]));
}

// ---------------------------------------------------------------------------
// One pass of k consecutive radix-2 stages in shared memory.
//
// The forward transform is the radix-2 decimation in frequency: stages of
// span len = N/2, N/4, ..., 1, butterfly (x, y) at i, i + len ->
// (x + y, (x - y) * w^((i mod len) * N / (2 len))). Its inverse is the
// decimation in time, spans 1, 2, ..., N/2, (x, y) -> (x + y t, x - y t),
// t = w^-((i mod len) * N / (2 len)). The host groups the log2 N stages into
// passes (at most 13 stages; src/gpu/ntt.rs, `passes`), so a transform reads
// and writes device memory two or three times instead of log2 N times.
//
// A pass of spans s * 2^(k-1) down to s (up, inverse) works on groups of
// 2^k elements i = base + j * s + r (j < 2^k, r < s, base a multiple of
// 2L = s * 2^k), closed under its stages. The twiddle of stage q (span
// s * 2^q) at j, r is root(j mod 2^q, order 2^(q+1)) * z^(2^(k-1-q)) with
// z = w^(r * N / 2L). The z factor is the same for the whole upper half it
// multiplies, which no later stage of the pass mixes with anything else, so it
// moves to the end of the pass: element j gets z^bitrev_k(j) once, and the
// stages use only the 2^12 roots of the small table. (The inverse moves it
// to the start, as z^-bitrev_k(j).) One power of w per element per pass,
// from two small tables.
//
// A block holds a tile of T = 2^log_t elements (the host picks log_t <= 13,
// smaller for small N so that a pass has several blocks; src/gpu/ntt.rs,
// `tile_log`): C = min(s,
// T / 2^k) consecutive residues r of O = T / (2^k C) consecutive groups,
// tile element t = (o * 2^k + j) * C + r. With C >= 4 every global access
// covers at least one whole 32-byte sector; the last pass (s = 1) reads and
// writes whole contiguous groups.
//
// The first forward pass reads the operand's limbs (`limbs`, xn of them) and
// cuts them into 16-bit coefficients itself (zero past 4 * xn). The first
// inverse pass (b != 0) reads the pointwise product a * b * scale of the two
// forward transforms (scale = 1/N, the inverse's normalisation; b = a
// squares): no pass of its own. Otherwise it reads a. It always writes a.
// ---------------------------------------------------------------------------
// Butterfly group u of a pass (tile layout above: t = (o * 2^k + j) * C + r):
// the tile index of its first element. The group's elements lie 2^p apart in
// j, so its first j is u's j-part with `width` zero bits inserted at p (width
// 1: a radix-2 pair, 2: a radix-4 group); *low gets j's bits below p, the
// stage roots' offset.
__host__ __device__ __forceinline__ u32 group_start(u32 u, u32 log_c, u32 k, u32 p, u32 width, u32 *low) {
    const u32 r = u & ((1u << log_c) - 1), rest = u >> log_c;
    const u32 jq = rest & ((1u << (k - width)) - 1), o = rest >> (k - width);
    *low = jq & ((1u << p) - 1);
    const u32 j0 = ((jq >> p) << (p + width)) | *low;
    return (((o << k) + j0) << log_c) | r;
}

// Shared memory: 8 * 2^log_t bytes (64 KiB at the largest tile, 2^13).
// At most 40 registers a thread (ptxas 13.0 spills a few bytes), so three
// blocks of 512 threads fit an SM's register file.
extern "C" __global__ void __launch_bounds__(512, 3)
    cugmp_ntt_pass(u64 *a, const limb_t *__restrict__ limbs, u64 xn, const u64 *b, u64 scale, const u64 *__restrict__ tab,
                   u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 inverse) {
    extern __shared__ u64 tile[];
    const u32 threads = blockDim.x;
    const u32 T = 1u << log_t;
    const u32 log_c = min(log_s, log_t - k);
    const u32 C = 1u << log_c, G = 1u << k;
    const u32 log_o = log_t - k - log_c;
    const u64 chunks = 1ull << (log_s - log_c);  // blocks per group of groups
    const u64 outer0 = ((u64)blockIdx.x >> (log_s - log_c)) << log_o;
    const u64 r0 = ((u64)blockIdx.x & (chunks - 1)) << log_c;
    const u32 log_2l = k + log_s;
    // z^bitrev(j) = w^(r * bitrev(j) * N / 2L): exponent shift.
    const u32 twist_shift = log_n - log_2l;

    for (u32 t = threadIdx.x; t < T; t += threads) {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1), o = t >> (log_c + k);
        const u64 g = ((outer0 + o) << log_2l) + ((u64)j << log_s) + r0 + r;
        u64 v;
        if (limbs)
            v = g < 4 * xn ? (limbs[g >> 2] >> (16 * (g & 3))) & 0xffffULL : 0;
        else if (b)
            v = gl_mul(gl_mul(a[g], b[g]), scale);  // b may be a: squaring
        else
            v = a[g];
        if (inverse && log_s) {
            u64 e = ((r0 + r) * (__brevll(j) >> (64 - k))) << twist_shift;
            if (e) v = gl_mul(v, ntt_power(tab, log_n, h, e, true));
        }
        tile[t] = v;
    }
    __syncthreads();

    // Stages two at a time (radix 4: four elements in registers per
    // shared-memory round trip and per barrier), p and p + 1 being the pair's
    // lower and upper stage. With an odd count the last stage runs alone
    // (span 2^0 forward, the top span inverse).
    const u64 *roots = tab + (inverse ? NTT_ROOTS : 0);
    for (u32 step = 0; step < k;) {
        if (step + 1 < k) {
            const u32 p = inverse ? step : k - 2 - step;
            for (u32 u = threadIdx.x; u < T / 4; u += threads) {
                u32 low;
                const u32 i00 = group_start(u, log_c, k, p, 2, &low);
                const u32 d0 = (1u << p) << log_c, d1 = d0 << 1;
                // Stage p + 1 (roots of order 2^(p+2)) at offsets low and
                // low + 2^p; stage p (order 2^(p+1)) at offset low.
                const u64 wa = __ldg(&roots[low << (NTT_ROOT_LOG - 2 - p)]);
                const u64 wb = __ldg(&roots[(low << (NTT_ROOT_LOG - 2 - p)) + (NTT_ROOTS / 2)]);
                const u64 wc = __ldg(&roots[low << (NTT_ROOT_LOG - 1 - p)]);
                const u64 x00 = tile[i00], x01 = tile[i00 + d0], x10 = tile[i00 + d1], x11 = tile[i00 + d0 + d1];
                u64 y00, y01, y10, y11;
                if (inverse) {
                    u64 t = gl_mul(x01, wc);
                    const u64 a0 = gl_add(x00, t), a1 = gl_sub(x00, t);
                    t = gl_mul(x11, wc);
                    const u64 a2 = gl_add(x10, t), a3 = gl_sub(x10, t);
                    t = gl_mul(a2, wa);
                    y00 = gl_add(a0, t);
                    y10 = gl_sub(a0, t);
                    t = gl_mul(a3, wb);
                    y01 = gl_add(a1, t);
                    y11 = gl_sub(a1, t);
                } else {
                    const u64 a0 = gl_add(x00, x10), a2 = gl_mul(gl_sub(x00, x10), wa);
                    const u64 a1 = gl_add(x01, x11), a3 = gl_mul(gl_sub(x01, x11), wb);
                    y00 = gl_add(a0, a1);
                    y01 = gl_mul(gl_sub(a0, a1), wc);
                    y10 = gl_add(a2, a3);
                    y11 = gl_mul(gl_sub(a2, a3), wc);
                }
                tile[i00] = y00;
                tile[i00 + d0] = y01;
                tile[i00 + d1] = y10;
                tile[i00 + d0 + d1] = y11;
            }
            step += 2;
        } else {
            const u32 q = inverse ? step : k - 1 - step;
            for (u32 u = threadIdx.x; u < T / 2; u += threads) {
                u32 y;
                const u32 lo = group_start(u, log_c, k, q, 1, &y);
                const u32 hi = lo + ((1u << q) << log_c);
                const u64 w = __ldg(&roots[y << (NTT_ROOT_LOG - 1 - q)]);
                u64 x0 = tile[lo], x1 = tile[hi];
                if (inverse) {
                    x1 = gl_mul(x1, w);
                    tile[lo] = gl_add(x0, x1);
                    tile[hi] = gl_sub(x0, x1);
                } else {
                    tile[lo] = gl_add(x0, x1);
                    tile[hi] = gl_mul(gl_sub(x0, x1), w);
                }
            }
            step += 1;
        }
        __syncthreads();
    }

    for (u32 t = threadIdx.x; t < T; t += threads) {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1), o = t >> (log_c + k);
        const u64 g = ((outer0 + o) << log_2l) + ((u64)j << log_s) + r0 + r;
        u64 v = tile[t];
        if (!inverse && log_s) {
            u64 e = ((r0 + r) * (__brevll(j) >> (64 - k))) << twist_shift;
            if (e) v = gl_mul(v, ntt_power(tab, log_n, h, e, false));
        }
        a[g] = v;
    }
}

// 128-bit value of limb i's four coefficients: sum_j coef[4i+j] << 16j.
__device__ __forceinline__ void limb_sum(const u64 *coef, u64 i, u64 *lo, u64 *hi) {
    u64 l = 0, h = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        u64 c = coef[4 * i + j];
        u64 part_lo = j ? c << (16 * j) : c;
        u64 part_hi = j ? c >> (64 - 16 * j) : 0;
        l += part_lo;
        h += part_hi + (l < part_lo);
    }
    *lo = l;
    *hi = h;
}

// Fold coefficients into limbs: t[i] = low 64 bits of (sum_i + high part of
// sum_{i-1}); c[i + 1] = the carry out of that addition (0 or 1), c[0] = 0.
// The product is then t + c, which the add kernel of
// cuda/linear.cu computes with its parallel carry: one carry logic for all.
extern "C" __global__ void cugmp_ntt_combine16(limb_t *__restrict__ t, limb_t *__restrict__ c, const u64 *__restrict__ coef, u64 n) {
    GRID_STRIDE(i, n) {
        u64 lo, hi, plo, phi = 0;
        limb_t r;
        limb_sum(coef, i, &lo, &hi);
        if (i > 0) limb_sum(coef, i - 1, &plo, &phi);
        r = lo + phi;
        t[i] = r;
        // The carry out of the top limb is 0: the product fits in n limbs.
        if (i + 1 < n) c[i + 1] = r < lo;
        if (i == 0) c[0] = 0;
    }
}
