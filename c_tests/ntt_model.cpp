// Host model of the GPU product (cuda/ntt.cu compiled as plain C++ with
// CUGMP_HOST_MODEL): the same tables, passes, turn (the pointwise product
// between the last forward pass and the first inverse one) and CRT, run
// block by block, each block's threads in turn between its barriers (as many
// as the GPU launches), so the kernels' arithmetic and index logic are tested
// on machines without a GPU (src/gpu/ntt/model.rs, test `host_model_matches_gmp`,
// compares the output with GMP).
//
// stdin, whitespace-separated: log_n h log_t threads radix wide (the transform
// length is radix * 2^log_n, radix 1, 3 or 5; threads: the block size the GPU
// launches, which sizes the passes' groups; wide 1: the wide sets, five
// primes with a limb a coefficient), the number of forward passes and each
// pass's (log_s, k) in forward order (src/gpu/ntt/plan.rs, `passes`), then n
// and wrap, then un and u's limbs, then vn and v's limbs (vn = 0: square
// u), limbs in hex. stdout, in hex: the n = un + vn limbs of the product
// (wrap 0), or with wrap 1 the n limbs of the product mod B^n - 1 from the
// cyclic convolution of length 2n (the transform's length; n in the wide
// sets). A product of up
// to NTT_SMALL_THREADS * NTT_SMALL_RUN limbs is also folded as the small
// products' one block does (cugmp_ntt_combine_small), which must agree
// (exit 5), a wide product on 2^k points by the runs of the kernel that
// folds it with its carries (exit 9), and the carry functions' composition is checked for every pair
// (exit 6), and the radix steps' and the CRT's constants against their
// definitions (exit 8). Transforms of length 3N are folded both by the kernel that takes
// the inverse's radix-3 step with the fold and by the two apart, which must
// agree (exit 7). Transforms of length 5N (the second set of primes) are
// folded by their one kernel (cugmp_ntt_combine5) alone: the plain fold and
// the small products' one block take the first set's CRT.
#define CUGMP_HOST_MODEL 1
#include "../cuda/ntt.cu"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<u64> read_limbs(u64 n) {
    std::vector<u64> x(n);
    for (u64 i = 0; i < n; i++)
        if (scanf("%lx", &x[i]) != 1) exit(2);
    return x;
}

struct Plan {
    u32 log_n, h, log_t, threads, radix, wide;
    std::vector<std::pair<u32, u32>> passes;  // (log_s, k), forward order
};

static u64 table_stride(const Plan &plan) { return NTT_TABLE_STRIDE(plan.log_n, plan.h, plan.radix); }
static u32 primes(const Plan &plan) { return plan.wide ? NTT_WIDE_PRIMES : NTT_PRIMES; }

// One pass (kind: NTT_FORWARD, NTT_INVERSE, NTT_TURN) over all primes and
// all radix blocks, every block in turn: cugmp_ntt_pass, or where the wide
// sets' pass reads limbs, cugmp_ntt_pass_wide.
static void run_pass(const Plan &plan, std::vector<u32> &a, const limb_t *limbs, u64 xn, const u32 *b,
                     const std::vector<u32> &tab, u32 log_s, u32 k, u32 kind) {
    const u64 n_len = 1ull << plan.log_n;
    // The shared memory the device gives the pass (src/gpu/ntt/plan.rs,
    // tile_bytes), then words that must stay as they are.
    const u32 words = log_s == 0 ? NTT_TILE_WORDS(plan.log_t) : 1u << plan.log_t, guard = 64;
    std::vector<u32> tile(words + guard, 0xdeadbeefu);
    auto pass = plan.wide && limbs ? ntt_pass_block<NTT_LOAD_LIMBS64> : ntt_pass_block<NTT_LOAD_LIMBS>;
    for (u32 y = 0; y < primes(plan) * plan.radix; y++)
        for (u64 block = 0; block < (n_len >> plan.log_t); block++)
            pass(a.data(), (u32)(y * n_len), limbs, xn, b, tab.data() + (y / plan.radix) * table_stride(plan),
                 ntt_prime(plan.radix, y / plan.radix, plan.wide), plan.log_n, plan.h, plan.log_t, log_s, k, kind, block, 0,
                 plan.threads, ntt_group_log(plan.log_t, plan.threads), tile.data());
    for (u32 i = words; i < words + guard; i++)
        if (tile[i] != 0xdeadbeefu) {
            fprintf(stderr, "a pass wrote past its tile's %u words\n", words);
            exit(1);
        }
}

static void run_radix(const Plan &plan, std::vector<u32> &a, const limb_t *limbs, u64 xn, const std::vector<u32> &tab,
                      bool inverse) {
    const u32 stride = (u32)table_stride(plan);
    auto column = plan.radix == 5 ? (plan.wide ? ntt_radix_column<5, true> : ntt_radix_column<5>)
                                  : (plan.wide ? ntt_radix_column<3, true> : ntt_radix_column<3>);
    for (u32 j = 0; j < (1u << plan.log_n); j++) column(a.data(), limbs, xn, tab.data(), stride, plan.log_n, plan.h, j, inverse);
}

// x's forward transform, all of it (`finished`) or all but its last pass,
// which the turn takes (src/gpu/ntt/transform.rs, `forward_unfinished_at`).
// The limbs go to the radix step when there is one, else to the first pass
// (none run when the unfinished transform has no pass: the turn cuts them).
static std::vector<u32> forward(const Plan &plan, const std::vector<u64> &x, const std::vector<u32> &tab, bool finished) {
    std::vector<u32> a((primes(plan) * plan.radix) << plan.log_n);
    const bool step = plan.radix != 1;
    if (step) run_radix(plan, a, x.data(), x.size(), tab, false);
    for (size_t i = 0; i < plan.passes.size() - !finished; i++) {
        const bool cut = i == 0 && !step;
        run_pass(plan, a, cut ? x.data() : nullptr, cut ? x.size() : 0, nullptr, tab, plan.passes[i].first,
                 plan.passes[i].second, NTT_FORWARD);
    }
    return a;
}

// The small products' one-block fold (cugmp_ntt_combine_small), its
// threads in turn between its barriers, with the same doubling steps of its
// scan: the same limbs as t + c must come out.
static bool small_fold_agrees(const std::vector<u32> &a, u64 n_len, u64 n, const std::vector<u64> &want) {
    const u64 threads = NTT_SMALL_THREADS, run = (n + threads - 1) / threads;
    std::vector<u64> first(threads), top(threads), lo(threads * NTT_SMALL_RUN), hi(threads * NTT_SMALL_RUN), r(n, ~0ull);
    std::vector<u32> len(threads), f(threads);
    for (u64 k = 0; k < threads; k++) {
        first[k] = std::min(k * run, n);
        len[k] = (u32)(std::min(first[k] + run, n) - first[k]);
        top[k] = ntt_small_values(a.data(), n_len, first[k], len[k], &lo[k * NTT_SMALL_RUN], &hi[k * NTT_SMALL_RUN]);
    }
    auto below = [&](u64 k) { return k ? top[k - 1] : 0; };
    for (u64 k = 0; k < threads; k++) {
        const u64 *l = &lo[k * NTT_SMALL_RUN], *h = &hi[k * NTT_SMALL_RUN];
        f[k] = ntt_small_carry(l, h, len[k], below(k), 0, nullptr, 0) | ntt_small_carry(l, h, len[k], below(k), 1, nullptr, 0) << 1;
    }
    for (u64 d = 1; d < threads; d <<= 1) {
        const std::vector<u32> before = f;
        for (u64 k = 0; k < threads; k++) f[k] = ntt_carry_compose(before[k], k >= d ? before[k - d] : NTT_CARRY_SAME);
    }
    for (u64 k = 0; k < threads; k++)
        ntt_small_carry(&lo[k * NTT_SMALL_RUN], &hi[k * NTT_SMALL_RUN], len[k], below(k), k ? f[k - 1] & 1 : 0, r.data(), first[k]);
    return r == want;
}

// A whole product on the wide sets' transforms of 2^k points as
// cugmp_ntt_combine_wide_carry makes it (src/gpu/ntt/transform.rs takes it
// from 2^11 points): runs of NTT_WIDE_RUN coefficients, what each passes up
// into the next one's first two limbs, then the carries; and at every tile
// of 2048 limbs (NTT_CARRY_TILE) the two pairs below it must give what
// passes into the tile and the limb below it, as the runs did. The same
// limbs as t + c must come out.
static bool wide_runs_agree(const std::vector<u32> &a, u32 log_n, u64 n, const std::vector<u64> &want) {
    std::vector<u64> r(n);
    u64 from[2] = {0, 0}, last = 0;
    unsigned carry = 0;
    for (u32 e0 = 0; e0 < n; e0 += NTT_WIDE_RUN) {
        u64 t[NTT_WIDE_RUN], c[NTT_WIDE_RUN], up[2];
        ntt_wide_run(a.data(), log_n, e0, t, c, up);
        if (e0 && e0 % 2048 == 0) {
            u64 t0, t1, into0, into1, u0, u1, c2, c3;
            ntt_wide_pair_at(a.data(), log_n, e0 - 2, &t0, &t1, &into0, &into1);
            ntt_wide_pair_at(a.data(), log_n, e0 - 4, &u0, &u1, &c2, &c3);
            if (into0 != from[0] || into1 != from[1] || t1 + c3 != last) return false;
        }
        c[0] = from[0], c[1] = from[1];
        for (u32 i = 0; i < NTT_WIDE_RUN; i++) {
            const u64 s = t[i] + c[i], x = s + carry;
            carry = (s < t[i]) + (x < s);
            last = s;
            if (e0 + i < n) r[e0 + i] = x;
        }
        from[0] = up[0], from[1] = up[1];
    }
    return r == want;
}

// ntt_carry_compose against composing the functions themselves, for every
// pair of carry functions a run can have (carry out 0, the carry in, 1).
static bool carry_compose_agrees() {
    const u32 functions[3] = {0, NTT_CARRY_SAME, 3};
    auto apply = [](u32 f, u32 x) { return (f >> x) & 1; };
    for (u32 later : functions)
        for (u32 earlier : functions)
            for (u32 x = 0; x < 2; x++)
                if (apply(ntt_carry_compose(later, earlier), x) != apply(later, apply(earlier, x))) return false;
    return true;
}

// The R-point transforms' constants (ntt_dft3, ntt_dft5) against
// ntt_dft_constant, their quotients against shoup_mul's definition, and the
// radix steps' subtractions (ntt_subtractions) against theirs.
static bool dft_constants_agree() {
    for (bool wide : {false, true})
        for (u32 radix : {3u, 5u})
            for (u32 i = 0; i < (wide ? NTT_WIDE_PRIMES : NTT_PRIMES); i++) {
                const NttPrime q = ntt_prime(radix, i, wide);
                const NttDft &d = wide ? (radix == 3 ? ntt_dft_of<3, true>(i) : ntt_dft_of<5, true>(i))
                                       : (radix == 3 ? ntt_dft3[i] : ntt_dft5[i]);
                if ((u64)ntt_subtractions(radix, i, wide) != 0xffffffffull / q.p) return false;
                // The passes that read limbs take the set for radix 3's
                // subtraction count from ntt_subtractions(1, 0, wide).
                if (radix == 3 && ntt_subtractions(1, 0, wide) != ntt_subtractions(3, i, wide)) return false;
                for (int c = 0; c < ntt_dft_count(radix); c++) {
                    const u32 k = ntt_dft_constant(radix, c, q);
                    if (d.k[c] != k || d.kq[c] != shoup_quotient(k, q.p)) return false;
                }
            }
    return true;
}

// The CRT's constants (ntt_crts) against their definitions, their
// quotients against shoup_mul's.
static bool crt_constants_agree() {
    for (u32 set = 0; set < 2; set++) {
        const NttCrt &k = ntt_crts[set];
        const u64 p0 = ntt_prime(set ? 5 : 1, 0).p, p1 = ntt_prime(set ? 5 : 1, 1).p, p2 = ntt_prime(set ? 5 : 1, 2).p;
        if ((u64)k.c1 * p0 % p1 != 1 || k.c1q != shoup_quotient(k.c1, (u32)p1)) return false;
        if (k.c2 != p0 % p2 || k.c2q != shoup_quotient(k.c2, (u32)p2)) return false;
        if ((u64)k.c3 * (p0 * p1 % p2) % p2 != 1 || k.c3q != shoup_quotient(k.c3, (u32)p2)) return false;
        if (k.p01 != p0 * p1) return false;
    }
    // The wide sets': c_ji = p_j^-1 mod p_i (j < i), primes increasing.
    for (u32 set = 0; set < 2; set++) {
        const NttCrtWide &k = ntt_crts_wide[set];
        for (u32 i = 0; i < NTT_WIDE_PRIMES; i++) {
            const u64 pi = ntt_prime(set ? 5 : 1, i, true).p;
            if (i && ntt_prime(set ? 5 : 1, i - 1, true).p >= pi) return false;
            for (u32 j = 0; j < i; j++) {
                const u64 pj = ntt_prime(set ? 5 : 1, j, true).p;
                const u32 at = i * (i - 1) / 2 + j;
                if (k.c[at] * pj % pi != 1 || k.c[at] >= pi || k.cq[at] != shoup_quotient(k.c[at], (u32)pi)) return false;
            }
        }
    }
    return true;
}

int main() {
    if (!carry_compose_agrees()) return 6;
    if (!dft_constants_agree() || !crt_constants_agree()) return 8;
    Plan plan;
    u32 count;
    if (scanf("%u %u %u %u %u %u %u", &plan.log_n, &plan.h, &plan.log_t, &plan.threads, &plan.radix, &plan.wide, &count) != 7)
        return 2;
    for (u32 i = 0; i < count; i++) {
        u32 log_s, k;
        if (scanf("%u %u", &log_s, &k) != 2) return 2;
        plan.passes.push_back({log_s, k});
    }
    u64 n, wrap;
    if (scanf("%lu %lu", &n, &wrap) != 2) return 2;
    u64 un, vn;
    if (scanf("%lu", &un) != 1) return 2;
    std::vector<u64> u = read_limbs(un);
    if (scanf("%lu", &vn) != 1) return 2;
    std::vector<u64> v = read_limbs(vn);
    const bool square = vn == 0;
    if (square) vn = un;

    const u64 len = table_stride(plan);
    std::vector<u32> tab(primes(plan) * len);
    for (u32 q = 0; q < primes(plan); q++)
        for (u64 i = 0; i < len; i++)
            tab[q * len + i] = ntt_table_entry(i, plan.log_n, plan.h, plan.radix, ntt_prime(plan.radix, q, plan.wide));

    // As the host does it: u's transform finished, v's but its last pass
    // (or u's, for a square), then the turn (that last pass, the pointwise
    // product, the inverse's first pass) and the inverse's other passes in
    // reverse order, in v's transform.
    const std::vector<u32> b = square ? std::vector<u32>() : forward(plan, u, tab, true);
    const std::vector<u64> &x = square ? u : v;
    std::vector<u32> a = forward(plan, x, tab, false);
    const bool cut = plan.radix == 1 && plan.passes.size() == 1;
    run_pass(plan, a, cut ? x.data() : nullptr, cut ? x.size() : 0, square ? a.data() : b.data(), tab,
             plan.passes.back().first, plan.passes.back().second, NTT_TURN);
    for (size_t i = plan.passes.size() - 1; i-- > 0;)
        run_pass(plan, a, nullptr, 0, nullptr, tab, plan.passes[i].first, plan.passes[i].second, NTT_INVERSE);
    // Limbs: the combine kernel's fold into t and c, then t + c with a plain
    // carry loop (the GPU uses its add kernel), and with wrap the carry out
    // added back at the bottom. A transform of length 3N ends in the kernel
    // that also takes the inverse's radix-3 step (cugmp_ntt_combine3, a
    // column pair at a time); the radix-3 step on its own and then the plain
    // fold (what the small products' one block reads) must give the same t
    // and c (exit 7).
    std::vector<u64> t(n), c(n);
    const u64 n_len = (u64)plan.radix << plan.log_n;
    if (plan.wide) {
        // The wide sets' combine (cugmp_ntt_combine_wide, 3_wide, 5_wide).
        auto combine = plan.radix == 5 ? ntt_combine_wide_at<5> : plan.radix == 3 ? ntt_combine_wide_at<3> : ntt_combine_wide_at<1>;
        for (u32 u = 0; u < (1u << (plan.log_n - 1)); u++)
            combine(t.data(), c.data(), a.data(), tab.data(), (u32)len, plan.log_n, plan.h, n, wrap != 0, u);
    } else if (plan.radix == 5) {
        for (u32 u = 0; u < (1u << (plan.log_n - 1)); u++)
            ntt_combine_radix_at<5>(t.data(), c.data(), a.data(), tab.data(), (u32)len, plan.log_n, plan.h, n, wrap != 0, u);
    } else if (plan.radix == 3) {
        for (u32 u = 0; u < (1u << (plan.log_n - 1)); u++)
            ntt_combine_radix_at<3>(t.data(), c.data(), a.data(), tab.data(), (u32)len, plan.log_n, plan.h, n, wrap != 0, u);
        run_radix(plan, a, nullptr, 0, tab, true);
        std::vector<u64> t2(n), c2(n);
        for (u64 i = 0; i < n; i++) ntt_combine_at(t2.data(), c2.data(), a.data(), n_len, n, wrap != 0, i);
        if (t2 != t || c2 != c) return 7;
    } else {
        for (u64 i = 0; i < n; i++) ntt_combine_at(t.data(), c.data(), a.data(), n_len, n, wrap != 0, i);
    }
    unsigned carry = 0;
    for (u64 i = 0; i < n; i++) {
        const u64 s = t[i] + c[i];
        const u64 r = s + carry;
        carry = (s < t[i]) + (r < s);
        t[i] = r;
    }
    if (wrap) {
        for (u64 i = 0; i < n && carry; i++) carry = ++t[i] == 0;
        if (carry) return 4;  // t + c < 2 B^n: one end-around carry ends below B^n
    }
    if (!wrap && !plan.wide && plan.radix != 5 && n <= NTT_SMALL_THREADS * NTT_SMALL_RUN && !small_fold_agrees(a, n_len, n, t)) return 5;
    if (!wrap && plan.wide && plan.radix == 1 && plan.log_n >= 11 && !wide_runs_agree(a, plan.log_n, n, t)) return 9;
    for (u64 i = 0; i < n; i++) printf("%lx\n", t[i]);
    return carry ? 3 : 0;  // the product fits in un + vn limbs
}
