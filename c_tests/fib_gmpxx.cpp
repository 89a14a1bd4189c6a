// A C++ program on GMP's C++ interface (gmpxx.h, libgmpxx): Fibonacci numbers
// by fast doubling and a binomial coefficient, with mpz_class arithmetic
// throughout; prints digit counts and FNV-1a checksums of the decimal digits.
// It is built against the system's gmpxx.h and libgmpxx and runs unchanged on
// cuGMP (libcugmp.so linked in, or the libgmp.so.10 alias on the path).
//   fib_gmpxx [n]     (default 200000)
#include <gmpxx.h>
#include <cstdio>
#include <cstdlib>
#include <string>

static unsigned long long fnv1a(const std::string &s) {
    unsigned long long h = 1469598103934665603ULL;
    for (unsigned char c : s) { h ^= c; h *= 1099511628211ULL; }
    return h;
}

// (F(k), F(k+1)) by fast doubling: F(2k) = F(k)(2F(k+1) - F(k)),
// F(2k+1) = F(k)^2 + F(k+1)^2.
static void fib(unsigned long n, mpz_class &f, mpz_class &g) {
    if (n == 0) { f = 0; g = 1; return; }
    mpz_class a, b;
    fib(n / 2, a, b);
    mpz_class c = a * (2 * b - a);
    mpz_class d = a * a + b * b;
    if (n % 2 == 0) { f = c; g = d; } else { f = d; g = c + d; }
}

static void report(const char *name, const mpz_class &x) {
    std::string digits = x.get_str(10);
    std::printf("%-12s digits=%-9zu checksum=%016llx\n", name, digits.size(), fnv1a(digits));
}

int main(int argc, char **argv) {
    unsigned long n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 200000;
    mpz_class f, g;
    fib(n, f, g);
    report("F(n)", f);
    mpz_class binom;
    mpz_bin_uiui(binom.get_mpz_t(), 2 * n / 10, n / 10);
    report("C(n/5,n/10)", binom);
    mpz_class mixed = (f * binom - g) / 7 + (f & binom) - (g ^ -binom);
    report("mixed", mixed);
    return 0;
}
