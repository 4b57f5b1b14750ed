"""kael.distributed's nccl backend (the cuda plugin's collectives on NCCL, loaded at run time) on
a real GPU, in a world of one process as the one-GPU machine allows: every collective on cuda
tensors, DistributedDataParallel training equal to plain training, and kael-run starting an
nccl world. Skipped where no real GPU serves cuda:0; where one does and NCCL is missing, the
error names the library."""
import os
import subprocess
import sys

import pytest

import kael
import kael.distributed as dist


@pytest.fixture
def nccl_world(real_cuda, tmp_path):
    if real_cuda is None:
        pytest.skip("no real GPU serves cuda:0")
    dist.init_process_group("nccl", init_method=f"file://{tmp_path}/rendezvous", rank=0,
                            world_size=1)
    yield real_cuda
    dist.destroy_process_group()


def test_every_collective_on_cuda_tensors(nccl_world):
    device = nccl_world
    assert dist.get_backend() == "nccl"
    for dtype in (kael.float32, kael.float64, kael.bfloat16, kael.float16, kael.int64,
                  kael.int32, kael.int8, kael.uint8, kael.bool):
        t = (kael.arange(6) % 3).to(dtype).to(device)
        want = t.cpu().tolist()
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN,
                   dist.ReduceOp.PRODUCT):
            dist.all_reduce(t, op)
            assert t.cpu().tolist() == want and str(t.device) == device
    strided = kael.arange(12.0).reshape(3, 4).to(device).t()
    dist.all_reduce(strided, dist.ReduceOp.AVG)
    assert strided.cpu().tolist() == kael.arange(12.0).reshape(3, 4).t().tolist()
    b = kael.arange(5.0).to(device)
    dist.broadcast(b, src=0)
    gathered = kael.zeros(5).to(device)
    dist.all_gather_into_tensor(gathered, b)
    scattered = kael.zeros(5).to(device)
    dist.reduce_scatter_tensor(scattered, b)
    swapped = kael.zeros(5).to(device)
    dist.all_to_all_single(swapped, b)
    uneven = kael.zeros(5).to(device)
    dist.all_to_all_single(uneven, b, output_split_sizes=[5], input_split_sizes=[5])
    for result in (b, gathered, scattered, swapped, uneven):
        assert result.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    works = [dist.all_reduce(kael.ones(1000).to(device), async_op=True) for _ in range(3)]
    assert all(work.wait() for work in works)
    dist.barrier()
    with pytest.raises(RuntimeError, match="nccl backend takes cuda tensors"):
        dist.all_reduce(kael.ones(2))


def test_data_parallel_on_nccl_trains_as_the_plain_model(nccl_world):
    device = nccl_world
    results = []
    for wrap in (False, True):
        kael.manual_seed(5)
        model = kael.nn.Sequential(kael.nn.Linear(8, 16), kael.nn.GELU(),
                                   kael.nn.Linear(16, 2)).to(device)
        trained = kael.nn.parallel.DistributedDataParallel(model) if wrap else model
        optimizer = kael.optim.AdamW(trained.parameters(), lr=1e-2)
        kael.manual_seed(6)
        x, y = kael.randn(32, 8).to(device), kael.randint(0, 2, (32,)).to(device)
        for _ in range(4):
            optimizer.zero_grad(set_to_none=True)
            kael.nn.functional.cross_entropy(trained(x), y).backward()
            optimizer.step()
        results.append([p.detach().cpu() for p in model.parameters()])
    for plain, parallel in zip(*results):
        assert kael.allclose(plain, parallel, rtol=1e-5, atol=1e-6)


def test_the_launcher_starts_an_nccl_world(real_cuda, tmp_path):
    if real_cuda is None:
        pytest.skip("no real GPU serves cuda:0")
    script = tmp_path / "train.py"
    script.write_text(
        "import os, kael, kael.distributed as dist\n"
        "dist.init_process_group()\n"  # nccl by default where a GPU is
        "t = kael.ones(3).to(f\"cuda:{os.environ['LOCAL_RANK']}\")\n"
        "dist.all_reduce(t)\n"
        "print(dist.get_backend(), t.cpu().tolist())\n"
        "dist.destroy_process_group()\n")
    done = subprocess.run([sys.executable, "-m", "kael.distributed.run", "--standalone",
                           "--nproc_per_node=1", str(script)], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "nccl [1.0, 1.0, 1.0]"
