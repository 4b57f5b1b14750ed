import sys, time
sys.path.insert(0, "scripts")
import kael, bench_model_gpt
model = bench_model_gpt.kael_gpt(kael, "cuda:0")
model.eval()
for n in (2, 3, 16, 128, 512):
    with kael.no_grad():
        model.generate([0], n)
        kael.synchronize("cuda:0")
        t = time.perf_counter()
        for _ in range(3):
            model.generate([0], n)
        kael.synchronize("cuda:0")
    print(f"new_tokens {n}: {(time.perf_counter() - t) / 3 * 1e3:.2f} ms per generate", flush=True)
