"""The ``trnc`` command line (``[project.scripts] trnc = "trnc.cli:main"``).

Commands today: ``--version``, ``targets`` and ``compile-graph`` (compile a
saved graph JSON, the reproducer that CompileError messages point at). Later
issues add compile/precompile/inspect/cache/profile.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from . import __version__
from ._native import native
from .errors import TrncError


def _version_text() -> str:
    try:
        compiler = native().compiler_identity()
    except TrncError:
        compiler = "extension not built"
    return f"trnc {__version__} (compiler: {compiler})"


def _cmd_targets(args: argparse.Namespace) -> int:
    for name in native().known_targets():
        print(name)
    return 0


def _cmd_compile_graph(args: argparse.Namespace) -> int:
    from .options import CompilerOptions

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
    print(f"ok: {len(result['artifact'])} byte artifact" + (f" written to {args.output}" if args.output else ""))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trnc", description="trnc: torch.compile for Trainium (simulated)")
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("targets", help="list known NeuronCore targets (default first)").set_defaults(func=_cmd_targets)
    cg = sub.add_parser("compile-graph", help="compile a graph JSON file (docs/graph-json.md)")
    cg.add_argument("graph")
    cg.add_argument("--target", default="trn2")
    cg.add_argument("--dump-dir", default=None)
    cg.add_argument("-o", "--output", default=None, help="write the artifact here")
    cg.set_defaults(func=_cmd_compile_graph)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except TrncError as exc:
        print(exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
