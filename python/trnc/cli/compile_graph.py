"""``trnc compile-graph GRAPH.json``: compile a saved graph JSON (docs/graph-json.md).

This is the reproducer that CompileError messages point at.
"""

from __future__ import annotations

import argparse
import sys

from .._native import native
from ..errors import TrncError
from ..options import DEFAULT_TARGET, CompilerOptions
from . import UsageError

EPILOG = """examples:
  trnc compile-graph /tmp/dump/forward_0.graph.json
  trnc compile-graph g.graph.json --target trn1 -o g.trnc && trnc profile g.trnc

A CompileError's message names the saved graph JSON (TRNC_DUMP_DIR) and this
command; it compiles without the artifact cache, so the compiler always runs.
Exit code 1 when the graph does not compile (the compiler's message on stderr)."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile-graph",
        help="compile one graph JSON file (the reproducer CompileError messages name)",
        description="Compile one saved graph JSON document (docs/graph-json.md) with the trnc compiler.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph", metavar="GRAPH.json", help="a graph JSON file (TRNC_DUMP_DIR, trnc compile -o)")
    p.add_argument("--target", default=DEFAULT_TARGET,
                   help=f"NeuronCore target (default {DEFAULT_TARGET}; see `trnc targets`)")
    p.add_argument("--dump-dir", metavar="DIR", default=None,
                   help="on a pipeline failure, save the input IR here and print the trnc-opt command")
    p.add_argument("-o", "--output", metavar="FILE.trnc", default=None,
                   help="write the artifact here (for trnc inspect / trnc profile / trnc-run)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.graph) as f:
            graph_json = f.read()
    except OSError as exc:
        raise TrncError(f"cannot read {args.graph}: {exc.strerror}") from None
    try:
        options = CompilerOptions(target=args.target, dump_dir=args.dump_dir)
    except TrncError as exc:
        raise UsageError(str(exc)) from None
    result = native().compile(graph_json, options.to_json())
    if not result["ok"]:
        print(f"error ({result['error_kind']}): {result['message']}", file=sys.stderr)
        return 1
    if args.output:
        with open(args.output, "wb") as f:
            f.write(result["artifact"])
    suffix = f" written to {args.output}" if args.output else ""
    print(f"ok: {len(result['artifact'])} byte artifact{suffix}")
    return 0
