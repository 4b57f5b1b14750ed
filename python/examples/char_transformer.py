#!/usr/bin/env python3
"""A character-level causal transformer as a PyTorch user writes it (nanoGPT's recipe): blocks in
an nn.ModuleList, the output head tied to the token embedding, AdamW with two parameter groups
(weight decay on matrices only), a linear warm-up chained to a cosine schedule, gradient clipping,
checkpoints every --save-every steps, and --resume to continue from the last one exactly.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/char_transformer.py --device cuda
"""
import argparse
import sys
import time

import kael
import kael.nn.functional as F
from kael import nn

TEXT = "/usr/share/common-licenses/GPL-3"


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_head, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * d_model, d_model), nn.Dropout(dropout))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class CharTransformer(nn.Module):
    def __init__(self, vocab_size, block_size, d_model=128, n_head=4, n_layer=4, dropout=0.1):
        super().__init__()
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(block_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d_model, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init_weights)
        self.head.weight = self.token_embedding.weight  # weight tying

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        positions = kael.arange(T, device=idx.device)
        x = self.drop(self.token_embedding(idx) + self.position_embedding(positions))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))

    @kael.no_grad()
    def generate(self, idx, new_tokens, generator):
        for _ in range(new_tokens):
            logits, _ = self(idx[:, -self.block_size:])
            probs = F.softmax(logits[:, -1, :], dim=-1)
            idx = kael.cat([idx, kael.multinomial(probs, 1, generator=generator)], dim=1)
        return idx


def batches(data, block_size, batch_size, generator, device):
    """Random windows of data: inputs and the next characters, [batch_size, block_size] each."""
    while True:
        starts = kael.randint(0, len(data) - block_size - 1, (batch_size,), generator=generator)
        offsets = starts[:, None] + kael.arange(block_size + 1)
        windows = data[offsets].to(device)
        yield windows[:, :-1], windows[:, 1:]


@kael.no_grad()
def validation_loss(model, data, args, device):
    model.eval()
    generator = kael.Generator().manual_seed(1234)  # the same batches at every evaluation
    stream = batches(data, args.block_size, args.batch_size, generator, device)
    losses = [model(*next(stream))[1].item() for _ in range(args.eval_batches)]
    model.train()
    return sum(losses) / len(losses)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--text", default=TEXT, help="the text file to learn")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--block-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--eval-batches", type=int, default=8)
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--checkpoint", default="char_transformer.kael")
    parser.add_argument("--resume", action="store_true",
                        help="continue from --checkpoint at the step it was saved")
    parser.add_argument("--stop-after", type=int, default=0,
                        help="stop after this step as if interrupted (a checkpoint is saved)")
    parser.add_argument("--sample-tokens", type=int, default=200)
    parser.add_argument("--metrics", help="append 'step,loss,lr' lines to this CSV file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    device = kael.device(args.device)
    kael.manual_seed(args.seed)
    with open(args.text, encoding="utf-8") as file:
        text = file.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = kael.tensor([stoi[c] for c in text])
    split = int(0.9 * len(data))
    train_data, val_data = data[:split], data[split:]

    model = CharTransformer(len(chars), args.block_size, args.d_model, n_layer=args.layers)
    model.to(device)
    decay = [p for name, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for name, p in model.named_parameters() if p.dim() < 2]
    optimizer = kael.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                  {"params": no_decay, "weight_decay": 0.0}],
                                 lr=args.lr, betas=(0.9, 0.95))
    scheduler = kael.optim.lr_scheduler.SequentialLR(optimizer, [
        kael.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01, total_iters=args.warmup),
        kael.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps - args.warmup,
                                                  eta_min=args.lr / 10),
    ], milestones=[args.warmup])
    sampler = kael.Generator().manual_seed(args.seed)
    step = 0
    if args.resume:
        state = kael.load(args.checkpoint, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        sampler.set_state(state["sampler"])
        kael.set_rng_state(state["rng"])
        step = state["step"]
        print(f"resumed from {args.checkpoint} at step {step}")
    parameters = sum(p.numel() for p in model.parameters())
    print(f"{parameters / 1e6:.2f}M parameters, {len(chars)} characters, on {device}")

    stream = batches(train_data, args.block_size, args.batch_size, sampler, device)
    metrics = open(args.metrics, "a", buffering=1) if args.metrics else None
    start = time.perf_counter()
    while step < args.steps:
        inputs, targets = next(stream)
        _, loss = model(inputs, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        if metrics:
            metrics.write(f"{step},{loss.item()!r},{scheduler.get_last_lr()[0]!r}\n")
        if step % args.eval_every == 0 or step == args.steps:
            rate = step / (time.perf_counter() - start)
            print(f"step {step}: train loss {loss.item():.4f}, validation loss "
                  f"{validation_loss(model, val_data, args, device):.4f}, {rate:.1f} steps/s",
                  flush=True)
        stopping = step == args.stop_after
        if step % args.save_every == 0 or step == args.steps or stopping:
            kael.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                       "scheduler": scheduler.state_dict(), "sampler": sampler.get_state(),
                       "rng": kael.get_rng_state(), "step": step}, args.checkpoint)
        if stopping:
            print(f"stopped after step {step}; --resume continues")
            return 0
    if metrics:
        metrics.close()
    prompt = kael.tensor([[stoi["\n"]]], device=device)
    sample = model.generate(prompt, args.sample_tokens, kael.Generator().manual_seed(args.seed))
    print("".join(chars[i] for i in sample[0].tolist()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
