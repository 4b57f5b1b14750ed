#!/usr/bin/env python3
"""Runs one case of model_path_vs_torch.py once, warmed up, between cudaProfilerStart and Stop, for
a kernel profiler started with --profile-from-start off (scripts/cuda/profile_kernels.sh).

    profile_case.py --lib kael --filter "training step" [--scale 1] [--calls 1]
"""
import argparse
import sys
import time

import model_path_cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", choices=["kael", "torch"], required=True)
    parser.add_argument("--filter", required=True, help="the first case whose name has this")
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--calls", type=int, default=1, help="calls inside the profiled range")
    arguments = parser.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    cases = model_path_cases.op_cases(arguments.scale) + \
        model_path_cases.gpu_cases(arguments.scale) + model_path_cases.model_cases(arguments.scale)
    case = next(c for c in cases if arguments.filter in c.name)
    if arguments.lib == "kael":
        import kael
        run = case.kael_setup(kael, "cuda:0")
        synchronize = lambda: kael.synchronize("cuda:0")
    else:
        run = case.torch_setup(torch, torch.device("cuda:0"))
        synchronize = torch.cuda.synchronize
    for _ in range(2):
        run()
    synchronize()
    torch.cuda.profiler.start()
    start = time.perf_counter()
    for _ in range(arguments.calls):
        run()
    synchronize()
    elapsed = time.perf_counter() - start
    torch.cuda.profiler.stop()
    print(f"{arguments.lib} {case.name}: {arguments.calls} call(s) in {elapsed * 1e3:.2f} ms"
          " (under the profiler)", file=sys.stderr)


if __name__ == "__main__":
    main()
