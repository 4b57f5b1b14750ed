"""DLPack, zero-copy both ways: numpy here, PyTorch on a machine with a GPU and torch."""
import gc

import numpy as np
import pytest

import kael

KDL_CPU, KDL_CUDA = 1, 2


@pytest.mark.parametrize("numpy_dtype,kael_dtype", [(np.float32, kael.float32),
                                                     (np.float64, kael.float64),
                                                     (np.int64, kael.int64)])
def test_numpy_to_kael_shares_memory(numpy_dtype, kael_dtype):
    array = np.arange(12).reshape(3, 4).astype(numpy_dtype)
    t = kael.from_dlpack(array)
    assert t.dtype == kael_dtype and t.shape == (3, 4) and t.device == "cpu"
    assert t.data_ptr() == array.ctypes.data
    array[0, 1] = 42  # numpy writes, kael sees
    assert t[0, 1].item() == 42
    t[2, 3] = 7  # kael writes, numpy sees
    assert array[2, 3] == 7
    assert kael.from_numpy(array).data_ptr() == array.ctypes.data


def test_numpy_views_keep_their_strides():
    base = np.arange(24.0).reshape(4, 6)
    view = base[1:, ::2]
    t = kael.from_dlpack(view)
    assert t.stride() == (6, 2) and t.tolist() == view.tolist()
    t.fill_(-1.0)
    assert (base[1:, ::2] == -1).all() and base[0, 0] == 0
    with pytest.raises(ValueError, match="negative"):
        kael.from_dlpack(base[::-1])


def test_import_keeps_numpy_memory_alive():
    array = np.arange(1000.0)
    t = kael.from_dlpack(array)
    del array
    gc.collect()
    assert t.sum().item() == sum(range(1000))
    view = t[10:20]
    del t
    gc.collect()
    assert view.tolist() == [float(i) for i in range(10, 20)]


@pytest.mark.parametrize("kael_dtype,numpy_dtype", [(kael.float32, np.float32),
                                                     (kael.float64, np.float64),
                                                     (kael.int64, np.int64)])
def test_kael_to_numpy_shares_memory(kael_dtype, numpy_dtype):
    t = kael.arange(0, 12, dtype=kael_dtype).view(3, 4)
    assert t.__dlpack_device__() == (KDL_CPU, 0)
    array = np.from_dlpack(t)
    assert array.dtype == numpy_dtype and array.shape == (3, 4)
    assert array.ctypes.data == t.data_ptr()
    t[1, 2] = 99  # kael writes, numpy sees (numpy 1.24 makes DLPack imports read-only)
    assert array[1, 2] == 99
    transposed = np.from_dlpack(t.T)
    assert transposed.strides == (8 if numpy_dtype != np.float32 else 4,
                                  32 if numpy_dtype != np.float32 else 16)
    np.testing.assert_array_equal(transposed, array.T)


def test_export_keeps_kael_memory_alive():
    t = kael.arange(0, 100, dtype="f64")
    array = np.from_dlpack(t[50:])
    del t
    gc.collect()
    np.testing.assert_array_equal(array, np.arange(50.0, 100.0))


def test_capsules_are_consumed_once_and_freed_when_unused():
    t = kael.ones(4)
    capsule = t.__dlpack__()
    imported = kael.from_dlpack(capsule)
    assert imported.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError):
        kael.from_dlpack(capsule)  # already consumed
    for _ in range(100):
        t.__dlpack__(stream=None)  # dropped unused: the capsule's destructor frees it
    before = kael.allocator_stats("cpu")["in_use_bytes"]
    round_trip = kael.from_dlpack(kael.zeros(1 << 16))
    del round_trip
    gc.collect()
    assert kael.allocator_stats("cpu")["in_use_bytes"] == before


def test_bool_and_unsupported_dtypes():
    flags = kael.from_dlpack(kael.tensor([True, False]))  # kael to kael: kDLBool
    assert flags.dtype == kael.bool_ and flags.tolist() == [True, False]
    with pytest.raises(TypeError, match="no dtype"):
        kael.from_dlpack(np.arange(4, dtype=np.uint32))
    with pytest.raises(TypeError):
        kael.from_dlpack([1, 2, 3])


def test_emulated_device_memory_is_refused():
    emulated = [d.device for d in kael.devices() if d.emulated]
    if not emulated:
        pytest.skip("no emulated device here")
    t = kael.ones(2, device=emulated[0])
    with pytest.raises(TypeError, match="emulated"):
        t.__dlpack__()
    with pytest.raises(TypeError, match="emulated"):
        np.from_dlpack(t)
    with pytest.raises(TypeError, match="emulated"):
        t.__dlpack_device__()


def test_export_on_device(device):
    emulated = any(d.emulated and d.device == device for d in kael.devices())
    if device == "cpu" or emulated:
        pytest.skip("covered by the cpu and emulated tests")
    t = kael.arange(0, 6, dtype="f32", device=device)
    assert t.__dlpack_device__() == (KDL_CUDA, kael.device(device).index)
    again = kael.from_dlpack(t)
    assert again.device == device and again.data_ptr() == t.data_ptr()
    again[0] = 5.0
    assert t[0].item() == 5.0


def test_dlpack_torch(real_cuda):
    torch = pytest.importorskip("torch")
    if real_cuda is None or not torch.cuda.is_available():
        pytest.skip("needs a real CUDA device for both kael and torch")
    # kael -> torch
    k = kael.arange(0, 8, dtype="f32", device=real_cuda).view(2, 4)
    t = torch.from_dlpack(k)
    assert t.is_cuda and t.data_ptr() == k.data_ptr() and t.shape == (2, 4)
    k[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t[1, 3] = -1.0
    torch.cuda.synchronize()
    assert k[1, 3].item() == -1.0
    # torch -> kael
    source = torch.arange(12, dtype=torch.float64, device="cuda").reshape(3, 4)[:, 1:]
    imported = kael.from_dlpack(source)
    assert imported.device == real_cuda and imported.data_ptr() == source.data_ptr()
    assert imported.stride() == tuple(source.stride())
    assert imported.tolist() == source.cpu().tolist()
    imported[0, 0] = 55.0
    kael.synchronize(real_cuda)
    assert source[0, 0].item() == 55.0
    source.mul_(2)
    torch.cuda.synchronize()
    assert imported[0, 0].item() == 110.0
    # bool and int64 both ways
    mask = kael.from_dlpack(torch.tensor([True, False], device="cuda"))
    assert mask.dtype == kael.bool_ and mask.tolist() == [True, False]
    assert torch.from_dlpack(kael.tensor([1, 2], device=real_cuda)).dtype == torch.int64
    # kael keeps torch's memory alive and the other way round
    del source
    torch.cuda.empty_cache()
    assert imported[0, 0].item() == 110.0
    del k
    assert t[0, 0].item() == 100.0
