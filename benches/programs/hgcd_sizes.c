/* GMP's half-gcd (mpn_hgcd, an internal function libgmp exports) on random
 * numbers of each size given, timed: the best of three passes over enough
 * calls to take about a second's tenth. Prints microseconds a call and
 * nanoseconds a limb. How a gcd's serial half-gcd work grows with the size
 * of its steps: Lehmer's method below the recursion's threshold
 * (CUGMP_HGCD_THRESHOLD under cuGMP), its matrix products above.
 *
 *   hgcd_sizes LIMBS...
 *
 *   cc -O2 hgcd_sizes.c -lgmp -o hgcd_sizes   (or -lcugmp) */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* GMP's own declarations (gmp-impl.h, not installed). */
struct hgcd_matrix {
    mp_size_t alloc;
    mp_size_t n;
    mp_ptr p[2][2];
};
mp_size_t __gmpn_hgcd_itch(mp_size_t);
void __gmpn_hgcd_matrix_init(struct hgcd_matrix *, mp_size_t, mp_ptr);
mp_size_t __gmpn_hgcd(mp_ptr, mp_ptr, mp_size_t, struct hgcd_matrix *, mp_ptr);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hgcd_sizes LIMBS...\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        long n = atol(argv[i]);
        if (n < 3 || n > 1000000) {
            fprintf(stderr, "hgcd_sizes: LIMBS from 3 to 10^6\n");
            return 2;
        }
        long reps = 2000000 / n;
        reps = reps < 3 ? 3 : reps > 20000 ? 20000 : reps;
        mp_ptr a = malloc((n + 1) * sizeof(mp_limb_t)), b = malloc((n + 1) * sizeof(mp_limb_t));
        mp_ptr a0 = malloc(n * sizeof(mp_limb_t)), b0 = malloc(n * sizeof(mp_limb_t));
        /* The matrix: four entries of (n + 1) / 2 + 1 limbs. */
        mp_ptr m = malloc(4 * (n / 2 + 2) * sizeof(mp_limb_t));
        mp_ptr tp = malloc(__gmpn_hgcd_itch(n) * sizeof(mp_limb_t));
        if (!a || !b || !a0 || !b0 || !m || !tp) return 1;
        mpn_random(a0, n);
        mpn_random(b0, n);
        a0[n - 1] |= (mp_limb_t)1 << 63;
        b0[n - 1] |= (mp_limb_t)1 << 62;
        double best = 1e300;
        for (int pass = 0; pass < 3; pass++) {
            double t = now();
            for (long j = 0; j < reps; j++) {
                struct hgcd_matrix M;
                __gmpn_hgcd_matrix_init(&M, n, m);
                mpn_copyi(a, a0, n);
                mpn_copyi(b, b0, n);
                __gmpn_hgcd(a, b, n, &M, tp);
            }
            t = (now() - t) / reps;
            best = t < best ? t : best;
        }
        printf("| %ld | %.2f | %.1f |\n", n, best * 1e6, best * 1e9 / n);
        free(a), free(b), free(a0), free(b0), free(m), free(tp);
    }
    return 0;
}
