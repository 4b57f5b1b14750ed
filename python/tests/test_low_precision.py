"""bfloat16 and float16 against PyTorch 1.13: conversions bit for bit (round to nearest even, NaN
kept), promotion, interchange (numpy, DLPack, safetensors), and ops, which kael computes in
float32 and rounds once, as PyTorch does, on every device."""
import math

import numpy as np
import pytest
import torch

import kael

LOW = [(kael.bfloat16, torch.bfloat16), (kael.float16, torch.float16)]
ALL = [(kael.float32, torch.float32), (kael.float64, torch.float64), (kael.int64, torch.int64),
       (kael.bool_, torch.bool)] + LOW

# Values that exercise the rounding: ties, overflow, subnormals, signed zeros, NaN, infinities.
SPECIAL = [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.01171875, 1.0009765625, 1.0029296875, 65504.0,
           65519.99, 65520.0, 3.3895e38, 3.4e38, 6.0e-8, 2.98e-8, 2.9802322e-8, 5.96e-8, 1e-40,
           float("inf"), float("-inf"), float("nan"), 0.1, -2.5e-5, 12345.678, 1.5e-45]


def bits(tensor):
    """The stored 16 bits of a kael or torch low-precision tensor, as a list of ints; every NaN
    as "nan" (its sign and payload are not part of the rounding rule)."""
    if isinstance(tensor, kael.Tensor):
        tensor = torch.from_dlpack(tensor.cpu())
    infinity = 0x7F80 if tensor.dtype == torch.bfloat16 else 0x7C00
    return ["nan" if (b & 0x7FFF) > infinity else b
            for b in tensor.contiguous().view(torch.int16).flatten().tolist()]


def values(seed=0, count=4096):
    generator = np.random.default_rng(seed)
    scaled = generator.standard_normal(count) * np.exp(generator.uniform(-30, 30, count))
    return np.concatenate([np.array(SPECIAL), scaled]).astype(np.float32)


@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_rounding_from_float32_and_float64_matches_torch_bit_for_bit(kael_dtype, torch_dtype):
    data = values()
    assert bits(kael.tensor(data).to(kael_dtype)) == bits(torch.tensor(data).to(torch_dtype))
    wide = data.astype(np.float64) * (1 + 2 ** -30)  # off float32's grid: rounds through it
    assert bits(kael.tensor(wide).to(kael_dtype)) == bits(torch.tensor(wide).to(torch_dtype))


@pytest.mark.parametrize("low", LOW)
@pytest.mark.parametrize("other", ALL)
def test_conversions_between_every_pair_match_torch(low, other):
    data = np.concatenate([values(1, 512), [3.0, -7.0, 1e10, -1e19]]).astype(np.float32)
    if other[0] == kael.int64:  # past int64's range kael saturates, where torch's C++ is undefined
        rounded = torch.tensor(data).to(low[1]).float().numpy()
        data = data[np.abs(rounded) < 2.0 ** 62]
    source = torch.tensor(data).to(low[1])
    got = kael.tensor(data).to(low[0]).to(other[0])
    want = source.to(other[1])
    if other[0] in (kael.bfloat16, kael.float16):
        assert bits(got) == bits(want)
    else:
        np.testing.assert_array_equal(np.array(got.tolist()), np.array(want.tolist()))
    back = kael.tensor(want.tolist(), dtype=other[0]).to(low[0])  # the other way
    assert bits(back) == bits(want.to(low[1]))


def test_promotion_matches_torch():
    torch_of = {kd: td for kd, td in ALL}
    for kd, td in ALL:
        for ke, te in ALL:
            assert torch_of[kael.promote_types(kd, ke)] == torch.promote_types(td, te), (kd, ke)
    b = kael.ones(2, dtype=kael.bfloat16)
    h = kael.ones(2, dtype=kael.float16)
    assert (b + 1.5).dtype == kael.bfloat16 and (h * 2).dtype == kael.float16
    assert (b + h).dtype == kael.float32 and (b + kael.ones(2)).dtype == kael.float32
    assert (b + kael.tensor([1, 2])).dtype == kael.bfloat16 and (b < h).dtype == kael.bool_


def test_names_sizes_and_methods():
    assert kael.half == kael.float16 and kael.bfloat16.itemsize == 2
    assert kael.float16.is_floating_point and repr(kael.bfloat16) == "kael.bfloat16"
    assert kael.ones(3).half().dtype == kael.float16
    assert kael.ones(3).bfloat16().dtype == kael.bfloat16
    assert kael.zeros(2, dtype="bf16").dtype == kael.bfloat16
    assert kael.tensor([0.1], dtype=kael.float16).item() == float(np.float16(0.1))
    assert "dtype=kael.bfloat16" in repr(kael.ones(2, dtype=kael.bfloat16))


def test_numpy_float16_both_ways_and_bfloat16_refused():
    array = np.array([0.5, -2.0, 65504.0], dtype=np.float16)
    tensor = kael.tensor(array)
    assert tensor.dtype == kael.float16
    assert tensor.numpy().dtype == np.float16
    np.testing.assert_array_equal(tensor.numpy(), array)
    with pytest.raises(TypeError, match="bfloat16"):
        tensor.bfloat16().numpy()


def test_dlpack_shares_memory_with_torch_both_ways():
    source = torch.tensor([1.5, -2.25, 3.0], dtype=torch.bfloat16)
    shared = kael.from_dlpack(source)
    assert shared.dtype == kael.bfloat16
    source[0] = 7.0
    assert shared.tolist()[0] == 7.0
    half = kael.tensor([0.25, 4.0]).half()
    assert torch.from_dlpack(half).dtype == torch.float16


def test_safetensors_keep_low_precision_as_stored(tmp_path):
    data = values(2, 64)
    tensors = {"b": kael.tensor(data).bfloat16(), "h": kael.tensor(data).half()}
    path = str(tmp_path / "low.safetensors")
    kael.safetensors.save_file(tensors, path)
    loaded = kael.safetensors.load_file(path)
    for name, tensor in tensors.items():
        assert loaded[name].dtype == tensor.dtype and bits(loaded[name]) == bits(tensor)


UNARY = ["exp", "log", "sqrt", "tanh", "sigmoid", "neg", "abs", "sin", "relu", "floor"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]


def rounded_reference(function, *arrays, dtype):
    """function over float32 copies of low-precision torch tensors, rounded to dtype."""
    return function(*[a.float() for a in arrays]).to(dtype)


def assert_within_one_step(got, want):
    """Equal, or one step of the dtype apart (the f32 results of two libms may straddle a
    rounding boundary); NaN where the reference has NaN."""
    g = np.array(got.float().tolist(), dtype=np.float64)
    w = want.float().double().numpy()
    step = 2.0 ** -7 if got.dtype == kael.bfloat16 else 2.0 ** -10
    both_nan = np.isnan(g) & np.isnan(w)
    close = np.isclose(g, w, rtol=step, atol=0) | both_nan | (g == w)
    assert close.all(), (g[~close][:5], w[~close][:5])


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_unary_ops_are_computed_in_float32_and_rounded_once(name, kael_dtype, torch_dtype, device):
    data = np.random.default_rng(3).uniform(-4, 4, (17, 33)).astype(np.float32)
    source = torch.tensor(data).to(torch_dtype)
    x = kael.tensor(data, device=device).to(kael_dtype)
    got = getattr(kael, name)(x.t())  # transposed: a strided input
    assert got.dtype == kael_dtype and got.device == kael.device(device)
    reference = getattr(torch, name) if hasattr(torch, name) else getattr(torch.nn.functional, name)
    assert_within_one_step(got, rounded_reference(reference, source.t(), dtype=torch_dtype))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_binary_ops_match_torch_exactly(name, kael_dtype, torch_dtype, device):
    generator = np.random.default_rng(4)
    a = generator.uniform(-8, 8, (5, 1, 7)).astype(np.float32)
    b = generator.uniform(0.5, 8, (3, 7)).astype(np.float32)
    ta, tb = torch.tensor(a).to(torch_dtype), torch.tensor(b).to(torch_dtype)
    got = getattr(kael, name)(kael.tensor(a, device=device).to(kael_dtype),
                              kael.tensor(b, device=device).to(kael_dtype))  # broadcast
    want = rounded_reference(getattr(torch, name), ta, tb, dtype=torch_dtype)
    assert got.shape == tuple(want.shape) and bits(got) == bits(want)


@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_reductions_accumulate_in_float32(kael_dtype, torch_dtype, device):
    data = np.random.default_rng(5).uniform(-1, 1, (6, 50, 9)).astype(np.float32)
    source = torch.tensor(data).to(torch_dtype)
    x = kael.tensor(data, device=device).to(kael_dtype)
    for dim in (0, 1, 2, None):
        for op in ("sum", "mean", "amax"):
            kwargs = {} if dim is None else {"dim": dim}
            got = getattr(kael, op)(x, **kwargs)
            want = getattr(torch, op)(source.float(), **kwargs).to(torch_dtype)
            assert got.dtype == kael_dtype
            assert_within_one_step(got, want)
    values_, indices = kael.max(x, dim=1)
    assert values_.dtype == kael_dtype and indices.tolist() == torch.max(source, dim=1)[1].tolist()


@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_matmul_and_softmax_in_low_precision(kael_dtype, torch_dtype, device):
    generator = np.random.default_rng(6)
    a = generator.uniform(-1, 1, (8, 16)).astype(np.float32)
    b = generator.uniform(-1, 1, (16, 4)).astype(np.float32)
    ka = kael.tensor(a, device=device).to(kael_dtype)
    kb = kael.tensor(b, device=device).to(kael_dtype)
    ta, tb = torch.tensor(a).to(torch_dtype), torch.tensor(b).to(torch_dtype)
    assert_within_one_step(ka @ kb, rounded_reference(torch.matmul, ta, tb, dtype=torch_dtype))
    assert_within_one_step(kael.softmax(ka, 1),
                           torch.softmax(ta.float(), 1).to(torch_dtype))


@pytest.mark.parametrize("kael_dtype", [kael.bfloat16, kael.float16])
def test_autograd_gives_gradients_in_the_leaf_dtype(kael_dtype, device):
    x = kael.tensor([0.5, -1.25, 2.0], device=device).to(kael_dtype).requires_grad_()
    y = (x * x * 3.0).sum()
    y.backward()
    assert x.grad.dtype == kael_dtype
    assert x.grad.float().tolist() == [3.0, -7.5, 12.0]


@pytest.mark.parametrize("kael_dtype", [kael.bfloat16, kael.float16])
def test_in_place_ops_and_views_write_low_precision(kael_dtype, device):
    x = kael.zeros(4, 6, device=device, dtype=kael_dtype)
    x[:, 1::2] += 1.5  # a strided view, written in place
    x.t()[0].fill_(-2.0)
    expected = np.zeros((4, 6))
    expected[:, 1::2] += 1.5
    expected[:, 0] = -2.0
    np.testing.assert_array_equal(np.array(x.float().tolist()), expected)
    assert x.dtype == kael_dtype


def test_device_ops_stay_on_the_device(device):
    kael.reset_fallback_counts()
    x = kael.ones(64, device=device, dtype=kael.bfloat16)
    y = (kael.exp(x) * 2).sum()
    assert y.device == kael.device(device) and math.isclose(y.item(), 64 * 2 * math.e, rel_tol=1e-2)
    record = next(d for d in kael.devices() if d.device == str(kael.device(device)))
    if device == "cpu" or record.emulated:  # plugins that convert bf16 themselves
        assert kael.fallback_counts() == {}, kael.fallback_counts()


def test_module_to_dtype_converts_floating_parameters_in_place(device):
    model = kael.nn.Sequential(kael.nn.Linear(4, 3), kael.nn.LayerNorm(3)).to(device)
    weight = model[0].weight
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    assert model.bfloat16() is model
    assert weight.dtype == kael.bfloat16 and model[1].bias.dtype == kael.bfloat16
    x = kael.ones(2, 4, device=device, dtype=kael.bfloat16)
    loss = model(x).float().square().sum()
    loss.backward()
    assert weight.grad.dtype == kael.bfloat16
    optimizer.step()  # the optimizer's handles are the converted parameters
    model.to(device, kael.float32)
    assert weight.dtype == kael.float32 and weight.grad.dtype == kael.float32
    model.to(dtype=kael.float16)
    assert weight.dtype == kael.float16
    model.half().float()
    assert all(p.dtype == kael.float32 for p in model.parameters())
    with pytest.raises(TypeError, match="floating dtype"):
        model.to(kael.int64)


@pytest.mark.parametrize("kael_dtype", [kael.bfloat16, kael.float16])
def test_gpt_generates_with_its_cache_in_the_model_dtype(kael_dtype, device):
    kael.manual_seed(0)
    model = kael.nn.GPT(kael.nn.GPTConfig(vocab_size=16, block_size=8, layers=1, heads=2,
                                          embed=8), device=device).to(dtype=kael_dtype)
    prompt = [1, 2, 3]
    logits = model(kael.tensor([prompt], device=device))
    assert logits.dtype == kael_dtype
    generated = model.generate(prompt, 4)
    assert generated[:3] == prompt and all(0 <= t < 16 for t in generated)
    assert generated[3] == int(logits[0, -1].float().argmax().item())
    sampled = model.generate(prompt, 4, temperature=0.8, seed=1)
    assert len(sampled) == 7


TRANSCENDENTAL = ["exp", "log", "tanh", "sigmoid", "sin", "cos", "erf", "erfc", "log1p", "expm1",
                  "log2", "log10", "exp2", "silu", "gelu"]


def low_precision_function(name):
    if name in ("silu", "gelu"):
        return getattr(kael.nn.functional, name)
    return getattr(kael, name)


@pytest.mark.parametrize("name", TRANSCENDENTAL + ["relu", "neg", "abs"])
@pytest.mark.parametrize("kael_dtype", [kael.bfloat16, kael.float16])
def test_large_unary_ops_give_the_float32_result_rounded_once(name, kael_dtype, device):
    """Large enough for the cpu plugin's whole-run paths (tables, sign bits): every element of a
    contiguous run, the specials included, is the device's own float32 result rounded once, bit
    for bit, and stays so for small calls afterwards."""
    data = np.tile(values(seed=7, count=9000), 4)[: 1 << 15]
    x = kael.tensor(data, device=device).to(kael_dtype)
    function = low_precision_function(name)
    for part in (x, x[:1000]):
        got = function(part)
        assert got.dtype == kael_dtype
        assert bits(got) == bits(function(part.float()).to(kael_dtype))
    # Strided: elsewhere the f32 result may come from another libm (scalar, not vector): one step.
    strided = x[7:20000:3]
    assert_within_one_step(function(strided), torch.tensor(
        function(strided.float()).tolist()).to(to_torch_dtype(kael_dtype)))
    if name in ("relu", "neg", "abs"):  # sign-bit ops: torch's values too (relu(-0.0) aside)
        low = torch.tensor(data).to(to_torch_dtype(kael_dtype))  # exact ops: f32 is the same
        want = getattr(torch, name)(low.float()).to(low.dtype)
        got = np.array(function(x).float().tolist())
        assert np.array_equal(got, want.double().numpy(), equal_nan=True)


def to_torch_dtype(kael_dtype):
    return torch.bfloat16 if kael_dtype == kael.bfloat16 else torch.float16


@pytest.mark.parametrize("kael_dtype", [kael.bfloat16, kael.float16])
def test_reductions_over_every_dim_keep_the_first_nan_and_match_float32(kael_dtype, device):
    """sum, prod, amax, amin over rows and columns long enough for the vector paths (16-lane
    groups and their tails), with NaNs in some rows and columns: torch's float32 answer rounded
    once (amax/amin exactly), NaN where a NaN was reduced."""
    generator = np.random.default_rng(8)
    data = generator.uniform(0.5, 1.5, (3, 70, 83)).astype(np.float32)
    data[1, 5, 17] = data[2, 69, 80] = data[0, 0, 3] = np.nan
    data[0, 9, 40] = np.inf
    source = torch.tensor(data).to(to_torch_dtype(kael_dtype))
    x = kael.tensor(data, device=device).to(kael_dtype)
    for dim in (0, 1, 2):
        for op in ("sum", "prod", "amax", "amin"):
            got = getattr(kael, op)(x, dim=dim)
            want = getattr(torch, op)(source.float(), dim=dim).to(source.dtype)
            if op in ("amax", "amin"):
                assert bits(got) == bits(want), (op, dim)
            else:
                assert_within_one_step(got, want)
