#!/usr/bin/python3
"""The --check of generate_reference.py must pass on any CPU and still catch a stale file.

numpy's SIMD exp, sin, tanh, ..., BLAS matmul and its summation differ in the last bit between
CPUs (AVX2 vs AVX-512) and thread counts. This regenerates the data with every such function's
results moved by up to 4 ULP (numpy's AVX-512 builds of exp, tanh, ... are 4 ULP accurate), as another machine would compute them, and requires --check to
accept it; then it changes a single value by far more than a last bit and requires --check to
reject it. Then it runs --check with numpy's AVX-512 (and AVX2) loops turned off.
Exit status: 0, 1 on a failure, 77 when numpy is missing (CTest: skipped).
"""

import copy
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.dont_write_bytecode = True
sys.path.insert(0, str(HERE))
import generate_reference as reference  # noqa: E402  pylint: disable=wrong-import-position

np = reference.np
DATA = HERE / "reference_data.json"
# What differs between CPUs: transcendental SIMD loops, BLAS, and every summation order.
PERTURBED = ["exp", "log", "sin", "cos", "tanh", "power", "sum", "mean", "cumsum", "prod",
             "var", "std", "matmul"]


class LastBitNoise:
    """Replaces numpy functions by ones whose float results move by -4..4 ULP."""

    def __init__(self):
        self.rng = np.random.default_rng(7)
        self.saved = {}
        self.inside = False  # numpy's own random functions call the wrapped ones

    def wrap(self, function):
        def perturbed(*args, **kwargs):
            result = function(*args, **kwargs)
            array = np.asarray(result)
            if array.dtype.kind != "f" or self.inside:
                return result
            self.inside = True
            try:
                steps = self.rng.integers(-4, 5, size=array.shape)
            finally:
                self.inside = False
            with np.errstate(all="ignore"):
                # Exact zeros stay: a product with a zero or an empty sum is 0 on every CPU.
                moved = np.where(np.isfinite(array) & (array != 0),
                                 array + steps * np.spacing(np.abs(array)), array)
            return moved if isinstance(result, np.ndarray) else array.dtype.type(moved)
        return perturbed

    def __enter__(self):
        for name in PERTURBED:
            self.saved[name] = getattr(np, name)
            setattr(np, name, self.wrap(self.saved[name]))
        self.saved["norm"] = np.linalg.norm
        np.linalg.norm = self.wrap(self.saved["norm"])
        return self

    def __exit__(self, *exc):
        np.linalg.norm = self.saved.pop("norm")
        for name, function in self.saved.items():
            setattr(np, name, function)


def exact_differences(a, b):
    saved = reference.ULPS
    reference.ULPS = 0
    try:
        return sum(len(reference.differences(x, y)) for x, y in zip(a["cases"], b["cases"]))
    finally:
        reference.ULPS = saved


def largest_float_output(document, dtype):
    """The name, output and index of the largest value among the first case's outputs of
    that dtype: changing it relatively changes it relative to its array's scale too."""
    for case in document["cases"]:
        for out in case["outputs"]:
            finite = [(abs(v), k) for k, v in enumerate(out["values"]) if isinstance(v, float)]
            if out["dtype"] == dtype and finite and max(finite)[0] > 0.1:
                return case["name"], out, max(finite)[1]
    raise LookupError("no %s output" % dtype)


def check_with_fewer_simd_features():
    """--check in a numpy told to leave its widest SIMD loops unused, as on a CPU without them
    (AVX-512 off, then AVX2 and FMA3 too); only features this CPU has can be turned off."""
    import os  # pylint: disable=import-outside-toplevel
    import subprocess  # pylint: disable=import-outside-toplevel
    from numpy.core._multiarray_umath import (  # pylint: disable=import-outside-toplevel
        __cpu_dispatch__, __cpu_features__)
    failures = []
    avx512 = [f for f in __cpu_dispatch__ if f.startswith("AVX512")]
    for disabled in (avx512, avx512 + ["AVX2", "FMA3", "F16C", "AVX"]):
        present = [f for f in disabled if __cpu_features__.get(f)]
        if not present:
            continue
        environment = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(present))
        print("with NPY_DISABLE_CPU_FEATURES=" + environment["NPY_DISABLE_CPU_FEATURES"])
        result = subprocess.run([sys.executable, str(HERE / "generate_reference.py"), "--check",
                                 str(DATA)], env=environment, check=False, timeout=300)
        if result.returncode != 0:
            failures.append("--check fails without " + " ".join(present))
    return failures


def main():
    if np is None:
        print("numpy is missing: run with /usr/bin/python3 (Debian's python3-numpy)")
        return reference.SKIPPED
    failures = []
    clean = reference.generate()
    with LastBitNoise():
        noisy = reference.generate()
    moved = exact_differences(clean, noisy)
    print("last-bit noise changed %d numbers" % moved)
    if moved < 100:
        failures.append("the noise changed only %d numbers: this test proves nothing" % moved)
    if reference.check(DATA, noisy) != 0:
        failures.append("--check rejects data that differs only in the last bits")
    # A value changed by far more than a few ULP (a stale file) must be caught, in f64 and f32.
    print("each of the next two checks must find 1 difference:")
    for dtype, factor in (("f64", 1 + 1e-12), ("f32", 1 + 1e-5)):
        stale = copy.deepcopy(clean)
        name, out, index = largest_float_output(stale, dtype)
        out["values"][index] *= factor
        if reference.check(DATA, stale) == 0:
            failures.append("--check accepts %s output %d of %s changed by a relative %g"
                            % (dtype, index, name, factor - 1))
    failures += check_with_fewer_simd_features()
    for line in failures:
        print("FAIL: " + line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
