"""Checkpoints across the two libraries: kael.load reads torch.save's files (state dicts,
training states, bf16, views, bool masks, parameters) without PyTorch's code and refuses any
other pickled class; kael.save(format="torch") writes files torch.load reads; whole models
pickle and deep-copy with their weight ties."""
import collections
import copy
import io
import os
import pickle
import sys

import pytest
import torch

import kael

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "porting"))


def test_kael_loads_what_torch_saves():
    linear = torch.nn.Linear(3, 2)
    state = {"model": linear.state_dict(), "step": 5, "lr": [0.1, 0.01], "name": "run",
             "bf16": torch.randn(4).bfloat16(), "half": torch.randn(3).half(),
             "view": torch.arange(10)[2:8:2], "mask": torch.tensor([True, False]),
             "ints": torch.arange(3, dtype=torch.int32), "dtype": torch.float16,
             "param": torch.nn.Parameter(torch.ones(2)), "scalar": torch.tensor(2.5)}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    got = kael.load(io.BytesIO(buffer.getvalue()), map_location="cpu")
    assert isinstance(got["model"], collections.OrderedDict)
    assert got["model"]["weight"].tolist() == linear.weight.tolist()
    assert (got["step"], got["lr"], got["name"]) == (5, [0.1, 0.01], "run")
    assert got["bf16"].dtype == kael.bfloat16
    assert got["bf16"].float().tolist() == state["bf16"].float().tolist()
    assert got["half"].dtype == kael.float16 and got["view"].tolist() == [2, 4, 6]
    assert got["mask"].tolist() == [True, False] and got["ints"].tolist() == [0, 1, 2]
    assert got["dtype"] == kael.float16 and got["param"].requires_grad
    assert got["scalar"].shape == () and got["scalar"].item() == 2.5
    model = kael.nn.Linear(3, 2)
    model.load_state_dict(got["model"])  # a PyTorch state dict drops into the kael model


def test_torch_loads_what_kael_saves_in_its_format(tmp_path):
    path = tmp_path / "state.pt"
    kael.save({"w": kael.ones(2, 3), "b": kael.tensor([1.5]).bfloat16(), "n": 3,
               "od": collections.OrderedDict(a=kael.arange(3)), "dt": kael.float16},
              str(path), format="torch")
    back = torch.load(str(path))
    assert back["w"].shape == (2, 3) and back["b"].dtype == torch.bfloat16
    assert back["b"].item() == 1.5 and back["n"] == 3 and back["dt"] == torch.float16
    assert back["od"]["a"].tolist() == [0, 1, 2] and isinstance(back["od"],
                                                                collections.OrderedDict)
    assert kael.load(str(path))["w"].tolist() == [[1.0] * 3] * 2


class Payload:
    def __reduce__(self):
        return (os.system, ("echo should-not-run",))


def test_other_pickled_classes_are_refused():
    buffer = io.BytesIO()
    torch.save({"x": Payload()}, buffer)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        kael.load(io.BytesIO(buffer.getvalue()))


def test_whole_models_deepcopy_and_save_with_their_ties():
    from gpt_model import GPT, ModelArgs
    model = GPT(ModelArgs(vocab_size=20, n_layer=1, block_size=8, n_embd=16, n_head=2))
    x = kael.randint(0, 20, (2, 8))
    twin = copy.deepcopy(model)
    assert kael.equal(model(x)[0], twin(x)[0])
    assert len(twin.parameters()) == len(model.parameters())  # the tied weight stays one
    assert hash(twin.transformer.wte.weight) == hash(twin.lm_head.weight)
    with kael.no_grad():
        twin.lm_head.weight.add_(1.0)
    assert not kael.equal(model(x)[0], twin(x)[0])  # a copy, not a view
    buffer = io.BytesIO()
    kael.save(model, buffer)  # as torch.save(model): pickled
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        kael.load(io.BytesIO(buffer.getvalue()))
    loaded = kael.load(io.BytesIO(buffer.getvalue()), weights_only=False)
    assert kael.equal(model(x)[0], loaded(x)[0])
    layers = kael.nn.Sequential(kael.nn.Linear(2, 3), kael.nn.LayerNorm(3), kael.nn.Dropout(0.2))
    layers.eval()
    again = pickle.loads(pickle.dumps(layers))
    assert repr(again) == repr(layers) and not again.training
    assert [n for n, _ in again.named_parameters()] == [n for n, _ in layers.named_parameters()]
