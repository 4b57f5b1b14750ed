"""Plugins and devices, allocator and fallback statistics, and every op on every device compared
with cpu (the `device` fixture: cpu, the emulated cuda:0 here, the real GPU elsewhere)."""
import numpy as np
import pytest

import kael

DEVICE_FIELDS = {"device", "name", "memory_total", "memory_free", "capability", "plugin",
                 "emulated"}
PLUGIN_FIELDS = {"path", "origin", "name", "version", "kind", "device_type", "priority", "abi", "status",
                 "reason", "device_count", "selected", "build_info", "host_addressable",
                 "dlpack_device_type"}


def test_devices_and_plugins_have_kael_info_fields():
    devices = kael.devices()
    assert devices[0].device == "cpu" and not devices[0].emulated
    for record in devices:
        assert set(record.keys()) == DEVICE_FIELDS
        assert record["device"] == record.device and record.to_dict()["name"] == record.name
        assert record.memory_total >= record.memory_free >= 0
    plugins = kael.plugins()
    assert {"cpu"} <= {p.name for p in plugins if p.status == "loaded"}
    for record in plugins:
        assert set(record.keys()) == PLUGIN_FIELDS
    assert any(p.selected and p.device_type == "cpu" for p in plugins)
    assert "kael.Record(" in repr(devices[0])
    with pytest.raises(AttributeError):
        devices[0].no_such_field


def test_device_objects_are_built_as_torch_builds_them():
    assert kael.device("cpu", 0) == kael.device("cpu:0") == kael.device(type="cpu")
    assert kael.device(kael.device("cpu")).index == 0
    with pytest.raises(TypeError, match="device: type must be a str"):
        kael.device(1, 2)
    with pytest.raises(TypeError, match="device: index must be an int"):
        kael.device("cpu", "0")
    with pytest.raises(ValueError, match="unknown device type 'nope'"):
        kael.device("nope")


def test_availability_and_versions():
    assert kael.is_available("cpu")
    has_cuda = any(d.device.startswith("cuda") for d in kael.devices())
    assert kael.cuda_is_available() == has_cuda
    assert kael.__version__ == kael.core_version()
    assert isinstance(kael.core_abi_version(), str)
    assert all("folder" in step for step in kael.discovery_steps())
    # An index past the devices is a RuntimeError; cuda only where a plugin declares it.
    for missing in ["cpu:7"] + (["cuda:7"] if "cuda" in kael.registered_device_types() else []):
        with pytest.raises(RuntimeError):
            kael.require_device(missing)
        with pytest.raises(RuntimeError):
            kael.zeros(2, device=missing)


def test_allocator_and_fallback_statistics(device):
    kael.synchronize(device)
    kael.synchronize()
    keep = kael.ones(1024, device=device)
    stats = kael.allocator_stats(device)
    assert stats["in_use_bytes"] >= keep.nbytes
    assert set(stats) == {"in_use_bytes", "cached_bytes", "peak_in_use_bytes", "hits", "misses",
                          "system_releases"}
    kael.empty_cache(device)
    assert kael.allocator_stats(device)["cached_bytes"] == 0
    assert isinstance(kael.caching_allocator_enabled(), bool)
    counts = kael.fallback_counts()
    assert isinstance(counts, dict)
    kael.reset_fallback_counts()


def test_tensors_move_between_devices(device):
    t = kael.tensor([[1.0, 2.0]], device=device)
    assert t.device == device and t.is_cuda == (device != "cpu")
    assert t.cpu().device == "cpu" and t.to("cpu").tolist() == [[1.0, 2.0]]
    if device.startswith("cuda"):
        assert kael.ones(2).cuda().device == "cuda:0"
        assert kael.ones(2).to(device).device == device
        with pytest.raises(RuntimeError, match="cuda"):
            kael.ones(2) + kael.ones(2, device=device)  # never a silent copy
    x = kael.ones(3)
    x.move_to_(device)
    assert x.device == device


CASES = {
    "arithmetic": lambda a, b: (a + b) * 2 - a / (b.abs() + 1),
    "comparisons": lambda a, b: (a > b) | (a == 0),
    "reductions": lambda a, b: kael.stack([a.sum(dim=0), a.mean(dim=0), a.max(dim=0).values,
                                           b.min(dim=0).values, a.prod(dim=0)]),
    "argmax": lambda a, b: a.argmax(dim=1),
    "matmul": lambda a, b: a @ b.T,
    "unary": lambda a, b: kael.exp(a).sin() + kael.tanh(b) + kael.sigmoid(a),
    "softmax": lambda a, b: kael.log_softmax(a, 1) + kael.softmax(b, 0),
    "cross_entropy": lambda a, b: kael.cross_entropy(a, kael.tensor([0, 2, 1, 3],
                                                                     device=a.device)),
    "layer_norm": lambda a, b: kael.layer_norm(a),
    "index": lambda a, b: a.index_select(0, kael.tensor([3, 0], device=a.device))
    + a.gather(1, kael.tensor([[1, 0, 0, 2]] * 2, device=a.device)[:, :4]).sum(),
    "views": lambda a, b: a.T[1:, ::2].contiguous() + a.view(2, 8)[:, 3:7].T.sum(),
    "where_clamp": lambda a, b: kael.where(a > 0, a, b).clamp(-0.5, 0.5),
    "sort_topk": lambda a, b: kael.cat([a.sort(dim=1).values, a.topk(2).values], dim=1),
    "cumsum_var": lambda a, b: a.cumsum(1) + a.var(dim=1, keepdim=True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_ops_on_device_match_cpu(device, case):
    rng = np.random.default_rng(len(case))
    a_host = rng.standard_normal((4, 4)).astype(np.float32)
    b_host = rng.standard_normal((4, 4)).astype(np.float32)
    expected = CASES[case](kael.tensor(a_host), kael.tensor(b_host))
    result = CASES[case](kael.tensor(a_host, device=device), kael.tensor(b_host, device=device))
    assert result.device == device
    np.testing.assert_allclose(result.cpu().numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


def test_autograd_on_device_matches_cpu(device):
    rng = np.random.default_rng(9)
    x_host = rng.standard_normal((5, 3)).astype(np.float32)
    w_host = rng.standard_normal((3, 2)).astype(np.float32)
    grads = []
    for where in ["cpu", device]:
        w = kael.tensor(w_host, device=where, requires_grad=True)
        loss = kael.relu(kael.tensor(x_host, device=where) @ w).square().mean()
        loss.backward()
        assert w.grad.device == where
        grads.append(w.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-6)


def test_factories_on_device(device):
    kael.manual_seed(11)
    host = kael.randn(3, 3)
    kael.manual_seed(11)
    assert kael.randn(3, 3, device=device).cpu().tolist() == host.tolist()  # same seed, same values
    assert kael.arange(4, device=device).device == device
    assert kael.full((2,), 3.0, device=device).tolist() == [3.0, 3.0]
    assert kael.zeros(2, dtype="i64", device=device).tolist() == [0, 0]
    t = kael.zeros(3, 3, device=device)
    t[1:, 1] = 5.0
    assert t.sum().item() == 10.0


def test_set_num_threads_resizes_the_cpu_pool():
    before = kael.get_num_threads()
    x = kael.arange(0, 1 << 16, dtype=kael.float32).reshape(256, 256)
    reference = (x * 1e-3).exp().sum(0).tolist()
    try:
        for threads in (1, 3, 2):
            kael.set_num_threads(threads)
            assert kael.get_num_threads() == threads
            assert (x * 1e-3).exp().sum(0).tolist() == reference
        with pytest.raises(ValueError):
            kael.set_num_threads(0)
    finally:
        kael.set_num_threads(before)
    assert kael.get_num_threads() == before


def test_device_graph_records_and_replays(device):
    if not kael.DeviceGraph.supported(device):
        with pytest.raises(TypeError):
            kael.DeviceGraph.record(device, lambda: None)
        return
    x = kael.tensor([1.0, 2.0, -3.0], device=device)
    graph = kael.DeviceGraph.record(device, lambda: x.copy_(x * 2 + 1))
    assert x.tolist() == [1.0, 2.0, -3.0]  # recording ran nothing
    for _ in range(3):
        graph.replay()
    assert x.tolist() == [15.0, 23.0, -17.0]
    with pytest.raises(Exception):
        kael.DeviceGraph.record(device, lambda: x.sum().item())
    assert (x * 2).tolist() == [30.0, 46.0, -34.0]  # the device is usable after the error
