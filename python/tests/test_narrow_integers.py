"""int32, int16, int8 and uint8 against PyTorch 1.13: conversions, promotion, wrapping
arithmetic, reductions, factories, indexing, interchange (numpy, DLPack, safetensors, torch.save)
and printing, on every device. kael stores them narrow and computes them in int64, narrowing each
result once, which gives PyTorch's two's complement results."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import kael

NARROW = [(kael.int32, torch.int32), (kael.int16, torch.int16), (kael.int8, torch.int8),
          (kael.uint8, torch.uint8)]
ALL = NARROW + [(kael.int64, torch.int64), (kael.float32, torch.float32),
                (kael.float64, torch.float64), (kael.bool_, torch.bool),
                (kael.bfloat16, torch.bfloat16), (kael.float16, torch.float16)]
NUMPY = {kael.int32: np.int32, kael.int16: np.int16, kael.int8: np.int8, kael.uint8: np.uint8}


def integers(seed=0, count=300):
    """int64 values around every narrow type's edges, and random ones of every size."""
    generator = np.random.default_rng(seed)
    edges = []
    for bits in (8, 16, 32):
        for edge in (2 ** (bits - 1), 2 ** bits):
            edges += [edge - 1, edge, edge + 1, -edge, -edge - 1, -edge + 1]
    scale = 10.0 ** generator.uniform(0, 11, count)
    random = (generator.standard_normal(count) * scale).astype(np.int64)
    return np.concatenate([np.array(edges + [0, 1, -1], dtype=np.int64), random])


def same(got, want):
    """kael result equals the torch one: dtype, shape and every value."""
    assert repr(got.dtype).split(".")[1] == str(want.dtype).split(".")[1].replace("bool", "bool_")
    assert tuple(got.shape) == tuple(want.shape)
    assert got.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("narrow", NARROW)
@pytest.mark.parametrize("other", ALL)
def test_conversions_between_every_pair_match_torch(device, narrow, other):
    data = integers()
    source = torch.tensor(data).to(narrow[1])  # wraps, as torch's int64 -> narrow conversion
    got = kael.tensor(data, device=device).to(narrow[0])
    same(got, source)
    same(got.to(other[0]), source.to(other[1]))
    if other[0] in (kael.float32, kael.float64, kael.bfloat16, kael.float16):
        # floats to narrow integers: truncated toward zero (in range; beyond, C++ is undefined)
        floats = torch.tensor(np.linspace(-120.7, 120.7, 97)).to(other[1])
        same(kael.tensor(floats.double().numpy(), device=device).to(other[0]).to(narrow[0]),
             floats.to(narrow[1]))
    else:
        wide = torch.tensor(data).to(other[1])
        same(kael.tensor(data, device=device).to(other[0]).to(narrow[0]), wide.to(narrow[1]))


def test_promotion_matches_torch_for_every_pair():
    for a, ta in ALL:
        for b, tb in ALL:
            want = torch.promote_types(ta, tb)
            assert repr(kael.promote_types(a, b)).split(".")[1] == \
                str(want).split(".")[1].replace("bool", "bool_"), (a, b)


BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
          "floordiv": lambda x, y: x // y, "remainder": lambda x, y: x % y,
          "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
          "eq": lambda x, y: x == y, "lt": lambda x, y: x < y, "maximum": None,
          "truediv": lambda x, y: x / y}


@pytest.mark.parametrize("narrow", NARROW)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_wrap_as_torch(device, narrow, name):
    data = integers(1, 64)
    a = torch.tensor(data).to(narrow[1])
    b = torch.tensor(data[::-1].copy()).to(narrow[1])
    if name in ("floordiv", "remainder"):
        b = torch.where(b == 0, torch.ones_like(b), b)
        if narrow[0] != kael.uint8:  # INT_MIN // -1 overflows (torch's x86 result traps)
            b = torch.where(b == -1, torch.full_like(b, 3), b)
    ka = kael.tensor(a.tolist(), dtype=narrow[0], device=device)
    kb = kael.tensor(b.tolist(), dtype=narrow[0], device=device)
    if name == "maximum":
        same(kael.maximum(ka, kb), torch.maximum(a, b))
        return
    op = BINARY[name]
    if name == "truediv":
        got, want = op(ka, kb), op(a, b.double().masked_fill(b == 0, 1).to(narrow[1]))
        kb = kael.tensor(want.tolist(), device=device)  # only dtype and finite values matter
        assert got.dtype == kael.float32
        return
    same(op(ka, kb), op(a, b))
    same(op(ka, 3), op(a, 3))  # a Python int keeps the narrow dtype
    same(op(ka, kael.tensor(3, device=device)), op(a, torch.tensor(3)))  # 0-d int64: too


@pytest.mark.parametrize("narrow", NARROW)
def test_unary_ops_scalars_and_shifts_wrap_as_torch(device, narrow):
    a = torch.tensor(integers(2, 64)).to(narrow[1])
    ka = kael.tensor(a.tolist(), dtype=narrow[0], device=device)
    same(-ka, -a)
    same(ka.abs(), a.abs())
    same(ka.sign(), a.sign())
    same(~ka, ~a)
    same(ka + 300, a + 300)  # the scalar wraps into the dtype first, as torch's
    same(ka * 7, a * 7)
    same(ka << 3, a << 3)
    same(ka >> 2, a >> 2)
    same(ka.clamp(5, 90), a.clamp(5, 90))
    same(ka + 1.5, a + 1.5)  # a float gives the default float dtype
    same(ka ** 2, a ** 2)
    same(ka.float(), a.float())
    same(kael.where(ka > 10, ka, 5), torch.where(a > 10, a, torch.tensor(5, dtype=a.dtype)))


@pytest.mark.parametrize("narrow", NARROW)
def test_reductions_give_torch_dtypes_and_values(device, narrow):
    a = torch.tensor(integers(3, 60)[:60]).to(narrow[1]).reshape(3, 4, 5)
    ka = kael.tensor(a.tolist(), dtype=narrow[0], device=device)
    same(ka.sum(), a.sum())  # int64, and no wrap
    same(ka.sum(dim=1), a.sum(dim=1))
    same(ka.sum(dim=(0, 2), keepdim=True), a.sum(dim=(0, 2), keepdim=True))
    same(ka.sum(dtype=narrow[0]), a.sum(dtype=narrow[1]))
    same(ka.prod(dim=2), a.prod(dim=2))
    same(ka.cumsum(1), a.cumsum(1))
    same(ka.amax(dim=0), a.amax(dim=0))
    same(ka.amin(), a.amin())
    values, indices = ka.max(dim=2)
    want = a.max(dim=2)
    same(values, want.values)
    same(indices, want.indices)
    same(ka.argmin(dim=1), a.argmin(dim=1))
    same(ka.sort(dim=2).values, a.sort(dim=2).values)
    same(ka.float().mean(), a.float().mean())
    with pytest.raises(TypeError, match="mean"):
        ka.mean()


@pytest.mark.parametrize("narrow", NARROW)
def test_factories_and_their_range_checks(device, narrow):
    kd, td = narrow
    same(kael.zeros(2, 3, dtype=kd, device=device), torch.zeros(2, 3, dtype=td))
    same(kael.ones(4, dtype=kd, device=device), torch.ones(4, dtype=td))
    same(kael.full((2,), 100, dtype=kd, device=device), torch.full((2,), 100, dtype=td))
    same(kael.arange(5, dtype=kd, device=device), torch.arange(5, dtype=td))
    drawn = kael.randint(0, 100, (50,), dtype=kd, device=device)
    assert drawn.dtype == kd and 0 <= drawn.min().item() and drawn.max().item() < 100
    beyond = torch.iinfo(td).max + 1
    with pytest.raises(ValueError, match="without overflow"):
        kael.full((1,), beyond, dtype=kd)
    with pytest.raises(OverflowError, match="without overflow"):
        kael.tensor([beyond, 1], dtype=kd)
    info, want = kael.iinfo(kd), torch.iinfo(td)
    assert (info.bits, info.min, info.max, info.dtype) == (want.bits, want.min, want.max,
                                                           want.dtype)
    assert kd.is_signed == td.is_signed and not kd.is_floating_point
    assert kd.itemsize == torch.tensor([], dtype=td).element_size()


def test_dtype_names_conversions_and_legacy_types():
    assert (kael.int, kael.short) == (kael.int32, kael.int16)
    x = kael.tensor([1.7, -2.5, 300.0])
    assert [x.int().dtype, x.short().dtype, x.char().dtype, x.byte().dtype] == \
        [kael.int32, kael.int16, kael.int8, kael.uint8]
    assert x.char().tolist() == torch.tensor([1.7, -2.5, 300.0]).char().tolist()
    assert kael.IntTensor([1, 2]).dtype == kael.int32
    assert kael.ByteTensor(2, 3).dtype == kael.uint8
    assert x.int().type() == "kael.IntTensor"
    assert x.type("torch.CharTensor").dtype == kael.int8
    assert repr(kael.int8) == "kael.int8" and kael.uint8.name == "u8"
    assert pickle.loads(pickle.dumps(kael.int16)) == kael.int16


def test_indexing_with_int32_and_uint8_as_torch_2(device):
    x = kael.arange(10.0, device=device)
    positions = kael.tensor([1, 7, -1], dtype=kael.int32, device=device)
    assert x[positions].tolist() == [1.0, 7.0, 9.0]
    assert x.index_select(0, kael.tensor([2, 3], dtype=kael.int32, device=device)).tolist() == \
        [2.0, 3.0]
    mask = kael.tensor([1, 0] * 5, dtype=kael.uint8, device=device)
    with pytest.warns(UserWarning, match="uint8 is deprecated"):
        assert x[mask].tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    with pytest.raises(TypeError, match="i64"):
        x.gather(0, kael.tensor([1], dtype=kael.int32, device=device))  # as torch's gather
    with pytest.raises(IndexError, match="int64, int32, uint8 or bool"):
        x[kael.tensor([1], dtype=kael.int16, device=device)]
    y = x.clone()
    y[positions] = 0.0
    assert y.tolist() == [0.0, 0.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0, 8.0, 0.0]


@pytest.mark.parametrize("narrow", NARROW)
def test_numpy_and_dlpack_both_ways(narrow):
    kd, td = narrow
    data = np.arange(-5, 7).astype(NUMPY[kd]).reshape(3, 4)
    t = kael.tensor(data)
    assert t.dtype == kd and t.tolist() == data.tolist()
    assert kael.from_numpy(data).dtype == kd
    assert t.numpy().dtype == data.dtype and (t.numpy() == data).all()
    shared = torch.from_dlpack(t)  # zero copy: a write shows on the other side
    assert shared.dtype == td
    shared[0, 0] = 42
    assert t[0, 0].item() == 42
    back = kael.from_dlpack(shared)
    assert back.dtype == kd and back.tolist() == shared.tolist()
    assert kael.tensor(np.arange(3, dtype=np.uint16)).dtype == kael.int32  # holds every value


@pytest.mark.parametrize("narrow", NARROW)
def test_safetensors_and_torch_checkpoints_keep_the_dtype(tmp_path, narrow):
    kd, td = narrow
    t = kael.tensor(integers(4, 20), dtype=kael.int64).to(kd)
    kael.safetensors.save_file({"t": t}, str(tmp_path / "a.safetensors"))
    loaded = kael.safetensors.load_file(str(tmp_path / "a.safetensors"))["t"]
    assert loaded.dtype == kd and loaded.tolist() == t.tolist()
    kael.save({"t": t}, str(tmp_path / "k.pt"), format="torch")
    from_torch = torch.load(str(tmp_path / "k.pt"))["t"]
    assert from_torch.dtype == td and from_torch.tolist() == t.tolist()
    torch.save({"t": from_torch * 2}, str(tmp_path / "t.pt"))
    again = kael.load(str(tmp_path / "t.pt"))["t"]
    assert again.dtype == kd and again.tolist() == (from_torch * 2).tolist()


@pytest.mark.parametrize("narrow", NARROW)
def test_printing_matches_torch(narrow):
    kd, td = narrow
    data = [[1, -2, 3], [100, 0, -7]] if kd != kael.uint8 else [[1, 2, 3], [200, 0, 7]]
    assert str(kael.tensor(data, dtype=kd)) == str(torch.tensor(data, dtype=td)).replace(
        "torch.", "kael.")
    assert str(kael.tensor(5, dtype=kd)) == str(torch.tensor(5, dtype=td)).replace(
        "torch.", "kael.")


def test_a_plugin_without_narrow_integers_gets_them_through_counted_copies(device):
    """The emulated cuda:0 takes them (KAEL_DTYPE_FLAG_NARROW_INT): nothing falls back there."""
    kael.reset_fallback_counts()
    a = kael.tensor([120, -3], dtype=kael.int8, device=device)
    assert (a + a).tolist() == [-16, -6]
    assert (a * 2).sum().item() == -22
    if device != "cpu":
        assert kael.fallback_counts() == {}, kael.fallback_counts()


def test_narrow_integers_take_no_gradient():
    with pytest.raises(TypeError, match="only floating tensors can require grad"):
        kael.tensor([1, 2], dtype=kael.int8, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kael.tensor([1, 2], dtype=kael.int8).requires_grad_(False)


def test_zero_dim_tensors_promote_as_torch_result_type(device):
    """Dimensioned tensors decide the dtype unless a 0-d operand is of a higher category."""
    pairs = [(kael.int8, kael.int64), (kael.int32, kael.float64), (kael.bfloat16, kael.float32),
             (kael.float32, kael.float64), (kael.uint8, kael.int8), (kael.bool_, kael.int16),
             (kael.int16, kael.bool_), (kael.float16, kael.int64)]
    as_torch = dict(ALL)
    for dimensioned, zero_dim in pairs:
        a = kael.ones(3, dtype=dimensioned, device=device)
        b = kael.ones((), dtype=zero_dim, device=device)
        ta, tb = torch.ones(3, dtype=as_torch[dimensioned]), torch.ones((), dtype=as_torch[zero_dim])
        want = str(torch.result_type(ta, tb)).split(".")[1].replace("bool", "bool_")
        assert repr(kael.result_type(a, b)).split(".")[1] == want
        assert repr((a * b).dtype).split(".")[1] == want
        assert repr((b * a).dtype).split(".")[1] == want
        assert repr(kael.where(a > 0, a, b).dtype).split(".")[1] == want
    assert kael.result_type(kael.ones(2, dtype=kael.int8), 2.5) == kael.float32
