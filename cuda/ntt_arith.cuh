// The NTT's arithmetic modulo its three primes (cuda/ntt.cu has the
// method and the exactness bound): Montgomery products, modular sums, an
// operand's 32-bit coefficients as residues, powers.
//
// The arithmetic and the pass are plain functions of (block, thread) so that
// c_tests/ntt_model.cpp can compile ntt.cu as host C++ (CUGMP_HOST_MODEL)
// and run the whole pipeline on the CPU, block by block, against GMP.
#pragma once
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
#define NTT_OPAQUE32(x)
struct uint2 {
    u32 x, y;
};
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
// The same for a 32-bit value: it is computed once, as written, and its
// terms are not re-added where it is used.
#define NTT_OPAQUE32(x) asm("" : "+r"(x))
#endif

#define NTT_PRIMES 3
// The wide sets' primes (a limb a coefficient; cuda/ntt.cu).
#define NTT_WIDE_PRIMES 5
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

// Two sets of three, each in increasing order (the CRT, ntt_crt.cuh, needs
// it): transforms of 2^k and 3 * 2^k points take the first, those of 5 *
// 2^k the second (cuda/ntt.cu has the lengths and the bounds).
NTT_CONST NttPrime ntt_primes[NTT_PRIMES] = {
    {1811939329u, 0x94000001u, 0x392f6852u, 13},
    {2013265921u, 0x88000001u, 0x45dddde3u, 31},
    {2113929217u, 0x82000001u, 0x7ddf7dfdu, 5},
};
NTT_CONST NttPrime ntt_primes5[NTT_PRIMES] = {
    {880803841u, 0xcb800001u, 0x1bb1fb38u, 26},
    {1300234241u, 0xb2800001u, 0x07dfcb31u, 3},
    {2013265921u, 0x88000001u, 0x45dddde3u, 31},
};

// The wide sets, five primes each in increasing order, for products whose
// coefficients are whole limbs (cuda/ntt.cu): 3 * 2^23 divides every p - 1
// of the first, 5 * 2^22 every q - 1 of the second.
NTT_CONST NttPrime ntt_wide_primes[NTT_WIDE_PRIMES] = {
    {1711276033u, 0x9a000001u, 0x157d7d84u, 29},
    {1811939329u, 0x94000001u, 0x392f6852u, 13},
    {2013265921u, 0x88000001u, 0x45dddde3u, 31},
    {2088763393u, 0x83800001u, 0x5f9b3ebcu, 5},
    {2113929217u, 0x82000001u, 0x7ddf7dfdu, 5},
};
NTT_CONST NttPrime ntt_wide_primes5[NTT_WIDE_PRIMES] = {
    {1300234241u, 0xb2800001u, 0x07dfcb31u, 3},
    {1321205761u, 0xb1400001u, 0x320bfccbu, 11},
    {1572864001u, 0xa2400001u, 0x0e73078au, 13},
    {1866465281u, 0x90c00001u, 0x32a9906bu, 3},
    {2013265921u, 0x88000001u, 0x45dddde3u, 31},
};

// Prime i of the set for transforms of radix * 2^k points (`wide`: of the
// wide sets).
NTT_FN NttPrime ntt_prime(u32 radix, u32 i, bool wide = false) {
    if (wide) return radix == 5 ? ntt_wide_primes5[i] : ntt_wide_primes[i];
    return radix == 5 ? ntt_primes5[i] : ntt_primes[i];
}

NTT_FN u32 umin32(u32 a, u32 b) { return a < b ? a : b; }

// a * b / 2^32 mod p, for a < 2p and b < p; in [0, p). With m = lo(ab) * p^-1
// (mod 2^32), ab - mp is a multiple of 2^32, so (ab - mp) / 2^32 is
// hi(ab) - hi(mp) exactly, in (-p, p) (ab < 2p^2 < 2^32 p).
// mont_mul_lazy: the same without the last subtraction, in (0, 2p): a
// factor that only goes into another Montgomery product as its first
// operand (a chain of twists' powers, the pointwise product before its
// scale).
NTT_FN u32 mont_mul_lazy(u32 a, u32 b, const NttPrime &q) {
    const u64 t = (u64)a * b;
    const u32 m = (u32)t * q.p_inv;
    const u32 hi = (u32)(t >> 32), mp = umulhi32(m, q.p);
    return hi - mp + q.p;
}
NTT_FN u32 mont_mul(u32 a, u32 b, const NttPrime &q) {
    const u32 r = mont_mul_lazy(a, b, q);
    return umin32(r, r - q.p);
}

// w's quotient for shoup_mul: floor(w 2^32 / p).
NTT_FN u32 shoup_quotient(u32 w, u32 p) { return (u32)(((u64)w << 32) / p); }

// a * w mod p for any a < 2^32, w < p, with w's quotient wq = floor(w 2^32 /
// p) (Shoup, shoup_quotient): qt = hi(a wq) is floor(a w / p) or one less, so a w - qt p is
// in [0, 2p), exact in 32 bits. Three multiplications where mont_mul takes
// a wide one and two (the stage roots, which carry their quotients).
NTT_FN u32 shoup_mul(u32 a, u32 w, u32 wq, const NttPrime &q) {
    const u32 r = a * w - umulhi32(a, wq) * q.p;
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

// A 32-bit coefficient as a residue, by up to `subtractions` subtractions
// of p, floor((2^32 - 1) / p) of them (ntt_subtractions).
NTT_FN u32 coefficient_residue(u32 x, const NttPrime &q, int subtractions) {
    for (int i = 0; i < subtractions; i++) x = umin32(x, x - q.p);
    return x;
}

// How many subtractions of prime i of the set for radix R take a 32-bit
// coefficient below it (coefficient_residue): floor((2^32 - 1) / p), 2 for
// every prime of the first set, 4, 3 and 2 for the second (a constant where
// R and i are: the primes' words are not).
// The wide sets: 3 for q0 and q1 of the second, 2 for the others.
NTT_FN int ntt_subtractions(u32 radix, u32 i, bool wide = false) {
    if (wide) return radix == 5 && i < 2 ? 3 : 2;
    return radix == 5 ? 4 - (int)i : 2;
}

// A limb, a coefficient of the wide sets, as a residue: hi 2^32 + lo, hi's
// part hi R mod p by a Montgomery product by R^2 (any hi < 2^32: hi R^2 <
// 2^32 p), lo's by `subtractions` subtractions (coefficient_residue,
// ntt_subtractions).
NTT_FN u32 limb_residue(u64 x, const NttPrime &q, int subtractions) {
    return mod_add(mont_mul((u32)(x >> 32), q.r2, q), coefficient_residue((u32)x, q, subtractions), q);
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

// An operand's coefficients in the wide sets: its limbs, 0 past them.
struct NttLimbs {
    const limb_t *words;
    u32 count;
    NTT_METHOD NttLimbs(const limb_t *limbs, u64 xn) : words(limbs), count(xn < N_MAX_COEFS ? (u32)xn : N_MAX_COEFS) {}
    NTT_METHOD u64 at(u32 i) const { return i < count ? LDG(&words[i]) : 0; }
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
