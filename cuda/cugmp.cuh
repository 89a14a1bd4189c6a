// Shared definitions for cuGMP's kernels. Every kernel is `extern "C"` so the
// host loads it by its plain name.
#pragma once
#include <stdint.h>

typedef uint64_t u64;
typedef uint32_t u32;
// GMP's limb: 64 bits on every platform cuGMP supports.
typedef u64 limb_t;
