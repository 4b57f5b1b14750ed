"""Shared fixtures. Tests taking `device` run on every device kael.devices() lists (cpu and,
without a GPU, the emulated cuda:0). KAEL_TEST_DEVICE=cuda (or cuda:N) makes that device
required: its tests fail, never skip, when nothing serves it."""
import os

import pytest

import kael


def _required_device():
    name = os.environ.get("KAEL_TEST_DEVICE")
    return str(kael.device(name)) if name else None


def _test_devices():
    names = [record.device for record in kael.devices()]
    required = _required_device()
    if required is not None and required not in names:
        names.append(required)  # its tests fail below with the reason
    return names


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", _test_devices(), indirect=True)


@pytest.fixture
def device(request):
    name = request.param
    if not kael.is_available(name):
        # Only a required device can be listed without being available.
        pytest.fail(f"KAEL_TEST_DEVICE={name} is required but not available: "
                    f"{[(p.name, p.status, p.reason) for p in kael.plugins()]}")
    return name


@pytest.fixture
def graph_device(device):
    """The test's device when its plugin records device graphs (kael.compile's), else skip."""
    if not kael.DeviceGraph.supported(device):
        pytest.skip(f"{device} records no device graphs (test_porting_api covers cpu)")
    return device


@pytest.fixture
def real_cuda():
    """cuda:0 when a real (not emulated) GPU serves it, else None."""
    for record in kael.devices():
        if record.device == "cuda:0" and not record.emulated:
            return "cuda:0"
    return None
