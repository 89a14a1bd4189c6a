// O(n) limb operations (GMP's mpn level, natural numbers): add and subtract
// with a parallel carry, shifts, bitwise logic. Signs and two's complement
// are composed from these by the host (src/gpu/linear.rs).
//
// Every index is 64-bit, so sizes past 2^32 limbs are fine.
#include "carry_scan.cuh"

// ---------------------------------------------------------------------------
// Add and subtract: r[0..n) = a[0..n) +/- b[0..m), m <= n, carry or borrow
// out to *cout (when cout != 0). r may equal a (each block reads its own tile
// before writing it, and no block reads another's tile).
//
// The carry is a scan with the associative operator on (g, p) pairs
// ("generates a carry", "propagates the carry in"): a later segment (g2, p2)
// after an earlier (g1, p1) is (g2 | (p2 & g1), p1 & p2). Single pass,
// O(n) work, O(log n) depth: each block takes one tile of LINEAR_TILE limbs
// (tiles numbered in the order blocks start, so every predecessor of a
// running block has started), scans it with warp ballots (carries32),
// publishes its aggregate, and looks back over its predecessors'
// published states (decoupled look-back) for its carry in. The look-back
// stops at the first predecessor whose aggregate does not propagate, which
// for random operands is the first one; a carry through all-ones operands
// walks back to the nearest tile that already knows its carry out.
//
// Most tiles need no look-back at all: when r is neither operand (so the
// limbs before the tile still hold a and b), the block also reads the limb
// pair just below its tile. Unless that limb propagates (sum all ones,
// difference zero: for random operands with probability 2^-64), it alone
// decides the carry into the tile, and the block publishes its carry out
// without waiting for any other block. Blocks then run as independently as
// an element-wise kernel's, and the look-back is left for carry chains.
// ---------------------------------------------------------------------------

// Chosen by measurement on an H200 (2^22..2^26 limbs, RESULTS.md).
#define LINEAR_THREADS 256
// At least this many blocks resident per SM (<= 64 registers a thread). It
// also works around ptxas 13.0 failing ("register allocation failed with
// register count of 7") on sm_90 for these kernels with no minimum given.
#define LINEAR_MIN_BLOCKS 4
#define LIMBS_PER_THREAD 8
#define LINEAR_TILE (LINEAR_THREADS * LIMBS_PER_THREAD)
#define LINEAR_WARPS (LINEAR_THREADS / 32)

// Carries through 32 consecutive limbs, one a lane, in one integer addition:
// with G the lanes that generate and K = G | (lanes that propagate), the sum
// G + K + c_in carries exactly as the limbs do (a lane of G adds 1 + 1, a
// propagating one 0 + 1, any other 0 + 0). Bit i of (G + K + c_in) ^ G ^ K is
// the carry into lane i; bit 32 is the carry out of the 32.
__device__ __forceinline__ u64 carries32(u32 gen, u32 keep, u32 carry_in) {
    return (u64)gen + keep + carry_in;
}

template <bool SUBTRACT>
__device__ __forceinline__ void addsub_tile(limb_t *r, const limb_t *a, u64 n, const limb_t *b, u64 m,
                                            limb_t *cout, unsigned long long *state, u64 epoch) {
    // carry_into_tile first: after warp_gp, nvcc read it in one vector load
    // with warp_gp's last words before thread 0 wrote it (the value unused,
    // but compute-sanitizer's racecheck reports it as a hazard).
    __shared__ u32 carry_into_tile;
    __shared__ u64 tile_s;
    __shared__ u32 warp_gp[LINEAR_WARPS];
    // (g, p) of the limb pair just below the tile, or "propagates" (2) where
    // it may not be read (r aliases an operand) so the look-back decides.
    __shared__ u32 below_gp;
    if (threadIdx.x == 0) tile_s = atomicAdd(&state[0], 1ull);
    __syncthreads();
    const u64 tile = tile_s;
    const u64 tile_base = tile * LINEAR_TILE;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Warp w holds 32 * LIMBS_PER_THREAD consecutive limbs of the tile, in
    // rows of 32: row k, lane l is limb base + 32 k. Every load and store is
    // a warp's 32 consecutive limbs, and a row's carries are one addition
    // (carries32) on two ballots: no shared-memory staging.
    const u64 base = tile_base + (u64)warp * (32 * LIMBS_PER_THREAD) + lane;
    limb_t s[LIMBS_PER_THREAD];
    u32 gen[LIMBS_PER_THREAD], keep[LIMBS_PER_THREAD];
    {
        // Every load issued before any arithmetic, so each thread has
        // 2 * LIMBS_PER_THREAD loads in flight.
        limb_t x[LIMBS_PER_THREAD], y[LIMBS_PER_THREAD];
#pragma unroll
        for (int k = 0; k < LIMBS_PER_THREAD; k++) {
            u64 i = base + 32 * k;
            x[k] = i < n ? a[i] : 0;
            y[k] = i < m ? b[i] : 0;
        }
        const bool peek = threadIdx.x == 0 && tile > 0 && r != a && r != b;
        limb_t bx = 0, by = 0;
        if (peek) {
            bx = a[tile_base - 1];
            by = tile_base - 1 < m ? b[tile_base - 1] : 0;
        }
        if (threadIdx.x == 0) {
            if (tile == 0)
                below_gp = 0;  // nothing below: carry in 0
            else if (!peek)
                below_gp = 2;
            else if (SUBTRACT)
                below_gp = (u32)(bx < by) | (u32)(bx == by) << 1;
            else
                below_gp = (u32)(bx + by < bx) | (u32)(bx + by == ~(limb_t)0) << 1;
        }
#pragma unroll
        for (int k = 0; k < LIMBS_PER_THREAD; k++) {
            bool g, p;
            if (SUBTRACT) {
                s[k] = x[k] - y[k];
                g = x[k] < y[k];
                p = x[k] == y[k];
            } else {
                s[k] = x[k] + y[k];
                g = s[k] < x[k];
                p = s[k] == ~(limb_t)0;
            }
            p = p || base + 32 * k >= n;  // past the end: identity
            gen[k] = __ballot_sync(0xffffffffu, g);
            keep[k] = gen[k] | __ballot_sync(0xffffffffu, p);
        }
    }
    // The warp's (g, p): its carry out with no carry in, and whether every
    // limb propagates (generating and propagating exclude each other).
    if (lane == 0) {
        u32 c = 0, all = 1;
#pragma unroll
        for (int k = 0; k < LIMBS_PER_THREAD; k++) {
            c = (u32)(carries32(gen[k], keep[k], c) >> 32);
            all &= keep[k] == 0xffffffffu && gen[k] == 0;
        }
        warp_gp[warp] = c | all << 1;
    }
    __syncthreads();
    // (below_gp: one shared word, the same for every thread.)
    u32 warp_prefix;
    const u32 tile_carry = scan_block_carry<LINEAR_WARPS>(warp_gp, warp, &warp_prefix, below_gp, &carry_into_tile, state, tile,
                                                          (n - 1) / LINEAR_TILE, epoch, cout);
    u32 c = (warp_prefix & 1) | ((warp_prefix >> 1) & tile_carry);
#pragma unroll
    for (int k = 0; k < LIMBS_PER_THREAD; k++) {
        const u64 sum = carries32(gen[k], keep[k], c);
        const limb_t carry = (((u32)sum ^ gen[k] ^ keep[k]) >> lane) & 1;
        c = (u32)(sum >> 32);
        u64 i = base + 32 * k;
        if (i < n) r[i] = SUBTRACT ? s[k] - carry : s[k] + carry;
    }
}

// state: 2 + ceil(n / LINEAR_TILE) words (above); one block of LINEAR_THREADS per tile.
extern "C" __global__ void __launch_bounds__(LINEAR_THREADS, LINEAR_MIN_BLOCKS)
    cugmp_add(limb_t *r, const limb_t *a, u64 n, const limb_t *b, u64 m, limb_t *cout, unsigned long long *state, u64 epoch) {
    addsub_tile<false>(r, a, n, b, m, cout, state, epoch);
}

extern "C" __global__ void __launch_bounds__(LINEAR_THREADS, LINEAR_MIN_BLOCKS)
    cugmp_sub(limb_t *r, const limb_t *a, u64 n, const limb_t *b, u64 m, limb_t *cout, unsigned long long *state, u64 epoch) {
    addsub_tile<true>(r, a, n, b, m, cout, state, epoch);
}

// ---------------------------------------------------------------------------
// Shifts by limbs + bits (bits in 0..63); out of place. Each output limb is
// computed from at most two input limbs: no carries. These and the bitwise
// kernel are element-wise: one block per ELEMENTWISE_BLOCK consecutive
// limbs (grid = ceil(n / ELEMENTWISE_BLOCK)), each thread ELEMENTS_PER_THREAD
// of them, a block's stride apart so every load is coalesced.
// ---------------------------------------------------------------------------

// r[0..n + limbs + 1) = a[0..n) << (64 * limbs + bits).
extern "C" __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
    cugmp_shl(limb_t *__restrict__ r, const limb_t *__restrict__ a, u64 n, u64 limbs, u32 bits) {
    const u64 total = n + limbs + 1;
    limb_t lo[ELEMENTS_PER_THREAD], hi[ELEMENTS_PER_THREAD];
    // All loads first, so each thread has ELEMENTS_PER_THREAD in flight.
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k);
        u64 j = i - limbs;  // a[j] lands here shifted by `bits`, a[j-1]'s top bits with it
        bool in = i < total && i >= limbs;
        hi[k] = in && j < n ? a[j] : 0;
        lo[k] = in && bits && j >= 1 && j - 1 < n ? a[j - 1] : 0;
    }
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k);
        if (i < total) r[i] = (hi[k] << bits) | (bits ? lo[k] >> (64 - bits) : 0);
    }
}

// r[0..n - limbs) = a[0..n) >> (64 * limbs + bits), limbs < n.
extern "C" __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
    cugmp_shr(limb_t *__restrict__ r, const limb_t *__restrict__ a, u64 n, u64 limbs, u32 bits) {
    const u64 total = n - limbs;
    limb_t lo[ELEMENTS_PER_THREAD], hi[ELEMENTS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k), j = i + limbs;
        lo[k] = i < total ? a[j] : 0;
        hi[k] = i < total && bits && j + 1 < n ? a[j + 1] : 0;
    }
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k);
        if (i < total) r[i] = (lo[k] >> bits) | (bits ? hi[k] << (64 - bits) : 0);
    }
}

// r[0..ceil(count / 64)) = bits [from, from + count) of a[0..n) (zeros past
// n), count >= 1, with the window's top bit (bit count - 1) flipped when
// flip is 1: a window read as count-bit two's complement w, plus
// 2^(count-1), is a natural number (src/gpu/root.rs). r is not a.
extern "C" __global__ void cugmp_window(limb_t *__restrict__ r, const limb_t *__restrict__ a, u64 n, u64 from, u64 count, u32 flip) {
    const u64 width = (count + 63) / 64;
    const u32 bits = (u32)(from % 64);
    GRID_STRIDE(i, width) {
        const u64 j = from / 64 + i;
        limb_t lo = j < n ? a[j] : 0;
        limb_t hi = bits && j + 1 < n ? a[j + 1] : 0;
        limb_t v = (lo >> bits) | (bits ? hi << (64 - bits) : 0);
        if (i == width - 1) {
            const u32 top = (u32)(count - 64 * (width - 1));  // 1..64
            if (top < 64) v &= ((limb_t)1 << top) - 1;
            if (flip) v ^= (limb_t)1 << (top - 1);
        }
        r[i] = v;
    }
}

// *flag = 1 if any of the low 64 * limbs + bits bits of a[0..n) is set (for
// the rounding of floor and ceiling shifts); *flag must start at 0.
extern "C" __global__ void cugmp_any_low_bits(limb_t *flag, const limb_t *__restrict__ a, u64 n, u64 limbs, u32 bits) {
    u64 end = limbs < n ? limbs + (bits != 0) : n;
    GRID_STRIDE(i, end) {
        limb_t mask = i < limbs ? ~(limb_t)0 : (((limb_t)1 << bits) - 1);
        if (a[i] & mask) *flag = 1;  // every writer writes the same value
    }
}

// Slots of radix conversion's divisions (src/gpu/radix.rs): `count` slots
// `apart` limbs apart, of `width` limbs each in r and d, where d's limb
// `width` of a slot is a flag, 0 or 1. Where it is 1 the slot's limbs of d
// replace r's; f's first limb of each slot is set to the flag (f's other
// limbs are left alone).
extern "C" __global__ void cugmp_slots_select(limb_t *__restrict__ r, const limb_t *__restrict__ d, limb_t *__restrict__ f, u64 count,
                                              u64 apart, u64 width) {
    GRID_STRIDE(e, count * width) {
        const u64 i = e / width, t = e - i * width;
        const limb_t flag = d[i * apart + width];
        if (flag) r[i * apart + t] = d[i * apart + t];
        if (t == 0) f[i * apart] = flag;
    }
}

// ---------------------------------------------------------------------------
// Bitwise: r[i] = ((A ^ ia) OP (B ^ ib)) for i < n, where A = a[i] for
// i < na and 0 above (likewise B), and ia, ib are 0 or all ones. With the
// complements, the host builds GMP's two's-complement cases from magnitudes.
// ---------------------------------------------------------------------------

#define BITWISE_AND 0u
#define BITWISE_IOR 1u
#define BITWISE_XOR 2u

extern "C" __global__ void __launch_bounds__(ELEMENTWISE_THREADS)
    cugmp_bitwise(limb_t *__restrict__ r, u64 n, const limb_t *__restrict__ a, u64 na, limb_t ia,
                  const limb_t *__restrict__ b, u64 nb, limb_t ib, u32 op) {
    limb_t x[ELEMENTS_PER_THREAD], y[ELEMENTS_PER_THREAD];
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k);
        x[k] = (i < na ? a[i] : 0) ^ ia;
        y[k] = (i < nb ? b[i] : 0) ^ ib;
    }
#pragma unroll
    for (int k = 0; k < ELEMENTS_PER_THREAD; k++) {
        u64 i = ELEMENT(k);
        if (i < n) r[i] = op == BITWISE_AND ? (x[k] & y[k]) : op == BITWISE_IOR ? (x[k] | y[k]) : (x[k] ^ y[k]);
    }
}
