"""kael.distributed on gloo, against torch 1.13's torch.distributed on gloo: the same
collectives in worlds of 1, 2 and 3 processes give the same tensors (dtypes, non-contiguous
inputs, send/recv); and the stores, the init methods and the errors."""
import datetime
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

import kael
import kael.distributed as dist

# The collectives run on gloo (cpu): a kael built without it has none to test.
pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="this kael has no gloo (its cpu plugin serves no collectives)")

WORKER = os.path.join(os.path.dirname(__file__), "distributed_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_world(library, world, init):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    processes = [subprocess.Popen([sys.executable, WORKER, library, str(rank), str(world), init],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=environment)
                 for rank in range(world)]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.mark.parametrize("world", [1, 2, 3])
def test_collectives_match_torch_distributed_on_gloo(world):
    pytest.importorskip("torch")
    kael_results = run_world("kael", world, f"tcp://127.0.0.1:{free_port()}")
    torch_results = run_world("torch", world, f"tcp://127.0.0.1:{free_port()}")
    for rank, (got, want) in enumerate(zip(kael_results, torch_results)):
        assert got["rank"] == rank and got["size"] == world
        for key in want:
            if key == "reduce" and rank != 0:
                continue  # torch leaves an unspecified value on the other ranks
            assert got[key] == want[key], (rank, key)
    sums = [sum(i + r for r in range(world)) for i in range(5)]
    for got in kael_results:  # where torch 1.13's gloo has no such dtype: by value
        assert got["all_reduce_sum_bfloat16"] == [float(v) for v in sums]
        assert got["all_reduce_sum_int16"] == sums
        assert got["all_reduce_sum_bool"] == [world > 1 or i > 0 for i in range(5)]  # or
    if world == 2:
        assert kael_results[1]["recv"] == [7.0, 8.0]
    for got in kael_results:  # cuda tensors on gloo, through host copies
        if "cuda_staged" in got:
            scale = world * (world + 1) / 2
            assert got["cuda_staged"] == ["cuda:0", [i * scale for i in range(4)],
                                          [float(r) for r in range(world) for _ in range(2)]]


def test_file_init_method(tmp_path):
    results = run_world("kael", 2, f"file://{tmp_path}/rendezvous")
    assert results[0]["all_reduce_SUM"] == results[1]["all_reduce_SUM"]


def test_tcp_store_serves_every_operation_across_threads():
    master = dist.TCPStore("127.0.0.1", 0, is_master=True, timeout=datetime.timedelta(seconds=5))
    client = dist.TCPStore("127.0.0.1", master.port, timeout=datetime.timedelta(seconds=5))
    got = []
    waiter = threading.Thread(target=lambda: got.append(client.get("late")))
    waiter.start()
    master.set("late", b"here")  # get waits for the key, without holding the GIL
    waiter.join(timeout=5)
    assert got == [b"here"]
    assert [client.add("n", 2), master.add("n", 3)] == [2, 5]
    assert master.check(["late", "n"]) and not master.check(["missing"])
    client.set_timeout(datetime.timedelta(milliseconds=200))
    with pytest.raises(RuntimeError, match="'missing' was not set within 200 ms"):
        client.get("missing")
    with pytest.raises(RuntimeError, match="not set"):
        client.wait(["missing"], datetime.timedelta(milliseconds=100))
    assert client.timeout == datetime.timedelta(milliseconds=200)


def test_file_store(tmp_path):
    a = dist.FileStore(str(tmp_path / "s"), timeout=datetime.timedelta(seconds=1))
    b = dist.FileStore(str(tmp_path / "s"))
    a.set("k", "v")
    assert b.get("k") == b"v" and b.add("c", 5) == 5 and a.add("c", -1) == 4
    a.set("k", b"w")  # the last value wins
    assert b.get("k") == b"w"
    with pytest.raises(RuntimeError, match="not set within 1000 ms"):
        a.get("absent")


def test_a_failed_init_leaves_no_default_group(tmp_path):
    """Rank 0 of two, alone: init's barrier times out, and the half-made group is gone (a second
    init is not refused as 'already initialized')."""
    with pytest.raises(RuntimeError):
        dist.init_process_group("gloo", init_method=f"file://{tmp_path}/lonely", rank=0,
                                world_size=2, timeout=datetime.timedelta(seconds=2))
    assert not dist.is_initialized()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/alone", rank=0, world_size=1)
    dist.destroy_process_group()


def test_single_process_group_and_its_errors(tmp_path):
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/r", rank=0, world_size=1)
    try:
        assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
        with pytest.raises(RuntimeError, match="already initialized"):
            dist.init_process_group("gloo", init_method=f"file://{tmp_path}/r2", rank=0,
                                    world_size=1)
        with pytest.raises(TypeError, match="AVG takes floating"):
            dist.all_reduce(kael.ones(2, dtype=kael.int64), dist.ReduceOp.AVG)
        with pytest.raises(ValueError, match="out must hold"):
            dist.all_gather_into_tensor(kael.zeros(3), kael.zeros(2))
        with pytest.raises(RuntimeError, match="nccl backend takes cuda tensors"):
            dist.all_reduce(kael.ones(2), group=dist.new_group([0], backend="nccl"))
        t = kael.tensor([1.0, 3.0])
        dist.all_reduce(t, dist.ReduceOp.AVG)
        assert t.tolist() == [1.0, 3.0]
        failing = dist.all_reduce(kael.ones(2, dtype=kael.int64), dist.ReduceOp.AVG,
                                  async_op=True)
        with pytest.raises(TypeError, match="AVG takes floating"):  # raised where it is waited
            failing.wait()
        assert failing.is_completed()
        queued = [dist.all_reduce(kael.full((3,), float(i)), async_op=True) for i in range(5)]
        assert all(work.wait(datetime.timedelta(seconds=30)) for work in queued)
        group = dist.new_group([0])
        assert group.size() == 1 and dist.get_rank(group) == 0
        dist.barrier(group)
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="unknown init_method"):
        dist.init_process_group("gloo", init_method="udp://x", rank=0, world_size=1)
    with pytest.raises(ValueError, match="unknown backend 'mpi'"):
        dist.init_process_group("mpi", init_method=f"file://{tmp_path}/r3", rank=0,
                                world_size=1)


@pytest.mark.parametrize("size,replicas", [(10, 3), (12, 4), (5, 7), (1, 2)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_splits_as_torch(size, replicas, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    Sampler = kael.utils.data.distributed.DistributedSampler
    for rank in range(replicas):
        ours = Sampler(range(size), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(size), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    # shuffled: one permutation per (seed, epoch), the same on every rank, split disjointly
    shards = [Sampler(range(size), replicas, rank, seed=5, drop_last=drop_last)
              for rank in range(replicas)]
    for shard in shards:
        shard.set_epoch(2)
    taken = [i for shard in shards for i in shard]
    assert len(taken) == sum(len(s) for s in shards) == shards[0].total_size
    if not drop_last and size >= replicas:
        assert sorted(set(taken)) == list(range(size))
    again = Sampler(range(size), replicas, 0, seed=5, drop_last=drop_last)
    again.set_epoch(2)
    assert list(again) == list(shards[0])
    again.set_epoch(3)
    assert size < 3 or list(again) != list(shards[0]) or len(again) <= 1
    with pytest.raises(ValueError, match="Invalid rank"):
        Sampler(range(size), replicas, replicas)


def test_launcher_starts_a_world_and_reports_a_failing_rank(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import os, sys\n"
        "import kael, kael.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "t = kael.tensor([float(dist.get_rank() + 1)])\n"
        "dist.all_reduce(t)\n"
        "line = f\"{os.environ['LOCAL_RANK']} {dist.get_world_size()} {t.item()}\\n\"\n"
        "os.write(1, line.encode())  # one write: the ranks share the pipe\n"
        "rank = dist.get_rank()\n"
        "dist.destroy_process_group()\n"
        "sys.exit(3 if 'fail' in sys.argv and rank == 1 else 0)\n")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    launch = [sys.executable, "-m", "kael.distributed.run", "--nproc_per_node=3", str(script)]
    done = subprocess.run(launch, capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted("0 3 6.0 1 3 6.0 2 3 6.0".split())
    assert sorted(done.stdout.splitlines()) == ["0 3 6.0", "1 3 6.0", "2 3 6.0"]
    failed = subprocess.run(launch + ["fail"], capture_output=True, text=True, env=environment,
                            timeout=120)
    assert failed.returncode == 3 and "rank 1 exited with status 3" in failed.stderr


@pytest.mark.parametrize("accumulate", [1, 2])
def test_data_parallel_training_equals_training_on_the_global_batch(accumulate):
    """DDP over 2 processes, each on half of every batch (and with no_sync accumulation),
    ends with the parameters of one process training on whole batches (f64)."""
    worker = os.path.join(os.path.dirname(__file__), "ddp_worker.py")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    init = f"tcp://127.0.0.1:{free_port()}"
    processes = [subprocess.Popen([sys.executable, worker, str(rank), "2", init,
                                   str(accumulate)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=environment)
                 for rank in range(2)]
    finals = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        finals.append(json.loads(out.strip().splitlines()[-1]))
    assert finals[0] == finals[1]  # the replicas stay identical
    kael.manual_seed(11)  # rank 0's initial parameters
    model = kael.nn.Sequential(kael.nn.Linear(4, 8), kael.nn.Tanh(),
                               kael.nn.Linear(8, 3)).to(kael.float64)
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad(set_to_none=True)
        for micro in range(accumulate):
            kael.manual_seed(1000 + 10 * step + micro)
            x = kael.randn(8, 4).to(kael.float64)
            y = (x.sum(1, keepdim=True) * kael.ones(1, 3, dtype=kael.float64)).sin()
            kael.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    for got, want in zip(finals[0], [p.tolist() for p in model.parameters()]):
        assert kael.allclose(kael.tensor(got, dtype=kael.float64),
                             kael.tensor(want, dtype=kael.float64), rtol=1e-10, atol=1e-12)


def test_find_unused_parameters_averages_what_each_rank_used():
    """Rank 0 uses a branch that rank 1 does not, and no rank uses a third layer: the
    branch's gradient is averaged with rank 1's zeros, the idle layer keeps no gradient, and
    both replicas end as one process training on the mean of the two ranks' losses."""
    worker = os.path.join(os.path.dirname(__file__), "ddp_unused_worker.py")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    init = f"tcp://127.0.0.1:{free_port()}"
    processes = [subprocess.Popen([sys.executable, worker, str(rank), "2", init],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=environment) for rank in range(2)]
    finals = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        finals.append(json.loads(out.strip().splitlines()[-1]))
    assert finals[0] == finals[1] and not finals[0]["idle_grad"]
    sys.path.insert(0, os.path.dirname(worker))
    try:
        import ddp_unused_worker as w
    finally:
        sys.path.pop(0)
    kael.manual_seed(3)  # rank 0's initial parameters
    model = w.Branched().to(kael.float64)
    optimizer = kael.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad(set_to_none=True)
        losses = [kael.nn.functional.mse_loss(model(x, use_branch=r == 0), y)
                  for r, (x, y) in ((r, w.batch(step, r)) for r in range(2))]
        ((losses[0] + losses[1]) / 2).backward()
        optimizer.step()
    for got, want in zip(finals[0]["params"], [p.tolist() for p in model.parameters()]):
        assert kael.allclose(kael.tensor(got, dtype=kael.float64),
                             kael.tensor(want, dtype=kael.float64), rtol=1e-10, atol=1e-12)


def test_data_parallel_refuses_what_it_cannot_do(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/r", rank=0, world_size=1)
    try:
        two = kael.nn.ModuleDict({"a": kael.nn.Linear(2, 2), "b": kael.nn.Linear(2, 2)})
        ddp = kael.nn.parallel.DistributedDataParallel(two)
        two["a"](kael.ones(1, 2)).sum().backward()  # b got no gradient
        with pytest.raises(RuntimeError, match="only some parameters"):
            ddp(kael.ones(1, 2))
    finally:
        dist.destroy_process_group()
