// Products of binary polynomials by the additive FFT over GF(2^64)
// (cugmp_gf2x_mul): the method, the basis and the order of the steps are
// in src/gpu/gf2x.rs, whose tests run the same steps on the CPU.
//
// GF(2^64) = GF(2)[y]/(y^64 + y^4 + y^3 + y + 1), an element a u64 whose
// bit i is the coefficient of y^i. Products are carry-less products of
// 32-bit halves by integer multiplications of their bits 4 apart (at most
// 8 terms meet in a column, so no carry reaches the next column of the
// same residue mod 4), three halves by Karatsuba, then the reduction.
//
// A tile is the elements whose index agrees outside the bits [s, s + w)
// and the lo = min(s, 2) bits below 2: lo + w <= GF2X_TILE_BITS + 2, at
// most 4096 elements (32 KiB) in shared memory, one block a tile.
#include "cugmp.cuh"

#define GF2X_TILE_BITS 10
#define GF2X_THREADS 256
#define GF2X_TILE_MAX (1 << (GF2X_TILE_BITS + 2))
#define GF2X_PER_THREAD (GF2X_TILE_MAX / GF2X_THREADS)

// The carry-less product of two 32-bit words.
__device__ __forceinline__ u64 clmul32(u32 x, u32 y) {
    const u32 m0 = 0x11111111u, m1 = 0x22222222u, m2 = 0x44444444u, m3 = 0x88888888u;
    u32 x0 = x & m0, x1 = x & m1, x2 = x & m2, x3 = x & m3;
    u32 y0 = y & m0, y1 = y & m1, y2 = y & m2, y3 = y & m3;
    u64 z0 = ((u64)x0 * y0) ^ ((u64)x1 * y3) ^ ((u64)x2 * y2) ^ ((u64)x3 * y1);
    u64 z1 = ((u64)x0 * y1) ^ ((u64)x1 * y0) ^ ((u64)x2 * y3) ^ ((u64)x3 * y2);
    u64 z2 = ((u64)x0 * y2) ^ ((u64)x1 * y1) ^ ((u64)x2 * y0) ^ ((u64)x3 * y3);
    u64 z3 = ((u64)x0 * y3) ^ ((u64)x1 * y2) ^ ((u64)x2 * y1) ^ ((u64)x3 * y0);
    return (z0 & 0x1111111111111111ull) | (z1 & 0x2222222222222222ull) | (z2 & 0x4444444444444444ull) | (z3 & 0x8888888888888888ull);
}

// a b in GF(2^64).
__device__ __forceinline__ u64 field_mul(u64 a, u64 b) {
    u32 a0 = (u32)a, a1 = (u32)(a >> 32), b0 = (u32)b, b1 = (u32)(b >> 32);
    u64 p0 = clmul32(a0, b0), p2 = clmul32(a1, b1);
    u64 p1 = clmul32(a0 ^ a1, b0 ^ b1) ^ p0 ^ p2;
    u64 lo = p0 ^ (p1 << 32), hi = p2 ^ (p1 >> 32);
    // y^64 = y^4 + y^3 + y + 1, twice: the second fold has at most 4 bits.
    u64 over = (hi >> 63) ^ (hi >> 61) ^ (hi >> 60);
    hi ^= over;
    return lo ^ hi ^ (hi << 1) ^ (hi << 3) ^ (hi << 4);
}

// Coefficient q after one pass of a Taylor expansion (src/gpu/gf2x.rs,
// `Taylor`): within blocks of 2^lambda at index bits [sigma, ...), the
// half m = 2^(lambda-1), d = 2^delta. Forward, the low half takes
// f_hi[j - d] (j >= d) and f_hi[m - 2d + j] (d <= j < 2d), the high half
// its own top d coefficients; the inverse drops the low half's second
// term (it cancels).
template <typename Read>
__device__ __forceinline__ u64 taylor_value(Read f, u64 q, u32 sigma, u32 lambda, u32 delta, bool inverse) {
    u64 r = (q >> sigma) & ((1ull << lambda) - 1);
    u64 m = 1ull << (lambda - 1), d = 1ull << delta;
    u64 v = f(q);
    if (r < m) {
        if (r >= d) v ^= f(q + ((m - d) << sigma));
        if (!inverse && r >= d && r < 2 * d) v ^= f(q + ((2 * m - 2 * d) << sigma));
    } else if (r - m < d) {
        v ^= f(q + ((m - d) << sigma));
    }
    return v;
}

// v[j] = chunk j of the limbs x (32 bits), 0 past them.
extern "C" __global__ void cugmp_gf2x_chunks(const u64 *x, u64 limbs, u64 *v, u64 n) {
    const u32 *w = (const u32 *)x;
    GRID_STRIDE(j, n) v[j] = j < 2 * limbs ? (u64)w[j] : 0;
}

// x[j] = x[j] y[j] (y null: x[j]^2).
extern "C" __global__ void cugmp_gf2x_pointwise(u64 *x, const u64 *y, u64 n) {
    GRID_STRIDE(j, n) x[j] = field_mul(x[j], y ? y[j] : x[j]);
}

// Word w of the binary product: the low half of coefficient w and the
// high half of coefficient w - 1.
extern "C" __global__ void cugmp_gf2x_gather(const u64 *h, u64 *r, u64 words) {
    u32 *out = (u32 *)r;
    GRID_STRIDE(w, words) out[w] = (u32)h[w] ^ (w ? (u32)(h[w - 1] >> 32) : 0u);
}

// One Taylor pass over the whole array, out of place.
extern "C" __global__ void cugmp_gf2x_taylor(const u64 *in, u64 *out, u64 n, u64 sigma, u64 lambda, u64 delta, u64 inverse) {
    auto f = [in](u64 q) { return in[q]; };
    GRID_STRIDE(q, n) out[q] = taylor_value(f, q, (u32)sigma, (u32)lambda, (u32)delta, inverse != 0);
}

// The element of tile-local index u in block `o`'s tile.
__device__ __forceinline__ u64 tile_index(u64 u, u64 o, u32 s, u32 w, u32 lo) {
    u32 mid = s - lo;
    return (u & ((1ull << lo) - 1)) | ((o & ((1ull << mid) - 1)) << lo) | ((u >> lo) << s) | ((o >> mid) << (s + w));
}

// This block's tile of window (s, w): its low index bits (lo), its size,
// and its elements between v and shared memory.
struct Tile {
    u64 *v, *tile, o;
    u32 s, w, lo, size;
    __device__ Tile(u64 *v_, u64 *tile_, u64 s_, u64 w_)
        : v(v_), tile(tile_), o(blockIdx.x), s((u32)s_), w((u32)w_), lo(s_ < 2 ? (u32)s_ : 2), size(1u << (lo + (u32)w_)) {}
    __device__ u64 index(u64 u) const { return tile_index(u, o, s, w, lo); }
    // v's elements into the tile, then a barrier.
    __device__ void load() const {
        for (u32 u = threadIdx.x; u < size; u += GF2X_THREADS) tile[u] = v[index(u)];
        __syncthreads();
    }
    // The tile back into v.
    __device__ void store() const {
        for (u32 u = threadIdx.x; u < size; u += GF2X_THREADS) v[index(u)] = tile[u];
    }
};

// Passes of the conversion (3 words each: sigma, lambda, delta, at
// `first` in `passes`) on tiles of window (s, w); inverse runs them in
// reverse order, each inverted.
extern "C" __global__ void __launch_bounds__(GF2X_THREADS) cugmp_gf2x_convert_tile(u64 *v, u64 s, u64 w, const u64 *passes, u64 first, u64 count, u64 inverse) {
    __shared__ u64 tile[GF2X_TILE_MAX];
    const Tile own(v, tile, s, w);
    const u32 lo = own.lo, size = own.size;
    own.load();
    auto f = [&](u64 q) { return tile[q]; };
    for (u64 c = 0; c < count; c++) {
        const u64 *p = passes + first + 3 * (inverse ? count - 1 - c : c);
        u32 sigma = (u32)(p[0] - s + lo), lambda = (u32)p[1], delta = (u32)p[2];
        u64 vals[GF2X_PER_THREAD];
#pragma unroll
        for (int e = 0; e < GF2X_PER_THREAD; e++) {
            u32 u = threadIdx.x + e * GF2X_THREADS;
            if (u < size) vals[e] = taylor_value(f, u, sigma, lambda, delta, inverse != 0);
        }
        __syncthreads();
#pragma unroll
        for (int e = 0; e < GF2X_PER_THREAD; e++) {
            u32 u = threadIdx.x + e * GF2X_THREADS;
            if (u < size) tile[u] = vals[e];
        }
        __syncthreads();
    }
    own.store();
}

// Layers [first, end) of the FFT on tiles of window (s, w): forward from
// the top layer down, a += t b then b += a; inverse from the bottom up,
// b += a then a += t b. The twiddle of the block holding element p at
// layer i is the point of index (p >> (i + 1)) << 1: low[r & 0xffff] ^
// high[r >> 16].
extern "C" __global__ void __launch_bounds__(GF2X_THREADS) cugmp_gf2x_fft_tile(u64 *v, u64 s, u64 w, u64 first, u64 end, u64 inverse, const u64 *low, const u64 *high) {
    __shared__ u64 tile[GF2X_TILE_MAX];
    const Tile own(v, tile, s, w);
    const u32 lo = own.lo, size = own.size;
    own.load();
    u32 layers = (u32)(end - first);
    for (u32 step = 0; step < layers; step++) {
        u32 i = inverse ? (u32)first + step : (u32)end - 1 - step;
        u32 b = i - (u32)s + lo;
        for (u32 j = threadIdx.x; j < size / 2; j += GF2X_THREADS) {
            u32 ua = ((j >> b) << (b + 1)) | (j & ((1u << b) - 1)), ub = ua | (1u << b);
            u64 r = (own.index(ua) >> (i + 1)) << 1;
            u64 t = low[r & 0xffff] ^ high[r >> 16];
            u64 x = tile[ua], y = tile[ub];
            if (inverse) {
                y ^= x;
                x ^= field_mul(t, y);
            } else {
                x ^= field_mul(t, y);
                y ^= x;
            }
            tile[ua] = x;
            tile[ub] = y;
        }
        __syncthreads();
    }
    own.store();
}
