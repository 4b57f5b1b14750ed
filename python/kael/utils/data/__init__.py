"""kael.utils.data: datasets, samplers and the DataLoader, with PyTorch's names and behaviour.

A TensorDataset is batched with one index_select per tensor per batch, not element by element.
Shuffling draws its order from the generator given (or kael's process generator), so restoring
the generator's state reproduces the following epochs' order exactly.
"""
import math

import kael

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "BatchSampler", "WeightedRandomSampler",
           "SubsetRandomSampler", "DataLoader", "default_collate"]


class Dataset:
    """A map-style dataset: subclasses give __getitem__(index) and __len__().

    Example:
        >>> class Squares(kael.utils.data.Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return kael.tensor(float(i * i))
        >>> [batch.tolist() for batch in kael.utils.data.DataLoader(Squares(), batch_size=2)]
        [[0.0, 1.0], [4.0, 9.0]]
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream: subclasses give __iter__(); the DataLoader batches it.

    Example:
        >>> class Count(kael.utils.data.IterableDataset):
        ...     def __iter__(self): return iter(range(5))
        >>> [b.tolist() for b in kael.utils.data.DataLoader(Count(), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class ConcatDataset(Dataset):
    """Datasets one after the other.

    Example:
        >>> data = kael.utils.data.TensorDataset(kael.arange(3))
        >>> len(kael.utils.data.ConcatDataset([data, data]))
        6
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        self.ends = []
        total = 0
        for dataset in self.datasets:
            total += len(dataset)
            self.ends.append(total)

    def __len__(self):
        return self.ends[-1] if self.ends else 0

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset index {index} is out of range for {len(self)}")
        for number, end in enumerate(self.ends):
            if index < end:
                start = self.ends[number - 1] if number else 0
                return self.datasets[number][index - start]


def _as_tensor(value):
    return value if isinstance(value, kael.Tensor) else kael.from_numpy(value) \
        if hasattr(value, "__dlpack__") else kael.tensor(value)


class TensorDataset(Dataset):
    """Rows of tensors (or numpy arrays) of one length: item i is (t[i] for each tensor).

    Args:
        *tensors: kael tensors or numpy arrays whose first dimensions agree.

    Example:
        >>> data = kael.utils.data.TensorDataset(kael.rand(10, 3), kael.arange(10))
        >>> x, y = data[2]
        >>> x.shape, int(y)
        ((3,), 2)
    """

    def __init__(self, *tensors):
        self.tensors = tuple(_as_tensor(tensor) for tensor in tensors)
        if not self.tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        length = self.tensors[0].shape[0] if self.tensors[0].ndim else None
        for tensor in self.tensors:
            if tensor.ndim == 0 or tensor.shape[0] != length:
                raise ValueError(f"TensorDataset: size mismatch between tensors: "
                                 f"{[tuple(t.shape) for t in self.tensors]}")

    def __getitem__(self, index):
        return tuple(tensor[index] for tensor in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _batch(self, indices):
        rows = kael.tensor(indices, dtype=kael.int64)
        return tuple(tensor.index_select(0, rows.to(tensor.device)) for tensor in self.tensors)


class Subset(Dataset):
    """The items of dataset at indices, in that order.

    Example:
        >>> data = kael.utils.data.TensorDataset(kael.arange(10))
        >>> [int(x) for (x,) in kael.utils.data.Subset(data, [7, 2])]
        [7, 2]
    """

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        if isinstance(index, list):
            return [self.dataset[self.indices[i]] for i in index]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)

    def _batch(self, indices):
        return self.dataset._batch([self.indices[i] for i in indices])


def _batches_by_index(dataset):
    """True for a TensorDataset, or Subsets of one: a batch is one index_select per tensor."""
    while isinstance(dataset, Subset):
        dataset = dataset.dataset
    return isinstance(dataset, TensorDataset)


def _permutation(n, generator):
    if generator is None:
        return kael.randperm(n).tolist()
    return kael.randperm(n, generator=generator).tolist()


def random_split(dataset, lengths, generator=None):
    """dataset split at random into Subsets of the given lengths (or fractions summing to 1).

    Example:
        >>> data = kael.utils.data.TensorDataset(kael.arange(10))
        >>> train, test = kael.utils.data.random_split(data, [0.8, 0.2],
        ...                                            generator=kael.Generator().manual_seed(0))
        >>> len(train), len(test)
        (8, 2)
    """
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and \
            math.isclose(sum(lengths), 1.0) and sum(lengths) <= 1:
        counts = [int(math.floor(len(dataset) * fraction)) for fraction in lengths]
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("random_split: the lengths do not sum to the length of the dataset")
    order = _permutation(len(dataset), generator)
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets


from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: E402
                      SubsetRandomSampler, WeightedRandomSampler)
from .dataloader import DataLoader, default_collate  # noqa: E402
from . import dataloader, dataset, distributed, sampler  # noqa: E402,F401
