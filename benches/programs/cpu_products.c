/* The CPU engine's products with its schoolbook kernel on AVX-512 IFMA
 * (src/cpu/ifma.rs) against GMP's own loops, in one process: two copies of
 * libcugmp.so (two paths, so two libraries), the first loaded with
 * CUGMP_CPU_IFMA=0, both with CUGMP_GPU=off. Each size is timed on both in
 * turn, 15 passes, and the best of each is printed with the ratio; the
 * two products must be equal. With CPU_PRODUCTS_KERNELS=1 both copies keep
 * the kernel: two libraries' kernels against each other (copy A a build
 * before a change, copy B after it).
 *
 *   cpu_products COPY_A COPY_B mul|sqr SIZE...    (SIZE: n, or n x m as NxM)
 *   cp libcugmp.so /tmp/a.so; cp libcugmp.so /tmp/b.so
 *   cc -O2 cpu_products.c -ldl -o cpu_products */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t limb;
typedef void (*mul_fn)(limb *, const limb *, long, const limb *, long);
typedef void (*sqr_fn)(limb *, const limb *, long);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static limb a[8192], b[8192], r[2][16384];

static void *open_copy(const char *path) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        fprintf(stderr, "cpu_products: %s\n", dlerror());
        exit(1);
    }
    return h;
}

int main(int argc, char **argv) {
    if (argc < 5 || (strcmp(argv[3], "mul") && strcmp(argv[3], "sqr"))) {
        fprintf(stderr, "usage: cpu_products COPY_A COPY_B mul|sqr SIZE...\n");
        return 2;
    }
    const char *kernels = getenv("CPU_PRODUCTS_KERNELS");
    int both = kernels && !strcmp(kernels, "1");
    setenv("CUGMP_GPU", "off", 1);
    if (!both)
        setenv("CUGMP_CPU_IFMA", "0", 1);
    void *h[2];
    h[0] = open_copy(argv[1]);
    unsetenv("CUGMP_CPU_IFMA");
    h[1] = open_copy(argv[2]);
    mul_fn mul[2] = {(mul_fn)dlsym(h[0], "__gmpn_mul"), (mul_fn)dlsym(h[1], "__gmpn_mul")};
    sqr_fn sqr[2] = {(sqr_fn)dlsym(h[0], "__gmpn_sqr"), (sqr_fn)dlsym(h[1], "__gmpn_sqr")};
    int square = !strcmp(argv[3], "sqr");
    for (int i = 0; i < 8192; i++) {
        a[i] = (limb)i * 0x9e3779b97f4a7c15u + 7;
        b[i] = ~a[i] * 3;
    }
    for (int k = 4; k < argc; k++) {
        char *x = strchr(argv[k], 'x');
        long un = atol(argv[k]), vn = x ? atol(x + 1) : un;
        if (un < 1 || vn < 1 || vn > un || un > 8192) {
            fprintf(stderr, "cpu_products: %s: sizes 1 <= m <= n <= 8192\n", argv[k]);
            return 2;
        }
        if (square)
            vn = un;
        long reps = 3000000 / (un * vn) + 20;
        double best[2] = {1e9, 1e9};
        for (int pass = 0; pass < 15; pass++)
            for (int c = 0; c < 2; c++) {
                double t = now();
                for (long i = 0; i < reps; i++) {
                    if (square)
                        sqr[c](r[c], a, un);
                    else
                        mul[c](r[c], a, un, b, vn);
                    a[0] ^= r[c][un] & 1;
                }
                t = (now() - t) / reps;
                if (t < best[c])
                    best[c] = t;
            }
        for (int c = 0; c < 2; c++) {
            if (square)
                sqr[c](r[c], a, un);
            else
                mul[c](r[c], a, un, b, vn);
        }
        int same = !memcmp(r[0], r[1], sizeof(limb) * (un + vn));
        printf("%s %ldx%ld  %s %.1f ns  kernel %.1f ns  %.2fx%s\n", square ? "sqr" : "mul", un, vn, both ? "copy A's kernel" : "GMP's loops",
               best[0] * 1e9, best[1] * 1e9, best[0] / best[1], same ? "" : "  DIFFERENT");
        if (!same)
            return 1;
    }
    return 0;
}
