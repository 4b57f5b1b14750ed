"""A GPT-2 checkpoint written as transformers' save_pretrained writes it, and GPT-2's forward
pass in numpy, both independent of kael: the tests load the first into kael and compare its
logits with the second.

As a script it writes a random checkpoint folder (for the C++ test, the examples and speed runs):
    python3 gpt2_reference.py OUT [--layers 2 --heads 2 --embed 32 --vocab 97 --positions 16]
    python3 gpt2_reference.py OUT --gpt2-small      # the 124M-parameter shape
"""
import argparse
import json
import os
import struct

import numpy as np

_SAFETENSORS_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


def small_config(**overrides):
    config = {"model_type": "gpt2", "vocab_size": 97, "n_positions": 16, "n_embd": 32,
              "n_layer": 2, "n_head": 2, "n_inner": None, "activation_function": "gelu_new",
              "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1,
              "attn_pdrop": 0.1, "tie_word_embeddings": True, "architectures": ["GPT2LMHeadModel"]}
    config.update(overrides)
    return config


def random_weights(config, seed=0):
    """GPT-2's tensors by their checkpoint names (no prefix), initialised as transformers does
    (normal 0.02), with layer norms and biases away from 1 and 0 so that they matter."""
    rng = np.random.default_rng(seed)
    c, v, p = config["n_embd"], config["vocab_size"], config["n_positions"]
    inner = config.get("n_inner") or 4 * c

    def normal(*shape, scale=0.02):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    weights = {"wte.weight": normal(v, c), "wpe.weight": normal(p, c, scale=0.01)}
    for i in range(config["n_layer"]):
        layer = f"h.{i}."
        for norm in ("ln_1", "ln_2"):
            weights[layer + norm + ".weight"] = 1 + normal(c, scale=0.1)
            weights[layer + norm + ".bias"] = normal(c, scale=0.1)
        # Conv1D: [in, out]
        for name, shape in (("attn.c_attn", (c, 3 * c)), ("attn.c_proj", (c, c)),
                            ("mlp.c_fc", (c, inner)), ("mlp.c_proj", (inner, c))):
            weights[layer + name + ".weight"] = normal(*shape)
            weights[layer + name + ".bias"] = normal(shape[1], scale=0.05)
    weights["ln_f.weight"] = 1 + normal(c, scale=0.1)
    weights["ln_f.bias"] = normal(c, scale=0.1)
    if not config.get("tie_word_embeddings", True):
        weights["lm_head.weight"] = normal(v, c)
    return weights


def bf16_bits(values):
    """float32 -> bfloat16 bit patterns (round to nearest even) as uint16."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> (dtype name, numpy array of the bytes to store)."""
    header, offset, blobs = {}, 0, []
    for name, (dtype, array) in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for blob in blobs:
            out.write(blob)


def write_checkpoint(folder, config, weights, prefix="transformer.", bf16=("wpe.weight",),
                     f16=(), mask_buffers=True):
    """Writes config.json and model.safetensors; returns the weights as stored (bf16/f16
    rounding applied), which is what the reference must use."""
    os.makedirs(folder, exist_ok=True)
    stored, tensors = {}, {}
    for name, value in weights.items():
        full = name if name.startswith("lm_head") else prefix + name
        if name in bf16:
            bits = bf16_bits(value)
            tensors[full] = ("BF16", bits)
            stored[name] = bf16_values(bits)
        elif name in f16:
            half = value.astype(np.float16)
            tensors[full] = ("F16", half)
            stored[name] = half.astype(np.float32)
        else:
            tensors[full] = ("F32", value)
            stored[name] = value
    if mask_buffers:  # what conversions of the original release carry: not parameters
        p = config["n_positions"]
        for i in range(config["n_layer"]):
            tensors[f"{prefix}h.{i}.attn.bias"] = (
                "F32", np.tril(np.ones((p, p), np.float32)).reshape(1, 1, p, p))
            tensors[f"{prefix}h.{i}.attn.masked_bias"] = ("F32", np.array(-1e4, np.float32))
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as out:
        json.dump(config, out, indent=2)
    return stored


def _layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu_new(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def reference_logits(weights, config, tokens):
    """GPT-2's forward pass in float64: tokens int [B, T] -> logits [B, T, vocab]."""
    w = {name: value.astype(np.float64) for name, value in weights.items()}
    eps, heads = config["layer_norm_epsilon"], config["n_head"]
    tokens = np.asarray(tokens)
    batch, steps = tokens.shape
    x = w["wte.weight"][tokens] + w["wpe.weight"][np.arange(steps)]
    mask = np.triu(np.ones((steps, steps), bool), 1)
    for i in range(config["n_layer"]):
        layer = f"h.{i}."
        a = _layer_norm(x, w[layer + "ln_1.weight"], w[layer + "ln_1.bias"], eps)
        qkv = a @ w[layer + "attn.c_attn.weight"] + w[layer + "attn.c_attn.bias"]
        q, k, v = np.split(qkv, 3, axis=-1)
        split = lambda t: t.reshape(batch, steps, heads, -1).transpose(0, 2, 1, 3)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
        scores = np.where(mask, -np.inf, scores)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        y = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, steps, -1)
        x = x + y @ w[layer + "attn.c_proj.weight"] + w[layer + "attn.c_proj.bias"]
        m = _layer_norm(x, w[layer + "ln_2.weight"], w[layer + "ln_2.bias"], eps)
        m = _gelu_new(m @ w[layer + "mlp.c_fc.weight"] + w[layer + "mlp.c_fc.bias"])
        x = x + m @ w[layer + "mlp.c_proj.weight"] + w[layer + "mlp.c_proj.bias"]
    x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
    head = w.get("lm_head.weight", w["wte.weight"])
    return x @ head.T


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder to write config.json and model.safetensors into")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--embed", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=97)
    parser.add_argument("--positions", type=int, default=16)
    parser.add_argument("--gpt2-small", action="store_true",
                        help="GPT-2 small's shape: 12 layers, 12 heads, 768, 50257, 1024")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference", action="store_true",
                        help="also write reference.safetensors: tokens (I64) and the numpy "
                             "forward pass's logits for them (F64)")
    args = parser.parse_args()
    if args.gpt2_small:
        args.layers, args.heads, args.embed, args.vocab, args.positions = 12, 12, 768, 50257, 1024
    config = small_config(n_layer=args.layers, n_head=args.heads, n_embd=args.embed,
                          vocab_size=args.vocab, n_positions=args.positions)
    stored = write_checkpoint(args.out, config, random_weights(config, args.seed))
    if args.reference:
        tokens = np.random.default_rng(args.seed).integers(0, args.vocab, (2, args.positions))
        logits = reference_logits(stored, config, tokens)
        write_safetensors(os.path.join(args.out, "reference.safetensors"),
                          {"tokens": ("I64", tokens.astype(np.int64)), "logits": ("F64", logits)})
    print(f"wrote a random GPT-2 checkpoint ({args.layers} layers, {args.embed} wide, "
          f"vocab {args.vocab}) to {args.out}")


if __name__ == "__main__":
    main()
