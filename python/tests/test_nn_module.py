"""Module features as PyTorch has them: buffers, the module tree, apply, requires_grad_, the
training flag, detached state_dict and the printed tree; on every device."""
import pytest

import kael
from kael import nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.register_buffer("scale", kael.full([8], 2.0))
        self.register_buffer("steps", kael.zeros(1), persistent=False)

    def forward(self, x):
        return kael.relu(self.hidden(x)) * self.scale


def test_buffers_are_saved_moved_and_not_trained(device):
    model = Scaled()
    assert [name for name, _ in model.named_buffers()] == ["scale", "steps"]
    assert len(model.buffers()) == 2
    assert all(p.requires_grad for p in model.parameters()) and len(model.parameters()) == 2
    assert list(model.state_dict()) == ["scale", "hidden.weight", "hidden.bias"]  # as torch
    model.to(device)
    assert model.scale.device == kael.device(device) and model.steps.device == kael.device(device)
    model(kael.ones(2, 4, device=device)).sum().backward()
    assert model.scale.grad is None and not model.scale.requires_grad
    model.scale = kael.full([8], 3.0, device=device)  # assignment replaces the buffer
    assert model.scale.tolist() == [3.0] * 8
    other = Scaled()
    other.load_state_dict(model.state_dict())
    assert other.scale.tolist() == [3.0] * 8
    with pytest.raises(ValueError, match="scale"):
        other.load_state_dict({k: v for k, v in model.state_dict().items() if k != "scale"})
    with pytest.raises(KeyError):
        other.register_buffer("hidden", kael.ones(1))
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        other.missing
    del other.steps
    assert [name for name, _ in other.named_buffers()] == ["scale"]


def test_buffers_round_trip_through_files(tmp_path):
    model = Scaled()
    model.scale = kael.full([8], 5.0)
    model.save(tmp_path / "m.kael")
    model.save_safetensors(tmp_path / "m.safetensors")
    for load in ("load", "load_safetensors"):
        other = Scaled()
        getattr(other, load)(tmp_path / ("m.kael" if load == "load" else "m.safetensors"))
        assert other.scale.tolist() == [5.0] * 8


def test_state_dict_is_detached_and_shares_values():
    model = nn.Linear(3, 2)
    state = model.state_dict()
    assert not state["weight"].requires_grad
    state["weight"].fill_(1.0)
    assert model.weight.tolist() == [[1.0] * 3] * 2 and model.weight.requires_grad


def test_module_tree_and_apply():
    inner = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    model = nn.Sequential(inner, nn.Linear(3, 1))
    assert [name for name, _ in model.named_modules()] == ["", "0", "0.0", "0.1", "1"]
    assert model.modules()[0] is model and model.modules()[1] is inner
    assert [name for name, _ in model.named_children()] == ["0", "1"]
    assert model.children()[0] is inner
    visited = []
    assert model.apply(lambda module: visited.append(type(module).__name__)) is model
    assert visited == ["Linear", "ReLU", "Sequential", "Linear", "Sequential"]
    model.apply(lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None)
    assert model[1].weight.tolist() == [[0.0, 0.0, 0.0]]


def test_requires_grad_and_training_flag():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    assert all(p.requires_grad for p in model.parameters())
    model.eval()
    assert not model.training and not model[1].training
    model[1].training = True
    assert model[1].training and not model.training


def test_repr_matches_pytorch():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.LayerNorm(8),
                         nn.Embedding(10, 4), nn.GELU(approximate="tanh"), nn.Flatten(),
                         nn.Unflatten(1, (2, 5)), nn.Softmax(dim=1), nn.Identity(), nn.SiLU(),
                         nn.Sigmoid(), nn.Tanh(), nn.LogSoftmax(dim=-1))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Dropout(0.1),
        torch.nn.LayerNorm(8), torch.nn.Embedding(10, 4), torch.nn.GELU(approximate="tanh"),
        torch.nn.Flatten(), torch.nn.Unflatten(1, (2, 5)), torch.nn.Softmax(dim=1),
        torch.nn.Identity(), torch.nn.SiLU(), torch.nn.Sigmoid(), torch.nn.Tanh(),
        torch.nn.LogSoftmax(dim=-1))
    assert repr(ours) == repr(theirs)
    assert repr(nn.Embedding(10, 4, padding_idx=0)) == repr(torch.nn.Embedding(10, 4, padding_idx=0))
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"


def test_python_subclass_repr_prints_children_and_extra_repr():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2, bias=False)

        def extra_repr(self):
            return "width=2, " + super().extra_repr() + "custom"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Linear(2, 1)

    assert repr(Net()) == (
        "Net(\n"
        "  (block): Block(\n"
        "    width=2, custom\n"
        "    (proj): Linear(in_features=2, out_features=2, bias=False)\n"
        "  )\n"
        "  (head): Linear(in_features=2, out_features=1, bias=True)\n"
        ")")
    assert nn.Linear(3, 2).extra_repr() == "in_features=3, out_features=2, bias=True"
