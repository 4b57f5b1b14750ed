"""GPT-2 checkpoints as transformers writes them (config.json + model.safetensors, Conv1D
weights, tied head, a BF16 tensor, mask buffers), loaded into kael.nn.GPT and checked against
GPT-2's forward pass in numpy (gpt2_reference.py) on every device."""
import json
import os

import numpy as np
import pytest

import kael
from gpt2_reference import (random_weights, reference_logits, small_config, write_checkpoint,
                            write_safetensors)

TOKENS = np.array([[5, 17, 3, 96, 40, 0, 12, 7, 7, 81], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])


def logits_of(model, device, tokens=TOKENS):
    out = model(kael.tensor(tokens.tolist(), dtype=kael.int64, device=device))
    return out.cpu().numpy()


@pytest.fixture
def checkpoint(tmp_path):
    config = small_config()
    stored = write_checkpoint(tmp_path / "gpt2", config, random_weights(config, seed=1))
    return tmp_path / "gpt2", config, stored


def test_logits_match_the_reference(checkpoint, device):
    folder, config, stored = checkpoint
    model = kael.nn.GPT.from_pretrained(folder, device=device)
    assert not model.training  # transformers' from_pretrained gives eval mode too
    assert model.config.tie_embeddings and model.config.block_size == 16
    difference = np.abs(logits_of(model, device) - reference_logits(stored, config, TOKENS))
    assert difference.max() < 1e-4


@pytest.mark.parametrize("layout", ["no_prefix_untied_f16", "gelu_exact_inner"])
def test_other_layouts_load(tmp_path, device, layout):
    if layout == "no_prefix_untied_f16":  # GPT2Model's names, an lm_head of its own, F16
        config = small_config(tie_word_embeddings=False)
        stored = write_checkpoint(tmp_path, config, random_weights(config, 2), prefix="",
                                  bf16=(), f16=("h.1.mlp.c_fc.weight",), mask_buffers=False)
    else:
        config = small_config(n_inner=48, layer_norm_epsilon=1e-3)
        stored = write_checkpoint(tmp_path, config, random_weights(config, 3))
    model = kael.nn.GPT.from_pretrained(tmp_path, device=device)
    assert model.config.tie_embeddings == config["tie_word_embeddings"]
    difference = np.abs(logits_of(model, device) - reference_logits(stored, config, TOKENS))
    assert difference.max() < 1e-4


def test_tied_head_is_one_tensor(checkpoint):
    folder, config, _ = checkpoint
    model = kael.nn.GPT.from_pretrained(folder)
    names = [name for name, _ in model.named_parameters()]
    assert "head.weight" not in names and "token_embedding.weight" in names
    assert "head.weight" in model.state_dict()  # every name, as PyTorch lists them
    before = logits_of(model, "cpu")
    embedding = model.get_parameter("token_embedding.weight")
    with kael.no_grad():
        embedding.copy_(embedding * 2.0)
    assert not np.allclose(before, logits_of(model, "cpu"))
    count = sum(p.numel() for p in model.parameters())
    assert count == model.parameter_count()
    c, v, p, inner = 32, 97, 16, 128
    per_layer = 4 * c + (c * 3 * c + 3 * c) + (c * c + c) + (c * inner + inner) + (inner * c + c)
    assert count == v * c + p * c + 2 * per_layer + 2 * c


def test_save_pretrained_round_trips(checkpoint, tmp_path):
    folder, config, _ = checkpoint
    model = kael.nn.GPT.from_pretrained(folder)
    model.save_pretrained(tmp_path / "again")
    saved = json.loads((tmp_path / "again" / "config.json").read_text())
    assert saved["n_layer"] == 2 and saved["tie_word_embeddings"] is True
    again = kael.nn.GPT.from_pretrained(tmp_path / "again")
    assert np.array_equal(logits_of(model, "cpu"), logits_of(again, "cpu"))
    # The file holds transformers' names and layout: Conv1D [in, out], no lm_head when tied.
    raw = open(tmp_path / "again" / "model.safetensors", "rb").read()
    header = json.loads(raw[8:8 + int.from_bytes(raw[:8], "little")])
    assert header["transformer.h.0.attn.c_attn.weight"]["shape"] == [32, 96]
    assert header["transformer.h.1.mlp.c_proj.weight"]["shape"] == [128, 32]
    assert "lm_head.weight" not in header
    assert header["__metadata__"] == {"format": "pt"}


def test_transformers_reads_what_kael_saves(checkpoint, tmp_path):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    folder, config, _ = checkpoint
    model = kael.nn.GPT.from_pretrained(folder)
    model.save_pretrained(tmp_path / "for_transformers")
    theirs = transformers.GPT2LMHeadModel.from_pretrained(tmp_path / "for_transformers").eval()
    with torch.no_grad():
        expected = theirs(torch.tensor(TOKENS)).logits.numpy()
    assert np.abs(logits_of(model, "cpu") - expected).max() < 1e-4


def rewrite(folder, change):
    """Rewrites model.safetensors after change(tensors), tensors: name -> (dtype, array)."""
    path = os.path.join(folder, "model.safetensors")
    raw = open(path, "rb").read()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        begin, end = entry["data_offsets"]
        data = raw[8 + size + begin:8 + size + end]
        if entry["dtype"] == "BF16":
            array = np.frombuffer(data, np.uint16)
        else:
            array = np.frombuffer(data, {"F32": np.float32, "F16": np.float16}[entry["dtype"]])
        tensors[name] = (entry["dtype"], array.reshape(entry["shape"]))
    change(tensors)
    write_safetensors(path, tensors)


@pytest.mark.parametrize("damage, message", [
    (lambda t: t.pop("transformer.h.1.attn.c_proj.weight"),
     "missing tensors: 'transformer.h.1.attn.c_proj.weight'"),
    (lambda t: t.update({"transformer.h.0.attn.rotary": ("F32", np.zeros(3, np.float32))}),
     "'transformer.h.0.attn.rotary'"),
    (lambda t: t.update({"transformer.h.2.ln_1.weight": ("F32", np.zeros(32, np.float32))}),
     "'transformer.h.2.ln_1.weight'"),
    (lambda t: t.update({"transformer.h.0.mlp.c_fc.weight": ("F32", np.zeros((128, 32), np.float32))}),
     "'transformer.h.0.mlp.c_fc.weight' has shape [128, 32], but config.json's model needs "
     "[32, 128] (Conv1D: [in, out])"),
    (lambda t: t.update({"h.0.ln_2.bias": t["transformer.h.0.ln_2.bias"]}), "appears twice"),
])
def test_wrong_tensors_are_named(checkpoint, damage, message):
    folder, _, _ = checkpoint
    rewrite(folder, damage)
    with pytest.raises(ValueError, match=None) as error:
        kael.nn.GPT.from_pretrained(folder)
    assert message in str(error.value)


def test_broken_folders_are_errors(tmp_path, checkpoint):
    folder, config, _ = checkpoint
    with pytest.raises(ValueError, match="is not a folder"):
        kael.nn.GPT.from_pretrained(tmp_path / "nothing")
    os.remove(folder / "model.safetensors")
    (folder / "pytorch_model.bin").write_bytes(b"pickle")
    with pytest.raises(ValueError, match="pickle"):
        kael.nn.GPT.from_pretrained(folder)
    for bad, message in (({"model_type": "llama"}, "'llama'"),
                         ({"n_head": "twelve"}, "field 'n_head' has the wrong type"),
                         ({"activation_function": "swish"}, "activation 'swish'"),
                         ({"n_embd": 30, "n_head": 4}, "not divisible")):
        write_checkpoint(folder, small_config(**bad), random_weights(small_config(), 0))
        with pytest.raises(ValueError, match=message):
            kael.nn.GPT.from_pretrained(folder)
    (folder / "config.json").write_text("{ not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        kael.nn.GPT.from_pretrained(folder)
    (folder / "model.safetensors").write_bytes(b"\xff" * 5)
    write_checkpoint(folder / "x", small_config(), random_weights(small_config(), 0))
    (folder / "x" / "model.safetensors").write_bytes(b"\x05" + b"\0" * 7 + b"{}")
    with pytest.raises(ValueError):
        kael.nn.GPT.from_pretrained(folder / "x")
