"""Construction, host conversions, views, indexing, repr."""
import numpy as np
import pytest
import torch

import kael

ALL_DTYPES = [(kael.float32, np.float32), (kael.float64, np.float64),
              (kael.int64, np.int64), (kael.bool_, np.bool_)]


def test_from_nested_lists_infers_shape_and_dtype():
    assert kael.tensor([[1, 2, 3], [4, 5, 6]]).shape == (2, 3)
    assert kael.tensor([[1, 2], [3, 4]]).dtype == kael.int64
    assert kael.tensor([1, 2.5]).dtype == kael.float32
    assert kael.tensor([True, False]).dtype == kael.bool_
    assert kael.tensor([True, 2]).dtype == kael.int64
    assert kael.tensor([]).shape == (0,)
    assert kael.tensor([[], []]).shape == (2, 0)
    assert kael.tensor([1, 2], dtype="f64").dtype == kael.float64
    assert kael.tensor([1.7, -1.7], dtype=kael.int64).tolist() == [1, -1]


def test_from_python_scalars_is_zero_dimensional():
    for value, dtype in [(3.5, kael.float32), (7, kael.int64), (True, kael.bool_)]:
        t = kael.tensor(value)
        assert t.shape == () and t.ndim == 0 and t.dtype == dtype and t.item() == value
    assert kael.tensor(2 ** 62).item() == 2 ** 62  # int64 keeps every bit


def test_ragged_and_bad_elements_are_rejected():
    with pytest.raises(ValueError, match="ragged"):
        kael.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        kael.tensor(["a", "b"])


@pytest.mark.parametrize("kael_dtype,numpy_dtype", ALL_DTYPES)
def test_numpy_round_trip_in_every_dtype(kael_dtype, numpy_dtype):
    source = (np.arange(12).reshape(3, 4) % 3).astype(numpy_dtype)
    t = kael.tensor(source)
    assert t.dtype == kael_dtype and t.shape == (3, 4)
    back = t.numpy()
    assert back.dtype == numpy_dtype
    np.testing.assert_array_equal(back, source)
    np.testing.assert_array_equal(np.asarray(t), source)
    source[0, 0] = 1  # a copy: the tensor does not follow
    assert t[0, 0].item() == 0


def test_numpy_conversions_of_other_dtypes_and_layouts():
    assert kael.tensor(np.arange(4, dtype=np.int32)).dtype == kael.int32
    assert kael.tensor(np.arange(4, dtype=np.uint32)).dtype == kael.int64  # holds every value
    assert kael.tensor(np.ones(2, dtype=np.float16)).dtype == kael.float16
    strided = np.arange(20.0).reshape(4, 5)[::2, 1::2]
    np.testing.assert_array_equal(kael.tensor(strided).numpy(), strided)
    np.testing.assert_array_equal(kael.arange(6).view(2, 3).T.numpy(), np.arange(6).reshape(2, 3).T)
    assert kael.tensor(np.float32(2.5)).item() == 2.5
    with pytest.raises(TypeError):
        kael.tensor(np.array([1 + 2j]))


def test_properties():
    t = kael.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(1) == 3
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.dtype == kael.float32 and t.device == kael.device("cpu") and t.device == "cpu"
    assert t.stride() == (12, 4, 1) and t.is_contiguous() and not t.is_cuda
    assert t.itemsize == 4 and t.nbytes == 96
    with pytest.raises(TypeError):
        len(kael.tensor(1.0))


def test_tolist_item_and_conversions():
    t = kael.tensor([[1, 2], [3, 4]])
    assert t.tolist() == [[1, 2], [3, 4]]
    assert t[1, 0].item() == 3 and isinstance(t[1, 0].item(), int)
    assert float(kael.tensor([2.5])) == 2.5 and int(kael.tensor(-2.7)) == -2
    assert bool(kael.tensor(True)) and not bool(kael.tensor(0.0))
    assert [10, 20, 30][kael.tensor(1)] == 20
    with pytest.raises(ValueError):
        bool(kael.ones(2))
    with pytest.raises(ValueError):
        kael.ones(2).item()


def test_views_share_storage():
    base = kael.arange(12, dtype=kael.float32)
    for view in [base.view(3, 4), base.view((3, 4)), base.reshape(2, 6), base.view(3, 4).T,
                 base.view(3, 4).transpose(0, 1), base.view(2, 2, 3).permute(2, 0, 1),
                 base.unsqueeze(0), base.view(1, 12).squeeze(), base.view(1, 12).squeeze(0),
                 base[2:5], base.view(3, 4)[:, ::2]]:
        assert view.data_ptr() >= base.data_ptr()
    v = base.view(3, 4)
    v[1, 1] = 100.0
    assert base[5].item() == 100.0
    assert base.view(1, 12).expand(3, -1).shape == (3, 12)
    assert base.view(3, 4).T.contiguous().is_contiguous()
    c = base.clone()
    c[0] = -1
    assert base[0].item() == 0
    assert base.flatten().shape == (12,) and base.view(-1, 6).shape == (2, 6)


def test_getitem_ints_slices_steps_negative_none_ellipsis():
    n = np.arange(60).reshape(3, 4, 5)
    t = kael.tensor(n)
    keys = [0, -1, (1, 2), (-1, -2, -3), slice(1, None), (slice(None), slice(None, None, 2)),
            (slice(None), 1, slice(1, 4, 2)), (Ellipsis, 2), (None, 1), (0, None, Ellipsis, 1),
            (slice(-3, -1), slice(None), slice(None, None, 3)), (slice(5, 10),)]
    for key in keys:
        np.testing.assert_array_equal(t[key].numpy(), n[key], err_msg=str(key))
    np.testing.assert_array_equal(t[[2, 0]].numpy(), n[[2, 0]])
    np.testing.assert_array_equal(t[:, kael.tensor([3, 1])].numpy(), n[:, [3, 1]])
    np.testing.assert_array_equal(t[t > 50].numpy(), n[n > 50])
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError):
        t[::-1]


def test_setitem_writes_through_views():
    n = np.zeros((3, 4), dtype=np.float32)
    t = kael.zeros(3, 4)
    for key, value in [((0, 1), 5.0), ((slice(None), 2), 7.0), ((1,), [1.0, 2.0, 3.0, 4.0]),
                       ((slice(1, 3), slice(None, None, 2)), -1.0)]:
        t[key] = kael.tensor(value) if isinstance(value, list) else value
        n[key] = value
    np.testing.assert_array_equal(t.numpy(), n)
    t[t < 0] = 9.0
    n[n < 0] = 9.0
    np.testing.assert_array_equal(t.numpy(), n)
    t[[0, 1]] = 1.0  # index-list assignment writes (python/tests/test_indexing.py)
    n[[0, 1]] = 1.0
    np.testing.assert_array_equal(t.numpy(), n)


def test_to_dtype_and_device_conversions():
    t = kael.tensor([1.5, -2.5])
    assert t.to(kael.int64).tolist() == [1, -2]
    assert t.to("f64").dtype == kael.float64 and t.to(np.float64).dtype == kael.float64
    assert t.to("cpu") is not None and t.to(kael.device("cpu")).device == "cpu"
    assert t.to(device="cpu", dtype="bool").dtype == kael.bool_
    assert t.double().dtype == kael.float64 and t.long().dtype == kael.int64
    assert t.cpu().tolist() == [1.5, -2.5] and t.detach().requires_grad is False


def test_repr():
    assert repr(kael.tensor([[1., 2.]])) == "kael.tensor([[1., 2.]])"
    assert repr(kael.tensor([1, 2])) == "kael.tensor([1, 2])"
    assert repr(kael.tensor([0.5, -1.25])) == "kael.tensor([ 0.5000, -1.2500])"
    assert repr(kael.tensor(3.0)) == "kael.tensor(3.)"
    assert repr(kael.tensor([True])) == "kael.tensor([True])"
    assert repr(kael.zeros(2, 2, dtype="f64")) == (
        "kael.tensor([[0., 0.],\n             [0., 0.]], dtype=kael.float64)")
    assert repr(kael.ones(2, requires_grad=True)) == "kael.tensor([1., 1.], requires_grad=True)"
    assert "grad_fn=<" in repr(kael.ones(2, requires_grad=True) * 2)
    assert "..." in repr(kael.zeros(100, 100))
    assert repr(kael.zeros(2, 0)) == "kael.tensor([], size=(2, 0))"
    assert repr(kael.tensor([1e-6, 1.0])) == "kael.tensor([1.0000e-06, 1.0000e+00])"
    # str as print shows a torch tensor
    assert str(kael.tensor([1e-6, 1.0])) == "tensor([1.0000e-06, 1.0000e+00])"
    assert str(kael.tensor(1.5)) == str(torch.tensor(1.5))


def test_repr_on_device(device):
    text = repr(kael.tensor([[1., 2.]], device=device))
    assert text == ("kael.tensor([[1., 2.]])" if device == "cpu"
                    else f"kael.tensor([[1., 2.]], device='{device}')")


def test_factories():
    assert kael.zeros((2, 3)).tolist() == [[0.0] * 3] * 2
    assert kael.ones(2, dtype=kael.int64).tolist() == [1, 1]
    assert kael.full((2,), 7).dtype == kael.int64 and kael.full((2,), 7.5).tolist() == [7.5, 7.5]
    assert kael.full(3, True).dtype == kael.bool_
    assert kael.arange(5).tolist() == [0, 1, 2, 3, 4] and kael.arange(5).dtype == kael.int64
    assert kael.arange(1, 2, 0.5).tolist() == [1.0, 1.5]
    assert kael.empty(2, 3).shape == (2, 3)
    kael.manual_seed(7)
    a = kael.rand(3)
    kael.manual_seed(7)
    assert kael.rand(3).tolist() == a.tolist()
    r = kael.randint(0, 5, (100,))
    assert r.dtype == kael.int64 and 0 <= r.min().item() and r.max().item() < 5
    assert kael.randn(2, 2, dtype=kael.float64).dtype == kael.float64
    like = kael.zeros_like(kael.ones(2, 3, dtype="f64"))
    assert like.shape == (2, 3) and like.dtype == kael.float64
    assert kael.full_like(kael.ones(2), 3.0).tolist() == [3.0, 3.0]
    assert kael.ones_like(kael.ones(2)).tolist() == [1.0, 1.0]


def test_dtypes_and_devices():
    assert kael.float32.itemsize == 4 and kael.int64.name == "i64"
    assert kael.float64.is_floating_point and not kael.bool_.is_floating_point
    assert kael.zeros(1, dtype="bool").dtype == kael.bool_
    assert kael.zeros(1, dtype="int64").dtype == kael.int64
    assert kael.promote_types("i64", "f32") == kael.float32
    # Device types are what the loaded plugins declare: cuda only where a plugin serves it.
    kind = "cuda" if "cuda" in kael.registered_device_types() else "cpu"
    d = kael.device(f"{kind}:1")
    assert d.type == kind and d.index == 1 and str(d) == f"{kind}:1"
    assert repr(d) == f"device(type='{kind}', index=1)"
    assert d == kael.device(kind, 1) and d == f"{kind}:1" and d != "cpu:0"
    assert kael.device(kind) == f"{kind}:0" and hash(d) == hash(kael.device(f"{kind}:1"))
    with pytest.raises(ValueError, match="invalid device"):
        kael.device("tpu")
    with pytest.raises(ValueError, match="unknown dtype"):
        kael.zeros(1, dtype="f8")


def test_view_of_a_slice_where_the_strides_allow(device):
    x = kael.arange(24, device=device).reshape(2, 12)
    q = x[:, 4:8]  # strides (12, 1): its last dim splits without a copy, as in PyTorch
    v = q.view(2, 2, 2)
    assert v.tolist() == [[[4, 5], [6, 7]], [[16, 17], [18, 19]]]
    assert v.data_ptr() == q.data_ptr()
    with pytest.raises(ValueError, match="use reshape"):
        x.T.view(-1)
