"""GPT-2 small in both libraries for model_path_vs_torch.py: one AdamW training step on
[batch, 512] tokens, and greedy generation of new tokens after a one-token prompt (batch 1, KV
cache); and the char-GPT example's model (apps/examples/char_gpt.cpp's defaults), one AdamW
step on [16, 32] tokens. The PyTorch model has kael's nn.GPT shape (pre-norm blocks, tanh GELU,
learned positions, untied head without bias); attention is SDPA where torch has it."""
import collections
import contextlib
import math

Shape = collections.namedtuple("Shape", "vocab block layers heads embed")
GPT2 = Shape(vocab=50257, block=1024, layers=12, heads=12, embed=768)
CHAR_GPT = Shape(vocab=65, block=32, layers=2, heads=4, embed=64)
VOCAB, BLOCK, LAYERS, HEADS, EMBED = GPT2


def torch_gpt(torch, device, shape=GPT2):
    VOCAB, BLOCK, LAYERS, HEADS, EMBED = shape  # noqa: N806 (the module's names, per model)
    nn = torch.nn
    functional = torch.nn.functional
    fused = hasattr(functional, "scaled_dot_product_attention")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(EMBED), nn.LayerNorm(EMBED)
            self.qkv, self.proj = nn.Linear(EMBED, 3 * EMBED), nn.Linear(EMBED, EMBED)
            self.expand, self.contract = nn.Linear(EMBED, 4 * EMBED), nn.Linear(4 * EMBED, EMBED)

        def attend(self, x, cache):
            b, t, c = x.shape
            q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2)
                       for z in self.qkv(x).split(c, dim=2))
            if cache is not None:
                if cache:
                    k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
                cache[:] = [k, v]
            causal = t > 1
            if fused:
                out = functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
            else:
                scores = q @ k.transpose(-2, -1) / math.sqrt(c // HEADS)
                if causal:
                    mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
                    scores = scores.masked_fill(mask, float("-inf"))
                out = scores.softmax(-1) @ v
            return self.proj(out.transpose(1, 2).reshape(b, t, c))

        def forward(self, x, cache=None):
            x = x + self.attend(self.norm1(x), cache)
            hidden = functional.gelu(self.expand(self.norm2(x)), approximate="tanh")
            return x + self.contract(hidden)

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(VOCAB, EMBED), nn.Embedding(BLOCK, EMBED)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.norm = nn.LayerNorm(EMBED)
            self.head = nn.Linear(EMBED, VOCAB, bias=False)

        def forward(self, tokens, caches=None, start=0):
            positions = torch.arange(start, start + tokens.shape[1], device=tokens.device)
            x = self.tokens(tokens) + self.positions(positions)
            for i, block in enumerate(self.blocks):
                x = block(x, None if caches is None else caches[i])
            return self.head(self.norm(x))

    return GPT().to(device)


def kael_gpt(kael, device, shape=GPT2):
    config = kael.nn.GPTConfig()
    config.vocab_size, config.block_size, config.layers = shape.vocab, shape.block, shape.layers
    config.heads, config.embed = shape.heads, shape.embed
    return kael.nn.GPT(config, device=device)


def training_steps(shape, batch, tokens, autocast=False, fused=False, compiled=False):
    """The torch and kael setups of one AdamW step of the shape's model on [batch, tokens]; with
    autocast the forward runs under bf16 autocast, with fused both take fused=True AdamW, with
    compiled torch's model is torch.compile'd and kael's whole step kael.compile'd (recorded
    into a device graph after a warm-up call; mixed_precision_vs_torch.py's modes)."""
    optional = {"fused": True} if fused else {}  # torch 1.13's AdamW has no fused argument

    def torch_step(torch, device):
        model = torch_gpt(torch, device, shape)
        forward = torch.compile(model) if compiled else model
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, **optional)
        inputs = torch.randint(0, shape.vocab, (batch, tokens), device=device)
        targets = torch.randint(0, shape.vocab, (batch, tokens), device=device)
        region = (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if autocast \
            else contextlib.nullcontext

        def run():
            optimizer.zero_grad(set_to_none=True)
            with region():
                logits = forward(inputs)
                loss = torch.nn.functional.cross_entropy(logits.view(-1, shape.vocab),
                                                         targets.view(-1))
            loss.backward()
            optimizer.step()
        return run

    def kael_step(kael, device):
        model = kael_gpt(kael, device, shape)
        optimizer = kael.optim.AdamW(model.parameters(), lr=3e-4, **optional)
        inputs = kael.randint(0, shape.vocab, [batch, tokens], device=device)
        targets = kael.randint(0, shape.vocab, [batch, tokens], device=device)
        region = (lambda: kael.autocast(kael.device(device).type, dtype=kael.bfloat16)) \
            if autocast else contextlib.nullcontext

        def step(inputs, targets):
            optimizer.zero_grad()
            with region():
                loss = model.loss(inputs, targets)
            loss.backward()
            optimizer.step()
        if not compiled:
            return lambda: step(inputs, targets)
        recorded = kael.compile(step, fullgraph=True)
        return lambda: recorded(inputs, targets)
    return torch_step, kael_step


def cases(scale, Case):
    batch = max(1, int(8 * scale))
    new_tokens = max(8, int(128 * scale))

    torch_step, kael_step = training_steps(GPT2, batch, 512)

    def torch_generate(torch, device):
        model = torch_gpt(torch, device).eval()

        def run():
            with torch.no_grad():
                caches = [[] for _ in range(LAYERS)]
                token = torch.zeros(1, 1, dtype=torch.long, device=device)
                for step in range(new_tokens):
                    logits = model(token, caches, start=step)
                    token = logits[:, -1].argmax(-1, keepdim=True)
                token.item()
        return run

    def kael_generate(kael, device):
        model = kael_gpt(kael, device)
        model.eval()

        def run():
            with kael.no_grad():
                model.generate([0], new_tokens)
        return run

    step = Case(f"GPT-2 small training step, batch {batch} x 512, AdamW", torch_step, kael_step,
                unit="ms")
    generate = Case(f"GPT-2 small greedy generation, {new_tokens} tokens, KV cache",
                    torch_generate, kael_generate, unit="tok/s", higher_is_better=True,
                    rate=new_tokens)
    char_torch, char_kael = training_steps(CHAR_GPT, 16, CHAR_GPT.block)
    char_step = Case(f"char-GPT training step, batch 16 x {CHAR_GPT.block}, AdamW", char_torch,
                     char_kael, unit="ms")
    return [step, generate, char_step]
