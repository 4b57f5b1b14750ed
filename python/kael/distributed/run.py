"""kael-run (python3 -m kael.distributed.run): torchrun's launcher. Starts nproc_per_node
copies of a script on this machine with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
MASTER_ADDR and MASTER_PORT set (what init_process_group's "env://" reads); with --nnodes N,
one launcher per machine (--node_rank 0..N-1, the same --master_addr and --master_port: node
0's rank 0 serves the rendezvous there). Forwards Ctrl-C, and when one copy fails stops the
others and exits non-zero, naming the rank and its exit status or signal."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

from .. import __version__

__all__ = ["main"]


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="kael-run",
        description="Runs a training script in several processes, on one machine or several "
                    "(one launcher each), as torchrun.")
    parser.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1,
                        help="processes to start on this machine (default 1)")
    parser.add_argument("--nnodes", type=int, default=1,
                        help="machines, each running one launcher (default 1)")
    parser.add_argument("--node_rank", "--node-rank", type=int, default=0,
                        help="this machine's place among them, 0..nnodes-1")
    parser.add_argument("--master_addr", "--master-addr", default="127.0.0.1",
                        help="node 0's address, where rank 0 serves the rendezvous")
    parser.add_argument("--master_port", "--master-port", type=int, default=0,
                        help="the rendezvous port (default: a free one; required with --nnodes)")
    parser.add_argument("--standalone", action="store_true",
                        help="one machine, a free local port (as torchrun's)")
    parser.add_argument("--version", action="version", version=f"kael-run {__version__}")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script as a module (python -m)")
    parser.add_argument("script", help="the training script (or module with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    arguments = parser.parse_args(argv)
    if arguments.nproc_per_node < 1 or arguments.nnodes < 1:
        parser.error("--nproc_per_node and --nnodes must be at least 1")
    if not 0 <= arguments.node_rank < arguments.nnodes:
        parser.error(f"--node_rank must be in 0..{arguments.nnodes - 1}")
    if arguments.standalone and arguments.nnodes != 1:
        parser.error("--standalone is one machine: drop --nnodes")
    if arguments.nnodes > 1 and not arguments.master_port:
        parser.error("--nnodes above 1 needs --master_port (every launcher must name the same)")
    return arguments


def main(argv=None):
    """Starts the processes and waits for them; returns the exit status (0 when all succeed).

    Example:
        >>> from kael.distributed.run import main
        >>> main(["--nproc_per_node=2", "-m", "json.tool", "--help"])  # doctest: +SKIP
        0
    """
    arguments = _arguments(sys.argv[1:] if argv is None else argv)
    count = arguments.nproc_per_node
    first = arguments.node_rank * count
    port = arguments.master_port or _free_port()
    command = [sys.executable] + (["-m"] if arguments.module else []) + \
        [arguments.script] + arguments.script_args
    processes = []
    for local in range(count):
        environment = dict(os.environ, RANK=str(first + local), LOCAL_RANK=str(local),
                           WORLD_SIZE=str(count * arguments.nnodes), LOCAL_WORLD_SIZE=str(count),
                           GROUP_RANK=str(arguments.node_rank),
                           MASTER_ADDR=arguments.master_addr, MASTER_PORT=str(port))
        processes.append(subprocess.Popen(command, env=environment))

    def stop_all(signum=signal.SIGTERM):
        for process in processes:
            if process.poll() is None:
                process.send_signal(signum)

    previous = signal.signal(signal.SIGINT, lambda *_: stop_all(signal.SIGINT))
    try:
        while True:
            states = [process.poll() for process in processes]
            failed = [(rank, code) for rank, code in enumerate(states)
                      if code is not None and code != 0]
            if failed:
                local, code = failed[0]
                rank = first + local
                stop_all()
                for process in processes:
                    process.wait()
                how = (f"was killed by signal {-code} ({signal.Signals(-code).name})"
                       if code < 0 else f"exited with status {code}")
                print(f"kael.distributed.run: rank {rank} {how}; the other ranks were stopped",
                      file=sys.stderr)
                return code if code > 0 else 1
            if all(code == 0 for code in states):
                return 0
            time.sleep(0.05)
    finally:
        signal.signal(signal.SIGINT, previous)


def _console():
    """The kael-run command's entry point."""
    sys.exit(main())


if __name__ == "__main__":
    _console()
