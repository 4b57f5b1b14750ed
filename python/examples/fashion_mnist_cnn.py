#!/usr/bin/env python3
"""A convolutional network on Fashion-MNIST as a PyTorch user writes it: two Conv2d +
BatchNorm2d + ReLU + MaxPool2d blocks, dropout and two Linear layers, AdamW with a cosine
schedule, 2 epochs to above 90% test accuracy. --library torch runs the very same
program on PyTorch (the only line that differs is the import), for comparison.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/fashion_mnist_cnn.py --device cuda
    PYTHONPATH=build/python /usr/bin/python3 python/examples/fashion_mnist_cnn.py --library torch
"""
import argparse
import gzip
import importlib
import math
import os
import sys
import time

import numpy as np

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"  # Debian's dataset-fashion-mnist


def read_images_and_labels(folder, split, limit):
    """Normalised images [N, 1, 28, 28] float32 and labels [N] int64 from the IDX files."""
    arrays = []
    for kind in ("images-idx3", "labels-idx1"):
        with gzip.open(os.path.join(folder, f"{split}-{kind}-ubyte.gz"), "rb") as file:
            data = file.read()
        dims = data[3]
        shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
        arrays.append(np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape))
    images, labels = arrays
    if limit:
        images, labels = images[:limit], labels[:limit]
    images = (images.astype(np.float32) / 255.0 - 0.2860) / 0.3530
    return np.ascontiguousarray(images[:, None]), labels.astype(np.int64)


def build_model(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
            self.classifier = nn.Sequential(
                nn.Flatten(), nn.Dropout(0.25), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                nn.Dropout(0.25), nn.Linear(128, 10))

        def forward(self, x):
            return self.classifier(self.features(x))
    return Net()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--library", default="kael", choices=["kael", "torch"])
    parser.add_argument("--data", default=FASHION_MNIST)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--train-size", type=int, default=0, help="0: all 60000 images")
    parser.add_argument("--test-size", type=int, default=0, help="0: all 10000 images")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0,
                        help="CPU threads (0: the library's default; give both the same to compare)")
    args = parser.parse_args()

    torch = importlib.import_module(args.library)  # kael or torch, the same program
    if args.threads:
        torch.set_num_threads(args.threads)
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    train_x, train_y = read_images_and_labels(args.data, "train", args.train_size)
    test_x, test_y = read_images_and_labels(args.data, "t10k", args.test_size)
    train_x, train_y = torch.from_numpy(train_x), torch.from_numpy(train_y)
    test_x, test_y = torch.from_numpy(test_x).to(device), torch.from_numpy(test_y).to(device)

    model = build_model(nn).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps_per_epoch = len(train_x) // args.batch_size
    total = steps_per_epoch * args.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * min(step, total) / total)))
    print(model)
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        model.train()
        start = time.perf_counter()
        order = torch.randperm(len(train_x))
        for step in range(steps_per_epoch):
            batch = order[step * args.batch_size:(step + 1) * args.batch_size]
            images, labels = train_x[batch].to(device), train_y[batch].to(device)
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            if (step + 1) % 200 == 0:
                print(f"epoch {epoch} step {step + 1}/{steps_per_epoch} loss {loss.item():.4f}",
                      flush=True)
        seconds = time.perf_counter() - start
        model.eval()
        correct = 0
        with torch.no_grad():
            for first in range(0, len(test_x), 1000):
                logits = model(test_x[first:first + 1000])
                correct += (logits.argmax(dim=1) == test_y[first:first + 1000]).sum().item()
        accuracy = correct / len(test_x)
        print(f"epoch {epoch}: {seconds:.1f} s training ({args.library}), "
              f"test accuracy {100 * accuracy:.2f}%", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
