"""kael.set_float32_matmul_precision and kael.backends.cuda.matmul.allow_tf32, as PyTorch's."""
import numpy as np
import pytest

import kael


@pytest.fixture(autouse=True)
def restore_precision():
    before = kael.get_float32_matmul_precision()
    yield
    kael.set_float32_matmul_precision(before)


def test_default_is_highest():
    assert kael.get_float32_matmul_precision() == "highest"
    assert kael.backends.cuda.matmul.allow_tf32 is False


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_precision_round_trips(precision):
    kael.set_float32_matmul_precision(precision)
    assert kael.get_float32_matmul_precision() == precision
    assert kael.backends.cuda.matmul.allow_tf32 is (precision != "highest")


def test_allow_tf32_sets_the_precision():
    kael.backends.cuda.matmul.allow_tf32 = True
    assert kael.get_float32_matmul_precision() == "high"
    kael.backends.cuda.matmul.allow_tf32 = False
    assert kael.get_float32_matmul_precision() == "highest"


def test_unknown_precision_and_setting_are_refused():
    with pytest.raises(ValueError, match="set_float32_matmul_precision.*'low'"):
        kael.set_float32_matmul_precision("low")
    assert kael.get_float32_matmul_precision() == "highest"
    with pytest.raises(AttributeError, match="allow_fp8"):
        kael.backends.cuda.matmul.allow_fp8 = True


def _products(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(np.float32)
    b = rng.standard_normal((96, 80)).astype(np.float32)
    w = rng.standard_normal((80, 96)).astype(np.float32)
    bias = rng.standard_normal(80).astype(np.float32)
    x, y = kael.tensor(a, device=device), kael.tensor(b, device=device)
    linear = kael.nn.functional.linear(x, kael.tensor(w, device=device),
                                       kael.tensor(bias, device=device))
    exact_matmul = a.astype(np.float64) @ b.astype(np.float64)
    exact_linear = a.astype(np.float64) @ w.T.astype(np.float64) + bias
    return (x @ y).cpu().numpy(), exact_matmul, linear.cpu().numpy(), exact_linear


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_products_stay_within_tf32_of_exact(precision, device):
    """"highest" is f32-exact; "high"/"medium" may round inputs to TF32 (2^-11 relative each),
    which for 96-term sums of unit normals stays within 0.05 of the exact product."""
    kael.set_float32_matmul_precision(precision)
    product, exact, linear, exact_linear = _products(device)
    tolerance = 1e-4 if precision == "highest" else 5e-2
    np.testing.assert_allclose(product, exact, atol=tolerance, rtol=0)
    np.testing.assert_allclose(linear, exact_linear, atol=tolerance, rtol=0)


def test_highest_on_cpu_is_bit_for_bit_unchanged(device):
    kael.set_float32_matmul_precision("highest")
    before, _, linear_before, _ = _products(device)
    kael.set_float32_matmul_precision("high")
    after, _, linear_after, _ = _products(device)
    if kael.device(device).type == "cpu":  # the cpu plugin is always exact
        np.testing.assert_array_equal(before, after)
        np.testing.assert_array_equal(linear_before, linear_after)


@pytest.mark.parametrize("dtype", [kael.bfloat16, kael.float16])
def test_low_precision_products_run_on_the_device(dtype, device):
    """The cuda and emulated plugins multiply bf16/f16 themselves (f32 sums, one rounding):
    single, batched with a broadcast matrix and with a bias, nothing on the cpu fallback."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 20, 24)).astype(np.float32)
    b = rng.standard_normal((24, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    low = [kael.tensor(v, device=device).to(dtype) for v in (a, b, bias)]
    wide = [t.float().cpu().numpy().astype(np.float64) for t in low]
    kael.reset_fallback_counts()
    product = low[0] @ low[1]
    linear = kael.nn.functional.linear(low[0][0], low[1].T, low[2])
    counts = {k: v for k, v in kael.fallback_counts().items() if "matmul" in k}
    assert product.dtype == dtype and linear.dtype == dtype
    if kael.device(device).type != "cpu":
        assert counts == {}
    step = 2.0 ** -8 if dtype == kael.bfloat16 else 2.0 ** -11
    exact = wide[0] @ wide[1]
    np.testing.assert_allclose(product.float().cpu().numpy(), exact,
                               atol=2 * step * np.abs(exact).max(), rtol=0)
    exact_linear = wide[0][0] @ wide[1] + wide[2]
    np.testing.assert_allclose(linear.float().cpu().numpy(), exact_linear,
                               atol=2 * step * np.abs(exact_linear).max(), rtol=0)
