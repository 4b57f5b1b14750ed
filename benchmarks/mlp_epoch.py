#!/usr/bin/env python3
"""The Fashion-MNIST MLP epoch on the CPU: kael's C++ example (`mlp_fashion_mnist --device cpu`)
beside the same recipe in PyTorch CPU (784-128-10, ReLU, SGD lr 0.1, batch 64, one shuffled
epoch = 938 steps), both with the same thread count, in one run. The bar (issue "CPU speed"):
kael's epoch takes at most PyTorch's time. Prints a table, writes JSON with --json-out.

    /usr/bin/python3 benchmarks/mlp_epoch.py [--build-dir build] [--data DIR] [--epochs 2]

Exit status 1 when a side failed, 77 when torch or the data is missing.
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

import gpu_vs_torch

DEFAULT_DATA = pathlib.Path("/usr/share/datasets/fashion-mnist")


def kael_epochs(build_dir, data, epochs, threads):
    command = [str(build_dir / "bin" / "mlp_fashion_mnist"), "--device", "cpu", "--epochs",
               str(epochs), "--data", str(data)]
    environment = dict(os.environ, KAEL_NUM_THREADS=str(threads))
    finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=environment, check=False, timeout=1800)
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit status {finished.returncode}: "
                           f"{finished.stderr.strip().splitlines()[-1:]}")
    seconds = [float(value) for value in
               re.findall(r"^epoch \d+: ([0-9.]+) s", finished.stdout, re.MULTILINE)]
    accuracy = re.findall(r"^final test accuracy ([0-9.]+)%", finished.stdout, re.MULTILINE)
    if not seconds:
        raise RuntimeError(f"{' '.join(command)}: no 'epoch N: X s' line in its output")
    return {"epochs": seconds, "accuracy": float(accuracy[-1]) if accuracy else None}


def measure(torch, build_dir, data, epochs, threads, errors):
    """The epoch row (kael and torch epochs, accuracy, speed when both ran); failures go to
    errors. torch's thread count is set here."""
    torch.set_num_threads(threads)
    try:
        kael = kael_epochs(build_dir, data, epochs, threads)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        errors.append(str(error))
        kael = None
    recipe = argparse.Namespace(data=data, mlp_epochs=epochs)
    theirs = gpu_vs_torch.measure_torch_mlp(torch, "cpu", recipe, errors)
    row = {"case": "Fashion-MNIST MLP epoch (C++ example, cpu)", "unit": "s", "threads": threads,
           "kael": kael, "torch": theirs}
    if kael and theirs:
        row["speed"] = theirs["epochs"][-1] / kael["epochs"][-1]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--data", type=pathlib.Path, default=DEFAULT_DATA)
    parser.add_argument("--epochs", type=int, default=2,
                        help="epochs of each; the last one is the steady-state figure")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads for both (KAEL_NUM_THREADS, torch.set_num_threads)")
    parser.add_argument("--json-out", type=pathlib.Path)
    arguments = parser.parse_args()
    if arguments.epochs < 1 or arguments.threads < 1:
        parser.error("--epochs and --threads must be at least 1")
    try:
        import torch  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        print(f"torch is not importable ({error}); skipped", file=sys.stderr)
        return 77
    if not (arguments.data / "train-images-idx3-ubyte.gz").exists():
        print(f"no Fashion-MNIST in {arguments.data} (apt-get install dataset-fashion-mnist)",
              file=sys.stderr)
        return 77
    errors = []
    row = measure(torch, arguments.build_dir, arguments.data, arguments.epochs, arguments.threads,
                  errors)
    kael, theirs = row["kael"], row["torch"]
    if "speed" in row:
        verdict = "PASS" if row["speed"] >= 1.0 else "FAIL"
        print(f"{'case':<48}{'kael':>10}{'torch':>10}{'speed':>8}  bar")
        print(f"{row['case']:<48}{kael['epochs'][-1]:>9.3f}s{theirs['epochs'][-1]:>9.3f}s"
              f"{row['speed']:>8.2f}  1.0 {verdict}")
        print(f"test accuracy: kael {kael['accuracy']}%, torch {theirs['accuracy']:.2f}%; "
              f"torch {torch.__version__}, {arguments.threads} threads each")
    for error in errors:
        print("error: " + error, file=sys.stderr)
    if arguments.json_out:
        arguments.json_out.write_text(json.dumps(row, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
