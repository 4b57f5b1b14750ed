#!/usr/bin/env python3
"""MLP 784-hidden-10 with ReLU on Fashion-MNIST, SGD, mean cross entropy: the recipe of
apps/examples/mlp_fashion_mnist.cpp (PyTorch reaches 83.6-84.0% test accuracy with it after 2
epochs: hidden 128, batch 64, lr 0.1).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/mlp_fashion_mnist.py --device cuda
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

import kael

FASHION_MNIST_FOLDER = "/usr/share/datasets/fashion-mnist"


def read_idx(path, magic):
    """The array of an IDX file (gzip-compressed, big-endian header)."""
    try:
        with gzip.open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        raise SystemExit(f"mlp_fashion_mnist: cannot read {path} ({error}); install the Debian "
                         "package dataset-fashion-mnist")
    if int.from_bytes(data[0:4], "big") != magic:
        raise SystemExit(f"mlp_fashion_mnist: {path} is not an IDX file of type {magic:#x}")
    dims = magic & 0xFF
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_fashion_mnist(folder, split):
    """images [N, 784] f32 in [0, 1] and labels [N] i64, on the host."""
    images = read_idx(os.path.join(folder, f"{split}-images-idx3-ubyte.gz"), 0x803)
    labels = read_idx(os.path.join(folder, f"{split}-labels-idx1-ubyte.gz"), 0x801)
    if len(images) != len(labels):
        raise SystemExit(f"mlp_fashion_mnist: {split} images and labels disagree in size")
    pixels = images.reshape(len(images), -1).astype(np.float32) / 255.0
    return kael.tensor(pixels), kael.tensor(labels.astype(np.int64))


class Progress:
    """A one-line progress bar on stderr, redrawn in place, with elapsed time."""

    def __init__(self, label, total):
        self.label, self.total, self.start = label, total, time.perf_counter()

    def update(self, done, status=""):
        if done != self.total and done % 10 != 0:
            return
        width = 30
        filled = width if self.total == 0 else width * done // self.total
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{self.total} {self.seconds():.1f}s {status}")
        if done == self.total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def seconds(self):
        return time.perf_counter() - self.start


@kael.no_grad()
def accuracy(model, images, labels, device):
    model.eval()
    correct = 0
    for start in range(0, len(images), 1000):
        logits = model(images[start:start + 1000].to(device))
        hits = kael.eq(logits.argmax(dim=1), labels[start:start + 1000].to(device))
        correct += hits.sum().item()
    model.train()
    return correct / len(images)


def main():
    parser = argparse.ArgumentParser(
        description="Trains an MLP on Fashion-MNIST and reports test accuracy per epoch")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    parser.add_argument("--data", default=FASHION_MNIST_FOLDER,
                        help="folder with the *-idx?-ubyte.gz files")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--max-steps", type=int, default=-1,
                        help="stop each epoch after this many steps (smoke runs)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    device = kael.device(args.device)
    kael.require_device(device)
    kael.manual_seed(args.seed)
    train_images, train_labels = load_fashion_mnist(args.data, "train")
    test_images, test_labels = load_fashion_mnist(args.data, "t10k")
    model = kael.nn.Sequential(kael.nn.Linear(784, args.hidden, device=device),
                               kael.nn.ReLU(),
                               kael.nn.Linear(args.hidden, 10, device=device))
    optimizer = kael.optim.SGD(model.parameters(), lr=args.lr)
    count = len(train_images)
    steps = (count + args.batch - 1) // args.batch
    images, labels = train_images.to(device), train_labels.to(device)
    shuffler = np.random.default_rng(args.seed)
    print(f"MLP 784-{args.hidden}-10 on {device}, {count} training images, batch {args.batch}, "
          f"lr {args.lr:g}", flush=True)
    final_accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        permutation = kael.tensor(shuffler.permutation(count), device=device)
        epoch_steps = min(steps, args.max_steps) if args.max_steps > 0 else steps
        progress = Progress(f"epoch {epoch}", epoch_steps)
        shown_loss = 0.0
        for step in range(epoch_steps):
            rows = permutation[step * args.batch:(step + 1) * args.batch]
            loss = kael.cross_entropy(model(images.index_select(0, rows)),
                                      labels.index_select(0, rows))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 50 == 0 or step + 1 == epoch_steps:
                shown_loss = loss.item()  # reading the loss waits for the device: not every step
            progress.update(step + 1, f"loss {shown_loss:.6f}")
        kael.synchronize(device)
        seconds = progress.seconds()
        final_accuracy = accuracy(model, test_images, test_labels, device)
        print(f"epoch {epoch}: {seconds:.2f} s, test accuracy {100 * final_accuracy:.2f}%",
              flush=True)
    print(f"final test accuracy {100 * final_accuracy:.2f}%")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, ValueError, TypeError, IndexError, MemoryError) as error:
        sys.exit(f"mlp_fashion_mnist: {error}")
