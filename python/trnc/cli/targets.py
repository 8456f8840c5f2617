"""``trnc targets``: list the NeuronCore targets the compiler knows (default first)."""

from __future__ import annotations

import argparse

from .._native import native


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("targets", help="list known NeuronCore targets (default first)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in native().known_targets():
        print(name)
    return 0
