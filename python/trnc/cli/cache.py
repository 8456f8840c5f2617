"""``trnc cache ls | stats | verify | prune --max-size SIZE | clear``: the artifact cache.

Every sub-command takes ``--cache-dir`` (default: ``TRNC_CACHE_DIR``, else
``~/.cache/trnc``). ``verify`` exits with 1 when an entry is corrupt and names
each one, and counts stale entries (another trnc's, never served) without failing; ``prune`` and ``clear`` exit with 1 when a file could not be removed
(a read-only cache), counting only what they did remove. ``clear`` of the
default cache (no ``--cache-dir``) asks first unless ``--yes`` or stdin is not a
terminal. See docs/cache.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

from .. import cache


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "cache",
        help="list, check, prune or clear the artifact cache",
        description="Inspect and maintain the trnc artifact cache (docs/cache.md).",
    )
    commands = p.add_subparsers(dest="cache_command", required=True, metavar="ACTION")

    def action(name: str, help: str, func) -> argparse.ArgumentParser:
        a = commands.add_parser(name, help=help, description=help)
        a.add_argument("--cache-dir", default=None, help="cache directory (default: $TRNC_CACHE_DIR or ~/.cache/trnc)")
        a.set_defaults(func=func)
        return a

    action("ls", "list entries, least recently used first", run_ls)
    action("stats", "entries, size, hits and compile time saved", run_stats)
    action("verify", "re-verify every entry; exit 1 if any is corrupt", run_verify)
    prune = action("prune", "remove least recently used entries down to a size", run_prune)
    prune.add_argument("--max-size", required=True, help="e.g. 2G, 500M, 0 (bytes when no unit)")
    clear = action("clear", "remove every entry", run_clear)
    clear.add_argument("--yes", "-y", action="store_true", help="do not ask before clearing the default cache")


def _when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


def _directory(args: argparse.Namespace) -> str:
    return os.path.abspath(args.cache_dir) if args.cache_dir else cache.cache_dir()


def run_ls(args: argparse.Namespace) -> int:
    directory = _directory(args)
    found = cache.entries(directory)
    print(f"{directory}: {len(found)} entries")
    if found:
        print(f"{'key':16}  {'graph':20} {'target':6} {'size':>10}  {'last used':19}  hits")
    for e in found:
        print(
            f"{e.key[:16]}  {e.graph_name[:20]:20} {e.target:6} {cache.format_size(e.size):>10}  "
            f"{_when(e.last_used)}  {e.hits}"
        )
    return 0


def run_stats(args: argparse.Namespace) -> int:
    s = cache.stats(directory=_directory(args))
    print(f"cache directory:       {s['cache_dir']}")
    print(f"enabled:               {'yes' if s['enabled'] else 'no (TRNC_DISABLE_CACHE)'}")
    print(f"entries:               {s['entries']}")
    print(f"size:                  {cache.format_size(s['bytes'])} of {cache.format_size(s['max_bytes'])}")
    print(f"hits (all processes):  {s['total_hits']}")
    print(f"compile time saved:    {s['compile_seconds_saved']:.2f} s")
    return 0


def run_verify(args: argparse.Namespace) -> int:
    directory = _directory(args)
    found = cache.entries(directory)
    checked = cache.check(directory)
    for entry, problem in checked.bad:
        print(f"BAD {entry.key} ({entry.graph_name}): {problem}")
    summary = f"{len(found)} entries checked, {len(checked.bad)} bad"
    if checked.stale:
        summary += (f", {len(checked.stale)} stale (written by another trnc: never served; "
                    "`trnc cache prune` drops the least recently used first)")
    print(summary)
    return 1 if checked.bad else 0


def _report(done: cache.Removal, what: str) -> int:
    print(f"{what} {done.entries} entries, freed {cache.format_size(done.bytes)}")
    if not done.failed:
        return 0
    path, reason = done.failed[0]
    print(f"trnc: could not remove {len(done.failed)} files (first: {path}: {reason})", file=sys.stderr)
    return 1


def run_prune(args: argparse.Namespace) -> int:
    return _report(cache.prune_entries(args.max_size, _directory(args)), "removed")


def run_clear(args: argparse.Namespace) -> int:
    directory = _directory(args)
    if args.cache_dir is None and not args.yes and sys.stdin.isatty():
        answer = input(f"remove every entry of the trnc cache {directory}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing removed")
            return 1
    return _report(cache.clear_entries(directory), f"{directory}: removed")
