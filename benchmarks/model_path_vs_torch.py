#!/usr/bin/env python3
"""kael beside PyTorch on the ops a model spends its time in, in one process on one device.

Both libraries run the same case on the same device: the rows of the GPU speed issue (strided and
broadcast elementwise, reductions over any dim, softmax, layer_norm, cross_entropy, embedding,
sort, top-k, cumsum, linear, attention) and a GPT-2-small training step and greedy generation.
Each figure is the median of --repeat samples after a warm-up, taken in turn with the other
side's (torch, kael, torch, ...) so that a drifting machine weighs on both alike; a sample runs
the case until it lasts --min-sample-ms, between two synchronisations (kael.synchronize /
torch.cuda.synchronize).
"speed" is torch time / kael time: above 1, kael is faster. TF32 is off.

    /opt/torch/.venv/bin/python3 benchmarks/model_path_vs_torch.py --device cuda     # on the H200
    /usr/bin/python3 benchmarks/model_path_vs_torch.py --device cpu --scale 0.125    # python3-torch

kael is imported from PYTHONPATH (build/python, or a module built on the GPU machine). Prints a
table; --json-out writes it as JSON. Exit 0 whatever the ratios, 1 when a case failed (the rest
still runs), 77 when torch or the device is missing.
"""
import argparse
import json
import math
import statistics
import sys
import time

import model_path_cases
import reduce_cases

SKIPPED = 77


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiplies the leading size of every case (cpu: 0.125)")
    parser.add_argument("--repeat", type=int, default=7, help="timed samples per case")
    parser.add_argument("--min-sample-ms", type=float, default=20.0)
    parser.add_argument("--filter", default="", help="only cases whose name contains this (or one of several, split by |)")
    parser.add_argument("--skip-models", action="store_true", help="no GPT-2 rows")
    parser.add_argument("--json-out", help="write the table as JSON here too")
    return parser.parse_args()


# The GPU speed issue's bars, by case name: (substring, minimum speed). The first match wins;
# generation also needs BAR_TOKENS_PER_SECOND. Cases matching none have no bar.
BARS = [("sort", 0.5), ("argsort", 0.5), ("topk", 0.5), ("cumsum", 0.5),
        ("attention fwd+bwd", 0.9), ("training step", 1.1), ("greedy generation", 4.0),
        ("MLP epoch", 1.5), ("ResNet-50 conv", 0.95), ("LSTM(", 0.95), ("BatchNorm2d", 1.0),
        ("Pool", 1.0), ("", 0.9)]
BAR_TOKENS_PER_SECOND = 800


# Issue 28's GPU bars for the generated reductions (reduce_cases.py): 0.95 for every op
# over every dim, 0.9 for the one-row cumsum, 1.0 for the 1024-element sum from Python.
REDUCTION_BARS = [("sum over the whole tensor, 1024", 1.0), ("(one row)", 0.9)]


def bar_for(name):
    for key, minimum in REDUCTION_BARS:
        if key in name:
            return minimum
    if any(name.startswith(f"{reduction.name} over ")
           for reduction in reduce_cases.REDUCTIONS):
        return 0.95
    return next(minimum for key, minimum in BARS if key in name)


def judge(row):
    """PASS or FAIL against the row's bar (speed, and tokens/s for generation)."""
    if "speed" not in row:
        return "FAIL"
    passed = row["speed"] >= row["bar"]
    if "generation" in row["case"]:
        passed = passed and row["kael"] >= BAR_TOKENS_PER_SECOND
    return "PASS" if passed else "FAIL"


class Timer:
    """Seconds of one call of a run: calls per sample doubled until a sample lasts
    min_sample_seconds (hiding the synchronisation), then `repeat` samples."""

    def __init__(self, synchronize, repeat, min_sample_seconds):
        self.synchronize = synchronize
        self.repeat = repeat
        self.min_sample_seconds = min_sample_seconds

    def calls_per_sample(self, run):
        run()
        self.synchronize()
        count = 1
        while True:
            elapsed = self.sample(run, count) * count
            if elapsed >= self.min_sample_seconds or count >= 1 << 16:
                return count
            count *= 2

    def sample(self, run, count):
        start = time.perf_counter()
        for _ in range(count):
            run()
        self.synchronize()
        return (time.perf_counter() - start) / count

    def __call__(self, run):
        count = self.calls_per_sample(run)
        return statistics.median(self.sample(run, count) for _ in range(self.repeat))


# A pause before each sample: the other side's threads stop spinning first (OpenMP's spin for
# milliseconds after a parallel region, kael's pool 50 us), so neither competes with the other.
SETTLE_SECONDS = 0.03


def paired_medians(time_kael, kael_run, time_torch, torch_run):
    """Both sides' median seconds a call, their samples taken in turn (torch, kael, torch, ...)
    so that a machine whose speed drifts (a shared CPU) weighs on both alike."""
    counts = (time_kael.calls_per_sample(kael_run), time_torch.calls_per_sample(torch_run))
    kael_samples, torch_samples = [], []
    for _ in range(max(time_kael.repeat, time_torch.repeat)):
        time.sleep(SETTLE_SECONDS)
        torch_samples.append(time_torch.sample(torch_run, counts[1]))
        time.sleep(SETTLE_SECONDS)
        kael_samples.append(time_kael.sample(kael_run, counts[0]))
    return statistics.median(kael_samples), statistics.median(torch_samples)


def measure_case(case, libraries, devices, timers):
    """One case on both sides: a row with kael, torch and speed (above 1: kael is faster), or
    with an error. libraries, devices and timers are (kael, torch) pairs. Both sides' setups
    live through the measurement, whose samples alternate between them."""
    (kael, torch), (kael_device, torch_device), (time_kael, time_torch) = \
        libraries, devices, timers
    row = {"case": case.name, "unit": case.unit}
    try:
        torch_run = case.torch_setup(torch, torch_device)
        kael_run = case.kael_setup(kael, kael_device)
        kael_seconds, torch_seconds = paired_medians(time_kael, kael_run, time_torch, torch_run)
        del torch_run, kael_run
        row["torch"] = case.figure(torch_seconds)
        row["kael"] = case.figure(kael_seconds)
        # Lower is better for times, higher for rates: speed above 1 means kael is faster.
        row["speed"] = row["kael"] / row["torch"] if case.higher_is_better else \
            row["torch"] / row["kael"]
    except Exception as error:  # one broken case must not hide the others
        row["error"] = f"{type(error).__name__}: {error}"[:300]
    return row


def main():
    arguments = parse_arguments()
    try:
        import torch
        import kael
    except ImportError as error:
        print(f"model_path_vs_torch: {error}; nothing measured", file=sys.stderr)
        return SKIPPED
    on_gpu = arguments.device.startswith("cuda")
    if on_gpu and not torch.cuda.is_available():
        print("model_path_vs_torch: torch sees no CUDA device", file=sys.stderr)
        return SKIPPED
    if not kael.is_available(arguments.device):
        print(f"model_path_vs_torch: kael has no {arguments.device}", file=sys.stderr)
        return SKIPPED
    if on_gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if not on_gpu:
        # The same thread count on both sides: torch's default is the physical cores (one on a
        # 2-vCPU machine), kael's every vCPU.
        torch.set_num_threads(kael.get_num_threads())
        print(f"cpu: {kael.get_num_threads()} threads for kael and torch")
    torch_device = torch.device("cuda:0" if on_gpu else "cpu")
    kael_device = "cuda:0" if on_gpu else "cpu"
    sync_torch = torch.cuda.synchronize if on_gpu else (lambda: None)
    min_seconds = arguments.min_sample_ms / 1000
    time_torch = Timer(sync_torch, arguments.repeat, min_seconds)
    time_kael = Timer(lambda: kael.synchronize(kael_device), arguments.repeat, min_seconds)
    cases = model_path_cases.op_cases(arguments.scale)
    if arguments.device == "cuda":
        cases += model_path_cases.gpu_cases(arguments.scale)
    if not arguments.skip_models:
        cases += model_path_cases.model_cases(arguments.scale)
    rows, failed = [], False
    print(f"{'case':<52} {'kael':>12} {'torch':>12} {'speed':>7} {'bar':>5}")
    for case in cases:
        if not any(part in case.name for part in arguments.filter.split("|")):
            continue
        row = measure_case(case, (kael, torch), (kael_device, torch_device),
                           (time_kael, time_torch))
        row["bar"] = bar_for(case.name)
        failed = failed or "error" in row
        row["verdict"] = judge(row)
        rows.append(row)
        if "error" in row:
            print(f"{case.name:<52} FAILED {row['error']}")
        else:
            print(f"{case.name:<52} {row['kael']:>10.4g}{case.unit:>2} {row['torch']:>10.4g}"
                  f"{case.unit:>2} {row['speed']:>7.2f} {row['bar']:>5} {row['verdict']}",
                  flush=True)
        if on_gpu:
            torch.cuda.empty_cache()
            kael.empty_cache() if hasattr(kael, "empty_cache") else None
    if arguments.json_out:
        with open(arguments.json_out, "w", encoding="utf-8") as out:
            json.dump({"device": arguments.device, "scale": arguments.scale,
                       "torch": torch.__version__, "rows": rows}, out, indent=1)
    speeds = [row["speed"] for row in rows if "speed" in row]
    if speeds:
        geometric = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        print(f"geometric mean speed over {len(speeds)} cases: {geometric:.2f}")
    passed = sum(row["verdict"] == "PASS" for row in rows)
    print(f"bars: {passed} of {len(rows)} PASS"
          f" (generation also needs >= {BAR_TOKENS_PER_SECOND} tok/s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
