// Host model of the generalized-Fermat-prime product (cuda/gfp.cu compiled
// as plain C++ with CUGMP_HOST_MODEL): every kernel's work for every index,
// in launch order, so that the kernels' arithmetic and indexing are tested
// on machines without a GPU (src/gpu/gfp/model.rs compares the output with
// GMP).
//
// stdin, whitespace-separated: log_n log_t h; the forward stages (a count,
// then each stage's log_s, 1 for the radix-2 stage); the 2^h and
// 2^(log_t - h) elements of the two root factor tables (eight signed
// digits each, decimal); un and u's limbs, vn and v's limbs (vn = 0: square
// u), limbs in hex. stdout, in hex: the un + vn limbs of the product.
// Exit status 3: the combine step's exactness check failed.
#define CUGMP_HOST_MODEL 1
#include "../cuda/gfp.cu"

#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<u64> read_limbs() {
    u64 n;
    if (scanf("%lu", &n) != 1) exit(2);
    std::vector<u64> x(n);
    for (u64 i = 0; i < n; i++)
        if (scanf("%lx", &x[i]) != 1) exit(2);
    return x;
}

static std::vector<Gfp> read_elements(u64 n) {
    std::vector<Gfp> x(n);
    for (u64 i = 0; i < n; i++)
        for (int k = 0; k < GFP_K; k++)
            if (scanf("%lld", &x[i].d[k]) != 1) exit(2);
    return x;
}

static u32 log_n, log_t;
static std::vector<u32> plan;
static std::vector<i64> table;

static void stages(std::vector<i64> &x, bool inverse) {
    const u64 n = 1ull << log_n;
    for (size_t s = 0; s < plan.size(); s++) {
        const u32 log_s = plan[inverse ? plan.size() - 1 - s : s];
        if (log_s == 1)
            for (u64 id = 0; id < n / 2; id++) gfp_radix2_at(x.data(), n, id);
        else
            for (u64 id = 0; id < n / 4; id++) gfp_radix4_at(x.data(), table.data(), n, log_s, log_t, inverse, id);
    }
}

static std::vector<i64> forward(const std::vector<u64> &limbs) {
    const u64 n = 1ull << log_n;
    std::vector<i64> x(GFP_K * n);
    for (u64 i = 0; i < n; i++) gfp_split_at(x.data(), limbs.data(), limbs.size(), n, i);
    stages(x, false);
    return x;
}

int main() {
    u32 h, count;
    if (scanf("%u %u %u %u", &log_n, &log_t, &h, &count) != 4) return 2;
    plan.resize(count);
    for (u32 i = 0; i < count; i++)
        if (scanf("%u", &plan[i]) != 1) return 2;
    std::vector<Gfp> a = read_elements(1ull << h), b = read_elements(1ull << (log_t - h));
    const u64 nt = 1ull << log_t, n = 1ull << log_n;
    table.resize(GFP_K * nt);
    for (u64 e = 0; e < nt; e++) gfp_roots_at(table.data(), a.data(), b.data(), h, nt, e);

    std::vector<u64> u = read_limbs(), v = read_limbs();
    const bool square = v.empty();
    std::vector<i64> x = forward(u);
    std::vector<i64> y = square ? x : forward(v);
    for (u64 i = 0; i < n; i++) gfp_pointwise_at(x.data(), y.data(), n, i);
    stages(x, true);

    const u64 limbs = u.size() + (square ? u.size() : v.size());
    std::vector<u64> l0(limbs), l1(limbs), l2(limbs);
    bool inexact = false;
    for (u64 i = 0; i < n; i++) inexact |= gfp_combine_at(l0.data(), l1.data(), l2.data(), x.data(), n, log_n, limbs, i);
    // The lanes' sum with a plain carry loop (the GPU uses its add kernel).
    unsigned carry = 0;
    for (u64 i = 0; i < limbs; i++) {
        unsigned __int128 s = (unsigned __int128)l0[i] + l1[i] + l2[i] + carry;
        l0[i] = (u64)s;
        carry = (unsigned)(s >> 64);
    }
    for (u64 i = 0; i < limbs; i++) printf("%lx\n", l0[i]);
    if (inexact) return 3;
    return carry ? 4 : 0;  // the product fits in un + vn limbs
}
