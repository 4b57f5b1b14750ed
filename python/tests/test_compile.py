"""kael.compile over device graphs (torch.compile's mode="reduce-overhead"), on every device
whose plugin records them (the emulated cuda:0 here, a GPU where there is one): recorded once per
input signature after a warm-up call, replayed with the inputs copied in and the outputs copied
out; and the calls it must run eagerly, each with its reason."""
import warnings

import pytest

import kael

CONFIG = dict(vocab_size=40, block_size=16, layers=2, heads=4, embed=32)



def gpt(device):
    kael.manual_seed(3)
    model = kael.nn.GPT(kael.nn.GPTConfig(**CONFIG)).to(device)
    model.eval()
    return model


def tokens(seed, batch, length, device):
    kael.manual_seed(seed)
    return kael.randint(0, CONFIG["vocab_size"], (batch, length)).to(device)


def test_gpt_forward_replays_and_matches_eager(graph_device):
    model = gpt(graph_device)
    compiled = kael.compile(model)
    with kael.no_grad():
        first = tokens(1, 2, 9, graph_device)
        want = model(first)
        outputs = [compiled(first) for _ in range(3)]  # warm-up, record + replay, replay
        assert compiled.reason is None
        for out in outputs:
            assert out.shape == want.shape and (out - want).abs().max().item() == 0.0
        # new values, same signature: the replay reads them
        second = tokens(2, 2, 9, graph_device)
        got = compiled(second)
        assert (got - model(second)).abs().max().item() == 0.0
        assert (outputs[2] - want).abs().max().item() == 0.0  # outputs are copies, kept
        assert len(compiled._compiled_call.recordings) == 1
        # a new shape is a new recording
        third = tokens(3, 1, 5, graph_device)
        for _ in range(2):
            assert (compiled(third) - model(third)).abs().max().item() == 0.0
        assert len(compiled._compiled_call.recordings) == 2


def test_functions_compile_too_and_keep_their_output_structure(graph_device):
    @kael.compile
    def stats(x, scale=2.0):
        y = kael.softmax(x * scale, -1)
        return {"max": y.amax(-1), "pair": (y.sum(-1), x + 1)}

    x = kael.arange(12.0).reshape(3, 4).to(graph_device)
    with kael.no_grad():
        for _ in range(3):
            got = stats(x, scale=0.5)
        want = stats.__wrapped__(x, scale=0.5)
    assert stats.compiled.reason is None
    assert got["max"].tolist() == want["max"].tolist()
    assert got["pair"][1].tolist() == want["pair"][1].tolist()


def test_what_cannot_be_recorded_runs_eagerly_with_its_reason(graph_device):
    model = gpt(graph_device)
    compiled = kael.compile(model)
    x = tokens(4, 1, 6, graph_device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = compiled(x).sum()  # grad mode on, parameters require grad
        assert "autograd history" in compiled.reason
        loss.backward()  # the eager call kept its graph
        assert model.parameters()[0].grad is not None

        @kael.compile
        def reads_back(t):
            return t * float(t.sum().item())
        t = kael.ones(3).to(graph_device)
        with kael.no_grad():
            for _ in range(3):
                assert reads_back(t).tolist() == [3.0, 3.0, 3.0]
        assert "recording failed" in reads_back.compiled.reason

        w = kael.ones(3).to(graph_device).requires_grad_()
        optimizer = kael.optim.Adam([w], lr=0.1, capturable=False)  # the count on the host

        @kael.compile
        def step(g):
            w.grad = g
            optimizer.step()
            return w.detach() * 1
        with kael.no_grad():
            for _ in range(3):
                step(kael.ones(3).to(graph_device))
        assert "Adam.step: an optimizer step inside" in step.compiled.reason
        assert optimizer.state[w]["step"] == 3.0  # every eager step counted
    with pytest.raises(RuntimeError, match="fullgraph=True.*autograd history"):
        kael.compile(model, fullgraph=True)(x)
