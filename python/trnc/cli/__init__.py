"""The ``trnc`` command line (``[project.scripts] trnc = "trnc.cli:main"``).

Each sub-command lives in its own module of this package and defines
``register(subparsers)``, which adds its parser and sets ``func`` to a handler
returning the exit code. Modules are discovered, so adding a command is
adding a file; they import torch and the extension only inside their handler,
so ``trnc --help`` starts in a fraction of a second.

Exit codes: 0 success; 1 an error from trnc (``TrncError``: its message, no
traceback); 2 a usage error (argparse's, or ``UsageError`` from a handler);
141 (128 + SIGPIPE) quietly when the reader of stdout went away
(``trnc inspect X -d | head``); 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from typing import Optional, Sequence

from .. import __version__
from ..errors import TrncError

__all__ = ["main", "build_parser", "UsageError"]


class UsageError(TrncError):
    """A command line that cannot work as written (exit code 2, like argparse's errors)."""


class _Version(argparse.Action):
    """``--version``, asking the extension for its compiler identity only when used."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .._native import native

        try:
            compiler = native().compiler_identity()
        except TrncError:
            compiler = "extension not built"
        print(f"trnc {__version__} (compiler: {compiler})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trnc",
        description="trnc: torch.compile for AWS Trainium, executed on a bundled NeuronCore simulator",
    )
    parser.add_argument("--version", action=_Version, help="print trnc's and the compiler's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def _stdout_gone() -> int:
    """The reader of stdout closed the pipe: discard what is still buffered, exit quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here for output still buffered
        return code
    except BrokenPipeError:
        return _stdout_gone()
    except UsageError as exc:
        print(f"trnc {args.command}: error: {str(exc).removeprefix('trnc: ')}", file=sys.stderr)
        return 2
    except TrncError as exc:
        print(f"trnc: error: {str(exc).removeprefix('trnc: ')}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
