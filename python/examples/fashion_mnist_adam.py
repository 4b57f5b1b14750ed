#!/usr/bin/env python3
"""An MLP on Fashion-MNIST as a PyTorch user writes it: Dataset and DataLoader, nn.Module with
init, Adam, a learning-rate schedule, gradient clipping, and a checkpoint after every epoch
from which --resume continues exactly where the run stopped.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/fashion_mnist_adam.py \
        --device cuda --epochs 3 --checkpoint /tmp/mlp.kael
    # interrupted? run the same command with --resume: it continues after the last saved epoch
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

import kael
import kael.nn.functional as F
from kael import nn
from kael.utils.data import DataLoader, Subset, TensorDataset

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def read_idx(path):
    """The array of a gzip-compressed IDX file (big-endian header)."""
    with gzip.open(path, "rb") as file:
        data = file.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist(folder, split):
    """(images [N, 1, 28, 28] normalised f32, labels [N] i64) as a TensorDataset."""
    images = read_idx(os.path.join(folder, f"{split}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(folder, f"{split}-labels-idx1-ubyte.gz"))
    images = (images.astype(np.float32) / 255.0 - 0.2860) / 0.3530
    return TensorDataset(kael.from_numpy(images[:, None]),
                         kael.from_numpy(labels.astype(np.int64)))


class MLP(nn.Module):
    def __init__(self, hidden=256, dropout=0.1):
        super().__init__()
        self.body = nn.Sequential(
            nn.Flatten(),
            nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(hidden, 10))
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
            nn.init.zeros_(module.bias)

    def forward(self, x):
        return self.body(x)


@kael.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, total, loss = 0, 0, 0.0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return loss / total, correct / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--data", default=FASHION_MNIST)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--max-steps", type=int, default=0,
                        help="steps per epoch at most (0: the whole epoch)")
    parser.add_argument("--test-size", type=int, default=0,
                        help="evaluate on this many test images (0: all 10000)")
    parser.add_argument("--checkpoint", default="fashion_mnist_adam.kael")
    parser.add_argument("--resume", action="store_true",
                        help="continue from --checkpoint after its last epoch")
    parser.add_argument("--metrics", help="append 'epoch,step,loss,lr' lines to this CSV file")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    device = kael.device(args.device)
    kael.manual_seed(args.seed)
    train_set = fashion_mnist(args.data, "train")
    test_set = fashion_mnist(args.data, "t10k")
    if args.test_size:
        test_set = Subset(test_set, range(args.test_size))
    shuffle = kael.Generator().manual_seed(args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=shuffle, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=1000)

    model = MLP().to(device)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = kael.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = kael.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    first_epoch = 1
    if args.resume:
        state = kael.load(args.checkpoint, map_location=device)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        shuffle.set_state(state["shuffle"])
        kael.set_rng_state(state["rng"])
        first_epoch = state["epoch"] + 1
        print(f"resumed from {args.checkpoint} after epoch {state['epoch']}")
    print(model)
    metrics = open(args.metrics, "a", buffering=1) if args.metrics else None

    for epoch in range(first_epoch, args.epochs + 1):
        start = time.perf_counter()
        for step, (images, labels) in enumerate(train_loader, 1):
            images, labels = images.to(device), labels.to(device)
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            if metrics:
                metrics.write(f"{epoch},{step},{loss.item()!r},{scheduler.get_last_lr()[0]!r}\n")
            if step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}", flush=True)
            if step == args.max_steps:
                break
        scheduler.step()
        test_loss, accuracy = evaluate(model, test_loader, device)
        print(f"epoch {epoch}: {time.perf_counter() - start:.1f} s, test loss {test_loss:.4f}, "
              f"test accuracy {100 * accuracy:.2f}%", flush=True)
        kael.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                   "scheduler": scheduler.state_dict(), "shuffle": shuffle.get_state(),
                   "rng": kael.get_rng_state(), "epoch": epoch}, args.checkpoint)
    if metrics:
        metrics.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
