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

// The exponent e (n limbs, the top one nonzero) in windows of POWM_WINDOW
// bits from the top: first(digit) for the first window, then next(digit)
// for each after it.
template <typename First, typename Next>
__device__ __forceinline__ void exponent_windows(const u64 *e, u64 n, First first, Next next) {
    u64 bits = 64 * n - __clzll(e[n - 1]);
    u64 top = (bits + POWM_WINDOW - 1) / POWM_WINDOW * POWM_WINDOW;
    for (u64 at = top; at > 0; at -= POWM_WINDOW) {
        u64 bit = at - POWM_WINDOW;  // the window's lowest bit
        u64 w = e[bit / 64] >> (bit % 64);
        if (bit % 64 > 64 - POWM_WINDOW && bit / 64 + 1 < n) w |= e[bit / 64 + 1] << (64 - bit % 64);
        u32 digit = (u32)(w & (POWM_TABLE - 1));
        if (at == top) {
            first(digit);
        } else {
            next(digit);
        }
    }
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
    exponent_windows(
        exp + exp_at[i], exp_len[i],
        [&](u32 digit) {
#pragma unroll(L <= 32 ? L : 8)
            for (int j = 0; j < L; j++) x[j] = table[digit][j];
        },
        [&](u32 digit) {
            for (int k = 0; k < POWM_WINDOW; k++) mont_mul<L>(x, x, x, mm, minv);
            if (digit) mont_mul<L>(x, x, table[digit], mm, minv);
        });
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

// ---------------------------------------------------------------------------
// Larger moduli, one block an item and one thread a limb (L threads, L of
// 64 to 512 limbs: 4096 to 32768 bits), every number in shared memory.
// A Montgomery product is three products made column by column, each
// thread summing two columns (L terms in all) into three words, then the
// columns' words added with their carries rippled between neighbours until
// none is left:
//   T = a b;  M = (T mod R) N' mod R (N' = -N^-1 mod R, from the host);
//   U = T + M N, whose low L limbs are zero;  r = U / R, less N if >= N.

// (c2, c1, c0) += (hi, lo).
__device__ __forceinline__ void add_wide(u64 &c0, u64 &c1, u64 &c2, u64 lo, u64 hi) {
    asm("add.cc.u64 %0, %0, %3;\n\taddc.cc.u64 %1, %1, %4;\n\taddc.u64 %2, %2, 0;" : "+l"(c0), "+l"(c1), "+l"(c2) : "l"(lo), "l"(hi));
}

// The columns of a b (L limbs each) into c0, c1, c2 (2L + 1 columns; column
// 2L zero), plus `add` (2L limbs) where given; with `low`, columns below L
// only. Thread k makes columns k and k + L.
template <int L>
__device__ __forceinline__ void columns(const u64 *a, const u64 *b, const u64 *add, bool low, u64 *c0, u64 *c1, u64 *c2) {
    int k = threadIdx.x;
    u64 l0 = add ? add[k] : 0, l1 = 0, l2 = 0, h0 = add && !low ? add[k + L] : 0, h1 = 0, h2 = 0;
    if (low) {
        for (int i = 0; i <= k; i++) {
            u64 x = a[i], y = b[k - i];
            add_wide(l0, l1, l2, x * y, __umul64hi(x, y));
        }
    } else {
        for (int i = 0; i < L; i++) {
            u64 x = a[i], y = b[(k - i) & (L - 1)];
            u64 lo = x * y, hi = __umul64hi(x, y);
            if (i <= k) add_wide(l0, l1, l2, lo, hi);
            else add_wide(h0, h1, h2, lo, hi);
        }
    }
    c0[k] = l0, c1[k] = l1, c2[k] = l2;
    c0[k + L] = h0, c1[k + L] = h1, c2[k + L] = h2;
    if (k == 0) c0[2 * L] = c1[2 * L] = c2[2 * L] = 0;
}

// r (n limbs, n <= 2L + 1) = the sum of the columns: word j takes c0[j],
// c1[j - 1] and c2[j - 2]; then carries (at most 2 a word) ripple up
// until none is left. A carry out of word n - 1 is dropped.
template <int L>
__device__ __forceinline__ void settle(u64 *r, int n, const u64 *c0, const u64 *c1, const u64 *c2, u32 *carry) {
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += L) {
        u64 s = c0[j], c = 0;
        if (j >= 1) { u64 t = s + c1[j - 1]; c += t < s; s = t; }
        if (j >= 2) { u64 t = s + c2[j - 2]; c += t < s; s = t; }
        r[j] = s;
        carry[j] = (u32)c;
    }
    for (;;) {
        __syncthreads();
        u32 in[3];
        int m = 0;
        for (int j = threadIdx.x; j < n; j += L, m++) in[m] = j ? carry[j - 1] : 0;
        __syncthreads();
        int any = 0;
        m = 0;
        for (int j = threadIdx.x; j < n; j += L, m++) {
            u64 s = r[j] + in[m];
            u32 c = s < in[m];
            r[j] = s;
            carry[j] = c;
            any |= c && j + 1 < n;
        }
        if (!__syncthreads_or(any)) break;
    }
}

// r = a b R^-1 mod N (a, b < N, all L limbs in shared memory; r may be a
// or b). T (2L + 1), M (L), the columns (2L + 1 each) and carry are scratch.
template <int L>
__device__ void mont_mul_block(u64 *r, const u64 *a, const u64 *b, const u64 *N, const u64 *Ni, u64 *T, u64 *M, u64 *c0, u64 *c1, u64 *c2, u32 *carry) {
    int k = threadIdx.x;
    columns<L>(a, b, nullptr, false, c0, c1, c2);
    settle<L>(T, 2 * L, c0, c1, c2, carry);
    __syncthreads();
    columns<L>(T, Ni, nullptr, true, c0, c1, c2);
    settle<L>(M, L, c0, c1, c2, carry);
    __syncthreads();
    columns<L>(M, N, T, false, c0, c1, c2);
    settle<L>(T, 2 * L + 1, c0, c1, c2, carry);
    // U / R = T[L .. 2L]: less N where T[2L] is set or T[L ..] >= N.
    __syncthreads();
    u64 x = T[L + k];
    c0[k] = x - N[k];
    carry[k] = x < N[k];
    // carry[2L + 1]: whether a borrow left the top word, in any pass of the ripple.
    if (k == 0) carry[2 * L + 1] = 0;
    __syncthreads();
    if (k == L - 1 && carry[k]) carry[2 * L + 1] = 1;
    for (;;) {
        u32 in = k ? carry[k - 1] : 0;
        __syncthreads();
        u64 s = c0[k];
        u32 b = s < in;
        c0[k] = s - in;
        carry[k] = b;
        if (k == L - 1 && b) carry[2 * L + 1] = 1;
        if (!__syncthreads_or(b && k + 1 < L)) break;
    }
    bool keep = T[2 * L] == 0 && carry[2 * L + 1] != 0;
    __syncthreads();
    r[k] = keep ? x : c0[k];
    __syncthreads();
}

// Shared words a block item takes: the window's table (16 L), x, N, N',
// one, R^2 mod N (L each), T (2L + 1), M (L), the columns (3 (2L + 1)),
// and 2L + 2 carries of 32 bits.
#define POWM_BLOCK_WORDS(L) (POWM_TABLE * (L) + 5 * (L) + 2 * (L) + 1 + (L) + 3 * (2 * (L) + 1) + (L) + 1)

template <int L>
__device__ void powm_block_item(u64 i, const u64 *base, const u64 *exp, const u64 *exp_at, const u64 *exp_len, const u64 *mod, const u64 *r2,
                                const u64 *ninv, u64 *out) {
    extern __shared__ u64 sh[];
    u64 *table = sh, *x = table + POWM_TABLE * L, *N = x + L, *Ni = N + L, *one = Ni + L, *rr = one + L;
    u64 *T = rr + L, *M = T + 2 * L + 1, *c0 = M + L, *c1 = c0 + 2 * L + 1, *c2 = c1 + 2 * L + 1;
    u32 *carry = (u32 *)(c2 + 2 * L + 1);
    int k = threadIdx.x;
    N[k] = mod[i * L + k];
    Ni[k] = ninv[i * L + k];
    one[k] = k == 0;
    rr[k] = r2[i * L + k];
    x[k] = base[i * L + k];
    __syncthreads();
#define MONT(r, a, b) mont_mul_block<L>(r, a, b, N, Ni, T, M, c0, c1, c2, carry)
    // table[j] = base^j R mod N: table[0] = R mod N = mont(R^2, 1).
    MONT(table, rr, one);
    MONT(table + L, x, rr);
    for (int j = 2; j < POWM_TABLE; j++) MONT(table + j * L, table + (j - 1) * L, table + L);
    exponent_windows(
        exp + exp_at[i], exp_len[i],
        [&](u32 digit) {
            x[k] = table[digit * L + k];
            __syncthreads();
        },
        [&](u32 digit) {
            for (int j = 0; j < POWM_WINDOW; j++) MONT(x, x, x);
            if (digit) MONT(x, x, table + digit * L);
        });
    MONT(x, x, one);
#undef MONT
    out[i * L + k] = x[k];
    __syncthreads();
}

#define POWM_BLOCK_KERNEL(L)                                                                                                     \
    extern "C" __global__ void __launch_bounds__(L) cugmp_powm_block_##L(u64 n, const u64 *base, const u64 *exp, const u64 *exp_at, \
                                                                          const u64 *exp_len, const u64 *mod, const u64 *r2,        \
                                                                          const u64 *ninv, u64 *out) {                              \
        for (u64 i = blockIdx.x; i < n; i += gridDim.x) powm_block_item<L>(i, base, exp, exp_at, exp_len, mod, r2, ninv, out);     \
    }

POWM_BLOCK_KERNEL(64)
POWM_BLOCK_KERNEL(128)
POWM_BLOCK_KERNEL(256)
POWM_BLOCK_KERNEL(512)
