"""The PyTorch surface that ported training programs use, each idiom beside torch 1.13: the
module system (ModuleDict attributes, Sequential of an OrderedDict, zero_grad(set_to_none),
Parameter, register_parameter, hooks), autograd.Function, and the tensor API (Size, data, mm,
new_*, masked_select, equal, type, isclose, format specs, str, randint(high, size), where with
two scalars, legacy constructors)."""
import collections

import numpy as np
import pytest
import torch

import kael


def same(kael_tensor, torch_tensor, **tolerance):
    np.testing.assert_allclose(np.array(kael_tensor.tolist(), dtype=np.float64),
                               torch_tensor.detach().double().numpy(), **tolerance)


def twin_linears(inputs=3, outputs=2):
    t = torch.nn.Linear(inputs, outputs)
    k = kael.nn.Linear(inputs, outputs)
    with kael.no_grad():
        k.weight.copy_(kael.tensor(t.weight.detach().numpy()))
        k.bias.copy_(kael.tensor(t.bias.detach().numpy()))
    return k, t


def test_module_dict_attributes_and_sequential_of_an_ordered_dict():
    for lib in (kael, torch):
        parts = lib.nn.ModuleDict(dict(wte=lib.nn.Embedding(5, 4), ln=lib.nn.LayerNorm(4)))
        assert parts.wte is parts["wte"]
        parts.head = lib.nn.Linear(4, 2)
        assert "head" in parts and [n for n, _ in parts.named_children()] == ["wte", "ln", "head"]
        with pytest.raises(AttributeError):
            parts.missing
        seq = lib.nn.Sequential(collections.OrderedDict([("fc", lib.nn.Linear(4, 3)),
                                                         ("act", lib.nn.ReLU())]))
        assert isinstance(seq.fc, lib.nn.Linear) and seq[1] is seq.act
        assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]


def test_zero_grad_parameter_and_registration():
    for lib in (kael, torch):
        layer = lib.nn.Linear(2, 1)
        layer(lib.ones(1, 2)).sum().backward()
        layer.zero_grad(set_to_none=False)
        assert layer.weight.grad.tolist() == [[0.0, 0.0]]
        layer.zero_grad(set_to_none=True)  # kael's default, as PyTorch 2.x's (1.13: False)
        assert layer.weight.grad is None
        p = lib.nn.Parameter(lib.zeros(3))
        assert isinstance(p, lib.nn.Parameter) and p.requires_grad
        assert not isinstance(lib.zeros(3), lib.nn.Parameter)
        container = lib.nn.Module()
        container.register_parameter("scale", lib.nn.Parameter(lib.ones(2)))
        container.add_module("head", lib.nn.Linear(2, 1))
        assert [n for n, _ in container.named_parameters()] == ["scale", "head.weight",
                                                                "head.bias"]
        with pytest.raises(TypeError):
            container.register_parameter("bad", 3.0)


def run_hooks(lib, layer):
    calls = []
    pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    post = layer.register_forward_hook(lambda m, args, out: out + 1)
    back = layer.register_full_backward_hook(
        lambda m, grad_in, grad_out: calls.append((grad_in[0].tolist(), grad_out[0].tolist())))
    x = lib.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    out = layer(x)
    (out * lib.tensor([[3.0, 4.0]])).sum().backward()
    pre.remove(), post.remove(), back.remove()
    plain = layer(x)
    return out, x.grad, calls, plain


def test_forward_pre_forward_and_full_backward_hooks_match_torch():
    k_layer, t_layer = twin_linears()
    k_out, k_grad, k_calls, k_plain = run_hooks(kael, k_layer)
    t_out, t_grad, t_calls, t_plain = run_hooks(torch, t_layer)
    same(k_out, t_out, rtol=1e-5)  # two BLAS libraries' f32 sums
    same(k_grad, t_grad, rtol=1e-5)
    same(k_plain, t_plain, rtol=1e-5)
    assert len(k_calls) == len(t_calls) == 1
    np.testing.assert_allclose(k_calls[0][0], t_calls[0][0], rtol=1e-5)
    np.testing.assert_allclose(k_calls[0][1], t_calls[0][1], rtol=1e-5)


def test_autograd_function_matches_torch():
    def make(lib):
        class ScaledProduct(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, scale):
                ctx.save_for_backward(a, b)
                ctx.scale = scale
                return a * b * scale, a + b

            @staticmethod
            def backward(ctx, grad_product, grad_sum):
                a, b = ctx.saved_tensors
                return (grad_product * b * ctx.scale + grad_sum,
                        grad_product * a * ctx.scale + grad_sum, None)
        return ScaledProduct

    results = []
    for lib in (kael, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        product, total = make(lib).apply(a, b, 3.0)
        (product.sum() + (total * total).sum()).backward()
        results.append((product, a.grad, b.grad))
    for k, t in zip(*results):
        same(k, t, rtol=1e-6)


def test_tensor_methods_match_torch():
    data = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    k, t = kael.tensor(data), torch.tensor(data)
    assert k.shape == t.shape == kael.Size([3, 4]) and kael.Size([3, 4]).numel() == 12
    assert k.nelement() == t.nelement() and kael.numel(k) == torch.numel(t)
    assert kael.is_tensor(k) and not kael.is_tensor(data)
    same(k.mm(k.T), t.mm(t.T))
    same(kael.bmm(k[None], k.T[None]), torch.bmm(t[None], t.T[None]))
    same(kael.addmm(k[0], k.T, k, beta=0.5, alpha=2), torch.addmm(t[0], t.T, t, beta=0.5,
                                                                  alpha=2))
    same(k.masked_select(k > 2), t.masked_select(t > 2))
    assert kael.equal(k, k.clone()) and not kael.equal(k, k[:2])
    assert k.new_zeros((2, 2)).tolist() == t.new_zeros((2, 2)).tolist()
    assert k.new_ones(3).dtype == kael.float32 and k.new_full((2,), 7.0).tolist() == [7.0, 7.0]
    assert k.new_empty(2, 3).shape == (2, 3) and k.new_tensor([1, 2]).dtype == kael.float32
    assert k.type() == "kael.FloatTensor" and k.type(kael.float64).dtype == kael.float64
    assert k.type("torch.LongTensor").dtype == kael.int64
    assert k.type_as(kael.zeros(1, dtype=kael.int64)).dtype == kael.int64
    same(kael.isclose(k, k + 1e-6), torch.isclose(t, t + 1e-6))
    nan = kael.tensor([float("nan"), 1.0])
    assert kael.isclose(nan, nan, equal_nan=True).tolist() == [True, True]
    assert f"{k.sum():.3f}" == f"{t.sum():.3f}" and str(k[0, 0]) == str(t[0, 0])
    assert int(kael.tensor([True, False])[0]) == 1 and kael.bool == kael.bool_
    detached = k.data
    assert not detached.requires_grad and detached.tolist() == data.tolist()
    w = kael.zeros(2, requires_grad=True)
    w.data = kael.tensor([1.0, 2.0])
    assert w.tolist() == [1.0, 2.0] and w.requires_grad


def test_factories_match_torch():
    kael.manual_seed(0)
    draws = kael.randint(10, (1000,))
    assert draws.shape == (1000,) and 0 <= draws.min().item() and draws.max().item() == 9
    assert kael.randint(3, (2,), dtype=kael.int64).dtype == kael.int64
    cond = kael.tensor([True, False])
    picked = kael.where(cond, 1.0, 0.0)
    assert picked.dtype == kael.float32 and picked.tolist() == torch.where(
        torch.tensor([True, False]), 1.0, 0.0).tolist()
    assert kael.where(cond, 2, 3).dtype == kael.int64
    assert kael.FloatTensor([1, 2]).dtype == kael.float32
    assert kael.LongTensor([1, 2]).tolist() == torch.LongTensor([1, 2]).tolist()
    assert kael.FloatTensor(2, 3).shape == (2, 3)
    # torch.Tensor: sizes, or data copied as float32 (the default dtype).
    for args in [(2, 3), (4,), ()]:
        assert kael.Tensor(*args).shape == tuple(torch.Tensor(*args).shape)
        assert kael.Tensor(*args).dtype == kael.float32
    for data in [[1, 2], [True, False], [[1.5], [2.5]]]:
        assert kael.Tensor(data).dtype == kael.float32
        assert kael.Tensor(data).tolist() == torch.Tensor(data).tolist()
    with pytest.raises(ValueError):
        kael.Tensor(-1)
    with pytest.raises(TypeError):
        kael.Tensor([1], [2])
    values = [1.7, -2.5, 3.0]
    assert kael.tensor(values).int().tolist() == torch.tensor(values).int().tolist()
    x = kael.ones(2)
    assert not x.is_pinned()  # pin_memory itself: test_pinned_memory.py


def test_a_module_in_a_reference_cycle_does_not_stop_the_interpreter_finalizing(tmp_path):
    """minGPT keeps `self.mlpf = lambda x: m.c_proj(...)` on a module: a cycle through the
    module's globals. Python must still finalize at exit, flushing the files left open."""
    import subprocess
    import sys
    script = tmp_path / "cycle.py"
    out = tmp_path / "out.txt"
    script.write_text(
        "import kael\n"
        f"log = open({str(out)!r}, 'w')\n"
        "log.write('flushed at exit')\n"
        "class Block(kael.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.child = kael.nn.Linear(2, 2)\n"
        "        child = self.child\n"
        "        self.run = lambda x: child(x)\n"
        "block = Block()\n"
        "plain = kael.nn.Module()\n"
        "plain.head = kael.nn.Linear(2, 1)\n"
        "assert isinstance(plain.head, kael.nn.Linear)\n")
    subprocess.run([sys.executable, str(script)], check=True, timeout=120)
    assert out.read_text() == "flushed at exit"


def test_default_dtype():
    assert kael.get_default_dtype() == kael.float32 and torch.get_default_dtype() == torch.float32
    kael.set_default_dtype(kael.float32)
    with pytest.raises(NotImplementedError, match="float32"):
        kael.set_default_dtype(kael.float64)


def test_compile_on_cpu_runs_eagerly_and_says_why_once():
    import warnings
    layer = kael.nn.Linear(2, 2)
    compiled = kael.compile(layer, mode="reduce-overhead")
    # the same module (a new Python handle): its parameters are shared
    assert compiled.weight.tolist() == layer.weight.tolist()
    with kael.no_grad():
        layer.weight.fill_(0.5)
    assert compiled._orig_mod.weight.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]  # as torch's
    with warnings.catch_warnings(record=True) as caught, kael.no_grad():
        warnings.simplefilter("always")
        for _ in range(3):
            assert compiled(kael.ones(1, 2)).tolist() == layer(kael.ones(1, 2)).tolist()
    assert len([w for w in caught if "eagerly" in str(w.message)]) == 1
    assert "records no device graphs" in compiled.reason

    @kael.compile(dynamic=False)
    def double(x):
        return x * 2
    assert double(kael.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="fullgraph=True.*records no device graphs"):
        kael.compile(layer, fullgraph=True)(kael.ones(1, 2))
    assert kael.compile(layer, disable=True) is layer


def test_layer_norm_shapes_affine_and_bias_match_torch():
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    for shape, affine in ((4, True), ((3, 4), True), ((4,), False), ((3, 4), False)):
        t = torch.nn.LayerNorm(shape, elementwise_affine=affine)
        k = kael.nn.LayerNorm(shape, elementwise_affine=affine)
        assert repr(k) == repr(t)
        assert k.normalized_shape == t.normalized_shape
        assert sorted(k.state_dict()) == sorted(t.state_dict())
        if affine:
            with torch.no_grad():
                t.weight.uniform_()
                t.bias.uniform_()
            k.load_state_dict({n: kael.tensor(v.numpy()) for n, v in t.state_dict().items()})
        same(k(kael.tensor(x)), t(torch.tensor(x)), rtol=1e-5, atol=1e-5)
    # bias=False (torch 2.1's): a weight alone, the bias None, as torch's functional form.
    k = kael.nn.LayerNorm(4, bias=False)
    assert k.bias is None and [n for n, _ in k.named_parameters()] == ["weight"]
    with kael.no_grad():
        k.weight.copy_(kael.tensor([0.5, 1.0, 2.0, -1.0]))
    expected = torch.nn.functional.layer_norm(torch.tensor(x), (4,),
                                              torch.tensor([0.5, 1.0, 2.0, -1.0]), None)
    same(k(kael.tensor(x)), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="LayerNorm: normalized_shape"):
        kael.nn.LayerNorm(())


def test_moments_outer_and_dtype_queries_match_torch():
    x = np.random.default_rng(4).standard_normal((3, 5)).astype(np.float32)
    k, t = kael.tensor(x), torch.tensor(x)
    for name in ("std_mean", "var_mean"):
        for args, kwargs in (((), {}), ((1,), {}), ((1,), {"keepdim": True}),
                             ((0,), {"unbiased": False}), ((False,), {}),
                             ((1,), {"correction": 0})):
            if "correction" in kwargs and torch.__version__ < "2":
                continue  # torch 1.13's std_mean has no correction keyword
            for ours, theirs in zip(getattr(kael, name)(k, *args, **kwargs),
                                    getattr(torch, name)(t, *args, **kwargs)):
                same(ours, theirs, rtol=1e-5, atol=1e-6)
    same(kael.var_mean(k, 1, correction=0)[0], t.var(1, unbiased=False), rtol=1e-5)
    for method in ("var", "std"):
        same(getattr(k, method)(1, unbiased=False), getattr(t, method)(1, unbiased=False),
             rtol=1e-5)
        same(getattr(k, method)(False), getattr(t, method)(False), rtol=1e-5)
    a, b = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32) + 1
    same(kael.outer(kael.tensor(a), kael.tensor(b)), torch.outer(torch.tensor(a), torch.tensor(b)))
    same(kael.tensor(a).outer(kael.tensor(b)), torch.ger(torch.tensor(a), torch.tensor(b)))
    with pytest.raises(ValueError, match="outer: expected 1-D"):
        kael.outer(kael.ones(2, 2), kael.ones(2))
    for dtype in ("float32", "float64", "bfloat16", "float16", "int64", "int32", "bool"):
        ours, theirs = kael.zeros(2, dtype=getattr(kael, dtype)), \
            torch.zeros(2, dtype=getattr(torch, dtype))
        assert ours.is_floating_point() == theirs.is_floating_point() == \
            kael.is_floating_point(ours)
    assert kael.backends.mps.is_available() is torch.backends.mps.is_available() is False
