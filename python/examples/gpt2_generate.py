"""GPT-2 from a Hugging Face checkpoint folder: tokenizes a prompt, generates text printed as it
comes, and reports tokens per second.

    python3 gpt2_generate.py --checkpoint gpt2 --prompt "Hello, I'm a language model," --tokens 64
"""
import argparse
import sys
import time

import kael

WHERE_TO_GET_ONE = """\
gpt2_generate.py needs a GPT-2 checkpoint folder (config.json and model.safetensors, as
transformers' save_pretrained writes them). To get GPT-2 small (124M parameters):
  git lfs install && git clone https://huggingface.co/openai-community/gpt2
or, where transformers is installed:
  python3 -c "import transformers as t; t.GPT2LMHeadModel.from_pretrained('gpt2').save_pretrained('gpt2')"
For a speed test without a download, a random-init checkpoint of GPT-2 small's shape:
  /usr/bin/python3 python/tests/gpt2_reference.py gpt2-random --gpt2-small
then: gpt2_generate.py --checkpoint gpt2-random --prompt "Hello" --tokens 128 --device cuda
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", help="folder with config.json and model.safetensors")
    parser.add_argument("--prompt", default="Hello, I'm a language model,")
    parser.add_argument("--tokens", type=int, default=64, help="new tokens to generate")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy")
    parser.add_argument("--top-k", type=int, default=0, help="0: all tokens")
    parser.add_argument("--top-p", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the sampling (the same text on every device)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                        help="the weights' and the KV cache's dtype")
    parser.add_argument("--quiet", action="store_true", help="print only the figures")
    args = parser.parse_args()
    if args.checkpoint is None:
        sys.stderr.write(WHERE_TO_GET_ONE)
        return 2
    try:
        started = time.perf_counter()
        model = kael.nn.GPT.from_pretrained(args.checkpoint, device=args.device)
        model.to(dtype=getattr(kael, args.dtype))
        tokenizer = kael.GPT2Tokenizer.from_pretrained(args.checkpoint)
        config = model.config
        print(f"GPT-2: {config.layers} layers, {config.embed} wide, {model.parameter_count()} "
              f"parameters on {args.device}, loaded in {time.perf_counter() - started:.2f} s",
              file=sys.stderr)
        ids = tokenizer.encode(args.prompt)
        if not ids:
            raise ValueError("the prompt is empty")
        model.generate(ids, 2)  # warm-up: the timed run measures decoding, not start-up
        stream = kael.TokenTextStream(tokenizer)
        first_token = []

        def show(row, token):
            if not first_token:
                first_token.append(time.perf_counter())
            if not args.quiet:
                sys.stdout.write(stream.push(token))
                sys.stdout.flush()

        if not args.quiet:
            sys.stdout.write(args.prompt)
        start = time.perf_counter()
        out = model.generate(ids, args.tokens, args.temperature, top_k=args.top_k,
                             top_p=args.top_p, seed=args.seed,
                             eos_token_id=tokenizer.eos_token_id, on_token=show)
        total = time.perf_counter() - start
        if not args.quiet:
            sys.stdout.write(stream.finish() + "\n")
    except (ValueError, TypeError, OSError, RuntimeError) as error:
        print(f"gpt2_generate.py: {error}", file=sys.stderr)
        return 1
    count = len(out) - len(ids)
    to_first = (first_token[0] - start) if first_token else total
    rest = (count - 1) / (total - to_first) if count > 1 and total > to_first else 0.0
    print(f"{count} new tokens in {total:.3f} s: {count / total:.1f} tokens/s (prompt of "
          f"{len(ids)} tokens; first token after {to_first * 1e3:.1f} ms, then {rest:.1f} "
          f"tokens/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
