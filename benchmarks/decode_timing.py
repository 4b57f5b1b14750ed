#!/usr/bin/env python3
"""Wall time of GPT-2-small greedy generation (model_path_gpt.py's model) for several lengths,
so that the per-token cost of the steady decoding loop shows apart from the prefill and the
recording: (t(512) - t(128)) / 384 is one token. KAEL_DEVICE_GRAPHS=0 compares eager steps.

    PYTHONPATH=<module> benchmarks/decode_timing.py [--device cuda:0]
"""
import argparse
import time

import model_path_gpt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda:0")
    arguments = parser.parse_args()
    import kael
    model = model_path_gpt.kael_gpt(kael, arguments.device)
    model.eval()
    for tokens in (2, 3, 16, 128, 512):
        with kael.no_grad():
            model.generate([0], tokens)
            kael.synchronize(arguments.device)
            start = time.perf_counter()
            for _ in range(3):
                model.generate([0], tokens)
            kael.synchronize(arguments.device)
        elapsed = (time.perf_counter() - start) / 3
        print(f"new_tokens {tokens}: {elapsed * 1e3:.2f} ms per generate", flush=True)


if __name__ == "__main__":
    main()
