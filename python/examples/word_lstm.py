#!/usr/bin/env python3
"""A word-level LSTM language model, as pytorch/examples' word_language_model is written:
Embedding, a 2-layer LSTM with dropout, a Linear decoder tied to the embedding, truncated
backpropagation through time with the hidden state carried (detached) across batches, gradient
clipping, and perplexity on held-out text. The text is the GNU GPL 3 that every Debian system
ships (/usr/share/common-licenses/GPL-3); --library torch runs the same program on PyTorch.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/word_lstm.py --device cuda
"""
import argparse
import importlib
import math
import re
import sys
import time

TEXT = "/usr/share/common-licenses/GPL-3"


def tokenize(path):
    """Words and punctuation, lower-cased, with <eos> at each line's end."""
    words = []
    with open(path, encoding="utf-8") as file:
        for line in file:
            words += re.findall(r"[a-z0-9']+|[^\sa-z0-9']", line.lower()) + ["<eos>"]
    return words


def build_model(torch, vocabulary, size, layers, dropout):
    nn = torch.nn

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(vocabulary, size)
            self.rnn = nn.LSTM(size, size, layers, dropout=dropout)
            self.decoder = nn.Linear(size, vocabulary)
            self.decoder.weight = self.encoder.weight  # tied weights
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)

        def forward(self, tokens, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
            return self.decoder(self.drop(output)), hidden
    return LanguageModel()


def batchify(torch, ids, batch, device):
    """[T, batch] columns of the token stream, as the PyTorch example lays them out."""
    steps = len(ids) // batch
    return torch.tensor(ids[:steps * batch]).reshape(batch, steps).t().contiguous().to(device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--library", default="kael", choices=["kael", "torch"])
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--bptt", type=int, default=35)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--max-batches", type=int, default=0, help="per epoch (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch = importlib.import_module(args.library)  # kael or torch, the same program
    F = torch.nn.functional
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    words = tokenize(args.text)
    vocabulary = {word: index for index, word in enumerate(sorted(set(words)))}
    ids = [vocabulary[word] for word in words]
    split = int(len(ids) * 0.9)
    train = batchify(torch, ids[:split], args.batch_size, device)
    valid = batchify(torch, ids[split:], 4, device)
    model = build_model(torch, len(vocabulary), args.size, args.layers, args.dropout).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    print(f"{len(words)} words, vocabulary {len(vocabulary)}")
    print(model)

    def evaluate():
        model.eval()
        total, count, hidden = 0.0, 0, None
        with torch.no_grad():
            for start in range(0, valid.shape[0] - 1, args.bptt):
                length = min(args.bptt, valid.shape[0] - 1 - start)
                output, hidden = model(valid[start:start + length], hidden)
                target = valid[start + 1:start + 1 + length].reshape(-1)
                total += F.cross_entropy(output.reshape(-1, len(vocabulary)), target,
                                         reduction="sum").item()
                count += target.numel()
        model.train()
        return math.exp(total / count)

    first = evaluate()
    print(f"before training: validation perplexity {first:.1f}")
    perplexity = first
    for epoch in range(1, args.epochs + 1):
        start_time, hidden = time.perf_counter(), None
        for index, start in enumerate(range(0, train.shape[0] - 1, args.bptt)):
            if args.max_batches and index == args.max_batches:
                break
            length = min(args.bptt, train.shape[0] - 1 - start)
            if hidden is not None:  # carried across batches, its history cut
                hidden = tuple(h.detach() for h in hidden)
            output, hidden = model(train[start:start + length], hidden)
            loss = F.cross_entropy(output.reshape(-1, len(vocabulary)),
                                   train[start + 1:start + 1 + length].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25 * 4)
            optimizer.step()
        perplexity = evaluate()
        print(f"epoch {epoch}: {time.perf_counter() - start_time:.1f} s ({args.library}), "
              f"training loss {loss.item():.3f}, validation perplexity {perplexity:.1f}",
              flush=True)
    print(f"validation perplexity fell from {first:.1f} to {perplexity:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
