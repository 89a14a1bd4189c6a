#pragma once
#include "ntt_arith.cuh"
#include "ntt_tables.cuh"

// ---------------------------------------------------------------------------
// Back to limbs. Garner's CRT gives coefficient x < P from its residues:
//   k1 = (r1 - r0) / p0 mod p1,  y = r0 + p0 k1 (< p0 p1),
//   k2 = (r2 - y) / (p0 p1) mod p2,  x = y + p0 p1 k2.
// (r0 < p0 < p1 < p2, and k1 < p1 < p2, so each is already a residue where
// it is used.) The divisions are products by constants, plain residues with
// their quotients (shoup_mul, which takes the differences below 2p
// unreduced); the host model checks them against their definitions
// (c_tests/ntt_model.cpp). SET 0 is ntt_primes (transforms of 2^k and 3 *
// 2^k points), SET 1 ntt_primes5 (5 * 2^k).
// ---------------------------------------------------------------------------
struct NttCrt {
    u32 c1, c1q;  // p0^-1 mod p1, its quotient
    u32 c2, c2q;  // p0 mod p2
    u32 c3, c3q;  // (p0 p1)^-1 mod p2
    u64 p01;      // p0 p1
};
NTT_CONST NttCrt ntt_crts[2] = {
    {0x0000000au, 0x00000015u, 0x6c000001u, 0xdb6db6dbu, 0x00000093u, 0x0000012au, 0x32a00000e4000001ull},
    {0x45c00004u, 0xe6666670u, 0x34800001u, 0x70000001u, 0x12d2d2d8u, 0x28282832u, 0x0fe4c00082000001ull},
};

template <int SET>
NTT_FN void crt(u32 r0, u32 r1, u32 r2, u64 *lo, u64 *hi) {
    const NttPrime *primes = SET ? ntt_primes5 : ntt_primes;
    const NttPrime &q1 = primes[1], &q2 = primes[2];
    const NttCrt &k = ntt_crts[SET];
    const u32 k1 = shoup_mul(r1 - r0 + q1.p, k.c1, k.c1q, q1);
    const u64 y = r0 + (u64)primes[0].p * k1;
    const u32 y2 = mod_add(r0, shoup_mul(k1, k.c2, k.c2q, q2), q2);
    const u32 k2 = shoup_mul(r2 - y2 + q2.p, k.c3, k.c3q, q2);
    // x = y + P01 * k2 < P < 2^93.
    const u64 m_lo = k.p01 * k2;
#ifdef CUGMP_HOST_MODEL
    const u64 m_hi = (u64)(((unsigned __int128)k.p01 * k2) >> 64);
#else
    const u64 m_hi = __umul64hi(k.p01, (u64)k2);
#endif
    *lo = m_lo + y;
    *hi = m_hi + (*lo < y);
}

// A limb's value before carries from the residues of its two coefficients
// (each below 2^91, see the top; r[p] and s[p] modulo prime p): c + d * 2^32
// as a 128-bit value, c and d the coefficients.
template <int SET>
NTT_FN void ntt_limb_of(const u32 *r, const u32 *s, u64 *lo, u64 *hi) {
    u64 l0, h0, l1, h1;
    crt<SET>(r[0], r[1], r[2], &l0, &h0);
    crt<SET>(s[0], s[1], s[2], &l1, &h1);
    const u64 s_lo = l1 << 32, s_hi = (h1 << 32) | (l1 >> 32);
    *lo = l0 + s_lo;
    *hi = h0 + s_hi + (*lo < l0);
}

// Limb i of the product before carries: coefficients 2i and 2i + 1 of the
// inverse transform `coef` (n_len words a prime).
NTT_FN void ntt_limb_value(const u32 *coef, u64 n_len, u64 i, u64 *lo, u64 *hi) {
    const u32 r[3] = {coef[2 * i], coef[n_len + 2 * i], coef[2 * n_len + 2 * i]};
    const u32 s[3] = {coef[2 * i + 1], coef[n_len + 2 * i + 1], coef[2 * n_len + 2 * i + 1]};
    ntt_limb_of<0>(r, s, lo, hi);
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
NTT_FN void ntt_fold_limb(limb_t *t, limb_t *c, u64 n, bool wrap, u64 i, u64 lo, u64 hi) {
    t[i] = lo;
    if (i + 1 < n) c[i + 1] = hi;
    else if (wrap) c[0] = hi;
    if (i == 0 && !wrap) c[0] = 0;
}

NTT_FN void ntt_combine_at(limb_t *t, limb_t *c, const u32 *coef, u64 n_len, u64 n, bool wrap, u64 i) {
    u64 lo, hi;
    ntt_limb_value(coef, n_len, i, &lo, &hi);
    ntt_fold_limb(t, c, n, wrap, i, lo, hi);
}

// The inverse's radix-R step (R = 3 or 5) and the fold together, for
// transforms of length RN (N = 2^log_n): `a` holds the three primes' blocks
// after their inverse passes (RN words a prime, tab the tables `stride`
// words apart). Pair u < N / 2 takes columns j = 2u and 2u + 1 of every
// prime, whose radix-R outputs are coefficients j + lN (l < R), and so limbs
// u + lN / 2 whole (N is even): no coefficient goes through device memory
// between the two steps. ncu had the radix-3 step and the fold as two
// kernels moving 2.0 GB at 10^7 x 10^7 limbs (RESULTS.md, "Transform
// passes").
// The residues x[col][l][prime] of coefficient 2u + col + lN (col < 2, l <
// R) for every prime of the set with P primes (NTT_WIDE_PRIMES: the wide
// set for radix R), after the inverse's radix-R step (R = 1: none) on
// columns 2u and 2u + 1.
template <int R, int P>
NTT_FN void ntt_pair_residues(u32 (*x)[R][P], const u32 *a, const u32 *tab, u32 stride, u32 log_n, u32 h, u32 u) {
    constexpr bool WIDE = P == NTT_WIDE_PRIMES;
    const u32 n_len = 1u << log_n;
#pragma unroll
    for (u32 prime = 0; prime < P; prime++) {
        const u32 *ap = a + prime * R * n_len;
#pragma unroll
        for (u32 col = 0; col < 2; col++) {
            const u32 j = 2 * u + col;
            u32 y[R];
#pragma unroll
            for (u32 l = 0; l < R; l++) y[l] = ap[j + l * n_len];
            if constexpr (R != 1)
                ntt_radix_values<R>(y, tab + prime * stride, ntt_dft_of<R, WIDE>(prime), ntt_prime(R, prime, WIDE), log_n, h,
                                    j, true);
#pragma unroll
            for (u32 l = 0; l < R; l++) x[col][l][prime] = y[l];
        }
    }
}

template <int R>
NTT_FN void ntt_combine_radix_at(limb_t *t, limb_t *c, const u32 *a, const u32 *tab, u32 stride, u32 log_n, u32 h, u64 n,
                                 bool wrap, u32 u) {
    u32 x[2][R][NTT_PRIMES];
    ntt_pair_residues<R, NTT_PRIMES>(x, a, tab, stride, log_n, h, u);
#pragma unroll
    for (u32 l = 0; l < R; l++) {
        const u64 i = u + ((u64)l << (log_n - 1));
        if (i < n) {
            u64 lo, hi;
            ntt_limb_of<R == 5>(x[0][l], x[1][l], &lo, &hi);
            ntt_fold_limb(t, c, n, wrap, i, lo, hi);
        }
    }
}

// ---------------------------------------------------------------------------
// A small product's fold and carries in one block (cugmp_ntt_combine_small,
// for src/gpu/ntt/small.rs): thread k takes the run of limbs [k run,
// (k + 1) run) of n, run = ceil(n / threads) <= NTT_SMALL_RUN, and the carry
// between runs comes from a scan over the block of each run's carry out as a
// function of its carry in: (out for 0) | (out for 1) << 1, which composes
// as functions do. So t + c needs no second kernel, no scan state in device
// memory and no second pass over the limbs.
// ---------------------------------------------------------------------------
#define NTT_SMALL_THREADS 1024
#define NTT_SMALL_RUN 8
// The identity (carry out = carry in).
#define NTT_CARRY_SAME 2u

// The run's limb values: lo[j] the low 64 bits of limb first + j's value,
// hi[j] its high bits (which belong to the limb above), j < len. Returns
// the last one's high bits (0 for an empty run). Every index is a constant
// once unrolled, so the arrays stay in registers.
NTT_FN u64 ntt_small_values(const u32 *coef, u64 n_len, u64 first, u32 len, u64 *lo, u64 *hi) {
    u64 top = 0;
#ifndef CUGMP_HOST_MODEL
#pragma unroll
#endif
    for (u32 j = 0; j < NTT_SMALL_RUN; j++) {
        if (j < len) {
            ntt_limb_value(coef, n_len, first + j, &lo[j], &hi[j]);
            top = hi[j];
        }
    }
    return top;
}

// The run's limbs of t + c with carry `cin` into it and `below` the high
// bits of the limb under it, into r[first ..] unless r is null; returns
// the carry out.
NTT_FN u32 ntt_small_carry(const u64 *lo, const u64 *hi, u32 len, u64 below, u32 cin, limb_t *r, u64 first) {
#ifndef CUGMP_HOST_MODEL
#pragma unroll
#endif
    for (u32 j = 0; j < NTT_SMALL_RUN; j++) {
        if (j < len) {
            const u64 s = lo[j] + (j ? hi[j - 1] : below);
            const u64 x = s + cin;
            cin = (s < lo[j]) + (x < s);
            if (r) r[first + j] = x;
        }
    }
    return cin;
}

// later after earlier, each (out for 0) | (out for 1) << 1.
NTT_FN u32 ntt_carry_compose(u32 later, u32 earlier) {
    const u32 out0 = (earlier & 1) ? (later >> 1) & 1 : later & 1;
    const u32 out1 = (earlier >> 1) & 1 ? (later >> 1) & 1 : later & 1;
    return out0 | out1 << 1;
}

// ---------------------------------------------------------------------------
// Back to limbs from the wide sets (five primes, a limb a coefficient;
// cuda/ntt.cu). Garner's CRT: y_0 = r_0 and
//   y_i = (..((r_i - y_0) c_0i - y_1) c_1i .. - y_(i-1)) c_(i-1)i mod p_i,
// c_ji = p_j^-1 mod p_i (j < i, at i (i - 1) / 2 + j below, with Shoup's
// quotients), then x = y_0 + p_0 (y_1 + p_1 (y_2 + p_2 (y_3 + p_3 y_4))) <
// P < 2^155, by Horner's rule on 32-bit words. (y_j < p_j < p_i: the
// primes increase, so t - y_j + p_i is below 2p_i, which shoup_mul takes.)
// The host model checks the constants against their definitions.
// ---------------------------------------------------------------------------
struct NttCrtWide {
    u32 c[10], cq[10];
};
NTT_CONST NttCrtWide ntt_crts_wide[2] = {
    {{18u, 671088647u, 10u, 557003577u, 1519100657u, 696254492u, 1585446918u, 7u, 21u, 84u},
     {0x0000002au, 0x55555563u, 0x00000015u, 0x4444444fu, 0xba2e8bb2u, 0x5555558eu, 0xc000000au, 0x0000000eu, 0x0000002au,
      0x000000aau}},
    {{63u, 725937237u, 1179648007u, 345641722u, 215361382u, 133318955u, 1184274074u, 1464193400u, 1438047091u, 287609431u},
     {0x000000ccu, 0x76276285u, 0xc0000011u, 0x2f684be1u, 0x1d89d8a5u, 0x124924a0u, 0x9696969cu, 0xba2e8ba9u, 0xb6db6dc0u,
      0x24924941u}},
};

// The coefficient with residues r[i] modulo the wide set for radix R
// (ntt_prime(R, i, true)) as three words: x = v[0] + v[1] 2^64 + v[2] 2^128.
template <int R>
NTT_FN void crt_wide(const u32 *r, u64 *v) {
    const NttCrtWide &k = ntt_crts_wide[R == 5];
    u32 y[NTT_WIDE_PRIMES];
#pragma unroll
    for (int i = 0; i < NTT_WIDE_PRIMES; i++) {
        const NttPrime q = ntt_prime(R, i, true);
        u32 t = r[i];
#pragma unroll
        for (int j = 0; j < i; j++) t = shoup_mul(t - y[j] + q.p, k.c[i * (i - 1) / 2 + j], k.cq[i * (i - 1) / 2 + j], q);
        y[i] = t;
    }
    // Horner: w = w p_i + y_i from the top, one more word each step.
    u32 w[NTT_WIDE_PRIMES] = {y[NTT_WIDE_PRIMES - 1], 0, 0, 0, 0};
#pragma unroll
    for (int i = NTT_WIDE_PRIMES - 2; i >= 0; i--) {
        const u32 p = ntt_prime(R, i, true).p;
        u64 carry = y[i];
#pragma unroll
        for (int m = 0; m < NTT_WIDE_PRIMES - 1 - i; m++) {
            const u64 t = (u64)w[m] * p + carry;
            w[m] = (u32)t;
            carry = t >> 32;
        }
        w[NTT_WIDE_PRIMES - 1 - i] = (u32)carry;
    }
    v[0] = w[0] | (u64)w[1] << 32;
    v[1] = w[2] | (u64)w[3] << 32;
    v[2] = w[4];
}

// The fold of coefficients e and e + 1 (e even; x and y their three
// words) as four words: limb e's and limb e + 1's own (t0 = x0, t1 = y0 +
// x1), and what passes to limbs e + 2 and e + 3: what passes 2^64 at e + 1
// goes with y1 + x2 to c2, whose own overflow goes with y2 to c3.
NTT_FN void ntt_pair_parts(const u64 *x, const u64 *y, u64 *t0, u64 *t1, u64 *c2, u64 *c3) {
    const u64 s1 = y[0] + x[1];
    const u64 o1 = s1 < y[0];
    const u64 s2 = y[1] + x[2];
    const u64 s3 = s2 + o1;
    const u64 o2 = (s2 < y[1]) + (s3 < s2);
    *t0 = x[0];
    *t1 = s1;
    *c2 = s3;
    *c3 = y[2] + o2;
}

// The fold of coefficients e and e + 1 (e even; x and y their three words,
// each coefficient at limb position e or e + 1) into t and c, so that the
// product is t + c (the add kernel's carries, as ntt_fold_limb's): t[e]
// and t[e + 1] their own words, c[e + 2] and c[e + 3] what passes to those
// limbs (ntt_pair_parts).
//   wrap = 0, a product: pair e = 0 also writes c[0] and c[1], which no
//     pair reaches. Nothing at n or above: the product fits in n limbs, so
//     those parts are zero.
//   wrap = 1, a product mod B^n - 1 from its cyclic convolution of length
//     n (every e < n, n even): what passes limb n - 1 is worth B^n = 1, so
//     the last pair's c[n] and c[n + 1] are c[0] and c[1] (as with
//     ntt_fold_limb, the host adds t + c's carry out back at the bottom).
NTT_FN void ntt_fold_pair(limb_t *t, limb_t *c, u64 n, bool wrap, u64 e, const u64 *x, const u64 *y) {
    u64 t0, t1, c2, c3;
    ntt_pair_parts(x, y, &t0, &t1, &c2, &c3);
    const u64 e2 = wrap && e + 2 >= n ? e + 2 - n : e + 2, e3 = wrap && e + 3 >= n ? e + 3 - n : e + 3;
    if (e < n) t[e] = t0;
    if (e + 1 < n) t[e + 1] = t1;
    if (e2 < n) c[e2] = c2;
    if (e3 < n) c[e3] = c3;
    if (e == 0 && !wrap) {
        c[0] = 0;
        if (n > 1) c[1] = 0;
    }
}

// The wide sets' combine at column pair u (columns 2u and 2u + 1 of every
// prime's blocks): for R = 3 or 5 the inverse's radix-R step first
// (ntt_pair_residues), R = 1 none; then each coefficient's CRT and the
// fold of the pairs 2u + lN, 2u + 1 + lN (l < R; N even) into n limbs
// (`wrap`: ntt_fold_pair's). `a` holds the five primes' blocks after their
// inverse passes (RN words a prime, tab the tables `stride` words apart).
template <int R>
NTT_FN void ntt_combine_wide_at(limb_t *t, limb_t *c, const u32 *a, const u32 *tab, u32 stride, u32 log_n, u32 h, u64 n,
                                bool wrap, u32 u) {
    u32 x[2][R][NTT_WIDE_PRIMES];
    ntt_pair_residues<R, NTT_WIDE_PRIMES>(x, a, tab, stride, log_n, h, u);
#pragma unroll
    for (u32 l = 0; l < R; l++) {
        const u64 e = 2 * u + ((u64)l << log_n);
        if (e < n) {
            u64 v0[3], v1[3];
            crt_wide<R == 5 ? 5 : 1>(x[0][l], v0);
            crt_wide<R == 5 ? 5 : 1>(x[1][l], v1);
            ntt_fold_pair(t, c, n, wrap, e, v0, v1);
        }
    }
}

// ---------------------------------------------------------------------------
// A whole product on the wide sets (R = 1) straight to its limbs: the CRT,
// the fold and the carries in one kernel (cugmp_ntt_combine_wide_carry,
// cuda/ntt.cu), where the combine wrote t and c and the add kernel read them
// back. A thread takes a run of NTT_WIDE_RUN coefficients (ntt_wide_run);
// what the run's last pair passes to the next two limbs goes to the next
// run, and the first run of a block's tile gets it from the pair below the
// tile (ntt_wide_pair_at), as the limb below the tile's own value, which
// most often decides the tile's carry in.
// ---------------------------------------------------------------------------
#define NTT_WIDE_RUN 8

// ntt_pair_parts of coefficients e and e + 1 (e even) of a wide transform
// of 2^log_n points after its inverse passes (a: the five primes'
// transforms one after another).
NTT_FN void ntt_wide_pair_at(const u32 *a, u32 log_n, u32 e, u64 *t0, u64 *t1, u64 *c2, u64 *c3) {
    u32 x[2][1][NTT_WIDE_PRIMES];
    ntt_pair_residues<1, NTT_WIDE_PRIMES>(x, a, nullptr, 0, log_n, 0, e / 2);
    u64 v0[3], v1[3];
    crt_wide<1>(x[0][0], v0);
    crt_wide<1>(x[1][0], v1);
    ntt_pair_parts(v0, v1, t0, t1, c2, c3);
}

// The run of coefficients e0 .. e0 + NTT_WIDE_RUN - 1 (e0 a multiple of
// NTT_WIDE_RUN): t[i] limb e0 + i's own word, c[i] (i >= 2) what the pair
// below passes to it, up[0] and up[1] what passes to limbs e0 +
// NTT_WIDE_RUN and one above (the next run's c[0] and c[1]). Each prime's
// residues in two 16-byte loads.
NTT_FN void ntt_wide_run(const u32 *a, u32 log_n, u32 e0, u64 *t, u64 *c, u64 *up) {
    static_assert(NTT_WIDE_RUN == 8, "a run is two 16-byte loads a prime");
    u32 x[NTT_WIDE_RUN][NTT_WIDE_PRIMES];
#pragma unroll
    for (u32 prime = 0; prime < NTT_WIDE_PRIMES; prime++) {
        const uint4 *at = (const uint4 *)(a + (prime << log_n) + e0);
        const uint4 lo = LDG(at), hi = LDG(at + 1);
        x[0][prime] = lo.x, x[1][prime] = lo.y, x[2][prime] = lo.z, x[3][prime] = lo.w;
        x[4][prime] = hi.x, x[5][prime] = hi.y, x[6][prime] = hi.z, x[7][prime] = hi.w;
    }
#pragma unroll
    for (u32 m = 0; m < NTT_WIDE_RUN / 2; m++) {
        u64 v0[3], v1[3], c2, c3;
        crt_wide<1>(x[2 * m], v0);
        crt_wide<1>(x[2 * m + 1], v1);
        ntt_pair_parts(v0, v1, &t[2 * m], &t[2 * m + 1], &c2, &c3);
        if (m + 1 < NTT_WIDE_RUN / 2) {
            c[2 * m + 2] = c2, c[2 * m + 3] = c3;
        } else {
            up[0] = c2, up[1] = c3;
        }
    }
}
