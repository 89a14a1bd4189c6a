// The carry between tiles of a single-pass scan over limbs (decoupled
// look-back): the add and subtract kernels (cuda/linear.cu) and a wide
// product's last kernel, which makes its limbs with their carries
// (cugmp_ntt_combine_wide_carry, cuda/ntt.cu). A block takes one tile of
// consecutive limbs, tiles numbered in the order blocks start, so every
// predecessor of a running block has started; it scans its tile, publishes
// the tile's (g, p) ("generates a carry", "propagates the carry in") and
// looks back over its predecessors' published states for its carry in,
// unless the limb just below its tile decides it (`below`).
#pragma once
#include "cugmp.cuh"

// The scan's state lives in one buffer the host keeps for the life of the
// context, so no call pays for allocating or clearing it:
//   state[0]      hands out tile numbers (blocks take them in the order they start);
//   state[1]      counts finished tiles; the last block resets both counters,
//                 so the next kernel on the stream starts from zero;
//   state[2 + t]  tile t's published state: epoch << 4 | flags | value, one
//                 64-bit word written at once, so a reader never sees a flag
//                 without its value. The host passes a new epoch to every
//                 call, so a word left by an earlier call reads as "not yet
//                 published" and the buffer needs no clearing (the epoch has
//                 60 bits: it never wraps).
#define STATE_AGGREGATE 4u  // bits 0..1 are the tile's own (g, p)
#define STATE_INCLUSIVE 8u  // bit 0 is the carry out of the tile, all earlier tiles included

// (g, p) packed as g | p << 1: a later segment after an earlier one.
__device__ __forceinline__ u32 gp_combine(u32 later, u32 earlier) {
    u32 g = (later & 1) | ((later >> 1) & earlier & 1);
    u32 p = (later >> 1) & (earlier >> 1) & 1;
    return g | (p << 1);
}

// A warp's inclusive scan of its lanes' (g, p), lane 0 the lowest: returns
// this lane's (its own and every lower lane's), and *exclusive gets the lower
// lanes' alone (2, nothing, for lane 0).
__device__ __forceinline__ u32 warp_scan_gp(u32 gp, u32 lane, u32 *exclusive) {
    u32 inclusive = gp;
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
        const u32 earlier = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive = gp_combine(inclusive, earlier);
    }
    *exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (lane == 0) *exclusive = 2;
    return inclusive;
}

// Thread 0 of the block of tile `tile` (of tiles 0 .. last): publishes the
// tile's (g, p) `tile_gp` and returns the carry into the tile. `below` is
// the (g, p) of the limb just below the tile: where it does not propagate
// its g is the carry in, published at once with the tile's carry out;
// otherwise (2: propagates, or not read) the look-back finds it. Writes the
// last tile's carry out to *cout (where cout is not null), and the last
// block to finish resets the counters.
__device__ __forceinline__ u32 scan_carry_in(unsigned long long *state, u64 tile, u64 last, u32 tile_gp, u32 below,
                                             u64 epoch, limb_t *cout) {
    unsigned long long *published = state + 2;
    const unsigned long long stamp = (unsigned long long)epoch << 4;
    u32 carry_in = 0;
    if (!(below & 2)) {
        carry_in = below & 1;
        atomicExch(&published[tile], stamp | STATE_INCLUSIVE | ((tile_gp & 1) | ((tile_gp >> 1) & carry_in)));
    } else {
        atomicExch(&published[tile], stamp | STATE_AGGREGATE | tile_gp);
        u32 acc = 2;  // what lies between the predecessor looked at and this tile
        for (u64 t = tile - 1;; t--) {
            // Poll with plain loads (an atomic per poll would queue at
            // L2 behind the other blocks' traffic), backing off a little.
            unsigned long long word = *(volatile unsigned long long *)&published[t];
            while ((word >> 4) != epoch) {
                __nanosleep(64);
                word = *(volatile unsigned long long *)&published[t];
            }
            u32 st = (u32)word & 15u;
            if (st & STATE_INCLUSIVE) {
                carry_in = (acc & 1) | ((acc >> 1) & st & 1);
                break;
            }
            acc = gp_combine(acc, st & 3);
            if (!(acc & 2)) {  // the carry stops somewhere in between
                carry_in = acc & 1;
                break;
            }
        }
        u32 out = (tile_gp & 1) | ((tile_gp >> 1) & carry_in);
        atomicExch(&published[tile], stamp | STATE_INCLUSIVE | out);
    }
    if (cout && tile == last) *cout = (tile_gp & 1) | ((tile_gp >> 1) & carry_in);
    // Every block has taken its ticket before the last one finishes, so
    // the last one may reset the counters for the next call.
    if (atomicAdd(&state[1], 1ull) == last) {
        state[0] = 0;
        state[1] = 0;
    }
    return carry_in;
}

// The block's part of the scan once each warp's (g, p) is in warp_gp[w]
// (WARPS warps, in the order of the tile's limbs): returns the carry into
// the tile, and *warp_prefix gets the (g, p) of the tile's limbs below this
// warp's. Thread 0 publishes the tile's (g, p) and finds its carry in
// (scan_carry_in; `below`, `last`, `cout` as there); where it looked back
// (below & 2) the others read it from the shared word *carry_into_tile
// after a barrier. `below` must be the same for every thread of the block
// (read from one shared word), so that the barrier is reached by all of
// them or none.
template <int WARPS>
__device__ __forceinline__ u32 scan_block_carry(const u32 *warp_gp, u32 warp, u32 *warp_prefix, u32 below,
                                                u32 *carry_into_tile, unsigned long long *state, u64 tile, u64 last,
                                                u64 epoch, limb_t *cout) {
    u32 prefix = 2, tile_gp = 2;  // below this warp; the whole tile
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
        if (w < (int)warp) prefix = gp_combine(warp_gp[w], prefix);
        tile_gp = gp_combine(warp_gp[w], tile_gp);
    }
    *warp_prefix = prefix;
    if (threadIdx.x == 0) {
        const u32 carry_in = scan_carry_in(state, tile, last, tile_gp, below, epoch, cout);
        if (below & 2) *carry_into_tile = carry_in;
    }
    if (!(below & 2)) return below & 1;
    __syncthreads();
    return *carry_into_tile;
}
