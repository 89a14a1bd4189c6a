"""Whole-program work in Python on gmpy2 and mpmath, timed: run it on
gmpy2's own wheel (its own GMP and MPFR), then under LD_PRELOAD of
libcugmp.so; each line's checksum must be the same both ways.

    python3 python_ops.py [first [driver]|large [gcd|const_pi|mpmath|mpmath_parts]|fresh]

With `first`, only the first large operation of a fresh process (3**x of
about 10^7 digits), which pays for whatever a library does on its first
large operation (with `driver`, the CUDA driver opened on a thread beside
it); with `large`, gcd of 10^7 digits, MPFR's pi to 10^8 bits
and mpmath's pi to 10^7 digits (minutes on GMP), or the one named (a
process of its own each, for CUGMP_PROFILE's table; `mpmath_parts` adds
mpmath's binary splitting alone and the same recursion on the leaves'
small numbers, the interpreter's share); with `fresh`, products
of 4 * 10^6 and 10^7 limbs a side whose results are new objects each time,
their limbs in memory the process has not touched (the median of seven,
after one untimed). Prints markdown rows: | work | seconds | checksum |."""
import sys
import time
import zlib

import gmpy2


def checksum(value):
    # Python salts str hashes per process; numbers hash the same everywhere.
    if isinstance(value, str):
        return zlib.crc32(value.encode())
    return hash(value) % 1000003


def row(name, seconds, value):
    print(f"| {name} | {seconds:.3f} | {checksum(value)} |", flush=True)


def timed(name, f):
    t = time.perf_counter()
    value = f()
    row(name, time.perf_counter() - t, value)
    return value


if sys.argv[1:2] == ["large"]:
    # The largest work: gcd of 10^7 digits, MPFR's pi to 10^8 bits,
    # mpmath's pi to 10^7 digits (or the one named).
    only = sys.argv[2] if len(sys.argv) > 2 else None
    if only in (None, "gcd"):
        digits = 10**7
        a = gmpy2.mpz(7) ** int(digits / 0.845098) + 12345
        b = gmpy2.mpz(11) ** int(digits / 1.0413927) + 67890
        timed("gcd of two 10^7-digit numbers", lambda: gmpy2.gcd(a, b))
    if only in (None, "const_pi"):
        gmpy2.get_context().precision = 10**8
        timed("MPFR const_pi, 10^8 bits", lambda: gmpy2.const_pi())
    if only in (None, "mpmath", "mpmath_parts"):
        import mpmath  # noqa: E402

        assert mpmath.libmp.BACKEND == "gmpy", mpmath.libmp.BACKEND
        mpmath.mp.dps = 10**7
        timed("mpmath pi, 10^7 digits", lambda: str(+mpmath.pi))
    if only == "mpmath_parts":
        # Where mpmath's pi spends its time: its binary splitting alone (the
        # terms its pi_fixed took for the precision it kept), then the same
        # recursion with every operation on the leaves' small numbers (each
        # node returns its left child's values): the interpreter's and
        # gmpy2's share, which no library below them can lower.
        from mpmath.libmp import libelefun as elefun  # noqa: E402

        # The precision pi_fixed kept (constant_memo's, on the function it wraps).
        kept = next(c.cell_contents.memo_prec for c in elefun.pi_fixed.__closure__ if hasattr(c.cell_contents, "memo_prec"))
        terms = int(kept / 3.3219280948 / 14.181647462 + 2)
        timed(f"mpmath's binary splitting alone, {terms} terms", lambda: elefun.bs_chudnovsky(0, terms, 0, False)[1])
        MPZ, A, B, C = elefun.MPZ, elefun.CHUD_A, elefun.CHUD_B, elefun.CHUD_C

        def small(a, b):
            if b - a == 1:
                g = MPZ((6 * b - 5) * (2 * b - 1) * (6 * b - 1))
                p = b**3 * C**3 // 24
                q = (-1) ** b * g * (A + B * b)
                return g, p, q
            mid = (a + b) // 2
            g1, p1, q1 = small(a, mid)
            g2, p2, q2 = small(mid, b)
            # Made as bs_chudnovsky makes them, then dropped.
            p = p1 * p2
            g = g1 * g2
            q = q1 * p2 + q2 * g1
            return g1, p1, q1

        timed(f"the same recursion on the leaves' numbers, {terms} terms", lambda: small(0, terms)[1])
    sys.exit(0)

if sys.argv[1:2] == ["fresh"]:
    state = gmpy2.random_state(7)
    for n in (4 * 10**6, 10**7):
        x, y = gmpy2.mpz_urandomb(state, 64 * n), gmpy2.mpz_urandomb(state, 64 * n)
        for name, f in (("x * y", lambda: x * y), ("x * x", lambda: x * x)):
            f()
            times = []
            for _ in range(7):
                t = time.perf_counter()
                z = f()
                times.append(time.perf_counter() - t)
                del z  # freed: the next result's limbs are a new mapping
            times.sort()
            # Milliseconds matter here: five decimals of a second.
            print(f"| {name}, {n} limbs a side, a new result each time (median of 7) | {times[3]:.5f} | {checksum(f())} |", flush=True)
    sys.exit(0)

if sys.argv[1:2] == ["first"]:
    if sys.argv[2:] == ["driver"]:
        # The CUDA driver's opening (cuInit, the primary context) on a thread
        # of its own beside the operation, as cuGMP's opener does, but with
        # no cuGMP in the process: what the opening alone costs GMP's own
        # operation.
        import ctypes
        import threading

        def open_driver():
            cuda = ctypes.CDLL("libcuda.so.1")
            ctx = ctypes.c_void_p()
            assert cuda.cuInit(0) == 0
            assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
            assert cuda.cuCtxSetCurrent(ctx) == 0

        threading.Thread(target=open_driver, daemon=True).start()
    timed("first operation of the process: 3**20959032 (10^7 digits)", lambda: gmpy2.mpz(3) ** 20959032)
    sys.exit(0)

digits = 10**6
a = gmpy2.mpz(7) ** int(digits / 0.845098) + 12345  # about 10^6 decimal digits
b = gmpy2.mpz(11) ** int(digits / 1.0413927) + 67890
timed("gcd of two 10^6-digit numbers", lambda: gmpy2.gcd(a, b))
timed("gcdext of two 10^6-digit numbers", lambda: gmpy2.gcdext(a, b))
text = str(gmpy2.mpz(3) ** 20959032)  # 10^7 digits
x = timed("mpz(str) of 10^7 digits", lambda: gmpy2.mpz(text))
timed("str(mpz) of 10^7 digits", lambda: str(x))
timed("fac(10^6)", lambda: gmpy2.fac(10**6))
a2 = gmpy2.mpz(7) ** int(2 * 10**7 / 0.845098) + 1  # about 2 x 10^7 digits
timed("a // b, 2 x 10^7 by 10^7 digits", lambda: a2 // x)
timed("divmod(a, b), the same", lambda: divmod(a2, x))
timed("3**x, 10^7 digits, after the first", lambda: gmpy2.mpz(3) ** 20959032)

gmpy2.get_context().precision = 10**7
timed("MPFR const_pi, 10^7 bits", lambda: gmpy2.const_pi())
gmpy2.get_context().precision = 10**6
timed("MPFR exp(1/3), 10^6 bits", lambda: gmpy2.exp(gmpy2.mpfr(1) / 3))
timed("MPFR log(3), 10^6 bits", lambda: gmpy2.log(gmpy2.mpfr(3)))

import mpmath  # noqa: E402

assert mpmath.libmp.BACKEND == "gmpy", mpmath.libmp.BACKEND
mpmath.mp.dps = 10**6
timed("mpmath pi, 10^6 digits", lambda: str(+mpmath.pi))
