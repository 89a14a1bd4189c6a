/* MPFR's constants and elementary functions at large precision, as an MPFR
 * program is written: MPFR built as a shared library against
 * libgmp.so.10, so the same binary and the same libmpfr.so run on GMP's
 * own library or on libcugmp.so through the alias (whichever
 * libgmp.so.10 LD_LIBRARY_PATH finds first).
 *
 *   mpfr_ops BITS [WORK...]     WORK: const_pi, const_log2, exp, log,
 *                               arith, elementary (default: the first four)
 *
 * const_pi is pi; const_log2 is log(2); exp is exp(1/3); log is log(3);
 * each at BITS bits of precision, rounded to nearest, in a fresh MPFR cache
 * (MPFR caches pi and log(2), which log takes, so each work frees the
 * caches first). arith and elementary are the many calls of a program at
 * small precision: 10^8 / BITS repetitions of a product, a sum, a quotient, a
 * difference and a square root, or 10^7 / BITS repetitions of exp and sin.
 * Prints one markdown row a work: | work, BITS bits | seconds | checksum |,
 * the checksum the result's mantissa (mpfr_get_z_2exp) mod 1000003 with its
 * exponent: equal rows mean equal results. */
#include <gmp.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void compute(const char *work, mpfr_t r) {
    if (strcmp(work, "const_pi") == 0) {
        mpfr_const_pi(r, MPFR_RNDN);
    } else if (strcmp(work, "const_log2") == 0) {
        mpfr_const_log2(r, MPFR_RNDN);
    } else if (strcmp(work, "exp") == 0) {
        mpfr_set_ui(r, 1, MPFR_RNDN);
        mpfr_div_ui(r, r, 3, MPFR_RNDN);
        mpfr_exp(r, r, MPFR_RNDN);
    } else if (strcmp(work, "log") == 0) {
        mpfr_set_ui(r, 3, MPFR_RNDN);
        mpfr_log(r, r, MPFR_RNDN);
    } else {
        mpfr_prec_t bits = mpfr_get_prec(r);
        mpfr_t x, y, z;
        mpfr_inits2(bits, x, y, z, (mpfr_ptr)0);
        mpfr_sqrt_ui(x, 3, MPFR_RNDN);
        mpfr_set_ui(y, 7, MPFR_RNDN);
        mpfr_log(y, y, MPFR_RNDN);
        mpfr_set_ui(r, 0, MPFR_RNDN);
        if (strcmp(work, "arith") == 0) {
            for (long i = 0, n = 100000000L / bits + 1; i < n; i++) {
                mpfr_mul(z, x, y, MPFR_RNDN);
                mpfr_add(r, r, z, MPFR_RNDN);
                mpfr_div(z, r, x, MPFR_RNDN);
                mpfr_sub(r, r, y, MPFR_RNDN);
                mpfr_sqrt(z, z, MPFR_RNDN);
                mpfr_add(r, r, z, MPFR_RNDN);
            }
        } else {
            for (long i = 0, n = 10000000L / bits + 1; i < n; i++) {
                mpfr_exp(z, x, MPFR_RNDN);
                mpfr_sin(z, z, MPFR_RNDN);
                mpfr_add(r, r, z, MPFR_RNDN);
                mpfr_nextabove(x);
            }
        }
        mpfr_clears(x, y, z, (mpfr_ptr)0);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: mpfr_ops BITS [const_pi|const_log2|exp|log|arith|elementary]...\n");
        return 2;
    }
    mpfr_prec_t bits = (mpfr_prec_t)strtod(argv[1], NULL);
    if (bits < MPFR_PREC_MIN || bits > MPFR_PREC_MAX) {
        fprintf(stderr, "mpfr_ops: BITS out of MPFR's range\n");
        return 2;
    }
    /* Every work; the first four are the default. */
    const char *works[] = {"const_pi", "const_log2", "exp", "log", "arith", "elementary"};
    int count = argc > 2 ? argc - 2 : 4;
    for (int i = 0; i < count; i++) {
        const char *work = argc > 2 ? argv[i + 2] : works[i];
        int found = 0;
        for (int k = 0; k < 6; k++) found |= strcmp(work, works[k]) == 0;
        if (!found) {
            fprintf(stderr, "mpfr_ops: unknown work %s\n", work);
            return 2;
        }
        mpfr_free_cache();
        mpfr_t r;
        mpfr_init2(r, bits);
        double t = now();
        compute(work, r);
        t = now() - t;
        mpz_t m;
        mpz_init(m);
        mpfr_exp_t e = mpfr_get_z_2exp(m, r);
        printf("| %s, %ld bits | %.3f | %lu:%ld |\n", work, (long)bits, t, mpz_fdiv_ui(m, 1000003), (long)e);
        fflush(stdout);
        mpz_clear(m);
        mpfr_clear(r);
    }
    return 0;
}
