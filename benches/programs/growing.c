/* Numbers that grow from nothing, as the leaves of a binary splitting make
 * them (benches/programs/pi.c's leaf and the first level above it): each
 * leaf sets three new numbers from one limb, multiplies them by single
 * limbs and by each other, then clears them. Most of GMP's work here is
 * the memory functions: each growth past a number's room reallocates it.
 * Prints the best of five passes, nanoseconds a leaf.
 *
 *   growing LEAVES [idle]
 *
 * With "idle" a second thread is started first and sleeps: glibc's malloc
 * then leaves its single-threaded path, as in any process with threads
 * (cuGMP's own threads where a GPU serves).
 *
 *   cc -O2 growing.c -lgmp -lpthread -o growing   (or -lcugmp) */
#include <gmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *sleeper(void *arg) {
    for (;;) pause();
    return arg;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long leaves = argc > 1 ? atol(argv[1]) : 0;
    if (leaves < 1) {
        fprintf(stderr, "usage: growing LEAVES [idle]\n");
        return 2;
    }
    if (argc > 2 && strcmp(argv[2], "idle") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, sleeper, NULL) != 0) return 1;
        pthread_detach(t);
    }
    double best = 1e30;
    unsigned long check = 0;
    for (int pass = 0; pass < 5; pass++) {
        double start = now();
        for (unsigned long a = 1; a <= (unsigned long)leaves; a++) {
            mpz_t p, q, t;
            mpz_init(p);
            mpz_init(q);
            mpz_init(t);
            mpz_set_ui(p, 6 * a - 5);
            mpz_mul_ui(p, p, 2 * a - 1);
            mpz_mul_ui(p, p, 6 * a - 1);
            mpz_neg(p, p);
            mpz_set_ui(q, a);
            mpz_mul_ui(q, q, a);
            mpz_mul_ui(q, q, a);
            mpz_mul_ui(q, q, 10939058860032000UL);
            mpz_mul_ui(t, p, 13591409 + 545140134 * a);
            mpz_mul(t, t, q);
            mpz_add(t, t, p);
            mpz_mul(p, p, q);
            check += mpz_getlimbn(t, 0) ^ mpz_getlimbn(p, 1);
            mpz_clear(p);
            mpz_clear(q);
            mpz_clear(t);
        }
        double took = now() - start;
        if (took < best) best = took;
    }
    printf("%ld leaves%s: %.1f ns a leaf (check %lx)\n", leaves, argc > 2 ? ", a thread beside" : "", best / (double)leaves * 1e9, check);
    return 0;
}
