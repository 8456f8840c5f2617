"""Launching ranks for test_distributed*.py the way users do: ``torchrun``
(``python -m torch.distributed.run --standalone``: the environment
rendezvous on a free local port, one process per rank, each joining gloo
with ``init_process_group("gloo")`` from the environment). ``launch`` runs
a rank body of this package on every rank; ``example`` runs a script of
benchmarks/distributed_examples with --check and returns its RESULT."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "..", "benchmarks", "distributed_examples")


def torchrun(argv: list, world: int, timeout: float = 240) -> str:
    """Runs `torchrun --standalone --nproc-per-node world argv...`; its output,
    or an AssertionError with the failing ranks' output."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}", *argv]
    proc = subprocess.run(cmd, cwd=os.path.dirname(HERE), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} on {world} ranks exited {proc.returncode}:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
    return proc.stdout


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
