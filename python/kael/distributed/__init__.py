"""kael.distributed: several processes training together, as torch.distributed. Processes meet
through a store (init_method "env://" reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE as
torchrun sets them; "tcp://host:port"; "file:///path") and form a process group whose
collectives run in the plugin serving the tensors' device: backend "gloo" (cpu tensors, gloo over
TCP, PyTorch's CPU library) or "nccl" (cuda tensors). Collectives block until this process's part
is done; with async_op=True they run on the group's worker thread, in call order, and return a
Work handle to wait on."""
import datetime
import os
import pickle
import urllib.parse

from .. import _kael
from ._group import ProcessGroup, Work
from ._stores import FileStore, Store, TCPStore, _timeout_seconds  # noqa: F401 (public)

_d = _kael._distributed

DistBackendError = _d.DistBackendError
DistBackendError.__doc__ = """A collective failed (torch.distributed.DistBackendError, a RuntimeError): a peer
process is gone, stalled past the group's timeout, or disagreed about the call. The message
names the op and, from the heartbeats each process publishes every second, the rank at fault
("rank 1 stopped responding", "rank 2 is alive but has not reached this one").

Example:
    >>> issubclass(kael.distributed.DistBackendError, RuntimeError)
    True
"""


class ReduceOp:
    """The reductions of all_reduce, reduce and reduce_scatter_tensor, as
    torch.distributed.ReduceOp: SUM, AVG (floating tensors), PRODUCT, MIN, MAX.

    Example:
        >>> kael.distributed.ReduceOp.MAX
        <ReduceOp.MAX: 4>
    """
    SUM = _d.ReduceOp.SUM
    AVG = _d.ReduceOp.AVG
    PRODUCT = _d.ReduceOp.PRODUCT
    MIN = _d.ReduceOp.MIN
    MAX = _d.ReduceOp.MAX


_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
_world = {"group": None, "groups": 0}


def is_available():
    """True: kael.distributed is built in (whether a backend works is known at
    init_process_group).

    Example:
        >>> kael.distributed.is_available()
        True
    """
    return True


def is_backend_available(backend):
    """Whether backend ("gloo" or "nccl") can run here, as torch.distributed's: the plugin serving
    cpu (gloo) or cuda devices (nccl) has collectives. A kael built without gloo has no gloo;
    NCCL itself is loaded when a group first needs it.

    Example:
        >>> kael.distributed.is_backend_available("mpi")
        False
    """
    return _d.backend_available(str(backend).lower())


def is_gloo_available():
    """Whether the gloo backend (cpu tensors) can run here (is_backend_available("gloo")).

    Example:
        >>> kael.distributed.is_gloo_available() in (True, False)
        True
    """
    return is_backend_available("gloo")


def is_nccl_available():
    """Whether the nccl backend (cuda tensors) can run here (is_backend_available("nccl")).

    Example:
        >>> kael.distributed.is_nccl_available() in (True, False)
        True
    """
    return is_backend_available("nccl")


def is_initialized():
    """Whether init_process_group has made the default group (and destroy_process_group has
    not removed it).

    Example:
        >>> kael.distributed.is_initialized()
        False
    """
    return _world["group"] is not None


def _seconds(timeout):
    return _timeout_seconds(_DEFAULT_TIMEOUT if timeout is None else timeout)


def _store_from(init_method, rank, world_size, timeout):
    url = urllib.parse.urlparse(init_method)
    query = dict(urllib.parse.parse_qsl(url.query))
    if url.scheme == "env":
        env = os.environ
        missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if v not in env]
        if missing:
            raise ValueError(f"init_process_group(init_method='env://'): environment variable "
                             f"{missing[0]} is not set (torchrun and kael-run set it)")
        if rank < 0:
            rank = int(env.get("RANK", "-1"))
        if world_size < 0:
            world_size = int(env.get("WORLD_SIZE", "-1"))
        host, port = env["MASTER_ADDR"], int(env["MASTER_PORT"])
    elif url.scheme == "tcp":
        host, port = url.hostname, url.port
        rank = int(query.get("rank", rank))
        world_size = int(query.get("world_size", world_size))
    elif url.scheme == "file":
        rank = int(query.get("rank", rank))
        world_size = int(query.get("world_size", world_size))
        if rank < 0 or world_size < 1:
            raise ValueError("init_process_group: rank and world_size are required")
        return FileStore(url.path, world_size, timeout), rank, world_size
    else:
        raise ValueError(f"init_process_group: unknown init_method {init_method!r}; expected "
                         f"'env://', 'tcp://host:port' or 'file:///path'")
    if rank < 0 or world_size < 1:
        raise ValueError(f"init_process_group: rank ({rank}) and world_size ({world_size}) are "
                         f"required (RANK and WORLD_SIZE for env://)")
    store = TCPStore(host, port, world_size, rank == 0, timeout)
    return store, rank, world_size


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Joins the default process group, as torch.distributed.init_process_group: through store
    when given (with rank and world_size), else init_method ("env://" by default). backend is
    "gloo" (cpu tensors) or "nccl" (cuda tensors); None picks nccl when a GPU is there.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "rendezvous")
        >>> if kael.distributed.is_gloo_available():  # a kael built with gloo
        ...     kael.distributed.init_process_group("gloo", init_method="file://" + path,
        ...                                         rank=0, world_size=1)
        ...     assert kael.distributed.get_world_size() == 1
        ...     kael.distributed.destroy_process_group()
    """
    if _world["group"] is not None:
        raise RuntimeError("init_process_group: the default process group is already "
                           "initialized (destroy_process_group first)")
    if backend is None:
        backend = "nccl" if _kael.cuda_is_available() and not any(
            d.emulated for d in _kael.devices() if d.device.startswith("cuda")) else "gloo"
    backend = str(backend).lower()
    seconds = _seconds(timeout)
    if store is None:
        store, rank, world_size = _store_from(init_method or "env://", rank, world_size,
                                              seconds)
    elif rank < 0 or world_size < 1:
        raise ValueError("init_process_group: rank and world_size are required with a store")
    native = _d.ProcessGroup(store._native, rank, world_size, backend, seconds, "default_pg")
    _world["group"] = ProcessGroup(native, list(range(world_size)))
    _world["store"] = store
    _world["timeout"] = seconds
    try:
        barrier()  # every rank has joined when this returns, as torch's store-based init
    except BaseException:
        destroy_process_group()  # a failed init leaves no default group behind
        raise


def destroy_process_group(group=None):
    """Leaves the default group (or forgets group), releasing its connections.

    Example:
        >>> kael.distributed.is_initialized()
        False
    """
    if group is None or group is _world["group"]:
        if _world["group"] is not None:
            _world["group"]._close()
        _world["group"] = None
        _world.pop("store", None)
    elif group is not None:
        group._close()


def _group(group):
    chosen = _world["group"] if group is None else group
    if chosen is None:
        raise RuntimeError("Default process group has not been initialized, please make sure "
                           "to call init_process_group.")
    return chosen


def get_rank(group=None):
    """This process's rank in group (the default group when None).

    Example:
        >>> kael.distributed.get_rank  # doctest: +ELLIPSIS
        <function get_rank ...>
    """
    return _group(group).rank()


def get_world_size(group=None):
    """The number of processes in group (the default group when None).

    Example:
        >>> kael.distributed.get_world_size  # doctest: +ELLIPSIS
        <function get_world_size ...>
    """
    return _group(group).size()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of some ranks of the world (all when None), as torch.distributed.new_group:
    every process of the world calls it, in the same order; members get a group, others None.

    Example:
        >>> kael.distributed.new_group  # doctest: +ELLIPSIS
        <function new_group ...>
    """
    world = _group(None)
    ranks = sorted(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    _world["groups"] += 1
    name = f"group_{_world['groups']}"
    me = world.rank()
    if me not in ranks:
        return None
    native = _d.ProcessGroup(_world["store"]._native, ranks.index(me), len(ranks),
                             backend or world._native.backend,
                             _seconds(timeout) if timeout is not None else _world["timeout"],
                             name)
    return ProcessGroup(native, ranks)


def _issue(group, call, async_op):
    return _group(group)._submit(call, async_op)


def _group_rank(group, rank, what):
    chosen = _group(group)
    if rank not in chosen._ranks:
        raise ValueError(f"{what}: rank {rank} is not in the group {chosen._ranks}")
    return chosen._ranks.index(rank)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """tensor = op over every rank's tensor, in place.

    Example:
        >>> kael.distributed.all_reduce  # doctest: +ELLIPSIS
        <function all_reduce ...>
    """
    return _issue(group, lambda native: native.all_reduce(tensor, op), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Every rank's tensor = rank src's (a world rank).

    Example:
        >>> kael.distributed.broadcast  # doctest: +ELLIPSIS
        <function broadcast ...>
    """
    root = _group_rank(group, src, "broadcast")
    return _issue(group, lambda native: native.broadcast(tensor, root), async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank dst's tensor = op over every rank's; the others keep theirs.

    Example:
        >>> kael.distributed.reduce  # doctest: +ELLIPSIS
        <function reduce ...>
    """
    root = _group_rank(group, dst, "reduce")
    return _issue(group, lambda native: native.reduce(tensor, root, op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's tensor.

    Example:
        >>> kael.distributed.all_gather  # doctest: +ELLIPSIS
        <function all_gather ...>
    """
    outs = list(tensor_list)
    return _issue(group, lambda native: native.all_gather(outs, tensor), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor = every rank's input_tensor, concatenated along dim 0 (or stacked).

    Example:
        >>> kael.distributed.all_gather_into_tensor  # doctest: +ELLIPSIS
        <function all_gather_into_tensor ...>
    """
    return _issue(group, lambda native: native.all_gather_into_tensor(output_tensor, input_tensor),
                  async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output = op over every rank's slice `rank` of input (split evenly along dim 0).

    Example:
        >>> kael.distributed.reduce_scatter_tensor  # doctest: +ELLIPSIS
        <function reduce_scatter_tensor ...>
    """
    return _issue(group, lambda native: native.reduce_scatter_tensor(output, input, op),
                  async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Exchange rows (dim 0) between every pair of ranks: input_split_sizes[j] rows of input
    go to rank j, and output_split_sizes[j] rows of output come from rank j, in rank order.
    A side without split sizes is split evenly over the ranks. Both ranks of a pair must agree
    (rank j's input_split_sizes[i] == rank i's output_split_sizes[j]).

    Example:
        >>> import kael.distributed as dist
        >>> dist.all_to_all_single  # doctest: +ELLIPSIS
        <function all_to_all_single ...>

    In a world of two, rank 0 sending 1 row to itself and 2 to rank 1:
    ``dist.all_to_all_single(out, x, output_split_sizes=[1, 3], input_split_sizes=[1, 2])``.
    """
    if output_split_sizes is None and input_split_sizes is None:
        return _issue(group, lambda native: native.all_to_all_single(output, input), async_op)
    out_splits = [int(s) for s in output_split_sizes] if output_split_sizes is not None else []
    in_splits = [int(s) for s in input_split_sizes] if input_split_sizes is not None else []
    return _issue(group, lambda native: native.all_to_all_single(output, input, out_splits,
                                                                 in_splits), async_op)


def send(tensor, dst, group=None, tag=0):
    """Sends tensor to rank dst, which receives it with recv(src=this rank, tag).

    Example:
        >>> kael.distributed.send  # doctest: +ELLIPSIS
        <function send ...>
    """
    peer = _group_rank(group, dst, "send")
    _issue(group, lambda native: native.send(tensor, peer, tag), False)


def recv(tensor, src, group=None, tag=0):
    """Receives into tensor what rank src sends with this tag; returns src.

    Example:
        >>> kael.distributed.recv  # doctest: +ELLIPSIS
        <function recv ...>
    """
    peer = _group_rank(group, src, "recv")
    _issue(group, lambda native: native.recv(tensor, peer, tag), False)
    return src


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank of the group has called it.

    Example:
        >>> kael.distributed.barrier  # doctest: +ELLIPSIS
        <function barrier ...>
    """
    return _issue(group, lambda native: native.barrier(), async_op)


def get_backend(group=None):
    """The group's backend name: "gloo" or "nccl".

    Example:
        >>> kael.distributed.get_backend  # doctest: +ELLIPSIS
        <function get_backend ...>
    """
    return _group(group)._native.backend


def _object_tensor(obj):
    data = pickle.dumps(obj)
    return _kael.tensor(list(data), dtype=_kael.uint8), len(data)


def all_gather_object(object_list, obj, group=None):
    """object_list[r] = rank r's obj (any picklable object), as torch's: the objects travel as
    pickled bytes through the group's collectives (cpu tensors). Unpickling runs the senders'
    code paths: use it among processes you trust, as torch says.

    Example:
        >>> kael.distributed.all_gather_object  # doctest: +ELLIPSIS
        <function all_gather_object ...>
    """
    chosen = _group(group)
    data, length = _object_tensor(obj)
    lengths = _kael.zeros(chosen.size(), dtype=_kael.int64)
    all_gather_into_tensor(lengths, _kael.tensor([length]), group)
    longest = int(lengths.max().item())
    padded = _kael.zeros(longest, dtype=_kael.uint8)
    padded[:length] = data
    everything = _kael.zeros(chosen.size() * longest, dtype=_kael.uint8)
    all_gather_into_tensor(everything, padded, group)
    rows = everything.reshape(chosen.size(), longest)
    for r in range(chosen.size()):
        object_list[r] = pickle.loads(bytes(rows[r, :int(lengths[r].item())].tolist()))


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's object_list = rank src's (picklable objects), in place, as torch's.

    Example:
        >>> kael.distributed.broadcast_object_list  # doctest: +ELLIPSIS
        <function broadcast_object_list ...>
    """
    me = get_rank(group) if group is not None else get_rank()
    source = me == src if group is None else me == _group_rank(group, src, "broadcast_object_list")
    data, length = _object_tensor(list(object_list) if source else None)
    size = _kael.tensor([length])
    broadcast(size, src, group)
    received = data if source else _kael.zeros(int(size.item()), dtype=_kael.uint8)
    broadcast(received, src, group)
    if not source:
        object_list[:] = pickle.loads(bytes(received.tolist()))
