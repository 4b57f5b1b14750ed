"""kael.utils.data.distributed: DistributedSampler, each process's share of a dataset (torch's
torch.utils.data.distributed)."""
import math

import kael

from . import _permutation
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices rank reads of a dataset split among num_replicas processes, as torch's
    DistributedSampler: with shuffle, one permutation per epoch (seed + epoch: call set_epoch
    each epoch), the same on every rank; without drop_last the indices are padded by repeating
    the first ones so every rank gets as many, with it the tail is dropped; rank r takes every
    num_replicas-th index from r. num_replicas and rank default to kael.distributed's group.

    Example:
        >>> sampler = kael.utils.data.distributed.DistributedSampler(
        ...     range(10), num_replicas=3, rank=1, shuffle=False)
        >>> list(sampler)
        [1, 4, 7, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            import kael.distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: pass num_replicas and rank, or call "
                                   "kael.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            generator = kael.Generator().manual_seed(self.seed + self.epoch)
            indices = _permutation(n, generator)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which with seed picks the shuffled order (the same on every rank).

        Example:
            >>> sampler = kael.utils.data.distributed.DistributedSampler(range(4), 2, 0)
            >>> sampler.set_epoch(3)
        """
        self.epoch = epoch
