/* Pi by the Chudnovsky series, as a GMP program is written: binary
 * splitting on mpz (the top levels on threads if asked), then mpf's square
 * root and division, then mpf_get_str. Written against gmp.h; the same
 * source builds against static GMP and against libcugmp.so.
 *
 *   pi DIGITS [THREADS]
 *
 * Prints the digit count, an FNV-1a checksum of the digits, the first and
 * last few digits, and the seconds of each phase (splitting, the final
 * mpf steps, the conversion to decimal) and in all. */
#include <gmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define A 13591409
#define B 545140134
#define C3_OVER_24 10939058860032000UL /* 640320^3 / 24 */
#define DIGITS_PER_TERM 14.181647462725477

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* P, Q and T of the terms [a, b). */
typedef struct {
    mpz_t p, q, t;
} pqt;

static void pqt_init(pqt *x) {
    mpz_init(x->p);
    mpz_init(x->q);
    mpz_init(x->t);
}

static void pqt_clear(pqt *x) {
    mpz_clear(x->p);
    mpz_clear(x->q);
    mpz_clear(x->t);
}

typedef struct {
    pqt *out;
    unsigned long a, b;
    int threads;
} job;

static void split(pqt *out, unsigned long a, unsigned long b, int threads);

static void *split_job(void *arg) {
    job *j = arg;
    split(j->out, j->a, j->b, j->threads);
    return NULL;
}

/* out = (P, Q, T)(a, b); with threads > 1 the halves run in parallel. */
static void split(pqt *out, unsigned long a, unsigned long b, int threads) {
    if (b - a == 1) {
        if (a == 0) {
            mpz_set_ui(out->p, 1);
            mpz_set_ui(out->q, 1);
        } else {
            /* P = -(6a - 5)(2a - 1)(6a - 1), Q = a^3 C^3 / 24 */
            mpz_set_ui(out->p, 6 * a - 5);
            mpz_mul_ui(out->p, out->p, 2 * a - 1);
            mpz_mul_ui(out->p, out->p, 6 * a - 1);
            mpz_neg(out->p, out->p);
            mpz_set_ui(out->q, a);
            mpz_mul_ui(out->q, out->q, a);
            mpz_mul_ui(out->q, out->q, a);
            mpz_mul_ui(out->q, out->q, C3_OVER_24);
        }
        /* T = P (A + B a) */
        mpz_mul_ui(out->t, out->p, A + B * a);
        return;
    }
    unsigned long m = (a + b) / 2;
    pqt r;
    pqt_init(&r);
    if (threads > 1) {
        pthread_t thread;
        job left = {out, a, m, threads / 2};
        if (pthread_create(&thread, NULL, split_job, &left) == 0) {
            split(&r, m, b, threads - threads / 2);
            pthread_join(thread, NULL);
        } else {
            split(out, a, m, 1);
            split(&r, m, b, 1);
        }
    } else {
        split(out, a, m, 1);
        split(&r, m, b, 1);
    }
    /* T = T1 Q2 + P1 T2, P = P1 P2, Q = Q1 Q2 */
    mpz_mul(out->t, out->t, r.q);
    mpz_mul(r.t, out->p, r.t);
    mpz_add(out->t, out->t, r.t);
    mpz_mul(out->p, out->p, r.p);
    mpz_mul(out->q, out->q, r.q);
    pqt_clear(&r);
}

static unsigned long long fnv1a(const char *s) {
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: pi DIGITS [THREADS]\n");
        return 2;
    }
    unsigned long digits = strtoul(argv[1], NULL, 10);
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (digits < 10 || threads < 1) {
        fprintf(stderr, "pi: DIGITS at least 10, THREADS at least 1\n");
        return 2;
    }
    unsigned long terms = (unsigned long)(digits / DIGITS_PER_TERM) + 2;
    mp_bitcnt_t bits = (mp_bitcnt_t)(digits * 3.3219280948873623) + 64;

    double t0 = now();
    pqt s;
    pqt_init(&s);
    split(&s, 0, terms, threads);
    double t1 = now();

    /* pi = 426880 sqrt(10005) Q / T */
    mpf_t pi, root, q;
    mpf_init2(pi, bits);
    mpf_init2(root, bits);
    mpf_init2(q, bits);
    mpf_sqrt_ui(root, 10005);
    mpf_set_z(q, s.q);
    mpf_mul(q, q, root);
    mpf_mul_ui(q, q, 426880);
    mpf_set_z(pi, s.t);
    mpf_div(pi, q, pi);
    double t2 = now();

    mp_exp_t exp;
    char *text = mpf_get_str(NULL, &exp, 10, digits, pi);
    double t3 = now();

    size_t n = strlen(text);
    printf("digits=%zu exp=%ld checksum=%016llx head=%.12s tail=%s\n", n, (long)exp, fnv1a(text), text, text + (n > 12 ? n - 12 : 0));
    printf("seconds split=%.3f final=%.3f get_str=%.3f total=%.3f threads=%d\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0, threads);

    void (*free_func)(void *, size_t);
    mp_get_memory_functions(NULL, NULL, &free_func);
    free_func(text, n + 1);
    mpf_clear(pi);
    mpf_clear(root);
    mpf_clear(q);
    pqt_clear(&s);
    return 0;
}
