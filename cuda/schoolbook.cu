// Small products by columns: every product u_i v_j of 64-bit limbs,
// summed by column k = i + j in 192 bits on many blocks at once, and the
// limbs' carries in the same kernel. A product of a few thousand limbs a
// side is a few million limb products, where the NTT's chain of passes
// waits on each pass's latency (RESULTS.md, "Small products by columns").
// The host (src/gpu/ntt/small.rs) runs the two kernels below as a small
// product's launch graph: cugmp_schoolbook_stage, then cugmp_schoolbook.
#include "carry_scan.cuh"

#define SCHOOLBOOK_THREADS 256
#define SCHOOLBOOK_WARPS (SCHOOLBOOK_THREADS / 32)
// Limbs a block of cugmp_schoolbook writes. Its warps take the same 32
// columns (a lane a column), each an eighth of their terms; the three
// lowest only feed the fourth's limb (the block below writes theirs).
#define SCHOOLBOOK_COLUMNS 29

// The graph's fixed parameters leave the sizes to memory: `meta` (device
// memory) holds un, vn and the carries' scan epoch, a new one each launch,
// so the scan state is never cleared (carry_scan.cuh).
#define SCHOOLBOOK_META_UN 0
#define SCHOOLBOOK_META_VN 1
#define SCHOOLBOOK_META_EPOCH 2

// The operands' first `cap` limbs from pinned host memory (mapped for the
// device; zeros above their lengths, src/gpu/ntt/small.rs `Slot::fill`) to
// device memory, where every block of cugmp_schoolbook reads them (over
// PCIe each would read them again); v alone where it is not null (a square
// reads u twice). Thread 0 also reads the lengths at `sizes` (un, vn, one
// 16-byte read: the same word read by every block of a grid took about a
// microsecond each, one after another) into meta, with a new epoch.
extern "C" __global__ void cugmp_schoolbook_stage(u64 *__restrict__ u, u64 *__restrict__ v, u64 *meta,
                                                  const u64 *host_u, const u64 *host_v,
                                                  const ulonglong2 *sizes, u64 cap) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const ulonglong2 s = *sizes;
        meta[SCHOOLBOOK_META_UN] = s.x;
        meta[SCHOOLBOOK_META_VN] = s.y;
        meta[SCHOOLBOOK_META_EPOCH] += 1;
    }
    const u64 pairs = cap / 2;  // cap is a power of two from 2^8
    GRID_STRIDE(i, 2 * pairs) {
        const bool second = i >= pairs;
        if (second && !v) break;
        const u64 k = second ? i - pairs : i;
        ((ulonglong2 *)(second ? v : u))[k] = ((const ulonglong2 *)(second ? host_v : host_u))[k];
    }
}

// (s0, s1, s2) += a b.
__device__ __forceinline__ void schoolbook_mac(u64 &s0, u64 &s1, u64 &s2, u64 a, u64 b) {
    const u64 lo = a * b, hi = __umul64hi(a, b);
    asm("add.cc.u64 %0, %0, %3;\n\t"
        "addc.cc.u64 %1, %1, %4;\n\t"
        "addc.u64 %2, %2, 0;"
        : "+l"(s0), "+l"(s1), "+l"(s2)
        : "l"(lo), "l"(hi));
}

// (s0, s1, s2) += (x0, x1, x2), below 2^192 (a column's sum).
__device__ __forceinline__ void schoolbook_add(u64 &s0, u64 &s1, u64 &s2, u64 x0, u64 x1, u64 x2) {
    asm("add.cc.u64 %0, %0, %3;\n\t"
        "addc.cc.u64 %1, %1, %4;\n\t"
        "addc.u64 %2, %2, %5;"
        : "+l"(s0), "+l"(s1), "+l"(s2)
        : "l"(x0), "l"(x1), "l"(x2));
}

// r = u * v, its un + vn limbs (r may be pinned host memory mapped for the
// device); u, v and the lengths as cugmp_schoolbook_stage left them (v = u
// squares). Grid: ceil(cap / SCHOOLBOOK_COLUMNS) blocks of
// SCHOOLBOOK_THREADS, cap >= un + vn; `state`: the carries' scan state
// (carry_scan.cuh), 2 + the grid's blocks words, for these launches alone.
//
// Column k's sum S_k = s0 + s1 2^64 + s2 2^128 goes to limbs k, k + 1 and
// k + 2: limb k is t_k = s0_k + s1_(k-1) + s2_(k-2) (mod 2^64, carry
// gamma_k of 0 to 2) plus gamma_(k-1), plus the carry from the limbs below,
// which the scan finds. The product is below 2^(64 (un + vn)) and every
// term is non-negative, so nothing carries past its top limb.
extern "C" __global__ void __launch_bounds__(SCHOOLBOOK_THREADS)
    cugmp_schoolbook(u64 *r, const u64 *__restrict__ u, const u64 *__restrict__ v, const u64 *meta,
                     unsigned long long *state) {
    __shared__ u64 part[3][SCHOOLBOOK_WARPS][32];
    __shared__ u64 tile_s;
    __shared__ long long dims[2];
    __shared__ u64 epoch_s;
    if (threadIdx.x == 0) {
        // Tiles in the order blocks start, so every tile's predecessors run.
        tile_s = atomicAdd(&state[0], 1ull);
        dims[0] = (long long)meta[SCHOOLBOOK_META_UN], dims[1] = (long long)meta[SCHOOLBOOK_META_VN];
        epoch_s = meta[SCHOOLBOOK_META_EPOCH];
    }
    __syncthreads();
    const long long un = dims[0], vn = dims[1], n = un + vn;
    const u64 tile = tile_s;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // Lane 0's column (tile 0's first three are below 0: empty).
    const long long k0 = (long long)tile * SCHOOLBOOK_COLUMNS - 3, k = k0 + lane;
    // The terms u_i v_(k-i) of the block's columns: i from max(0, k0 - vn +
    // 1) to min(k0 + 31, un - 1), cut among the warps; a lane's own column
    // has those with 0 <= k - i < vn. The loop is the warp's (no divergence
    // but the predicate), u_i the same word for every lane, v_(k-i)
    // consecutive words. Two sums, even and odd terms, so that one term's
    // chain of carries does not wait for the term before.
    const long long lo = k0 - vn + 1 > 0 ? k0 - vn + 1 : 0, hi = k0 + 31 < un - 1 ? k0 + 31 : un - 1;
    u64 s0 = 0, s1 = 0, s2 = 0, e0 = 0, e1 = 0, e2 = 0;
    auto term = [&](long long i) -> u64 {
        const long long j = k - i;
        return j >= 0 && j < vn ? __ldg(&v[j]) : 0;
    };
    if (lo <= hi) {
        const long long len = hi - lo + 1;
        const long long from = lo + len * warp / SCHOOLBOOK_WARPS, to = lo + len * (warp + 1) / SCHOOLBOOK_WARPS;
        long long i = from;
#pragma unroll 2
        for (; i + 1 < to; i += 2) {
            const u64 a0 = __ldg(&u[i]), a1 = __ldg(&u[i + 1]);
            const u64 b0 = term(i), b1 = term(i + 1);
            schoolbook_mac(s0, s1, s2, a0, b0);
            schoolbook_mac(e0, e1, e2, a1, b1);
        }
        if (i < to) schoolbook_mac(s0, s1, s2, __ldg(&u[i]), term(i));
    }
    schoolbook_add(s0, s1, s2, e0, e1, e2);
    part[0][warp][lane] = s0, part[1][warp][lane] = s1, part[2][warp][lane] = s2;
    __syncthreads();
    if (warp != 0) return;
    s0 = s1 = s2 = 0;
#pragma unroll
    for (int w = 0; w < SCHOOLBOOK_WARPS; w++) schoolbook_add(s0, s1, s2, part[0][w][lane], part[1][w][lane], part[2][w][lane]);
    // t_k and gamma_k (lanes from 2), then the limb before the carries
    // between limbs (lanes from 3, the block's own).
    const u64 below1 = __shfl_up_sync(0xffffffffu, s1, 1), below2 = __shfl_up_sync(0xffffffffu, s2, 2);
    u64 t = s0 + below1, gamma = t < below1;
    t += below2;
    gamma += t < below2;
    const u64 gamma_below = __shfl_up_sync(0xffffffffu, gamma, 1);
    const bool own = lane >= 3;
    const u64 limb = t + gamma_below;
    // The limb's (g, p) (carry_scan.cuh): the helper lanes propagate.
    const u32 gp = own ? (u32)(limb < t) | (u32)(limb == ~0ull) << 1 : 2u;
    u32 exclusive;
    const u32 inclusive = warp_scan_gp(gp, lane, &exclusive);
    const u32 tile_gp = __shfl_sync(0xffffffffu, inclusive, 31);
    u32 carry_in = 0;
    // Tile 0 has no carry in (and no predecessor to look back at).
    if (lane == 0) carry_in = scan_carry_in(state, tile, gridDim.x - 1, tile_gp, tile ? 2u : 0u, epoch_s, nullptr);
    carry_in = __shfl_sync(0xffffffffu, carry_in, 0);
    const u32 carry = (exclusive & 1) | ((exclusive >> 1) & carry_in);
    if (own && k < n) r[k] = limb + carry;
}
