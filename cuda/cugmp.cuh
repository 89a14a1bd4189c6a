// Shared definitions for cuGMP's kernels. Every kernel is `extern "C"` so the
// host loads it by its plain name.
#pragma once
#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;
// GMP's limb: 64 bits on every platform cuGMP supports.
typedef u64 limb_t;

// A loop over i in [0, n) that works for any grid: 64-bit indices, so sizes
// past 2^32 elements are fine.
#define GRID_STRIDE(i, n) for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (u64)gridDim.x * blockDim.x)

// Element-wise kernels: block b covers limbs [b * ELEMENTWISE_BLOCK, ...), and
// ELEMENT(k) is the k-th limb of this thread there. The host's launch geometry
// (src/gpu/device.rs, Gpu::elementwise_grid) uses the same two numbers.
#define ELEMENTWISE_THREADS 256
#define ELEMENTS_PER_THREAD 4
#define ELEMENTWISE_BLOCK (ELEMENTWISE_THREADS * ELEMENTS_PER_THREAD)
#define ELEMENT(k) ((u64)blockIdx.x * ELEMENTWISE_BLOCK + (u64)(k) * ELEMENTWISE_THREADS + threadIdx.x)
