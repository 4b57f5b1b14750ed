#!/usr/bin/env python3
"""kael's throughput on a GPU beside PyTorch's, measured on the same GPU in one run.

kael: `kael-bench --device cuda --suite gpu --json` twice, with KAEL_CUDA_MATMUL=cublas (every
case) and KAEL_CUDA_MATMUL=tile (the matmul cases, one process per size, so a slow 8192 product
can time out alone), and the MLP example `mlp_fashion_mnist --device cuda --epochs 2`.
PyTorch: the same cases (add and sum of 2^24 and 2^28 f32 elements, f32 matmul 512..8192 without
TF32) timed with CUDA events, and the same MLP (784-128-10, ReLU, SGD lr 0.1, batch 64, one
shuffled epoch of Fashion-MNIST = 938 steps, data preloaded on the GPU).

Each figure is a median over --repeat samples after a warm-up. kael-bench makes each sample long
enough (--min-sample-ms) by running the op several times between two synchronizations; PyTorch's
samples run the op the same number of times between two CUDA events.

Run with the GPU machine's python3 that has torch:
    /opt/torch/.venv/bin/python3 benchmarks/gpu_vs_torch.py [--build-dir build] [--data DIR]
        [--repeat 20] [--json-out FILE] [--torch-only]

Prints one table (case, unit, kael, torch, kael/torch); --json-out writes it as JSON too.
Exit status: 0 whatever the ratios, 1 when something crashed or timed out (the rest still runs),
2 on a usage error, 77 when torch or CUDA is unavailable (nothing is measured then).
"""

import argparse
import gzip
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

SKIPPED = 77
REPOSITORY = pathlib.Path(__file__).resolve().parent.parent
MATMUL_SIZES = (512, 1024, 2048, 4096, 8192)
FLAT_COUNTS = {"16Mi": 1 << 24, "256Mi": 1 << 28}
MLP_STEP_LOSS_EVERY = 50  # the kael example reads the loss (a synchronization) this often


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=pathlib.Path, default=REPOSITORY / "build",
                        help="kael build tree with bin/kael-bench and bin/mlp_fashion_mnist "
                             "(default: build/ in the repository)")
    parser.add_argument("--device", default="cuda:0", help="device for both (default cuda:0)")
    parser.add_argument("--data", type=pathlib.Path,
                        help="Fashion-MNIST folder (*-idx?-ubyte.gz); without it, no MLP rows")
    parser.add_argument("--repeat", type=int, default=20, help="timed samples per case (median)")
    parser.add_argument("--min-sample-ms", type=float, default=10.0,
                        help="a timed sample repeats the op until it lasts this long (default 10)")
    parser.add_argument("--tile-max-size", type=int, default=8192,
                        help="largest matmul measured with KAEL_CUDA_MATMUL=tile (default 8192)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds allowed to each kael process (default 900)")
    parser.add_argument("--mlp-epochs", type=int, default=2,
                        help="epochs of both MLPs; the last one is the steady-state figure")
    parser.add_argument("--json-out", type=pathlib.Path, help="write the table as JSON here too")
    parser.add_argument("--torch-only", action="store_true",
                        help="measure PyTorch alone (a smoke test where kael has no GPU plugin)")
    arguments = parser.parse_args()
    if arguments.repeat < 1 or arguments.mlp_epochs < 1 or arguments.min_sample_ms < 0:
        parser.error("--repeat and --mlp-epochs must be at least 1, --min-sample-ms at least 0")
    return arguments


def note(message):
    print(message, file=sys.stderr, flush=True)


def import_torch(device):
    """torch and its device, or None after saying why (the caller exits 77)."""
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        note(f"gpu_vs_torch: torch is missing for {sys.executable} ({error}); run it with the "
             "GPU machine's python3 (/opt/torch/.venv/bin/python3); skipped")
        return None
    if not torch.cuda.is_available():
        note(f"gpu_vs_torch: torch {torch.__version__} at {sys.executable} sees no CUDA device "
             f"(torch.version.cuda={torch.version.cuda}); skipped")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch, torch.device(device)


# ---------------------------------------------------------------------------------------------
# kael


class KaelRuns:
    """The kael side: kael-bench cases and the MLP epochs, with any error kept for the exit."""

    def __init__(self, arguments):
        self.arguments = arguments
        self.bin = arguments.build_dir / "bin"
        self.cases = {}        # "add_f32_256Mi", "matmul_f32_4096 cublas", ... -> kael-bench case
        self.environment = {}  # kael-bench's environment line (cublas run)
        self.mlp = None        # {"epochs": [seconds...], "accuracy": percent}
        self.errors = []

    def bench(self, matmul_path, case_filter=""):
        command = [str(self.bin / "kael-bench"), "--device", self.arguments.device, "--suite",
                   "gpu", "--json", "--repeat", str(self.arguments.repeat), "--min-sample-ms",
                   str(self.arguments.min_sample_ms)]
        if case_filter:
            command += ["--filter", case_filter]
        environment = dict(os.environ, KAEL_CUDA_MATMUL=matmul_path)
        label = f"KAEL_CUDA_MATMUL={matmul_path} {' '.join(command)}"
        note(f"kael: {label}")
        try:
            # Progress lines go to stderr, straight to the user.
            finished = subprocess.run(command, stdout=subprocess.PIPE, text=True, env=environment,
                                      timeout=self.arguments.timeout, check=False)
        except subprocess.TimeoutExpired as expired:
            self.errors.append(f"{label}: timed out after {self.arguments.timeout:.0f} s")
            output = expired.stdout or ""
            output = output.decode() if isinstance(output, bytes) else output
            self._read_bench(output, matmul_path)
            return
        except OSError as error:
            self.errors.append(f"{label}: {error}")
            return
        if finished.returncode != 0:
            self.errors.append(f"{label}: exit status {finished.returncode}")
        self._read_bench(finished.stdout, matmul_path)

    def _read_bench(self, output, matmul_path):
        for line in output.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if record.get("type") == "environment":
                if matmul_path == "cublas" or not self.environment:
                    self.environment = record
                if record.get("emulated") or record.get("plugin") != "cuda":
                    note(f"gpu_vs_torch: WARNING: kael's {record.get('device')} is served by "
                         f"plugin {record.get('plugin')!r}"
                         f"{' (emulated)' if record.get('emulated') else ''}, not by 'cuda': its "
                         "figures are not the GPU's")
            elif record.get("type") == "case":
                name = record["name"]
                if record["op"] == "matmul":
                    name = f"{name} {matmul_path}"
                    self.cases[name] = record
                elif matmul_path == "cublas":
                    self.cases[name] = record

    def run_benchmarks(self):
        self.bench("cublas")
        for size in MATMUL_SIZES:
            if size <= self.arguments.tile_max_size:
                self.bench("tile", f"matmul_f32_{size}")

    def run_mlp(self):
        command = [str(self.bin / "mlp_fashion_mnist"), "--device", self.arguments.device,
                   "--epochs", str(self.arguments.mlp_epochs), "--data", str(self.arguments.data)]
        note(f"kael: {' '.join(command)}")
        try:
            finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, timeout=self.arguments.timeout, check=False)
        except (subprocess.TimeoutExpired, OSError) as error:
            self.errors.append(f"{' '.join(command)}: {error}")
            return
        if finished.returncode != 0:
            self.errors.append(f"{' '.join(command)}: exit status {finished.returncode}: "
                               f"{finished.stderr.strip().splitlines()[-1:]}")
            return
        epochs = [float(seconds) for seconds in
                  re.findall(r"^epoch \d+: ([0-9.]+) s", finished.stdout, re.MULTILINE)]
        accuracy = re.findall(r"^final test accuracy ([0-9.]+)%", finished.stdout, re.MULTILINE)
        if not epochs:
            self.errors.append(f"{' '.join(command)}: no 'epoch N: X s' line in its output")
            return
        self.mlp = {"epochs": epochs, "accuracy": float(accuracy[-1]) if accuracy else None}
        note("kael MLP: " + ", ".join(f"epoch {index}: {seconds:.3f} s"
                                      for index, seconds in enumerate(epochs, start=1))
             + (f", test accuracy {self.mlp['accuracy']:.2f}%" if accuracy else ""))


# ---------------------------------------------------------------------------------------------
# PyTorch


def torch_operation(torch, device, operation, count, side):
    """The case as a PyTorch user writes it, on kael-bench's operands: sin and cos of a ramp."""
    shape = (side, side) if operation == "matmul" else (count,)
    elements = shape[0] * (shape[1] if len(shape) > 1 else 1)
    ramp = torch.arange(elements, dtype=torch.float64, device=device)
    a = torch.sin(ramp).to(torch.float32).view(shape)
    b = torch.cos(ramp).to(torch.float32).view(shape)
    del ramp
    return {"matmul": lambda: torch.matmul(a, b), "add": lambda: a + b,
            "sum": lambda: a.sum()}[operation]


def torch_time(torch, run, repeat, inner, min_sample_seconds):
    """Median seconds of one run, from CUDA events around `inner` runs per sample."""
    run()  # warm-up: kernel selection, allocator
    torch.cuda.synchronize()
    if inner is None:  # no kael figure to match: the same rule as kael-bench's
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        once = start.elapsed_time(stop) / 1e3
        inner = max(1, min(1000, math.ceil(min_sample_seconds / max(once, 1e-9))))
    samples = []
    for _ in range(repeat):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            result = run()
        stop.record()
        samples.append((start, stop))
        del result
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(stop) / 1e3 / inner for start, stop in samples)


def measure_torch_ops(torch, device, arguments, kael_cases, errors):
    """{case name: (figure, unit)} for add, sum and matmul, in kael-bench's units' scale."""
    figures = {}
    plan = [("add", f"add_f32_{label}", count, 0) for label, count in FLAT_COUNTS.items()]
    plan += [("sum", f"sum_f32_{label}", count, 0) for label, count in FLAT_COUNTS.items()]
    plan += [("matmul", f"matmul_f32_{n}", n * n, n) for n in MATMUL_SIZES]
    for operation, name, count, side in plan:
        kael = kael_cases.get(name) or kael_cases.get(f"{name} cublas") or {}
        repeat = min(arguments.repeat, 3) if side >= 8192 else arguments.repeat
        if kael.get("repeats"):
            repeat = kael["repeats"]
        note(f"torch: {name} ...")
        try:
            run = torch_operation(torch, device, operation, count, side)
            seconds = torch_time(torch, run, repeat, kael.get("inner"),
                                 arguments.min_sample_ms / 1e3)
            del run
        except Exception as error:  # pylint: disable=broad-except  (e.g. out of memory)
            errors.append(f"torch {name}: {type(error).__name__}: {error}")
            continue
        finally:
            torch.cuda.empty_cache()
        if operation == "matmul":
            figures[name] = (2.0 * side ** 3 / seconds / 1e12, "TFLOP/s", seconds)
        else:
            figures[name] = (count / seconds / 1e9, "Gelem/s", seconds)
        note(f"torch: {name} {seconds * 1e3:.3f} ms, {figures[name][0]:.2f} {figures[name][1]}")
    return figures


def load_idx(numpy, folder, split):
    """Fashion-MNIST from the gzip-compressed IDX files: images [N, 784] in [0, 1], labels."""
    with gzip.open(folder / f"{split}-images-idx3-ubyte.gz", "rb") as handle:
        images = numpy.frombuffer(handle.read(), dtype=numpy.uint8, offset=16)
    with gzip.open(folder / f"{split}-labels-idx1-ubyte.gz", "rb") as handle:
        labels = numpy.frombuffer(handle.read(), dtype=numpy.uint8, offset=8)
    return images.reshape(-1, 784).astype(numpy.float32) / 255.0, labels.astype(numpy.int64)


def measure_torch_mlp(torch, device, arguments, errors, hidden=128, batch=64, lr=0.1, seed=42):
    """Seconds of each epoch and the final test accuracy (%), kael's recipe in PyTorch."""
    try:
        import numpy  # pylint: disable=import-outside-toplevel
        train_x, train_y = load_idx(numpy, arguments.data, "train")
        test_x, test_y = load_idx(numpy, arguments.data, "t10k")
    except (ImportError, OSError, ValueError) as error:
        errors.append(f"torch MLP: cannot load Fashion-MNIST from {arguments.data}: {error}")
        return None
    torch.manual_seed(seed)
    images = torch.from_numpy(train_x).to(device)
    labels = torch.from_numpy(train_y).to(device)
    model = torch.nn.Sequential(torch.nn.Linear(784, hidden), torch.nn.ReLU(),
                                torch.nn.Linear(hidden, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    count = images.shape[0]
    steps = (count + batch - 1) // batch
    epochs = []
    on_gpu = torch.device(device).type == "cuda"

    def synchronize():
        if on_gpu:
            torch.cuda.synchronize()

    for epoch in range(1, arguments.mlp_epochs + 1):
        permutation = torch.randperm(count, device=device)
        synchronize()
        start = time.perf_counter()
        for step in range(steps):
            rows = permutation[step * batch:(step + 1) * batch]
            loss = torch.nn.functional.cross_entropy(model(images.index_select(0, rows)),
                                                     labels.index_select(0, rows))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % MLP_STEP_LOSS_EVERY == 0 or step + 1 == steps:
                loss.item()  # as the kael example does for its progress line
        synchronize()
        epochs.append(time.perf_counter() - start)
        note(f"torch MLP: epoch {epoch}: {epochs[-1]:.3f} s ({steps} steps)")
    with torch.no_grad():
        logits = model(torch.from_numpy(test_x).to(device))
        accuracy = (logits.argmax(1).cpu() == torch.from_numpy(test_y)).float().mean().item()
    return {"epochs": epochs, "accuracy": 100 * accuracy}


# ---------------------------------------------------------------------------------------------
# Table


def build_rows(kael, torch_figures, torch_mlp):
    rows = []

    def add(case, unit, kael_value, torch_value, higher_is_better=True, **extra):
        ratio = kael_value / torch_value if kael_value and torch_value else None
        speed = None
        if ratio is not None:
            speed = ratio if higher_is_better else 1 / ratio
        rows.append({"case": case, "unit": unit, "kael": kael_value, "torch": torch_value,
                     "ratio": ratio, "kael_speedup": speed, **extra})

    for label in FLAT_COUNTS:
        for operation in ("add", "sum"):
            name = f"{operation}_f32_{label}"
            case = kael.cases.get(name)
            theirs = torch_figures.get(name)
            add(name, "Gelem/s", case["figure"] if case else None, theirs[0] if theirs else None,
                kael_ms=case["median_s"] * 1e3 if case else None,
                torch_ms=theirs[2] * 1e3 if theirs else None)
    for path in ("cublas", "tile"):
        for size in MATMUL_SIZES:
            if path == "tile" and size > kael.arguments.tile_max_size:
                continue
            name = f"matmul_f32_{size}"
            case = kael.cases.get(f"{name} {path}")
            theirs = torch_figures.get(name)
            add(f"{name} {path}", "TFLOP/s", case["figure"] / 1e3 if case else None,
                theirs[0] if theirs else None,
                kael_ms=case["median_s"] * 1e3 if case else None,
                torch_ms=theirs[2] * 1e3 if theirs else None)
    if kael.arguments.data is not None:
        ours = kael.mlp["epochs"] if kael.mlp else []
        theirs = torch_mlp["epochs"] if torch_mlp else []
        add("mlp_epoch", "s/epoch", ours[-1] if ours else None, theirs[-1] if theirs else None,
            higher_is_better=False, note="the last epoch (steady state)")
        add("mlp_epoch_first", "s/epoch", ours[0] if ours else None,
            theirs[0] if theirs else None, higher_is_better=False,
            note="the first epoch (start-up included)")
        add("mlp_test_accuracy", "%", kael.mlp["accuracy"] if kael.mlp else None,
            torch_mlp["accuracy"] if torch_mlp else None)
    return rows


def print_table(rows):
    def cell(value, digits=2):
        if value is None:
            return "-"
        return f"{value:.{digits}f}" if abs(value) >= 0.1 or value == 0 else f"{value:.4f}"

    titles = ("case", "unit", "kael", "torch", "kael/torch", "kael speed")
    table = [titles] + [(row["case"], row["unit"], cell(row["kael"], 3 if row["unit"] ==
                                                         "s/epoch" else 2),
                         cell(row["torch"], 3 if row["unit"] == "s/epoch" else 2),
                         cell(row["ratio"]), cell(row["kael_speedup"])) for row in rows]
    widths = [max(len(row[column]) for row in table) for column in range(len(titles))]
    for index, row in enumerate(table):
        print("  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1])] +
                        [text.rjust(width) for text, width in zip(row[2:], widths[2:])]))
        if index == 0:
            print("  ".join("-" * width for width in widths))


def main():
    arguments = parse_arguments()
    loaded = import_torch(arguments.device)
    if loaded is None:
        return SKIPPED
    torch, device = loaded
    if not arguments.torch_only:
        for program in ("kael-bench", "mlp_fashion_mnist"):
            if not (arguments.build_dir / "bin" / program).is_file():
                note(f"gpu_vs_torch: {arguments.build_dir / 'bin' / program} is missing "
                     "(--build-dir, or --torch-only)")
                return 1
    if arguments.data is not None and not arguments.data.is_dir():
        note(f"gpu_vs_torch: --data {arguments.data} is not a folder")
        return 1

    kael = KaelRuns(arguments)
    errors = kael.errors
    if not arguments.torch_only:  # kael first, while PyTorch holds no GPU memory
        kael.run_benchmarks()
        if arguments.data is not None:
            kael.run_mlp()
    torch_figures = measure_torch_ops(torch, device, arguments, kael.cases, errors)
    torch_mlp = None
    if arguments.data is not None:
        try:
            torch_mlp = measure_torch_mlp(torch, device, arguments, errors)
        except Exception as error:  # pylint: disable=broad-except
            errors.append(f"torch MLP: {type(error).__name__}: {error}")
        torch.cuda.empty_cache()

    rows = build_rows(kael, torch_figures, torch_mlp)
    environment = kael.environment
    gpu = torch.cuda.get_device_name(device)
    print(f"kael {environment.get('kael_version', '-')} on {environment.get('device', '-')} "
          f"({environment.get('device_name', 'not measured')}; plugin "
          f"{environment.get('plugin', '-')}: {environment.get('plugin_build', '-')})")
    print(f"torch {torch.__version__} (CUDA {torch.version.cuda}) on {gpu}, TF32 off, "
          f"Python {sys.version.split()[0]}; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(f"medians of {arguments.repeat} samples (8192 matmul: 3), each sample >= "
          f"{arguments.min_sample_ms:g} ms of repeated runs")
    print()
    print_table(rows)
    print()
    print("kael/torch is the ratio of the figures; 'kael speed' above 1 means kael is faster")
    print("(for s/epoch, lower is better). matmul rows: the kael path chosen by KAEL_CUDA_MATMUL")
    print("beside the same torch figure (cuBLAS, no TF32).")
    if errors:
        print()
        print("errors:")
        for error in errors:
            print(f"  {error}")
    if arguments.json_out is not None:
        document = {"schema_version": 1, "kael_environment": environment,
                    "torch": {"version": torch.__version__, "cuda": torch.version.cuda,
                              "gpu": gpu},
                    "repeat": arguments.repeat, "min_sample_ms": arguments.min_sample_ms,
                    "rows": rows, "kael_cases": kael.cases, "kael_mlp": kael.mlp,
                    "torch_mlp": torch_mlp, "errors": errors}
        arguments.json_out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
