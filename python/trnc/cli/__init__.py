"""The ``trnc`` command line (``[project.scripts] trnc = "trnc.cli:main"``).

Each sub-command lives in its own module of this package and defines
``register(subparsers)``, which adds its parser and sets ``func`` to a handler
returning the exit code. Modules are discovered, so adding a command is
adding a file. Errors from trnc (``TrncError``) print their message and exit
with 1; usage errors exit with 2 (argparse).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Optional, Sequence

from .. import __version__
from .._native import native
from ..errors import TrncError


def _version_text() -> str:
    try:
        compiler = native().compiler_identity()
    except TrncError:
        compiler = "extension not built"
    return f"trnc {__version__} (compiler: {compiler})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trnc",
        description="trnc: torch.compile for AWS Trainium, executed on a bundled NeuronCore simulator",
    )
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TrncError as exc:
        print(f"trnc: error: {str(exc).removeprefix('trnc: ')}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
