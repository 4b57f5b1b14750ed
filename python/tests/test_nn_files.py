"""load_state_dict, Module.save/load (atomic, checked, checksummed) and their OS errors."""
import errno
import os
import pathlib
import resource
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import kael
import kael.nn as nn


def make_model(device="cpu"):
    return nn.Sequential(nn.LayerNorm(4), nn.Linear(4, 3)).to(device)


def values(model):
    return [p.tolist() for p in model.parameters()]


def full_state(value):
    return {"0.weight": kael.full([4], value), "0.bias": kael.full([4], value),
            "1.weight": kael.full([3, 4], value), "1.bias": kael.full([3], value)}


# ---- load_state_dict ---------------------------------------------------------------------------

def test_load_state_dict_checks_everything_before_writing(device):
    kael.manual_seed(0)
    model = make_model(device)
    before = values(model)
    state = full_state(7.0)
    state["1.weight"] = kael.zeros(5, 4)
    with pytest.raises(ValueError, match=r"load_state_dict: size mismatch for '1.weight'.*"
                                         r"\[5, 4\].*\[3, 4\]") as caught:
        model.load_state_dict(state)
    assert "copy_" not in str(caught.value)
    assert values(model) == before


def test_load_state_dict_does_not_broadcast(device):
    model = make_model(device)
    before = values(model)
    state = full_state(1.0)
    state["0.bias"] = kael.zeros(1)
    with pytest.raises(ValueError, match="'0.bias'"):
        model.load_state_dict(state)
    assert values(model) == before


def test_load_state_dict_is_strict_by_default(device):
    model = make_model(device)
    before = values(model)
    state = full_state(2.0)
    state["extra.weight"] = kael.ones(2)
    with pytest.raises(ValueError, match="unexpected: 'extra.weight'"):
        model.load_state_dict(state)
    del state["extra.weight"], state["0.bias"]
    with pytest.raises(ValueError, match="missing: '0.bias'"):
        model.load_state_dict(state)
    assert values(model) == before
    state["extra"] = kael.ones(1)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["extra"]
    assert values(model)[0] == [2.0] * 4 and values(model)[1] == before[1]
    assert all(p.device == kael.device(device) for p in model.parameters())
    assert model.load_state_dict(model.state_dict()) == ([], [])


def test_load_state_dict_type_errors_name_the_parameter():
    model = make_model()
    state = full_state(1.0)
    state["1.bias"] = [0.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="'1.bias' is a list"):
        model.load_state_dict(state)
    with pytest.raises(TypeError):
        model.load_state_dict([("0.weight", kael.ones(4))])


# ---- save and load -----------------------------------------------------------------------------

def test_save_and_load_accept_pathlib_paths(tmp_path, device):
    kael.manual_seed(1)
    model = make_model(device)
    model.save(tmp_path / "m.kael")
    other = make_model(device)
    other.load(tmp_path / "m.kael")
    assert values(other) == values(model)
    with pytest.raises(TypeError):
        model.save(3)


def _python_open_error(path, mode):
    try:
        open(path, mode).close()
    except OSError as error:
        return type(error)
    return None


def test_file_errors_are_os_error_subclasses(tmp_path):
    model = make_model()
    with pytest.raises(FileNotFoundError) as caught:
        model.load(tmp_path / "absent")
    assert caught.value.errno == errno.ENOENT
    assert caught.value.filename == str(tmp_path / "absent")
    assert "load" in str(caught.value)
    with pytest.raises(FileNotFoundError):
        model.save(tmp_path / "absent" / "m.kael")
    with pytest.raises(IsADirectoryError):
        model.load(tmp_path)
    with pytest.raises(IsADirectoryError):
        model.save(tmp_path)


def test_permission_denied_is_permission_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        target = locked / "m.kael"
        if _python_open_error(target, "wb") is not PermissionError:
            target = pathlib.Path("/sys/kael_checkpoint")  # root: /sys refuses new files
            if _python_open_error(target, "wb") is not PermissionError:
                pytest.skip("no folder refuses this user's writes")
        with pytest.raises(PermissionError):
            make_model().save(target)
    finally:
        locked.chmod(0o700)


def test_save_rejects_nul_bytes_and_devices(tmp_path):
    model = make_model()
    (tmp_path / "dir").mkdir()
    with pytest.raises(ValueError, match="NUL"):
        model.save(str(tmp_path / "dir" / "a\x00b"))
    assert os.listdir(tmp_path / "dir") == []
    with pytest.raises(ValueError, match="character device"):
        model.save("/dev/full")
    with pytest.raises(ValueError, match="NUL"):
        model.load(str(tmp_path / "a\x00b"))


def test_load_of_a_fifo_fails_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # In a child, so a hang fails this test instead of stopping the run.
    code = textwrap.dedent(f"""
        import kael.nn as nn
        try:
            nn.Linear(2, 2).load({str(fifo)!r})
        except ValueError as error:
            print("ValueError:", error)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, env=dict(os.environ))
    assert "ValueError:" in result.stdout and "FIFO" in result.stdout, result.stderr


def test_save_past_the_file_size_limit_raises_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "m.kael"
    kael.manual_seed(2)
    small = nn.Linear(4, 4)
    small.save(path)
    old = path.read_bytes()
    code = textwrap.dedent(f"""
        import kael.nn as nn
        try:
            nn.Linear(200, 200).save({str(path)!r})  # 160 kB, past the 100 kB limit
        except OSError as error:
            print("errno", error.errno, error)
    """)

    def limit_file_size():  # ulimit -f 100 with SIGXFSZ ignored, as trap '' XFSZ does
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE,
                           (100 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, preexec_fn=limit_file_size, env=dict(os.environ))
    assert f"errno {errno.EFBIG}" in result.stdout, (result.stdout, result.stderr)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["m.kael"]
    reloaded = nn.Linear(4, 4)
    reloaded.load(path)
    assert values(reloaded) == values(small)


def test_load_detects_corruption_and_trailing_bytes(tmp_path):
    path = tmp_path / "m.kael"
    kael.manual_seed(3)
    model = nn.Linear(6, 5)
    model.save(path)
    good = path.read_bytes()
    before = values(model)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x01
    path.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="checksum"):
        model.load(path)
    path.write_bytes(good + b"\0")
    with pytest.raises(ValueError, match="after the last parameter"):
        model.load(path)
    path.write_bytes(good[:-3])
    with pytest.raises(ValueError, match="truncated"):
        model.load(path)
    assert values(model) == before


def test_corrupt_name_gives_a_readable_message(tmp_path):
    path = tmp_path / "m.kael"
    model = nn.Linear(3, 2)
    model.save(path)
    old_format = bytearray(path.read_bytes()[:-4])  # version 1: no checksum
    old_format[7:8] = b"1"
    old_format[24] = 0xFF  # first byte of "weight"
    path.write_bytes(bytes(old_format))
    with pytest.raises(ValueError) as caught:
        model.load(path)
    assert "\\xffeight" in str(caught.value) and "missing: 'weight'" in str(caught.value)


# ---- optimizers across Module.to --------------------------------------------------------------

@pytest.mark.parametrize("make_optimizer", [
    lambda p: kael.optim.Adam(p, lr=0.1),
    lambda p: kael.optim.AdamW(p, lr=0.1),
    lambda p: kael.optim.SGD(p, lr=0.1, momentum=0.9)])
def test_optimizer_state_moves_with_its_parameters(make_optimizer):
    if "cuda" not in kael.registered_device_types() or not kael.is_available("cuda:0"):
        pytest.skip("no cuda:0")
    x = kael.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]])
    models = []
    for moves in ["cpu", "cuda:0", "cpu"], ["cpu", "cpu", "cpu"]:
        kael.manual_seed(4)
        model = nn.Linear(3, 2)
        optimizer = make_optimizer(model.parameters())
        for device in moves:
            model.to(device)
            optimizer.zero_grad()
            (model(x.to(device)) ** 2).sum().backward()
            optimizer.step()
        models.append(model)
    for moved, stayed in zip(*[m.parameters() for m in models]):
        assert moved.device == kael.device("cpu")
        np.testing.assert_allclose(moved.numpy(), stayed.numpy(), atol=1e-6)
