"""The convolution, pooling, normalisation and recurrent cases of both benchmarks
(cpu_vs_torch.py and model_path_vs_torch.py): forward + backward on the Fashion-MNIST CNN's shapes
(python/examples/fashion_mnist_cnn.py, batch 64) and on a ResNet-style 3x3 layer, each layer
as its user calls it."""


def layer_case(Case, name, make, shape):
    """make(lib) -> the layer; the timed call is forward + backward of its output's sum."""
    def setup(lib, device):
        layer = make(lib).to(device)
        x = lib.randn(*shape, device=device).requires_grad_(True)

        def run():
            layer(x).sum().backward()
        return run
    return Case(name, setup, setup)


def conv_cases(Case, scale, sized):
    batch = sized(64 * 8, scale)  # 64 at the cpu benchmark's scale of 1/8
    wide = sized(32 * 8, scale)
    return [
        layer_case(Case, f"Conv2d(1, 32, 3, padding=1) fwd+bwd, {batch}x1x28x28",
                   lambda l: l.nn.Conv2d(1, 32, 3, padding=1), (batch, 1, 28, 28)),
        layer_case(Case, f"Conv2d(32, 64, 3, padding=1) fwd+bwd, {batch}x32x14x14",
                   lambda l: l.nn.Conv2d(32, 64, 3, padding=1), (batch, 32, 14, 14)),
        layer_case(Case, f"Conv2d(64, 64, 3, padding=1) fwd+bwd, {wide}x64x56x56",
                   lambda l: l.nn.Conv2d(64, 64, 3, padding=1), (wide, 64, 56, 56)),
        layer_case(Case, f"Conv1d(64, 64, 5, padding=2) fwd+bwd, {batch}x64x256",
                   lambda l: l.nn.Conv1d(64, 64, 5, padding=2), (batch, 64, 256)),
        layer_case(Case, f"MaxPool2d(2) fwd+bwd, {batch}x32x28x28",
                   lambda l: l.nn.MaxPool2d(2), (batch, 32, 28, 28)),
        layer_case(Case, f"AvgPool2d(3, 2, 1) fwd+bwd, {batch}x32x28x28",
                   lambda l: l.nn.AvgPool2d(3, 2, 1), (batch, 32, 28, 28)),
        layer_case(Case, f"AdaptiveAvgPool2d(1) fwd+bwd, {batch}x64x14x14",
                   lambda l: l.nn.AdaptiveAvgPool2d(1), (batch, 64, 14, 14)),
        layer_case(Case, f"BatchNorm2d(32) fwd+bwd, {batch}x32x28x28",
                   lambda l: l.nn.BatchNorm2d(32), (batch, 32, 28, 28)),
        layer_case(Case, f"GroupNorm(8, 64) fwd+bwd, {batch}x64x14x14",
                   lambda l: l.nn.GroupNorm(8, 64), (batch, 64, 14, 14)),
    ]


def recurrent_cases(Case, scale, sized):
    """The layers issue's LSTM (2 layers, hidden 1024, batch 64, 128 steps at scale 1; hidden
    and batch scaled on the cpu) and a GRU beside it, forward + backward. At full scale (the
    GPU) in exact f32 on both sides and with TF32 (PyTorch's cuDNN default beside kael's
    set_float32_matmul_precision("high")); scaled, in f32 alone (no CPU rounds to TF32)."""
    hidden, batch = sized(1024, scale), sized(64, scale)
    modes = MODES[:2] if scale == 1 else (("f32", None),)

    def setup(kind, tf32, is_torch):
        def build(lib, device):
            layer = getattr(lib.nn, kind)(hidden, hidden, num_layers=2).to(device)
            x = lib.randn(128, batch, hidden, device=device).requires_grad_(True)
            return _conv_run(lib, device, lambda v: layer(v)[0], x, is_torch, tf32)
        return build
    return [Case(f"{kind}(hidden {hidden}, 2 layers) fwd+bwd, 128 steps x batch {batch}"
                 + ("" if tf32 is None else f", {mode}"),
                 setup(kind, tf32, True), setup(kind, tf32, False), unit="ms")
            for mode, tf32 in modes for kind in ("LSTM", "GRU")]


# ResNet-50's distinct convolutions (torchvision's, stride on the 3x3): (in, out, kernel, stride,
# spatial size of the input).
RESNET50_CONVS = ((3, 64, 7, 2, 224), (64, 64, 1, 1, 56), (64, 64, 3, 1, 56), (64, 256, 1, 1, 56),
                  (256, 128, 1, 1, 56), (128, 128, 3, 2, 56), (128, 512, 1, 1, 28),
                  (256, 256, 3, 1, 14), (256, 1024, 1, 1, 14), (512, 512, 3, 1, 7),
                  (512, 2048, 1, 1, 7))

# How f32 convolutions may round: exactly as f32 on both sides, or TF32 as PyTorch's cuDNN
# default (torch.backends.cudnn.allow_tf32) beside kael's set_float32_matmul_precision("high").
MODES = (("f32", False), ("f32 with TF32", True), ("bf16", None))


def _conv_run(lib, device, layer, x, is_torch, tf32):
    def run():
        if tf32 is not None:
            if is_torch:
                lib.backends.cudnn.allow_tf32 = tf32
            else:
                lib.set_float32_matmul_precision("high" if tf32 else "highest")
        layer(x).sum().backward()
        if tf32 is not None and not is_torch:
            lib.set_float32_matmul_precision("highest")
    return run


def resnet50_conv_cases(Case, scale, sized):
    """Forward + backward of each of ResNet-50's convolutions at batch 32 (scaled), in f32 (exact
    and TF32) and bf16, the layer and its input in the dtype."""
    batch = sized(32, scale)
    cases = []
    for mode, tf32 in MODES:
        for c_in, c_out, kernel, stride, size in RESNET50_CONVS:
            def setup(is_torch, c_in=c_in, c_out=c_out, kernel=kernel, stride=stride, size=size,
                      tf32=tf32):
                def build(lib, device):
                    dtype = lib.bfloat16 if tf32 is None else lib.float32
                    layer = lib.nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2,
                                          bias=False).to(device).to(dtype)
                    x = lib.randn(batch, c_in, size, size, device=device).to(dtype)
                    return _conv_run(lib, device, layer, x.requires_grad_(True), is_torch, tf32)
                return build
            cases.append(Case(f"ResNet-50 conv {c_in}->{c_out} {kernel}x{kernel}/{stride} at "
                              f"{size}x{size} fwd+bwd, batch {batch}, {mode}",
                              setup(True), setup(False)))
    return cases
