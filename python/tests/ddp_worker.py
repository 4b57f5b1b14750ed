"""One rank of test_distributed.py's data-parallel check: trains an MLP wrapped in
DistributedDataParallel on its share of fixed batches and prints the final parameters (JSON)."""
import json
import sys

import kael
import kael.distributed as dist


def model():
    kael.manual_seed(rank + 11)  # replicas start different: DDP broadcasts rank 0's
    return kael.nn.Sequential(kael.nn.Linear(4, 8), kael.nn.Tanh(),
                              kael.nn.Linear(8, 3)).to(kael.float64)


def batches(step, micro):
    kael.manual_seed(1000 + 10 * step + micro)
    x = kael.randn(world * 4, 4).to(kael.float64)
    return x, (x.sum(1, keepdim=True) * kael.ones(1, 3, dtype=kael.float64)).sin()


rank, world, init, accumulate = (int(sys.argv[1]), int(sys.argv[2]), sys.argv[3],
                                 int(sys.argv[4]))
dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
ddp = kael.nn.parallel.DistributedDataParallel(model(), bucket_cap_mb=0.0001)
optimizer = kael.optim.SGD(ddp.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad(set_to_none=True)
    for micro in range(accumulate):
        x, y = batches(step, micro)
        mine = slice(4 * rank, 4 * rank + 4)
        context = ddp.no_sync() if micro < accumulate - 1 else kael.enable_grad()
        with context:
            kael.nn.functional.mse_loss(ddp(x[mine]), y[mine]).backward()
    optimizer.step()
print(json.dumps([p.tolist() for p in ddp.module.parameters()]))
dist.destroy_process_group()
