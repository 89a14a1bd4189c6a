// Modular exponentiation of many independent items (cugmp_powm_batch):
// r = base^exp mod m for odd m of at most L <= 64 limbs, one thread an item, by
// Montgomery multiplication (CIOS, R = 2^(64 L)) and a fixed window of
// POWM_WINDOW bits over the exponent from its top.
//
// The host (src/gpu/powm.rs) gives, item-major, L limbs each: base
// (already reduced mod m), m, and R^2 mod m; the exponents concatenated
// with an offset and a length per item (the length >= 1, its top limb
// nonzero). The result, reduced mod m, goes to r (L limbs an item).
#include "cugmp.cuh"

#define POWM_WINDOW 4
#define POWM_TABLE (1 << POWM_WINDOW)

typedef unsigned __int128 u128;

// Loops over an item's limbs unroll fully up to 32 limbs, beyond by 8
// (`#pragma unroll(L <= 32 ? L : 8)`): a full unroll of 64 limbs overflows
// the stack of nvcc's front end. At 64 limbs the arrays then live in local
// memory (ptxas: 42 registers, an 11.8 KB stack frame): 1.10x GMP on 16
// cores at 1024 items, where 32 limbs, in registers, is 4.48x; at 128
// limbs a batch of 128 items took more than a minute, so those stay on
// the CPU (RESULTS.md, "Batches").

// -m^-1 mod 2^64 for odd m0: Newton's iteration doubles the correct low
// bits from the 3 of x = m0 (m0 m0 = 1 mod 8).
__device__ __forceinline__ u64 neg_inverse(u64 m0) {
    u64 x = m0;
    for (int k = 0; k < 5; k++) x *= 2 - m0 * x;
    return (u64)0 - x;
}

// r = a b R^-1 mod m, for a, b < m < R; r may be a or b. CIOS: t holds
// L + 2 limbs, below 2m after each outer step.
template <int L>
__device__ __forceinline__ void mont_mul(u64 *r, const u64 *a, const u64 *b, const u64 *m, u64 minv) {
    u64 t[L + 2];
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L + 2; j++) t[j] = 0;
    for (int i = 0; i < L; i++) {
        u64 ai = a[i], c = 0;
#pragma unroll(L <= 32 ? L : 8)
        for (int j = 0; j < L; j++) {
            u128 p = (u128)ai * b[j] + t[j] + c;
            t[j] = (u64)p;
            c = (u64)(p >> 64);
        }
        u128 s = (u128)t[L] + c;
        t[L] = (u64)s;
        t[L + 1] = (u64)(s >> 64);
        u64 q = t[0] * minv;
        u128 p = (u128)q * m[0] + t[0];
        c = (u64)(p >> 64);
#pragma unroll(L <= 32 ? L : 8)
        for (int j = 1; j < L; j++) {
            p = (u128)q * m[j] + t[j] + c;
            t[j - 1] = (u64)p;
            c = (u64)(p >> 64);
        }
        s = (u128)t[L] + c;
        t[L - 1] = (u64)s;
        t[L] = t[L + 1] + (u64)(s >> 64);
    }
    // t < 2m: subtract m once if t >= m.
    u64 d[L], borrow = 0;
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L; j++) {
        u128 x = (u128)t[j] - m[j] - borrow;
        d[j] = (u64)x;
        borrow = (u64)(x >> 64) & 1;
    }
    bool keep = t[L] < borrow;  // t - m < 0: t[L] cannot pay the borrow
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L; j++) r[j] = keep ? t[j] : d[j];
}

template <int L>
__device__ void powm_item(u64 i, const u64 *base, const u64 *exp, const u64 *exp_at, const u64 *exp_len, const u64 *mod, const u64 *r2,
                          u64 *out) {
    const u64 *m = mod + i * L;
    u64 mm[L], x[L], table[POWM_TABLE][L];
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L; j++) mm[j] = m[j];
    u64 minv = neg_inverse(mm[0]);
    // table[k] = base^k R mod m: table[0] = R mod m = mont(R^2, 1).
    {
        u64 one[L], rr[L];
#pragma unroll(L <= 32 ? L : 8)
        for (int j = 0; j < L; j++) {
            one[j] = j == 0;
            rr[j] = r2[i * L + j];
            x[j] = base[i * L + j];
        }
        mont_mul<L>(table[0], rr, one, mm, minv);
        mont_mul<L>(table[1], x, rr, mm, minv);
    }
    for (int k = 2; k < POWM_TABLE; k++) mont_mul<L>(table[k], table[k - 1], table[1], mm, minv);
    // Windows from the top of the exponent; the first one starts the value.
    const u64 *e = exp + exp_at[i];
    u64 n = exp_len[i];
    u64 bits = 64 * n - __clzll(e[n - 1]);
    u64 top = (bits + POWM_WINDOW - 1) / POWM_WINDOW * POWM_WINDOW;
    bool started = false;
    for (u64 at = top; at > 0; at -= POWM_WINDOW) {
        u64 bit = at - POWM_WINDOW;  // the window's lowest bit
        u64 w = e[bit / 64] >> (bit % 64);
        if (bit % 64 > 64 - POWM_WINDOW && bit / 64 + 1 < n) w |= e[bit / 64 + 1] << (64 - bit % 64);
        u32 digit = (u32)(w & (POWM_TABLE - 1));
        if (!started) {
#pragma unroll(L <= 32 ? L : 8)
            for (int j = 0; j < L; j++) x[j] = table[digit][j];
            started = true;
            continue;
        }
        for (int k = 0; k < POWM_WINDOW; k++) mont_mul<L>(x, x, x, mm, minv);
        if (digit) mont_mul<L>(x, x, table[digit], mm, minv);
    }
    // Out of Montgomery form: x R^-1.
    u64 one[L];
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L; j++) one[j] = j == 0;
    mont_mul<L>(x, x, one, mm, minv);
#pragma unroll(L <= 32 ? L : 8)
    for (int j = 0; j < L; j++) out[i * L + j] = x[j];
}

#define POWM_KERNEL(L)                                                                                                          \
    extern "C" __global__ void cugmp_powm_##L(u64 n, const u64 *base, const u64 *exp, const u64 *exp_at, const u64 *exp_len, \
                                               const u64 *mod, const u64 *r2, u64 *out) {                                      \
        GRID_STRIDE(i, n) { powm_item<L>(i, base, exp, exp_at, exp_len, mod, r2, out); }                                     \
    }

POWM_KERNEL(4)
POWM_KERNEL(8)
POWM_KERNEL(16)
POWM_KERNEL(32)
POWM_KERNEL(64)
