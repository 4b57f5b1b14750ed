"""Where a reduction's time goes on the GPU: for each generated case matching --filter, the
seconds per call in a synchronised loop (what model_path_vs_torch times), the host's seconds per
call to enqueue it (a short loop without synchronisation) for kael and torch. Run under
`ncu --clock-control none --print-summary per-kernel` with --once to list each call's kernels.
Usage: reduction_costs.py [--filter REGEX] [--once]"""
import argparse
import re
import time

import torch
import kael

import model_path_cases
import reduce_cases


class Case:
    def __init__(self, name, torch_setup, kael_setup):
        self.name, self.torch_setup, self.kael_setup = name, torch_setup, kael_setup


def per_call(run, sync, count):
    run()
    sync()
    start = time.perf_counter()
    for _ in range(count):
        run()
    enqueued = time.perf_counter() - start
    sync()
    return enqueued / count, (time.perf_counter() - start) / count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--filter", default=".")
    parser.add_argument("--once", action="store_true", help="one call each (under ncu)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = reduce_cases.reduction_cases(Case, 1.0, model_path_cases.sized)
    kdev = kael.device("cuda")
    ksync = lambda: kael.synchronize(kdev)  # noqa: E731
    tsync = torch.cuda.synchronize
    print(f"{'case':60} {'kael host':>10} {'kael loop':>10} {'torch host':>10} {'torch loop':>10}")
    for case in cases:
        if not re.search(args.filter, case.name):
            continue
        krun = case.kael_setup(kael, kdev)
        trun = case.torch_setup(torch, "cuda")
        if args.once:
            krun(); ksync()
            print("kael:", case.name, flush=True)
            continue
        kh, _ = per_call(krun, ksync, 20)
        _, kl = per_call(krun, ksync, 2000)
        th, _ = per_call(trun, tsync, 20)
        _, tl = per_call(trun, tsync, 2000)
        print(f"{case.name:60} {kh*1e6:9.2f}u {kl*1e6:9.2f}u {th*1e6:9.2f}u {tl*1e6:9.2f}u",
              flush=True)


if __name__ == "__main__":
    main()
