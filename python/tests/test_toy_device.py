"""The out-of-tree example plugin (docs/examples/toy_plugin) from Python: device type "toy",
declared by the plugin alone. CTest's python_toy_device runs this file with the plugin on
KAEL_PLUGIN_PATH and KAEL_TEST_DEVICE=toy:0, where nothing here may skip."""
import os

import pytest

import kael

_required = os.environ.get("KAEL_TEST_DEVICE", "").split(":")[0] == "toy"
pytestmark = pytest.mark.skipif(
    not _required and "toy" not in kael.registered_device_types(),
    reason="the toy plugin is not on KAEL_PLUGIN_PATH")


def test_toy_is_a_device_type_like_any_other():
    assert "toy" in kael.registered_device_types()
    toy = kael.device("toy:1")
    assert (toy.type, toy.index, str(toy)) == ("toy", 1, "toy:1")
    assert kael.device("toy", 1) == toy
    listed = [d.device for d in kael.devices() if d.plugin == "toy"]
    assert listed == ["toy:0", "toy:1"]
    (record,) = [p for p in kael.plugins() if p.name == "toy"]
    assert (record.device_type, record.host_addressable, record.dlpack_device_type) == (
        "toy", False, 0)
    servers = {s.device_type: s for s in kael.device_type_servers()}
    assert servers["toy"].plugin == "toy"
    with pytest.raises(ValueError, match=r"unknown device type 'tpu'.*'toy'"):
        kael.device("tpu:0")


def test_computes_on_toy_and_counts_what_falls_back():
    a = kael.arange(6, dtype=kael.float32).reshape(2, 3)
    t = a.to("toy")
    assert t.device == "toy:0" and not t.is_cpu
    kael.reset_fallback_counts()
    assert ((t * 2.0 - t).cpu() == a).all().item()
    assert kael.fallback_counts().get("toy:elementwise", 0) == 0
    assert abs(kael.exp(t).cpu() - kael.exp(a)).max().item() < 1e-6  # exp: UNSUPPORTED
    assert kael.fallback_counts()["toy:elementwise"] == 1
    assert t.sum().item() == 15.0  # no reduce slot
    assert kael.fallback_counts()["toy:reduce"] == 1
    with pytest.raises(RuntimeError, match="cpu and toy"):
        a + t
    with pytest.raises(TypeError, match="plugin 'toy' declares no DLPack"):
        t.__dlpack__()


def test_grad_flows_through_toy():
    x = kael.tensor([[-1.0, 2.0], [3.0, -4.0]], device="toy:1", requires_grad=True)
    (kael.relu(x) * x).sum().backward()
    assert x.grad.device == "toy:1"
    assert x.grad.cpu().tolist() == [[0.0, 4.0], [6.0, 0.0]]
