"""kael.nn.parallel: DistributedDataParallel, as torch.nn.parallel's: each process trains a
replica on its share of the batch and the gradients are averaged across the group during
backward, a bucket at a time, each bucket's all-reduce queued as soon as its gradients are
ready (kael.distributed's worker thread), so communication overlaps the rest of backward."""
import contextlib

from ... import _kael
from ... import autograd as _autograd
from ... import distributed as _dist
from .. import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wraps module for data-parallel training over process_group (the default group): at
    construction its parameters and buffers are broadcast from rank 0; during backward the
    gradients of parameters that require grad are averaged across ranks in buckets of about
    bucket_cap_mb MiB (registration order reversed, as the gradients arrive). no_sync() skips
    the averaging (gradient accumulation: the next synchronised backward averages the sum).
    Every parameter must get a gradient in each synchronised backward; a backward that leaves
    one out is reported at the next forward, as PyTorch does without find_unused_parameters
    (find_unused_parameters=True is not supported yet and raises NotImplementedError).

    Example:
        >>> kael.nn.parallel.DistributedDataParallel  # doctest: +ELLIPSIS
        <class 'kael.nn.parallel.DistributedDataParallel'>
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if find_unused_parameters:
            raise NotImplementedError(
                "DistributedDataParallel(find_unused_parameters=True) is not supported yet: "
                "every parameter that requires grad must get a gradient each step")
        self.module = module
        self._group = process_group
        self._broadcast_buffers = broadcast_buffers
        self._sync = True
        params = [p for p in module.parameters() if p.requires_grad]
        with _autograd.no_grad():
            for tensor in list(module.parameters()) + list(module.buffers()):
                _dist.broadcast(tensor, src=0, group=process_group)
        cap = max(1, int(bucket_cap_mb * 1024 * 1024))
        self._buckets, bucket, size = [], [], 0
        for p in reversed(params):
            bucket.append(p)
            size += p.numel() * p.dtype.itemsize
            if size >= cap:
                self._buckets.append(bucket)
                bucket, size = [], 0
        if bucket:
            self._buckets.append(bucket)
        self._bucket_of = {}
        for index, members in enumerate(self._buckets):
            for p in members:
                self._bucket_of[id(p)] = index
        self._params = params
        self._reset()
        for p in params:
            p.register_hook(lambda grad, p=p: self._gradient_ready(p, grad))

    def _reset(self):
        self._totals = {}  # id(param) -> its local gradient sum this step
        self._works = {}  # bucket index -> (Work, flat tensor)
        self._fresh = {}
        self._ready = 0

    def _gradient_ready(self, param, grad):
        if not self._sync:
            return grad
        prior = param.grad
        total = grad if prior is None else prior + grad
        self._totals[id(param)] = total
        self._fresh[id(param)] = prior is None  # .grad will be the engine's tensor: replace it
        self._ready += 1
        index = self._bucket_of[id(param)]
        members = self._buckets[index]
        if all(id(p) in self._totals for p in members):
            flat = _kael.cat([self._totals[id(p)].reshape(-1) for p in members])
            work = _dist.all_reduce(flat, group=self._group, async_op=True)
            self._works[index] = (work, flat)
        if self._ready < len(self._params):
            return grad
        # the last gradient of the step: every bucket's average, written into .grad
        world = _dist.get_world_size(self._group)
        mine = None
        with _autograd.no_grad():
            for index, members in enumerate(self._buckets):
                work, flat = self._works[index]
                work.wait()
                averaged = flat / world
                offset = 0
                for p in members:
                    piece = averaged[offset:offset + p.numel()].reshape(p.shape)
                    offset += p.numel()
                    if p is param:  # accumulated after this hook: into a cleared .grad
                        mine = piece.clone()
                    elif p.grad is None or self._fresh[id(p)]:
                        p.grad = piece.clone()
                    else:
                        p.grad.copy_(piece)
        param.grad = None  # so .grad becomes the average exactly, whatever was accumulated
        self._reset()
        return mine

    def forward(self, *inputs, **kwargs):
        if self._ready:
            self._reset()
            raise RuntimeError(
                "DistributedDataParallel: the previous backward gave gradients to only some "
                "parameters, so they were not averaged; every parameter that requires grad must "
                "get one (find_unused_parameters is not supported yet)")
        if self._broadcast_buffers and _kael.is_grad_enabled():
            with _autograd.no_grad():
                for buffer in self.module.buffers():
                    _dist.broadcast(buffer, src=0, group=self._group)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally, unaveraged; the first
        synchronised backward after averages the accumulated sums.

        Example:
            >>> kael.nn.parallel.DistributedDataParallel.no_sync  # doctest: +ELLIPSIS
            <function DistributedDataParallel.no_sync ...>
        """
        previous, self._sync = self._sync, False
        try:
            yield
        finally:
            self._sync = previous
