"""kael.utils.data.dataloader: DataLoader and default_collate (torch's
torch.utils.data.dataloader)."""
import warnings

import kael

from . import IterableDataset, _batches_by_index
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate"]


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
        pin_memory (bool): each batch's tensors copied into page-locked host memory
            (Tensor.pin_memory), where a real GPU serves cuda:0; elsewhere a warning, once,
            and batches as they are (PyTorch's rule).

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
        self.pin_memory = bool(pin_memory)
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
        if not self.pin_memory:
            yield from self._batches()
            return
        if not kael.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no GPU serves cuda:0, so "
                          "batches are not pinned", stacklevel=2)
            yield from self._batches()
            return
        for batch in self._batches():
            yield _pinned(batch)

    def _batches(self):
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


def _pinned(batch):
    """batch with every tensor in it copied into page-locked host memory (pin_memory)."""
    if isinstance(batch, kael.Tensor):
        return batch.pin_memory()
    if isinstance(batch, dict):
        return {key: _pinned(value) for key, value in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(_pinned(field) for field in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(_pinned(item) for item in batch)
    return batch
