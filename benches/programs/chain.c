/* Products of products end to end through the GMP API: x = a b and y = c d
 * (a, b, c, d of n/2 limbs each, made three times 200 ms apart), then z = x y and z = x^2 timed, median
 * of REPS after three untimed ones with a pause between (for cuGMP: the
 * pool's thread makes the pinned blocks the first products asked for, so
 * the timed products' operands and results lie in pinned memory, as the
 * large numbers of a program that multiplies its products do). Prints ms,
 * the PCIe floor (32 n bytes for a product, 24 n for a square, at 55 GB/s),
 * cuGMP's transfers by DMA alone a product (cugmp_pinned_transfers, where
 * the library has it) and a checksum of each result (z mod 2^61 - 1) to
 * compare with GMP's. With `random`, x and y are new numbers of n limbs from
 * mpz_urandomb instead (cleared and made again three times 200 ms apart):
 * operands that no product made.
 *
 *   chain [LIMBS,LIMBS,...] [REPS] [products|random]
 *   cc -O2 chain.c -lgmp -o chain      (or -lcugmp) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* cuGMP's count of transfers by DMA alone (cugmp_pinned_transfers), or
 * NULL on GMP. */
static unsigned long (*pinned_transfers)(void);

/* The median seconds of `reps` calls of z = x y (y == x: a square), after
 * three untimed products 20 ms apart; `*dma`: the timed products'
 * transfers by DMA alone, a product (cuGMP). */
static double timed(mpz_t z, const mpz_t x, const mpz_t y, int reps, double *dma) {
    for (int i = 0; i < 3; i++) {
        mpz_mul(z, x, y);
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    double *t = malloc(reps * sizeof *t);
    unsigned long before = pinned_transfers ? pinned_transfers() : 0;
    for (int i = 0; i < reps; i++) {
        double s = now();
        mpz_mul(z, x, y);
        t[i] = now() - s;
    }
    *dma = pinned_transfers ? (double)(pinned_transfers() - before) / reps : 0;
    qsort(t, reps, sizeof *t, by_value);
    double m = t[reps / 2];
    free(t);
    return m;
}

int main(int argc, char **argv) {
    const char *sizes = argc > 1 ? argv[1] : "1000000,2000000,10000000";
    int reps = argc > 2 ? atoi(argv[2]) : 21;
    if (reps < 1) reps = 1;
    int random = argc > 3 && strcmp(argv[3], "random") == 0;
    if (argc > 3 && !random && strcmp(argv[3], "products") != 0) {
        fprintf(stderr, "chain: the third argument is products or random, not %s\n", argv[3]);
        return 2;
    }
    *(void **)&pinned_transfers = dlsym(RTLD_DEFAULT, "cugmp_pinned_transfers");
    gmp_randstate_t rng;
    gmp_randinit_default(rng);
    gmp_randseed_ui(rng, 20261201);
    mpz_t a, b, c, d, x, y, z, m;
    mpz_inits(a, b, c, d, x, y, z, m, NULL);
    mpz_ui_pow_ui(m, 2, 61);
    mpz_sub_ui(m, m, 1);
    printf("| n limbs | product ms | floor ms | product / floor | square ms | floor ms | square / floor | product / square | transfers by DMA alone, a product / a square | checksums |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    char *list = strdup(sizes);
    for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
        size_t n = strtoull(s, NULL, 10);
        mp_bitcnt_t bits = 64 * (n / 2);
        mpz_urandomb(a, rng, bits);
        mpz_urandomb(b, rng, bits);
        mpz_urandomb(c, rng, bits);
        mpz_urandomb(d, rng, bits);
        mpz_setbit(a, bits - 1);
        mpz_setbit(b, bits - 1);
        mpz_setbit(c, bits - 1);
        mpz_setbit(d, bits - 1);
        /* Three times, a pause after each: a product that finds no block
         * of its size kept asks the pool for one, and the next product of
         * that size takes it (cuGMP): y may take the block x asked for,
         * and x then has one from the third pass. */
        for (int i = 0; i < 3; i++) {
            if (random) {
                /* New numbers each time: their limbs are allocated anew. */
                mpz_clears(x, y, NULL);
                mpz_inits(x, y, NULL);
                mpz_urandomb(x, rng, 64 * n);
                mpz_urandomb(y, rng, 64 * n);
                mpz_setbit(x, 64 * n - 1);
                mpz_setbit(y, 64 * n - 1);
            } else {
                mpz_mul(x, a, b);
                mpz_mul(y, c, d);
            }
            struct timespec pause = {0, 200 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
        double dp, ds;
        double tp = timed(z, x, y, reps, &dp);
        mpz_t r;
        mpz_init(r);
        mpz_mod(r, z, m);
        unsigned long long sp = mpz_get_ui(r);
        double ts = timed(z, x, x, reps, &ds);
        mpz_mod(r, z, m);
        unsigned long long ss = mpz_get_ui(r);
        mpz_clear(r);
        double fp = 32.0 * n / 55e9, fs = 24.0 * n / 55e9;
        printf("| %zu | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2fx | %.2fx | %.1f / %.1f | %llx %llx |\n", n, tp * 1e3, fp * 1e3, tp / fp, ts * 1e3, fs * 1e3, ts / fs, tp / ts, dp, ds, sp, ss);
        fflush(stdout);
    }
    free(list);
    mpz_clears(a, b, c, d, x, y, z, m, NULL);
    gmp_randclear(rng);
    return 0;
}
