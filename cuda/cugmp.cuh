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
