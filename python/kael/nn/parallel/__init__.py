"""kael.nn.parallel: DistributedDataParallel, as torch.nn.parallel's: each process trains a
replica on its share of the batch and the gradients are averaged across the group during
backward, a bucket at a time, each bucket's all-reduce queued as soon as its gradients are
ready (kael.distributed's worker thread), so communication overlaps the rest of backward."""
import contextlib

from ... import _kael
from ... import autograd as _autograd
from ... import distributed as _dist
from ..._compile import _flatten
from .. import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wraps module for data-parallel training over process_group (the default group): at
    construction its parameters and buffers are broadcast from rank 0; during backward the
    gradients of parameters that require grad are averaged across ranks in buckets of about
    bucket_cap_mb MiB (registration order reversed, as the gradients arrive). no_sync() skips
    the averaging (gradient accumulation: the next synchronised backward averages the sum).
    Every parameter must get a gradient in each synchronised backward, unless
    find_unused_parameters=True: then each forward walks the autograd graph from the outputs,
    parameters it does not reach count as ready with a zero gradient, and one more small
    all-reduce per step tells which were used on any rank (the others keep their .grad), as in
    PyTorch. Without it, a backward that leaves one out is reported at the next forward.
    An empty .grad becomes a view of its bucket's averaged buffer whatever
    gradient_as_bucket_view says (PyTorch's False copies each out: the same values, one copy a
    parameter more); a .grad that exists is written in place.

    Example:
        >>> kael.nn.parallel.DistributedDataParallel  # doctest: +ELLIPSIS
        <class 'kael.nn.parallel.DistributedDataParallel'>
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        self.module = module
        self._group = process_group
        self._broadcast_buffers = broadcast_buffers
        self._find_unused = bool(find_unused_parameters)
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
        self._position = {id(p): i for i, p in enumerate(params)}
        self._reset()
        for p in params:
            p.register_hook(lambda grad, p=p: self._gradient_ready(p, grad))

    def _reset(self):
        self._totals = {}  # id(param) -> its local gradient sum this step
        self._pending = [len(members) for members in self._buckets]  # gradients still to come
        self._works = {}  # bucket index -> (Work, flat tensor)
        self._launched = 0  # buckets start in index order, the same on every rank
        self._fresh = {}
        self._ready = 0
        self._used = [False] * len(self._params)  # locally, this step

    def _contribute(self, param, total, fresh):
        """param's local gradient sum is known: its bucket's all-reduce starts once it and
        every bucket before it are complete."""
        self._totals[id(param)] = total
        self._fresh[id(param)] = fresh  # .grad will be the engine's tensor: replace it
        self._ready += 1
        self._pending[self._bucket_of[id(param)]] -= 1
        # Complete buckets start in index order, as PyTorch's: a rank whose gradients arrive in
        # another order (or that found parameters unused at forward) pairs its all-reduces
        # with the others' all the same.
        while self._launched < len(self._buckets) and not self._pending[self._launched]:
            members = self._buckets[self._launched]
            flat = _kael.cat([self._totals[id(p)].reshape(-1) for p in members])
            work = _dist.all_reduce(flat, group=self._group, async_op=True)
            self._works[self._launched] = (work, flat)
            self._launched += 1

    def _gradient_ready(self, param, grad):
        if not self._sync:
            return grad
        if id(param) in self._totals:
            self._reset()
            raise RuntimeError(
                "DistributedDataParallel: a parameter got a gradient after the forward found it "
                "unused (or twice in one backward); find_unused_parameters needs every use of "
                "a parameter to happen inside forward")
        prior = param.grad
        self._used[self._position[id(param)]] = True
        self._contribute(param, grad if prior is None else prior + grad, prior is None)
        if self._ready < len(self._params):
            return grad
        return self._finish(param)

    def _finish(self, param):
        """The step's last gradient: every bucket's average written into .grad; the value
        param's own hook returns (its .grad is cleared, so it becomes the average exactly)."""
        world = _dist.get_world_size(self._group)
        used = None
        if self._find_unused:  # which parameters any rank used: the others keep their .grad
            used = _kael.tensor([float(u) for u in self._used])
            _dist.all_reduce(used, group=self._group)
            used = used.tolist()
        mine = None
        with _autograd.no_grad():
            for index, members in enumerate(self._buckets):
                work, flat = self._works[index]
                work.wait()
                if world > 1:
                    flat.div_(world)  # the step's own buffer: averaged in place
                # Fresh gradients become views of the averaged buffer (no copy a parameter, as
                # PyTorch's gradient_as_bucket_view); a .grad the user kept is written in place.
                pieces = flat.split([p.numel() for p in members])
                for p, piece in zip(members, pieces):
                    if used is not None and not used[self._position[id(p)]]:
                        continue
                    piece = piece.view(p.shape)
                    if p is param:  # accumulated after this hook: into a cleared .grad
                        mine = piece
                    elif p.grad is None or self._fresh[id(p)]:
                        p.grad = piece
                    else:
                        p.grad.copy_(piece)
        if param is not None:
            param.grad = None
        self._reset()
        return mine

    def _mark_unused(self, output):
        """find_unused_parameters: the parameters a backward from output cannot reach are
        ready now, contributing what they accumulated (no_sync steps) or zeros."""
        tensors = _flatten(output, [])
        reached = _kael._autograd.reaches(tensors, self._params)
        for p, reach in zip(self._params, reached):
            if reach:
                continue
            if p.grad is not None:
                self._used[self._position[id(p)]] = True
                self._contribute(p, p.grad.detach().clone(), False)
            else:
                self._contribute(p, _kael.zeros(p.shape, dtype=p.dtype, device=p.device), True)
        if self._ready == len(self._params):  # nothing to wait for: no hook will fire
            self._finish(None)

    def forward(self, *inputs, **kwargs):
        if self._ready:
            self._reset()
            raise RuntimeError(
                "DistributedDataParallel: the previous backward gave gradients to only some "
                "parameters, so they were not averaged; every parameter that requires grad must "
                "get one, or pass find_unused_parameters=True")
        if self._broadcast_buffers and _kael.is_grad_enabled():
            with _autograd.no_grad():
                for buffer in self.module.buffers():
                    _dist.broadcast(buffer, src=0, group=self._group)
        output = self.module(*inputs, **kwargs)
        if self._find_unused and self._sync and _kael.is_grad_enabled():
            self._mark_unused(output)
        return output

    @property
    def require_backward_grad_sync(self):
        """Whether the next backward averages gradients across ranks (torch's attribute, which
        no_sync() clears; nanoGPT sets it per micro-step).

        Example:
            >>> kael.nn.parallel.DistributedDataParallel.require_backward_grad_sync
            ... # doctest: +ELLIPSIS
            <property object at ...>
        """
        return self._sync

    @require_backward_grad_sync.setter
    def require_backward_grad_sync(self, value):
        self._sync = bool(value)

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
