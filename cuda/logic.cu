// Limb-wise logic on natural numbers (mpn level): r[i] = a[i] OP b[i].
// Grid-stride loops: any n with any grid; 64-bit indices, so sizes past 2^32
// limbs are fine.
#include "cugmp.cuh"

extern "C" __global__ void cugmp_and_n(limb_t *__restrict__ r, const limb_t *__restrict__ a,
                                       const limb_t *__restrict__ b, u64 n) {
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        r[i] = a[i] & b[i];
}
