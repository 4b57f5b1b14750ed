#!/usr/bin/env python3
"""kael.distributed on one GPU beside torch.distributed in the same process, each in a world of
one process (the one-GPU machine's case; several GPUs are benchmarks/distributed_vs_torch.py's
multi-process shape):
  - all_reduce and broadcast of 1K to 64M float32 cuda elements over nccl (kael: the cuda
    plugin's NCCL, loaded at run time; torch: its own NCCL);
  - the same over gloo, cuda tensors staged through the host (both libraries stage them);
  - a DistributedDataParallel training step of the char-GPT (python/examples/porting's model,
    AdamW) on nccl, and the same model's step without DDP, so DDP's own cost shows.
"speed" is torch time / kael time (above 1: kael is faster). Prints a table; --json-out writes
it as JSON. Exit 77 when torch, CUDA or a real GPU is missing.

    PYTHONPATH=<kael module> /opt/torch/.venv/bin/python3 benchmarks/distributed_gpu_vs_torch.py
"""
import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PORTING = os.path.join(HERE, "..", "python", "examples", "porting")
SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26]
MODEL = dict(block_size=256, n_layer=4, n_head=4, n_embd=256, vocab_size=96, dropout=0.0,
             bias=False)
BATCH = 32


def library(name):
    """kael or torch as the ported programs see it (python/examples/porting/backend.py)."""
    os.environ["KAEL_PORTING_BACKEND"] = name
    if PORTING not in sys.path:
        sys.path.insert(0, PORTING)
    import backend
    return importlib.reload(backend).torch


def timed(run, synchronize, repeat, rounds):
    run()
    synchronize()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(rounds):
            run()
        synchronize()
        samples.append((time.perf_counter() - start) / rounds)
    return statistics.median(samples)


def collectives(torch, backend, repeat):
    """Seconds per all_reduce and broadcast of each size, in a world of one on `backend`."""
    dist = torch.distributed
    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group(backend, init_method=f"file://{folder}/rendezvous", rank=0,
                                world_size=1)
        result = {}
        for size in SIZES:
            t = torch.ones(size, device="cuda")
            rounds = max(5, min(200, (1 << 26) // size // 4))
            for op in ("all_reduce", "broadcast"):
                call = (lambda: dist.all_reduce(t)) if op == "all_reduce" else (
                    lambda: dist.broadcast(t, src=0))
                result[f"{op} {size}"] = timed(call, torch.cuda.synchronize, repeat, rounds)
        dist.destroy_process_group()
    return result


def steps(name, repeat):
    """Seconds per training step of the char-GPT on cuda, plain and wrapped in DDP on nccl."""
    torch = library(name)
    gpt_model = importlib.reload(importlib.import_module("gpt_model"))  # binds the library
    GPT, ModelArgs = gpt_model.GPT, gpt_model.ModelArgs
    dist = torch.distributed
    result = {}
    with tempfile.TemporaryDirectory() as folder:
        dist.init_process_group("nccl", init_method=f"file://{folder}/rendezvous", rank=0,
                                world_size=1)
        for wrapped in (False, True):
            torch.manual_seed(0)
            model = GPT(ModelArgs(**MODEL)).to("cuda")
            if wrapped:
                model = torch.nn.parallel.DistributedDataParallel(model)
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            x = torch.randint(0, MODEL["vocab_size"], (BATCH, MODEL["block_size"])).to("cuda")
            y = torch.randint(0, MODEL["vocab_size"], (BATCH, MODEL["block_size"])).to("cuda")

            def step():
                optimizer.zero_grad(set_to_none=True)
                _, loss = model(x, y)
                loss.backward()
                optimizer.step()
            result["ddp" if wrapped else "plain"] = timed(step, torch.cuda.synchronize,
                                                          repeat, 10)
        dist.destroy_process_group()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json-out")
    arguments = parser.parse_args()
    try:
        libraries = {"kael": library("kael"), "torch": library("torch")}
    except ImportError as error:
        print(f"skipped: {error}")
        return 77
    if not libraries["torch"].cuda.is_available() or not libraries["kael"].cuda.is_available():
        print("skipped: no real GPU")
        return 77
    rows = []
    for backend in ("nccl", "gloo"):
        try:
            timed_runs = {name: collectives(lib, backend, arguments.repeat)
                          for name, lib in libraries.items()}
        except RuntimeError as error:  # a build without gloo (libgloo-dev) on this machine
            print(f"{backend}: not measured: {error}")
            continue
        for key in timed_runs["kael"]:
            op, size = key.split()
            kael_s, torch_s = timed_runs["kael"][key], timed_runs["torch"][key]
            rows.append({"case": f"{op} of {size} float32 cuda, {backend}, world of 1",
                         "unit": "GB/s", "kael": 4 * int(size) / kael_s / 1e9,
                         "torch": 4 * int(size) / torch_s / 1e9, "speed": torch_s / kael_s})
    timed_steps = {name: steps(name, arguments.repeat) for name in libraries}
    for kind in ("plain", "ddp"):
        kael_s, torch_s = timed_steps["kael"][kind], timed_steps["torch"][kind]
        label = "DDP on nccl" if kind == "ddp" else "no DDP"
        rows.append({"case": f"char-GPT step, batch {BATCH}x{MODEL['block_size']}, {label}",
                     "unit": "ms", "kael": kael_s * 1e3, "torch": torch_s * 1e3,
                     "speed": torch_s / kael_s})
    print(f"{'case':<58} {'kael':>14} {'torch':>14} {'speed':>6}")
    for row in rows:
        print(f"{row['case']:<58} {row['kael']:>9.4g} {row['unit']:<4} {row['torch']:>9.4g} "
              f"{row['unit']:<4} {row['speed']:>6.2f}")
    if arguments.json_out:
        with open(arguments.json_out, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
