#!/usr/bin/env python3
"""Whether this build lowers a corpus of real graphs exactly as another build does.

    python3 scripts/compare_lowering.py --base OTHER/build/bin/trnc-opt [--phase unroll]
        [--corpus DIR] [--jobs 2] [TEST_FILE ...]

For a refactor of the lowering that must not change its output (tile loops
that unroll to the stream emitted before, say): the graphs are collected by
running pytest files of test/python with TRNC_COLLECT_DIR set (trnc's
collection mode, python/trnc/collect.py: every graph exported, nothing
compiled, the tests run eagerly, so their verdicts mean nothing here), then
each is imported with this build's trnc-translate and lowered to `--phase`
by both trnc-opt binaries, and the two outputs compared with SSA values
renamed by first use (compare_streams.py), so an operand swapped for another
value is a difference. `--corpus DIR` keeps (or reuses) the collected graphs.
Build the base with `git worktree add /tmp/base REV` and its own CMake build.

Prints a line per graph that differs or fails, then the counts; exit status 0
when every graph that both builds lower is the same program.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from compare_streams import canonical  # noqa: E402

# Test files whose graphs go through most lowerings (matmul plans and
# epilogues, attention, row groups, reductions, elementwise groups, vision,
# optimizers, indirect rows).
DEFAULT_TESTS = [
    "test_attention_fused.py", "test_e2e_elementwise.py", "test_e2e_matmul_conv.py",
    "test_e2e_matmul_layout.py", "test_e2e_norms.py", "test_e2e_reductions.py",
    "test_e2e_training.py", "test_matmul_epilogue.py", "test_row_groups.py",
    "test_vision_ops.py", "test_optimizers.py", "test_indirect_rows.py",
]


def collect(corpus: str, tests: list) -> None:
    env = dict(os.environ, TRNC_COLLECT_DIR=corpus)
    test_dir = os.path.join(ROOT, "test", "python")
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                   cwd=test_dir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def lower(opt: str, mlir: str, phase: str, target: str, out: str) -> bool:
    pipeline = f"builtin.module(trnc-compile{{compile-to={phase} target={target}}})"
    return subprocess.run([opt, mlir, f"--pass-pipeline={pipeline}", "-o", out],
                          capture_output=True, timeout=600).returncode == 0


def compare(graph, translate: str, base: str, new: str, phase: str) -> tuple:
    """(verdict, name): same, differ, import-failed, base-failed, new-failed."""
    target = json.loads(graph.options_json).get("target", "trn2")
    with tempfile.TemporaryDirectory() as tmp:
        src, mlir = os.path.join(tmp, "g.json"), os.path.join(tmp, "g.mlir")
        with open(src, "w") as f:
            f.write(graph.graph_json)
        if subprocess.run([translate, "--import-graph-json", src, "-o", mlir],
                          capture_output=True).returncode != 0:
            return "import-failed", graph.name
        outs = [os.path.join(tmp, "base.mlir"), os.path.join(tmp, "new.mlir")]
        if not lower(base, mlir, phase, target, outs[0]):
            return "base-failed", graph.name
        if not lower(new, mlir, phase, target, outs[1]):
            return "new-failed", graph.name
        return ("same" if canonical(outs[0]) == canonical(outs[1]) else "differ"), graph.name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--base", required=True, help="the other build's trnc-opt")
    parser.add_argument("--new", default=os.path.join(ROOT, "build", "bin", "trnc-opt"))
    parser.add_argument("--phase", default="unroll", help="compile-to phase to compare (default unroll: the instruction stream)")
    parser.add_argument("--corpus", help="directory of collected graphs (collected into when empty)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("tests", nargs="*", help=f"test/python files to collect from (default: {len(DEFAULT_TESTS)} files)")
    args = parser.parse_args()
    from trnc.collect import read_collected  # the installed package's (its collection mode)

    translate = os.path.join(os.path.dirname(args.new), "trnc-translate")
    with tempfile.TemporaryDirectory() as scratch:
        corpus = args.corpus or scratch
        if not read_collected(corpus):
            collect(corpus, args.tests or DEFAULT_TESTS)
        graphs = read_collected(corpus)
        if not graphs:
            print(f"no graphs collected in {corpus}", file=sys.stderr)
            return 2
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda g: compare(g, translate, args.base, args.new, args.phase), graphs))
    counts: dict = {}
    for verdict, name in results:
        counts[verdict] = counts.get(verdict, 0) + 1
        if verdict != "same":
            print(f"{verdict:14s} {name}")
    print(", ".join(f"{n} {v}" for v, n in sorted(counts.items())), f"of {len(graphs)} graphs (phase {args.phase})")
    return 1 if counts.get("differ") or counts.get("new-failed") else 0


if __name__ == "__main__":
    sys.exit(main())
