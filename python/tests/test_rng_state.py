"""kael.Generator and the process generator's state: restoring a state replays every later draw
(rand, randn, randint, randperm, multinomial, bernoulli, dropout masks, in-place fills)."""
import pytest
import torch

import kael


def draws(device, generator=None):
    g = {"generator": generator} if generator is not None else {}
    x = kael.ones(64, device=device)
    return [kael.rand(5, device=device, **g).tolist(),
            kael.randn(2, 3, dtype=kael.float64, device=device, **g).tolist(),
            kael.randint(0, 100, (7,), device=device, **g).tolist(),
            kael.randperm(9, device=device, **g).tolist(),
            kael.multinomial(kael.tensor([1.0, 2.0, 3.0], device=device), 2, **g).tolist(),
            kael.bernoulli(kael.full((6,), 0.5, device=device), **g).tolist(),
            kael.empty(4, device=device).uniform_(-1, 1, **g).tolist(),
            kael.empty(4, device=device).normal_(2.0, 0.5, **g).tolist(),
            kael.empty(4, device=device).bernoulli_(0.3, **g).tolist(),
            kael.empty(4, device=device).exponential_(2.0, **g).tolist()] + (
        [] if g else [kael.dropout(x, 0.5, True).tolist()])


def test_process_state_replays_every_draw(device):
    kael.manual_seed(123)
    _ = kael.rand(3)
    state = kael.get_rng_state()
    first = draws(device)
    kael.set_rng_state(state)
    assert draws(device) == first
    assert draws(device) != first  # the stream moved on


def test_generator_state_replays_and_is_independent(device):
    g = kael.Generator().manual_seed(5)
    state = g.get_state()
    kael.manual_seed(0)
    process = kael.get_rng_state()
    first = draws(device, g)
    assert kael.get_rng_state().tolist() == process.tolist()  # g did not touch the process one
    assert g.set_state(state) is g
    assert draws(device, g) == first


def test_same_seed_same_values_on_every_device(device):
    a = draws("cpu", kael.Generator().manual_seed(9))
    assert draws(device, kael.Generator().manual_seed(9)) == a


def test_seeds():
    assert kael.manual_seed(7) is kael.default_generator
    assert kael.initial_seed() == 7
    g = kael.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()  # the same default seed
    assert g.manual_seed(2 ** 64 - 1).initial_seed() == 2 ** 64 - 1
    assert g.manual_seed(-1).initial_seed() == 2 ** 64 - 1
    assert kael.seed() == kael.initial_seed()
    if "cuda" in kael.registered_device_types():  # not when only the cpu plugin is installed
        assert str(kael.Generator(device="cuda").device).startswith("cuda")
    with pytest.raises(OverflowError):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        g.manual_seed(1.5)


def test_state_is_bytes_and_bad_states_are_value_errors():
    state = kael.get_rng_state()
    assert state.dtype == kael.int64 and state.ndim == 1
    assert 0 <= min(state.tolist()) and max(state.tolist()) <= 255
    kael.set_rng_state(bytes(state.tolist()))  # bytes work too
    bad = state.tolist()
    with pytest.raises(ValueError, match="set_rng_state"):
        kael.set_rng_state(kael.tensor(bad[:-8]))
    with pytest.raises(ValueError, match="tag"):
        kael.set_rng_state(kael.tensor([0] * len(bad)))
    with pytest.raises(ValueError, match="bytes"):
        kael.set_rng_state(kael.tensor([300] * len(bad)))
    with pytest.raises(TypeError, match="set_rng_state"):
        kael.set_rng_state([1, 2])
    with pytest.raises(TypeError, match="generator"):
        kael.rand(2, generator=3)


def test_randperm(device):
    p = kael.randperm(50, device=device)
    assert p.dtype == kael.int64 and str(p.device) == device
    assert sorted(p.tolist()) == list(range(50))
    assert kael.randperm(0).shape == (0,)
    assert kael.randperm(4, dtype=kael.float32).dtype == kael.float32
    with pytest.raises(ValueError, match="randperm"):
        kael.randperm(-1)


def test_multinomial_rules(device):
    w = kael.tensor([1.0, 0.0, 2.0], device=device)
    assert sorted(kael.multinomial(w, 3).tolist()[:2]) == [0, 2]  # zero weight comes last
    assert kael.multinomial(w, 3).tolist()[2] == 1
    rows = kael.multinomial(kael.ones(4, 5, device=device), 5)
    assert rows.shape == (4, 5) and all(sorted(r) == list(range(5)) for r in rows.tolist())
    many = kael.multinomial(kael.tensor([0.0, 1.0, 3.0], device=device), 4000, True).tolist()
    assert 0 not in many and 0.70 < many.count(2) / 4000 < 0.80
    for bad, error in [(lambda: kael.multinomial(kael.tensor([1.0, 2.0]), 3), ValueError),
                       (lambda: kael.multinomial(kael.tensor([1.0, -1.0]), 1), ValueError),
                       (lambda: kael.multinomial(kael.tensor([0.0, 0.0]), 1), ValueError),
                       (lambda: kael.multinomial(kael.tensor([1.0, float("nan")]), 1), ValueError),
                       (lambda: kael.multinomial(kael.tensor([1.0, 2.0]), 0), ValueError),
                       (lambda: kael.multinomial(kael.tensor([1, 2]), 1), TypeError),
                       (lambda: kael.multinomial(kael.ones(2, 2, 2), 1), ValueError)]:
        with pytest.raises(error, match="multinomial"):
            bad()


def test_in_place_fills(device):
    t = kael.empty(2000, device=device)
    assert t.uniform_(2, 3) is t
    values = t.tolist()
    assert 2 <= min(values) and max(values) < 3
    t.normal_(1.0, 0.1)
    assert abs(t.mean().item() - 1.0) < 0.02 and abs(t.std().item() - 0.1) < 0.01
    assert set(t.bernoulli_(0.5).tolist()) == {0.0, 1.0}
    assert t.bernoulli_(kael.zeros(2000, device=device)).sum().item() == 0
    assert abs(t.exponential_(4.0).mean().item() - 0.25) < 0.03
    i = kael.zeros(5, dtype=kael.int64, device=device)
    assert set(i.bernoulli_(1.0).tolist()) == {1}
    with pytest.raises(TypeError, match="uniform_"):
        i.uniform_()
    with pytest.raises(ValueError, match="uniform_"):
        t.uniform_(2, 1)
    with pytest.raises(ValueError, match="normal_"):
        t.normal_(0, -1)
    with pytest.raises(ValueError, match="bernoulli_"):
        t.bernoulli_(1.5)
    with pytest.raises(ValueError, match="bernoulli"):
        kael.bernoulli(kael.tensor([2.0]))
    leaf = kael.ones(3, requires_grad=True)
    with pytest.raises(Exception, match="leaf"):
        leaf.uniform_()
    with kael.no_grad():
        leaf.uniform_()  # as nn.init does
