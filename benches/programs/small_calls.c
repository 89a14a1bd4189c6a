/* Many small calls from several threads at once, as a program of small
 * numbers makes them: each thread multiplies two 2-limb numbers and adds
 * one to the product, N times, on numbers of its own. Prints the wall time
 * over N, nanoseconds a pair of calls (each thread's pairs run beside the
 * others'). Measures what a call costs cuGMP's routing, statistics and
 * profile (CUGMP_STATS, CUGMP_PROFILE) against the calls themselves. With
 * `sqrt`, each repetition instead adds one to a 2-limb number, asks whether it
 * is a perfect square and takes its square root (mpz_add_ui,
 * mpz_perfect_square_p, mpz_sqrt): nanoseconds a repetition.
 *
 *   small_calls THREADS N [sqrt]
 *
 *   cc -O2 small_calls.c -lgmp -lpthread -o small_calls   (or -lcugmp) */
#include <gmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n;
static int roots;
/* The squares found, kept so that the calls' results are used. */
static volatile long sink;

static void *work(void *arg) {
    mpz_t a, b, c;
    mpz_init_set_str(a, "123456789012345678901234567890", 10);
    mpz_init_set_str(b, "987654321098765432109876543210", 10);
    mpz_init(c);
    long squares = 0;
    for (long i = 0; i < n && roots; i++) {
        mpz_add_ui(a, a, 1);
        squares += mpz_perfect_square_p(a);
        mpz_sqrt(c, a);
    }
    for (long i = 0; i < n && !roots; i++) {
        mpz_mul(c, a, b);
        mpz_add(c, c, a);
    }
    sink += squares;
    mpz_clear(a);
    mpz_clear(b);
    mpz_clear(c);
    return arg;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    n = argc > 2 ? atol(argv[2]) : 1000000;
    roots = argc > 3 && strcmp(argv[3], "sqrt") == 0;
    if (threads < 1 || threads > 256 || n < 1 || (argc > 3 && !roots)) {
        fprintf(stderr, "usage: small_calls THREADS (1 to 256) N [sqrt]\n");
        return 2;
    }
    pthread_t *th = malloc(sizeof(pthread_t) * (size_t)threads);
    if (!th) return 1;
    struct timespec s, e;
    clock_gettime(CLOCK_MONOTONIC, &s);
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&th[i], NULL, work, NULL) != 0) return 1;
    }
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &e);
    printf("%d threads: %.1f ns a %s\n", threads, ((e.tv_sec - s.tv_sec) * 1e9 + (e.tv_nsec - s.tv_nsec)) / (double)n, roots ? "repetition" : "pair of calls");
    free(th);
    return 0;
}
