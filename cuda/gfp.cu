// Exact multiplication by the FFT over the generalized Fermat prime
// p = r^8 + 1, r = 2^61 + 2^41 (CUGMP_PRODUCT=gfp). src/gpu/gfp/field.rs
// states the arithmetic and why this r, and runs the same steps on the CPU;
// src/gpu/gfp/mod.rs states the transform and its exactness bound.
//
// An element is eight signed base-r digits, |d| <= r/2 + 3 once normalised,
// stored digit-major: digit k of element i of an n-element array at
// a[k * n + i], so that a warp's loads of one digit are contiguous.
// Operands are cut into 192-bit coefficients (three limbs). The forward
// transform is radix-4 decimation in frequency (natural order in, digit-
// reversed out), the inverse radix-4 decimation in time; the DFT of four
// points multiplies by r^4 (a move of digits), and only the twiddles
// between stages are general products. Odd log n adds one radix-2 stage.
//
// Each kernel's work for one index is a function of its own (gfp_*_at), so
// that c_tests/gfp_model.cpp can compile this file as host C++
// (CUGMP_HOST_MODEL) and run every kernel on the CPU against GMP
// (src/gpu/gfp/model.rs).
#ifdef CUGMP_HOST_MODEL
#include <stdint.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef u64 limb_t;
#define GFP_FN static inline
#else
#include "cugmp.cuh"
#define GFP_FN __device__ __forceinline__
#endif

typedef long long i64;
typedef __int128 i128;

#define GFP_K 8
#define GFP_R ((i64)((1ULL << 61) + (1ULL << 41)))
#define GFP_HALF (GFP_R / 2)

struct Gfp {
    i64 d[GFP_K];
};

// (q, m) with t = q r + m, |m| <= r/2, for |t| < 2^63 - 2^61 (field.rs,
// quotient_small): q is t / 2^61 to the nearest integer, within 4 of the
// quotient, so |t - q r| <= 2^60 + 2^43 and one step ends it. t - q r is formed with
// wrapping arithmetic: only the result need fit 64 bits. r's two bits make
// q r two shifts.
GFP_FN i64 gfp_quotient(i64 t, i64 &rem) {
    i64 q = ((t >> 60) + 1) >> 1;
    i64 m = (i64)((u64)t - ((u64)q << 61) - ((u64)q << 41));
    if (m > GFP_HALF) {
        q += 1;
        m -= GFP_R;
    } else if (m < -GFP_HALF) {
        q -= 1;
        m += GFP_R;
    }
    rem = m;
    return q;
}

// The same for |t| < 2^124 (field.rs, quotient): t / r = (t / 2^61) / (1 +
// 2^-20) to within a few units from shifts, then the remainder (below 2^64
// but not 2^63) one step nearer, then gfp_quotient.
GFP_FN i64 gfp_quotient(i128 t, i64 &rem) {
    i64 q1 = (i64)(t >> 61);
    i64 q = q1 - (q1 >> 20) + (q1 >> 40) - (q1 >> 60);
    i128 m = t - ((i128)q << 61) - ((i128)q << 41);
    i64 e = (i64)(m >> 61);
    return q + e + gfp_quotient((i64)((u64)m - ((u64)e << 61) - ((u64)e << 41)), rem);
}

// The carry out of the top, c r^8 = -c, back in at the bottom: c = h r + l
// goes in as -l at digit 0 and -h at digit 1, then digit 0's carry.
GFP_FN void gfp_fold(i64 d[GFP_K], i64 c) {
    i64 l, h = gfp_quotient(c, l);
    i64 q = gfp_quotient(d[0] - l, d[0]);
    d[1] += q - h;
}

// sum z_i r^i normalised, |digits| <= r/2 + 3 (field.rs, normalize): one
// carry pass, and its carry out of the top folded back in. Columns of
// products (i128, |z_i| < 2^123) or sums of digits (i64, below 2^63 -
// 2^61).
template <typename T>
GFP_FN Gfp gfp_normalize(const T z[GFP_K]) {
    Gfp x;
    i64 c = 0;
#pragma unroll
    for (int s = 0; s < GFP_K; s++) c = gfp_quotient(z[s] + c, x.d[s]);
    gfp_fold(x.d, c);
    return x;
}

// a b as a signed 128-bit number (two 64-bit products on the device).
GFP_FN i128 gfp_mul_wide(i64 a, i64 b) {
#ifdef CUGMP_HOST_MODEL
    return (i128)a * b;
#else
    return (i128)(((unsigned __int128)(u64)__mul64hi(a, b) << 64) | (u64)(a * b));
#endif
}

// x y: 64 digit products in eight columns, those past the top folded back
// negated (r^8 = -1).
GFP_FN Gfp gfp_mul(const Gfp &x, const Gfp &y) {
    i128 z[GFP_K];
#pragma unroll
    for (int s = 0; s < GFP_K; s++) z[s] = 0;
#pragma unroll
    for (int i = 0; i < GFP_K; i++) {
#pragma unroll
        for (int j = 0; j < GFP_K; j++) {
            i128 p = gfp_mul_wide(x.d[i], y.d[j]);
            if (i + j < GFP_K) z[i + j] += p;
            else z[i + j - GFP_K] -= p;
        }
    }
    return gfp_normalize(z);
}

GFP_FN Gfp gfp_load(const i64 *a, u64 n, u64 i) {
    Gfp x;
#pragma unroll
    for (int k = 0; k < GFP_K; k++) x.d[k] = a[k * n + i];
    return x;
}

GFP_FN void gfp_store(i64 *a, u64 n, u64 i, const Gfp &x) {
#pragma unroll
    for (int k = 0; k < GFP_K; k++) a[k * n + i] = x.d[k];
}

// a + b or a - b digit by digit, normalised (digits below 2^62 - 2^60).
GFP_FN Gfp gfp_add(const i64 a[GFP_K], const i64 b[GFP_K], bool subtract) {
    i64 y[GFP_K];
#pragma unroll
    for (int k = 0; k < GFP_K; k++) y[k] = subtract ? a[k] - b[k] : a[k] + b[k];
    return gfp_normalize(y);
}

// The DFT of four points with fourth root of unity r^4 (forward) or r^12 =
// -r^4 (inverse), unnormalised sums then one normalisation each:
// |digits| <= 4 (r/2 + 3) < 2^63 - 2^61 before it (gfp_quotient's bound).
GFP_FN void gfp_dft4(Gfp x[4], bool inverse) {
    i64 a[GFP_K], b[GFP_K], c[GFP_K], d[GFP_K], t[GFP_K];
#pragma unroll
    for (int k = 0; k < GFP_K; k++) {
        a[k] = x[0].d[k] + x[2].d[k];
        b[k] = x[0].d[k] - x[2].d[k];
        c[k] = x[1].d[k] + x[3].d[k];
        t[k] = x[1].d[k] - x[3].d[k];
    }
    // d = t r^4 (or -t r^4): digits up four places, those past the top negated.
#pragma unroll
    for (int k = 0; k < GFP_K; k++) {
        i64 moved = k >= 4 ? t[k - 4] : -t[k + 4];
        d[k] = inverse ? -moved : moved;
    }
    x[0] = gfp_add(a, c, false);
    x[2] = gfp_add(a, c, true);
    x[1] = gfp_add(b, d, false);
    x[3] = gfp_add(b, d, true);
}

// The roots table: t[e] = w^e = a[e mod 2^h] b[e >> h] for e < n (a and b
// element-major, from the host).
GFP_FN void gfp_roots_at(i64 *t, const Gfp *a, const Gfp *b, u32 h, u64 n, u64 e) {
    gfp_store(t, n, e, gfp_mul(a[e & ((1ull << h) - 1)], b[e >> h]));
}

// Coefficient i of the un limbs at `limbs`: limbs 3i .. 3i + 2, zero past
// un, by Horner's rule in 32-bit steps (field.rs, Elem::from_limbs).
GFP_FN void gfp_split_at(i64 *x, const limb_t *limbs, u64 un, u64 n, u64 i) {
    u64 l[3];
#pragma unroll
    for (int k = 0; k < 3; k++) l[k] = 3 * i + k < un ? limbs[3 * i + k] : 0;
    Gfp v = {};
    for (int w = 5; w >= 0; w--) {
        i128 z[GFP_K];
#pragma unroll
        for (int k = 0; k < GFP_K; k++) z[k] = (i128)v.d[k] * ((i128)1 << 32);
        z[0] += (u32)(l[w / 2] >> (32 * (w % 2)));
        v = gfp_normalize(z);
    }
    gfp_store(x, n, i, v);
}

// One radix-4 stage over blocks of 2^log_s points: forward (DIF: the DFT of
// four, then twiddles w_s^(j u)) or inverse (DIT: twiddles w_s^(-j u),
// then the inverse DFT of four). The table holds the powers of a root of
// unity of order 2^log_t >= n: w_s^e is its entry e 2^(log_t - log_s), and
// w_s^-e the entry 2^log_t less that.
GFP_FN void gfp_radix4_at(i64 *x, const i64 *t, u64 n, u32 log_s, u32 log_t, u32 inverse, u64 id) {
    const u32 qlog = log_s - 2;
    const u64 q = 1ull << qlog, nt = 1ull << log_t;
    u64 j = id & (q - 1);
    u64 base = ((id >> qlog) << log_s) + j;
    Gfp v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = gfp_load(x, n, base + u * q);
    if (!inverse) gfp_dft4(v, false);
#pragma unroll
    for (int u = 1; u < 4; u++) {
        u64 e = (j * u) << (log_t - log_s);
        if (e != 0) v[u] = gfp_mul(v[u], gfp_load(t, nt, inverse ? nt - e : e));
    }
    if (inverse) gfp_dft4(v, true);
#pragma unroll
    for (int u = 0; u < 4; u++) gfp_store(x, n, base + u * q, v[u]);
}

// The radix-2 stage of an odd log n, over pairs (no twiddles; its own
// inverse but for the factor 2).
GFP_FN void gfp_radix2_at(i64 *x, u64 n, u64 id) {
    Gfp a = gfp_load(x, n, 2 * id), b = gfp_load(x, n, 2 * id + 1);
    gfp_store(x, n, 2 * id, gfp_add(a.d, b.d, false));
    gfp_store(x, n, 2 * id + 1, gfp_add(a.d, b.d, true));
}

// x[i] = x[i] y[i] (y may be x: a square).
GFP_FN void gfp_pointwise_at(i64 *x, const i64 *y, u64 n, u64 i) {
    gfp_store(x, n, i, gfp_mul(gfp_load(x, n, i), gfp_load(y, n, i)));
}

// acc = acc r + a on nine limbs (field.rs, times_r_plus).
GFP_FN void gfp_times_r_plus(u64 acc[GFP_K + 1], u64 a) {
    u64 carry = a;
#pragma unroll
    for (int k = 0; k <= GFP_K; k++) {
        unsigned __int128 t = (unsigned __int128)acc[k] * (u64)GFP_R + carry;
        acc[k] = (u64)t;
        carry = (u64)(t >> 64);
    }
}

// The inverse transform's element i is n c_i mod p, c_i the product's
// coefficient, and n c_i < p (mod.rs): its value in [0, p) shifted right by
// log n is c_i, whose low log n bits must be zero (else *inexact is set and
// the host discards the product). Coefficient i (up to nine limbs, the
// top ones zero) goes into lane i mod 3 at limb 3i: the lanes (`limbs`
// limbs each) start zeroed, and coefficients of one lane lie 9 limbs apart,
// so none overlap; the host adds the lanes. Returns whether the check failed.
GFP_FN bool gfp_combine_at(limb_t *l0, limb_t *l1, limb_t *l2, const i64 *x, u64 n, u32 log_n, u64 limbs, u64 i) {
    {
        Gfp v = gfp_load(x, n, i);
        u64 pos[GFP_K + 1] = {}, neg[GFP_K + 1] = {}, p[GFP_K + 1] = {1};
#pragma unroll
        for (int k = GFP_K - 1; k >= 0; k--) {
            gfp_times_r_plus(pos, v.d[k] > 0 ? (u64)v.d[k] : 0);
            gfp_times_r_plus(neg, v.d[k] < 0 ? (u64)(-v.d[k]) : 0);
            gfp_times_r_plus(p, 0);
        }
        p[0] += 1;
        // pos - neg, plus p if that is negative (mod 2^576).
        u64 borrow = 0;
#pragma unroll
        for (int k = 0; k <= GFP_K; k++) {
            u64 a = pos[k], b = neg[k];
            u64 d = a - b - borrow;
            borrow = (a < b) || (a - b < borrow);
            pos[k] = d;
        }
        if (borrow) {
            u64 carry = 0;
#pragma unroll
            for (int k = 0; k <= GFP_K; k++) {
                unsigned __int128 s = (unsigned __int128)pos[k] + p[k] + carry;
                pos[k] = (u64)s;
                carry = (u64)(s >> 64);
            }
        }
        const bool inexact = pos[0] & ((1ull << log_n) - 1);
        limb_t *lane = i % 3 == 0 ? l0 : i % 3 == 1 ? l1 : l2;
#pragma unroll
        for (int k = 0; k <= GFP_K; k++) {
            u64 c = (pos[k] >> log_n) | (k < GFP_K ? pos[k + 1] << (64 - log_n) : 0);
            if (3 * i + k < limbs) lane[3 * i + k] = c;
        }
        return inexact;
    }
}

#ifndef CUGMP_HOST_MODEL
extern "C" __global__ void cugmp_gfp_roots(i64 *t, const Gfp *a, const Gfp *b, u32 h, u64 n) {
    GRID_STRIDE(e, n) gfp_roots_at(t, a, b, h, n, e);
}

extern "C" __global__ void cugmp_gfp_split(i64 *x, const limb_t *limbs, u64 un, u64 n) {
    GRID_STRIDE(i, n) gfp_split_at(x, limbs, un, n, i);
}

extern "C" __global__ void __launch_bounds__(256, 2) cugmp_gfp_radix4(i64 *x, const i64 *t, u64 n, u32 log_s, u32 log_t, u32 inverse) {
    GRID_STRIDE(id, n / 4) gfp_radix4_at(x, t, n, log_s, log_t, inverse, id);
}

extern "C" __global__ void cugmp_gfp_radix2(i64 *x, u64 n) {
    GRID_STRIDE(id, n / 2) gfp_radix2_at(x, n, id);
}

extern "C" __global__ void cugmp_gfp_pointwise(i64 *x, const i64 *y, u64 n) {
    GRID_STRIDE(i, n) gfp_pointwise_at(x, y, n, i);
}

extern "C" __global__ void cugmp_gfp_combine(limb_t *l0, limb_t *l1, limb_t *l2, const i64 *x, u64 n, u32 log_n, u64 limbs, u32 *inexact) {
    GRID_STRIDE(i, n) if (gfp_combine_at(l0, l1, l2, x, n, log_n, limbs, i)) atomicOr(inexact, 1u);
}
#endif
