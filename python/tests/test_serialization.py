"""kael.save / kael.load of whole training states, and tensor pickling and copying."""
import copy
import io
import json
import math
import os
import pickle

import numpy as np
import pytest

import kael


def state_on(device):
    weight = kael.rand(4, 3, device=device, requires_grad=True)
    return {"model": {"weight": weight, "tied": weight, "mask": kael.tensor([True, False],
                                                                         device=device),
                      "steps": kael.arange(5, device=device)},
            "optimizer": {"state": {0: {"step": 3.0, "exp_avg": kael.zeros(4, 3, device=device,
                                                                              dtype=kael.float64)}},
                          "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0]}]},
            "epoch": 7, "best": float("inf"), "loss": float("nan"), "note": "ünïcode",
            "raw": b"\x00\xff", "nothing": None, "flag": False, "big": 2**80,
            "dtype": kael.float64, "where": kael.device(device)}


def test_round_trip_keeps_values_structure_and_ties(device, tmp_path):
    state = state_on(device)
    path = tmp_path / "state.kael"
    kael.save(state, path)
    loaded = kael.load(path)
    model = loaded["model"]
    assert model["weight"] is model["tied"]
    assert str(model["weight"].device) == str(kael.device(device))
    assert model["weight"].requires_grad and not model["steps"].requires_grad
    assert np.array_equal(model["weight"].detach().cpu().numpy(),
                          state["model"]["weight"].detach().cpu().numpy())
    assert model["mask"].tolist() == [True, False] and model["mask"].dtype == kael.bool_
    assert loaded["optimizer"]["state"][0]["exp_avg"].dtype == kael.float64
    assert loaded["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert list(loaded["optimizer"]["state"]) == [0]
    assert loaded["epoch"] == 7 and loaded["best"] == math.inf and math.isnan(loaded["loss"])
    assert loaded["note"] == "ünïcode" and loaded["raw"] == b"\x00\xff"
    assert loaded["nothing"] is None and loaded["flag"] is False and loaded["big"] == 2**80
    assert loaded["dtype"] == kael.float64 and str(loaded["where"]) == str(kael.device(device))


def test_map_location_moves_every_tensor(device, tmp_path):
    path = tmp_path / "state.kael"
    kael.save(state_on(device), path)
    on_cpu = kael.load(path, map_location="cpu")
    assert on_cpu["model"]["weight"].device == kael.device("cpu")
    mapped = kael.load(path, map_location={str(kael.device(device)): "cpu"})
    assert mapped["model"]["steps"].device == kael.device("cpu")


def test_file_objects(device):
    buffer = io.BytesIO()
    kael.save([kael.ones(2, device=device), (1, "a")], buffer)
    loaded = kael.load(io.BytesIO(buffer.getvalue()))
    assert loaded[0].tolist() == [1.0, 1.0] and loaded[1] == (1, "a")


def test_unsupported_objects_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match=r"kael.save: obj\['x'\] is a set"):
        kael.save({"x": {1, 2}}, tmp_path / "bad.kael")
    assert not (tmp_path / "bad.kael").exists()


def test_a_failed_save_leaves_the_old_file(tmp_path):
    path = tmp_path / "state.kael"
    kael.save({"epoch": 1}, path)
    with pytest.raises(TypeError):
        kael.save({"epoch": 2, "bad": object()}, path)
    assert kael.load(path) == {"epoch": 1}


def test_broken_and_foreign_files_are_value_errors(tmp_path):
    plain = tmp_path / "plain.safetensors"
    kael.safetensors.save_file({"w": kael.ones(2)}, plain)
    with pytest.raises(ValueError, match="without kael.save's structure"):
        kael.load(plain)
    for structure in ['{"format": 1, "object": {"t": "tensor", "name": "nope"}}',
                      '{"format": 1, "object": {"t": "eval", "v": "__import__(\'os\')"}}',
                      '{"format": 1, "object": {"t": "dict", "items": 3}}',
                      '{"format": 2, "object": {"t": "none"}}', 'not json']:
        path = tmp_path / "broken.kael"
        kael.safetensors.save_file({"w": kael.ones(2)}, path, metadata={"kael.save": structure})
        with pytest.raises(ValueError, match="kael.load"):
            kael.load(path)
    truncated = tmp_path / "truncated.kael"
    kael.save({"w": kael.ones(100)}, tmp_path / "whole.kael")
    truncated.write_bytes((tmp_path / "whole.kael").read_bytes()[:-50])
    with pytest.raises(ValueError):
        kael.load(truncated)


def test_the_file_is_safetensors_with_a_json_structure(tmp_path):
    path = tmp_path / "state.kael"
    kael.save({"w": kael.ones(2), "n": 1}, path)
    with kael.safetensors.safe_open(path) as file:
        structure = json.loads(file.metadata()["kael.save"])
        assert list(file.keys()) == ["t0"]
    assert structure["object"]["t"] == "dict"


def test_pickle_and_copies(device):
    x = kael.arange(6, device=device).float().reshape(2, 3).T  # a non-contiguous view
    y = pickle.loads(pickle.dumps(x))
    assert y.tolist() == x.tolist() and y.device == x.device and y.dtype == x.dtype
    leaf = kael.rand(3, device=device, requires_grad=True)
    shared = {"a": leaf, "b": leaf}
    deep = copy.deepcopy(shared)
    assert deep["a"] is deep["b"] and deep["a"] is not leaf
    assert deep["a"].requires_grad and deep["a"].data_ptr() != leaf.data_ptr()
    assert pickle.loads(pickle.dumps(leaf)).requires_grad
    assert copy.copy(leaf).data_ptr() == leaf.data_ptr()
    with pytest.raises(RuntimeError, match="deepcopy"):
        copy.deepcopy(leaf * 2)
