"""One rank of test_distributed.py's worlds: runs the same collectives with kael.distributed or
torch.distributed (argv: library, rank, world size, init method) and prints the results as JSON,
so the test compares kael's gloo results with torch 1.13's on the same inputs."""
import json
import sys


def main():
    name, rank, world, init = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    lib = __import__(name)
    import importlib
    dist = importlib.import_module(f"{name}.distributed")
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    out = {"rank": dist.get_rank(), "size": dist.get_world_size()}

    def values(t):
        return t.float().tolist() if t.dtype == lib.bfloat16 else t.tolist()

    base = lib.arange(6, dtype=lib.float32).reshape(2, 3) * (rank + 1) - rank
    for op in ("SUM", "PRODUCT", "MIN", "MAX"):
        t = base.clone()
        dist.all_reduce(t, getattr(dist.ReduceOp, op))
        out[f"all_reduce_{op}"] = values(t)
    for dtype in ("float64", "int64", "int32", "int16", "int8", "uint8", "float16", "bfloat16",
                  "bool"):
        if name == "torch" and dtype in ("bfloat16", "bool", "int16"):
            continue  # torch 1.13's gloo lacks these (the test checks kael's by value)
        t = (lib.arange(5) + rank).to(getattr(lib, dtype))
        dist.all_reduce(t)
        out[f"all_reduce_sum_{dtype}"] = values(t)
    strided = (lib.arange(12, dtype=lib.float32).reshape(3, 4) + rank).t()
    dist.all_reduce(strided)  # not contiguous: reduced and written back in place
    out["all_reduce_strided"] = strided.tolist()
    b = lib.arange(4, dtype=lib.float32) * (rank + 1)
    dist.broadcast(b, src=world - 1)
    out["broadcast"] = b.tolist()
    r = lib.full((3,), float(rank + 1))
    dist.reduce(r, dst=0, op=dist.ReduceOp.PRODUCT)
    out["reduce"] = r.tolist()
    gathered = [lib.zeros(2, dtype=lib.int64) for _ in range(world)]
    dist.all_gather(gathered, lib.tensor([rank, 10 * rank]))
    out["all_gather"] = [g.tolist() for g in gathered]
    piece = lib.full((2, 3), float(rank))
    whole = lib.arange(2 * world, dtype=lib.float32) * (rank + 1)
    ints = (lib.arange(3 * world) * (rank + 1)) % 7
    if name == "torch":  # torch 1.13's gloo has neither: their definitions, composed
        parts = [lib.zeros(2, 3) for _ in range(world)]
        dist.all_gather(parts, piece)
        out["all_gather_into_tensor"] = lib.cat(parts).tolist()
        dist.all_reduce(whole)
        out["reduce_scatter_tensor"] = whole[2 * rank:2 * rank + 2].tolist()
        dist.all_reduce(ints, op=dist.ReduceOp.MAX)
        out["reduce_scatter_max_int64"] = ints[3 * rank:3 * rank + 3].tolist()
    else:
        into = lib.zeros(world * 2, 3)
        dist.all_gather_into_tensor(into, piece)
        out["all_gather_into_tensor"] = into.tolist()
        scattered = lib.zeros(2)
        dist.reduce_scatter_tensor(scattered, whole)
        out["reduce_scatter_tensor"] = scattered.tolist()
        scattered_ints = lib.zeros(3, dtype=lib.int64)
        dist.reduce_scatter_tensor(scattered_ints, ints, op=dist.ReduceOp.MAX)
        out["reduce_scatter_max_int64"] = scattered_ints.tolist()
    swapped = lib.zeros(2 * world)
    dist.all_to_all_single(swapped, lib.arange(2 * world, dtype=lib.float32) + 100 * rank)
    out["all_to_all_single"] = swapped.tolist()

    def rows(source, target):  # rows rank `source` sends rank `target` (some none)
        return (source + 2 * target) % 3
    sending = [rows(rank, j) for j in range(world)]
    taking = [rows(j, rank) for j in range(world)]
    uneven = lib.zeros(sum(taking), 2)
    dist.all_to_all_single(uneven, lib.arange(2.0 * sum(sending)).reshape(-1, 2) + 100 * rank,
                           output_split_sizes=taking, input_split_sizes=sending)
    out["all_to_all_uneven"] = uneven.tolist()
    if world > 1:
        if rank == 0:
            dist.send(lib.tensor([7.0, 8.0]), dst=1, tag=3)
        elif rank == 1:
            received = lib.zeros(2)
            dist.recv(received, src=0, tag=3)
            out["recv"] = received.tolist()
    # asynchronous: queued in call order, overlapping this thread's own work, waited at the end
    pending = [lib.full((1000,), float(rank + k)) for k in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in pending[:3]]
    works.append(dist.broadcast(pending[3], src=0, async_op=True))
    local = (lib.arange(100.0) * 2).sum().item()  # meanwhile, here
    out["async_completed"] = [bool(w.wait()) for w in works] + [w.is_completed() for w in works]
    out["async_values"] = [t[:2].tolist() for t in pending] + [local]
    synchronous = lib.ones(2) * (rank + 1)
    dist.all_reduce(synchronous)  # after the queued ones, in order
    out["after_async"] = synchronous.tolist()
    if name == "kael" or hasattr(dist, "all_gather_object"):
        objects = [None] * world
        dist.all_gather_object(objects, {"rank": rank, "text": "x" * (rank * 3)})
        out["all_gather_object"] = objects
        shared = [rank, "from rank 1"] if rank == min(1, world - 1) else [None, None]
        dist.broadcast_object_list(shared, src=min(1, world - 1))
        out["broadcast_object_list"] = shared
        out["backend"] = dist.get_backend()
    if name == "kael" and lib.is_available("cuda:0"):  # gloo stages cuda tensors on the host
        on_gpu = (lib.arange(4.0) * (rank + 1)).to("cuda:0")
        dist.all_reduce(on_gpu)
        gathered = lib.zeros(2 * world).to("cuda:0")
        dist.all_gather_into_tensor(gathered, lib.full((2,), float(rank)).to("cuda:0"))
        out["cuda_staged"] = [str(on_gpu.device), on_gpu.tolist(), gathered.tolist()]
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
