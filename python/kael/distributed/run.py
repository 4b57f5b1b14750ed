"""python3 -m kael.distributed.run: torchrun's single-machine launcher. Starts nproc_per_node
copies of a script with RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT set (what init_process_group's "env://" reads), forwards Ctrl-C, and when one copy
fails stops the others and exits with its status, naming the rank."""
import argparse
import os
import signal
import socket
import subprocess
import sys
import time

__all__ = ["main"]


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="python3 -m kael.distributed.run",
        description="Runs a training script in several processes of one machine, as torchrun.")
    parser.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1,
                        help="processes to start (default 1)")
    parser.add_argument("--nnodes", type=int, default=1, help="machines (only 1 is supported)")
    parser.add_argument("--node_rank", "--node-rank", type=int, default=0)
    parser.add_argument("--master_addr", "--master-addr", default="127.0.0.1")
    parser.add_argument("--master_port", "--master-port", type=int, default=0,
                        help="the rendezvous port (default: a free one)")
    parser.add_argument("--standalone", action="store_true", help="accepted, as torchrun's")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script as a module (python -m)")
    parser.add_argument("script", help="the training script (or module with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    arguments = parser.parse_args(argv)
    if arguments.nnodes != 1 or arguments.node_rank != 0:
        parser.error("only one machine (--nnodes=1) is supported")
    if arguments.nproc_per_node < 1:
        parser.error("--nproc_per_node must be at least 1")
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
    port = arguments.master_port or _free_port()
    command = [sys.executable] + (["-m"] if arguments.module else []) + \
        [arguments.script] + arguments.script_args
    processes = []
    for rank in range(count):
        environment = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank),
                           WORLD_SIZE=str(count), LOCAL_WORLD_SIZE=str(count),
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
                rank, code = failed[0]
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


if __name__ == "__main__":
    sys.exit(main())
