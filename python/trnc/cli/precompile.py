"""``trnc precompile -- python train.py ARGS``: collect a script's graphs, compile them in parallel.

The script runs once in a child process with ``TRNC_COLLECT_DIR`` set: the
``neuron`` backend then exports every graph (forward, backward, inference)
instead of compiling it and runs it eagerly, so the script finishes at eager
speed with no simulation (collect.py). Every distinct graph is then compiled
into the cache by ``--jobs`` worker processes (trnc/aot.py), so a following
real run of the script compiles nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from ..errors import TrncError
from . import UsageError

EPILOG = """examples:
  trnc precompile -- python train.py --epochs 1
  trnc precompile --jobs 4 -- python -m mypkg.train

Everything after `--` is the command to run. The script should run at least
one step of every shape and mode it will use (training, evaluation). Cache
location and options are taken from the environment as in a real run
(TRNC_CACHE_DIR, ...)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "precompile",
        help="run a script collecting its graphs (eagerly), then compile them all in parallel into the cache",
        description="Collect every graph a script compiles with backend='neuron', then compile them in parallel.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="worker processes (default: number of cores)")
    p.add_argument("--collect-dir", metavar="DIR", help="keep the collected graph JSON here (default: a temporary directory)")
    p.add_argument("script", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the command that runs the script")
    p.set_defaults(func=run)


class Progress:
    """``\\r`` progress bar on a terminal, one line per graph otherwise."""

    def __init__(self, total: int, stream=sys.stdout) -> None:
        self.total, self.stream = total, stream
        self.tty = stream.isatty()
        self.start = time.perf_counter()

    def __call__(self, done: int, result: "aot.GraphResult") -> None:  # noqa: F821
        if self.tty:
            width = 30
            filled = width * done // max(self.total, 1)
            bar = "#" * filled + "." * (width - filled)
            text = f"\r[{bar}] {done}/{self.total} {result.name} {result.status}"
            self.stream.write(text.ljust(80) + ("\n" if done == self.total else ""))
        else:
            self.stream.write(f"[{done}/{self.total}] {result.name}: {result.status} ({result.seconds:.2f}s)\n")
        self.stream.flush()


def _run_script(command: list[str], directory: str) -> int:
    from .. import collect

    env = dict(os.environ, **{collect.COLLECT_DIR_ENV: directory})
    print(f"collecting graphs: {' '.join(command)}", flush=True)
    try:
        return subprocess.run(command, env=env).returncode
    except OSError as exc:
        raise TrncError(f"cannot run {command[0]}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    from .. import aot, collect

    command = args.script[1:] if args.script[:1] == ["--"] else args.script
    if not command:
        raise UsageError("give the command to run after `--`, e.g. trnc precompile -- python train.py")
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    with tempfile.TemporaryDirectory(prefix="trnc-collect-") as tmp:
        directory = args.collect_dir or tmp
        status = _run_script(command, directory)
        graphs = collect.read_collected(directory)
        if status != 0:
            print(f"trnc: warning: the script exited with status {status}; compiling the {len(graphs)} graph(s) collected so far",
                  file=sys.stderr)
        if not graphs:
            print("trnc: warning: no graph was collected: does the script call torch.compile(..., backend=\"neuron\")?",
                  file=sys.stderr)
        print(aot.cache_line(graphs))
        print(f"compiling {len(graphs)} graph(s) with {min(args.jobs, max(len(graphs), 1))} worker(s)", flush=True)
        results = aot.compile_all(graphs, jobs=args.jobs, on_done=Progress(len(graphs)))
    print(aot.summary_line(results, cached_label="already cached"))
    for line in aot.failure_lines(results):
        print(line, file=sys.stderr)
    failed = any(r.status == "failed" for r in results)
    return 1 if failed or status != 0 else 0
