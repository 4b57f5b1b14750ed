"""Faults in kael.distributed's worlds (gloo, on loopback): a rank killed with SIGKILL or
stalled makes every other rank's pending collective raise DistBackendError within the timeout,
naming the rank; a rank joining twice and ranks that disagree on the world size fail at
init_process_group; the launcher stops the world when a worker is killed."""
import json
import os
import signal
import socket
import subprocess
import sys

import pytest

import kael
import kael.distributed as dist

# The collectives run on gloo (cpu): a kael built without it has none to test.
pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="this kael has no gloo (its cpu plugin serves no collectives)")

WORKER = os.path.join(os.path.dirname(__file__), "distributed_fault_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


def run_fault(scenario, world=3, timeout=20):
    init = f"tcp://127.0.0.1:{free_port()}"
    processes = [subprocess.Popen([sys.executable, WORKER, scenario, str(rank), str(world),
                                   init, str(timeout)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=environment())
                 for rank in range(world)]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=timeout + 60)
        lines = out.strip().splitlines()
        outcomes.append((process.returncode, json.loads(lines[-1]) if lines else None, err))
    return outcomes


def test_a_killed_rank_fails_the_others_collective_naming_it():
    outcomes = run_fault("die", timeout=30)
    assert outcomes[2][0] == -signal.SIGKILL
    for code, result, err in outcomes[:2]:
        assert code == 0, err
        assert result["error"] == "DistBackendError" and result["runtime_error"]
        assert "all_reduce failed" in result["message"]
        assert "rank 2 stopped responding" in result["message"]
        assert result["seconds"] < 30  # the peer's socket closed: long before the timeout


def test_a_stalled_rank_fails_the_others_at_the_timeout_naming_it():
    outcomes = run_fault("stall", timeout=4)
    assert outcomes[2][1] == {"stalled": True}
    for code, result, err in outcomes[:2]:
        assert code == 0, err
        assert result["error"] == "DistBackendError"
        assert "rank 2 is alive but has started 4 collectives" in result["message"], result
        assert 3 < result["seconds"] < 4 + 20


def test_tensors_of_different_sizes_across_ranks_fail_clearly():
    outcomes = run_fault("shape", world=2, timeout=6)
    for code, result, err in outcomes:
        assert code == 0, err
        assert result["error"] == "DistBackendError", result
        assert "all_reduce failed" in result["message"]


def test_a_rank_joining_twice_and_a_wrong_world_size_are_refused(tmp_path):
    path = f"file://{tmp_path}/rendezvous"
    dist.init_process_group("gloo", init_method=path, rank=0, world_size=1)
    try:
        store = kael.distributed.FileStore(str(tmp_path / "rendezvous"), 1)
        with pytest.raises(ValueError, match="rank 0 has already joined"):
            kael._kael._distributed.ProcessGroup(store._native, 0, 1, "gloo", 5.0, "default_pg")
        with pytest.raises(ValueError, match="world_size 2 here, but rank 0 joined a world of 1"):
            kael._kael._distributed.ProcessGroup(store._native, 1, 2, "gloo", 5.0, "default_pg")
    finally:
        dist.destroy_process_group()


def test_a_port_in_use_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"port {port}.*in use"):
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0,
                                    world_size=2)
    assert not dist.is_initialized()


def test_the_launcher_stops_the_world_when_a_worker_is_killed(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import os, signal, kael, kael.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "dist.all_reduce(kael.ones(4))\n"
        "if dist.get_rank() == 1:\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "dist.all_reduce(kael.ones(4))\n")
    launch = [sys.executable, "-m", "kael.distributed.run", "--nproc_per_node=3", str(script)]
    done = subprocess.run(launch, capture_output=True, text=True, env=environment(),
                          timeout=120)
    assert done.returncode != 0
    assert "rank 1 was killed by signal 9 (SIGKILL)" in done.stderr, done.stderr
