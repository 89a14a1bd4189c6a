#pragma once
#include "ntt_arith.cuh"

// ---------------------------------------------------------------------------
// Twiddle tables, built once per transform length (src/gpu/ntt/transform.rs caches
// them), one table a prime, NTT_TABLE_LEN(log_n, h) words apart, every entry
// in Montgomery form (x * 2^32 mod p), so that mont_mul(v, entry) = v * x. w
// is a root of order N = 2^log_n, r one of order 2^14, both powers of the
// same generator, so r^(x * 2^14 / 2^(q+1)) = w^(x * N / 2^(q+1)):
//   [0, 2^14)             stage roots inside a pass (forward) by level: level
//                         L < 14 at 2^L - 1 holds the 2^L powers r^(x 2^(13-L)),
//                         x < 2^L, of the root of order 2^(L+1) (the last
//                         word is unused)
//   [2^14, 2^15)          the same with r^-1 (inverse)
//   then, with H = 2^h and M = N / H:
//   A  [H]  w^i,   Ai [H]  w^-i          w^e = A[e mod H] * B[e / H] for e < N:
//   B  [M]  w^(iH), Bi [M] w^-(iH)       two small tables instead of one of N
//   then one word: 2^64 / (radix N) mod p, the inverse's scale (a Montgomery
//   product of two plain values leaves a factor 2^-32, which it also undoes;
//   the radix-3 step's 1/3 is in it too)
// and, for transforms of length 3N (radix 3), with u a root of order 3N
// (u^3 = w) and v = u^N a cube root of unity (NTT_RADIX3_LEN more words):
//   A3 [H] u^i,  A3i [H] u^-i,  B3 [2M] u^(iH),  B3i [2M] u^-(iH),  v,  v^2
// ---------------------------------------------------------------------------
#define NTT_ROOT_LOG 14                        // r has order 2^NTT_ROOT_LOG
#define NTT_ROOTS (1 << NTT_ROOT_LOG)          // one direction's stage roots by level (levels 0 to 13: a pass has at most 14 stages)
#define NTT_TABLE_LEN(log_n, h) (2 * NTT_ROOTS + 2 * (1ull << (h)) + 2 * (1ull << ((log_n) - (h))) + 1)
#define NTT_RADIX3_LEN(log_n, h) (2 * (1ull << (h)) + 4 * (1ull << ((log_n) - (h))) + 2)
// One prime's table for transforms of length radix * 2^log_n.
#define NTT_TABLE_STRIDE(log_n, h, radix) (NTT_TABLE_LEN(log_n, h) + ((radix) == 3 ? NTT_RADIX3_LEN(log_n, h) : 0))

NTT_FN u32 ntt_table_entry(u64 i, u32 log_n, u32 h, u32 radix, const NttPrime &q) {
    const u64 H = 1ull << h, M = 1ull << (log_n - h);
    const u32 one = (u32)((((u64)1) << 32) % q.p);
    const u32 g = mont_mul(q.g, q.r2, q);
    const u64 order = (u64)q.p - 1;
    const u64 base_len = NTT_TABLE_LEN(log_n, h);
    if (i == base_len - 1) {
        // (radix N)^-1 = p - (p - 1) / (radix N); times 2^64: two Montgomery
        // products by R^2.
        const u32 n_inv = q.p - (u32)((order >> log_n) / radix);
        return mont_mul(mont_mul(n_inv, q.r2, q), q.r2, q);
    }
    u64 step, e;  // entry = g^(step * e), step = (p - 1) / order of the root
    bool inverse;
    if (i >= base_len) {
        // The radix-3 part: u has order 3N, v = u^N.
        const u64 k = i - base_len;
        step = (order >> log_n) / 3;
        if (k < 2 * H) {
            inverse = k >= H;
            e = k % H;
        } else if (k < 2 * H + 4 * M) {
            inverse = k - 2 * H >= 2 * M;
            e = ((k - 2 * H) % (2 * M)) << h;
        } else {
            inverse = false;
            e = (k - 2 * H - 4 * M + 1) << log_n;  // v, v^2
        }
    } else if (i < 2 * NTT_ROOTS) {
        step = order >> NTT_ROOT_LOG;
        inverse = i >= NTT_ROOTS;
        // Level L (the highest with 2^L - 1 <= i mod NTT_ROOTS), entry x.
        const u32 at = (u32)(i % NTT_ROOTS) + 1;
        u32 level = 0;
        while ((2u << level) <= at) level++;
        e = level < NTT_ROOT_LOG ? (u64)(at - (1u << level)) << (NTT_ROOT_LOG - 1 - level) : 0;
    } else if (i < 2 * NTT_ROOTS + 2 * H) {
        const u64 k = i - 2 * NTT_ROOTS;
        step = order >> log_n;
        inverse = k >= H;
        e = k % H;
    } else {
        const u64 k = i - 2 * NTT_ROOTS - 2 * H;
        step = order >> log_n;
        inverse = k >= M;
        e = (k % M) << h;
    }
    if (e == 0) return one;
    // x^-e = x^(order_of_x - e); the root has order (p - 1) / step.
    if (inverse) e = (order / step) - e;
    return mont_pow(mont_pow(g, step, q), e, q);
}

// Powers of a root from two of the tables above, in Montgomery form: x^e =
// A[e mod H] * B[e / H] (H = 2^h). The tables' places are found once (a
// pass takes one power an element).
struct NttPowers {
    const u32 *A, *B;
    u32 h;
    NTT_METHOD u32 at(u32 e, const NttPrime &q) const {
        return mont_mul(LDG(&A[e & ((1u << h) - 1)]), LDG(&B[e >> h]), q);
    }
};

// w^e (or w^-e), e < N: the transform's twists.
NTT_FN NttPowers ntt_powers(const u32 *tab, u32 log_n, u32 h, bool inverse) {
    const u32 H = 1u << h, M = 1u << (log_n - h);
    NttPowers w{tab + 2 * NTT_ROOTS + (inverse ? H : 0), tab + 2 * NTT_ROOTS + 2 * H + (inverse ? M : 0), h};
    NTT_OPAQUE(w.A);
    NTT_OPAQUE(w.B);
    return w;
}

// u^e (or u^-e), e < 2N: the radix-3 step's twists.
NTT_FN NttPowers ntt_powers3(const u32 *tab, u32 log_n, u32 h, bool inverse) {
    const u32 H = 1u << h, M2 = 2u << (log_n - h);
    const u32 *at = tab + NTT_TABLE_LEN(log_n, h);
    return NttPowers{at + (inverse ? H : 0), at + 2 * H + (inverse ? M2 : 0), h};
}

// The radix-3 step of a transform of length 3N, N = 2^log_n, at j < N, over
// one prime's 3N words `a` (`tab`: that prime's table).
//
// Forward (decimation in frequency): with x_l = x[j + lN] (l < 3; the
// operand's coefficients `coef` when given, as the first step, else a's),
// block s gets
//   y_s[j] = u^(js) * sum_l x_l v^(ls),
// and then each block's length-N transform (root u^3 = w) gives the outputs
// 3k + s: X[3k + s] = sum_j w^(jk) y_s[j]. Inverse (after the blocks' inverse
// transforms): z_s = Y_s u^(-js), x_l = sum_s z_s v^(-ls) (the 1/3 is in the
// pointwise scale). u^(2j) is (u^j)^2: one product where the tables took two
// loads and one. x holds x_0 .. x_2 (residues) in, the step's three outputs
// out. Going forward with `third` false, x_2 is 0 and skipped: the first
// step of a product whose operand fills at most 2N coefficients, as a
// balanced product's do (2 un + 2 vn <= 3N), needs four Montgomery
// products a column instead of six.
NTT_FN void ntt_radix3_values(u32 *x, const u32 *tab, const NttPrime &q, u32 log_n, u32 h, u32 j, bool inverse,
                               bool third = true) {
    const u32 *v = tab + NTT_TABLE_LEN(log_n, h) + NTT_RADIX3_LEN(log_n, h) - 2;
    const u32 v1 = LDG(&v[0]), v2 = LDG(&v[1]);
    const u32 u1 = ntt_powers3(tab, log_n, h, inverse).at(j, q), u2 = mont_mul(u1, u1, q);
    if (!inverse) {
        u32 s0 = mod_add(x[0], x[1], q);
        u32 s1 = mod_add(x[0], mont_mul(x[1], v1, q), q);
        u32 s2 = mod_add(x[0], mont_mul(x[1], v2, q), q);
        if (third) {
            s0 = mod_add(s0, x[2], q);
            s1 = mod_add(s1, mont_mul(x[2], v2, q), q);
            s2 = mod_add(s2, mont_mul(x[2], v1, q), q);
        }
        x[0] = s0;
        x[1] = mont_mul(s1, u1, q);
        x[2] = mont_mul(s2, u2, q);
    } else {
        const u32 z0 = x[0];
        const u32 z1 = mont_mul(x[1], u1, q);
        const u32 z2 = mont_mul(x[2], u2, q);
        // v^-1 = v^2.
        x[0] = mod_add(mod_add(z0, z1, q), z2, q);
        x[1] = mod_add(mod_add(z0, mont_mul(z1, v2, q), q), mont_mul(z2, v1, q), q);
        x[2] = mod_add(mod_add(z0, mont_mul(z1, v1, q), q), mont_mul(z2, v2, q), q);
    }
}

// ntt_radix3_values on one prime's 3N words `a` at column j, in place (the
// operand's coefficients `coef` in, when given, as the first step).
NTT_FN void ntt_radix3_at(u32 *a, const u32 *coef, const u32 *tab, const NttPrime &q, u32 log_n, u32 h, u32 j,
                          bool inverse, bool third) {
    const u32 n_len = 1u << log_n;
    u32 x[3];
    for (int l = 0; l < 3; l++) x[l] = coef ? coefficient_residue(coef[l], q) : a[j + l * n_len];
    ntt_radix3_values(x, tab, q, log_n, h, j, inverse, third);
    for (int l = 0; l < 3; l++) a[j + l * n_len] = x[l];
}

// The radix-3 step at column j of all three primes' transforms (a holds them
// 3N words apart, tab their tables `stride` words apart). Going forward it
// cuts the three coefficients j + lN from the limbs (xn of them) once for
// all three primes: a thread a prime read them three times (240 MB of limbs
// read for 80 MB at 10^7 limbs, ncu; RESULTS.md, "Transform passes").
NTT_FN void ntt_radix3_column(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 stride, u32 log_n, u32 h, u32 j,
                              bool inverse) {
    const u32 n_len = 1u << log_n;
    // The same for every thread: no coefficient at 2N or above.
    const bool third = !limbs || xn > n_len;
    u32 coef[3] = {0, 0, 0};
    if (limbs) {
        const NttCoefficients coefs(limbs, xn);
        for (int l = 0; l < (third ? 3 : 2); l++) coef[l] = coefs.at(j + l * n_len);
    }
#pragma unroll
    for (u32 prime = 0; prime < NTT_PRIMES; prime++)
        ntt_radix3_at(a + prime * 3 * n_len, limbs ? coef : nullptr, tab + prime * stride, ntt_primes[prime], log_n, h,
                      j, inverse, third);
}
