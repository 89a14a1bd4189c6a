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
// Each lane sums four consecutive columns, so that every v_j it loads
// serves four limb products (held in registers as the terms move down the
// columns) and its four sums' carry chains run beside each other.
#define SCHOOLBOOK_LANE_COLUMNS 4
// Columns a block sums: its warps take the same ones, each a share of
// their terms; the three lowest only feed the fourth's limb (the tile
// below writes theirs).
#define SCHOOLBOOK_SPAN (32 * SCHOOLBOOK_LANE_COLUMNS)
// Limbs a tile writes.
#define SCHOOLBOOK_COLUMNS (SCHOOLBOOK_SPAN - 3)

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
// microsecond each, one after another) into meta, with a new epoch, and
// the tiles' `tiles` arrival counts are cleared for cugmp_schoolbook.
extern "C" __global__ void cugmp_schoolbook_stage(u64 *__restrict__ u, u64 *__restrict__ v, u64 *meta,
                                                  unsigned long long *arrived, const u64 *host_u,
                                                  const u64 *host_v, const ulonglong2 *sizes, u64 cap, u64 tiles) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const ulonglong2 s = *sizes;
        meta[SCHOOLBOOK_META_UN] = s.x;
        meta[SCHOOLBOOK_META_VN] = s.y;
        meta[SCHOOLBOOK_META_EPOCH] += 1;
    }
    GRID_STRIDE(t, tiles) arrived[t] = 0;
    const u64 pairs = cap / 2;  // cap is a power of two from 2^8
    GRID_STRIDE(i, 2 * pairs) {
        const bool second = i >= pairs;
        if (second && !v) break;
        const u64 k = second ? i - pairs : i;
        ((ulonglong2 *)(second ? v : u))[k] = ((const ulonglong2 *)(second ? host_v : host_u))[k];
    }
}

// A column's sum in pieces that carry less: acc[0] at bit 0, acc[1] at 32,
// acc[2] at 64 (64-bit sums of 32-bit limb products), and cnt[q] the
// carries out of acc[q] (each a u32: a column has under 2^31 terms).
struct schoolbook_sum {
    u64 acc[3];
    u32 cnt[3];
};

// sum += a b, as four 32-bit products.
__device__ __forceinline__ void schoolbook_mac4(schoolbook_sum &s, u64 a, u64 b) {
    const u32 a0 = (u32)a, a1 = (u32)(a >> 32), b0 = (u32)b, b1 = (u32)(b >> 32);
    asm("{\n\t.reg .u64 p;\n\t"
        "mul.wide.u32 p, %6, %8;\n\tadd.cc.u64 %0, %0, p;\n\taddc.u32 %3, %3, 0;\n\t"
        "mul.wide.u32 p, %6, %9;\n\tadd.cc.u64 %1, %1, p;\n\taddc.u32 %4, %4, 0;\n\t"
        "mul.wide.u32 p, %7, %8;\n\tadd.cc.u64 %1, %1, p;\n\taddc.u32 %4, %4, 0;\n\t"
        "mul.wide.u32 p, %7, %9;\n\tadd.cc.u64 %2, %2, p;\n\taddc.u32 %5, %5, 0;\n\t}"
        : "+l"(s.acc[0]), "+l"(s.acc[1]), "+l"(s.acc[2]), "+r"(s.cnt[0]), "+r"(s.cnt[1]), "+r"(s.cnt[2])
        : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
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
// squares). Grid: tiles * slices blocks of SCHOOLBOOK_THREADS, tiles =
// ceil(cap / SCHOOLBOOK_COLUMNS), cap >= un + vn. A tile's terms are cut
// into `slices` among as many blocks, so that a product of a few thousand
// limbs keeps every multiprocessor busy; each writes its columns' sums to
// `partial` (slices * tiles * 3 * SCHOOLBOOK_SPAN words), and the last of
// them to arrive (the tile's count in `arrived`, cleared by the stage
// kernel) adds them up and makes the tile's limbs. `state`: the carries'
// scan state (carry_scan.cuh), 2 + tiles words, for these launches alone.
//
// Column k's sum S_k = s0 + s1 2^64 + s2 2^128 goes to limbs k, k + 1 and
// k + 2: limb k is t_k = s0_k + s1_(k-1) + s2_(k-2) (mod 2^64, carry
// gamma_k of 0 to 2) plus gamma_(k-1), plus the carry from the limbs below,
// which the scan finds. The product is below 2^(64 (un + vn)) and every
// term is non-negative, so nothing carries past its top limb.
extern "C" __global__ void __launch_bounds__(SCHOOLBOOK_THREADS, 3)
    cugmp_schoolbook(u64 *r, const u64 *__restrict__ u, const u64 *__restrict__ v, const u64 *meta,
                     unsigned long long *state, unsigned long long *arrived, u64 *partial, u32 slices) {
    // The warps' sums, [word][warp][j * 32 + lane] for the lane's column j
    // (no two lanes of a warp on one bank); row 0 later holds the tile's.
    __shared__ u64 part[3][SCHOOLBOOK_WARPS][SCHOOLBOOK_SPAN];
    __shared__ u64 limbs[SCHOOLBOOK_SPAN];
    __shared__ u64 ticket_s;
    __shared__ long long dims[2];
    __shared__ u64 epoch_s;
    __shared__ u32 finishes_s;
    if (threadIdx.x == 0) {
        // Tickets in the order blocks start, every slice of a tile before
        // the next tile's, so every tile's predecessors run.
        ticket_s = atomicAdd(&state[0], 1ull);
        dims[0] = (long long)meta[SCHOOLBOOK_META_UN], dims[1] = (long long)meta[SCHOOLBOOK_META_VN];
        epoch_s = meta[SCHOOLBOOK_META_EPOCH];
    }
    __syncthreads();
    const long long un = dims[0], vn = dims[1], n = un + vn;
    const u64 tile = ticket_s / slices, slice = ticket_s % slices, tiles = gridDim.x / slices;
    const u32 lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // The tile's lowest column (tile 0's first three are below 0: empty),
    // and this lane's first.
    const long long k0 = (long long)tile * SCHOOLBOOK_COLUMNS - 3, kb = k0 + SCHOOLBOOK_LANE_COLUMNS * lane;
    // The terms u_i v_(k-i) of the tile's columns: i from max(0, k0 - vn +
    // 1) to min(k0 + SPAN - 1, un - 1), cut among the slices and then the
    // warps. Column kb + c has those with 0 <= kb + c - i < vn: w[c] holds
    // v_(kb+c-i) (0 outside v), and the next i needs one new word, w[0]'s.
    const long long lo = k0 - vn + 1 > 0 ? k0 - vn + 1 : 0,
                    hi = k0 + SCHOOLBOOK_SPAN - 1 < un - 1 ? k0 + SCHOOLBOOK_SPAN - 1 : un - 1;
    schoolbook_sum sum[SCHOOLBOOK_LANE_COLUMNS] = {};
    auto word = [&](long long j) -> u64 { return j >= 0 && j < vn ? __ldg(&v[j]) : 0; };
    if (lo <= hi) {
        const long long len = hi - lo + 1;
        const long long a = lo + len * (long long)slice / slices, b = lo + len * (long long)(slice + 1) / slices;
        const long long from = a + (b - a) * warp / SCHOOLBOOK_WARPS, to = a + (b - a) * (warp + 1) / SCHOOLBOOK_WARPS;
        u64 w[SCHOOLBOOK_LANE_COLUMNS];
#pragma unroll
        for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) w[c] = word(kb + c - from);
#pragma unroll 4
        for (long long i = from; i < to; i++) {
            const u64 x = __ldg(&u[i]);
#pragma unroll
            for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) schoolbook_mac4(sum[c], x, w[c]);
#pragma unroll
            for (int c = SCHOOLBOOK_LANE_COLUMNS - 1; c > 0; c--) w[c] = w[c - 1];
            w[0] = word(kb - i - 1);
        }
    }
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        const schoolbook_sum &q = sum[c];
        u64 s0 = q.acc[0], s1 = q.acc[2], s2 = q.cnt[2];
        schoolbook_add(s0, s1, s2, q.acc[1] << 32, (q.acc[1] >> 32) + ((u64)q.cnt[1] << 32), 0);
        schoolbook_add(s0, s1, s2, 0, q.cnt[0], 0);
        part[0][warp][c * 32 + lane] = s0, part[1][warp][c * 32 + lane] = s1, part[2][warp][c * 32 + lane] = s2;
    }
    __syncthreads();
    // The block's sums, a thread a column, then (with slices) the tile's.
    const u32 at = threadIdx.x;
    u64 t0 = 0, t1 = 0, t2 = 0;
    if (at < SCHOOLBOOK_SPAN) {
#pragma unroll
        for (int q = 0; q < SCHOOLBOOK_WARPS; q++) schoolbook_add(t0, t1, t2, part[0][q][at], part[1][q][at], part[2][q][at]);
    }
    if (slices > 1) {
        u64 *mine = partial + (tile * slices + slice) * 3 * SCHOOLBOOK_SPAN;
        if (at < SCHOOLBOOK_SPAN) {
            mine[at] = t0, mine[SCHOOLBOOK_SPAN + at] = t1, mine[2 * SCHOOLBOOK_SPAN + at] = t2;
            __threadfence();
        }
        __syncthreads();
        if (threadIdx.x == 0) finishes_s = atomicAdd(&arrived[tile], 1ull) == slices - 1;
        __syncthreads();
        if (!finishes_s) return;
        __threadfence();
        if (at < SCHOOLBOOK_SPAN) {
            for (u32 q = 0; q < slices; q++) {
                if (q == slice) continue;
                const u64 *theirs = partial + (tile * slices + q) * 3 * SCHOOLBOOK_SPAN;
                schoolbook_add(t0, t1, t2, __ldcg(&theirs[at]), __ldcg(&theirs[SCHOOLBOOK_SPAN + at]),
                               __ldcg(&theirs[2 * SCHOOLBOOK_SPAN + at]));
            }
        }
    }
    __syncthreads();  // every warp's reads of part done
    if (at < SCHOOLBOOK_SPAN) part[0][0][at] = t0, part[1][0][at] = t1, part[2][0][at] = t2;
    __syncthreads();
    if (warp != 0) return;
    // The lane's four columns kb + c, then from the lane below its column
    // 3's s1 and s2 and column 2's s2 (lane 0 has none below: its columns
    // 0 to 2 only feed column 3, which needs none of them).
    u64 x0[SCHOOLBOOK_LANE_COLUMNS], x1[SCHOOLBOOK_LANE_COLUMNS], x2[SCHOOLBOOK_LANE_COLUMNS];
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        x0[c] = part[0][0][c * 32 + lane], x1[c] = part[1][0][c * 32 + lane], x2[c] = part[2][0][c * 32 + lane];
    }
    const bool bottom = lane == 0;
    u64 below1 = __shfl_up_sync(0xffffffffu, x1[3], 1), below2_3 = __shfl_up_sync(0xffffffffu, x2[3], 1),
        below2_2 = __shfl_up_sync(0xffffffffu, x2[2], 1);
    if (bottom) below1 = below2_3 = below2_2 = 0;
    // t_c = s0 + s1 (column below) + s2 (two below), and its carry gamma_c.
    const u64 one_below[SCHOOLBOOK_LANE_COLUMNS] = {below1, x1[0], x1[1], x1[2]};
    const u64 two_below[SCHOOLBOOK_LANE_COLUMNS] = {below2_2, below2_3, x2[0], x2[1]};
    u64 t[SCHOOLBOOK_LANE_COLUMNS], gamma[SCHOOLBOOK_LANE_COLUMNS];
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        t[c] = x0[c] + one_below[c];
        gamma[c] = t[c] < one_below[c];
        t[c] += two_below[c];
        gamma[c] += t[c] < two_below[c];
    }
    u64 gamma_below = __shfl_up_sync(0xffffffffu, gamma[3], 1);
    if (bottom) gamma_below = 0;
    // Each limb before the carries between limbs, its (g, p)
    // (carry_scan.cuh; the helper columns propagate), and the lane's.
    u64 limb[SCHOOLBOOK_LANE_COLUMNS];
    u32 gp[SCHOOLBOOK_LANE_COLUMNS], lane_gp = 2;
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        limb[c] = t[c] + (c == 0 ? gamma_below : gamma[c - 1]);
        const bool own = !bottom || c >= 3;
        gp[c] = own ? (u32)(limb[c] < t[c]) | (u32)(limb[c] == ~0ull) << 1 : 2u;
        lane_gp = gp_combine(gp[c], lane_gp);
    }
    u32 exclusive;
    const u32 inclusive = warp_scan_gp(lane_gp, lane, &exclusive);
    const u32 tile_gp = __shfl_sync(0xffffffffu, inclusive, 31);
    u32 carry_in = 0;
    // Tile 0 has no carry in (and no predecessor to look back at).
    if (lane == 0) carry_in = scan_carry_in(state, tile, tiles - 1, tile_gp, tile ? 2u : 0u, epoch_s, nullptr);
    carry_in = __shfl_sync(0xffffffffu, carry_in, 0);
    u32 carry = (exclusive & 1) | ((exclusive >> 1) & carry_in);
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        limbs[SCHOOLBOOK_LANE_COLUMNS * lane + c] = limb[c] + carry;
        carry = (gp[c] & 1) | ((gp[c] >> 1) & carry);
    }
    __syncwarp();
    // The tile's own limbs, consecutive lanes on consecutive limbs (over
    // PCIe, whole lines rather than a word every 32 bytes).
#pragma unroll
    for (int c = 0; c < SCHOOLBOOK_LANE_COLUMNS; c++) {
        const u32 at_span = c * 32 + lane;
        const long long k = k0 + at_span;
        if (at_span >= 3 && k < n) r[k] = limbs[at_span];
    }
}
