"""kael-run across machines: one launcher per node (--nnodes 2, --node_rank, the same
--master_addr and --master_port), first as two launchers on the loopback, then as two network
namespaces joined by a veth pair (root and iproute2 needed; skipped with the reason where they
cannot be set up), each node's processes finding the others over its own interface."""
import os
import socket
import subprocess
import sys

import pytest

import kael.distributed as dist

# The collectives run on gloo (cpu): a kael built without it has none to test.
pytestmark = pytest.mark.skipif(not dist.is_gloo_available(),
                                reason="this kael has no gloo (its cpu plugin serves no collectives)")

SCRIPT = (
    "import os, kael, kael.distributed as dist\n"
    "dist.init_process_group('gloo')\n"
    "t = kael.tensor([float(dist.get_rank() + 1)])\n"
    "dist.all_reduce(t)\n"
    "os.write(1, f\"{dist.get_rank()} {os.environ['LOCAL_RANK']} {dist.get_world_size()} "
    "{t.item()}\\n\".encode())\n"
    "dist.destroy_process_group()\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launcher(node, address, port, script, prefix=()):
    return list(prefix) + [sys.executable, "-m", "kael.distributed.run", "--nnodes=2",
                           f"--node_rank={node}", "--nproc_per_node=2",
                           f"--master_addr={address}", f"--master_port={port}", str(script)]


def run_nodes(commands, environments):
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=environment)
                 for command, environment in zip(commands, environments)]
    lines = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        lines += out.splitlines()
    return sorted(lines)


EXPECTED = ["0 0 4 10.0", "1 1 4 10.0", "2 0 4 10.0", "3 1 4 10.0"]


def test_two_launchers_form_one_world(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    port = free_port()
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    commands = [launcher(node, "127.0.0.1", port, script) for node in (0, 1)]
    assert run_nodes(commands, [environment] * 2) == EXPECTED


def test_a_launcher_refuses_what_cannot_form_a_world(tmp_path):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    for flags, message in ((["--nnodes=2"], "needs --master_port"),
                           (["--nnodes=2", "--node_rank=2", "--master_port=1"],
                            "--node_rank must be in 0..1"),
                           (["--standalone", "--nnodes=2"], "--standalone is one machine")):
        done = subprocess.run([sys.executable, "-m", "kael.distributed.run", *flags, "x.py"],
                              capture_output=True, text=True, env=environment, timeout=60)
        assert done.returncode == 2 and message in done.stderr, done.stderr


def sh(*command):
    return subprocess.run(list(command), capture_output=True, text=True)


@pytest.fixture
def two_namespaces():
    """Two network namespaces, 10.77.N.1 and 10.77.N.2 over veth interfaces kv0/kv1."""
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    tag = os.getpid() % 200
    names = [f"kael{tag}a", f"kael{tag}b"]
    made = sh("ip", "netns", "add", names[0])
    if made.returncode != 0:
        pytest.skip(f"ip netns add failed: {made.stderr.strip()}")
    try:
        steps = [["ip", "netns", "add", names[1]],
                 ["ip", "link", "add", f"kv{tag}a", "type", "veth", "peer", "name",
                  f"kv{tag}b"]]
        for side, name in enumerate(names):
            link = f"kv{tag}{'ab'[side]}"
            steps += [["ip", "link", "set", link, "netns", name],
                      ["ip", "-n", name, "addr", "add", f"10.77.{tag}.{side + 1}/24", "dev",
                       link],
                      ["ip", "-n", name, "link", "set", link, "up"],
                      ["ip", "-n", name, "link", "set", "lo", "up"]]
        for step in steps:
            done = sh(*step)
            if done.returncode != 0:
                pytest.skip(f"{' '.join(step)} failed: {done.stderr.strip()}")
        yield [(name, f"kv{tag}{'ab'[side]}", f"10.77.{tag}.{side + 1}")
               for side, name in enumerate(names)]
    finally:
        for name in names:
            sh("ip", "netns", "del", name)


def test_two_nodes_in_network_namespaces_form_one_world(tmp_path, two_namespaces):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    master = two_namespaces[0][2]
    port = free_port()
    commands, environments = [], []
    for node, (name, link, _) in enumerate(two_namespaces):
        commands.append(launcher(node, master, port, script,
                                 prefix=("ip", "netns", "exec", name)))
        environments.append(dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path),
                                 GLOO_SOCKET_IFNAME=link))
    assert run_nodes(commands, environments) == EXPECTED
