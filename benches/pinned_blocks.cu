// What pinned host blocks cost and how they behave, for a pool of them
// under GMP's numbers: the time to make and release a block of each size
// by the driver's allocation (cuMemHostAlloc) and by page-locking an
// anonymous mapping (mmap, then cuMemHostRegister), the DMA rates from and
// to each, and what a forked child sees of each block, and whether the
// parent's DMA still moves what the parent writes after the fork.
//
//   nvcc -O2 -std=c++17 benches/pinned_blocks.cu -o pinned_blocks -lcuda
//   ./pinned_blocks [MiB ...]       (default 4 16 64 256)
#include <cuda.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                  \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            const char* s_ = nullptr;                                             \
            cuGetErrorString(r_, &s_);                                            \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_);   \
            std::exit(1);                                                         \
        }                                                                         \
    } while (0)

static double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// The child's view of a block written with the pattern: 0 all there, 1 a
// limb differs, killed by a signal otherwise (printed by the parent).
static const char* fork_view(unsigned long long* p, size_t limbs) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t i = 0; i < limbs; i += 4096 / 8)
            if (p[i] != i * 0x9E3779B97F4A7C15ull) _exit(1);
        p[0] = 7;  // the child's write must not reach the parent's block
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return strsignal(WTERMSIG(status));
    return WEXITSTATUS(status) == 0 ? "reads the block" : "reads other limbs";
}

// After the fork: the parent writes a new pattern, uploads it, downloads
// it into a second block and compares.
static const char* dma_after_fork(unsigned long long* p, unsigned long long* q, size_t limbs, CUdeviceptr d, CUstream s) {
    if (p[0] != 0) return "the child's write reached the parent";
    for (size_t i = 0; i < limbs; i++) p[i] = ~i;
    CHECK(cuMemcpyHtoDAsync(d, p, limbs * 8, s));
    CHECK(cuMemcpyDtoHAsync(q, d, limbs * 8, s));
    CHECK(cuStreamSynchronize(s));
    for (size_t i = 0; i < limbs; i++)
        if (q[i] != ~i) return "DMA moved stale limbs";
    return "DMA moves the parent's limbs";
}

static void fill(unsigned long long* p, size_t limbs) {
    for (size_t i = 0; i < limbs; i++) p[i] = i * 0x9E3779B97F4A7C15ull;
}

static double rate(size_t bytes, double ms) { return bytes / ms / 1e6; }

int main(int argc, char** argv) {
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; i++) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
    if (sizes.empty()) sizes = {4, 16, 64, 256};
    CHECK(cuInit(0));
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CUstream s;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    std::printf("| MiB | way | make ms | release ms | up GB/s | down GB/s | a forked child | the parent after the fork |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (size_t mib : sizes) {
        size_t bytes = mib << 20, limbs = bytes / 8;
        CUdeviceptr d;
        CHECK(cuMemAlloc(&d, bytes));
        for (int way = 0; way < 3; way++) {
            const char* name = way == 0 ? "cuMemHostAlloc" : way == 1 ? "mmap + cuMemHostRegister" : "mmap, huge, + cuMemHostRegister";
            unsigned long long *p = nullptr, *q = nullptr;
            double t0 = now_ms();
            auto make = [&](unsigned long long** out) {
                if (way == 0) {
                    CHECK(cuMemHostAlloc((void**)out, bytes, CU_MEMHOSTALLOC_PORTABLE));
                } else {
                    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    if (m == MAP_FAILED) { std::perror("mmap"); std::exit(1); }
                    if (way == 2) madvise(m, bytes, MADV_HUGEPAGE);
                    CHECK(cuMemHostRegister(m, bytes, CU_MEMHOSTREGISTER_PORTABLE));
                    *out = (unsigned long long*)m;
                }
            };
            make(&p);
            double made = now_ms() - t0;
            make(&q);
            fill(p, limbs);
            double up = 1e30, down = 1e30;
            for (int r = 0; r < 5; r++) {
                double a = now_ms();
                CHECK(cuMemcpyHtoDAsync(d, p, bytes, s));
                CHECK(cuStreamSynchronize(s));
                double b = now_ms();
                CHECK(cuMemcpyDtoHAsync(q, d, bytes, s));
                CHECK(cuStreamSynchronize(s));
                double c = now_ms();
                up = std::min(up, b - a);
                down = std::min(down, c - b);
            }
            const char* child = fork_view(p, limbs);
            const char* parent = dma_after_fork(p, q, limbs, d, s);
            double t1 = now_ms();
            if (way == 0) {
                CHECK(cuMemFreeHost(p));
            } else {
                CHECK(cuMemHostUnregister(p));
                munmap(p, bytes);
            }
            double released = now_ms() - t1;
            if (way == 0) CHECK(cuMemFreeHost(q)); else { CHECK(cuMemHostUnregister(q)); munmap(q, bytes); }
            std::printf("| %zu | %s | %.3f | %.3f | %.1f | %.1f | %s | %s |\n", mib, name, made, released, rate(bytes, up), rate(bytes, down), child, parent);
        }
        CHECK(cuMemFree(d));
    }
    return 0;
}
