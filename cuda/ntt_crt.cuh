#pragma once
#include "ntt_arith.cuh"

// ---------------------------------------------------------------------------
// Back to limbs. Garner's CRT gives coefficient x < P from its residues:
//   k1 = (r1 - r0) / p0 mod p1,  y = r0 + p0 k1 (< p0 p1),
//   k2 = (r2 - y) / (p0 p1) mod p2,  x = y + p0 p1 k2.
// (r0 < p0 < p1 < p2, and k1 < p1 < p2, so each is already a residue where
// it is used.) The divisions are Montgomery products by constants that carry
// the factor 2^32 the product removes.
// ---------------------------------------------------------------------------
#define CRT_C1 0x27ffffebu          // p0^-1 * 2^32 mod p1
#define CRT_C2 0x5a924925u          // p0 * 2^32 mod p2
#define CRT_C3 0x53fffed6u          // (p0 p1)^-1 * 2^32 mod p2
#define CRT_P01 0x32a00000e4000001ull  // p0 p1

NTT_FN void crt(u32 r0, u32 r1, u32 r2, u64 *lo, u64 *hi) {
    const NttPrime &q1 = ntt_primes[1], &q2 = ntt_primes[2];
    const u32 k1 = mont_mul(mod_sub(r1, r0, q1), CRT_C1, q1);
    const u64 y = r0 + (u64)ntt_primes[0].p * k1;
    const u32 y2 = mod_add(r0, mont_mul(k1, CRT_C2, q2), q2);
    const u32 k2 = mont_mul(mod_sub(r2, y2, q2), CRT_C3, q2);
    // x = y + P01 * k2 < P < 2^93.
    const u64 m_lo = CRT_P01 * k2;
#ifdef CUGMP_HOST_MODEL
    const u64 m_hi = (u64)(((unsigned __int128)CRT_P01 * k2) >> 64);
#else
    const u64 m_hi = __umul64hi(CRT_P01, (u64)k2);
#endif
    *lo = m_lo + y;
    *hi = m_hi + (*lo < y);
}

// Limb i of the product before carries: coefficients 2i and 2i + 1 (each
// below 2^91, see the top) as a 128-bit value: c_2i + c_(2i+1) * 2^32.
NTT_FN void ntt_limb_value(const u32 *coef, u64 n_len, u64 i, u64 *lo, u64 *hi) {
    u64 l0, h0, l1, h1;
    crt(coef[2 * i], coef[n_len + 2 * i], coef[2 * n_len + 2 * i], &l0, &h0);
    crt(coef[2 * i + 1], coef[n_len + 2 * i + 1], coef[2 * n_len + 2 * i + 1], &l1, &h1);
    const u64 s_lo = l1 << 32, s_hi = (h1 << 32) | (l1 >> 32);
    *lo = l0 + s_lo;
    *hi = h0 + s_hi + (*lo < l0);
}

// Limb i of the fold of coefficients into limbs: t[i] = the low 64 bits of
// limb i's value, and c[i + 1] its high 64 bits (which belong to limb i + 1).
// The result is then t + c, which the add kernel of cuda/linear.cu computes
// with its parallel carry: one carry logic for all.
//   wrap = 0, a product: the top limb's high part is 0 (the product fits in
//     n limbs), c[0] = 0.
//   wrap = 1, a product mod B^n - 1 from a cyclic convolution of length 2n:
//     the top limb's high part is worth B^n = 1 mod B^n - 1, so it goes to
//     c[0]; the host then adds t + c's carry out at the bottom.
NTT_FN void ntt_combine_at(limb_t *t, limb_t *c, const u32 *coef, u64 n_len, u64 n, bool wrap, u64 i) {
    u64 lo, hi;
    ntt_limb_value(coef, n_len, i, &lo, &hi);
    t[i] = lo;
    if (i + 1 < n) c[i + 1] = hi;
    else if (wrap) c[0] = hi;
    if (i == 0 && !wrap) c[0] = 0;
}
