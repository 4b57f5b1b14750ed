"""kael.nn against adversarial use: bad sizes, unconstructed subclasses, state dicts, files."""
import pytest

import kael
import kael.nn as nn


def small_config(**changes):
    config = nn.GPTConfig(vocab_size=11, block_size=8, layers=1, heads=2, embed=8)
    for name, value in changes.items():
        setattr(config, name, value)
    return config


# ---- sizes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["vocab_size", "block_size", "layers", "heads", "embed"])
@pytest.mark.parametrize("value", [0, -1])
def test_gpt_config_sizes_must_be_positive(field, value):
    with pytest.raises(ValueError, match=f"^GPT: {field} must be positive, got {value}$"):
        nn.GPT(small_config(**{field: value}))


def test_gpt_heads_zero_is_a_value_error_not_sigfpe():
    config = nn.GPTConfig()
    config.heads = 0
    with pytest.raises(ValueError, match="GPT: heads must be positive, got 0"):
        nn.GPT(config)
    with pytest.raises(ValueError, match="not divisible by heads"):
        nn.GPT(small_config(heads=3))
    with pytest.raises(ValueError, match="dropout"):
        nn.GPT(small_config(dropout=float("nan")))


@pytest.mark.parametrize("make, message", [
    (lambda: nn.Linear(-1, 3), "Linear: in_features must be positive, got -1"),
    (lambda: nn.Linear(3, 0), "Linear: out_features must be positive, got 0"),
    (lambda: nn.Embedding(0, 3), "Embedding: num_embeddings must be positive, got 0"),
    (lambda: nn.Embedding(3, -5), "Embedding: embedding_dim must be positive, got -5"),
    (lambda: nn.LayerNorm(0), "LayerNorm: normalized_shape must be positive, got 0"),
    (lambda: nn.LayerNorm(3, eps=-1.0), "LayerNorm: eps"),
    (lambda: nn.Dropout(1.5), "Dropout: p must be in"),
    (lambda: nn.GELU(approximate="bogus"), "GELU: approximate must be"),
])
def test_layer_constructors_reject_bad_sizes(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("temperature", [float("nan"), -0.5, float("inf")])
def test_generate_rejects_bad_temperature(device, temperature):
    kael.manual_seed(0)
    model = nn.GPT(small_config(), device=device)
    with pytest.raises(ValueError, match="generate: temperature"):
        model.generate([1, 2], 4, temperature=temperature)
    with pytest.raises(ValueError, match="new_tokens"):
        model.generate([1, 2], -1)
    tokens = model.generate([1, 2], 6, temperature=0.7)
    assert len(tokens) == 8 and all(0 <= t < 11 for t in tokens)


# ---- subclasses that forget super().__init__() ------------------------------------------------

def test_assigning_before_super_init_is_an_attribute_error():
    class Forgetful(nn.Module):
        def __init__(self, value):
            self.value = value

    for value in [nn.Linear(2, 3), nn.Parameter(kael.ones(2))]:
        with pytest.raises(AttributeError, match="before Module.__init__"):
            Forgetful(value)
    # A plain attribute is stored; pybind11 then reports the missing __init__ call.
    with pytest.raises(TypeError, match="__init__"):
        Forgetful(3)


def test_methods_before_super_init_are_an_attribute_error():
    class Early(nn.Module):
        def __init__(self, method):
            getattr(self, method)()

    for method in ["parameters", "named_parameters", "state_dict", "zero_grad", "cpu", "eval"]:
        with pytest.raises(AttributeError, match="must call super"):
            Early(method)


# ---- registration ------------------------------------------------------------------------------

class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(kael.ones(3))
        self.inner = nn.Linear(3, 2)


def test_del_unregisters_parameters_and_modules():
    model = Holder()
    del model.w
    assert [n for n, _ in model.named_parameters()] == ["inner.weight", "inner.bias"]
    assert not hasattr(model, "w")
    del model.inner
    assert model.named_parameters() == []
    model.w = nn.Parameter(kael.zeros(2))  # the name is free again
    assert [n for n, _ in model.named_parameters()] == ["w"]
    with pytest.raises(AttributeError):
        del model.absent


@pytest.mark.parametrize("container", [list, tuple, lambda ms: dict(enumerate(ms))])
def test_plain_containers_of_modules_are_refused(container):
    model = Holder()
    with pytest.raises(TypeError, match="ModuleList|ModuleDict"):
        model.layers = container([nn.Linear(2, 2), nn.Linear(2, 2)])
    model.numbers = container([1, 2])  # no modules: a plain attribute
    assert len(model.numbers) == 2


def test_dotted_names_are_refused():
    model = Holder()
    with pytest.raises(KeyError):
        setattr(model, "a.b", nn.Linear(1, 1))


def test_module_list_registers_in_order(device):
    kael.manual_seed(1)

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
            self.layers.append(nn.Linear(3, 1))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model = Stack().to(device)
    assert [n for n, _ in model.named_parameters()] == [
        f"layers.{i}.{p}" for i in range(3) for p in ("weight", "bias")]
    assert all(p.device == kael.device(device) for p in model.parameters())
    assert len(model.layers) == 3 and model.layers[-1] is model.layers[2]
    assert isinstance(model.layers[1:], nn.ModuleList) and len(model.layers[1:]) == 2
    with pytest.raises(IndexError):
        model.layers[3]
    with pytest.raises(TypeError):
        model.layers.append(3)
    replacement = nn.Linear(3, 3, device=device)
    model.layers[0] = replacement
    assert model.layers[0] is replacement
    assert [n for n, _ in model.named_parameters()][:2] == ["layers.0.weight", "layers.0.bias"]
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    model(kael.ones(2, 3, device=device)).sum().backward()
    optimizer.step()
    assert len(model.parameters()) == 6


def test_module_dict_registers_by_key():
    heads = nn.ModuleDict({"a": nn.Linear(2, 2), "keys": nn.Linear(2, 1)})
    assert [n for n, _ in heads.named_parameters()] == ["a.weight", "a.bias", "keys.weight",
                                                        "keys.bias"]
    assert list(heads.keys()) == ["a", "keys"] and "a" in heads and len(heads) == 2
    del heads["a"]
    assert [n for n, _ in heads.named_parameters()] == ["keys.weight", "keys.bias"]
    heads["keys"] = nn.Linear(2, 3, bias=False)
    assert [n for n, _ in heads.named_parameters()] == ["keys.weight"]
    with pytest.raises(TypeError):
        heads[1] = nn.Linear(1, 1)
    with pytest.raises(KeyError):
        heads["x.y"] = nn.Linear(1, 1)
