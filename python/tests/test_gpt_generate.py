"""GPT.generate: greedy and sampled decoding (temperature, top-k, top-p, seed), stop conditions,
batches of prompts of different lengths, and contexts longer than n_positions."""
import numpy as np
import pytest

import kael
from gpt2_reference import random_weights, small_config, write_checkpoint


@pytest.fixture
def model_folder(tmp_path):
    config = small_config()
    write_checkpoint(tmp_path, config, random_weights(config, seed=4))
    return tmp_path


def next_greedy(model, context, device):
    logits = model(kael.tensor([context], dtype=kael.int64, device=device))
    return int(np.argmax(logits.cpu().numpy()[0, -1]))


def test_greedy_continues_with_the_most_likely_token(model_folder, device):
    model = kael.nn.GPT.from_pretrained(model_folder, device=device)
    prompt = [5, 17, 3]
    out = model.generate(prompt, 6)
    assert out[:3] == prompt and len(out) == 9
    for k in range(3, 9):
        assert out[k] == next_greedy(model, out[:k], device)


def test_a_batch_continues_each_prompt_as_alone(model_folder, device):
    model = kael.nn.GPT.from_pretrained(model_folder, device=device)
    prompts = [[5, 17, 3], [1], [9, 9, 9, 9, 9, 9, 40]]
    batch = model.generate(prompts, 8)
    assert batch == [model.generate(p, 8) for p in prompts]
    sampled = model.generate(prompts, 8, temperature=0.9, top_k=20, seed=3)
    assert [len(row) for row in sampled] == [11, 9, 15]


def test_context_longer_than_n_positions_slides(model_folder, device):
    model = kael.nn.GPT.from_pretrained(model_folder, device=device)
    capacity, keep = 16, 12  # a full cache restarts from the latest 3/4 of n_positions
    prompt = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8]  # longer than 16
    out = model.generate(prompt, 30)
    assert len(out) == len(prompt) + 30
    window = capacity  # the first step sees the latest n_positions tokens
    for k in range(len(prompt), len(out)):
        assert out[k] == next_greedy(model, out[k - window:k], device), k
        window = keep if window == capacity else window + 1


def test_sampling_options(model_folder, device):
    model = kael.nn.GPT.from_pretrained(model_folder, device=device)
    prompt = [7, 8, 9]
    greedy = model.generate(prompt, 10)
    # One candidate left is greedy, whatever the temperature.
    assert model.generate(prompt, 10, temperature=3.0, top_k=1, seed=1) == greedy
    assert model.generate(prompt, 10, temperature=3.0, top_p=1e-9, seed=1) == greedy
    first = model.generate(prompt, 20, temperature=2.0, seed=11)
    assert model.generate(prompt, 20, temperature=2.0, seed=11) == first
    assert model.generate(prompt, 20, temperature=2.0, seed=12) != first
    assert all(0 <= t < 97 for t in first)
    # Without a seed, kael.manual_seed decides.
    kael.manual_seed(5)
    unseeded = model.generate(prompt, 20, temperature=2.0)
    kael.manual_seed(5)
    assert model.generate(prompt, 20, temperature=2.0) == unseeded


def test_top_k_and_top_p_keep_only_likely_tokens(model_folder):
    model = kael.nn.GPT.from_pretrained(model_folder)
    prompt = [2, 4]
    logits = model(kael.tensor([prompt], dtype=kael.int64)).numpy()[0, -1]
    order = np.argsort(-logits, kind="stable")
    firsts = {model.generate(prompt, 1, temperature=5.0, top_k=3, seed=s)[-1] for s in range(60)}
    assert firsts <= set(order[:3].tolist()) and len(firsts) > 1
    probabilities = np.exp(logits - logits.max())
    probabilities /= probabilities.sum()
    nucleus = int(np.searchsorted(np.cumsum(probabilities[order]), 0.5) + 1)
    firsts = {model.generate(prompt, 1, temperature=1.0, top_p=0.5, seed=s)[-1] for s in range(60)}
    assert firsts <= set(order[:nucleus].tolist())


def test_sampled_text_is_the_same_on_every_device(model_folder):
    prompt = [10, 20, 30]
    runs = [kael.nn.GPT.from_pretrained(model_folder, device=d).generate(
        prompt, 16, temperature=0.8, top_p=0.9, seed=21) for d in
        [record.device for record in kael.devices()]]
    assert all(run == runs[0] for run in runs)


def test_stop_conditions(model_folder, device):
    model = kael.nn.GPT.from_pretrained(model_folder, device=device)
    prompt = [5, 17, 3]
    greedy = model.generate(prompt, 12)
    eos = greedy[3 + 4]  # the fifth new token
    stopped = model.generate(prompt, 12, eos_token_id=eos)
    assert stopped == greedy[:3 + greedy[3:].index(eos) + 1]
    seen = []
    out = model.generate(prompt, 12, on_token=lambda row, token: seen.append((row, token)))
    assert out == greedy and seen == [(0, t) for t in greedy[3:]]
    # Returning False stops that row after its token; the other goes on.
    batch = model.generate([prompt, [1, 2]], 6, on_token=lambda row, token: row != 0)
    assert batch[0] == greedy[:4] and len(batch[1]) == 8
    assert model.generate(prompt, 0) == prompt


def test_callback_errors_propagate_and_keep_training_mode(model_folder):
    model = kael.nn.GPT.from_pretrained(model_folder)
    model.train()

    def fail(row, token):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        model.generate([1, 2], 5, on_token=fail)
    assert model.training


@pytest.mark.parametrize("kwargs, message", [
    ({"top_p": 0.0}, "top_p must be in"), ({"top_p": 1.5}, "top_p must be in"),
    ({"top_k": -1}, "top_k must be non-negative"), ({"eos_token_id": 97}, "eos_token_id 97"),
    ({"temperature": float("nan")}, "temperature"), ({"max_new_tokens": -2}, "max_new_tokens"),
])
def test_bad_options_are_value_errors(model_folder, kwargs, message):
    model = kael.nn.GPT.from_pretrained(model_folder)
    with pytest.raises(ValueError, match=message):
        model.generate([1, 2], **kwargs)


def test_bad_prompts_are_value_errors(model_folder):
    model = kael.nn.GPT.from_pretrained(model_folder)
    with pytest.raises(ValueError, match="prompt 1 is empty"):
        model.generate([[1], []], 3)
    with pytest.raises(IndexError, match="holds token 97"):
        model.generate([1, 97], 3)


def test_weight_tying_from_python(device):
    class TiedLM(kael.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = kael.nn.Embedding(11, 4, device=device)
            self.head = kael.nn.Linear(4, 11, bias=False, device=device)
            self.head.weight = self.embedding.weight

        def forward(self, tokens):
            return self.head(self.embedding(tokens))

    model = TiedLM()
    assert [name for name, _ in model.named_parameters()] == ["embedding.weight"]
    assert len(model.named_parameters(remove_duplicate=False)) == 2
    assert set(model.state_dict()) == {"embedding.weight", "head.weight"}
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    tokens = kael.tensor([1, 2, 3], dtype=kael.int64, device=device)
    model(tokens).sum().backward()
    grad = model.embedding.weight.grad.cpu().numpy().copy()
    before = model.embedding.weight.cpu().numpy().copy()
    optimizer.step()
    # One tensor, one update, with the gradient of both uses.
    assert np.allclose(model.head.weight.cpu().numpy(), before - 0.1 * grad)
    # A state with either name fills the tied pair.
    state = {"head.weight": kael.zeros(11, 4)}
    model.load_state_dict(state)
    assert np.all(model.embedding.weight.cpu().numpy() == 0)
    with pytest.raises(ValueError, match="no parameter 'bias'"):
        model.head.bias = kael.zeros(11)
