"""kael.utils.data: datasets, samplers and the DataLoader, with PyTorch's names and behaviour.

A TensorDataset is batched with one index_select per tensor per batch, not element by element.
Shuffling draws its order from the generator given (or kael's process generator), so restoring
the generator's state reproduces the following epochs' order exactly.
"""
import math

import kael

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "BatchSampler", "DataLoader",
           "default_collate"]


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


class Sampler:
    """The order in which a DataLoader reads a dataset's indices: subclasses give __iter__.

    Example:
        >>> list(kael.utils.data.SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices 0..len(data_source)-1 in order.

    Example:
        >>> list(kael.utils.data.SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Indices in a random order, a new one per pass, from generator (or kael's generator).

    Args:
        data_source: the dataset; replacement (bool): draw with replacement;
        num_samples (int, optional): how many per pass; generator (kael.Generator, optional).

    Example:
        >>> sampler = kael.utils.data.RandomSampler(range(5), generator=kael.Generator().manual_seed(1))
        >>> sorted(sampler)
        [0, 1, 2, 3, 4]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer, but got {num_samples}")

    @property
    def num_samples(self):
        """How many indices one pass yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        extra = {} if self.generator is None else {"generator": self.generator}
        if self.replacement:
            return iter(kael.randint(0, n, (self.num_samples,), **extra).tolist())
        order = []
        while len(order) < self.num_samples:
            order.extend(_permutation(n, self.generator))
        return iter(order[:self.num_samples])

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from sampler (the last one shorter unless drop_last).

    Example:
        >>> list(kael.utils.data.BatchSampler(range(5), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        count = len(self.sampler)
        return count // self.batch_size if self.drop_last else -(-count // self.batch_size)


def default_collate(batch):
    """Items of a batch joined field by field: tensors stacked, numpy arrays and numbers made
    tensors, dicts, tuples and lists collated per field, strings kept as lists.

    Example:
        >>> kael.utils.data.default_collate([(kael.ones(2), 1), (kael.zeros(2), 0)])[1]
        kael.tensor([1, 0])
    """
    first = batch[0]
    if isinstance(first, kael.Tensor):
        return kael.stack(list(batch))
    if hasattr(first, "__dlpack__") and hasattr(first, "shape"):
        return kael.stack([kael.tensor(item) for item in batch])
    if isinstance(first, (bool, int, float)):
        return kael.tensor(list(batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, dict):
        return {key: default_collate([item[key] for item in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(first, (tuple, list)):
        if any(len(item) != len(first) for item in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first).__name__}")


class DataLoader:
    """Batches of a dataset, in order or shuffled, as PyTorch's DataLoader (in this process).

    Args:
        dataset: a Dataset (map-style or IterableDataset), e.g. a TensorDataset.
        batch_size (int or None): items per batch (None: items one by one, uncollated).
        shuffle (bool): a new random order each pass, from generator.
        sampler, batch_sampler: custom orders (exclusive with shuffle / batch_size).
        drop_last (bool): drop the last, shorter batch.
        collate_fn: joins a list of items (default_collate).
        generator (kael.Generator, optional): the shuffle's generator; kael's process
            generator when None.

    A TensorDataset (or a Subset of one) with the default collate is batched with one
    index_select per tensor.

    Example:
        >>> data = kael.utils.data.TensorDataset(kael.rand(10, 3), kael.arange(10))
        >>> loader = kael.utils.data.DataLoader(data, batch_size=4, shuffle=True,
        ...                                     generator=kael.Generator().manual_seed(0))
        >>> [tuple(x.shape) for x, y in loader]
        [(4, 3), (4, 3), (2, 3)]
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 generator=None, **unused):
        self.dataset, self.generator = dataset, generator
        self.batch_size, self.drop_last = batch_size, drop_last
        self.collate_fn = collate_fn or default_collate
        self._default_collate = collate_fn is None
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler and batch_sampler options")
        if not self._iterable:
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle \
                    else SequentialSampler(dataset)
            if batch_sampler is None and batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler

    def __len__(self):
        if self._iterable:
            raise TypeError("len() of a DataLoader over an IterableDataset is not defined")
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def __iter__(self):
        if self._iterable:
            yield from self._iterate_stream()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.dataset[index]
            return
        fast = self._default_collate and _batches_by_index(self.dataset)
        for indices in self.batch_sampler:
            if fast:
                yield list(self.dataset._batch(indices))
            else:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterate_stream(self):
        if self.batch_size is None:
            yield from iter(self.dataset)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
