/* Exercises the functions cuGMP defines (and a few served by the embedded
 * GMP) on deterministic operands; every result is printed, so the outputs of
 * this program on GMP and on cuGMP must be byte-identical. Also checks that
 * mp_set_memory_functions sees every allocation and that they balance. */
#ifdef USE_CUGMP_H
#include <cuGMP.h>
#else
#include <gmp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long live_blocks, total_allocs;

static void *count_alloc(size_t n) { live_blocks++; total_allocs++; return malloc(n); }
static void *count_realloc(void *p, size_t old, size_t n) { (void)old; return realloc(p, n); }
static void count_free(void *p, size_t n) { (void)n; live_blocks--; free(p); }

static void show(const char *what, mpz_srcptr x) {
    gmp_printf("%s: sgn=%d odd=%d size=%zu %Zx\n", what, mpz_sgn(x), mpz_odd_p(x), mpz_size(x), x);
}

int main(void) {
    mp_set_memory_functions(count_alloc, count_realloc, count_free);
    gmp_randstate_t rs;
    gmp_randinit_mt(rs);
    gmp_randseed_ui(rs, 20261121);

    static const unsigned long sizes[] = {0, 1, 63, 64, 65, 128, 1000, 6400, 64000, 640000};
    enum { N = sizeof sizes / sizeof sizes[0] };
    mpz_t v[2 * N + 2];
    for (int i = 0; i < N; i++) {
        mpz_init(v[2 * i]);
        mpz_urandomb(v[2 * i], rs, sizes[i]);
        mpz_init2(v[2 * i + 1], sizes[i]);
        mpz_rrandomb(v[2 * i + 1], rs, sizes[i]);
        if (i % 2) mpz_neg(v[2 * i + 1], v[2 * i + 1]);
    }
    mpz_init_set_si(v[2 * N], -1);
    mpz_init(v[2 * N + 1]);
    mpz_ui_pow_ui(v[2 * N + 1], 2, 640);
    mpz_sub_ui(v[2 * N + 1], v[2 * N + 1], 1); /* all ones */

    mpz_t r, t;
    mpz_init(r);
    mpz_init(t);
    char label[64];
    for (int i = 0; i < 2 * N + 2; i++) {
        for (int j = 0; j < 2 * N + 2; j += 3) {
            snprintf(label, sizeof label, "add %d %d", i, j); mpz_add(r, v[i], v[j]); show(label, r);
            snprintf(label, sizeof label, "sub %d %d", i, j); mpz_sub(r, v[i], v[j]); show(label, r);
            snprintf(label, sizeof label, "mul %d %d", i, j); mpz_mul(r, v[i], v[j]); show(label, r);
            snprintf(label, sizeof label, "and %d %d", i, j); mpz_and(r, v[i], v[j]); show(label, r);
            snprintf(label, sizeof label, "ior %d %d", i, j); mpz_ior(r, v[i], v[j]); show(label, r);
            snprintf(label, sizeof label, "xor %d %d", i, j); mpz_xor(r, v[i], v[j]); show(label, r);
        }
        /* Aliasing: rop is an operand. */
        mpz_set(t, v[i]);
        mpz_mul(t, t, t); show("sqr alias", t);
        mpz_add(t, t, v[i]); show("add alias", t);
        mpz_com(t, t); show("com alias", t);
        static const unsigned long counts[] = {0, 1, 63, 64, 65, 640, 100000};
        for (int k = 0; k < 7; k++) {
            snprintf(label, sizeof label, "mul_2exp %d %lu", i, counts[k]); mpz_mul_2exp(r, v[i], counts[k]); show(label, r);
            snprintf(label, sizeof label, "tdiv_q_2exp %d %lu", i, counts[k]); mpz_tdiv_q_2exp(r, v[i], counts[k]); show(label, r);
            snprintf(label, sizeof label, "fdiv_q_2exp %d %lu", i, counts[k]); mpz_fdiv_q_2exp(r, v[i], counts[k]); show(label, r);
            snprintf(label, sizeof label, "cdiv_q_2exp %d %lu", i, counts[k]); mpz_cdiv_q_2exp(r, v[i], counts[k]); show(label, r);
        }
        if (sizes[i / 2 < N ? i / 2 : 0] <= 6400) {
            for (int base = -36; base <= 62; base++) {
                char *s = mpz_get_str(NULL, base, v[i]);
                printf("get_str %d %d: %s\n", i, base, s ? s : "(null)");
                if (s) {
                    mpz_t back;
                    mpz_init(back);
                    int rc = mpz_set_str(back, s, base < 0 ? -base : base);
                    printf("set_str %d %d: rc=%d equal=%d\n", i, base, rc, rc == 0 ? mpz_cmp(back, v[i]) == 0 : -1);
                    mpz_clear(back);
                    count_free(s, strlen(s) + 1);
                }
            }
        }
    }
    static const char *bad[] = {"", "12x", "0x", "-", "1 2", "zz"};
    for (int k = 0; k < 6; k++)
        printf("set_str \"%s\" base 10: %d\n", bad[k], mpz_set_str(r, bad[k], 10));
    printf("set_str base 1: %d, base 63: %d\n", mpz_set_str(r, "1", 1), mpz_set_str(r, "1", 63));

    mp_limb_t a[3] = {~0UL, ~0UL, 5}, b[2] = {~0UL, 3}, p[5];
    mp_limb_t top = mpn_mul(p, a, 3, b, 2);
    printf("mpn_mul: %lx %lx %lx %lx %lx top=%lx\n", p[0], p[1], p[2], p[3], p[4], top);
    mpn_sqr(p, b, 2);
    printf("mpn_sqr: %lx %lx %lx %lx\n", p[0], p[1], p[2], p[3]);

    for (int i = 0; i < 2 * N + 2; i++) mpz_clear(v[i]);
    mpz_clear(r);
    mpz_clear(t);
    gmp_randclear(rs);
    printf("memory: %ld allocations, %ld blocks live after clearing\n", total_allocs > 0 ? 1L : 0L, live_blocks);
    return live_blocks == 0 ? 0 : 1;
}
