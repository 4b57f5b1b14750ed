"""kael.cuda and kael.backends.cudnn as PyTorch programs use them (torch.cuda): availability of
real GPUs only, the current device, seeds, memory figures, events, and the older amp spelling."""
import pytest
import torch

import kael


def cuda_device():
    return "cuda:0" if kael.is_available("cuda:0") else None


def test_availability_counts_real_gpus_only():
    real = [r for r in kael.devices() if r.device.startswith("cuda:") and not r.emulated]
    assert kael.cuda.is_available() == bool(real) and kael.cuda.device_count() == len(real)
    if not real:  # as torch without a GPU (torch 1.13 here is a CPU build)
        assert kael.cuda.is_available() == torch.cuda.is_available()
        assert kael.cuda.device_count() == torch.cuda.device_count()


def test_current_device_and_set_device():
    assert kael.cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="cuda:7"):
        kael.cuda.set_device(7)
    if cuda_device():
        kael.cuda.set_device("cuda:0")
        with kael.cuda.device(0):
            assert kael.cuda.current_device() == 0
    with pytest.raises(ValueError):
        kael.cuda.set_device("cpu")


def test_seeds_reseed_the_generator():
    kael.cuda.manual_seed(3)
    first = kael.rand(4).tolist()
    kael.cuda.manual_seed_all(3)
    assert kael.rand(4).tolist() == first


@pytest.mark.skipif(not kael.is_available("cuda:0"), reason="no device serves cuda:0")
def test_memory_figures_follow_live_tensors():
    kael.cuda.synchronize()
    kael.cuda.reset_peak_memory_stats()
    before = kael.cuda.memory_allocated()
    x = kael.empty(1 << 20, device="cuda")
    assert kael.cuda.memory_allocated() >= before + (4 << 20)
    peak = kael.cuda.max_memory_allocated()
    assert peak >= kael.cuda.memory_allocated()
    del x
    assert kael.cuda.memory_allocated() == before
    assert kael.cuda.max_memory_allocated() == peak  # until reset
    kael.cuda.reset_peak_memory_stats()
    assert kael.cuda.max_memory_allocated() == before
    assert kael.cuda.memory_reserved() >= before
    kael.cuda.empty_cache()


@pytest.mark.skipif(not kael.is_available("cuda:0"), reason="no device serves cuda:0")
def test_device_properties_and_events():
    record = [r for r in kael.devices() if r.device == "cuda:0"][0]
    assert kael.cuda.get_device_name() == record.name == kael.cuda.get_device_name(0)
    properties = kael.cuda.get_device_properties("cuda:0")
    assert properties.total_memory == record.memory_total
    assert kael.cuda.get_device_capability() == (properties.major, properties.minor)
    assert kael.cuda.is_bf16_supported()
    start, end = kael.cuda.Event(enable_timing=True), kael.cuda.Event(enable_timing=True)
    start.record()
    kael.ones(256, 256, device="cuda") @ kael.ones(256, 256, device="cuda")
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    with pytest.raises(RuntimeError, match="enable_timing"):
        kael.cuda.Event().elapsed_time(end)


def test_backend_flags_are_recorded_as_torch_reads_them():
    for name in ("benchmark", "deterministic", "enabled", "allow_tf32"):
        assert getattr(kael.backends.cudnn, name) == getattr(torch.backends.cudnn, name)
    kael.backends.cudnn.benchmark = True
    assert kael.backends.cudnn.benchmark
    kael.backends.cudnn.benchmark = False
    kael.backends.cuda.matmul.allow_tf32 = True
    assert kael.get_float32_matmul_precision() == "high"
    kael.backends.cuda.matmul.allow_tf32 = False


def test_cuda_amp_is_amp_for_the_cuda_device_type():
    scaler = kael.cuda.amp.GradScaler(enabled=False)
    assert not scaler.is_enabled()
    with kael.cuda.amp.autocast(dtype=kael.bfloat16):
        assert kael.amp.is_autocast_enabled("cuda") and not kael.amp.is_autocast_enabled("cpu")


def test_cudnn_is_available_means_a_real_gpu_convolving_with_cudnn():
    library = kael._kael._nn._conv.convolution_library
    # the cpu plugin convolves with oneDNN where it was built with it, else the core composes
    assert library("cpu") == "" or "onednn" in library("cpu").lower()
    if not kael.cuda.is_available():
        assert kael.backends.cudnn.is_available() is False
    else:
        assert kael.backends.cudnn.is_available() == ("cudnn" in library("cuda:0").lower())
    with pytest.raises(Exception, match="device"):
        library("nowhere:0")
