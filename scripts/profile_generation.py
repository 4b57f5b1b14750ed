#!/usr/bin/env python3
"""Where a GPT-2-small greedy decoding step spends its time on the GPU: kael's generate timed
end to end, then profiled with torch.profiler (CUPTI sees every kernel of the process, kael's
too): kernels and runtime calls by count and time per token. Needs torch with CUDA.

    PYTHONPATH=<kael module>:scripts python3 scripts/profile_generation.py [--tokens 32]
"""
import argparse
import time

import bench_model_gpt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--rows", type=int, default=25)
    arguments = parser.parse_args()
    import kael
    import torch
    from torch.profiler import ProfilerActivity, profile
    model = bench_model_gpt.kael_gpt(kael, "cuda:0")
    model.eval()
    with kael.no_grad():
        model.generate([0], 8)
        kael.synchronize("cuda:0")
        start = time.perf_counter()
        model.generate([0], arguments.tokens)
        seconds = time.perf_counter() - start
        print(f"generate: {arguments.tokens / seconds:.0f} tok/s, "
              f"{seconds / arguments.tokens * 1e3:.3f} ms/token")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as trace:
            model.generate([0], arguments.tokens)
            kael.synchronize("cuda:0")
    events = trace.key_averages()
    per_token = 1e3 / arguments.tokens  # us -> ms per token below
    rows = sorted(events, key=lambda e: e.device_time_total if hasattr(e, "device_time_total")
                  else e.cuda_time_total, reverse=True)
    print(f"{'kernel or call':<70} {'calls/token':>11} {'gpu ms/token':>12} {'cpu ms/token':>12}")
    for event in rows[:arguments.rows]:
        gpu = getattr(event, "device_time_total", getattr(event, "cuda_time_total", 0))
        print(f"{event.key[:70]:<70} {event.count / arguments.tokens:>11.1f} "
              f"{gpu * per_token / 1e3:>12.4f} {event.cpu_time_total * per_token / 1e3:>12.4f}")
    calls = sorted(events, key=lambda e: e.count, reverse=True)
    print("most frequent:")
    for event in calls[:15]:
        print(f"  {event.key[:70]:<70} {event.count / arguments.tokens:>8.1f} per token")


if __name__ == "__main__":
    main()
