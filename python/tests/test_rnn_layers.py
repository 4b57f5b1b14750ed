"""RNN, LSTM, GRU and their cells against torch 1.13 on every device kael lists: torch's
weights loaded into kael's layer by name, then outputs, final states and the gradients of the
input, the initial states and every parameter in float64 (layers, both directions,
batch_first, proj_size, unbatched inputs, relu); and names, printouts and errors."""
import numpy as np
import pytest

import kael

torch = pytest.importorskip("torch")


def to_kael(t, device):
    return kael.tensor(t.detach().numpy()).to(device)


def close(got, want, tol=1e-9):
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.detach().cpu().tolist()).reshape(tuple(got.shape)),
                               want.detach().numpy(), rtol=tol, atol=tol)


def twin(name, device, *args, **kwargs):
    torch.manual_seed(0)
    reference = getattr(torch.nn, name)(*args, **kwargs, dtype=torch.float64)
    layer = getattr(kael.nn, name)(*args, **kwargs, dtype=kael.float64)
    assert [n for n, _ in layer.named_parameters()] == \
        [n for n, _ in reference.named_parameters()]
    assert repr(layer) == repr(reference)
    layer.load_state_dict({k: to_kael(v, "cpu") for k, v in reference.state_dict().items()})
    return layer.to(device), reference


LAYERS = [
    ("LSTM", (6, 5), dict(), (4, 3, 6)),
    ("LSTM", (6, 5), dict(num_layers=2, bidirectional=True, batch_first=True), (3, 4, 6)),
    ("LSTM", (6, 5), dict(proj_size=3, num_layers=2), (4, 2, 6)),
    ("LSTM", (6, 5), dict(bias=False), (4, 6)),  # unbatched
    ("GRU", (6, 5), dict(num_layers=2, bidirectional=True), (4, 3, 6)),
    ("GRU", (6, 5), dict(batch_first=True), (3, 4, 6)),
    ("RNN", (6, 5), dict(nonlinearity="relu", num_layers=2), (4, 3, 6)),
    ("RNN", (6, 5), dict(bidirectional=True), (4, 6)),
]


@pytest.mark.parametrize("name,args,options,shape", LAYERS)
@pytest.mark.parametrize("given_state", [False, True])
def test_recurrent_layers_match_torch(device, name, args, options, shape, given_state):
    layer, reference = twin(name, device, *args, **options)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    kx = kael.tensor(x).to(device).requires_grad_(True)
    directions = 2 if options.get("bidirectional") else 1
    stacks = options.get("num_layers", 1) * directions
    batch = [] if len(shape) == 2 else [shape[0] if options.get("batch_first") else shape[1]]
    out_size = options.get("proj_size") or args[1]
    t_state = k_state = None
    if given_state:
        h = rng.standard_normal([stacks, *batch, out_size])
        states = [h] + ([rng.standard_normal([stacks, *batch, args[1]])] if name == "LSTM" else [])
        t_states = [torch.tensor(s, requires_grad=True) for s in states]
        k_states = [kael.tensor(s).to(device).requires_grad_(True) for s in states]
        t_state = tuple(t_states) if name == "LSTM" else t_states[0]
        k_state = tuple(k_states) if name == "LSTM" else k_states[0]
    got, got_final = layer(kx, k_state)
    want, want_final = reference(tx, t_state)
    close(got, want)
    got_parts = list(got_final) if name == "LSTM" else [got_final]
    want_parts = list(want_final) if name == "LSTM" else [want_final]
    for g, w in zip(got_parts, want_parts):
        close(g, w)
    weights = [rng.standard_normal(tuple(p.shape)) for p in [want] + want_parts]
    (sum((t * torch.tensor(w)).sum() for t, w in zip([want] + want_parts, weights))).backward()
    (sum((t * kael.tensor(w).to(device)).sum()
         for t, w in zip([got] + got_parts, weights))).backward()
    close(kx.grad, tx.grad)
    for (n, p), (_, q) in zip(layer.named_parameters(), reference.named_parameters()):
        close(p.grad, q.grad)
    if given_state:
        for k, t in zip(k_states, t_states):
            close(k.grad, t.grad)


@pytest.mark.parametrize("name,options", [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
                                          ("RNNCell", dict(nonlinearity="relu")),
                                          ("LSTMCell", dict(bias=False))])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(device, name, options, batched):
    layer, reference = twin(name, device, 4, 3, **options)
    rng = np.random.default_rng(2)
    shape = (2, 4) if batched else (4,)
    x = rng.standard_normal(shape)
    h = rng.standard_normal(shape[:-1] + (3,))
    tx, th = torch.tensor(x, requires_grad=True), torch.tensor(h, requires_grad=True)
    kx = kael.tensor(x).to(device).requires_grad_(True)
    kh = kael.tensor(h).to(device).requires_grad_(True)
    if name == "LSTMCell":
        c = rng.standard_normal(shape[:-1] + (3,))
        got = layer(kx, (kh, kael.tensor(c).to(device)))
        want = reference(tx, (th, torch.tensor(c)))
        got, want = got[0] + 2 * got[1], want[0] + 2 * want[1]
    else:
        got, want = layer(kx, kh), reference(tx, th)
    close(got, want)
    got.sum().backward()
    want.sum().backward()
    close(kx.grad, tx.grad)
    close(kh.grad, th.grad)
    for (_, p), (_, q) in zip(layer.named_parameters(), reference.named_parameters()):
        close(p.grad, q.grad)


def test_dropout_between_layers_and_attributes():
    lstm = kael.nn.LSTM(4, 8, num_layers=3, dropout=0.5)
    assert (lstm.input_size, lstm.hidden_size, lstm.num_layers, lstm.dropout) == (4, 8, 3, 0.5)
    x = kael.randn(5, 2, 4)
    lstm.eval()
    first, _ = lstm(x)
    second, _ = lstm(x)
    assert first.tolist() == second.tolist()  # no dropout in eval
    lstm.train()
    assert lstm(x)[0].shape == (5, 2, 8)


def test_errors_name_the_layer():
    with pytest.raises(ValueError, match="input size 5 is not input_size 4"):
        kael.nn.LSTM(4, 8)(kael.randn(3, 2, 5))
    with pytest.raises(ValueError, match="hidden state"):
        kael.nn.GRU(4, 8)(kael.randn(3, 2, 4), kael.zeros(1, 3, 8))
    with pytest.raises(ValueError, match="nonlinearity"):
        kael.nn.RNN(4, 8, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size"):
        kael.nn.LSTM(4, 8, proj_size=8)
    with pytest.raises(TypeError, match="LSTM: hx"):
        kael.nn.LSTM(4, 8)(kael.randn(3, 2, 4), kael.zeros(1, 2, 8))


@pytest.mark.parametrize("name,options", [("LSTM", dict(num_layers=2, bidirectional=True)),
                                          ("GRU", dict(batch_first=True)),
                                          ("LSTM", dict(proj_size=3)),
                                          ("RNN", dict(bidirectional=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_torch(device, name, options, enforce_sorted):
    layer, reference = twin(name, device, 4, 5, **options)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    rng = np.random.default_rng(4)
    first = options.get("batch_first", False)
    shape = (4, 5, 4) if first else (5, 4, 4)
    x = rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    kx = kael.tensor(x).to(device).requires_grad_(True)
    t_rnn, k_rnn = torch.nn.utils.rnn, kael.nn.utils.rnn
    t_packed = t_rnn.pack_padded_sequence(tx, torch.tensor(lengths), batch_first=first,
                                          enforce_sorted=enforce_sorted)
    k_packed = k_rnn.pack_padded_sequence(kx, lengths, batch_first=first,
                                          enforce_sorted=enforce_sorted)
    assert k_packed.batch_sizes.tolist() == t_packed.batch_sizes.tolist()
    close(k_packed.data, t_packed.data)
    k_out, k_final = layer(k_packed)
    t_out, t_final = reference(t_packed)
    assert isinstance(k_out, k_rnn.PackedSequence)
    k_padded, k_lengths = k_rnn.pad_packed_sequence(k_out, batch_first=first, total_length=6)
    t_padded, t_lengths = t_rnn.pad_packed_sequence(t_out, batch_first=first, total_length=6)
    assert k_lengths.tolist() == t_lengths.tolist()
    close(k_padded, t_padded)
    k_parts = list(k_final) if name == "LSTM" else [k_final]
    t_parts = list(t_final) if name == "LSTM" else [t_final]
    for k, t in zip(k_parts, t_parts):
        close(k, t)
    (k_padded.sum() + sum(k.sum() for k in k_parts)).backward()
    (t_padded.sum() + sum(t.sum() for t in t_parts)).backward()
    close(kx.grad, tx.grad)
    for (_, p), (_, q) in zip(layer.named_parameters(), reference.named_parameters()):
        close(p.grad, q.grad)


def test_pad_and_pack_sequence_match_torch():
    seqs = [[1.0, 2.0, 3.0], [4.0], [5.0, 6.0]]
    k = [kael.tensor(s) for s in seqs]
    t = [torch.tensor(s) for s in seqs]
    for first in (False, True):
        assert kael.nn.utils.rnn.pad_sequence(k, batch_first=first, padding_value=-1).tolist() \
            == torch.nn.utils.rnn.pad_sequence(t, batch_first=first, padding_value=-1).tolist()
    kp = kael.nn.utils.rnn.pack_sequence(k, enforce_sorted=False)
    tp = torch.nn.utils.rnn.pack_sequence(t, enforce_sorted=False)
    assert kp.data.tolist() == tp.data.tolist()
    assert kp.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert kp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    with pytest.raises(ValueError, match="sorted longest first"):
        kael.nn.utils.rnn.pack_sequence(k)


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell"])
def test_fused_cell_gradients_differentiate_twice_as_torch(device, name):
    """The fused cells (the plugin's KAEL_EXTENSION_RECURRENT, one launch a step) pass gradcheck
    in float64, and a gradient taken with create_graph differentiates again (through the
    composed cell) to torch's second derivatives."""
    layer, reference = twin(name, device, 5, 7)
    x = kael.randn(3, 5, dtype=kael.float64, device=device).requires_grad_(True)
    h = kael.randn(3, 7, dtype=kael.float64, device=device).requires_grad_(True)
    c = kael.randn(3, 7, dtype=kael.float64, device=device).requires_grad_(True)

    def combined(x, h, c):
        if name == "GRUCell":
            return layer(x, h) * c
        hidden, cell = layer(x, (h, c))
        return hidden * 1.5 + cell * cell
    assert kael.autograd.gradcheck(combined, (x, h, c))

    def squared(out):
        return (out * out).sum() if name == "GRUCell" else (out[0] * out[0]).sum() + out[1].sum()
    tx = torch.tensor(x.detach().cpu().tolist(), dtype=torch.float64, requires_grad=True)
    grad, = kael.autograd.grad(squared(layer(x)), [x], create_graph=True)
    t_grad, = torch.autograd.grad(squared(reference(tx)), [tx], create_graph=True)
    close(grad, t_grad)
    (grad * grad).sum().backward()
    (t_grad * t_grad).sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_recurrent_layers_in_low_precision_track_float32(device, name, dtype):
    """An LSTM or GRU run in bfloat16 or float16 (the fused cell computing in float32 and
    storing the dtype) stays within the dtype's rounding of the float32 run, forward and
    backward."""
    kael.manual_seed(3)
    layer = getattr(kael.nn, name)(8, 16, num_layers=2).to(device)
    x = kael.randn(5, 4, 8, device=device)
    want, _ = layer(x)
    low = getattr(kael, dtype)
    layer.to(low)
    x_low = x.to(low).requires_grad_(True)
    got, _ = layer(x_low)
    assert got.dtype == low
    np.testing.assert_allclose(got.float().detach().cpu().numpy(),
                               want.detach().cpu().numpy(), atol=0.05)
    got.float().sum().backward()
    assert x_low.grad.dtype == low
    assert np.isfinite(x_low.grad.float().cpu().numpy()).all()


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
def test_fused_layers_are_one_node_that_differentiates_twice(device, name):
    """Without packed lengths or a projection, each direction of a layer is one autograd node
    on the plugin's cells (its hidden weights' gradient one product over every step): it passes
    gradcheck in float64 through the outputs or the final state alone, and a gradient taken
    with create_graph differentiates again (through the composed steps) to torch's."""
    layer, reference = twin(name, device, 3, 4, bidirectional=True)
    x = kael.randn(5, 2, 3, dtype=kael.float64, device=device).requires_grad_(True)
    h = kael.randn(2, 2, 4, dtype=kael.float64, device=device).requires_grad_(True)
    state = (h, h * 0.5) if name == "LSTM" else h
    one_way = getattr(kael.nn, name)(3, 4, dtype=kael.float64).to(device)
    assert one_way(x)[0].grad_fn == name.capitalize() + "LayerBackward"

    def outputs_only(x, h):
        return layer(x, (h, h * 0.5) if name == "LSTM" else h)[0]

    def final_only(x, h):
        final = layer(x, (h, h * 0.5) if name == "LSTM" else h)[1]
        return final[1] * final[0] if name == "LSTM" else final
    assert kael.autograd.gradcheck(outputs_only, (x, h))
    assert kael.autograd.gradcheck(final_only, (x, h))

    tx = torch.tensor(x.detach().cpu().tolist(), dtype=torch.float64, requires_grad=True)
    th = torch.tensor(h.detach().cpu().tolist(), dtype=torch.float64)
    t_state = (th, th * 0.5) if name == "LSTM" else th
    grad, = kael.autograd.grad((layer(x, state)[0] ** 2).sum(), [x], create_graph=True)
    t_grad, = torch.autograd.grad((reference(tx, t_state)[0] ** 2).sum(), [tx],
                                  create_graph=True)
    close(grad, t_grad)
    (grad * grad).sum().backward()
    (t_grad * t_grad).sum().backward()
    close(x.grad, tx.grad)
    # A sum's gradient reaches the outputs expanded (stride 0), as most training loops send it.
    x.grad = None
    tx.grad = None
    layer(x, (h, h * 0.5) if name == "LSTM" else h)[0].sum().backward()
    reference(tx, t_state)[0].sum().backward()
    close(x.grad, tx.grad)
