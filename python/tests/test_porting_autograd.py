"""The autograd API of training programs, each beside torch 1.13: tensor hooks (leaf and
non-leaf, removable), retain_grad, detach_, autograd.grad with create_graph (second
derivatives, gradient penalties), anomaly detection, inference_mode and activation
checkpointing."""
import numpy as np
import pytest
import torch

import kael

DATA = np.array([[0.5, -1.5, 2.0], [1.0, 0.25, -0.75]], dtype=np.float32)


def both(fn):
    return fn(kael), fn(torch)


def close(a, b, **tolerance):
    np.testing.assert_allclose(np.array(a.tolist()), b.detach().numpy(), rtol=1e-5,
                               **tolerance)


def test_hooks_retain_grad_and_detach_in_place():
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        seen = []
        leaf = x.register_hook(lambda g: g * 2)
        y = x * x
        y.retain_grad()
        y.register_hook(lambda g: seen.append(g.sum().item()))
        (y * 3).sum().backward()
        first = x.grad.clone()
        leaf.remove()
        x.grad = None
        (x * 1).sum().backward()
        z = x * 2
        z.detach_()
        return first, y.grad, seen, x.grad, z.requires_grad, z.is_leaf
    k, t = both(run)
    close(k[0], t[0]), close(k[1], t[1]), close(k[3], t[3])
    assert k[2] == pytest.approx(t[2]) and k[4:] == t[4:] == (False, True)
    with pytest.raises(ValueError, match="doesn't require gradient"):
        kael.ones(2).register_hook(lambda g: g)


def test_grad_with_create_graph_and_a_gradient_penalty():
    def run(lib):
        x = lib.tensor(DATA, requires_grad=True)
        w = lib.tensor(DATA.T.copy(), requires_grad=True)
        out = lib.log((x @ w) ** 2 + 1.0).sum() * lib.sin(x).sum()
        (dx,) = lib.autograd.grad(out, x, create_graph=True)
        penalty = (dx * dx).sum()
        penalty.backward()
        unused = lib.ones(1, requires_grad=True)
        none = lib.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)[1]
        weighted = lib.autograd.grad(x * 3, x, grad_outputs=lib.ones(2, 3) * 0.5)[0]
        return dx, w.grad, x.grad, none, weighted
    k, t = both(run)
    for a, b in zip(k[:3], t[:3]):
        close(a, b, atol=1e-6)
    assert k[3] is None and t[3] is None
    close(k[4], t[4])
    # A backward that is not yet composable is not differentiated silently as a constant.
    y = kael.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Expm1Backward"):
        kael.autograd.grad(kael.expm1(y).sum(), y, create_graph=True)
    x = kael.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="allow_unused"):
        kael.autograd.grad((x * 2).sum(), [x, kael.ones(1, requires_grad=True)])
    assert x.grad is None  # autograd.grad never accumulates


def test_wgan_style_gradient_penalty_through_linear_relu_sigmoid_matches_torch():
    """A critic of Linear -> ReLU -> Linear -> Sigmoid, its input gradient taken with
    create_graph, and the penalty (|grad|_2 - 1)^2 backpropagated to the critic's weights, as
    WGAN-GP trains: every weight's gradient as torch 1.13's."""
    rng = np.random.default_rng(5)
    weights = [rng.standard_normal(shape).astype(np.float32) * 0.5
               for shape in [(8, 3), (8,), (1, 8), (1,)]]
    points = rng.standard_normal((6, 3)).astype(np.float32)

    def run(lib):
        critic = lib.nn.Sequential(lib.nn.Linear(3, 8), lib.nn.ReLU(), lib.nn.Linear(8, 1),
                                   lib.nn.Sigmoid())
        for parameter, value in zip(critic.parameters(), weights):
            parameter.data = lib.tensor(value)
        x = lib.tensor(points, requires_grad=True)
        (grad,) = lib.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = (((grad * grad).sum(1) + 1e-12).sqrt() - 1.0).pow(2).mean()
        penalty.backward()
        return [grad] + [p.grad for p in critic.parameters()]
    for a, b in zip(*both(run)):
        close(a, b, atol=1e-6)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_second_derivative_through_gelu_matches_torch(approximate):
    """A penalty on the input gradient of Linear -> GELU -> Linear (create_graph through GELU's
    backward, exact and tanh forms): the weights' gradients as torch 1.13's."""
    rng = np.random.default_rng(6)
    weights = [rng.standard_normal(shape).astype(np.float32) * 0.7
               for shape in [(5, 3), (5,), (2, 5), (2,)]]
    points = rng.standard_normal((4, 3)).astype(np.float32) * 2

    def run(lib):
        net = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.GELU(approximate=approximate),
                                lib.nn.Linear(5, 2))
        for parameter, value in zip(net.parameters(), weights):
            parameter.data = lib.tensor(value)
        x = lib.tensor(points, requires_grad=True)
        (grad,) = lib.autograd.grad((net(x) ** 2).sum(), x, create_graph=True)
        (grad * grad).sum().backward()
        return [grad] + [p.grad for p in net.parameters()]
    for a, b in zip(*both(run)):
        close(a, b, atol=1e-5)


def test_physics_informed_second_derivatives_through_tanh_exp_sqrt_match_torch():
    """A PINN-style residual u'' + u with u a tanh MLP of t (second derivative by two
    create_graph grads through tanh's saved output), plus exp, sqrt and reciprocal's saved
    outputs: the residual and every weight's gradient as torch 1.13's."""
    rng = np.random.default_rng(8)
    weights = [rng.standard_normal(shape).astype(np.float32) * 0.8
               for shape in [(6, 1), (6,), (1, 6), (1,)]]
    times = np.linspace(0.1, 1.0, 5, dtype=np.float32).reshape(5, 1)

    def run(lib):
        net = lib.nn.Sequential(lib.nn.Linear(1, 6), lib.nn.Tanh(), lib.nn.Linear(6, 1))
        for parameter, value in zip(net.parameters(), weights):
            parameter.data = lib.tensor(value)
        t = lib.tensor(times, requires_grad=True)
        u = net(t)
        (du,) = lib.autograd.grad(u.sum(), t, create_graph=True)
        (d2u,) = lib.autograd.grad(du.sum(), t, create_graph=True)
        other = lib.exp(t * 0.5) + lib.sqrt(t + 1.0) + lib.reciprocal(t + 2.0)
        (dother,) = lib.autograd.grad(other.sum(), t, create_graph=True)
        residual = ((d2u + u) ** 2).mean() + (dother ** 2).mean()
        residual.backward()
        return [d2u, dother, t.grad] + [p.grad for p in net.parameters()]
    for a, b in zip(*both(run)):
        close(a, b, atol=1e-5)


def test_anomaly_detection_names_the_node_and_inference_mode():
    x = kael.tensor([-1.0, 4.0], requires_grad=True)
    with kael.autograd.detect_anomaly():
        with pytest.raises(ValueError, match="nan values"):
            kael.sqrt(x).sum().backward()
    assert not kael.autograd.is_anomaly_enabled()
    kael.sqrt(x).sum().backward()  # off: no check, as PyTorch
    with kael.inference_mode():
        assert not (x * 2).requires_grad
    with kael.inference_mode(False):
        assert (x * 2).requires_grad

    @kael.inference_mode()
    def infer():
        return x * 2
    assert not infer().requires_grad


def test_checkpoint_gives_the_plain_gradients():
    kael.manual_seed(0)
    model = kael.nn.Sequential(kael.nn.Linear(3, 8), kael.nn.GELU(), kael.nn.Linear(8, 2))
    x = kael.tensor(DATA, requires_grad=True)
    model(x).square().sum().backward()
    plain = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    out = kael.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
    out.square().sum().backward()
    for a, b in zip(plain, [p.grad for p in model.parameters()] + [x.grad]):
        np.testing.assert_allclose(np.array(a.tolist()), np.array(b.tolist()), rtol=1e-6)
    data = kael.tensor(DATA)  # no input requires grad: the parameters still get theirs
    model.zero_grad()
    kael.utils.checkpoint.checkpoint(model, data).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    dropout = kael.nn.Dropout(0.5)
    y = kael.ones(1000, requires_grad=True)
    out = kael.utils.checkpoint.checkpoint(dropout, y)
    out.sum().backward()
    assert y.grad.tolist() == (out.detach() != 0).float().mul(2.0).tolist()  # same mask again


def second_order(lib, make, inputs):
    """The gradient of sum(weighted f(inputs)) with create_graph, then the gradients of
    sum(grad^2 + grad) with respect to every input: the path of a gradient penalty."""
    leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in inputs]
    out = make(lib, *leaves)
    weights = lib.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)),
                         dtype=lib.float64)
    grads = lib.autograd.grad((out * weights).sum(), leaves, create_graph=True)
    total = sum((g * g + g).sum() for g in grads)
    return list(grads) + list(lib.autograd.grad(total, leaves, allow_unused=True))


def assert_same_second_order(make, inputs):
    got, want = second_order(kael, make, inputs), second_order(torch, make, inputs)
    for a, b in zip(got, want):
        if b is None:
            assert a is None or np.allclose(a.tolist(), 0.0)
            continue
        np.testing.assert_allclose(np.array(a.tolist()), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-12)


RNG = np.random.default_rng(5)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_create_graph_through_softmax_and_log_softmax(dim):
    x = RNG.standard_normal((3, 4, 5))
    assert_same_second_order(lambda lib, a: lib.softmax(a, dim), [x])
    assert_same_second_order(
        lambda lib, a: (lib.log_softmax if lib is kael else torch.log_softmax)(a, dim), [x])


def test_create_graph_through_layer_norm_and_silu():
    x, w, b = RNG.standard_normal((2, 3, 6)), RNG.standard_normal(6), RNG.standard_normal(6)
    assert_same_second_order(
        lambda lib, a, weight, bias: lib.nn.functional.layer_norm(a, (6,), weight, bias, 1e-5),
        [x, w, b])
    assert_same_second_order(lambda lib, a: lib.nn.functional.layer_norm(a, (6,)), [x])
    assert_same_second_order(lambda lib, a: lib.nn.functional.silu(a), [x])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_create_graph_through_cross_entropy(reduction):
    logits = RNG.standard_normal((4, 7))
    targets = [3, 0, 6, 3]
    assert_same_second_order(
        lambda lib, a: lib.nn.functional.cross_entropy(a, lib.tensor(targets),
                                                       reduction=reduction).reshape(-1),
        [logits])


@pytest.mark.parametrize("causal", [False, True])
def test_create_graph_through_fused_attention(causal):
    """kael's fused scaled_dot_product_attention beside torch 1.13's explicit formula (1.13 has
    no fused attention)."""
    q, k, v = (RNG.standard_normal((1, 2, 5, 4)) for _ in range(3))

    def attention(lib, query, key, value):
        if lib is kael:
            return kael.nn.functional.scaled_dot_product_attention(query, key, value,
                                                                   is_causal=causal)
        scores = query @ key.transpose(-2, -1) / 2.0
        if causal:
            scores = scores.masked_fill(torch.ones(5, 5).triu(1).bool(), float("-inf"))
        return torch.softmax(scores, -1) @ value
    assert_same_second_order(attention, [q, k, v])


REDUCTIONS = {
    "logsumexp": lambda lib, a: lib.logsumexp(a, 1),
    "var": lambda lib, a: a.var(dim=1),
    "std": lambda lib, a: a.std(dim=0),
    "std_all": lambda lib, a: a.std().reshape(1),
    "norm2": lambda lib, a: a.norm(dim=1),
    "norm3": lambda lib, a: (lib.linalg.vector_norm(a, 3, dim=1)),
    "prod": lambda lib, a: a.prod(dim=1),
    "amax": lambda lib, a: (a * a).amax(dim=1),  # (the extremum's own second derivative is 0)
    "max_dim": lambda lib, a: (a * a).max(dim=0).values,
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_create_graph_through_reductions(name):
    x = RNG.standard_normal((3, 5)) + 0.5  # no ties, no zeros
    assert_same_second_order(REDUCTIONS[name], [x])
