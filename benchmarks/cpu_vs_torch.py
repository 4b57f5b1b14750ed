#!/usr/bin/python3
"""kael on the CPU beside PyTorch CPU and numpy in one run, judged against the CPU speed issue's
bars: every model-path case of model_path_vs_torch.py (row ops, reductions, index and sequence ops,
elementwise, linear, attention, a GPT-2 small training step and generation, a char-GPT step),
a + b from Python beside numpy (python_overhead.py) and the Fashion-MNIST MLP epoch from
C++ (mlp_epoch.py), with the same thread count on every side. Prints one table, writes JSON.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/cpu_vs_torch.py \\
        [--scale 0.125] [--repeat 5] [--min-sample-ms 20] [--threads N] [--json-out F]

--guard F (CI's smoke run, F = 1/3): exit 1 when any case's speed stays below F after two more
measurements (each side's best time of three, so noise on either side cannot fail it, but a 10x
regression does); the message names the case and both times.

Bars: row ops, reductions, index and sequence ops (and linear, attention) speed >= 1.0;
elementwise >= 1.0 contiguous, >= 0.8 strided or broadcast; a + b of 16 elements at most 1.5x
numpy's time, of 1e6 at least numpy's speed; the MLP epoch at most PyTorch's time. The model
rows have no bar of their own. Exit status 1 on an error, 77 when torch or numpy is missing.
"""
import argparse
import json
import math
import os
import pathlib
import re
import sys

import mlp_epoch
import model_path_cases
import model_path_vs_torch

SKIPPED = 77
STRIDED = ("a + a.T", "a + row", "contiguous() of a transpose", "where on", "masked_fill on")
MODELS = ("training step", "generation")


def bar_for(name):
    """The issue's bar for a model-path case, or None for the model rows."""
    if any(part in name for part in MODELS):
        return None
    if any(name.startswith(part) for part in STRIDED) or (
            name.startswith("elementwise ") and (", transposed" in name or " + row" in name)):
        return 0.8
    if name.startswith(("Conv1d", "Conv2d", "LSTM", "GRU")):
        return 0.9  # the layers issue's cpu bar for convolution and LSTM forward + backward
    return 1.0  # contiguous elementwise, row ops, reductions, index and sequence ops


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.125)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-sample-ms", type=float, default=20)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--build-dir", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--data", type=pathlib.Path, default=mlp_epoch.DEFAULT_DATA)
    parser.add_argument("--skip-models", action="store_true", help="no GPT rows (a smoke run)")
    parser.add_argument("--skip-mlp", action="store_true", help="no MLP epoch row")
    parser.add_argument("--json-out", type=pathlib.Path)
    parser.add_argument("--filter", default=None,
                        help="only the cases whose name matches this regular expression")
    parser.add_argument("--guard", type=float, default=None,
                        help="fail when a case's best speed of three stays below this")
    return parser.parse_args()


def guard(rows, cases, minimum, measure):
    """Rows below minimum measured twice more: each side keeps its best time of the three (noise
    only ever slows a side), and the speed is their ratio. Returns the rows still below."""
    by_name = {case.name: case for case in cases}
    failures = []
    for row in rows:
        if "speed" not in row or row["case"] not in by_name or row["speed"] >= minimum:
            continue
        rate = by_name[row["case"]].higher_is_better  # tokens/s: the best is the largest
        best = max if rate else min
        for _ in range(2):
            again = measure(by_name[row["case"]])
            if "speed" in again:
                row["kael"] = best(row["kael"], again["kael"])
                row["torch"] = best(row["torch"], again["torch"])
        row["speed"] = row["kael"] / row["torch"] if rate else row["torch"] / row["kael"]
        if row["speed"] < minimum:
            failures.append(row)
    return failures


def main():
    arguments = parse_arguments()
    try:
        import torch  # pylint: disable=import-outside-toplevel
        import kael  # pylint: disable=import-outside-toplevel
        import python_overhead  # pylint: disable=import-outside-toplevel (numpy)
    except ImportError as error:
        print(f"cpu_vs_torch: {error}; nothing measured", file=sys.stderr)
        return SKIPPED
    kael.set_num_threads(arguments.threads)
    torch.set_num_threads(arguments.threads)
    timer = model_path_vs_torch.Timer(lambda: None, arguments.repeat, arguments.min_sample_ms / 1000)
    cases = model_path_cases.op_cases(arguments.scale)
    if not arguments.skip_models:
        cases += model_path_cases.model_cases(arguments.scale)
    if arguments.filter:
        cases = [case for case in cases if re.search(arguments.filter, case.name)]
    rows, failed = [], False
    print(f"kael {kael.__version__ if hasattr(kael, '__version__') else ''} beside torch "
          f"{torch.__version__}, {arguments.threads} threads each")
    print(f"{'case':<56} {'kael':>11} {'torch':>11} {'speed':>7} {'bar':>5}")
    for case in cases:
        row = model_path_vs_torch.measure_case(case, (kael, torch), ("cpu", torch.device("cpu")),
                                            (timer, timer))
        row["bar"] = bar_for(case.name)
        if "error" in row:
            failed = True
            row["verdict"] = "FAIL"
            print(f"{case.name:<56} FAILED {row['error']}")
        else:
            row["verdict"] = "" if row["bar"] is None else (
                "PASS" if row["speed"] >= row["bar"] else "FAIL")
            print(f"{case.name:<56} {row['kael']:>9.4g}{case.unit:>2} {row['torch']:>9.4g}"
                  f"{case.unit:>2} {row['speed']:>7.2f} {row['bar'] or '':>5} {row['verdict']}",
                  flush=True)
        rows.append(row)
    for overhead in python_overhead.measure(rounds=7):
        name = f"Python a + b of {overhead['elements']} elements (beside numpy)"
        row = {"case": name, "unit": "us", "kael": overhead["kael_us"],
               "numpy": overhead["numpy_us"], "speed": 1 / overhead["time_ratio"],
               "bar": overhead["bar"], "verdict": "PASS" if overhead["pass"] else "FAIL"}
        rows.append(row)
        print(f"{name:<56} {row['kael']:>9.4g}us {row['numpy']:>9.4g}us {row['speed']:>7.2f}"
              f" {row['verdict']} ({row['bar']})")
    if not arguments.skip_mlp and (arguments.data / "train-images-idx3-ubyte.gz").exists():
        errors = []
        row = mlp_epoch.measure(torch, arguments.build_dir, arguments.data, 1,
                                    arguments.threads, errors)
        failed = failed or bool(errors)
        if "speed" in row:
            row["bar"], row["verdict"] = 1.0, "PASS" if row["speed"] >= 1.0 else "FAIL"
            print(f"{row['case']:<56} {row['kael']['epochs'][-1]:>10.3f}s "
                  f"{row['torch']['epochs'][-1]:>10.3f}s {row['speed']:>7.2f} {1.0:>5} "
                  f"{row['verdict']}")
        for error in errors:
            print("error: " + error, file=sys.stderr)
        rows.append(row)
    if arguments.guard is not None:
        measure = lambda case: model_path_vs_torch.measure_case(  # noqa: E731
            case, (kael, torch), ("cpu", torch.device("cpu")), (timer, timer))
        slow = guard(rows, cases, arguments.guard, measure)
        for row in slow:
            print(f"GUARD FAIL: {row['case']}: kael {row['kael']:.4g}{row['unit']}, torch "
                  f"{row['torch']:.4g}{row['unit']}, speed {row['speed']:.2f} < "
                  f"{arguments.guard:.2f} (best times of three)")
        print(f"guard: {len(slow)} of {len(rows)} cases below {arguments.guard:.2f} of "
              f"PyTorch's speed")
        failed = failed or bool(slow)
    judged = [row for row in rows if row.get("verdict") in ("PASS", "FAIL")]
    passed = sum(row["verdict"] == "PASS" for row in judged)
    speeds = [row["speed"] for row in rows if "speed" in row]
    if speeds:
        geometric = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        print(f"geometric mean speed over {len(speeds)} rows: {geometric:.2f}")
    print(f"bars: {passed} of {len(judged)} PASS")
    if arguments.json_out:
        arguments.json_out.write_text(json.dumps(
            {"threads": arguments.threads, "scale": arguments.scale, "torch": torch.__version__,
             "rows": rows}, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
