"""Tensors print as PyTorch prints them (apart from the kael. prefix and kael's dtype names):
rows wrap at the line width, large tensors are summarized, set_printoptions changes both."""
import numpy as np
import pytest

import kael

torch = pytest.importorskip("torch")

CASES = [np.arange(30, dtype=np.float32) / 7, np.arange(2000), np.arange(60).reshape(3, 20) / 3,
         np.array([1.0, 2000.0], dtype=np.float32),
         np.random.RandomState(0).randn(4, 40).astype(np.float32),
         np.arange(100000).reshape(100, 1000).astype(np.float32),
         np.array([1e-5, 1.0], dtype=np.float32), np.arange(12).reshape(2, 2, 3) * 1.5,
         np.array([True, False]), np.zeros((0, 3), dtype=np.float32),
         np.array(3.5, dtype=np.float32),
         np.array([float("nan"), 1.5, -float("inf")], dtype=np.float32),
         np.arange(-50, 50).reshape(2, 5, 10)]


def as_torch_text(text):
    """kael's repr with PyTorch's spellings: the prefix (and the indent it adds), dtypes."""
    text = text.replace("kael.tensor(", "tensor(").replace("\n     ", "\n")
    return text.replace("kael.float64", "torch.float64")


@pytest.mark.parametrize("index", range(len(CASES)))
def test_repr_matches_pytorch(index):
    values = CASES[index]
    assert as_torch_text(repr(kael.tensor(values))) == repr(torch.tensor(values))


def test_set_printoptions_matches_pytorch():
    values = np.random.RandomState(1).rand(3, 30)
    try:
        for options in [dict(precision=2), dict(linewidth=120), dict(threshold=10, edgeitems=2),
                        dict(sci_mode=True), dict(profile="short")]:
            kael.set_printoptions(**options)
            torch.set_printoptions(**options)
            assert as_torch_text(repr(kael.tensor(values))) == repr(torch.tensor(values)), options
    finally:
        kael.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_the_device_and_grad_are_shown(device):
    text = repr(kael.ones(3, device=device, requires_grad=True))
    assert text.endswith("requires_grad=True)")
    assert (f"device='{kael.device(device)}'" in text) == (device != "cpu")
