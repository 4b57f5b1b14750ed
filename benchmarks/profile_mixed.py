#!/usr/bin/env python3
"""GPU time by kernel of one mixed_precision_vs_torch.py row, for kael and for PyTorch, from
torch.profiler (CUPTI records every kernel the process launches, kael's included), so the two
libraries' kernels are timed by the same tool in one run. No Nsight needed.

    /opt/torch/.venv/bin/python3 benchmarks/profile_mixed.py --filter "autocast" [--top 25]
"""
import argparse
import collections
import sys

import mixed_precision_vs_torch


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filter", required=True, help="the first row whose name has this")
    parser.add_argument("--calls", type=int, default=3, help="profiled calls (after 3 warm-ups)")
    parser.add_argument("--top", type=int, default=25, help="kernels listed per library")
    parser.add_argument("--libs", default="kael,torch")
    return parser.parse_args()


def kernel_table(torch, run, synchronize, calls):
    """{kernel name: (total GPU us per call, launches per call)} over calls calls of run."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        run()
    synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run()
        synchronize()
    totals = collections.defaultdict(lambda: [0.0, 0])
    for event in prof.events():
        if event.device_type.name != "CUDA":
            continue
        entry = totals[event.name]
        entry[0] += event.device_time / calls
        entry[1] += 1
    return {name: (us, count / calls) for name, (us, count) in totals.items()}


def print_table(label, table, top):
    total = sum(us for us, _ in table.values())
    launches = sum(count for _, count in table.values())
    print(f"== {label}: {total / 1000:.2f} ms of GPU time a call, {launches:.0f} kernels/copies")
    for name, (us, count) in sorted(table.items(), key=lambda item: -item[1][0])[:top]:
        print(f"{us:10.1f} us {us / total * 100:5.1f}% {count:6.0f}x  {name[:110]}")


def main():
    arguments = parse_arguments()
    import torch
    import kael
    torch.backends.cuda.matmul.allow_tf32 = True
    kael.set_float32_matmul_precision("high")
    case = next((c for c, _ in mixed_precision_vs_torch.cases(False)
                 if arguments.filter in c.name), None)
    if case is None:
        print(f"profile_mixed: no row has {arguments.filter!r}", file=sys.stderr)
        return 2
    print(case.name)
    for lib in arguments.libs.split(","):
        if lib == "kael":
            run = case.kael_setup(kael, "cuda:0")
            table = kernel_table(torch, run, lambda: kael.synchronize("cuda:0"), arguments.calls)
        else:
            run = case.torch_setup(torch, torch.device("cuda:0"))
            table = kernel_table(torch, run, torch.cuda.synchronize, arguments.calls)
        print_table(lib, table, arguments.top)
        del run
        torch.cuda.empty_cache()
        kael.empty_cache("cuda:0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
