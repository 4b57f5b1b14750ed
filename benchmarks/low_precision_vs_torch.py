#!/usr/bin/env python3
"""bfloat16 and float16 ops beside PyTorch on one device: elementwise ops on 2^20 elements
(contiguous and transposed) and reductions over every dim position of 64x128x128, generated from
the lists below, in each dtype torch itself runs the op in (torch 1.13's CPU kernels lack some
float16 ones: those rows are skipped and named).

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/low_precision_vs_torch.py [--device cpu]

Timing as model_path_vs_torch.py (paired medians, the same thread count on both sides);
"speed" is torch time / kael time.
"""
import argparse
import math
import sys

from model_path_cases import Case
from model_path_vs_torch import SKIPPED, Timer, measure_case

UNARY = ("exp", "tanh", "sigmoid", "relu", "gelu", "silu", "neg", "abs")
BINARY = ("add", "mul", "sub", "div")
REDUCTIONS = ("sum", "mean", "prod", "amax", "amin")
DIMS = (("the last dim", -1), ("a middle dim", 1), ("the first dim", 0), ("dims (0, 2)", (0, 2)),
        ("the whole tensor", None))


def function(lib, name):
    if name in ("gelu", "silu"):
        return getattr(lib.nn.functional, name)
    return getattr(lib, name)


def elementwise(name, dtype_name, transposed):
    side = 1024

    def setup(lib, device):
        dtype = getattr(lib, dtype_name)
        x = lib.randn(side, side, device=device).to(dtype)
        y = lib.randn(side, side, device=device).to(dtype)
        if transposed:
            x = x.t()
        f = function(lib, name)
        return (lambda: f(x, y)) if name in BINARY else (lambda: f(x))
    return Case(f"{name}, 2^20 {dtype_name}{', transposed' if transposed else ''}", setup, setup)


def reduction(name, dtype_name, where, dim):
    def setup(lib, device):
        x = lib.randn(64, 128, 128, device=device).to(getattr(lib, dtype_name))
        f = getattr(x, name)
        return (lambda: f()) if dim is None else (lambda: f(dim))
    return Case(f"{name} over {where}, 64x128x128 {dtype_name}", setup, setup)


def cases():
    generated = []
    for dtype_name in ("bfloat16", "float16"):
        for name in UNARY + BINARY:
            for transposed in (False, True):
                generated.append(elementwise(name, dtype_name, transposed))
        for name in REDUCTIONS:
            for where, dim in DIMS:
                if name == "prod" and isinstance(dim, tuple):
                    continue  # torch.prod takes one dim
                generated.append(reduction(name, dtype_name, where, dim))
    return generated


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-sample-ms", type=float, default=20.0)
    parser.add_argument("--filter", default="",
                        help="only cases whose name contains this (or one of several, split by |)")
    arguments = parser.parse_args()
    try:
        import torch
        import kael
    except ImportError as error:
        print(f"low_precision_vs_torch: {error}; nothing measured", file=sys.stderr)
        return SKIPPED
    on_gpu = arguments.device.startswith("cuda")
    if on_gpu:
        sync_torch, kael_device, torch_device = torch.cuda.synchronize, "cuda:0", "cuda:0"
    else:
        torch.set_num_threads(kael.get_num_threads())
        sync_torch, kael_device, torch_device = (lambda: None), "cpu", "cpu"
    seconds = arguments.min_sample_ms / 1000
    timers = (Timer(lambda: kael.synchronize(kael_device), arguments.repeat, seconds),
              Timer(sync_torch, arguments.repeat, seconds))
    print(f"kael {kael.__version__} beside torch {torch.__version__} on {arguments.device}")
    print(f"{'case':<52} {'kael':>10} {'torch':>10} {'speed':>6}")
    speeds, skipped = [], []
    for case in cases():
        if not any(part in case.name for part in arguments.filter.split("|")):
            continue
        row = measure_case(case, (kael, torch), (kael_device, torch.device(torch_device)), timers)
        if "error" in row:
            if "not implemented for" in row["error"]:  # torch lacks the op in this dtype
                skipped.append(case.name)
                continue
            print(f"{case.name:<52} FAILED {row['error']}")
            continue
        speeds.append(row["speed"])
        print(f"{case.name:<52} {row['kael']:>8.4g}us {row['torch']:>8.4g}us {row['speed']:>6.2f}",
              flush=True)
    if speeds:
        mean = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        print(f"geometric mean speed over {len(speeds)} rows: {mean:.2f}; "
              f"{sum(s >= 1 for s in speeds)} at or above torch's speed")
    if skipped:
        print(f"not run by torch in that dtype ({len(skipped)}): {', '.join(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
