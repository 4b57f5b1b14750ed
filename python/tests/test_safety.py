"""Issue 9 regressions reached from Python: views, 0-d tensors, rank limit, overlapping writes,
in-place casting rules, repeated dims, allclose and move_to_, on every device."""
import math

import pytest

import kael


def arange(n, device="cpu"):
    return kael.arange(0, n).float().to(device)


@pytest.mark.parametrize("shape, strides, offset, error", [
    ([100000], [-100], 0, ValueError),
    ([2, 2], [100000, -100000], 0, ValueError),
    ([3], [-1], 0, ValueError),
    ([1000], [1], -2000, ValueError),
    ([2], [2**62 - 1000000], 0, IndexError),
    ([3, 3], [2**62, 2**62], 0, ValueError),
    ([-2], [1], 0, ValueError),
    ([5], [1], 0, IndexError),
])
def test_as_strided_out_of_bounds(device, shape, strides, offset, error):
    a = arange(4, device)
    with pytest.raises(error, match="as_strided"):
        a.as_strided(shape, strides, offset)


def test_as_strided_inside_bounds(device):
    assert arange(4, device).as_strided([2, 2], [1, 1], 1).tolist() == [[1, 2], [2, 3]]


@pytest.mark.parametrize("call", [
    lambda t: t.size(0), lambda t: t.select(0, 0), lambda t: t.select(-1, 0),
    lambda t: t.slice(0, 0, 1, 1)])
def test_zero_d_has_no_dimensions(device, call):
    with pytest.raises(IndexError, match="0-d"):
        call(kael.tensor(1.).to(device))


def test_rank_limit(device):
    with pytest.raises(ValueError, match="64"):
        kael.ones(1).to(device).view(*[1] * 100000)
    assert kael.ones(1).to(device).view(*[1] * 64).sum().item() == 1


def test_arange_errors_name_arange():
    for args in [(0, math.inf), (0, 1, 1e-300), (0.0, float(2**62))]:
        with pytest.raises((ValueError, MemoryError), match="arange"):
            kael.arange(*args)


def test_overlapping_copies(device):
    a = arange(6, device)
    a[1:] = a[:-1]
    assert a.tolist() == [0, 0, 1, 2, 3, 4]
    b = arange(6, device)
    b[:-1].copy_(b[1:])
    assert b.tolist() == [1, 2, 3, 4, 5, 5]
    m = arange(4, device).view(2, 2)
    m += m.T
    assert m.tolist() == [[0, 3], [3, 6]]


def test_expanded_output_is_refused(device):
    e = kael.zeros(1).to(device).expand(4)
    with pytest.raises(ValueError, match=r"\+=.*single memory location"):
        e += kael.tensor([1., 2, 3, 4]).to(device)
    with pytest.raises(ValueError, match="fill_"):
        e.fill_(1.)
    with pytest.raises(ValueError, match="masked_fill_"):
        e.masked_fill_(kael.tensor([True]).to(device), 2.)


def test_in_place_integer_true_division(device):
    a = kael.tensor([5]).to(device)
    with pytest.raises(TypeError, match="/=.*can't be cast"):
        a /= 2
    with pytest.raises(TypeError, match="/="):
        a /= 0
    with pytest.raises(TypeError, match=r"\+="):
        a += 1.5
    assert a.tolist() == [5]
    a += 2
    assert a.tolist() == [7]


def test_integer_negative_power(device):
    with pytest.raises(ValueError, match="negative integer powers"):
        kael.tensor([0]).to(device) ** -1
    assert (kael.tensor([3]).to(device) ** 2).tolist() == [9]


def test_repeated_dims(device):
    x = kael.ones(2, 3).to(device)
    with pytest.raises(ValueError, match="multiple times"):
        x.sum(dim=(0, 0))
    with pytest.raises(ValueError, match=r"\[2, 3\]"):
        x.mean(dim=(1, -1))
    assert x.sum(dim=(0, 1)).item() == 6


def test_allclose(device):
    nan = kael.tensor(float("nan")).to(device)
    assert not kael.allclose(nan, nan)
    assert kael.allclose(nan, nan, equal_nan=True)
    assert kael.allclose(kael.ones(2, 3).to(device), kael.ones(3).to(device))
    with pytest.raises(ValueError, match="allclose"):
        kael.allclose(kael.ones(2).to(device), kael.ones(3).to(device))
    with pytest.raises(TypeError, match="allclose"):
        kael.allclose(kael.ones(2).to(device), kael.ones(2).double().to(device))


def test_move_to_moves_views(device):
    others = [d.device for d in kael.devices() if d.device != device]
    for other in others:
        x = arange(4, device)
        tail = x[2:]
        x.move_to_(other)
        assert str(tail.device) == other
        assert tail.tolist() == [2, 3]


def test_many_unmergeable_dims(device):
    x = arange(7776, device).view(2, 3, 2, 3, 2, 3, 2, 3, 2, 3)
    p = x.permute(9, 7, 5, 3, 1, 8, 6, 4, 2, 0)
    c = p.contiguous()
    assert c.is_contiguous()
    assert c.cpu().tolist() == p.cpu().tolist()
    assert p.sum().item() == x.sum().item()
    assert "kael.tensor" in repr(p)


def test_messages_name_the_op(device):
    x = kael.ones(2, 3).to(device)
    with pytest.raises(IndexError, match="softmax"):
        kael.softmax(x, 2)
