"""kael.utils.data.sampler: the orders in which a DataLoader reads a dataset (torch's
torch.utils.data.sampler)."""
import kael

from . import _permutation

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
           "WeightedRandomSampler", "SubsetRandomSampler"]

_CHUNK = 4096  # indices drawn at once by the random samplers


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
        # Drawn a chunk at a time, so num_samples may be huge (minGPT's trainer asks 10**10).
        n = len(self.data_source)
        extra = {} if self.generator is None else {"generator": self.generator}
        left = self.num_samples
        while left > 0:
            if self.replacement:
                chunk = kael.randint(0, n, (min(left, _CHUNK),), **extra).tolist()
            else:
                chunk = _permutation(n, self.generator)[:left]
            left -= len(chunk)
            yield from chunk

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


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to weights (with replacement by
    default), as torch's, a chunk at a time.

    Example:
        >>> sampler = kael.utils.data.WeightedRandomSampler([0.0, 1.0, 0.0], 4)
        >>> list(sampler)
        [1, 1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer, but got {num_samples}")
        self.weights = kael.tensor(weights, dtype=kael.float64) if not isinstance(
            weights, kael.Tensor) else weights.to(kael.float64)
        if self.weights.dim() != 1:
            raise ValueError("WeightedRandomSampler: weights must be a sequence (1-D)")
        self.num_samples, self.replacement, self.generator = num_samples, replacement, generator

    def __iter__(self):
        extra = {} if self.generator is None else {"generator": self.generator}
        if not self.replacement:
            yield from kael.multinomial(self.weights, self.num_samples, False, **extra).tolist()
            return
        left = self.num_samples
        while left > 0:
            chunk = kael.multinomial(self.weights, min(left, _CHUNK), True, **extra).tolist()
            left -= len(chunk)
            yield from chunk

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one per pass.

    Example:
        >>> sorted(kael.utils.data.SubsetRandomSampler([4, 7, 9]))
        [4, 7, 9]
    """

    def __init__(self, indices, generator=None):
        self.indices, self.generator = list(indices), generator

    def __iter__(self):
        for i in _permutation(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)
