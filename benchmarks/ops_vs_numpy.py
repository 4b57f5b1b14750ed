#!/usr/bin/python3
"""kael's cpu throughput beside numpy's, measured on this machine in this run.

Runs `kael-bench --json`, rebuilds every case it reports in numpy (same op, dtype, shape,
warm-up and number of repeats, median time), and prints one table with the ratio kael/numpy
(above 1: kael is faster). Both sides use OpenBLAS for matmul with the same thread count.

Run with Debian's interpreter, which has python3-numpy:
    /usr/bin/python3 benchmarks/ops_vs_numpy.py [--threads N] [--repeat N] [--filter TEXT]

Exit status: 0 whatever the ratios, 1 on an error, 77 when numpy is missing (CTest: skipped).
"""

import argparse
import ctypes
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

SKIPPED = 77


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kael-bench", type=pathlib.Path,
                        help="the kael-bench binary (default: build/bin/kael-bench in the repo)")
    parser.add_argument("--threads", type=int,
                        help="OpenBLAS threads for both kael and numpy (default: OpenBLAS's own)")
    parser.add_argument("--repeat", type=int, default=10, help="timed runs per case (median)")
    parser.add_argument("--filter", default="", help="only cases whose name contains this text")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: checks that all runs")
    return parser.parse_args()


def find_kael_bench(given):
    path = given or pathlib.Path(__file__).resolve().parent.parent / "build" / "bin" / "kael-bench"
    if not path.is_file():
        sys.exit(f"ops_vs_numpy: kael-bench not found at {path} (build it, or pass --kael-bench)")
    return path


def openblas_threads(numpy):
    """Threads of the OpenBLAS numpy loaded (Debian: libblas.so.3 is OpenBLAS), or None."""
    del numpy  # imported first, so the library below is the one already loaded
    for name in ("libblas.so.3", "libopenblas.so.0"):
        try:
            return ctypes.CDLL(name).openblas_get_num_threads()
        except (OSError, AttributeError):
            continue
    return None


def run_kael_bench(path, arguments, environment):
    command = [str(path), "--json", "--repeat", str(arguments.repeat)]
    if arguments.filter:
        command += ["--filter", arguments.filter]
    if arguments.quick:
        command.append("--quick")
    # Progress lines go to stderr, straight to the user.
    finished = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=environment,
                              check=False)
    if finished.returncode != 0:
        sys.exit(f"ops_vs_numpy: {' '.join(command)} exited with {finished.returncode}")
    lines = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    header = next((line for line in lines if line.get("type") == "environment"), {})
    cases = [line for line in lines if line.get("type") == "case"]
    if not cases:
        sys.exit("ops_vs_numpy: kael-bench reported no case")
    return header, cases


def numpy_operation(numpy, case):
    """The case as a numpy user writes it: operands built outside the clock, like kael-bench."""
    dtype = {"f32": numpy.float32, "f64": numpy.float64}[case["dtype"]]
    shape = tuple(case["shape"])
    ramp = numpy.arange(numpy.prod(shape), dtype=dtype)
    a = numpy.sin(ramp).reshape(shape)
    b = numpy.cos(ramp).reshape(shape)
    operations = {
        "matmul": lambda: numpy.matmul(a, b),
        "add": lambda: a + b,
        "sum": lambda: a.sum(),
        "relu": lambda: numpy.maximum(a, 0),
        "add_transposed": lambda: a.T + b,
    }
    if case["op"] not in operations:
        sys.exit(f"ops_vs_numpy: no numpy version of op {case['op']!r} ({case['name']})")
    return operations[case["op"]]


def timed_run(operation):
    start = time.perf_counter()
    result = operation()
    stop = time.perf_counter()
    del result  # released after the clock stops, as kael-bench does
    return stop - start


def measure_numpy(numpy, case):
    operation = numpy_operation(numpy, case)
    timed_run(operation)  # warm-up
    median = statistics.median(timed_run(operation) for _ in range(case["repeats"]))
    work = case["figure"] * case["median_s"]  # flops or elements, as kael-bench counted them
    measured = {"median_s": median, "figure": work / median}
    if "bytes_per_element" in case:
        measured["gb_per_s"] = case["gb_per_s"] * case["median_s"] / median
    return measured


def print_table(rows):
    titles = ("case", "unit", "kael", "numpy", "kael/numpy", "kael GB/s", "numpy GB/s",
              "kael ms", "numpy ms")
    table = [titles]
    for case, theirs in rows:
        bandwidth = "gb_per_s" in case
        table.append((case["name"], case["unit"], f"{case['figure']:.2f}",
                      f"{theirs['figure']:.2f}", f"{case['figure'] / theirs['figure']:.2f}",
                      f"{case['gb_per_s']:.1f}" if bandwidth else "",
                      f"{theirs['gb_per_s']:.1f}" if bandwidth else "",
                      f"{case['median_s'] * 1e3:.3f}", f"{theirs['median_s'] * 1e3:.3f}"))
    widths = [max(len(row[column]) for row in table) for column in range(len(titles))]
    for index, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width)
                                             for cell, width in zip(row[1:], widths[1:])]
        print("  ".join(cells))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def main():
    arguments = parse_arguments()
    path = find_kael_bench(arguments.kael_bench)
    if arguments.threads is not None:
        if arguments.threads < 1:
            sys.exit("ops_vs_numpy: --threads must be at least 1")
        # Before numpy is imported: OpenBLAS reads it once, when it loads.
        os.environ["OPENBLAS_NUM_THREADS"] = str(arguments.threads)
    try:
        import numpy  # pylint: disable=import-outside-toplevel
    except ImportError:
        print(f"ops_vs_numpy: numpy is missing for {sys.executable} (Debian: apt-get install "
              "python3-numpy); skipped", file=sys.stderr)
        return SKIPPED
    threads = openblas_threads(numpy)
    environment = dict(os.environ)
    if threads is not None:
        # kael's plugin loads its own copy of OpenBLAS: give it the count numpy's copy has.
        environment["OPENBLAS_NUM_THREADS"] = str(threads)
    header, cases = run_kael_bench(path, arguments, environment)

    rows = []
    for index, case in enumerate(cases, start=1):
        print(f"numpy [{index}/{len(cases)}] {case['name']} ...", end="", file=sys.stderr,
              flush=True)
        theirs = measure_numpy(numpy, case)
        print(f" {theirs['median_s'] * 1e3:.3f} ms median of {case['repeats']}", file=sys.stderr)
        rows.append((case, theirs))

    print(f"kael {header.get('kael_version', '?')} ({header.get('plugin_build', '?')}) vs "
          f"numpy {numpy.__version__} (Python {sys.version.split()[0]}), "
          f"{header.get('hardware_threads', '?')} hardware threads")
    print(f"OpenBLAS threads (matmul), kael and numpy alike: "
          f"{threads if threads is not None else 'unknown (OpenBLAS not found in numpy)'}")
    print()
    print_table(rows)
    print()
    print("kael/numpy above 1: kael is faster. Figures are medians; GFLOP/s = 2n^3/t for matmul,")
    print("Gelem/s otherwise; GB/s counts 12 bytes/element for add, 8 for relu, 4 for sum.")
    print("numpy runs each op as users write it: np.matmul(a, b), a + b (allocating its result,")
    print("no out=), a.sum(), np.maximum(a, 0), a.T + b. numpy's elementwise ops and sum are")
    print("single-threaded; kael's cpu plugin splits them over the host threads.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
