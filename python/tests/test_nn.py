"""nn modules (C++ and Python subclasses), optimizers, save/load, GPT."""
import numpy as np
import pytest

import kael
import kael.nn as nn


class TwoLayer(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.first = nn.Linear(2, hidden)
        self.second = nn.Linear(hidden, 2)
        self.scale = nn.Parameter(kael.ones(2))
        self.note = "not a parameter"

    def forward(self, x):
        return self.second(kael.tanh(self.first(x))) * self.scale


def xor_data():
    x = kael.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    return x, kael.tensor([0, 1, 1, 0])


def test_python_module_registers_parameters():
    kael.manual_seed(0)
    model = TwoLayer()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["scale", "first.weight", "first.bias", "second.weight", "second.bias"]
    assert len(model.parameters()) == 5 and model.parameter_count() == 2 * 16 + 16 + 32 + 2 + 2
    assert model.note == "not a parameter"
    assert model(kael.ones(3, 2)).shape == (3, 2)
    with pytest.raises(AttributeError):
        model.first = nn.Linear(2, 16)
    state = model.state_dict()
    assert set(state) == set(names)


def test_builtin_modules():
    kael.manual_seed(1)
    linear = nn.Linear(3, 4)
    assert linear.weight.shape == (4, 3) and linear.bias.shape == (4,)
    assert nn.Linear(3, 4, bias=False).bias is None
    x = kael.randn(2, 3)
    np.testing.assert_allclose(linear(x).numpy(), x.numpy() @ linear.weight.numpy().T +
                               linear.bias.numpy(), rtol=1e-5)
    assert nn.Embedding(10, 4)(kael.tensor([[1, 2]])).shape == (1, 2, 4)
    norm = nn.LayerNorm(3)
    assert norm.eps == 1e-5 and norm(x).shape == (2, 3)
    for activation in [nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Sigmoid(),
                       nn.Tanh()]:
        assert activation(x).shape == (2, 3)
    dropout = nn.Dropout(0.5)
    assert dropout.training
    dropout.eval()
    assert not dropout.training and dropout(x).tolist() == x.tolist()
    sequential = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
    assert len(sequential) == 3 and isinstance(sequential[1], nn.ReLU)
    assert [n for n, _ in sequential.named_parameters()] == ["0.weight", "0.bias", "2.weight",
                                                             "2.bias"]
    assert sequential(x).shape == (2, 1)
    assert sequential.train() is sequential and sequential.eval() is sequential


@pytest.mark.parametrize("make_optimizer", [
    lambda p: kael.optim.SGD(p, lr=0.5, momentum=0.9),
    lambda p: kael.optim.Adam(p, lr=0.05),
    lambda p: kael.optim.AdamW(p, lr=0.05, betas=(0.9, 0.99), weight_decay=1e-3)])
def test_training_reduces_loss(make_optimizer):
    kael.manual_seed(2)
    model = TwoLayer()
    optimizer = make_optimizer(model.parameters())
    x, y = xor_data()
    losses = []
    for _ in range(150):
        loss = kael.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert model(x).argmax(dim=1).tolist() == [0, 1, 1, 0]


def test_zero_grad_and_manual_sgd():
    model = nn.Linear(2, 1)
    model(kael.ones(1, 2)).sum().backward()
    assert model.weight.grad is not None
    with kael.no_grad():
        for parameter in model.parameters():
            parameter -= parameter.grad * 0.1
    model.zero_grad()
    assert model.weight.grad is None


def test_save_load_and_state_dict(tmp_path):
    kael.manual_seed(3)
    source, target = TwoLayer(), TwoLayer()
    path = str(tmp_path / "model.kael")
    source.save(path)
    target.load(path)
    x = kael.randn(5, 2)
    assert source(x).tolist() == target(x).tolist()
    other = TwoLayer()
    other.load_state_dict(source.state_dict())
    assert other(x).tolist() == source(x).tolist()
    with pytest.raises(ValueError):
        nn.Linear(3, 3).load(path)
    with pytest.raises(FileNotFoundError):
        nn.Linear(3, 3).load(str(tmp_path / "missing"))


def test_module_to_device_keeps_optimizer(device):
    kael.manual_seed(4)
    model = TwoLayer()
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    assert model.to(device) is model
    assert all(p.device == device for p in model.parameters())
    x, y = xor_data()
    loss = kael.cross_entropy(model(x.to(device)), y.to(device))
    loss.backward()
    optimizer.step()
    assert model.scale.device == device and model.scale.grad.device == device


def test_gpt_forward_loss_generate(device):
    kael.manual_seed(5)
    config = nn.GPTConfig(vocab_size=16, block_size=8, layers=1, heads=2, embed=8)
    assert config.embed == 8 and "vocab_size=16" in repr(config)
    model = nn.GPT(config, device=device)
    assert model.config.block_size == 8 and model.device == device
    tokens = kael.randint(0, 16, (2, 8), device=device)
    assert model(tokens).shape == (2, 8, 16)
    optimizer = kael.optim.AdamW(model.parameters(), lr=1e-2)
    first = None
    for _ in range(10):
        loss = model.loss(tokens, tokens)
        first = first if first is not None else loss.item()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert loss.item() < first
    generated = model.generate([1, 2, 3], 5)  # the prompt, then the new tokens
    assert len(generated) == 8 and generated[:3] == [1, 2, 3]
    assert all(0 <= t < 16 for t in model.generate([4], 10, temperature=0.8))
