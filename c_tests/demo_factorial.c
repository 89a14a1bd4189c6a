/* An unmodified GMP program: n! and F(m), their decimal digits checksummed.
 * Written against gmp.h; builds unchanged against cuGMP.h.
 *   demo_factorial [n] [m]      (defaults 100000 and 1000000)
 * Prints one line per result: name, digits, FNV-1a checksum of the digits,
 * and the seconds spent (computation plus conversion to decimal). */
#ifdef USE_CUGMP_H
#include <cuGMP.h>
#else
#include <gmp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static unsigned long long fnv1a(const char *s) {
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ULL; }
    return h;
}

static void report(const char *name, mpz_t x, double t0) {
    char *digits = mpz_get_str(NULL, 10, x);
    double t = now() - t0;
    printf("%-12s digits=%-9zu checksum=%016llx seconds=%.3f\n", name, strlen(digits), fnv1a(digits), t);
    void (*freefunc)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &freefunc);
    freefunc(digits, strlen(digits) + 1);
}

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    unsigned long m = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    mpz_t f;
    mpz_init(f);
    double t0 = now();
    mpz_fac_ui(f, n);
    char name[32];
    snprintf(name, sizeof name, "%lu!", n);
    report(name, f, t0);
    t0 = now();
    mpz_fib_ui(f, m);
    snprintf(name, sizeof name, "F(%lu)", m);
    report(name, f, t0);
    /* A product of the two, through mpz_mul itself. */
    mpz_t g;
    mpz_init(g);
    t0 = now();
    mpz_fac_ui(g, n);
    mpz_mul(f, f, g);
    report("F*fact", f, t0);
    mpz_clear(f);
    mpz_clear(g);
    return 0;
}
