"""Runs the ported programs (train_char_gpt.py, mingpt_style_trainer.py) once on kael and once
on PyTorch (the same files; backend.py picks the library) with the same settings, and prints
their loss curves side by side with the median step times.

    /usr/bin/python3 compare_with_torch.py --max_iters=300 [--device=cpu]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = {"train_char_gpt.py": ["--eval_interval=100", "--eval_iters=5", "--dtype=float32"],
            "mingpt_style_trainer.py": []}


def run(program, backend, device, max_iters, folder):
    log = os.path.join(folder, f"{program}.{backend}.txt")
    arguments = [sys.executable, os.path.join(HERE, program), f"--device={device}",
                 f"--max_iters={max_iters}", f"--log_path={log}"] + PROGRAMS[program]
    if program == "train_char_gpt.py":
        arguments += [f"--out_dir={os.path.join(folder, backend)}", f"--lr_decay_iters={max_iters}"]
    subprocess.run(arguments, check=True, cwd=HERE, stdout=subprocess.DEVNULL,
                   env={**os.environ, "KAEL_PORTING_BACKEND": backend})
    with open(log) as file:
        rows = [line.split() for line in file if line.strip()]
    return [float(r[1]) for r in rows], [float(r[2]) for r in rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max_iters", type=int, default=300)
    parser.add_argument("--device", default="cpu")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for program in PROGRAMS:
            curves = {b: run(program, b, arguments.device, arguments.max_iters, folder)
                      for b in ("kael", "torch")}
            print(f"\n{program} on {arguments.device}, {arguments.max_iters} steps")
            print(f"{'step':>6} {'kael loss':>10} {'torch loss':>10}  (mean of 10 steps)")
            count = min(len(curves['kael'][0]), len(curves['torch'][0]))
            for start in range(0, count, max(count // 10, 10)):
                k = statistics.mean(curves["kael"][0][start:start + 10])
                t = statistics.mean(curves["torch"][0][start:start + 10])
                print(f"{start:>6} {k:>10.4f} {t:>10.4f}")
            k_last = statistics.mean(curves["kael"][0][-20:])
            t_last = statistics.mean(curves["torch"][0][-20:])
            k_step = statistics.median(curves["kael"][1][5:])
            t_step = statistics.median(curves["torch"][1][5:])
            print(f"last 20 steps: kael {k_last:.4f}, torch {t_last:.4f} "
                  f"({100 * (k_last - t_last) / t_last:+.1f}%); median step kael "
                  f"{k_step:.2f} ms, torch {t_step:.2f} ms (speed {t_step / k_step:.2f})")


if __name__ == "__main__":
    main()
