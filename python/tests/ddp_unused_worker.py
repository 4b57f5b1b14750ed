"""One rank of test_distributed.py's find_unused_parameters check: a model with a branch that
only rank 0 uses and a parameter no rank uses, trained under
DistributedDataParallel(find_unused_parameters=True); prints the final parameters and whether
the never-used one has a gradient (JSON)."""
import json
import sys

import kael
import kael.distributed as dist


class Branched(kael.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = kael.nn.Linear(4, 3)
        self.branch = kael.nn.Linear(4, 3)
        self.idle = kael.nn.Linear(4, 3)  # never used

    def forward(self, x, use_branch):
        out = self.trunk(x).tanh()
        return out + self.branch(x) if use_branch else out


def batch(step, rank):
    kael.manual_seed(500 + 10 * step + rank)
    x = kael.randn(4, 4).to(kael.float64)
    return x, x[:, :3].sin()


if __name__ == "__main__":
    rank, world, init = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    kael.manual_seed(rank + 3)
    ddp = kael.nn.parallel.DistributedDataParallel(Branched().to(kael.float64),
                                                   find_unused_parameters=True,
                                                   bucket_cap_mb=0.0001)
    optimizer = kael.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad(set_to_none=True)
        x, y = batch(step, rank)
        kael.nn.functional.mse_loss(ddp(x, use_branch=rank == 0), y).backward()
        optimizer.step()
    print(json.dumps({"params": [p.tolist() for p in ddp.module.parameters()],
                      "idle_grad": ddp.module.idle.weight.grad is not None}))
    dist.destroy_process_group()
