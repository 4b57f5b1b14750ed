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
    and batch scaled on the cpu) and a GRU beside it, forward + backward."""
    hidden, batch = sized(1024, scale), sized(64, scale)

    def setup(kind):
        def build(lib, device):
            layer = getattr(lib.nn, kind)(hidden, hidden, num_layers=2).to(device)
            x = lib.randn(128, batch, hidden, device=device).requires_grad_(True)

            def run():
                layer(x)[0].sum().backward()
            return run
        return build
    return [Case(f"{kind}(hidden {hidden}, 2 layers) fwd+bwd, 128 steps x batch {batch}",
                 setup(kind), setup(kind), unit="ms") for kind in ("LSTM", "GRU")]
