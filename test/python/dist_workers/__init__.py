"""Launching ranks for test_distributed*.py the way users do: ``torchrun``
(``python -m torch.distributed.run --standalone``: the environment
rendezvous on a free local port, one process per rank, each joining gloo
with ``init_process_group("gloo")`` from the environment). ``launch`` runs
a rank body of this package on every rank; ``example`` runs a script of
benchmarks/distributed_examples with --check and returns its RESULT."""

import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "benchmarks", "distributed_examples")


def _descendants(pid: int) -> list:
    """The processes below `pid` (Linux /proc; torchrun starts each rank in
    a session of its own, so killing the launcher's group misses them)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(pid: int) -> None:
    for p in [pid, *_descendants(pid)]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def torchrun(argv: list, world: int, timeout: float = 240) -> str:
    """Runs `torchrun --standalone --nproc-per-node world argv...`; its output,
    or an AssertionError with the failing ranks' output. On a timeout the
    launcher and every rank are killed, so no rank outlives the test
    holding a core and the output so far is reported."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}", *argv]
    proc = subprocess.Popen(cmd, cwd=os.path.dirname(HERE), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{' '.join(argv)} on {world} ranks did not exit within {timeout:.0f} s, "
                                 "and killing them failed") from None
        raise AssertionError(f"{' '.join(argv)} on {world} ranks did not exit within {timeout:.0f} s "
                             f"(ranks killed); its output so far:\n{out[-3000:]}\n{err[-3000:]}") from None
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} on {world} ranks exited {proc.returncode}:\n"
                             f"{out[-3000:]}\n{err[-6000:]}")
    return out


def launch(fn, world: int = 2) -> None:
    """Runs fn(rank, world) (a function of this package) on `world` ranks."""
    torchrun(["-m", "dist_workers.rank", f"{fn.__module__}:{fn.__name__}"], world)


def example(name: str, world: int = 2, *flags: str) -> dict:
    """Runs benchmarks/distributed_examples/<name>.py --check on `world`
    ranks; rank 0's RESULT dict."""
    out = torchrun([os.path.join(EXAMPLES, f"{name}.py"), "--check", *flags], world)
    results = [line[len("RESULT "):] for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(results) == 1, f"{name}.py printed {len(results)} RESULT lines:\n{out}"
    return json.loads(results[0])
