"""Training utilities ported programs use, each beside torch 1.13: lazy random samplers
(minGPT asks 10**10 samples), WeightedRandomSampler, the data submodules, RMSprop / Adagrad /
Adadelta / LBFGS trajectories, parameters_to_vector, and the composed activations and losses
(values and gradients)."""
import itertools

import numpy as np
import pytest
import torch

import kael


def test_random_sampler_draws_lazily():
    sampler = kael.utils.data.RandomSampler(list(range(10)), replacement=True,
                                            num_samples=10 ** 10)
    first = list(itertools.islice(iter(sampler), 5000))
    assert len(sampler) == 10 ** 10 and set(first) == set(range(10))
    no_replacement = kael.utils.data.RandomSampler(range(4), num_samples=10)
    drawn = list(no_replacement)
    assert len(drawn) == 10 and sorted(drawn[:4]) == [0, 1, 2, 3]
    from kael.utils.data.dataloader import DataLoader  # noqa: F401  (as minGPT imports it)
    from kael.utils.data.sampler import WeightedRandomSampler
    weighted = list(WeightedRandomSampler([0.0, 3.0, 1.0], 4000))
    assert set(weighted) == {1, 2} and 0.7 < weighted.count(1) / 4000 < 0.8
    assert sorted(WeightedRandomSampler([1, 1, 1], 3, replacement=False)) == [0, 1, 2]
    with pytest.raises(ValueError):
        WeightedRandomSampler([1.0], 0)


OPTIMIZERS = [("RMSprop", dict(lr=0.01)), ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True,
                                                           weight_decay=0.1)),
              ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05)),
              ("Adadelta", dict(lr=1.0, rho=0.8, weight_decay=0.01))]


@pytest.mark.parametrize("name,options", OPTIMIZERS)
def test_optimizer_trajectories_match_torch(name, options):
    start = np.array([[1.5, -2.0, 0.5], [0.1, 3.0, -1.0]], dtype=np.float32)
    paths = []
    for lib in (kael, torch):
        w = lib.tensor(start, requires_grad=True)
        optimizer = getattr(lib.optim, name)([w], **options)
        for _ in range(8):
            optimizer.zero_grad()
            ((w - 0.5) ** 4 + w * w).sum().backward()
            optimizer.step()
        paths.append(np.array(w.tolist()))
    np.testing.assert_allclose(paths[0], paths[1], rtol=2e-5, atol=1e-6)


def test_lbfgs_matches_torch():
    results = []
    for lib in (kael, torch):
        xy = lib.tensor([-1.5, 2.0, 0.3], requires_grad=True)
        optimizer = lib.optim.LBFGS([xy], lr=0.5, max_iter=6, history_size=3)

        def closure():
            optimizer.zero_grad()
            loss = ((xy - 1) ** 4 + xy * xy).sum() + xy[0] * xy[1]
            loss.backward()
            return loss
        losses = [float(optimizer.step(closure)) for _ in range(3)]
        results.append((losses, xy.tolist()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-3)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="strong_wolfe"):
        kael.optim.LBFGS([kael.ones(1, requires_grad=True)], line_search_fn="backtracking")


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_on_rosenbrock_follows_torch_step_for_step(line_search):
    """Rosenbrock from (-1.5, 2) in f64 (f32 rounding makes the path chaotic for both): every
    step's loss, the evaluation count and the end point as torch 1.13's, with and without the
    strong Wolfe line search; with it both reach the minimum (1, 1)."""
    results = []
    for lib in (kael, torch):
        w = lib.tensor([-1.5, 2.0], dtype=lib.float64, requires_grad=True)
        optimizer = lib.optim.LBFGS([w], lr=1, max_iter=20, line_search_fn=line_search)

        def closure():
            optimizer.zero_grad()
            loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
            loss.backward()
            return loss
        losses = [float(optimizer.step(closure)) for _ in range(5)]
        results.append((losses, w.tolist(), optimizer.state[w]["func_evals"]))
    # Fixed steps amplify last-bit differences (1e-13 -> 2e-3 by the fifth step); the line
    # search does not.
    rtol = 1e-2 if line_search is None else 1e-6
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5)
    assert results[0][2] == results[1][2]
    if line_search == "strong_wolfe":
        np.testing.assert_allclose(results[0][1], [1.0, 1.0], atol=1e-5)


def test_parameters_to_vector_round_trip():
    layer = kael.nn.Linear(3, 2)
    vector = kael.nn.utils.parameters_to_vector(layer.parameters())
    assert vector.shape == (8,)
    kael.nn.utils.vector_to_parameters(kael.arange(8).float(), layer.parameters())
    assert layer.bias.tolist() == [6.0, 7.0]
    with pytest.raises(ValueError):
        kael.nn.utils.vector_to_parameters(kael.zeros(3), layer.parameters())


FUNCTIONS = [("leaky_relu", (0.2,), {}), ("elu", (0.7,), {}), ("softplus", (2.0, 3.0), {}),
             ("mish", (), {}), ("hardswish", (), {}), ("normalize", (), dict(p=3.0, dim=0))]


@pytest.mark.parametrize("name,args,kwargs", FUNCTIONS)
def test_activations_match_torch_values_and_gradients(name, args, kwargs):
    data = np.linspace(-5, 5, 24, dtype=np.float32).reshape(4, 6) + 0.01
    grads = []
    for lib in (kael, torch):
        x = lib.tensor(data, requires_grad=True)
        out = getattr(lib.nn.functional, name)(x, *args, **kwargs)
        (out * lib.tensor(np.arange(24, dtype=np.float32).reshape(4, 6))).sum().backward()
        grads.append((np.array(out.tolist()), np.array(x.grad.tolist())))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("smooth_l1_loss", dict(beta=0.5)),
                                         ("huber_loss", dict(delta=2.0)),
                                         ("kl_div", dict(reduction="batchmean")),
                                         ("kl_div", dict(reduction="sum", log_target=True)),
                                         ("cosine_similarity", dict(dim=1))])
def test_losses_match_torch(name, kwargs):
    generator = np.random.default_rng(0)
    a = generator.normal(size=(3, 5)).astype(np.float32)
    b = generator.uniform(0, 1, size=(3, 5)).astype(np.float32)
    b[0, 0] = 0.0
    results = []
    for lib in (kael, torch):
        x = lib.tensor(a, requires_grad=True)
        out = getattr(lib.nn.functional, name)(x, lib.tensor(b), **kwargs)
        out.sum().backward()
        results.append((np.array(out.tolist()), np.array(x.grad.tolist())))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-6)
    modules = {"smooth_l1_loss": "SmoothL1Loss", "huber_loss": "HuberLoss",
               "kl_div": "KLDivLoss", "cosine_similarity": "CosineSimilarity"}
    module = getattr(kael.nn, modules[name])(**kwargs)
    np.testing.assert_allclose(np.array(module(kael.tensor(a), kael.tensor(b)).tolist()),
                               results[1][0], rtol=1e-5, atol=1e-6)
