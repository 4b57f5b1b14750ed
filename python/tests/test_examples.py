"""The example programs of python/examples run on every device, and a run stopped and resumed
from its checkpoint logs exactly the losses of the uninterrupted run."""
import os
import subprocess
import sys

import pytest

import kael

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")
FASHION_MNIST = os.environ.get("KAEL_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
TEXT = "/usr/share/common-licenses/GPL-3"


def run_example(name, *arguments):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *arguments],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{name} {arguments}:\n{result.stdout[-3000:]}\n" \
                                   f"{result.stderr[-3000:]}"
    return result.stdout


def read_lines(path):
    with open(path, encoding="utf-8") as file:
        return file.read().splitlines()


def atomics_reorder_sums(device):
    """A real GPU adds some gradients with atomics (attention backward, embedding backward), so
    the last bits of a run may differ between processes there, as in PyTorch without
    deterministic algorithms; cpu and the emulated device repeat bit for bit."""
    name = str(kael.device(device))
    return any(info.device == name and info.plugin != "cpu" and not info.emulated
               for info in kael.devices())


def same_metrics(got, expected, device):
    if not atomics_reorder_sums(device):
        return got == expected
    if len(got) != len(expected):
        return False
    for line, want in zip(got, expected):
        fields, wanted = line.split(","), want.split(",")
        if len(fields) != len(wanted) or any(
                abs(float(a) - float(b)) > 1e-4 * max(1.0, abs(float(b)))
                for a, b in zip(fields, wanted)):
            return False
    return True


def test_fashion_mnist_resumes_exactly(device, tmp_path):
    if not os.path.isdir(FASHION_MNIST):
        pytest.skip(f"no Fashion-MNIST at {FASHION_MNIST} (dataset-fashion-mnist)")
    common = ["--device", device, "--data", FASHION_MNIST, "--max-steps", "12", "--test-size", "500",
              "--batch-size", "64"]
    whole = run_example("fashion_mnist_adam.py", *common, "--epochs", "2",
                        "--checkpoint", str(tmp_path / "whole.kael"),
                        "--metrics", str(tmp_path / "whole.csv"))
    assert "test accuracy" in whole and "Sequential(" in whole
    run_example("fashion_mnist_adam.py", *common, "--epochs", "1",
                "--checkpoint", str(tmp_path / "parts.kael"), "--metrics", str(tmp_path / "parts.csv"))
    resumed = run_example("fashion_mnist_adam.py", *common, "--epochs", "2", "--resume",
                          "--checkpoint", str(tmp_path / "parts.kael"),
                          "--metrics", str(tmp_path / "parts.csv"))
    assert "resumed from" in resumed
    expected = read_lines(tmp_path / "whole.csv")
    assert len(expected) == 24
    assert read_lines(tmp_path / "parts.csv") == expected


def test_char_transformer_resumes_exactly(device, tmp_path):
    common = ["--device", device, "--text", TEXT, "--steps", "12", "--warmup", "3",
              "--eval-every", "6", "--eval-batches", "2", "--save-every", "100", "--layers", "2",
              "--d-model", "32", "--block-size", "16", "--batch-size", "8",
              "--sample-tokens", "20"]
    whole = run_example("char_transformer.py", *common, "--checkpoint", str(tmp_path / "w.kael"),
                        "--metrics", str(tmp_path / "whole.csv"))
    assert "validation loss" in whole
    run_example("char_transformer.py", *common, "--checkpoint", str(tmp_path / "p.kael"),
                "--metrics", str(tmp_path / "parts.csv"), "--stop-after", "5")
    resumed = run_example("char_transformer.py", *common, "--checkpoint", str(tmp_path / "p.kael"),
                          "--metrics", str(tmp_path / "parts.csv"), "--resume")
    assert "resumed from" in resumed and "at step 5" in resumed
    expected = read_lines(tmp_path / "whole.csv")
    assert len(expected) == 12
    assert same_metrics(read_lines(tmp_path / "parts.csv"), expected, device)
    losses = [float(line.split(",")[1]) for line in expected]
    assert losses[-1] < losses[0]


def test_numerics_agree_with_numpy(device):
    output = run_example("numerics.py", "--device", device)
    assert "all results agree with numpy" in output, output


@pytest.mark.parametrize("name", ["fashion_mnist_adam.py", "char_transformer.py",
                                  "numerics.py", "fashion_mnist_cnn.py", "word_lstm.py"])
def test_examples_explain_their_options(name):
    assert "--device" in run_example(name, "--help")


def test_cnn_learns_fashion_mnist(device):
    """The CNN example on a slice of the data: the same program (only its import differs) on
    kael and, on cpu, on PyTorch; both learn well past chance (the full 2-epoch run reaches
    above 90%, README)."""
    if not os.path.isdir(FASHION_MNIST):
        pytest.skip(f"no Fashion-MNIST at {FASHION_MNIST} (dataset-fashion-mnist)")
    # 30 steps on cpu; 10 on another device (the emulated one computes slowly)
    images, tests, least = ("1920", "500", 65.0) if device == "cpu" else ("640", "300", 45.0)
    common = ["--data", FASHION_MNIST, "--epochs", "1", "--train-size", images,
              "--test-size", tests]
    libraries = ["kael", "torch"] if device == "cpu" else ["kael"]
    for library in libraries:
        if library == "torch":
            pytest.importorskip("torch")
        output = run_example("fashion_mnist_cnn.py", "--device", device, "--library", library,
                             *common)
        accuracy = float(output.rsplit("test accuracy ", 1)[1].split("%")[0])
        assert accuracy > least, output


def test_word_lstm_learns_the_gpl(device):
    """The word-level LSTM language model on the GPL's text Debian ships: a few truncated-BPTT
    batches lower the validation perplexity, on every device."""
    if not os.path.exists(TEXT):
        pytest.skip(f"no {TEXT}")
    output = run_example("word_lstm.py", "--device", device, "--epochs", "1",
                         "--max-batches", "20")
    first, last = (float(v) for v in
                   output.rsplit("validation perplexity fell from ", 1)[1].split(" to "))
    assert last < 0.6 * first, output
