"""kael.distributions beside torch 1.13's: log_prob, entropy, moments and their gradients;
samples with the right shapes and frequencies."""
import numpy as np
import pytest
import torch

import kael


def close(a, b):
    np.testing.assert_allclose(np.array(a.tolist()), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_categorical_matches_torch():
    logits = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    results = []
    for lib in (kael, torch):
        scores = lib.tensor(logits, requires_grad=True)
        dist = lib.distributions.Categorical(logits=scores)
        values = lib.tensor([2, 0])
        loss = dist.log_prob(values).sum() + dist.entropy().sum()
        loss.backward()
        results.append((dist.probs, dist.log_prob(values), dist.entropy(), scores.grad))
    for a, b in zip(*results):
        close(a, b)
    kael.manual_seed(0)
    dist = kael.distributions.Categorical(probs=kael.tensor([0.2, 0.8]))
    draws = dist.sample((4000,))
    assert draws.shape == (4000,) and 0.75 < draws.float().mean().item() < 0.85
    assert kael.distributions.Categorical(logits=kael.zeros(5, 3)).sample((2,)).shape == (2, 5)


@pytest.mark.parametrize("name,args", [("Normal", (np.array([0.5, -1.0]), np.array([2.0, 0.5]))),
                                       ("Bernoulli", (np.array([0.3, 0.9]),)),
                                       ("Uniform", (np.array([0.0, -1.0]), np.array([2.0, 3.0])))])
def test_elementwise_distributions_match_torch(name, args):
    value = np.array([0.0 if name == "Bernoulli" else 0.25, 1.0], dtype=np.float32)
    results = []
    for lib in (kael, torch):
        params = [lib.tensor(a.astype(np.float32), requires_grad=True) for a in args]
        dist = getattr(lib.distributions, name)(*params)
        log_prob = dist.log_prob(lib.tensor(value))
        (log_prob.sum() + dist.entropy().sum()).backward()
        results.append([log_prob, dist.entropy(), dist.mean, dist.variance] +
                       [p.grad for p in params])
    for a, b in zip(*results):
        close(a, b)
    kael.manual_seed(1)
    sample = getattr(kael.distributions, name)(*[kael.tensor(a.astype(np.float32))
                                                 for a in args]).sample((3000,))
    assert sample.shape == (3000, 2)
    np.testing.assert_allclose(np.array(sample.mean(0).tolist()),
                               np.array(results[1][2].tolist()), atol=0.1)


def test_normal_rsample_is_differentiable():
    loc = kael.tensor([1.0], requires_grad=True)
    scale = kael.tensor([2.0], requires_grad=True)
    draw = kael.distributions.Normal(loc, scale).rsample((50,))
    draw.sum().backward()
    assert loc.grad.item() == 50.0 and scale.grad is not None
