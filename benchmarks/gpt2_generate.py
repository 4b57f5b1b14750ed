"""GPT-2 generation through the examples as a user runs them (apps/examples/gpt2_generate and
python/examples/gpt2_generate.py), beside a plain PyTorch loop over transformers' GPT-2 with its
KV cache, all from the same checkpoint folder in the same run: greedy, batch 1.

    python3 benchmarks/gpt2_generate.py --example build/bin/gpt2_generate --device cuda
(without --checkpoint, a random-init checkpoint of GPT-2 small's shape is written first.)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

RATE = re.compile(r"(\d+) new tokens in ([\d.]+) s: ([\d.]+) tokens/s")


def run_example(command, repeat):
    """The best overall tokens/s of repeat runs, and the last run's output line."""
    best, line = 0.0, ""
    for _ in range(repeat):
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        found = RATE.search(result.stdout)
        if result.returncode != 0 or not found:
            sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}\n"
                     f"{result.stderr}")
        best = max(best, float(found.group(3)))
        line = found.group(0)
    return best, line


def torch_loop(folder, device, prompt_ids, tokens, repeat):
    """Tokens/s of a plain greedy loop over transformers' GPT-2 with its KV cache."""
    import torch
    import transformers
    model = transformers.GPT2LMHeadModel.from_pretrained(folder).to(device).eval()
    ids = torch.tensor([prompt_ids], device=device)

    def generate():
        with torch.no_grad():
            out = model(ids, use_cache=True)
            past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            for _ in range(tokens - 1):
                out = model(token, past_key_values=past, use_cache=True)
                past, token = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            token.item()

    generate()  # warm-up, as the examples do
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        generate()
        best = max(best, tokens / (time.perf_counter() - start))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", required=True, help="the C++ example binary")
    parser.add_argument("--python-example",
                        default=os.path.join(os.path.dirname(__file__), "..", "python",
                                             "examples", "gpt2_generate.py"))
    parser.add_argument("--checkpoint", help="folder; default: a random GPT-2 small")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--prompt", default="Hello, I'm a language model,")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bar-rate", type=float, default=800.0)
    parser.add_argument("--bar-ratio", type=float, default=4.0)
    args = parser.parse_args()
    folder = args.checkpoint
    if folder is None:
        folder = os.path.join(tempfile.mkdtemp(), "gpt2-random")
        script = os.path.join(os.path.dirname(__file__), "..", "python", "tests",
                              "gpt2_reference.py")
        subprocess.run([sys.executable, script, folder, "--gpt2-small"], check=True)
    # kael in a process of its own: this one imports torch, and the two are not loaded together.
    encoded = subprocess.run(
        [sys.executable, "-c", "import sys, kael; print(kael.GPT2Tokenizer.from_pretrained("
         "sys.argv[1]).encode(sys.argv[2]))", folder, args.prompt],
        capture_output=True, text=True, check=True)
    prompt_ids = [int(t) for t in encoded.stdout.strip().strip("[]").split(",")]
    common = ["--checkpoint", folder, "--prompt", args.prompt, "--tokens", str(args.tokens),
              "--device", args.device, "--quiet"]
    cpp, cpp_line = run_example([args.example] + common, args.repeat)
    python, python_line = run_example([sys.executable, args.python_example] + common, args.repeat)
    torch_rate = torch_loop(folder, args.device, prompt_ids, args.tokens, args.repeat)
    print(f"GPT-2 small ({folder}), greedy, batch 1, {args.tokens} new tokens, "
          f"prompt of {len(prompt_ids)} tokens, {args.device}; best of {args.repeat}")
    print(f"  C++ example:    {cpp:9.1f} tok/s   ({cpp_line})")
    print(f"  Python example: {python:9.1f} tok/s   ({python_line})")
    print(f"  PyTorch loop over transformers' GPT-2 with its KV cache: {torch_rate:9.1f} tok/s")
    verdicts = []
    for name, rate in (("C++ example", cpp), ("Python example", python)):
        ratio = rate / torch_rate
        ok = rate >= args.bar_rate and ratio >= args.bar_ratio
        verdicts.append(ok)
        print(f"  {name}: {ratio:.2f}x PyTorch (bar: >= {args.bar_rate:.0f} tok/s and "
              f">= {args.bar_ratio:.1f}x): {'PASS' if ok else 'FAIL'}")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
