"""The cases of model_path_vs_torch.py: each builds its operands once per library and returns the
call to time, written as a user of that library writes it."""
import dataclasses
from typing import Callable

import conv_cases
import elementwise_cases
import reduce_cases


@dataclasses.dataclass
class Case:
    name: str
    torch_setup: Callable  # (torch, device) -> run()
    kael_setup: Callable   # (kael, device) -> run()
    unit: str = "us"
    higher_is_better: bool = False

    def figure(self, seconds):
        if self.unit == "us":
            return seconds * 1e6
        if self.unit == "ms":
            return seconds * 1e3
        return self.rate / seconds  # tokens per second

    rate: float = 1.0


def sized(n, scale):
    return max(1, int(n * scale))


def op_case(name, build, torch_op, kael_op):
    """build(lib, device, is_torch) -> operands; *_op(lib, *operands) is the timed call."""
    return Case(name,
                lambda torch, dev: (lambda ops: lambda: torch_op(torch, *ops))(build(torch, dev, True)),
                lambda kael, dev: (lambda ops: lambda: kael_op(kael, *ops))(build(kael, dev, False)))


def randn(lib, dev, is_torch, *shape):
    return lib.randn(*shape, device=dev)


def randint(lib, dev, is_torch, high, *shape):
    if is_torch:
        return lib.randint(0, high, shape, device=dev)
    return lib.randint(0, high, list(shape), device=dev)


def op_cases(scale):
    """The hand-written cases, then the generated reductions, activations and elementwise ops."""
    rows = sized(8192, scale)
    return hand_cases(scale, rows) + reduce_cases.reduction_cases(Case, scale, sized) + \
        reduce_cases.activation_cases(Case, scale, sized) + \
        elementwise_cases.elementwise_cases(Case, scale, sized) + \
        conv_cases.conv_cases(Case, scale, sized) + conv_cases.recurrent_cases(Case, scale, sized)


def hand_cases(scale, rows):
    return [
        op_case(f"a + a.T, {rows}x{rows}", lambda l, d, t: (randn(l, d, t, rows, rows),),
                lambda l, a: a + a.T, lambda l, a: a + a.T),
        op_case(f"a + row, {rows}x{rows} + {rows}",
                lambda l, d, t: (randn(l, d, t, rows, rows), randn(l, d, t, rows)),
                lambda l, a, r: a + r, lambda l, a, r: a + r),
        op_case(f"contiguous() of a transpose, {rows}x{rows}",
                lambda l, d, t: (randn(l, d, t, rows, rows),),
                lambda l, a: a.T.contiguous(), lambda l, a: a.T.contiguous()),
        op_case(f"softmax over the last dim, {rows}x{rows}",
                lambda l, d, t: (randn(l, d, t, rows, rows),),
                lambda l, a: l.softmax(a, -1), lambda l, a: l.softmax(a, -1)),
        op_case(f"log_softmax over the last dim, {rows}x{rows}",
                lambda l, d, t: (randn(l, d, t, rows, rows),),
                lambda l, a: l.log_softmax(a, -1), lambda l, a: l.log_softmax(a, -1)),
        op_case(f"softmax over dim 0, {rows}x{rows}",
                lambda l, d, t: (randn(l, d, t, rows, rows),),
                lambda l, a: l.softmax(a, 0), lambda l, a: l.softmax(a, 0)),
        layer_norm_case(sized(16384, scale)),
        layer_norm_backward_case(sized(16384, scale)),
        op_case(f"cross_entropy {sized(8192, scale)}x50257",
                lambda l, d, t: (randn(l, d, t, sized(8192, scale), 50257),
                                 randint(l, d, t, 50257, sized(8192, scale))),
                lambda l, x, y: l.nn.functional.cross_entropy(x, y),
                lambda l, x, y: l.cross_entropy(x, y)),
        op_case(f"embedding: {sized(16384, scale)} rows of 50257x768",
                lambda l, d, t: (randn(l, d, t, 50257, 768),
                                 randint(l, d, t, 50257, sized(16384, scale))),
                lambda l, w, i: l.nn.functional.embedding(i, w), lambda l, w, i: l.embedding(w, i)),
        op_case(f"sort rows, {sized(4096, scale)}x4096",
                lambda l, d, t: (randn(l, d, t, sized(4096, scale), 4096),),
                lambda l, a: l.sort(a, dim=-1), lambda l, a: l.sort(a, dim=-1)),
        op_case(f"argsort rows, {sized(4096, scale)}x4096",
                lambda l, d, t: (randn(l, d, t, sized(4096, scale), 4096),),
                lambda l, a: l.argsort(a, dim=-1), lambda l, a: l.argsort(a, dim=-1)),
        op_case("topk 50 of 64x50257", lambda l, d, t: (randn(l, d, t, 64, 50257),),
                lambda l, a: l.topk(a, 50, dim=-1), lambda l, a: l.topk(a, 50, dim=-1)),
        op_case(f"cumsum of {sized(1 << 22, scale)} elements (one row)",
                lambda l, d, t: (randn(l, d, t, sized(1 << 22, scale)),),
                lambda l, a: l.cumsum(a, dim=0), lambda l, a: l.cumsum(a, dim=0)),
        op_case(f"cumsum rows, {sized(4096, scale)}x1024",
                lambda l, d, t: (randn(l, d, t, sized(4096, scale), 1024),),
                lambda l, a: l.cumsum(a, dim=-1), lambda l, a: l.cumsum(a, dim=-1)),
        op_case(f"linear with bias, {rows}x768 -> 3072",
                lambda l, d, t: (randn(l, d, t, rows, 768), randn(l, d, t, 3072, 768),
                                 randn(l, d, t, 3072)),
                lambda l, x, w, b: l.nn.functional.linear(x, w, b),
                lambda l, x, w, b: l.linear(x, w, b)),
        mask_case("where", sized(8, scale)),
        mask_case("masked_fill", sized(8, scale)),
        attention_case(sized(8, scale)),
    ]


def layer_norm_case(rows):
    def build(lib, dev, is_torch):
        return randn(lib, dev, is_torch, rows, 768), lib.ones(768, device=dev), \
            lib.zeros(768, device=dev)
    return op_case(f"layer_norm {rows}x768", build,
                   lambda l, x, w, b: l.nn.functional.layer_norm(x, (768,), w, b, 1e-5),
                   lambda l, x, w, b: l.layer_norm(x, w, b, 1e-5))


def layer_norm_backward_case(rows):
    """Forward and backward with x, weight and bias requiring grad and a given upstream gradient
    (as in a model: no sum() in the timed call)."""
    def setup(lib, dev, norm):
        x = lib.randn(rows, 768, device=dev, requires_grad=True)
        w = lib.ones(768, device=dev, requires_grad=True)
        b = lib.zeros(768, device=dev, requires_grad=True)
        grad = lib.randn(rows, 768, device=dev)
        return lambda: norm(lib, x, w, b).backward(grad)
    return Case(f"layer_norm fwd+bwd {rows}x768",
                lambda torch, dev: setup(torch, dev, lambda l, x, w, b:
                                         l.nn.functional.layer_norm(x, (768,), w, b, 1e-5)),
                lambda kael, dev: setup(kael, dev, lambda l, x, w, b:
                                        l.layer_norm(x, w, b, 1e-5)))


def mask_case(kind, batch):
    """An attention-score-shaped [B, 12, 512, 512] tensor and a broadcast [512, 512] mask."""
    def build(lib, dev, is_torch):
        scores = randn(lib, dev, is_torch, batch, 12, 512, 512)
        upper = lib.arange(0, 512, device=dev).view(1, 512) > lib.arange(0, 512, device=dev) \
            .view(512, 1)
        return scores, upper
    if kind == "where":
        return op_case(f"where on [{batch}, 12, 512, 512] scores", build,
                       lambda l, s, m: l.where(m, l.zeros((), device=s.device), s),
                       lambda l, s, m: l.where(m, 0.0, s))
    return op_case(f"masked_fill on [{batch}, 12, 512, 512] scores", build,
                   lambda l, s, m: s.masked_fill(m, float("-inf")),
                   lambda l, s, m: s.masked_fill(m, float("-inf")))


def attention_case(batch):
    """Causal attention forward and backward, [B, 12, 512, 64]: torch's fused SDPA (where it
    has one) against kael's fused scaled_dot_product_attention."""
    shape = (batch, 12, 512, 64)

    def torch_setup(torch, dev):
        q, k, v = (torch.randn(*shape, device=dev, requires_grad=True) for _ in range(3))

        fused = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
        upper = torch.ones(512, 512, dtype=torch.bool, device=dev).triu(1)

        def run():
            if fused is not None:
                out = fused(q, k, v, is_causal=True)
            else:  # torch before 2.0: the composition a user writes
                scores = (q @ k.transpose(-2, -1) / 8.0).masked_fill(upper, float("-inf"))
                out = scores.softmax(-1) @ v
            out.sum().backward()
        return run

    def kael_setup(kael, dev):
        q, k, v = (kael.randn(*shape, device=dev, requires_grad=True) for _ in range(3))

        def run():
            out = kael.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.sum().backward()
        return run
    return Case(f"attention fwd+bwd {list(shape)} causal", torch_setup, kael_setup)


def model_cases(scale):
    import model_path_gpt
    return model_path_gpt.cases(scale, Case)


def gpu_cases(scale):
    """The cases only the GPU benchmark times: ResNet-50's convolutions (the layers issue's GPU
    bar; on the cpu, bf16 convolutions have no library path in either library worth a bar) and
    the bf16 reductions."""
    return conv_cases.resnet50_conv_cases(Case, scale, sized) + \
        reduce_cases.low_precision_reduction_cases(Case, scale, sized)
