"""``trnc compile-graph GRAPH.json``: compile a saved graph JSON (docs/graph-json.md).

This is the reproducer that CompileError messages point at.
"""

from __future__ import annotations

import argparse
import sys

from .._native import native
from ..options import CompilerOptions


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile-graph", help="compile a graph JSON file (docs/graph-json.md)")
    p.add_argument("graph")
    p.add_argument("--target", default="trn2")
    p.add_argument("--dump-dir", default=None)
    p.add_argument("-o", "--output", default=None, help="write the artifact here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with open(args.graph) as f:
        graph_json = f.read()
    options = CompilerOptions(target=args.target, dump_dir=args.dump_dir)
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
