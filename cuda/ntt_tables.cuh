#pragma once
#include "ntt_arith.cuh"

// ---------------------------------------------------------------------------
// Twiddle tables, built once per transform length (src/gpu/ntt/transform.rs caches
// them), one table a prime, NTT_TABLE_STRIDE words apart, every entry but the
// stage roots' in Montgomery form (x * 2^32 mod p), so that mont_mul(v,
// entry) = v * x. w is a root of order N = 2^log_n, r one of order 2^14,
// both powers of the same generator, so r^(x * 2^14 / 2^(q+1)) = w^(x * N /
// 2^(q+1)):
//   [0, 2^14)             stage roots inside a pass (forward) by level, as
//                         plain residues: level L < 14 at [2^L, 2^(L+1))
//                         holds the 2^L powers r^(x 2^(13-L)), x < 2^L, of
//                         the root of order 2^(L+1), power x at
//                         ntt_root_slot(L, x) (word 0 is unused)
//   [2^14, 2^15)          the same with r^-1 (inverse)
//   [2^15, 3 * 2^14)      each forward root's quotient floor(root 2^32 / p)
//                         (shoup_mul), at the root's slot + 2^15
//   [3 * 2^14, 2^16)      the same for the inverse's roots
//   then, with H = 2^h and M = N / H:
//   A  [H]  w^i,   Ai [H]  w^-i          w^e = A[e mod H] * B[e / H] for e < N:
//   B  [M]  w^(iH), Bi [M] w^-(iH)       two small tables instead of one of N
//   then one word: 2^64 / (radix N) mod p, the inverse's scale (a Montgomery
//   product of two plain values leaves a factor 2^-32, which it also undoes;
//   the radix-R step's 1/R is in it too)
// and, for transforms of length RN (radix R = 3 or 5), with u a root of
// order RN (u^R = w) and v = u^N an R-th root of unity (NTT_RADIX_LEN more
// words):
//   AR [H] u^i,  ARi [H] u^-i,  BR [M] u^(iH),  BRi [M] u^-(iH),  v .. v^(R-1)
// ---------------------------------------------------------------------------
#define NTT_ROOT_LOG 14                        // r has order 2^NTT_ROOT_LOG
#define NTT_ROOTS (1 << NTT_ROOT_LOG)          // one direction's stage roots by level (levels 0 to 13: a pass has at most 14 stages)
// The stage roots and their quotients, both directions.
#define NTT_ROOT_WORDS (4 * NTT_ROOTS)
#define NTT_TABLE_LEN(log_n, h) (NTT_ROOT_WORDS + 2 * (1ull << (h)) + 2 * (1ull << ((log_n) - (h))) + 1)
#define NTT_RADIX_LEN(log_n, h, radix) \
    ((radix) == 1 ? 0 : 2 * (1ull << (h)) + 2 * (1ull << ((log_n) - (h))) + (radix) - 1)
// One prime's table for transforms of length radix * 2^log_n, rounded up to
// four words so that every prime's stage roots start 16-byte aligned (a step
// loads four of them at once; ntt_root_slot). The last words are unused.
#define NTT_TABLE_STRIDE(log_n, h, radix) ((NTT_TABLE_LEN(log_n, h) + NTT_RADIX_LEN(log_n, h, radix) + 3) & ~3ull)

// log2 of the most elements a thread takes through a step of a pass's stages
// in registers (ntt_pass.cuh, ntt_group_log): steps of up to three stages,
// starting at multiples of three where the groups are whole (8 elements).
#define NTT_GROUP_LOG 3

// Where the stage roots' table keeps power x of level L's root (x < 2^L).
// A step of stages p .. p + 2 (p a multiple of NTT_GROUP_LOG) takes at level
// p + s, for a group whose j's bits below p are `low`, the powers low + c 2^p
// (c < 2^s, ntt_group). Stored at (low << s) | c, they are 2^s consecutive
// words at a multiple of 2^s: one load of up to four words a stage where
// the stages' powers were seven loads of one word, and a warp's lanes
// (consecutive `low` where p >= 5) still read consecutive words.
NTT_FN u32 ntt_root_slot(u32 level, u32 x) {
    const u32 p = level / NTT_GROUP_LOG * NTT_GROUP_LOG, s = level - p;
    return (1u << level) + (((x & ((1u << p) - 1)) << s) | (x >> p));
}

NTT_FN u32 ntt_table_entry(u64 i, u32 log_n, u32 h, u32 radix, const NttPrime &q) {
    const u64 H = 1ull << h, M = 1ull << (log_n - h);
    const u32 one = (u32)((((u64)1) << 32) % q.p);
    const u32 g = mont_mul(q.g, q.r2, q);
    const u64 order = (u64)q.p - 1;
    const u64 base_len = NTT_TABLE_LEN(log_n, h);
    if (i >= base_len + NTT_RADIX_LEN(log_n, h, radix)) return 0;  // the stride's padding
    if (i == base_len - 1) {
        // (radix N)^-1 = p - (p - 1) / (radix N); times 2^64: two Montgomery
        // products by R^2.
        const u32 n_inv = q.p - (u32)((order >> log_n) / radix);
        return mont_mul(mont_mul(n_inv, q.r2, q), q.r2, q);
    }
    u64 step, e;  // entry = g^(step * e), step = (p - 1) / order of the root
    bool inverse, plain = false, quotient = false;
    if (i >= base_len) {
        // The radix-R part: u has order RN, v = u^N.
        const u64 k = i - base_len;
        step = (order >> log_n) / radix;
        if (k < 2 * H) {
            inverse = k >= H;
            e = k % H;
        } else if (k < 2 * H + 2 * M) {
            inverse = k - 2 * H >= M;
            e = ((k - 2 * H) % M) << h;
        } else {
            inverse = false;
            e = (k - 2 * H - 2 * M + 1) << log_n;  // v .. v^(R-1)
        }
    } else if (i < NTT_ROOT_WORDS) {
        step = order >> NTT_ROOT_LOG;
        inverse = (i / NTT_ROOTS) & 1;
        quotient = i >= 2 * NTT_ROOTS;
        plain = true;
        // Level L (the highest with 2^L <= i mod NTT_ROOTS), the power x
        // whose ntt_root_slot is i mod NTT_ROOTS.
        const u32 at = (u32)(i % NTT_ROOTS);
        if (at == 0) return 0;  // unused
        u32 level = 0;
        while ((2u << level) <= at) level++;
        const u32 pos = at - (1u << level);
        const u32 p = level / NTT_GROUP_LOG * NTT_GROUP_LOG, s = level - p;
        const u32 x = (pos >> s) | ((pos & ((1u << s) - 1)) << p);
        e = (u64)x << (NTT_ROOT_LOG - 1 - level);
    } else if (i < NTT_ROOT_WORDS + 2 * H) {
        const u64 k = i - NTT_ROOT_WORDS;
        step = order >> log_n;
        inverse = k >= H;
        e = k % H;
    } else {
        const u64 k = i - NTT_ROOT_WORDS - 2 * H;
        step = order >> log_n;
        inverse = k >= M;
        e = (k % M) << h;
    }
    u32 x = one;
    // x^-e = x^(order_of_x - e); the root has order (p - 1) / step.
    if (e != 0) x = mont_pow(mont_pow(g, step, q), inverse ? (order / step) - e : e, q);
    if (!plain) return x;
    x = mont_mul(x, 1, q);  // out of Montgomery form
    return quotient ? (u32)((((u64)x) << 32) / q.p) : x;
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
    NttPowers w{tab + NTT_ROOT_WORDS + (inverse ? H : 0), tab + NTT_ROOT_WORDS + 2 * H + (inverse ? M : 0), h};
    NTT_OPAQUE(w.A);
    NTT_OPAQUE(w.B);
    return w;
}

// u^e (or u^-e), e < N: the radix-R step's twists.
NTT_FN NttPowers ntt_powers_radix(const u32 *tab, u32 log_n, u32 h, bool inverse) {
    const u32 H = 1u << h, M = 1u << (log_n - h);
    const u32 *at = tab + NTT_TABLE_LEN(log_n, h);
    return NttPowers{at + (inverse ? H : 0), at + 2 * H + (inverse ? M : 0), h};
}

// The radix-R step (R = 3 or 5) of a transform of length RN, N = 2^log_n,
// at j < N, over one prime's RN words `a` (`tab`: that prime's table).
//
// Forward (decimation in frequency): with x_l = x[j + lN] (l < R; the
// operand's coefficients `coef` when given, as the first step, else a's),
// block s gets
//   y_s[j] = u^(js) * sum_l x_l v^(ls),
// and then each block's length-N transform (root u^R = w) gives the outputs
// Rk + s: X[Rk + s] = sum_j w^(jk) y_s[j]. Inverse (after the blocks' inverse
// transforms): z_s = Y_s u^(-js), x_l = sum_s z_s v^(-ls) (the 1/R is in the
// pointwise scale). u^(js) is u^j's power by products, where tables took two
// loads and a product each. x holds x_0 .. x_(R-1) (residues) in, the step's
// R outputs out. Going forward only the first `rows` x_l may be nonzero:
// the first step of a product reads an operand's coefficients, which fill
// fewer rows than R (a balanced product's each fill at most half the
// length), and the products by the others' powers of v are skipped: a
// radix-3 column of a balanced product takes four Montgomery products
// instead of six.
template <int R>
NTT_FN void ntt_radix_values(u32 *x, const u32 *tab, const NttPrime &q, u32 log_n, u32 h, u32 j, bool inverse,
                             u32 rows = R) {
    const u32 *vt = tab + NTT_TABLE_LEN(log_n, h) + NTT_RADIX_LEN(log_n, h, R) - (R - 1);
    // v[k] = v^k (v[0] = 1 unused), u[s] = u^(js) (or u^(-js); u[0] = 1 unused).
    u32 v[R], u[R];
#pragma unroll
    for (int k = 1; k < R; k++) v[k] = LDG(&vt[k - 1]);
    u[1] = ntt_powers_radix(tab, log_n, h, inverse).at(j, q);
#pragma unroll
    for (int s = 2; s < R; s++) u[s] = mont_mul(u[s - 1], u[1], q);
    if (!inverse) {
        u32 y[R];
#pragma unroll
        for (int s = 0; s < R; s++) y[s] = x[0];
#pragma unroll
        for (int l = 1; l < R; l++) {
            if ((u32)l >= rows) break;
            y[0] = mod_add(y[0], x[l], q);
#pragma unroll
            for (int s = 1; s < R; s++) y[s] = mod_add(y[s], mont_mul(x[l], v[(l * s) % R], q), q);
        }
        x[0] = y[0];
#pragma unroll
        for (int s = 1; s < R; s++) x[s] = mont_mul(y[s], u[s], q);
    } else {
        u32 z[R];
        z[0] = x[0];
#pragma unroll
        for (int s = 1; s < R; s++) z[s] = mont_mul(x[s], u[s], q);
#pragma unroll
        for (int l = 0; l < R; l++) {
            u32 sum = z[0];
#pragma unroll
            for (int s = 1; s < R; s++) {
                // v^-(ls) = v^(R - ls mod R).
                const int k = (R - (l * s) % R) % R;
                sum = mod_add(sum, k == 0 ? z[s] : mont_mul(z[s], v[k], q), q);
            }
            x[l] = sum;
        }
    }
}

// The radix-R step at column j of all three primes' transforms (a holds them
// RN words apart, tab their tables `stride` words apart, the primes the set
// for radix R). Going forward it cuts the coefficients j + lN from the limbs
// (xn of them) once for all three primes: a thread a prime read them three
// times (240 MB of limbs read for 80 MB at 10^7 limbs, ncu; RESULTS.md,
// "Transform passes").
template <int R>
NTT_FN void ntt_radix_column(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 stride, u32 log_n, u32 h, u32 j,
                             bool inverse) {
    const u32 n_len = 1u << log_n;
    // The same for every thread: the rows that hold coefficients (below 2 xn).
    u32 rows = R;
    u32 coef[R];
    if (limbs) {
        const u64 filled = (2 * xn + n_len - 1) >> log_n;
        rows = filled < R ? (u32)filled : R;
        const NttCoefficients coefs(limbs, xn);
#pragma unroll
        for (int l = 0; l < R; l++) coef[l] = (u32)l < rows ? coefs.at(j + l * n_len) : 0;
    }
#pragma unroll
    for (u32 prime = 0; prime < NTT_PRIMES; prime++) {
        const NttPrime q = ntt_prime(R, prime);
        u32 *ap = a + prime * R * n_len;
        u32 x[R];
#pragma unroll
        for (int l = 0; l < R; l++) x[l] = limbs ? coefficient_residue(coef[l], q, R == 5 ? 4 : 2) : ap[j + l * n_len];
        ntt_radix_values<R>(x, tab + prime * stride, q, log_n, h, j, inverse, rows);
#pragma unroll
        for (int l = 0; l < R; l++) ap[j + l * n_len] = x[l];
    }
}
