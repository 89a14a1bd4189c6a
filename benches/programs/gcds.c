/* gcds from several threads at once, as a program of many independent
 * gcds makes them: each thread takes the gcd of two LIMBS-limb numbers
 * with a common factor of a third of their size, COUNT times, on numbers
 * of its own. Prints the wall time and a checksum of the gcds (the same on
 * every library). Measures whether the half-gcd's steps shared among cores
 * (src/algorithms/hgcd.rs) slow a program whose own threads fill the
 * cores.
 *
 *   gcds THREADS LIMBS COUNT [warm]
 *
 * With `warm`, one product of 10^5 limbs and a second's sleep before the
 * clock starts: cuGMP opens its device beside a process's first large
 * operation, and this keeps that opening out of the time.
 *   cc -O2 gcds.c -lgmp -lpthread -o gcds   (or -lcugmp) */
#include <gmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

static long limbs, count;

static void *work(void *arg) {
    unsigned long seed = (unsigned long)(size_t)arg;
    gmp_randstate_t r;
    gmp_randinit_default(r);
    gmp_randseed_ui(r, seed + 1);
    mpz_t a, b, c, g;
    mpz_inits(a, b, c, g, NULL);
    unsigned long sum = 0;
    for (long i = 0; i < count; i++) {
        mpz_urandomb(c, r, 64 * limbs / 3);
        mpz_urandomb(a, r, 64 * limbs - 64 * limbs / 3);
        mpz_urandomb(b, r, 64 * limbs - 64 * limbs / 3);
        mpz_mul(a, a, c);
        mpz_mul(b, b, c);
        mpz_gcd(g, a, b);
        sum += mpz_fdiv_ui(g, 1000000007UL);
    }
    mpz_clears(a, b, c, g, NULL);
    gmp_randclear(r);
    return (void *)(size_t)sum;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: gcds THREADS LIMBS COUNT\n");
        return 2;
    }
    int threads = atoi(argv[1]);
    limbs = atol(argv[2]);
    count = atol(argv[3]);
    if (threads < 1 || threads > 256 || limbs < 3 || count < 1) {
        fprintf(stderr, "gcds: THREADS 1 to 256, LIMBS from 3, COUNT from 1\n");
        return 2;
    }
    if (argc > 4 && strcmp(argv[4], "warm") == 0) {
        mpz_t x;
        mpz_init(x);
        mpz_setbit(x, 64 * 100000 - 1);
        mpz_sub_ui(x, x, 1);
        mpz_mul(x, x, x);
        mpz_clear(x);
        sleep(1);
    }
    pthread_t t[256];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, (void *)(size_t)i);
    unsigned long checksum = 0;
    for (int i = 0; i < threads; i++) {
        void *sum;
        pthread_join(t[i], &sum);
        checksum = checksum * 31 + (unsigned long)(size_t)sum;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("threads=%d limbs=%ld count=%ld seconds=%.3f checksum=%lx\n", threads, limbs, count, s, checksum);
    return 0;
}
