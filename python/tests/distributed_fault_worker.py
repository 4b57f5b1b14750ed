"""One rank of test_distributed_faults.py (argv: scenario, rank, world size, init method,
timeout seconds): joins a gloo group, runs a few all-reduces, then the scenario's fault; prints
what the collective raised (its type, message and how long it took) as JSON."""
import json
import os
import signal
import sys
import time

import kael
import kael.distributed as dist


def main():
    scenario, rank, world, init = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    timeout = float(sys.argv[5])
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world,
                            timeout=__import__("datetime").timedelta(seconds=timeout))
    for _ in range(3):
        dist.all_reduce(kael.ones(1000))
    faulty = world - 1
    if rank == faulty and scenario == "die":
        os.kill(os.getpid(), signal.SIGKILL)  # as kill -9 from outside
    if rank == faulty and scenario == "stall":
        time.sleep(timeout + 8)  # alive (its heartbeat goes on), never joining the collective
        print(json.dumps({"stalled": True}), flush=True)
        os._exit(0)
    size = 1000 + (rank == faulty) * 7 if scenario == "shape" else 1 << 20
    start = time.monotonic()
    try:
        dist.all_reduce(kael.ones(size))
        result = {"error": None}
    except Exception as error:  # the test checks the type
        result = {"error": type(error).__name__, "message": str(error),
                  "runtime_error": isinstance(error, RuntimeError)}
    result["seconds"] = time.monotonic() - start
    print(json.dumps(result), flush=True)
    time.sleep(4)  # rank 0 serves the store: the others' diagnosis still reads it
    os._exit(0)  # the group's peers may be gone: no orderly teardown


if __name__ == "__main__":
    main()
