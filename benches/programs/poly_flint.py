"""cugmp_poly_mul against FLINT's fmpz_poly_mul (python-flint's wheel, its
own FLINT and GMP) on the same random polynomials, every coefficient of
the two products compared.

    python3 poly_flint.py LIBCUGMP [DEGREE:BITS ...]

FLINT runs on all the host's cores (flint.ctx.threads, FLINT_THREADS to
change it); cuGMP as the environment sets it (CUGMP_GPU). Prints one
markdown row per size: degree, coefficient bits, FLINT s, cuGMP s, ratio,
and whether the products are the same. Times are the best of REPEATS
(default 3) after one warm-up.
"""

import ctypes
import os
import random
import sys
import time

import flint


class Mpz(ctypes.Structure):
    _fields_ = [("alloc", ctypes.c_int), ("size", ctypes.c_int), ("d", ctypes.c_void_p)]


def main():
    lib = ctypes.CDLL(sys.argv[1])
    sizes = sys.argv[2:] or ["1000:64", "1000:1000", "1000:10000", "10000:64", "10000:1000", "10000:10000", "100000:64", "100000:1000", "1000000:64"]
    flint.ctx.threads = int(os.environ.get("FLINT_THREADS", os.cpu_count()))
    repeats = int(os.environ.get("REPEATS", "3"))
    lib.__gmpz_import.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_char_p]
    lib.__gmpz_export.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t), ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
    lib.__gmpz_export.restype = ctypes.c_void_p
    lib.__gmpz_sizeinbase.restype = ctypes.c_size_t
    lib.__gmpz_sizeinbase.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.cugmp_poly_mul.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]

    def load(values):
        arr = (Mpz * len(values))()
        for z, v in zip(arr, values):
            lib.__gmpz_init(ctypes.byref(z))
            if v:
                b = abs(v).to_bytes((abs(v).bit_length() + 7) // 8, "little")
                lib.__gmpz_import(ctypes.byref(z), len(b), -1, 1, 0, 0, b)
                if v < 0:
                    z.size = -z.size
        ptrs = (ctypes.c_void_p * len(values))(*[ctypes.addressof(z) for z in arr])
        return arr, ptrs

    def value(z):
        if z.size == 0:
            return 0
        n = (lib.__gmpz_sizeinbase(ctypes.byref(z), 2) + 7) // 8
        buf = ctypes.create_string_buffer(n)
        count = ctypes.c_size_t(0)
        lib.__gmpz_export(buf, ctypes.byref(count), -1, 1, 0, 0, ctypes.byref(z))
        v = int.from_bytes(buf.raw[: count.value], "little")
        return -v if z.size < 0 else v

    rng = random.Random(20261125)
    print(f"FLINT threads {flint.ctx.threads}, python-flint {flint.__version__}, CUGMP_GPU={os.environ.get('CUGMP_GPU', '')}")
    print("| degree | coefficient bits | FLINT s | cuGMP s | FLINT / cuGMP | products |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        degree, bits = (int(x) for x in size.split(":"))
        a = [rng.getrandbits(bits) * rng.choice((1, -1)) for _ in range(degree + 1)]
        b = [rng.getrandbits(bits) * rng.choice((1, -1)) for _ in range(degree + 1)]
        fa, fb = flint.fmpz_poly(a), flint.fmpz_poly(b)
        za, pa = load(a)
        zb, pb = load(b)
        zr, pr = load([0] * (2 * degree + 1))

        def best(f):
            f()
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                f()
                times.append(time.perf_counter() - t)
            return min(times)

        holder = {}
        t_flint = best(lambda: holder.__setitem__("p", fa * fb))
        t_cugmp = best(lambda: lib.cugmp_poly_mul(pr, pa, len(a), pb, len(b)))
        want = holder["p"].coeffs()
        want += [0] * (2 * degree + 1 - len(want))
        same = all(int(w) == value(z) for w, z in zip(want, zr))
        print(f"| {degree} | {bits} | {t_flint:.4f} | {t_cugmp:.4f} | {t_flint / t_cugmp:.2f}x | {'same' if same else 'DIFFERENT'} |", flush=True)
        for arr in (za, zb, zr):
            for z in arr:
                lib.__gmpz_clear(ctypes.byref(z))


main()
