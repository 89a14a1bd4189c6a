"""Python on cuGMP: gmpy2, its product of two numbers of about 954,000
decimal digits (49,531 limbs) on whatever GMP serves the process. Run it
plain, then with LD_PRELOAD=<cuGMP's build or install>/libcugmp.so."""
import time

import gmpy2

x = gmpy2.mpz(3) ** 2_000_000
t = time.perf_counter()
y = x * (x + 1)
ms = (time.perf_counter() - t) * 1e3
print(f"digits={y.num_digits(10)} value_mod_1000003={y % 1000003} product_ms={ms:.1f}")
