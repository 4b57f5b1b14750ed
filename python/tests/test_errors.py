"""kael's typed errors arrive as the Python exceptions of the same meaning, with the message."""
import pytest

import kael


def test_value_error():
    with pytest.raises(ValueError, match="view"):
        kael.ones(6).view(4, 2)


def test_type_error():
    with pytest.raises(TypeError, match="bool"):
        -kael.tensor([True])
    with pytest.raises(TypeError):
        kael.rand(2, dtype="i64")


def test_index_error():
    with pytest.raises(IndexError, match="out of range"):
        kael.ones(2, 3).sum(dim=5)
    with pytest.raises(IndexError):
        kael.cross_entropy(kael.ones(2, 3), kael.tensor([0, 3]))


def test_memory_error():
    with pytest.raises(MemoryError):
        kael.empty(1 << 45, dtype="i64")  # 256 TiB


def test_device_error_is_runtime_error():
    if "cuda" not in kael.registered_device_types():  # only the cpu plugin is installed
        pytest.skip("no loaded plugin declares the device type cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        kael.ones(2, device="cuda:9")


def test_generic_error_is_runtime_error():
    y = kael.ones(2, requires_grad=True) * 2
    y.sum().backward()
    with pytest.raises(RuntimeError):
        y.sum().backward()  # y's graph (MulBackward) was released
