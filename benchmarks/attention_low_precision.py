#!/usr/bin/env python3
"""bf16/f16 scaled_dot_product_attention on the GPU, kael beside PyTorch in one process: the
largest error of the output and of each gradient of sum(out * w) against an f64 reference on the
host, for both libraries; then GPT-2 small's attention shape (8 x 12 x 512 x 64, causal, bf16)
timed forward and forward+backward (best of 5 x 20 calls).

    PYTHONPATH=<kael module> /opt/torch/.venv/bin/python3 benchmarks/attention_low_precision.py
"""
import time

import numpy as np
import torch

import kael


def to_k(t, dtype):
    return kael.tensor(t.detach().float().cpu().numpy(), device="cuda:0").to(dtype)


for tdt, kdt in [(torch.bfloat16, kael.bfloat16), (torch.float16, kael.float16)]:
    for (B, H, T, D, causal) in [(2, 3, 200, 64, True), (2, 3, 130, 64, False), (1, 2, 70, 128, True), (2, 2, 9, 64, True)]:
        g = torch.Generator(device="cpu").manual_seed(0)
        q, k, v, w = [torch.randn(B, H, T, D, generator=g) for _ in range(4)]
        ref = [x.double().requires_grad_() for x in (q, k, v)]
        out = torch.nn.functional.scaled_dot_product_attention(*ref, is_causal=causal)
        (out * w.double()).sum().backward()
        want = [out.detach()] + [x.grad for x in ref]
        tq = [x.to("cuda", tdt).requires_grad_() for x in (q, k, v)]
        tout = torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=causal)
        (tout * w.to("cuda", tdt)).sum().backward()
        tgot = [tout.detach()] + [x.grad for x in tq]
        kq = [to_k(x, kdt).requires_grad_(True) for x in (q, k, v)]
        kout = kael.nn.functional.scaled_dot_product_attention(*kq, is_causal=causal)
        (kout * to_k(w, kdt)).sum().backward()
        kgot = [kout.detach()] + [x.grad for x in kq]
        names = ["out", "dq", "dk", "dv"]
        line = []
        for n, wnt, tg, kg in zip(names, want, tgot, kgot):
            wn = wnt.numpy()
            te = np.abs(tg.double().cpu().numpy() - wn).max()
            ke = np.abs(kg.to(kael.float32).cpu().numpy().astype(np.float64) - wn).max()
            line.append(f"{n} kael {ke:.3g} torch {te:.3g}")
        print(tdt, (B, H, T, D, causal), "; ".join(line), flush=True)
print("fallbacks", kael.fallback_counts() if hasattr(kael, "fallback_counts") else "?")
# timing: GPT-2 small attention shape, fwd+bwd
B, H, T, D = 8, 12, 512, 64
for tdt, kdt in [(torch.bfloat16, kael.bfloat16)]:
    tq = [torch.randn(B, H, T, D, device="cuda", dtype=tdt, requires_grad=True) for _ in range(3)]
    go = torch.randn(B, H, T, D, device="cuda", dtype=tdt)
    kq = [kael.randn(B, H, T, D, device="cuda:0").to(kdt).requires_grad_(True) for _ in range(3)]
    kgo = kael.randn(B, H, T, D, device="cuda:0").to(kdt)
    def trun():
        o = torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=True); o.backward(go)
    def krun():
        o = kael.nn.functional.scaled_dot_product_attention(*kq, is_causal=True); o.backward(kgo)
    def tfwd():
        with torch.no_grad(): torch.nn.functional.scaled_dot_product_attention(*tq, is_causal=True)
    def kfwd():
        with kael.no_grad(): kael.nn.functional.scaled_dot_product_attention(*kq, is_causal=True)
    for name, f, sync in [("torch fwd+bwd", trun, torch.cuda.synchronize), ("kael fwd+bwd", krun, lambda: kael.synchronize("cuda:0")),
                          ("torch fwd", tfwd, torch.cuda.synchronize), ("kael fwd", kfwd, lambda: kael.synchronize("cuda:0"))]:
        for _ in range(3): f()
        sync(); best = 1e9
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20): f()
            sync(); best = min(best, (time.perf_counter() - t0) / 20)
        print(f"{name}: {best*1e6:.1f} us", flush=True)
