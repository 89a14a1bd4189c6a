/* Input GMP rejects, one case per run (argv[1]), so that a case that stops
 * the program (GMP 6.3 raises SIGFPE for an mpz that would outgrow its
 * int-sized fields) can be compared with GMP's own behaviour: the same
 * output, the same stderr, the same signal. tests/c_programs.rs runs every case on the
 * reference GMP and on cuGMP. */
#ifdef USE_CUGMP_H
#include <cuGMP.h>
#else
#include <gmp.h>
#endif
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A string from mpz_get_str(NULL, ...), freed as GMP documents. */
static void free_string(char *s) {
    void (*free_fn)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &free_fn);
    free_fn(s, strlen(s) + 1);
}

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "";
    mpz_t x;
    mpz_init_set_ui(x, 12345);
    setvbuf(stdout, NULL, _IONBF, 0); /* everything printed before an abort is seen */
    if (!strcmp(c, "bases")) {
        /* Invalid bases: set_str returns -1 and leaves x usable; get_str returns NULL. */
        static const int bases[] = {-100, -37, -36, -2, -1, 0, 1, 2, 36, 37, 62, 63, 64, 1000, INT_MIN, INT_MAX};
        for (unsigned k = 0; k < sizeof bases / sizeof bases[0]; k++) {
            int rc = mpz_set_str(x, "101", bases[k]);
            char *s = mpz_get_str(NULL, bases[k], x);
            printf("base %d: set_str %d, get_str %s\n", bases[k], rc, s ? s : "(null)");
            if (s) free_string(s);
        }
        static const char *bad[] = {"", " ", "-", "+1", "0x", "0b2", "1_000", "\xd9\xa1\xd9\xa2", "12\xff", "9999999999999999999999999999999999999999x"};
        for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) printf("set_str bad %u: %d\n", k, mpz_set_str(x, bad[k], 0));
    } else if (!strcmp(c, "get_str_null")) {
        /* NULL buffer: GMP allocates one of exactly strlen + 1 bytes. */
        mpz_ui_pow_ui(x, 7, 1000);
        for (int base = -36; base <= 62; base += 7) {
            char *s = mpz_get_str(NULL, base, x);
            printf("%d %zu %.20s\n", base, s ? strlen(s) : 0, s ? s : "(null)");
            if (s) free_string(s);
        }
    } else if (!strcmp(c, "mul_2exp_overflow")) {
        mpz_mul_2exp(x, x, ULONG_MAX);
        gmp_printf("not reached: %zu limbs\n", mpz_size(x));
    } else if (!strcmp(c, "init2_overflow")) {
        mpz_t y;
        mpz_init2(y, ULONG_MAX);
        printf("not reached\n");
    } else if (!strcmp(c, "realloc2_overflow")) {
        mpz_realloc2(x, (mp_bitcnt_t)INT_MAX * GMP_NUMB_BITS + 1);
        printf("not reached\n");
    } else if (!strcmp(c, "pow_overflow")) {
        mpz_ui_pow_ui(x, 3, ULONG_MAX / 2);
        printf("not reached\n");
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    mpz_clear(x);
    return 0;
}
