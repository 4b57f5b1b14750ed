"""backward, grad, requires_grad, no_grad, gradcheck."""
import numpy as np
import pytest

import kael


def test_backward_accumulates_into_leaves():
    x = kael.arange(0, 12, dtype="f32").view(4, 3)
    w = kael.ones(3, 2, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad is None and w.grad_fn is None
    loss = kael.relu(x @ w).sum()
    assert not loss.is_leaf and loss.grad_fn.endswith("Backward")
    loss.backward()
    expected = x.numpy().T @ np.ones((4, 2), dtype=np.float32)
    np.testing.assert_allclose(w.grad.numpy(), expected)
    (x @ w).sum().backward()  # a second graph adds to grad
    np.testing.assert_allclose(w.grad.numpy(), 2 * expected)
    w.grad = None
    assert w.grad is None


def test_backward_with_gradient_and_retain_graph():
    x = kael.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(kael.tensor([1.0, 0.0, 2.0]), retain_graph=True)
    assert x.grad.tolist() == [2.0, 0.0, 12.0]
    y.backward(gradient=kael.ones(3))
    assert x.grad.tolist() == [4.0, 4.0, 18.0]
    with pytest.raises(RuntimeError):
        y.backward(kael.ones(3))  # saved tensors were released
    with pytest.raises(ValueError):
        y.backward()  # more than one element needs a gradient


def test_requires_grad_property_and_detach():
    t = kael.ones(2)
    t.requires_grad = True
    assert t.requires_grad
    assert t.detach().requires_grad is False
    assert kael.zeros(2).requires_grad_().requires_grad
    with pytest.raises(TypeError):
        kael.ones(2, dtype="i64").requires_grad = True


def test_no_grad_context_and_decorator():
    w = kael.ones(2, requires_grad=True)
    with kael.no_grad():
        assert not kael.is_grad_enabled()
        y = w * 2
        with kael.enable_grad():
            assert kael.is_grad_enabled()
    assert kael.is_grad_enabled() and not y.requires_grad

    @kael.no_grad()
    def update(parameter):
        assert not kael.is_grad_enabled()
        parameter -= 0.5
        return parameter

    update(w)
    assert w.tolist() == [0.5, 0.5] and w.is_leaf and kael.is_grad_enabled()
    kael.set_grad_enabled(False)
    assert not kael.is_grad_enabled()
    kael.set_grad_enabled(True)
    with kael.set_grad_enabled(False):
        assert not kael.is_grad_enabled()
    assert kael.is_grad_enabled()


def test_gradcheck_passes_and_fails():
    a = kael.randn(3, 4, dtype="f64", requires_grad=True)
    b = kael.randn(4, 2, dtype="f64", requires_grad=True)
    assert kael.autograd.gradcheck(lambda x, y: kael.tanh(x @ y).sum(), (a, b))
    assert kael.autograd.gradcheck(lambda x: kael.softmax(x, 1), [a])
    assert kael.autograd.gradcheck(lambda x: (x * x).sum(), a)

    wrong = kael.ones(3, dtype="f64", requires_grad=True)

    def detached_square(x):  # the detach hides x*x from the graph: gradient 0 vs 2x
        return (x.detach() * x.detach() + x * 0).sum()
    assert not kael.autograd.gradcheck(detached_square, wrong, raise_exception=False)
    with pytest.raises(ValueError):
        kael.autograd.gradcheck(detached_square, wrong)


def test_autograd_backward_function_and_sum_to():
    x = kael.ones(2, 3, requires_grad=True)
    kael.autograd.backward((x * 3).sum())
    assert x.grad.tolist() == [[3.0] * 3] * 2
    assert kael.autograd._sum_to(kael.ones(4, 2, 3), (2, 3)).tolist() == [[4.0] * 3] * 2


def test_grad_through_views_and_indexing():
    x = kael.arange(0, 6, dtype="f32").requires_grad_()
    y = x.view(2, 3)[:, 1:].sum() + x[0] * 2
    y.backward()
    assert x.grad.tolist() == [2.0, 1.0, 1.0, 0.0, 1.0, 1.0]


# In-place writes to tensors autograd saved raise PyTorch's error instead of giving wrong grads.
IN_PLACE_ERROR = (r"one of the variables needed for gradient computation has been modified by "
                  r"an inplace operation: \[\[3\] f32\].* is at version \d+; expected version "
                  r"\d+ instead")


def test_saved_input_modified_in_place_raises(device):
    x = kael.ones(3, requires_grad=True, device=device)
    a = x * 1
    y = a * a
    a.fill_(5.)
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        y.sum().backward()
    assert x.grad is None


def test_leaf_modified_under_no_grad_before_backward_raises(device):
    x = kael.ones(3, requires_grad=True, device=device)
    y = (x * x).sum()
    with kael.no_grad():
        x.fill_(3.)  # what an optimizer step between forward and backward does
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        y.backward()


def test_saved_output_modified_in_place_raises(device):
    x = kael.ones(3, requires_grad=True, device=device)
    a = kael.exp(x)  # exp saves its output
    b = a * 1
    a *= 2
    with pytest.raises(RuntimeError, match=IN_PLACE_ERROR):
        b.sum().backward()


def test_version_counts_writes_through_any_view(device):
    base = kael.zeros(4, device=device)
    view = base[1:3]
    before = base._version
    view.fill_(1.)
    view += 1
    assert base._version > before and view._version == base._version
    reading = base._version
    _ = base * 2
    assert base._version == reading


def test_in_place_on_unsaved_intermediates_and_optimizer_steps_still_work(device):
    x = kael.full([3], 2.0, requires_grad=True, device=device)
    h = x * x
    h *= 3  # mul saves only what the other operand's gradient needs: nothing of h
    h += 1
    h /= 2
    h.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
    optimizer = kael.optim.SGD([x], lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        (x * x).sum().backward()
        optimizer.step()  # writes x in place; the graph that saved x is gone
    assert x.grad is not None


def test_python_threads_calling_backward_into_one_leaf_are_exact(device):
    import threading
    shared = kael.ones(4, requires_grad=True, device=device)
    threads, iterations = 8, 50
    failures = []

    def work():
        try:
            for _ in range(iterations):
                (shared * 1.0).sum().backward()
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not failures
    assert shared.grad.tolist() == [float(threads * iterations)] * 4


def test_in_place_multiply_by_a_tensor_that_requires_grad_is_exact(device):
    x = kael.full([3], 3.0, requires_grad=True, device=device)
    w = kael.full([3], 2.0, requires_grad=True, device=device)
    a = x * 1
    a *= w  # w's gradient reads a's value before the write
    a.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0, 3.0]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
