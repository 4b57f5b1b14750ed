"""Tensor.pin_memory and is_pinned (page-locked host memory from a device plugin's
kael.host_memory extension; the emulated device serves ordinary memory through it), the gloo
backend's staging through it, and DataLoader(pin_memory=True)."""
import warnings

import pytest

import kael


def emulated_or_real_cuda():
    if not kael.is_available("cuda:0"):
        pytest.skip("nothing serves cuda:0")


def test_pinned_copies_hold_the_values_of_every_layout_and_dtype():
    emulated_or_real_cuda()
    base = kael.arange(24.0).reshape(4, 6)
    for x in (base, base.t(), base[:, 1::2], base[0, 0], base[:0]):
        for dtype in (kael.float32, kael.float64, kael.bfloat16, kael.int64, kael.bool,
                      kael.uint8):
            source = x.to(dtype)
            pinned = source.pin_memory()
            assert pinned.is_pinned() and not source.is_pinned()
            assert pinned.device.type == "cpu" and pinned.is_contiguous()
            assert pinned.dtype == dtype and pinned.shape == source.shape
            assert pinned.tolist() == source.tolist()
            assert pinned.pin_memory() is pinned
            # a pinned tensor is an ordinary cpu tensor to every op, and copies to the device
            assert (pinned.to("cuda:0").cpu().tolist() == source.tolist())
            assert not (pinned + 0 if dtype != kael.bool else pinned.clone()).is_pinned()


def test_pinned_memory_is_written_in_place_and_freed_with_its_tensor():
    emulated_or_real_cuda()
    pinned = kael.zeros(1000).pin_memory()
    pinned.add_(2.5)
    view = pinned[10:20]
    assert view.is_pinned() and view.sum().item() == 25.0
    del pinned
    assert view.tolist() == [2.5] * 10  # the view keeps the block alive
    for _ in range(50):  # blocks go back to the plugin
        kael.ones(1 << 16).pin_memory()


def test_pin_memory_refuses_device_tensors_and_devices_without_host_memory():
    emulated_or_real_cuda()
    with pytest.raises(RuntimeError, match="only cpu tensors can be pinned"):
        kael.ones(2).to("cuda:0").pin_memory()
    with pytest.raises(RuntimeError, match="offers no page-locked host memory"):
        kael.ones(2).pin_memory("cpu")


def test_gloo_stages_device_tensors_through_pinned_memory(tmp_path):
    emulated_or_real_cuda()
    import kael.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/rendezvous", rank=0,
                            world_size=1)
    try:
        t = kael.arange(6.0).to("cuda:0")
        strided = kael.arange(12.0).reshape(3, 4).to("cuda:0").t()
        dist.all_reduce(t)
        dist.all_reduce(strided, dist.ReduceOp.AVG)
        dist.broadcast(t, src=0)
        assert t.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        assert strided.cpu().tolist() == kael.arange(12.0).reshape(3, 4).t().tolist()
        gathered = kael.zeros(6).to("cuda:0")
        dist.all_gather_into_tensor(gathered, t)
        assert gathered.cpu().tolist() == t.cpu().tolist()
    finally:
        dist.destroy_process_group()


def test_data_loader_pins_batches_only_with_a_real_gpu():
    data = kael.utils.data.TensorDataset(kael.rand(10, 3), kael.arange(10))
    loader = kael.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = list(loader)
    assert [tuple(x.shape) for x, _ in batches] == [(4, 3), (4, 3), (2, 3)]
    if kael.cuda.is_available():
        assert all(x.is_pinned() and y.is_pinned() for x, y in batches)
        assert not caught
    else:
        assert not any(x.is_pinned() for x, _ in batches)
        assert any("pin_memory" in str(w.message) for w in caught)
