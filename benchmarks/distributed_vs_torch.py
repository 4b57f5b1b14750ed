#!/usr/bin/env python3
"""kael.distributed beside torch.distributed (Debian's 1.13) on gloo, on this machine's loopback,
one thread per process, each library in its own world started by this script:
  - all_reduce of 1K to 64M float32 elements between 2 processes: bandwidth (bytes / time);
  - a DistributedDataParallel training step of the char-GPT (python/examples/porting's model,
    AdamW) in 2 processes against torch DDP's;
  - tokens per second of that 2-process training against one process with one thread.
"speed" is torch time / kael time (above 1: kael is faster); the scaling row is kael's 2-process
tokens/s over its 1-process tokens/s. Bars: all_reduce >= 0.9, DDP step >= 1.0, scaling >= 1.7.

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/distributed_vs_torch.py [--quick]
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PORTING = os.path.join(HERE, "..", "python", "examples", "porting")
SIZES = [1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26]
MODEL = dict(block_size=64, n_layer=2, n_head=4, n_embd=64, vocab_size=96, dropout=0.0,
             bias=False)
BATCH = 16


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(library, task, rank, world, init, repeat):
    """One process: prints its medians (seconds) as JSON on its last line."""
    os.environ["KAEL_PORTING_BACKEND"] = library
    sys.path.insert(0, PORTING)
    from backend import torch  # kael or torch, as the ported programs choose
    torch.set_num_threads(1)
    dist = torch.distributed
    if world > 1:
        dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    result = {}
    if task == "all_reduce":
        for size in SIZES:
            t = torch.ones(size)
            rounds = max(3, min(200, (1 << 24) // size))
            samples = []
            for _ in range(repeat):
                dist.barrier()
                start = time.perf_counter()
                for _ in range(rounds):
                    dist.all_reduce(t)
                samples.append((time.perf_counter() - start) / rounds)
            result[str(size)] = statistics.median(samples)
    else:
        from gpt_model import GPT, ModelArgs
        torch.manual_seed(0)
        model = GPT(ModelArgs(**MODEL))
        if world > 1:
            model = torch.nn.parallel.DistributedDataParallel(model)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        generator = torch.Generator().manual_seed(rank)
        x = torch.randint(0, MODEL["vocab_size"], (BATCH, MODEL["block_size"]),
                          generator=generator)
        y = torch.randint(0, MODEL["vocab_size"], (BATCH, MODEL["block_size"]),
                          generator=generator)

        def step():
            optimizer.zero_grad(set_to_none=True)
            _, loss = model(x, y)
            loss.backward()
            optimizer.step()
        for _ in range(3):
            step()
        samples = []
        for _ in range(repeat):
            if world > 1:
                dist.barrier()
            start = time.perf_counter()
            for _ in range(5):
                step()
            samples.append((time.perf_counter() - start) / 5)
        result["step"] = statistics.median(samples)
    if world > 1:
        dist.destroy_process_group()
    print(json.dumps(result), flush=True)


def run_world(library, task, world, repeat):
    init = f"tcp://127.0.0.1:{free_port()}"
    environment = dict(os.environ, OMP_NUM_THREADS="1", KAEL_NUM_THREADS="1")
    processes = [subprocess.Popen([sys.executable, __file__, "--worker", library, task, str(rank),
                                   str(world), init, str(repeat)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=environment)
                 for rank in range(world)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise RuntimeError(f"{library} {task} rank failed: {err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return {key: max(r[key] for r in results) for key in results[0]}  # the slowest rank


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--json-out")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        library, task, rank, world, init, repeat = arguments.worker
        return worker(library, task, int(rank), int(world), init, int(repeat))
    repeat = 3 if arguments.quick else 5
    worlds = 1 if arguments.quick else 3  # each library's worlds in turn, medians over them

    def alternating(task, world):
        runs = {"kael": [], "torch": []}
        for _ in range(worlds):
            for lib in runs:
                runs[lib].append(run_world(lib, task, world, repeat))
        return {lib: {key: statistics.median(r[key] for r in results) for key in results[0]}
                for lib, results in runs.items()}
    rows = []
    timed = alternating("all_reduce", 2)
    for size in SIZES:
        kael_s, torch_s = timed["kael"][str(size)], timed["torch"][str(size)]
        rows.append({"case": f"all_reduce of {size} float32, 2 processes", "unit": "GB/s",
                     "kael": 4 * size / kael_s / 1e9, "torch": 4 * size / torch_s / 1e9,
                     "speed": torch_s / kael_s, "bar": 0.9})
    steps = {lib: timed_step["step"] for lib, timed_step in alternating("step", 2).items()}
    rows.append({"case": f"char-GPT DDP step, 2 processes x batch {BATCH}", "unit": "ms",
                 "kael": steps["kael"] * 1e3, "torch": steps["torch"] * 1e3,
                 "speed": steps["torch"] / steps["kael"], "bar": 1.0})
    single = statistics.median(run_world("kael", "step", 1, repeat)["step"]
                               for _ in range(worlds))
    tokens = BATCH * MODEL["block_size"]
    rows.append({"case": "kael tokens/s, 2 processes against 1 (one thread each)",
                 "unit": "tok/s", "kael": 2 * tokens / steps["kael"], "torch": tokens / single,
                 "speed": (2 * tokens / steps["kael"]) / (tokens / single), "bar": 1.7})
    print(f"{'case':<58} {'kael':>12} {'torch / 1 proc':>15} {'speed':>6} {'bar':>5}")
    failed = 0
    for row in rows:
        verdict = "PASS" if row["speed"] >= row["bar"] else "FAIL"
        failed += verdict == "FAIL"
        print(f"{row['case']:<58} {row['kael']:>8.4g} {row['unit']:<4}"
              f"{row['torch']:>10.4g} {row['unit']:<4} {row['speed']:>6.2f} {row['bar']:>5} "
              f"{verdict}")
    print(f"{len(rows) - failed} of {len(rows)} at their bar")
    if arguments.json_out:
        with open(arguments.json_out, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
