#!/usr/bin/python3
"""a + b from Python in kael (cpu) beside numpy, in one process: the per-op overhead bar of the
CPU speed issue (16 elements: at most 1.5x numpy's time) and the bandwidth one (1e6 elements:
at least numpy's speed). Rounds alternate between the libraries, and each side keeps its best
round, so a slow moment of the machine does not land on one side only.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_overhead.py [--rounds 9]
"""
import argparse
import json
import timeit

import numpy as np

import kael


def measure(rounds):
    """The rows: elements, kael_us, numpy_us, time_ratio (kael/numpy), bar, pass."""
    rows = []
    for elements, calls, bar in [(16, 200000, 1.5), (1_000_000, 200, 1.0)]:
        a, b = kael.ones(elements), kael.ones(elements)
        x, y = np.ones(elements, dtype=np.float32), np.ones(elements, dtype=np.float32)
        best_kael = best_numpy = float("inf")
        for _ in range(rounds):
            best_kael = min(best_kael, timeit.timeit(lambda: a + b, number=calls) / calls)
            best_numpy = min(best_numpy, timeit.timeit(lambda: x + y, number=calls) / calls)
        ratio = best_kael / best_numpy  # kael's time in numpy's
        passed = ratio <= bar if elements == 16 else best_numpy / best_kael >= bar
        rows.append({"elements": elements, "kael_us": best_kael * 1e6,
                     "numpy_us": best_numpy * 1e6, "time_ratio": ratio,
                     "bar": f"<= {bar}x numpy's time" if elements == 16 else ">= numpy's speed",
                     "pass": passed})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--json-out", help="also write the rows here")
    arguments = parser.parse_args()
    rows = measure(arguments.rounds)
    for row in rows:
        print(f"a + b, {row['elements']:>7} f32: kael {row['kael_us']:9.3f} us, numpy "
              f"{row['numpy_us']:9.3f} us, kael/numpy time {row['time_ratio']:5.2f}  "
              f"{'PASS' if row['pass'] else 'FAIL'} ({row['bar']})")
    if arguments.json_out:
        with open(arguments.json_out, "w", encoding="utf-8") as out:
            json.dump({"threads": kael.get_num_threads(), "rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
