#!/usr/bin/python3
"""kael's op-level fuzzer: random ops on random tensors (dtypes, shapes with 0 and 1 sizes,
strides, offsets, broadcasts, views and in-place writes through them), run on cpu and on every
other device kael lists (the emulated cuda:0 here), compared with numpy and with each other.
Any crash, hang or disagreement fails.

    fuzz_ops.py --seconds 60 --seed 0     # half the time on seed 0, half on a time-based seed

A failure prints the shrunk case as a Python reproducer and the batch seed that finds it again
(--seed K --batches 1). The examples run in a worker process, so a crash or a hang (caught by a
per-example faulthandler timeout) still prints the case that caused it.
"""
import argparse
import faulthandler
import os
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, Phase, given, reject, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import cases_elementwise  # noqa: E402
import cases_reduce  # noqa: E402
import cases_round3  # noqa: E402
import cases_scatter  # noqa: E402
from fuzz_case import Loose  # noqa: E402
from fuzz_reference import Expect  # noqa: E402
from fuzz_known import AMBIGUOUS, KNOWN_UNTIL_ISSUE_9_MERGE, known_failure  # noqa: E402

TYPED_ERRORS = (ValueError, TypeError, IndexError, RuntimeError, OverflowError, MemoryError,
                NotImplementedError)
MAX_OUTPUT = 1 << 20
CASES = st.one_of(*cases_elementwise.STRATEGIES, *cases_reduce.STRATEGIES,
                  *cases_scatter.STRATEGIES, *cases_round3.STRATEGIES)


class Disagreement(AssertionError):
    pass


def compare(actual, expected, tol, what):
    """None when actual matches expected (an ndarray or Loose) within tol, else the reason."""
    care = scale = None
    if isinstance(expected, Loose):
        expected, care, scale = expected.array, expected.care, expected.scale
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return f"{what}: shape {actual.shape}, expected {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"{what}: dtype {actual.dtype}, expected {expected.dtype}"
    care = np.ones(actual.shape, bool) if care is None else np.broadcast_to(care, actual.shape)
    if actual.dtype.kind != "f":
        bad = care & (actual != expected)
    else:
        if scale is not None:  # partial sums can overflow: where, depends on order and FMA
            care = care & (np.abs(scale) <= np.finfo(actual.dtype).max)
        rtol, atol = tol.by_dtype[actual.dtype.name]
        # Subnormal results (squares of 1e-22 in float32) keep only absolute precision.
        subnormal = 16 * np.finfo(actual.dtype).tiny
        limit = atol * (1.0 if scale is None else np.abs(scale)) + rtol * np.abs(expected) + \
            subnormal
        with np.errstate(all="ignore"):
            nan_a, nan_e = np.isnan(actual), np.isnan(expected)
            finite = np.isfinite(actual) & np.isfinite(expected)
            close = np.abs(actual.astype(np.float64) - expected) <= limit
            same = (nan_a & nan_e) | (~finite & ~nan_a & ~nan_e & (actual == expected)) | \
                (finite & close)
        bad = care & ~same
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return (f"{what}: {int(bad.sum())} of {bad.size} elements differ, first at {where}: "
            f"{actual[where]!r} vs expected {expected[where]!r}")


def judge(case, devices, kael):
    """Raises Disagreement when kael disagrees with numpy or the devices with each other."""
    arrays = case.numpy_inputs()
    shapes = [np.shape(arrays[n]) for n in case.inputs if isinstance(arrays[n], np.ndarray)]
    try:
        if np.prod(np.broadcast_shapes(*shapes), dtype=np.float64) > MAX_OUTPUT:
            reject()  # broadcasting two large operands: too big to judge quickly
    except ValueError:
        pass
    try:
        expected = case.run_reference()
    except MemoryError:
        reject()  # an operand pair not caught above (matmul batches): too big to judge
    if not isinstance(expected, Expect) and any(
            np.size(e.array if isinstance(e, Loose) else e) > MAX_OUTPUT for e in expected):
        reject()  # broadcasting made it too big to judge quickly
    results = {device: case.run_kael(kael, device) for device in devices}
    problems = []
    for device, result in results.items():
        if isinstance(result, Exception) and not isinstance(result, TYPED_ERRORS):
            problems.append(f"{device}: untyped error {type(result).__name__}: {result}")
        elif isinstance(expected, Expect) and not isinstance(result, Exception):
            problems.append(f"{device}: no error, expected one ({expected.reason})")
        elif not isinstance(expected, Expect) and isinstance(result, Exception):
            problems.append(f"{device}: {type(result).__name__}: {result} (numpy computes it)")
        elif not isinstance(expected, Expect):
            if len(result) != len(expected):
                problems.append(f"{device}: {len(result)} outputs, expected {len(expected)}")
                continue
            for i, (actual, wanted) in enumerate(zip(result, expected)):
                problem = compare(actual, wanted, case.tol, f"{device} output {i} vs numpy")
                if problem:
                    problems.append(problem)
    cpu = results[devices[0]]
    for device in devices[1:]:
        other = results[device]
        if isinstance(cpu, Exception) or isinstance(other, Exception):
            if type(cpu) is not type(other):
                problems.append(f"{device} vs {devices[0]}: {describe(other)} vs {describe(cpu)}")
            continue
        for i, (actual, wanted) in enumerate(zip(other, cpu)):
            scale = expected[i].scale if not isinstance(expected, Expect) and \
                isinstance(expected[i], Loose) else None
            problem = compare(actual, Loose(wanted, None, scale), case.tol,
                              f"{device} output {i} vs {devices[0]}")
            if problem:
                problems.append(problem)
    if problems:
        key = known_failure(case, expected)
        if key is not None:
            return key
        raise Disagreement("\n".join(problems) + f"\nnumpy: {expected!r}\nreproducer:\n" +
                           case.code(devices[-1]))
    return None


def describe(result):
    return f"{type(result).__name__}: {result}" if isinstance(result, Exception) else "a result"


def self_test(kind):
    """What --self-test does inside an example: a crash or a hang, to prove both are caught."""
    if kind == "crash":
        faulthandler._sigsegv()
    time.sleep(1e6)


def run_batch(batch_seed, examples, devices, kael, timeout, last_case, known_counts,
              self_test_kind=None):
    @seed(batch_seed)
    @settings(max_examples=examples, deadline=None, database=None, print_blob=False,
              suppress_health_check=list(HealthCheck),
              phases=[Phase.generate, Phase.target, Phase.shrink])
    @given(case=CASES)
    def fuzz(case):
        with open(last_case, "w") as record:
            record.write(case.code())
        faulthandler.dump_traceback_later(timeout, exit=True)
        try:
            if self_test_kind:
                self_test(self_test_kind)
            key = judge(case, devices, kael)
        finally:
            faulthandler.cancel_dump_traceback_later()
        if key is not None:
            known_counts[key] = known_counts.get(key, 0) + 1
    fuzz()


def worker(args):
    faulthandler.enable()
    warnings.simplefilter("ignore", RuntimeWarning)  # numpy's notes on empty means and NaN
    import kael
    devices = [record.device for record in kael.devices()]
    missing = [d for d in args.devices if d not in devices]
    if missing:
        sys.exit(f"fuzz_ops: devices {missing} are not available (kael lists {devices})")
    devices = args.devices
    known_counts = {}
    phases = [("fixed", args.seed)]
    if not args.only_seed:
        phases.append(("time-based", int(time.time()) % 1_000_000))
    budget = args.seconds / len(phases)
    for label, first_seed in phases:
        print(f"fuzz_ops: {label} seed {first_seed}, {budget:.0f} s on {devices}", flush=True)
        deadline = time.monotonic() + budget
        batch_seed, batches = first_seed, 0
        while time.monotonic() < deadline and (args.batches is None or batches < args.batches):
            try:
                run_batch(batch_seed, args.examples, devices, kael, args.timeout,
                          args.last_case, known_counts, args.self_test)
            except Exception:
                print(f"fuzz_ops: FAILED in batch seed {batch_seed} ({label} phase); again: "
                      f"{sys.argv[0]} --seed {batch_seed} --batches 1 --only-seed", flush=True)
                open(args.last_case, "w").close()
                raise
            batch_seed, batches = batch_seed + 1, batches + 1
        print(f"fuzz_ops: {label} phase passed, {batches} batches of {args.examples} examples",
              flush=True)
    for key, count in sorted(known_counts.items()):
        if key in AMBIGUOUS:
            print(f"fuzz_ops: {count} cases the numpy reference cannot judge: {key}")
            continue
        print(f"fuzz_ops: known until issue 9 merges, {count} cases: {key}: "
              f"{KNOWN_UNTIL_ISSUE_9_MERGE[key]}")
    open(args.last_case, "w").close()


def supervise(args):
    """Runs the worker; when it dies in the middle of a case, prints that case."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as record:
        path = record.name
    try:
        command = [sys.executable, os.path.abspath(__file__), "--worker", "--last-case", path]
        command += sys.argv[1:]
        code = subprocess.call(command)
        with open(path) as record:
            case = record.read()
        how = f"by signal {-code}" if code < 0 else f"with exit status {code}"
        if case:
            print(f"fuzz_ops: the worker died {how} (a crash, or a hang past --timeout) "
                  f"while running:\n{case}", flush=True)
        return 0 if code == 0 and not case else 1
    finally:
        os.unlink(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="wall-clock budget")
    parser.add_argument("--seed", type=int, default=0, help="the fixed seed, run first")
    parser.add_argument("--only-seed", action="store_true", help="no time-based seed after it")
    parser.add_argument("--batches", type=int, default=None, help="at most this many batches")
    parser.add_argument("--examples", type=int, default=100, help="examples per batch")
    parser.add_argument("--timeout", type=float, default=30, help="seconds one example may take")
    parser.add_argument("--devices", nargs="+", default=["cpu", "cuda:0"])
    parser.add_argument("--self-test", choices=["crash", "hang"],
                        help="crash or hang in the first example (the reporting must catch it)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--last-case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.worker:
        sys.exit(supervise(args))
    worker(args)


if __name__ == "__main__":
    main()
