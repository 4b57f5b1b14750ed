"""nn.TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder
and Transformer against torch 1.13 on every device kael lists: the same state_dict keys, torch's
weights loaded, then outputs and every gradient in float64 (post- and pre-norm, relu and gelu,
batch_first, causal and padding masks); and the square subsequent mask."""
import numpy as np
import pytest

import kael

torch = pytest.importorskip("torch")


def close(got, want, tol=1e-9):
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got.detach().cpu().tolist()).reshape(tuple(got.shape)),
                               want.detach().numpy(), rtol=tol, atol=tol)


def twin(name, device, *args, **kwargs):
    torch.manual_seed(0)
    reference = getattr(torch.nn, name)(*args, **kwargs, dropout=0.0, dtype=torch.float64)
    layer = getattr(kael.nn, name)(*args, **kwargs, dropout=0.0, dtype=kael.float64)
    assert list(layer.state_dict()) == list(reference.state_dict())
    layer.load_state_dict({k: kael.tensor(v.detach().numpy())
                           for k, v in reference.state_dict().items()})
    return layer.to(device), reference


def inputs(device, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s) for s in shapes]
    return ([kael.tensor(v).to(device).requires_grad_(True) for v in values],
            [torch.tensor(v, requires_grad=True) for v in values])


@pytest.mark.parametrize("options", [dict(), dict(norm_first=True, activation="gelu"),
                                     dict(batch_first=True)])
def test_encoder_layer_matches_torch(device, options):
    layer, reference = twin("TransformerEncoderLayer", device, 8, 2, dim_feedforward=16,
                            **options)
    (kx,), (tx,) = inputs(device, (3, 4, 8))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4 if options.get("batch_first")
                                                                else 3).double()
    padding = torch.tensor([[False, False, True, False]] * 3) if not options.get(
        "batch_first") else torch.tensor([[False, False, True, False]] * 3)
    kmask = kael.tensor(mask.numpy()).to(device)
    kpadding = kael.tensor(padding.numpy()).to(device)
    if options.get("batch_first"):
        got = layer(kx, src_mask=kmask, src_key_padding_mask=kpadding)
        want = reference(tx, src_mask=mask, src_key_padding_mask=padding)
    else:
        got, want = layer(kx, src_mask=kmask), reference(tx, src_mask=mask)
    close(got, want)
    got.sum().backward()
    want.sum().backward()
    close(kx.grad, tx.grad)
    for (name, p), (_, q) in zip(layer.named_parameters(), reference.named_parameters()):
        close(p.grad, q.grad)


def test_transformer_matches_torch(device):
    model, reference = twin("Transformer", device, d_model=8, nhead=2, num_encoder_layers=2,
                            num_decoder_layers=2, dim_feedforward=16)
    (ks, kt), (ts, tt) = inputs(device, (5, 2, 8), (4, 2, 8))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4).double()
    got = model(ks, kt, tgt_mask=kael.tensor(mask.numpy()).to(device))
    want = reference(ts, tt, tgt_mask=mask)
    close(got, want)
    got.sum().backward()
    want.sum().backward()
    close(ks.grad, ts.grad)
    close(kt.grad, tt.grad)
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        close(p.grad, q.grad)


def test_square_subsequent_mask_and_errors():
    got = kael.nn.Transformer.generate_square_subsequent_mask(3)
    want = torch.nn.Transformer.generate_square_subsequent_mask(3)
    assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="activation"):
        kael.nn.TransformerEncoderLayer(8, 2, activation="swish")
