// Exact multiplication by number-theoretic transforms over three 31-bit primes.
//
// Operands are cut into 32-bit coefficients (two a limb). Each product is
// three transforms, one per prime p < 2^31, all with 32-bit arithmetic
// (Montgomery products), and the coefficients of the product come back by the
// Chinese remainder theorem.
//
//   p0 = 27 * 2^26 + 1 = 1811939329 (generator 13)
//   p1 = 15 * 2^27 + 1 = 2013265921 (generator 31)
//   p2 = 63 * 2^25 + 1 = 2113929217 (generator 5)
//
// Every p - 1 is divisible by 3 * 2^25, so transforms of length M = 2^m and
// 3M exist for m <= 25 (NTT_MAX_LOG); a length 3M transform is one radix-3
// step (cugmp_ntt_radix3) and three transforms of length M. The host takes
// the shorter of 2^k and 3 * 2^k with N >= 2 * (un + vn), so the cyclic
// convolution does not wrap: products of up to 3 * 2^24 limbs (384 MiB).
// Why below 2^31: a sum of two residues fits 32 bits, so (a + b) mod p is
// min(a + b, a + b - p) (an add and one VIADDMNMX on sm_90, where the sum
// mod p2 = 3 * 2^30 + 1, which could pass 2^32, took five instructions), and the forward butterfly hands x - y + p to its Montgomery
// product unreduced (below 2p, and 2p * p < 2^32 p). Only two primes below
// 2^31 have 3 * 2^26 | p - 1, so the longest transform is 3 * 2^25; longer
// products go to the GPU in pieces (src/gpu/ntt.rs, Plan::Split).
//
// Exactness: a coefficient of the product is a sum of at most 2m products of
// two coefficients below 2^32, m the shorter operand's limbs, so it is below
// 2m * 2^64 <= 3 * 2^24 * 2^64 < 2^90 (m <= 3 * 2^23 when the product has at
// most 3 * 2^24 limbs), and P = p0 p1 p2 > 2^92.6: the CRT gives it exactly.
// A product mod B^n - 1 (GMP's mulmod_bnm1) is one cyclic convolution of
// length exactly N = 2n (2^k or 3 * 2^k, so n <= 3 * 2^24, operands of at
// most n limbs): coefficient j sums the products a_i b_k with i + k = j mod
// N, at most one for each of the shorter operand's 2m coefficients, so again
// below 2m * 2^64 <= 3 * 2^25 * 2^64 < 2^91 < P.
//
// Forward: decimation in frequency (natural order in, bit-reversed out);
// inverse: decimation in time (bit-reversed in, natural out): no bit-reversal
// pass. Both in passes of up to 14 stages in shared memory (cugmp_ntt_pass).
//
// The arithmetic and the pass are plain functions of (block, thread) so that
// tests/ntt_model.rs can compile this file as host C++ (CUGMP_HOST_MODEL)
// and run the whole pipeline on the CPU, block by block, against GMP.
#ifdef CUGMP_HOST_MODEL
#include <stdint.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef u64 limb_t;
#define NTT_FN static inline
#define NTT_METHOD inline
#define NTT_CONST static const
#define BLOCK_SYNC()
// Between barriers, the model runs the code of each of the block's threads
// in turn (so the threads' share of the work is what is tested).
#define EACH_THREAD(t) for (u32 t = 0; t < threads; t++)
static inline u32 umulhi32(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
static inline u32 brev32(u32 x) {
    u32 r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
#define LDG(p) (*(p))
#define NTT_OPAQUE(p)
struct uint4 {
    u32 x, y, z, w;
};
#else
#include "cugmp.cuh"
#define NTT_FN __device__ __forceinline__
#define NTT_METHOD __device__ __forceinline__
#define NTT_CONST __constant__
#define BLOCK_SYNC() __syncthreads()
#define EACH_THREAD(t) for (u32 t = thread_id, once_ = 1; once_; once_ = 0)
#define umulhi32 __umulhi
#define brev32 __brev
#define LDG(p) __ldg(p)
// The pointer p, computed once into a register pair: without this nvcc folds
// a table's 64-bit offset (prime * stride) into every load from it, four
// instructions an address (64-bit add with carry, LEA, LEA.HI.X) where one
// IMAD.WIDE.U32 of a 32-bit index does.
#define NTT_OPAQUE(p) asm("" : "+l"(p))
#endif

#define NTT_PRIMES 3
#define NTT_MAX_LOG 25
// More coefficients than the longest transform has (3 * 2^25 < 2^32).
#define N_MAX_COEFS 0xffffffffu
// Elements a thread loads at once in a pass (ntt_pass_block).
#define NTT_BATCH 8

struct NttPrime {
    u32 p;
    u32 p_inv;  // p^-1 mod 2^32
    u32 r2;     // 2^64 mod p (R^2, R = 2^32: into Montgomery form)
    u32 g;      // a generator of (Z/p)*
};

NTT_CONST NttPrime ntt_primes[NTT_PRIMES] = {
    {1811939329u, 0x94000001u, 0x392f6852u, 13},
    {2013265921u, 0x88000001u, 0x45dddde3u, 31},
    {2113929217u, 0x82000001u, 0x7ddf7dfdu, 5},
};

NTT_FN u32 umin32(u32 a, u32 b) { return a < b ? a : b; }

// a * b / 2^32 mod p, for a < 2p and b < p; in [0, p). With m = lo(ab) * p^-1
// (mod 2^32), ab - mp is a multiple of 2^32, so (ab - mp) / 2^32 is
// hi(ab) - hi(mp) exactly, in (-p, p) (ab < 2p^2 < 2^32 p).
NTT_FN u32 mont_mul(u32 a, u32 b, const NttPrime &q) {
    const u64 t = (u64)a * b;
    const u32 m = (u32)t * q.p_inv;
    const u32 hi = (u32)(t >> 32), mp = umulhi32(m, q.p);
    const u32 r = hi - mp + q.p;  // in (0, 2p)
    return umin32(r, r - q.p);
}

// (a + b) mod p for a, b < p < 2^31: a + b < 2^32, and where a + b < p,
// a + b - p wraps above it, so the smaller of the two is the residue.
NTT_FN u32 mod_add(u32 a, u32 b, const NttPrime &q) {
    const u32 s = a + b;
    return umin32(s, s - q.p);
}

NTT_FN u32 mod_sub(u32 a, u32 b, const NttPrime &q) {
    const u32 d = a - b + q.p;
    return umin32(d, d - q.p);
}

// A 32-bit coefficient as a residue: 2p < 2^32 < 3p for every p, so up to
// two subtractions.
NTT_FN u32 coefficient_residue(u32 x, const NttPrime &q) {
    x = umin32(x, x - q.p);
    return umin32(x, x - q.p);
}

// An operand's coefficients: coefficient i is the i-th 32-bit half of its xn
// limbs (little-endian), 0 past them. i < N < 2^32, so the count is clamped
// to 32 bits once and each test is a 32-bit compare.
struct NttCoefficients {
    const u32 *words;
    u32 count;
    NTT_METHOD NttCoefficients(const limb_t *limbs, u64 xn)
        : words((const u32 *)limbs), count(2 * xn < N_MAX_COEFS ? (u32)(2 * xn) : N_MAX_COEFS) {}
    NTT_METHOD u32 at(u32 i) const { return i < count ? LDG(&words[i]) : 0; }
};

// b^e in Montgomery form, from b in Montgomery form.
NTT_FN u32 mont_pow(u32 b, u64 e, const NttPrime &q) {
    u32 r = (u32)((((u64)1) << 32) % q.p);  // 1 in Montgomery form
    while (e) {
        if (e & 1) r = mont_mul(r, b, q);
        b = mont_mul(b, b, q);
        e >>= 1;
    }
    return r;
}

// ---------------------------------------------------------------------------
// Twiddle tables, built once per transform length (src/gpu/ntt.rs caches
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
// loads and one.
NTT_FN void ntt_radix3_at(u32 *a, const u32 *coef, const u32 *tab, const NttPrime &q, u32 log_n, u32 h, u32 j,
                          bool inverse) {
    const u32 n_len = 1u << log_n;
    const u32 *v = tab + NTT_TABLE_LEN(log_n, h) + NTT_RADIX3_LEN(log_n, h) - 2;
    const u32 v1 = LDG(&v[0]), v2 = LDG(&v[1]);
    u32 x[3];
    for (int l = 0; l < 3; l++) x[l] = coef ? coefficient_residue(coef[l], q) : a[j + l * n_len];
    const u32 u1 = ntt_powers3(tab, log_n, h, inverse).at(j, q), u2 = mont_mul(u1, u1, q);
    if (!inverse) {
        const u32 s0 = mod_add(mod_add(x[0], x[1], q), x[2], q);
        const u32 s1 = mod_add(mod_add(x[0], mont_mul(x[1], v1, q), q), mont_mul(x[2], v2, q), q);
        const u32 s2 = mod_add(mod_add(x[0], mont_mul(x[1], v2, q), q), mont_mul(x[2], v1, q), q);
        a[j] = s0;
        a[j + n_len] = mont_mul(s1, u1, q);
        a[j + 2 * n_len] = mont_mul(s2, u2, q);
    } else {
        const u32 z0 = x[0];
        const u32 z1 = mont_mul(x[1], u1, q);
        const u32 z2 = mont_mul(x[2], u2, q);
        // v^-1 = v^2.
        a[j] = mod_add(mod_add(z0, z1, q), z2, q);
        a[j + n_len] = mod_add(mod_add(z0, mont_mul(z1, v2, q), q), mont_mul(z2, v1, q), q);
        a[j + 2 * n_len] = mod_add(mod_add(z0, mont_mul(z1, v1, q), q), mont_mul(z2, v2, q), q);
    }
}

// The radix-3 step at column j of all three primes' transforms (a holds them
// 3N words apart, tab their tables `stride` words apart). Going forward it
// cuts the three coefficients j + lN from the limbs (xn of them) once for
// all three primes: a thread a prime read them three times (240 MB of limbs
// read for 80 MB at 10^7 limbs, ncu, eleventh session).
NTT_FN void ntt_radix3_column(u32 *a, const limb_t *limbs, u64 xn, const u32 *tab, u32 stride, u32 log_n, u32 h, u32 j,
                              bool inverse) {
    const u32 n_len = 1u << log_n;
    u32 coef[3];
    if (limbs) {
        const NttCoefficients coefs(limbs, xn);
        for (int l = 0; l < 3; l++) coef[l] = coefs.at(j + l * n_len);
    }
#pragma unroll
    for (u32 prime = 0; prime < NTT_PRIMES; prime++)
        ntt_radix3_at(a + prime * 3 * n_len, limbs ? coef : nullptr, tab + prime * stride, ntt_primes[prime], log_n, h,
                      j, inverse);
}

// ---------------------------------------------------------------------------
// One pass of k consecutive radix-2 stages in shared memory.
//
// The forward transform is the radix-2 decimation in frequency: stages of
// span len = N/2, N/4, ..., 1, butterfly (x, y) at i, i + len ->
// (x + y, (x - y) * w^((i mod len) * N / (2 len))). Its inverse is the
// decimation in time, spans 1, 2, ..., N/2, (x, y) -> (x + y t, x - y t),
// t = w^-((i mod len) * N / (2 len)). The host groups the log2 N stages into
// passes (at most 14 stages; src/gpu/ntt.rs, `passes`), so a transform reads
// and writes device memory two or three times instead of log2 N times.
//
// A pass of spans s * 2^(k-1) down to s (up, inverse) works on groups of
// 2^k elements i = base + j * s + r (j < 2^k, r < s, base a multiple of
// 2L = s * 2^k), closed under its stages. The twiddle of stage q (span
// s * 2^q) at j, r is root(j mod 2^q, order 2^(q+1)) * z^(2^(k-1-q)) with
// z = w^(r * N / 2L). The z factor is the same for the whole upper half it
// multiplies, which no later stage of the pass mixes with anything else, so it
// moves to the end of the pass: element j gets z^bitrev_k(j) once, and the
// stages use only the small table of roots of order up to 2^14. (The inverse moves it
// to the start, as z^-bitrev_k(j).) One power of w per element per pass,
// from two small tables.
//
// A block holds a tile of T = 2^log_t elements (the host picks log_t <= 14,
// smaller for small N so that a pass has several blocks; src/gpu/ntt.rs,
// `tile_log`): C = min(s, T / 2^k) consecutive residues r of O = T / (2^k C)
// consecutive groups, tile element t = (o * 2^k + j) * C + r. With C >= 8
// every global access covers at least one whole 32-byte sector; the last
// pass (s = 1) reads and writes whole contiguous groups.
//
// The first forward pass reads the operand's limbs (`limbs`, xn of them) and
// cuts them into 32-bit coefficients itself (zero past 2 * xn). The first
// inverse pass (b != 0) reads the pointwise product a * b * scale of the two
// forward transforms (b = a squares): no pass of its own. Otherwise it reads
// a. It always writes a.
// ---------------------------------------------------------------------------
// Butterfly group u of a pass (tile layout above: t = (o * 2^k + j) * C + r):
// the tile index of its first element. The group's elements lie 2^p apart in
// j, so its first j is u's j-part with `width` zero bits inserted at p (a
// group of 2^width elements, ntt_group); *low gets j's bits below p, the
// stage roots' offset.
NTT_FN u32 group_start(u32 u, u32 log_c, u32 k, u32 p, u32 width, u32 *low) {
    const u32 r = u & ((1u << log_c) - 1), rest = u >> log_c;
    const u32 jq = rest & ((1u << (k - width)) - 1), o = rest >> (k - width);
    *low = jq & ((1u << p) - 1);
    const u32 j0 = ((jq >> p) << (p + width)) | *low;
    return (((o << k) + j0) << log_c) | r;
}

// log2 of the most elements a thread takes through a round of stages in
// registers, for tiles of 2^log_t and blocks of `launched` threads (the
// host's choice, src/gpu/ntt.rs `pass_threads`): 8 (three stages, 12
// butterflies per shared-memory round trip) where the tile has at least one
// such group a thread, fewer in small tiles so that no thread idles.
// Correctness does not depend on it: every loop runs over the block's
// threads, whatever their number (the host model runs as many as the GPU
// launches). Measured on the H100 (ninth session, RESULTS.md): groups of 8
// took a 10^6-limb product's device time from 1.075 to 1.000 ms against the
// radix-4 rounds before; groups of 16 need more than the 40 registers three
// blocks of 512 threads leave (they spilled, and at two blocks an SM were
// no faster than 8); storing the tile swizzled to remove the last pass's bank
// conflicts (ninth and tenth sessions), and stage roots with precomputed
// Montgomery quotients, were both slower.
#define NTT_GROUP_LOG 3
NTT_FN u32 ntt_group_log(u32 log_t, u32 launched) {
    u32 threads_log = 0;
    while ((2u << threads_log) <= launched) threads_log++;
    const u32 r = log_t > threads_log ? log_t - threads_log : 1;
    return r > NTT_GROUP_LOG ? NTT_GROUP_LOG : r;
}

// Stages p .. p + R - 1 of a pass on one group of 2^R tile elements, tile
// index i0 + m d for m < 2^R (their j's are low + m 2^p, d = 2^p C), in
// registers. Stage p + s pairs m and m + 2^s (bit s of m clear), and its root
// depends on j mod 2^(p+s) = low + (m mod 2^s) 2^p alone: power low + (m
// mod 2^s) 2^p of the root of order 2^(p+s+1), entry low + (m mod 2^s) 2^p of
// level p + s of the stage roots' table (p + s <= 13, a pass has at most 14
// stages). So a stage loads its 2^s roots at constant offsets from one
// pointer, and a warp's lanes (consecutive `low` where p >= 5) load
// consecutive words: with the roots of order 2^14 in one table, indexed by
// low << (13 - p - s), they were 2^(13-p-s) words apart, and in the middle
// rounds each lane read its own sector (ncu, tenth session: 70% of a
// 2^14-element pass's global sectors were excess).
//
// WHOLE: the group's elements are consecutive (d = 1: the bottom round of a
// pass whose groups are whole, C = 1), and a lane moves them four at a time.
// With one word a load, its lanes' words were 2^R apart: a 2^R-way bank
// conflict on every load and store of that round.
//
// BOTTOM: p = 0 (the pass's bottom round), so low = 0, and each stage's
// first root (c = 0) is entry 0 of its level, r^0 = 1: 7 of the 12
// butterflies of a group of 8 multiply by 1. Those skip the root's load and
// the Montgomery product (a residue times 1 is itself; going forward the
// difference is reduced by mod_sub instead): the same residues, so the same
// transform, bit for bit.
template <int R, bool INVERSE, bool WHOLE, bool BOTTOM>
NTT_FN void ntt_group(u32 *tile, u32 i0, u32 d, u32 low, u32 p, const u32 *roots, const NttPrime &q) {
    constexpr int G = 1 << R;
    static_assert(!WHOLE || G >= 4, "a whole group is moved in fours");
    static_assert(!WHOLE || BOTTOM, "a whole group is in the bottom round");
    u32 x[G];
    if (WHOLE) {
#pragma unroll
        for (int m = 0; m < G; m += 4) {
            const uint4 v = *(const uint4 *)&tile[i0 + m];
            x[m] = v.x, x[m + 1] = v.y, x[m + 2] = v.z, x[m + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int m = 0; m < G; m++) x[m] = tile[i0 + m * d];
    }
#pragma unroll
    for (int i = 0; i < R; i++) {
        const int s = INVERSE ? i : R - 1 - i;  // decimation in frequency: top stage first
        // One 32-bit index a root (a 64-bit pointer per stage and 64-bit
        // offsets from it made the round spill at 40 registers).
        const u32 level = (1u << (p + s)) - 1 + low;
#pragma unroll
        for (int c = 0; c < (1 << s); c++) {
            const bool one = BOTTOM && c == 0;  // the root is 1 (BOTTOM above)
            const u32 w = one ? 0 : LDG(&roots[level + (c << p)]);
#pragma unroll
            for (int m = c; m < G; m += 2 << s) {
                const u32 x0 = x[m], x1 = x[m + (1 << s)];
                if (INVERSE) {
                    const u32 t = one ? x1 : mont_mul(x1, w, q);
                    x[m] = mod_add(x0, t, q);
                    x[m + (1 << s)] = mod_sub(x0, t, q);
                } else {
                    x[m] = mod_add(x0, x1, q);
                    // x0 - x1 + p < 2p: mont_mul takes it unreduced.
                    x[m + (1 << s)] = one ? mod_sub(x0, x1, q) : mont_mul(x0 - x1 + q.p, w, q);
                }
            }
        }
    }
    if (WHOLE) {
#pragma unroll
        for (int m = 0; m < G; m += 4) *(uint4 *)&tile[i0 + m] = uint4{x[m], x[m + 1], x[m + 2], x[m + 3]};
    } else {
#pragma unroll
        for (int m = 0; m < G; m++) tile[i0 + m * d] = x[m];
    }
}

// One round of a pass: stages p .. p + R - 1 on every group of the tile.
// (WHOLE: p = 0 and C = 1; BOTTOM: p = 0; see ntt_group.)
template <int R, bool INVERSE, bool WHOLE, bool BOTTOM>
NTT_FN void ntt_round(u32 *tile, u32 T, u32 log_c, u32 k, u32 p, const u32 *roots, const NttPrime &q, u32 thread,
                      u32 threads) {
    const u32 d = (1u << p) << log_c;
    for (u32 u = thread; u < (T >> R); u += threads) {
        u32 low;
        const u32 i0 = group_start(u, log_c, k, p, R, &low);
        ntt_group<R, INVERSE, WHOLE, BOTTOM>(tile, i0, d, low, p, roots, q);
    }
}

// What a pass's load phase reads (ntt_pass_tile): the transform itself, the
// operand's limbs (the first forward pass cuts them into coefficients) or the
// pointwise product of two forward transforms (the first inverse pass).
#define NTT_LOAD_PLAIN 0
#define NTT_LOAD_LIMBS 1
#define NTT_LOAD_PRODUCT 2

// One block's share of a pass over one prime's transform `a` (N words);
// `tab` is that prime's table (`offset`: where the transform starts in a and
// b). Every loop below runs t or u from `thread` in steps of `threads` (a
// power of two), between block barriers; the host model runs each thread's
// share in turn (EACH_THREAD).
// Indices are 32-bit: N <= 2^26 (NTT_MAX_LOG), and q is a copy, so its
// words stay in registers. LOAD, INVERSE and TWIST (log_s != 0: the pass
// multiplies by the twist, at the store going forward, at the load going
// back) are template parameters so that each pass's code has no branch on
// them per element: with them as run-time values the load and store phases
// took 84 of a 10^6-limb product's 238 instructions an element in a plain
// pass (ncu source counters, H100, tenth session).
template <int LOAD, bool INVERSE, bool TWIST>
NTT_FN void ntt_pass_tile(u32 *a, u32 offset, const limb_t *limbs, u64 xn, const u32 *b, const u32 *tab,
                          const NttPrime &q, u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u64 block, u32 thread_id, u32 threads,
                          u32 group_log, u32 *tile) {
    const u32 T = 1u << log_t;
    const u32 log_c = log_s < log_t - k ? log_s : log_t - k;
    const u32 C = 1u << log_c, G = 1u << k;
    const u32 log_o = log_t - k - log_c;
    const u32 chunks = 1u << (log_s - log_c);  // blocks per group of groups
    const u32 outer0 = (u32)(block >> (log_s - log_c)) << log_o;
    const u32 r0 = ((u32)block & (chunks - 1)) << log_c;
    const u32 log_2l = k + log_s;
    // z^bitrev(j) = w^(r * bitrev(j) * N / 2L): exponent shift.
    const u32 twist_shift = log_n - log_2l;
    // 1 / (radix N), applied with the pointwise product.
    const u32 scale = LOAD == NTT_LOAD_PRODUCT ? LDG(&tab[NTT_TABLE_LEN(log_n, h) - 1]) : 0;

    // Tile element t = (o * 2^k + j) * C + r: its place in the transform,
    // o, j and r moved to their bit fields there (before the block's
    // offsets). That is a function of t's bits one by one, so for t = x + y
    // with x and y sharing no bit it is the sum of x's and y's places. The
    // batches below take t = thread + s, thread < threads <= s's lowest bit
    // (powers of two), and compute the s part with uniform (per-block)
    // values: an add an element instead of the fields' shifts and masks.
    auto place = [&](u32 t) -> u32 {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1), o = t >> (log_c + k);
        return (o << log_2l) + (j << log_s) + r;
    };
    // The block's offsets in its transform (disjoint from every place).
    const u32 local0 = (outer0 << log_2l) + r0;
    // The twist's power at tile element t, z^bitrev(j) = w^(r * bitrev_k(j) *
    // N / 2L) (1 where the exponent is 0: no test for it).
    const NttPowers powers = ntt_powers(tab, log_n, h, INVERSE);
    auto twist = [&](u32 t) -> u32 {
        const u32 r = t & (C - 1), j = (t >> log_c) & (G - 1);
        return powers.at(((r0 + r) * (brev32(j) >> (32 - k))) << twist_shift, q);
    };
    // An element from device memory, at `place` (its load issued in a batch
    // with others) ...
    const NttCoefficients coefs(limbs, xn);
    auto load = [&](u32 at) -> u32 {
        const u32 g = offset + local0 + at;
        if (LOAD == NTT_LOAD_LIMBS) {
            return coefs.at(local0 + at);
        } else if (LOAD == NTT_LOAD_PRODUCT) {
            return mont_mul(a[g], b[g], q);  // b may be a: squaring
        } else {
            return a[g];
        }
    };
    // ... what the pass does to it before the stages, as tile element t ...
    auto enter = [&](u32 t, u32 x) {
        if (LOAD == NTT_LOAD_LIMBS) x = coefficient_residue(x, q);
        if (LOAD == NTT_LOAD_PRODUCT) x = mont_mul(x, scale, q);
        if (INVERSE && TWIST) x = mont_mul(x, twist(t), q);
        tile[t] = x;
    };
    // ... and back to device memory after them.
    auto leave = [&](u32 t, u32 at) {
        u32 x = tile[t];
        if (!INVERSE && TWIST) x = mont_mul(x, twist(t), q);
        a[offset + local0 + at] = x;
    };
    // NTT_BATCH elements a thread at a time, every load of the batch issued
    // before the first is used: with one element per loop iteration the
    // passes waited on device-memory latency (22 ms for a 10^7-limb product
    // on the H200, most of it in these two loops). Tiles and block sizes are
    // powers of two, so a tile is either whole batches for every thread or
    // (small transforms) less than one: no bounds test in the batches.
    // So each thread's elements, for both phases: batch(t0, at0) for each of
    // its batches (element i at tile index t0 + i * threads, place at0 +
    // place(i * threads)), or one(t, place(t)) for each element.
    const bool batches = T >= NTT_BATCH * threads;
    auto each_element = [&](auto &&batch, auto &&one) {
        EACH_THREAD(thread) {
            const u32 mine = place(thread);
            if (batches) {
                for (u32 s0 = 0; s0 < T; s0 += NTT_BATCH * threads) batch(thread + s0, mine + place(s0));
            } else {
                for (u32 t = thread; t < T; t += threads) one(t, place(t));
            }
        }
    };
    each_element(
        [&](u32 t0, u32 at0) {
            u32 v[NTT_BATCH];
#pragma unroll
            for (int i = 0; i < NTT_BATCH; i++) v[i] = load(at0 + place(i * threads));
#pragma unroll
            for (int i = 0; i < NTT_BATCH; i++) enter(t0 + i * threads, v[i]);
        },
        [&](u32 t, u32 at) { enter(t, load(at)); });
    BLOCK_SYNC();

    // The stages in rounds of up to 2^group_log (ntt_group_log) elements a
    // group in registers: one shared-memory round trip and one barrier a
    // round (ntt_round). Round n takes stages from p = n * group_log up; a
    // shorter one, if any, is the top one, so that the bottom round (p = 0,
    // the one ntt_group moves four words at a time) is a whole one. Forward
    // rounds go from the top down, inverse ones up.
    static_assert(NTT_GROUP_LOG <= 3, "the switch below has rounds of 1 to 3 stages");
    const u32 *roots = tab + (INVERSE ? NTT_ROOTS : 0);
    NTT_OPAQUE(roots);
    const u32 rounds = (k + group_log - 1) / group_log;
    for (u32 i = 0; i < rounds; i++) {
        const u32 p = (INVERSE ? i : rounds - 1 - i) * group_log;
        const u32 r = k - p < group_log ? k - p : group_log;
        const bool bottom = p == 0;
        const bool whole = bottom && log_c == 0 && r >= 2;
        EACH_THREAD(thread) switch (r + 3 * bottom + 3 * whole) {
        case 1: ntt_round<1, INVERSE, false, false>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 2: ntt_round<2, INVERSE, false, false>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 3: ntt_round<3, INVERSE, false, false>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 4: ntt_round<1, INVERSE, false, true>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 5: ntt_round<2, INVERSE, false, true>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 6: ntt_round<3, INVERSE, false, true>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 8: ntt_round<2, INVERSE, true, true>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        case 9: ntt_round<3, INVERSE, true, true>(tile, T, log_c, k, p, roots, q, thread, threads); break;
        }
        BLOCK_SYNC();
    }

    each_element(
        [&](u32 t0, u32 at0) {
#pragma unroll
            for (int i = 0; i < NTT_BATCH; i++) leave(t0 + i * threads, at0 + place(i * threads));
        },
        leave);
}

// A pass (ntt_pass_tile) with its template parameters from the run-time
// ones. A forward pass reads limbs when it is given them (the first pass) and
// never a pointwise product; an inverse pass reads the product of a and b
// when it is given b (the first pass) and never limbs.
NTT_FN void ntt_pass_block(u32 *a, u32 offset, const limb_t *limbs, u64 xn, const u32 *b, const u32 *tab, const NttPrime q,
                           u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, bool inverse,
                           u64 block, u32 thread, u32 threads, u32 group_log, u32 *tile) {
    const bool twist = log_s != 0;
    const int mode = inverse ? (b ? 6 : 4) : (limbs ? 2 : 0);
#define NTT_PASS_CASE(M, LOAD, INVERSE)                                                                          \
    case M: ntt_pass_tile<LOAD, INVERSE, false>(a, offset, limbs, xn, b, tab, q, log_n, h, log_t, log_s, k, block,\
                                                thread, threads, group_log, tile); break;                        \
    case M + 1: ntt_pass_tile<LOAD, INVERSE, true>(a, offset, limbs, xn, b, tab, q, log_n, h, log_t, log_s, k, block,\
                                                   thread, threads, group_log, tile); break;
    switch (mode + twist) {
        NTT_PASS_CASE(0, NTT_LOAD_PLAIN, false)
        NTT_PASS_CASE(2, NTT_LOAD_LIMBS, false)
        NTT_PASS_CASE(4, NTT_LOAD_PLAIN, true)
        NTT_PASS_CASE(6, NTT_LOAD_PRODUCT, true)
    }
#undef NTT_PASS_CASE
}

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

#ifndef CUGMP_HOST_MODEL
extern "C" __global__ void cugmp_ntt_tables(u32 *tab, u32 log_n, u32 h, u32 radix) {
    const u64 len = NTT_TABLE_STRIDE(log_n, h, radix);
    GRID_STRIDE(i, NTT_PRIMES * len) {
        tab[i] = ntt_table_entry(i % len, log_n, h, radix, ntt_primes[i / len]);
    }
}

// The radix-3 step (ntt_radix3_column) of transforms of length 3 * 2^log_n,
// all three primes, one thread a column j < 2^log_n.
extern "C" __global__ void cugmp_ntt_radix3(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *__restrict__ tab,
                                             u32 log_n, u32 h, u32 inverse) {
    const u32 stride = (u32)NTT_TABLE_STRIDE(log_n, h, 3);
    for (u32 j = blockIdx.x * blockDim.x + threadIdx.x; j < (1u << log_n); j += gridDim.x * blockDim.x)
        ntt_radix3_column(a, limbs, xn, tab, stride, log_n, h, j, inverse != 0);
}

// Shared memory: 4 * 2^log_t bytes (64 KiB at the largest tile, 2^14). The
// grid's y index is prime * radix + block: a holds each prime's radix
// transforms of length N one after another, and tab the three tables,
// NTT_TABLE_STRIDE apart.
extern "C" __global__ void __launch_bounds__(512, 3)
    cugmp_ntt_pass(u32 *a, const limb_t *__restrict__ limbs, u64 xn, const u32 *b, const u32 *__restrict__ tab,
                   u32 log_n, u32 h, u32 log_t, u32 log_s, u32 k, u32 inverse, u32 radix) {
    extern __shared__ u32 tile[];
    const u32 prime = blockIdx.y / radix;
    // 32 bits: blockIdx.y < 3 * 3 and N <= 2^26 (a 64-bit offset made every
    // element's address a 64-bit sum of three terms).
    const u32 offset = blockIdx.y << log_n;
    ntt_pass_block(a, offset, limbs, xn, b, tab + prime * NTT_TABLE_STRIDE(log_n, h, radix),
                   ntt_primes[prime], log_n, h, log_t, log_s, k, inverse != 0, blockIdx.x, threadIdx.x, blockDim.x,
                   ntt_group_log(log_t, blockDim.x), tile);
}

// ntt_combine_at over limbs 0 .. n - 1.
extern "C" __global__ void cugmp_ntt_combine(limb_t *__restrict__ t, limb_t *__restrict__ c, const u32 *__restrict__ coef,
                                              u64 n_len, u64 n, u32 wrap) {
    GRID_STRIDE(i, n) ntt_combine_at(t, c, coef, n_len, n, wrap != 0, i);
}
#endif
