"""Convolution, pooling, normalisation and resampling (kael.nn.Conv1d-3d, pools, BatchNorm,
GroupNorm, InstanceNorm, interpolate, pad modes, unfold, pixel_shuffle) against torch 1.13 on
every device kael lists: values and the gradients of every input in float64, on contiguous,
transposed (strided), unbatched and empty-batch inputs; and the layers' attributes, printouts
and state_dict keys."""
import numpy as np
import pytest

import kael
import kael.nn.functional as KF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def pair(shape, device, seed, strided=False, dtype="float64"):
    """The same float64 values as a kael tensor on device and a torch tensor, both requiring
    grad; strided: a transposed view of a tensor with the last two dims swapped."""
    rng = np.random.default_rng(seed)
    if strided and len(shape) >= 2:
        swapped = list(shape[:-2]) + [shape[-1], shape[-2]]
        values = rng.standard_normal(swapped).swapaxes(-1, -2)
    else:
        values = rng.standard_normal(shape)
    values = values.astype(dtype)
    k = kael.tensor(np.ascontiguousarray(values)).to(device)
    if strided and len(shape) >= 2:
        k = kael.tensor(np.ascontiguousarray(values.swapaxes(-1, -2))).to(device).transpose(-1, -2)
    k.requires_grad_(True)
    t = torch.tensor(values).requires_grad_(True)
    return k, t


def close(got, want, tol=1e-9):
    assert tuple(got.shape) == tuple(want.shape)
    got = np.asarray(got.detach().cpu().tolist(), dtype=np.float64).reshape(tuple(got.shape))
    want = want.detach().numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def check(kael_fn, torch_fn, shapes, device, seed=0, strided=False, tol=1e-9, dtype="float64"):
    """Outputs and the gradients of every input equal torch's for a random output gradient."""
    pairs = [pair(s, device, seed + i, strided and i == 0, dtype) for i, s in enumerate(shapes)]
    got = kael_fn(*[k for k, _ in pairs])
    want = torch_fn(*[t for _, t in pairs])
    close(got, want, tol)
    if want.numel() == 0:
        return
    upstream = np.random.default_rng(seed + 99).standard_normal(tuple(want.shape)).astype(dtype)
    got.backward(kael.tensor(upstream).to(device))
    want.backward(torch.tensor(upstream))
    for (k, _), (_, t) in zip(pairs, pairs):
        close(k.grad, t.grad, tol)


CONV_CASES = [  # (dims, input shape, weight shape, options)
    (1, (2, 4, 9), (6, 4, 3), dict(stride=2, padding=1)),
    (1, (2, 4, 9), (4, 1, 3), dict(groups=4, dilation=2)),
    (1, (4, 9), (3, 4, 2), dict(padding="same")),
    (2, (2, 3, 7, 8), (5, 3, 3, 3), dict()),
    (2, (2, 3, 7, 8), (5, 3, 3, 2), dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))),
    (2, (2, 4, 6, 6), (6, 2, 3, 3), dict(groups=2, padding="same")),
    (2, (2, 4, 6, 6), (6, 4, 4, 4), dict(padding="same", dilation=2)),
    (2, (3, 6, 6), (2, 3, 1, 1), dict(padding="valid")),
    (2, (0, 3, 6, 6), (2, 3, 3, 3), dict(padding=1)),
    (3, (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), dict(stride=(1, 2, 2), padding=1)),
]


@pytest.mark.parametrize("dims,shape,weight,options", CONV_CASES)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])  # f32: oneDNN's path on cpu
def test_conv_matches_torch(device, dims, shape, weight, options, bias, dtype):
    kael_conv = getattr(KF, f"conv{dims}d")
    torch_conv = getattr(TF, f"conv{dims}d")
    shapes = [shape, weight] + ([(weight[0],)] if bias else [])
    check(lambda x, w, *b: kael_conv(x, w, b[0] if b else None, **options),
          lambda x, w, *b: torch_conv(x, w, b[0] if b else None, **options),
          shapes, device, strided=len(shape) > 2 and shape[0] > 0, dtype=dtype,
          tol=1e-9 if dtype == "float64" else 2e-4)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_layer_padding_modes_and_state(device, mode):
    torch.manual_seed(0)
    reference = torch.nn.Conv2d(3, 4, 3, padding=2, padding_mode=mode, dtype=torch.float64)
    layer = kael.nn.Conv2d(3, 4, 3, padding=2, padding_mode=mode, dtype=kael.float64)
    assert list(layer.state_dict()) == list(reference.state_dict()) == ["weight", "bias"]
    assert repr(layer) == repr(reference)
    assert (layer.kernel_size, layer.stride, layer.padding, layer.padding_mode) == \
        (reference.kernel_size, reference.stride, reference.padding, reference.padding_mode)
    layer.load_state_dict({k: kael.tensor(v.detach().numpy()) for k, v in
                           reference.state_dict().items()})
    layer.to(device)
    x, tx = pair((2, 3, 5, 6), device, 3)
    close(layer(x), reference(tx))


def test_conv_default_initialisation_bounds():
    layer = kael.nn.Conv2d(4, 8, 3, groups=2)
    bound = 1 / (2 * 9) ** 0.5  # 1/sqrt(fan_in), fan_in = in / groups * k * k
    assert layer.weight.shape == (8, 2, 3, 3) and layer.bias.shape == (8,)
    assert float(layer.weight.abs().max()) <= bound and float(layer.bias.abs().max()) <= bound


MAX_POOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
    (1, (3, 10), dict(kernel_size=2, ceil_mode=True, stride=3)),
    (2, (2, 3, 7, 9), dict(kernel_size=2)),
    (2, (2, 3, 7, 9), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 2, 9, 9), dict(kernel_size=(3, 2), stride=(2, 3), dilation=(2, 1))),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, stride=2, ceil_mode=True)),
]


@pytest.mark.parametrize("dims,shape,options", MAX_POOL_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])  # f32: oneDNN's pooling on cpu
def test_max_pool_matches_torch(device, dims, shape, options, dtype):
    kael_pool = getattr(KF, f"max_pool{dims}d")
    torch_pool = getattr(TF, f"max_pool{dims}d")
    check(lambda x: kael_pool(x, **options), lambda x: torch_pool(x, **options), [shape],
          device, strided=True, dtype=dtype, tol=1e-9 if dtype == "float64" else 1e-5)
    x, tx = pair(shape, device, 5)
    _, indices = kael_pool(x, return_indices=True, **options)
    _, want = torch_pool(tx, return_indices=True, **options)
    assert indices.cpu().tolist() == want.tolist()


def test_max_pool_gradient_goes_to_the_first_maximum_of_ties(device):
    x = kael.zeros(1, 1, 2, 4, requires_grad=True, device=device)
    tx = torch.zeros(1, 1, 2, 4, requires_grad=True)
    KF.max_pool2d(x, 2).sum().backward()
    TF.max_pool2d(tx, 2).sum().backward()
    assert x.grad.cpu().tolist() == tx.grad.tolist()


AVG_POOL_CASES = [
    (1, (2, 3, 11), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 7, 9), dict(kernel_size=2)),
    (2, (2, 3, 7, 9), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    (2, (2, 3, 8, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    (2, (2, 3, 8, 8), dict(kernel_size=3, stride=2, ceil_mode=True, count_include_pad=False)),
    (2, (2, 3, 6, 6), dict(kernel_size=2, divisor_override=3)),
    (3, (1, 2, 5, 6, 7), dict(kernel_size=2, padding=1)),
]


@pytest.mark.parametrize("dims,shape,options", AVG_POOL_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])  # f32: oneDNN's pooling on cpu
def test_avg_pool_matches_torch(device, dims, shape, options, dtype):
    kael_pool = getattr(KF, f"avg_pool{dims}d")
    torch_pool = getattr(TF, f"avg_pool{dims}d")
    check(lambda x: kael_pool(x, **options), lambda x: torch_pool(x, **options), [shape],
          device, strided=True, dtype=dtype, tol=1e-9 if dtype == "float64" else 1e-5)


@pytest.mark.parametrize("dims,shape,size", [(1, (2, 3, 10), 4), (2, (2, 3, 7, 9), (3, 4)),
                                             (2, (2, 3, 8, 8), (2, 4)), (2, (3, 5, 5), 1),
                                             (2, (2, 3, 7, 9), (None, 2)),
                                             (3, (1, 2, 5, 6, 7), (2, 3, 3))])
def test_adaptive_pools_match_torch(device, dims, shape, size):
    for name in ("adaptive_avg_pool", "adaptive_max_pool"):
        kael_pool = getattr(KF, f"{name}{dims}d")
        torch_pool = getattr(TF, f"{name}{dims}d")
        check(lambda x: kael_pool(x, size), lambda x: torch_pool(x, size), [shape], device)
    x, tx = pair(shape, device, 7)
    _, indices = getattr(KF, f"adaptive_max_pool{dims}d")(x, size, return_indices=True)
    _, want = getattr(TF, f"adaptive_max_pool{dims}d")(tx, size, return_indices=True)
    assert indices.cpu().tolist() == want.tolist()


@pytest.mark.parametrize("dims,shape,momentum", [(1, (8, 3), 0.1), (1, (4, 3, 5), None),
                                                 (2, (4, 3, 5, 5), 0.3), (3, (2, 2, 3, 3, 3), 0.1)])
def test_batch_norm_trains_and_evaluates_as_torch(device, dims, shape, momentum):
    reference = getattr(torch.nn, f"BatchNorm{dims}d")(shape[1], momentum=momentum,
                                                      dtype=torch.float64)
    layer = getattr(kael.nn, f"BatchNorm{dims}d")(shape[1], momentum=momentum,
                                                 dtype=kael.float64).to(device)
    assert repr(layer) == repr(reference)
    assert list(layer.state_dict()) == list(reference.state_dict())
    with torch.no_grad():
        reference.weight.uniform_(0.5, 1.5)
        reference.bias.uniform_(-0.5, 0.5)
    layer.weight.data.copy_(kael.tensor(reference.weight.detach().numpy()).to(device))
    layer.bias.data.copy_(kael.tensor(reference.bias.detach().numpy()).to(device))
    for step in range(3):
        check(layer, reference, [shape], device, seed=10 * step)
        for name, buffer in reference.named_buffers():
            got = dict(layer.named_buffers())[name]
            assert np.allclose(got.cpu().tolist(), buffer.tolist(), rtol=1e-9, atol=1e-12), name
    layer.eval()
    reference.eval()
    check(layer, reference, [shape], device, seed=77)


def test_batch_norm_refuses_one_value_per_channel_in_training():
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        kael.nn.BatchNorm1d(3)(kael.ones(1, 3))


@pytest.mark.parametrize("shape,groups,affine", [((3, 6, 4, 5), 3, True), ((2, 4, 7), 1, False),
                                                 ((2, 4, 7), 4, True)])
def test_group_norm_matches_torch(device, shape, groups, affine):
    if affine:
        check(lambda x, w, b: KF.group_norm(x, groups, w, b),
              lambda x, w, b: TF.group_norm(x, groups, w, b),
              [shape, (shape[1],), (shape[1],)], device, strided=True)
    else:
        check(lambda x: KF.group_norm(x, groups), lambda x: TF.group_norm(x, groups), [shape],
              device)


def test_instance_norm_matches_torch(device):
    reference = torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                        dtype=torch.float64)
    layer = kael.nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    layer.to(kael.float64)
    layer.to(device)
    check(layer, reference, [(2, 3, 4, 5)], device)
    assert np.allclose(layer.running_mean.cpu().tolist(), reference.running_mean.tolist())
    assert np.allclose(layer.running_var.cpu().tolist(), reference.running_var.tolist())


@pytest.mark.parametrize("mode,pads", [("constant", (1, 2, 0, 1)), ("reflect", (2, 1, 1, 2)),
                                       ("replicate", (3, 0, 2, 1)), ("circular", (2, 2, 1, 0))])
def test_pad_modes_match_torch(device, mode, pads):
    check(lambda x: KF.pad(x, pads, mode=mode), lambda x: TF.pad(x, pads, mode=mode),
          [(2, 3, 4, 5)], device, strided=True)


@pytest.mark.parametrize("options", [dict(scale_factor=2), dict(size=(5, 7)),
                                     dict(size=(5, 7), mode="bilinear", align_corners=False),
                                     dict(scale_factor=1.5, mode="bilinear", align_corners=True),
                                     dict(size=(3, 2), mode="bilinear", align_corners=False)])
def test_interpolate_matches_torch(device, options):
    check(lambda x: KF.interpolate(x, **options), lambda x: TF.interpolate(x, **options),
          [(2, 3, 4, 5)], device)


def test_unfold_and_pixel_shuffle_match_torch(device):
    check(lambda x: KF.unfold(x, (2, 3), dilation=1, padding=1, stride=(1, 2)),
          lambda x: TF.unfold(x, (2, 3), dilation=1, padding=1, stride=(1, 2)),
          [(2, 3, 5, 6)], device)
    check(lambda x: KF.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2), [(2, 8, 3, 4)],
          device)
    check(lambda x: KF.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2),
          [(2, 2, 4, 6)], device)


def test_layer_printouts_match_torch():
    for kael_layer, torch_layer in [
            (kael.nn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
            (kael.nn.MaxPool2d((3, 2), stride=1, padding=1, ceil_mode=True),
             torch.nn.MaxPool2d((3, 2), stride=1, padding=1, ceil_mode=True)),
            (kael.nn.AvgPool2d(3, stride=2), torch.nn.AvgPool2d(3, stride=2)),
            (kael.nn.AdaptiveAvgPool2d((1, 1)), torch.nn.AdaptiveAvgPool2d((1, 1))),
            (kael.nn.Conv1d(2, 4, 3, padding="same", bias=False),
             torch.nn.Conv1d(2, 4, 3, padding="same", bias=False)),
            (kael.nn.Conv2d(4, 8, 3, dilation=2, groups=2), torch.nn.Conv2d(4, 8, 3, dilation=2,
                                                                            groups=2)),
            (kael.nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4))]:
        assert repr(kael_layer) == repr(torch_layer)


def test_gradcheck_of_conv_and_pools():
    x = kael.randn(1, 2, 5, 5, dtype=kael.float64, requires_grad=True)
    w = kael.randn(3, 2, 2, 2, dtype=kael.float64, requires_grad=True)
    assert kael.autograd.gradcheck(lambda a, b: KF.conv2d(a, b, stride=2, padding=1), (x, w))
    assert kael.autograd.gradcheck(lambda a: KF.max_pool2d(a, 2, padding=1), (x,))
    assert kael.autograd.gradcheck(lambda a: KF.avg_pool2d(a, 3, stride=2, padding=1,
                                                           ceil_mode=True), (x,))


def test_errors_name_the_op():
    with pytest.raises(ValueError, match="conv2d"):
        KF.conv2d(kael.ones(1, 3, 5, 5), kael.ones(2, 4, 3, 3))
    with pytest.raises(ValueError, match="does not fit"):
        KF.conv2d(kael.ones(1, 1, 2, 2), kael.ones(1, 1, 3, 3))
    with pytest.raises(ValueError, match="half of the kernel"):
        KF.max_pool2d(kael.ones(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(ValueError, match="strided"):
        KF.conv2d(kael.ones(1, 1, 5, 5), kael.ones(1, 1, 3, 3), stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        kael.nn.Conv2d(1, 1, 3, padding_mode="mirror")


def test_conv_double_backward_matches_torch(device):
    """A gradient penalty through conv2d: the plugin's convolution (oneDNN on cpu in float32)
    differentiates its backward through the composed form."""
    results = []
    for lib, dev in ((kael, device), (torch, "cpu")):
        gen = np.random.default_rng(3)
        x = lib.tensor(gen.standard_normal((2, 3, 6, 6)).astype("float32")).to(dev)
        w = lib.tensor(gen.standard_normal((4, 3, 3, 3)).astype("float32")).to(dev)
        x.requires_grad_(True)
        w.requires_grad_(True)
        y = (lib.nn.functional.conv2d(x, w, padding=1) ** 2).sum()
        (gx,) = lib.autograd.grad(y, [x], create_graph=True)
        (gx ** 2).sum().backward()
        results.append(np.asarray(w.grad.detach().cpu().tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=2e-4, atol=2e-3)


TRANSPOSE_CASES = [  # (dims, input shape, weight shape, options)
    (1, (2, 4, 5), (4, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    (1, (4, 6), (4, 2, 2), dict(dilation=2)),
    (2, (2, 4, 5, 6), (4, 3, 4, 4), dict(stride=2, padding=1)),
    (2, (2, 4, 5, 5), (4, 2, 3, 3), dict(groups=2, stride=(2, 1), output_padding=(1, 0))),
    (3, (1, 2, 3, 3, 2), (2, 2, 2, 2, 2), dict(stride=2)),
]


@pytest.mark.parametrize("dims,shape,weight,options", TRANSPOSE_CASES)
@pytest.mark.parametrize("bias", [True, False])
def test_conv_transpose_matches_torch(device, dims, shape, weight, options, bias):
    kael_conv = getattr(KF, f"conv_transpose{dims}d")
    torch_conv = getattr(TF, f"conv_transpose{dims}d")
    out_channels = weight[1] * options.get("groups", 1)
    shapes = [shape, weight] + ([(out_channels,)] if bias else [])
    check(lambda x, w, *b: kael_conv(x, w, b[0] if b else None, **options),
          lambda x, w, *b: torch_conv(x, w, b[0] if b else None, **options),
          shapes, device, strided=len(shape) > 2)


def test_conv_transpose_layer_and_fold_match_torch(device):
    torch.manual_seed(0)
    reference = torch.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, dtype=torch.float64)
    layer = kael.nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, dtype=kael.float64)
    assert repr(layer) == repr(reference)
    assert list(layer.state_dict()) == list(reference.state_dict())
    layer.load_state_dict({k: kael.tensor(v.detach().numpy()) for k, v in
                           reference.state_dict().items()})
    layer.to(device)
    x, tx = pair((2, 3, 4, 4), device, 11)
    close(layer(x, output_size=(8, 8)), reference(tx, output_size=(8, 8)))
    check(lambda c: KF.fold(c, (5, 6), (2, 3), padding=1, stride=(1, 2)),
          lambda c: TF.fold(c, (5, 6), (2, 3), padding=1, stride=(1, 2)),
          [(2, 3 * 6, 6 * 3)], device)


def test_the_cpu_plugin_says_where_convolutions_run():
    """kael-info's build details name oneDNN when its library lies beside the cpu plugin, and
    a float32 convolution on cpu then loads libdnnl (the extension served it)."""
    import os
    cpu = next(p for p in kael.plugins() if p.name == "cpu")
    beside = os.path.exists(os.path.join(os.path.dirname(cpu.path), "kael_cpu_onednn.so"))
    assert ("convolutions and pooling=oneDNN" in cpu.build_info) == beside, cpu.build_info
    if beside:
        KF.conv2d(kael.ones(1, 1, 4, 4), kael.ones(1, 1, 3, 3))
        with open("/proc/self/maps", encoding="utf-8") as maps:
            assert "libdnnl" in maps.read()


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_layers_follow_float32(device, dtype):
    """Conv2d, MaxPool2d, BatchNorm2d and LSTM in bf16/f16 (composed: oneDNN serves f32 here)
    stay within the dtype's rounding of the float32 result, gradients included."""
    low = getattr(kael, dtype)
    tol = 0.1 if dtype == "bfloat16" else 0.02
    rng = np.random.default_rng(6)
    x32 = kael.tensor(rng.standard_normal((2, 3, 8, 8)).astype("float32")).to(device)
    w32 = kael.tensor(rng.standard_normal((4, 3, 3, 3)).astype("float32")).to(device)
    outputs, grads = [], []
    for dt in (kael.float32, low):
        x = x32.to(dt).detach().requires_grad_(True)
        w = w32.to(dt).detach().requires_grad_(True)
        y = KF.max_pool2d(KF.conv2d(x, w, padding=1), 2)
        y = KF.batch_norm(y, None, None, training=True)
        assert y.dtype == dt
        y.float().sum().backward()
        outputs.append(np.asarray(y.float().cpu().tolist()))
        grads.append(np.asarray(w.grad.float().cpu().tolist()))
    np.testing.assert_allclose(outputs[1], outputs[0], atol=tol * 4, rtol=tol)
    np.testing.assert_allclose(grads[1], grads[0], atol=tol * 8, rtol=tol)
    lstm = kael.nn.LSTM(4, 5).to(device).to(low)
    assert lstm(kael.randn(3, 2, 4).to(device).to(low))[0].dtype == low
