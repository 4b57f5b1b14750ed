#!/usr/bin/env python3
"""kael beside PyTorch in the modes PyTorch users train in: TF32, bf16 autocast, fused AdamW.

One process, one GPU, TF32 allowed on both sides throughout (torch.backends.cuda.matmul.
allow_tf32 and kael.set_float32_matmul_precision("high")). Rows:
  - GPT-2 small training step (batch 8 x 512, AdamW) in f32 with TF32;
  - the same step under bf16 autocast with the fused AdamW (torch fused=True), and, with
    --compile, kael.compile's recorded step against torch.compile'd PyTorch (its kael time
    beside the first row's is the gain of recording); the first also reports both sides' peak
    memory (torch.cuda.max_memory_allocated, kael.allocator_stats' peak_in_use_bytes);
  - bf16 GEMM 4096^3 and linear 8192 x 768 -> 3072 with bias;
  - GPT-2 small greedy generation in bf16, batch 1 (tokens/s).
Timing as model_path_vs_torch.py (paired medians); "speed" is torch time / kael time.

    /opt/torch/.venv/bin/python3 benchmarks/mixed_precision_vs_torch.py [--compile]
"""
import argparse
import json
import math
import sys

import model_path_gpt
from model_path_cases import Case
from model_path_vs_torch import SKIPPED, Timer, measure_case

BATCH, TOKENS = 8, 512


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-sample-ms", type=float, default=50.0)
    parser.add_argument("--compile", action="store_true", help="also torch.compile's step")
    parser.add_argument("--filter", default="", help="only rows whose name contains this")
    parser.add_argument("--json-out")
    return parser.parse_args()


def training_step(shape, autocast, fused, compiled=False):
    """(torch setup, kael setup) of one AdamW step, under bf16 autocast when autocast."""
    return model_path_gpt.training_steps(shape, BATCH, TOKENS, autocast, fused, compiled)


def product(rows, inner, columns, bias):
    def torch_setup(torch, device):
        a = torch.randn(rows, inner, device=device, dtype=torch.bfloat16)
        w = torch.randn(columns, inner, device=device, dtype=torch.bfloat16)
        b = torch.randn(columns, device=device, dtype=torch.bfloat16) if bias else None
        if bias:
            return lambda: torch.nn.functional.linear(a, w, b)
        wt = w.T.contiguous()
        return lambda: a @ wt

    def kael_setup(kael, device):
        a = kael.randn(rows, inner, device=device).to(kael.bfloat16)
        w = kael.randn(columns, inner, device=device).to(kael.bfloat16)
        b = kael.randn(columns, device=device).to(kael.bfloat16) if bias else None
        if bias:
            return lambda: kael.nn.functional.linear(a, w, b)
        wt = w.T.contiguous()
        return lambda: a @ wt
    return torch_setup, kael_setup


def generation(new_tokens):
    shape = model_path_gpt.GPT2

    def torch_setup(torch, device):
        model = model_path_gpt.torch_gpt(torch, device).to(torch.bfloat16).eval()

        def run():
            with torch.no_grad():
                caches = [[] for _ in range(shape.layers)]
                token = torch.zeros(1, 1, dtype=torch.long, device=device)
                for step in range(new_tokens):
                    logits = model(token, caches, start=step)
                    token = logits[:, -1].argmax(-1, keepdim=True)
                token.item()
        return run

    def kael_setup(kael, device):
        model = model_path_gpt.kael_gpt(kael, device).to(kael.bfloat16)
        model.eval()

        def run():
            with kael.no_grad():
                model.generate([0], new_tokens)
        return run
    return torch_setup, kael_setup


def cases(compiled):
    gpt2 = model_path_gpt.GPT2
    step = f"GPT-2 small training step, batch {BATCH} x {TOKENS}"
    rows = [
        (Case(f"{step}, bf16 autocast + TF32 + fused AdamW",
              *training_step(gpt2, True, True), unit="ms"), 1.15),
        (Case(f"{step}, f32 with TF32", *training_step(gpt2, False, False), unit="ms"), 1.1),
        (Case("bf16 GEMM 4096 x 4096 x 4096", *product(4096, 4096, 4096, False)), 0.95),
        (Case("bf16 linear 8192 x 768 -> 3072 with bias", *product(8192, 768, 3072, True)),
         0.95),
        (Case("GPT-2 small greedy generation in bf16, 128 tokens", *generation(128),
              unit="tok/s", higher_is_better=True, rate=128), 1.0),
    ]
    if compiled:
        rows.append((Case(f"{step}, bf16 autocast + TF32 + fused AdamW vs torch.compile",
                          *training_step(gpt2, True, True, compiled=True), unit="ms"), 1.0))
    return rows


def main():
    arguments = parse_arguments()
    try:
        import torch
        import kael
    except ImportError as error:
        print(f"mixed_precision_vs_torch: {error}; nothing measured", file=sys.stderr)
        return SKIPPED
    if not torch.cuda.is_available() or not kael.is_available("cuda"):
        print("mixed_precision_vs_torch: needs a GPU for both libraries", file=sys.stderr)
        return SKIPPED
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    kael.set_float32_matmul_precision("high")
    time_torch = Timer(torch.cuda.synchronize, arguments.repeat, arguments.min_sample_ms / 1000)
    time_kael = Timer(lambda: kael.synchronize("cuda:0"), arguments.repeat,
                      arguments.min_sample_ms / 1000)
    rows, failed = [], False
    print(f"{'case':<78} {'kael':>10} {'torch':>10} {'speed':>6} {'bar':>5}")
    for case, bar in cases(arguments.compile):
        if arguments.filter and arguments.filter not in case.name:
            continue
        torch.cuda.reset_peak_memory_stats()
        row = measure_case(case, (kael, torch), ("cuda:0", torch.device("cuda:0")),
                           (time_kael, time_torch))
        row["bar"] = bar
        row["torch_peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
        row["kael_peak_mib"] = kael.allocator_stats("cuda:0")["peak_in_use_bytes"] / 2**20
        row["verdict"] = "PASS" if row.get("speed", 0) >= bar else "FAIL"
        failed = failed or "error" in row
        rows.append(row)
        if "error" in row:
            print(f"{case.name:<78} FAILED {row['error']}", flush=True)
            continue
        print(f"{case.name:<78} {row['kael']:>8.4g}{case.unit:>2} {row['torch']:>8.4g}"
              f"{case.unit:>2} {row['speed']:>6.2f} {bar:>5} {row['verdict']}", flush=True)
        if len(rows) == 1:  # the first row: nothing else has run in either library yet
            print(f"  peak memory: kael {row['kael_peak_mib']:.0f} MiB (the process's),"
                  f" torch {row['torch_peak_mib']:.0f} MiB")
        torch.cuda.empty_cache()
        kael.empty_cache("cuda:0")
    speeds = [row["speed"] for row in rows if "speed" in row]
    if speeds:
        mean = math.exp(sum(math.log(s) for s in speeds) / len(speeds))
        print(f"geometric mean speed over {len(speeds)} rows: {mean:.2f}; "
              f"{sum(r['verdict'] == 'PASS' for r in rows)} of {len(rows)} at their bar")
    if arguments.json_out:
        with open(arguments.json_out, "w", encoding="utf-8") as out:
            json.dump({"torch": torch.__version__, "rows": rows}, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
