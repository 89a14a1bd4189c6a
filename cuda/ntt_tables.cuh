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
//                         ntt_root_slot(L, x, 0) (word 0 is unused)
//   [2^14, 2^15)          the same with r^-1 (inverse)
//   [2^15, 3 * 2^14)      each forward root's quotient floor(root 2^32 / p)
//                         (shoup_mul), at the root's slot + 2^15
//   [3 * 2^14, 2^16)      the same for the inverse's roots
//   [2^16, 2^17)          the same four again in the second layout
//                         (ntt_root_slot's b = 2, the passes whose bottom
//                         step has two stages)
//   then, with H = 2^h and M = N / H:
//   A  [H]  w^i,   Ai [H]  w^-i          w^e = A[e mod H] * B[e / H] for e < N:
//   B  [M]  w^(iH), Bi [M] w^-(iH)       two small tables instead of one of N
//   then one word: 2^64 / (radix N) mod p, the inverse's scale (a Montgomery
//   product of two plain values leaves a factor 2^-32, which it also undoes;
//   the radix-R step's 1/R is in it too; ntt_pass.cuh applies it in the
//   inverse's last pass)
// and, for transforms of length RN (radix R = 3 or 5), with u a root of
// order RN (u^R = w; NTT_RADIX_LEN more words):
//   AR [H] u^i,  ARi [H] u^-i,  BR [M] u^(iH),  BRi [M] u^-(iH)
// (the R-point transforms' constants, from v = u^N, are fixed for each
// prime: ntt_dft3, ntt_dft5).
// ---------------------------------------------------------------------------
#define NTT_ROOT_LOG 14                        // r has order 2^NTT_ROOT_LOG
#define NTT_ROOTS (1 << NTT_ROOT_LOG)          // one direction's stage roots by level (levels 0 to 13: a pass has at most 14 stages)
// One layout's stage roots and their quotients, both directions.
#define NTT_LAYOUT_WORDS (4 * NTT_ROOTS)
// Both layouts (ntt_root_slot).
#define NTT_ROOT_WORDS (2 * NTT_LAYOUT_WORDS)
#define NTT_TABLE_LEN(log_n, h) (NTT_ROOT_WORDS + 2 * (1ull << (h)) + 2 * (1ull << ((log_n) - (h))) + 1)
#define NTT_RADIX_LEN(log_n, h, radix) ((radix) == 1 ? 0 : 2 * (1ull << (h)) + 2 * (1ull << ((log_n) - (h))))
// One prime's table for transforms of length radix * 2^log_n, rounded up to
// four words so that every prime's stage roots start 16-byte aligned (a step
// loads four of them at once; ntt_root_slot). The last words are unused.
#define NTT_TABLE_STRIDE(log_n, h, radix) ((NTT_TABLE_LEN(log_n, h) + NTT_RADIX_LEN(log_n, h, radix) + 3) & ~3ull)

// log2 of the most elements a thread takes through a step of a pass's stages
// in registers (ntt_pass.cuh, ntt_group_log): steps of up to three stages,
// starting at multiples of three where the groups are whole (8 elements),
// or, in passes whose bottom step has two stages (ntt_bottom_stages), at 0
// and then 2 + 3m.
#define NTT_GROUP_LOG 3

// The first stage of the step that takes level L in a pass whose bottom
// step has b stages (b = 0: steps of NTT_GROUP_LOG from 0; b = 2: the
// bottom step has levels 0 and 1, the others start at 2 + 3m).
NTT_FN u32 ntt_step_start(u32 level, u32 b) {
    return level < b ? 0 : (level - b) / NTT_GROUP_LOG * NTT_GROUP_LOG + b;
}

// Where the stage roots' table keeps power x of level L's root (x < 2^L),
// in the layout of passes whose bottom step has b stages (0 or 2).
// A step of stages p .. p + 2 (p = ntt_step_start) takes at level
// p + s, for a group whose j's bits below p are `low`, the powers low + c 2^p
// (c < 2^s, ntt_group). Stored at (low << s) | c, they are 2^s consecutive
// words at a multiple of 2^s: one load of up to four words a stage where
// the stages' powers were seven loads of one word, and a warp's lanes
// (consecutive `low` where p >= 5) still read consecutive words.
NTT_FN u32 ntt_root_slot(u32 level, u32 x, u32 b) {
    const u32 p = ntt_step_start(level, b), s = level - p;
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
        // The radix-R part: u has order RN.
        const u64 k = i - base_len;
        step = (order >> log_n) / radix;
        if (k < 2 * H) {
            inverse = k >= H;
            e = k % H;
        } else {
            inverse = k - 2 * H >= M;
            e = ((k - 2 * H) % M) << h;
        }
    } else if (i < NTT_ROOT_WORDS) {
        step = order >> NTT_ROOT_LOG;
        const u32 b = i >= NTT_LAYOUT_WORDS ? 2 : 0;  // the layout
        const u64 in_layout = i % NTT_LAYOUT_WORDS;
        inverse = (in_layout / NTT_ROOTS) & 1;
        quotient = in_layout >= 2 * NTT_ROOTS;
        plain = true;
        // Level L (the highest with 2^L <= i mod NTT_ROOTS), the power x
        // whose ntt_root_slot is i mod NTT_ROOTS.
        const u32 at = (u32)(i % NTT_ROOTS);
        if (at == 0) return 0;  // unused
        u32 level = 0;
        while ((2u << level) <= at) level++;
        const u32 pos = at - (1u << level);
        const u32 p = ntt_step_start(level, b), s = level - p;
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
    return quotient ? shoup_quotient(x, q.p) : x;
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

// The R-point transforms' constants (ntt_dft), plain residues with their
// quotients (shoup_mul), for v = g^((p - 1) / R), g the prime's generator
// (so v = u^N for the radix step's u, whatever N), and c_k = (v^k + v^-k) /
// 2, s_k = (v^k - v^-k) / 2:
//   R = 3: -1/2, s_1;
//   R = 5: -1/4, (c_1 - c_2) / 2, s_1, s_2 - s_1, s_1 + s_2.
// Fixed for each prime of the set the radix takes (ntt_prime), so they are
// constants, not table words; ntt_dft_constant computes them, and the host
// model checks these against it (c_tests/ntt_model.cpp).
#define NTT_DFT_MAX 5
struct NttDft {
    u32 k[NTT_DFT_MAX];
    u32 kq[NTT_DFT_MAX];
};
NTT_CONST NttDft ntt_dft3[NTT_PRIMES] = {
    {{905969664u, 36864u}, {0x7ffffffeu, 0x00015555u}},
    {{1006632960u, 308090163u}, {0x7ffffffeu, 0x272cfa06u}},
    {{1056964608u, 726416403u}, {0x7ffffffeu, 0x57f8598bu}},
};
NTT_CONST NttDft ntt_dft5[NTT_PRIMES] = {
    {{220200960u, 763127070u, 690446628u, 607547023u, 226832597u},
     {0x3ffffffeu, 0xddcc49b2u, 0xc8ac8453u, 0xb094643cu, 0x41ed6ce3u}},
    {{325058560u, 1007582864u, 882299492u, 1146327120u, 310457622u},
     {0x3fffffffu, 0xc6616d33u, 0xadb6bd90u, 0xe1b295aau, 0x3d2010ccu}},
    {{503316480u, 226992162u, 1928538430u, 1764752942u, 1595297960u},
     {0x3fffffffu, 0x1cdd1159u, 0xf539f193u, 0xe0666282u, 0xcada45a8u}},
};
// The same for the wide sets' primes (ntt_wide_primes, ntt_wide_primes5).
NTT_CONST NttDft ntt_wide_dft3[NTT_WIDE_PRIMES] = {
    {{855638016u, 1378687789u}, {0x7ffffffeu, 0xce3f02f1u}},
    {{905969664u, 36864u}, {0x7ffffffeu, 0x00015555u}},
    {{1006632960u, 308090163u}, {0x7ffffffeu, 0x272cfa06u}},
    {{1044381696u, 82237675u}, {0x7ffffffeu, 0x0a143f92u}},
    {{1056964608u, 726416403u}, {0x7ffffffeu, 0x57f8598bu}},
};
NTT_CONST NttDft ntt_wide_dft5[NTT_WIDE_PRIMES] = {
    {{325058560u, 1007582864u, 882299492u, 1146327120u, 310457622u},
     {0x3fffffffu, 0xc6616d33u, 0xadb6bd90u, 0xe1b295aau, 0x3d2010ccu}},
    {{330301440u, 784568182u, 425010227u, 283805372u, 1133825826u},
     {0x3fffffffu, 0x9805128eu, 0x5259db42u, 0x36fda5bcu, 0xdbb15c41u}},
    {{393216000u, 1002157281u, 1422435483u, 1564864058u, 1264007022u},
     {0x3fffffffu, 0xa31c8da8u, 0xe7842524u, 0xfeb2ab46u, 0xcdbaf58fu}},
    {{466616320u, 605527744u, 896652181u, 1157045015u, 1083884096u},
     {0x3fffffffu, 0x530d8202u, 0x7afb92e1u, 0x9eb2949fu, 0x94a9ba62u}},
    {{503316480u, 226992162u, 1928538430u, 1764752942u, 1595297960u},
     {0x3fffffffu, 0x1cdd1159u, 0xf539f193u, 0xe0666282u, 0xcada45a8u}},
};
NTT_FN int ntt_dft_count(u32 radix) { return radix == 3 ? 2 : 5; }

// Constant i of the R-point transform modulo q (the list above), plain.
NTT_FN u32 ntt_dft_constant(u32 radix, u32 i, const NttPrime &q) {
    const u32 g = mont_mul(q.g, q.r2, q);
    u32 v[5];  // v^k in Montgomery form
    v[1] = mont_pow(g, (q.p - 1) / radix, q);
    for (u32 k = 2; k < radix; k++) v[k] = mont_mul(v[k - 1], v[1], q);
    const u32 half = mont_mul((q.p + 1) / 2, q.r2, q);
    auto c = [&](u32 k) { return mont_mul(mod_add(v[k], v[radix - k], q), half, q); };
    auto s = [&](u32 k) { return mont_mul(mod_sub(v[k], v[radix - k], q), half, q); };
    u32 x;
    if (radix == 3) {
        x = i == 0 ? mod_sub(0, half, q) : s(1);
    } else {
        const u32 k[5] = {mod_sub(0, mont_mul(half, half, q), q), mont_mul(mod_sub(c(1), c(2), q), half, q), s(1),
                          mod_sub(s(2), s(1), q), mod_add(s(1), s(2), q)};
        x = k[i];
    }
    return mont_mul(x, 1, q);  // out of Montgomery form
}

// The R-point transform in place (R = 3 or 5): x_s <- sum_l x_l v^(ls), or
// with v^-1 (inverse), x residues, `k` the prime's constants. Winograd's
// form: with a = x_1 + x_4, b = x_1 - x_4, c = x_2 + x_3, d = x_2 - x_3,
//   X_1, X_4 = x_0 + a c_1 + c c_2 +- (b s_1 + d s_2),
//   X_2, X_3 = x_0 + a c_2 + c c_1 +- (b s_2 - d s_1),
// and as c_1 + c_2 = -1/2 (the fifth roots sum to 0), the two sums of c
// terms are (a + c)(-1/4) +- (a - c)(c_1 - c_2) / 2, the two of s terms
// s_1 (b + d) + (s_2 - s_1) d and (s_1 + s_2) b - s_1 (b + d): five
// products by constants where the sums of powers took sixteen (R = 3: X_1,
// X_2 = x_0 - a / 2 +- b s_1, a = x_1 + x_2, b = x_1 - x_2: two for four).
// v^-1 swaps X_s and X_(R-s). shoup_mul takes any a < 2^32, so the sums
// and differences it alone reads (below 2p) go unreduced.
template <int R>
NTT_FN void ntt_dft(u32 *x, const NttDft &k, const NttPrime &q, bool inverse) {
    static_assert(R == 3 || R == 5, "radix 3 or 5");
    u32 y[R];
    if (R == 3) {
        const u32 a = mod_add(x[1], x[2], q);
        const u32 t = mod_add(x[0], shoup_mul(a, k.k[0], k.kq[0], q), q);
        const u32 m = shoup_mul(x[1] - x[2] + q.p, k.k[1], k.kq[1], q);
        y[0] = mod_add(x[0], a, q);
        y[1] = mod_add(t, m, q);
        y[2] = mod_sub(t, m, q);
    } else {
        const u32 a = mod_add(x[1], x[4], q), b = mod_sub(x[1], x[4], q);
        const u32 c = mod_add(x[2], x[3], q), d = mod_sub(x[2], x[3], q);
        const u32 m1 = shoup_mul(a + c, k.k[0], k.kq[0], q);
        const u32 m2 = shoup_mul(a - c + q.p, k.k[1], k.kq[1], q);
        const u32 m3 = shoup_mul(b + d, k.k[2], k.kq[2], q);  // b + d < 2p < 2^32
        const u32 m4 = shoup_mul(d, k.k[3], k.kq[3], q);
        const u32 m5 = shoup_mul(b, k.k[4], k.kq[4], q);
        const u32 t = mod_add(x[0], m1, q);
        const u32 e1 = mod_add(t, m2, q), e2 = mod_sub(t, m2, q);
        const u32 o1 = mod_add(m3, m4, q), o2 = mod_sub(m5, m3, q);
        y[0] = mod_add(x[0], mod_add(a, c, q), q);
        y[1] = mod_add(e1, o1, q);
        y[4] = mod_sub(e1, o1, q);
        y[2] = mod_add(e2, o2, q);
        y[3] = mod_sub(e2, o2, q);
    }
    x[0] = y[0];
#pragma unroll
    for (int s = 1; s < R; s++) x[s] = y[inverse ? R - s : s];
}

// The radix-R step (R = 3 or 5) of a transform of length RN, N = 2^log_n,
// at j < N, over one prime's RN words `a` (`tab`: that prime's table, `d`
// its R-point transforms' constants).
//
// Forward (decimation in frequency): with x_l = x[j + lN] (l < R; the
// operand's coefficients `coef` when given, as the first step, else a's),
// block s gets
//   y_s[j] = u^(js) * sum_l x_l v^(ls),
// and then each block's length-N transform (root u^R = w) gives the outputs
// Rk + s: X[Rk + s] = sum_j w^(jk) y_s[j]. Inverse (after the blocks' inverse
// transforms): z_s = Y_s u^(-js), x_l = sum_s z_s v^(-ls) (the 1/R is in the
// pointwise scale). The sums over l are ntt_dft. u^(js) is u^j's power by
// products, where tables took two loads and a product each. x holds x_0 ..
// x_(R-1) (residues) in, the step's R outputs out. Going forward only the
// first `rows` x_l may be nonzero: the first step of a product reads an
// operand's coefficients, which fill fewer rows than R; where they fill one,
// every block gets x_0 and the transform is skipped.
template <int R>
NTT_FN void ntt_radix_values(u32 *x, const u32 *tab, const NttDft &d, const NttPrime &q, u32 log_n, u32 h, u32 j,
                             bool inverse, u32 rows = R) {
    // u[s] = u^(js) (or u^(-js); u[0] = 1 unused), below 2p from s = 2
    // (mont_mul_lazy: each only a first factor).
    u32 u[R];
    u[1] = ntt_powers_radix(tab, log_n, h, inverse).at(j, q);
#pragma unroll
    for (int s = 2; s < R; s++) u[s] = mont_mul_lazy(u[s - 1], u[1], q);
    if (!inverse) {
        if (rows > 1) {
            ntt_dft<R>(x, d, q, false);
        } else {
#pragma unroll
            for (int s = 1; s < R; s++) x[s] = x[0];
        }
#pragma unroll
        for (int s = 1; s < R; s++) x[s] = mont_mul(u[s], x[s], q);
    } else {
#pragma unroll
        for (int s = 1; s < R; s++) x[s] = mont_mul(u[s], x[s], q);
        ntt_dft<R>(x, d, q, true);
    }
}

// The R-point transforms' constants of prime i of the set for radix R
// (WIDE: of the wide sets).
template <int R, bool WIDE = false>
NTT_FN const NttDft &ntt_dft_of(u32 i) {
    if (WIDE) return R == 3 ? ntt_wide_dft3[i] : ntt_wide_dft5[i];
    return R == 3 ? ntt_dft3[i] : ntt_dft5[i];
}

// A coefficient as it comes from an operand's limbs: a 32-bit half of a
// limb, or a whole limb in the wide sets (WIDE).
template <bool WIDE>
struct NttCut {
    typedef u32 Coef;
    typedef NttCoefficients Source;
    static constexpr u64 per_limb = 2;
    static NTT_METHOD u32 residue(u32 x, const NttPrime &q, int subtractions) { return coefficient_residue(x, q, subtractions); }
};
template <>
struct NttCut<true> {
    typedef u64 Coef;
    typedef NttLimbs Source;
    static constexpr u64 per_limb = 1;
    static NTT_METHOD u32 residue(u64 x, const NttPrime &q, int subtractions) { return limb_residue(x, q, subtractions); }
};

// The radix-R step at column j of all three primes' transforms (a holds them
// RN words apart, tab their tables `stride` words apart, the primes the set
// for radix R). Going forward it cuts the coefficients j + lN from the limbs
// (xn of them) once for all three primes: a thread a prime read them three
// times (240 MB of limbs read for 80 MB at 10^7 limbs, ncu; RESULTS.md,
// "Transform passes").
// ROWS: at most that many rows hold coefficients going forward (the rest
// are zeros the compiler folds away: their loads, residues and sums).
// WIDE: the wide sets, five primes, a limb a coefficient.
template <int R, int ROWS, bool WIDE = false>
NTT_FN void ntt_radix_column_rows(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 stride, u32 log_n, u32 h,
                                  u32 j, bool inverse) {
    typedef NttCut<WIDE> Cut;
    constexpr u32 P = WIDE ? NTT_WIDE_PRIMES : NTT_PRIMES;
    const u32 n_len = 1u << log_n;
    // The same for every thread: the rows that hold coefficients (below
    // per_limb xn).
    u32 rows = R;
    typename Cut::Coef coef[R];
    if (limbs) {
        const u64 filled = (Cut::per_limb * xn + n_len - 1) >> log_n;
        rows = filled < ROWS ? (u32)filled : ROWS;
        const typename Cut::Source coefs(limbs, xn);
#pragma unroll
        for (int l = 0; l < R; l++) coef[l] = l < ROWS && (u32)l < rows ? coefs.at(j + l * n_len) : 0;
    }
#pragma unroll
    for (u32 prime = 0; prime < P; prime++) {
        const NttPrime q = ntt_prime(R, prime, WIDE);
        u32 *ap = a + prime * R * n_len;
        u32 x[R];
#pragma unroll
        for (int l = 0; l < R; l++)
            x[l] = !limbs ? ap[j + l * n_len] : l < ROWS ? Cut::residue(coef[l], q, ntt_subtractions(R, prime, WIDE)) : 0;
        ntt_radix_values<R>(x, tab + prime * stride, ntt_dft_of<R, WIDE>(prime), q, log_n, h, j, inverse, rows);
#pragma unroll
        for (int l = 0; l < R; l++) ap[j + l * n_len] = x[l];
    }
}

// The step at column j, the forward radix-5 one from limbs that fill at most
// three rows (every operand of a balanced product: 2 xn <= 5N / 2) with its
// last two rows' zeros as constants.
template <int R, bool WIDE = false>
NTT_FN void ntt_radix_column(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 stride, u32 log_n, u32 h, u32 j,
                             bool inverse) {
    if (R == 5 && limbs && NttCut<WIDE>::per_limb * xn <= (3ull << log_n)) {
        ntt_radix_column_rows<R, 3, WIDE>(a, limbs, xn, tab, stride, log_n, h, j, inverse);
    } else {
        ntt_radix_column_rows<R, R, WIDE>(a, limbs, xn, tab, stride, log_n, h, j, inverse);
    }
}
