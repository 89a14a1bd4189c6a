"""What a double-precision FFT product would take on this GPU: cuFFT's real
transforms (through PyTorch's torch.fft) of the lengths an exact product of
n x n limbs needs, two forward transforms, the pointwise product and one
inverse, timed with CUDA events (median of 10 after two untimed).

Exactness needs every coefficient of the product within 1/2 of an integer.
Percival's bound (Math. Comp. 72 (2003), 387-395) for a complex FFT
convolution of length N = 2^k in double precision: the error is below
|x| |y| ((1 + e)^(3k) (1 + e sqrt(5))^(3k+1) (1 + b)^(3k) - 1), e = 2^-53,
b the error of the roots (taken as e here). With balanced digits of d bits
(|digit| <= 2^(d-1)), two real digits a complex point and half of the points
zero, |x| |y| <= N 4^(d-1). The digits are the widest d for which the bound
is below 1/2. Beside them, the widths that programs which do not prove the
bound use (16 and 18 bits a digit), for the cost of the length alone.

Usage: python3 fp64_fft.py [limbs ...]   (default 1000000 10000000)
"""
import math
import sys

import torch


def bound(log_n):
    """Percival's relative factor for a transform of 2^log_n points."""
    e = 2.0 ** -53
    k = log_n
    return (1 + e) ** (3 * k) * (1 + e * math.sqrt(5)) ** (3 * k + 1) * (1 + e) ** (3 * k) - 1


def proven_digits(limbs):
    """The widest digits whose product the bound proves exact, and the
    real transform length they need."""
    for d in range(30, 1, -1):
        reals = 2 * math.ceil(64 * limbs / d)
        length = 1 << math.ceil(math.log2(reals))
        n = length // 2
        if n * 4.0 ** (d - 1) * bound(int(math.log2(n))) < 0.5:
            return d, length
    raise SystemExit("no width is exact")


def product_ms(length, reps=10):
    x = torch.randn(length, dtype=torch.float64, device="cuda")
    y = torch.randn(length, dtype=torch.float64, device="cuda")

    def once():
        z = torch.fft.irfft(torch.fft.rfft(x) * torch.fft.rfft(y), n=length)
        return z

    for _ in range(2):
        once()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        once()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    del x, y
    torch.cuda.empty_cache()
    return sorted(times)[len(times) // 2]


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1_000_000, 10_000_000]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| n x n limbs | digit bits | real transform length | ms (two forward, pointwise, inverse) |")
    print("|---|---|---|---|")
    for limbs in sizes:
        d, length = proven_digits(limbs)
        print(f"| {limbs} | {d} (proven) | 2^{int(math.log2(length))} | {product_ms(length):.3f} |")
        for d in (16, 18):
            reals = 2 * math.ceil(64 * limbs / d)
            length = 1 << math.ceil(math.log2(reals))
            print(f"| {limbs} | {d} (not proven) | 2^{int(math.log2(length))} | {product_ms(length):.3f} |")


if __name__ == "__main__":
    main()
