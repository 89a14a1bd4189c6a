/* The engine's staged transfers alone, one direction at a time, through
 * cugmp_bench_transfer: GB/s of uploads ("up") and downloads ("down") of
 * each size, back to back and with 300 us idle before each ("-gap", as a
 * product's kernels leave the copy threads between its transfers), and an
 * mpz_add's two uploads, kernel and download ("abi") against the same with
 * operands already pinned ("pinned-operands"). Compare the rates with
 * benches/host_copy.cu's `pipeline` (the same copies outside the library).
 *
 *   transfers [LIMBS,LIMBS,...] [REPS]
 *   cc -O2 transfers.c -lcugmp -o transfers */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cugmp_bench_transfer(const char *how, size_t limbs, int reps, double *seconds);

int main(int argc, char **argv) {
    const char *sizes = argc > 1 ? argv[1] : "1000000,2000000,10000000";
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    const char *hows[] = {"up", "up-gap", "down", "down-gap", "abi", "pinned-operands"};
    printf("| limbs | MiB |");
    for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) printf(" %s |", hows[h]);
    printf("\n|---|---|");
    for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) printf("---|");
    printf("\n");
    char *list = strdup(sizes);
    for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
        size_t n = strtoull(s, NULL, 10);
        printf("| %zu | %.1f |", n, 8.0 * n / (1 << 20));
        for (size_t h = 0; h < sizeof hows / sizeof *hows; h++) {
            double t = 0;
            if (cugmp_bench_transfer(hows[h], n, reps, &t) != 0) {
                printf(" (no GPU) |");
            } else if (h < 4) {
                printf(" %.1f GB/s (%.3f ms) |", 8.0 * n / t / 1e9, t * 1e3);
            } else {
                printf(" %.3f ms |", t * 1e3);
            }
            fflush(stdout);
        }
        printf("\n");
    }
    free(list);
    return 0;
}
