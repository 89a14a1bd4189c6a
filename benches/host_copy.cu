// Where the end-to-end product's transfers lose against PCIe: the host-side
// copies measured alone, on the GPU machine (which has nvcc and no Rust):
//   bash scripts/device-run.sh hostcopy
// builds this with the device's nvcc and prints one markdown table.
//
// An end-to-end product moves the caller's pageable limbs through pinned
// slots (src/gpu/staging.rs): threads copy pageable -> pinned while the DMA
// of the previous chunk runs, and back; the result lands in memory GMP has
// just allocated, so the copy back also takes that memory's first page
// faults. Each row times one of those pieces alone, at 1 to 16 threads, so
// that the copy rates can be set against the DMA's and the PCIe floor's.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                  \
    do {                                                                          \
        cudaError_t e_ = (x);                                                     \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));              \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct Part {
    char *dst;
    const char *src;
    size_t bytes;
};

static void *copy_part(void *arg) {
    Part *p = (Part *)arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

// memcpy(dst, src, bytes) cut into `threads` contiguous parts, one a thread.
static void threaded_copy(char *dst, const char *src, size_t bytes, int threads) {
    pthread_t tid[64];
    Part parts[64];
    size_t per = (bytes + threads - 1) / threads;
    for (int i = 0; i < threads; i++) {
        size_t at = (size_t)i * per;
        parts[i].dst = dst + at;
        parts[i].src = src + at;
        parts[i].bytes = at >= bytes ? 0 : (bytes - at < per ? bytes - at : per);
        pthread_create(&tid[i], NULL, copy_part, &parts[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
}

// GB/s over `bytes`: the median of 5 runs of `what`, each after `setup`
// (untimed).
template <typename Setup, typename What>
static double rate(size_t bytes, Setup setup, What what) {
    double t[5];
    for (int r = 0; r < 5; r++) {
        setup();
        double start = now();
        what();
        t[r] = now() - start;
    }
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (t[j] < t[i]) {
                double x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
    return bytes / t[2] / 1e9;
}

int main(void) {
    const int thread_counts[] = {1, 2, 4, 8, 16};
    const size_t sizes[] = {8u << 20, 80u << 20, 160u << 20};  // 10^6-ish limbs, 10^7 limbs up, down
    CHECK(cudaFree(0));
    printf("| bytes | what | 1 thread | 2 | 4 | 8 | 16 |\n|---|---|---|---|---|---|---|\n");
    for (size_t bytes : sizes) {
        char *pageable = (char *)malloc(bytes), *pinned, *device;
        memset(pageable, 1, bytes);
        CHECK(cudaHostAlloc((void **)&pinned, bytes, cudaHostAllocDefault));
        memset(pinned, 2, bytes);
        CHECK(cudaMalloc((void **)&device, bytes));
        const char *names[] = {"pageable -> pinned (upload staging)", "pinned -> pageable, touched",
                               "pinned -> fresh malloc (first touch: the result's download)"};
        for (int kind = 0; kind < 3; kind++) {
            printf("| %zu | %s |", bytes, names[kind]);
            for (int threads : thread_counts) {
                char *fresh = NULL;
                auto none = [] {};
                double gbs;
                if (kind == 0) {
                    gbs = rate(bytes, none, [&] { threaded_copy(pinned, pageable, bytes, threads); });
                } else if (kind == 1) {
                    gbs = rate(bytes, none, [&] { threaded_copy(pageable, pinned, bytes, threads); });
                } else {
                    gbs = rate(bytes, [&] { free(fresh); fresh = (char *)malloc(bytes); },
                               [&] { threaded_copy(fresh, pinned, bytes, threads); });
                    free(fresh);
                }
                printf(" %.1f |", gbs);
            }
            printf("\n");
        }
        auto none = [] {};
        auto dma = [&](void *to, const void *from, cudaMemcpyKind kind) {
            return rate(bytes, none, [&] { CHECK(cudaMemcpy(to, from, bytes, kind)); });
        };
        double up = dma(device, pinned, cudaMemcpyHostToDevice), down = dma(pinned, device, cudaMemcpyDeviceToHost);
        double up_pageable = dma(device, pageable, cudaMemcpyHostToDevice);
        double down_pageable = dma(pageable, device, cudaMemcpyDeviceToHost);
        printf("| %zu | DMA pinned: up %.1f, down %.1f; driver from/to pageable: up %.1f, down %.1f | | | | | |\n", bytes, up,
               down, up_pageable, down_pageable);
        CHECK(cudaFree(device));
        CHECK(cudaFreeHost(pinned));
        free(pageable);
    }
    return 0;
}
