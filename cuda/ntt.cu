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
// pass. Twiddles: one table tw[k] = w^k, k < N/2; inverse twiddles are read
// from it as w^-k = -w^(N/2-k).
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


// tw[k] = w^k for k < half.
extern "C" __global__ void cugmp_ntt_twiddles(u64 *tw, u64 w, u64 half) {
    GRID_STRIDE(k, half) tw[k] = gl_pow(w, k);
}

// Cut n limbs into 16-bit coefficients, zero-padded to N.
extern "C" __global__ void cugmp_ntt_split16(u64 *__restrict__ out, const limb_t *__restrict__ limbs, u64 n, u64 N) {
    GRID_STRIDE(i, N) out[i] = (i < 4 * n) ? (limbs[i >> 2] >> (16 * (i & 3))) & 0xffffULL : 0;
}

// One radix-2 decimation-in-frequency stage over blocks of 2*len.
extern "C" __global__ void cugmp_ntt_dif_stage(u64 *a, const u64 *__restrict__ tw, u64 N, u64 len) {
    u64 stride = N / (2 * len);
    GRID_STRIDE(t, N / 2) {
        u64 j = t % len;
        u64 i = (t / len) * 2 * len + j;
        u64 u = a[i], v = a[i + len];
        a[i] = gl_add(u, v);
        a[i + len] = gl_mul(gl_sub(u, v), tw[j * stride]);
    }
}

// One radix-2 decimation-in-time stage with inverse twiddles.
extern "C" __global__ void cugmp_ntt_dit_stage(u64 *a, const u64 *__restrict__ tw, u64 N, u64 len) {
    u64 stride = N / (2 * len);
    GRID_STRIDE(t, N / 2) {
        u64 j = t % len;
        u64 i = (t / len) * 2 * len + j;
        u64 k = j * stride;
        u64 winv = k == 0 ? 1 : GL_P - tw[N / 2 - k];  // w^-k = w^(N/2) * w^(N/2-k) = -w^(N/2-k)
        u64 u = a[i], v = gl_mul(a[i + len], winv);
        a[i] = gl_add(u, v);
        a[i + len] = gl_sub(u, v);
    }
}

// a[i] = a[i] * b[i] * scale (scale = 1/N folds the inverse transform's
// normalisation into the product). b may equal a (squaring).
extern "C" __global__ void cugmp_ntt_pointwise(u64 *a, const u64 *b, u64 N, u64 scale) {
    GRID_STRIDE(i, N) a[i] = gl_mul(gl_mul(a[i], b[i]), scale);
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
// sum_{i-1}); c[i + 1] = the carry out of that addition (0 or 1), c[0] = 0
// (zeroed by the caller). The product is then t + c, which the add kernel of
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
    }
}

// Squaring: a[i] = a[i]^2 * scale.
extern "C" __global__ void cugmp_ntt_pointwise_sqr(u64 *a, u64 N, u64 scale) {
    GRID_STRIDE(i, N) { u64 x = a[i]; a[i] = gl_mul(gl_mul(x, x), scale); }
}
