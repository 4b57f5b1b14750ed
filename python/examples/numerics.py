#!/usr/bin/env python3
"""Numerics as a PyTorch user writes them, each result checked against numpy: a histogram, a
heat equation on a periodic grid, conjugate gradients, quadrature, series, integer tricks and
data cleaning, on any device.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/numerics.py --device cuda
"""
import argparse
import math
import sys

import numpy as np

import kael

failures = []


def check(name, got, expected, tolerance=1e-5):
    """Prints got beside numpy's expected value and records a disagreement."""
    got = np.asarray(got.cpu().numpy() if isinstance(got, kael.Tensor) else got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    error = float(np.max(np.abs(got - expected))) if got.size else 0.0
    ok = got.shape == expected.shape and error <= tolerance * max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    print(f"{'ok  ' if ok else 'FAIL'} {name:<44} max |kael - numpy| = {error:.3g}")
    if not ok:
        failures.append(name)


def histogram(device, generator):
    samples = kael.randn(100_000, generator=generator, dtype=kael.float64).to(device)
    low, high, bins = -4.0, 4.0, 16
    inside = samples[(samples >= low) & (samples < high)]
    index = ((inside - low) / (high - low) * bins).floor().long()
    counts = kael.bincount(index, minlength=bins)
    reference, _ = np.histogram(samples.cpu().numpy(), bins=bins, range=(low, high))
    check("histogram by floor + bincount", counts, reference, 0)
    values, inverse, occurrences = kael.unique(samples.round(decimals=0), return_inverse=True,
                                               return_counts=True)
    np_values, np_counts = np.unique(np.round(samples.cpu().numpy()), return_counts=True)
    check("unique(round(x)) values", values, np_values, 0)
    check("unique(round(x)) counts", occurrences, np_counts, 0)
    check("median and standard deviation", kael.stack([samples.median(), samples.std()]),
          [np.sort(samples.cpu().numpy())[(samples.numel() - 1) // 2], samples.cpu().numpy().std(ddof=1)])
    x = samples[:1000]
    cdf = 0.5 * (1 + kael.erf(x / math.sqrt(2)))
    check("normal CDF through erf", cdf, [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()], 1e-12)


def heat_equation(device):
    n, steps, alpha = 64, 200, 0.2
    grid = kael.zeros(n, n, dtype=kael.float64, device=device)
    grid[n // 4:n // 2, n // 4:n // 2] = 1.0
    reference = grid.cpu().numpy().copy()
    for _ in range(steps):
        laplacian = (grid.roll(1, 0) + grid.roll(-1, 0) + grid.roll(1, 1) + grid.roll(-1, 1)
                     - 4 * grid)
        grid = grid + alpha * laplacian
        reference = reference + alpha * (np.roll(reference, 1, 0) + np.roll(reference, -1, 0) +
                                         np.roll(reference, 1, 1) + np.roll(reference, -1, 1)
                                         - 4 * reference)
    check("heat equation (roll), 200 steps", grid, reference, 1e-12)
    check("heat is conserved", grid.sum(), reference.sum(), 1e-12)
    check("flip is a mirror", grid.flip(0).flip(1), reference[::-1, ::-1], 0)


def conjugate_gradients(device, generator):
    n = 48
    lower = kael.tril(kael.rand(n, n, generator=generator, dtype=kael.float64)).to(device)
    A = lower @ lower.mT + n * kael.eye(n, dtype=kael.float64, device=device)
    b = kael.linspace(-1, 1, n, dtype=kael.float64, device=device)
    x = kael.zeros_like(b)
    r = b - A @ x
    p = r.clone()
    for _ in range(n):
        Ap = kael.einsum("ij,j->i", A, p)
        alpha = (r @ r) / (p @ Ap)
        x = x + alpha * p
        r_new = r - alpha * Ap
        if kael.linalg.vector_norm(r_new) < 1e-12:
            break
        p = r_new + ((r_new @ r_new) / (r @ r)) * p
        r = r_new
    A_np = A.cpu().numpy()
    check("conjugate gradients vs numpy.linalg.solve", x, np.linalg.solve(A_np, b.cpu().numpy()), 1e-9)
    check("triu(A) + tril(A, -1) == A", kael.triu(A) + kael.tril(A, -1), A_np, 0)
    check("Frobenius norm", kael.norm(A), np.linalg.norm(A_np), 1e-12)
    check("batched einsum bij,bjk->bik", kael.einsum("bij,bjk->bik", A.repeat(2, 1, 1), A.repeat(2, 1, 1)),
          np.stack([A_np @ A_np] * 2), 1e-12)


def quadrature_and_series(device):
    x = kael.linspace(0, math.pi, 10_001, dtype=kael.float64, device=device)
    y = x.sin()
    trapezoid = ((y[1:] + y[:-1]) * (x[1:] - x[:-1])).sum() / 2
    # numpy 2 renamed trapz to trapezoid; Debian's numpy 1.24 has only trapz.
    numpy_trapezoid = getattr(np, "trapezoid", None) or np.trapz
    values = x.cpu().numpy()
    check("trapezoid integral of sin on [0, pi]", trapezoid,
          numpy_trapezoid(np.sin(values), values), 1e-12)
    k = kael.arange(1, 21, dtype=kael.float64, device=device)
    check("factorials by cumprod", k.cumprod(0), np.cumprod(np.arange(1, 21, dtype=np.float64)), 1e-15)
    small = kael.tensor([1e-10, 1e-7, 1e-4, 0.1], dtype=kael.float64, device=device)
    check("log1p for tiny x", small.log1p(), np.log1p(small.cpu().numpy()), 1e-15)
    check("expm1 for tiny x", small.expm1(), np.expm1(small.cpu().numpy()), 1e-15)
    compounding = (1 + kael.full((12,), 0.05 / 12, dtype=kael.float64, device=device)).cumprod(0)
    check("monthly compound interest", compounding[-1], (1 + 0.05 / 12) ** 12, 1e-14)


def integer_tricks(device):
    n = kael.arange(0, 1000, device=device)
    digits = kael.stack([n // 100 % 10, n // 10 % 10, n % 10], dim=1)
    check("decimal digits by // and %", (digits * kael.tensor([100, 10, 1], device=device)).sum(1), np.arange(1000), 0)
    popcount = kael.zeros_like(n)
    for bit in range(10):
        popcount = popcount + ((n >> bit) & 1)
    check("popcount by >> and &", popcount, [bin(v).count("1") for v in range(1000)], 0)
    check("fmod and remainder signs", kael.stack([kael.fmod(n[:7] - 3, -4), kael.remainder(n[:7] - 3, -4)]),
          [np.fmod(np.arange(7) - 3, -4), np.remainder(np.arange(7) - 3, -4)], 0)
    evens = kael.nonzero((n % 2 == 0) & (n < 20)).flatten()
    check("nonzero of a mask", evens, np.arange(0, 20, 2), 0)
    check("repeat_interleave and tile", kael.cat([n[:3].repeat_interleave(2), n[:3].repeat(2)]),
          np.concatenate([np.repeat(np.arange(3), 2), np.tile(np.arange(3), 2)]), 0)


def data_cleaning(device):
    raw = kael.tensor([1.5, float("nan"), -2.25, float("inf"), 3.0, -float("inf"), 0.5],
                      dtype=kael.float64, device=device)
    finite = raw[kael.isfinite(raw)]
    check("isfinite filter", finite, [1.5, -2.25, 3.0, 0.5], 0)
    check("count of nan and inf", kael.stack([kael.isnan(raw).sum(), kael.isinf(raw).sum()]), [1, 2], 0)
    check("floor, ceil, trunc, round", kael.stack([finite.floor(), finite.ceil(), finite.trunc(), finite.round()]),
          [np.floor(finite.cpu().numpy()), np.ceil(finite.cpu().numpy()), np.trunc(finite.cpu().numpy()), np.round(finite.cpu().numpy())], 0)
    values, indices = finite.max(dim=0)
    check("max(dim) gives values and indices", kael.stack([values, indices.double()]), [3.0, 2.0], 0)
    check("amax/amin", kael.stack([finite.amax(), finite.amin()]), [3.0, -2.25], 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    device = kael.device(args.device)
    generator = kael.Generator().manual_seed(args.seed)
    print(f"numerics on {device}")
    histogram(device, generator)
    heat_equation(device)
    conjugate_gradients(device, generator)
    quadrature_and_series(device)
    integer_tricks(device)
    data_cleaning(device)
    if failures:
        print(f"{len(failures)} disagreements with numpy: {', '.join(failures)}")
        return 1
    print("all results agree with numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
