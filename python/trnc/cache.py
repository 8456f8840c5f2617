"""The artifact cache from Python: compile through it, statistics, listing, pruning.

The protocol that matters for correctness (verified reads, the per-key lock, the
atomic write) is C++ (compiler/lib/Cache, bound as ``trnc._C.cache_*``); this
module picks the directory and the settings, issues the warnings the C++ side
reports as ``TrncCacheWarning``, counts hits and misses, and lists, verifies and
prunes entries. See docs/cache.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
import warnings
from typing import Any, Callable, Mapping, Optional, Union

from ._native import native
from .errors import TrncError, error_from_result
from .options import CompilerOptions

__all__ = [
    "TrncCacheWarning",
    "Entry",
    "compile_graph",
    "compile_cached",
    "key",
    "enabled",
    "cache_dir",
    "max_size",
    "stats",
    "reset_stats",
    "entries",
    "verify",
    "prune",
    "clear",
    "parse_size",
    "format_size",
]

DEFAULT_MAX_SIZE = "2G"
DEFAULT_LOCK_TIMEOUT = 600
# Temporary files younger than this may belong to a writer that is still running.
STALE_TEMP_SECONDS = 600

_KEY_RE = re.compile(r"^[0-9a-f]{64}$")
OptionsLike = Union[CompilerOptions, Mapping[str, Any], None]


class TrncCacheWarning(UserWarning):
    """The cache could not be used as intended (bad entry, unusable directory, stale lock)."""


@dataclasses.dataclass
class _ProcessStats:
    hits: int = 0
    misses: int = 0
    compiles: int = 0
    compile_seconds: float = 0.0
    bytes_read: int = 0
    bytes_written: int = 0
    invalid_entries: int = 0
    warnings: int = 0


_stats = _ProcessStats()
_stats_lock = threading.Lock()
_warned_unusable: set[str] = set()


# ---------------------------------------------------------------- settings


def _options(options: OptionsLike) -> CompilerOptions:
    if isinstance(options, CompilerOptions):
        return options
    return CompilerOptions.from_mapping(options)


def enabled(options: OptionsLike = None) -> bool:
    """False when ``options={"cache": False}`` or ``TRNC_DISABLE_CACHE=1``."""
    if os.environ.get("TRNC_DISABLE_CACHE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    return _options(options).cache


def cache_dir(options: OptionsLike = None) -> str:
    """``options["cache_dir"]``, else ``TRNC_CACHE_DIR``, else ``$XDG_CACHE_HOME/trnc``
    (``~/.cache/trnc``)."""
    directory = _options(options).cache_dir or os.environ.get("TRNC_CACHE_DIR")
    if not directory:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "trnc")
    return os.path.abspath(os.path.expanduser(directory))


def parse_size(text: Union[str, int]) -> int:
    """``"2G"``, ``"500M"``, ``"1.5GiB"``, ``"4096"`` -> bytes (powers of 1024)."""
    if isinstance(text, int):
        return text
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(text))
    if not m:
        raise TrncError(f"trnc: invalid size {text!r} (examples: 2G, 500M, 4096)")
    scale = 1024 ** " KMGT".index(m.group(2).upper() or " ")
    return int(float(m.group(1)) * scale)


def format_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def max_size() -> int:
    """The size cap: ``TRNC_CACHE_MAX_SIZE`` (default 2G)."""
    return parse_size(os.environ.get("TRNC_CACHE_MAX_SIZE") or DEFAULT_MAX_SIZE)


def _lock_timeout() -> int:
    try:
        return max(1, int(float(os.environ.get("TRNC_CACHE_LOCK_TIMEOUT") or DEFAULT_LOCK_TIMEOUT)))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


# ---------------------------------------------------------------- compiling


def key(graph_json: str, options: OptionsLike = None) -> str:
    """The hex cache key of a graph JSON document under ``options``."""
    try:
        return native().cache_key(graph_json, _options(options).to_json())
    except ValueError as exc:
        raise TrncError(f"trnc: {exc}") from exc


def compile_graph(graph_json: str, options: OptionsLike = None) -> tuple[bytes, bool]:
    """Compile a graph JSON document through the cache: ``(artifact bytes, hit)``.

    Raises ``CompileError`` (or ``UnsupportedOperatorError``) like the backend.
    """
    return compile_cached(graph_json, _options(options))


def _graph_name(graph_json: str) -> str:
    try:
        return str(json.loads(graph_json).get("name") or "graph")
    except (ValueError, AttributeError):
        return "graph"


def _warn(kind: str, message: str, directory: str) -> None:
    if kind == "unwritable":
        if directory in _warned_unusable:
            return
        _warned_unusable.add(directory)
    with _stats_lock:
        _stats.warnings += 1
        _stats.invalid_entries += kind == "invalid_entry"
    warnings.warn(f"trnc: {message}", TrncCacheWarning, stacklevel=4)


def _compile_uncached(graph_json: str, options: CompilerOptions, name: str, reproducer) -> bytes:
    start = time.perf_counter()
    result = native().compile(graph_json, options.to_json())
    with _stats_lock:
        _stats.compiles += 1
        _stats.compile_seconds += time.perf_counter() - start
    if not result["ok"]:
        raise error_from_result(result, name, reproducer() if reproducer else None)
    return result["artifact"]


def compile_cached(
    graph_json: str,
    options: CompilerOptions,
    graph_name: Optional[str] = None,
    reproducer: Optional[Callable[[], Optional[str]]] = None,
) -> tuple[bytes, bool]:
    """``compile_graph`` for the backend: ``reproducer()`` is called only on failure."""
    name = graph_name or _graph_name(graph_json)
    if not enabled(options):
        return _compile_uncached(graph_json, options, name, reproducer), False
    options_json = options.to_json()
    try:
        k = native().cache_key(graph_json, options_json)
    except ValueError:
        # Malformed graph: the compiler reports it properly.
        return _compile_uncached(graph_json, options, name, reproducer), False
    directory = cache_dir(options)
    output_options = {k_: v for k_, v in json.loads(options_json).items() if k_ != "dump_dir"}
    manifest = json.dumps({"graph_name": name, "target": options.target, "options": output_options})
    result = native().cache_get_or_compile(directory, k, graph_json, options_json, manifest, _lock_timeout())
    for kind, message in result["warnings"]:
        _warn(kind, message, directory)
    with _stats_lock:
        if result["hit"]:
            _stats.hits += 1
            _stats.bytes_read += len(result["artifact"])
        else:
            _stats.misses += 1
        if result["compiled"]:
            _stats.compiles += 1
            _stats.compile_seconds += result["compile_seconds"]
        if result["stored"]:
            _stats.bytes_written += len(result["artifact"])
    if not result["ok"]:
        raise error_from_result(result, name, reproducer() if reproducer else None)
    if result["stored"]:
        _prune_quietly(directory)
    return result["artifact"], result["hit"]


# ---------------------------------------------------------------- entries


@dataclasses.dataclass
class Entry:
    """One cache entry: ``<dir>/v1/<key[0:2]>/<key>.trnc`` plus its manifest."""

    key: str
    path: str
    size: int
    last_used: float  # the artifact's mtime, refreshed on every hit
    manifest: dict

    @property
    def manifest_path(self) -> str:
        return self.path[: -len(".trnc")] + ".json"

    @property
    def graph_name(self) -> str:
        return str(self.manifest.get("graph_name", "?"))

    @property
    def target(self) -> str:
        return str(self.manifest.get("target", "?"))

    @property
    def hits(self) -> int:
        return int(self.manifest.get("hits", 0))


def _resolve(directory: Optional[str]) -> str:
    return os.path.abspath(directory) if directory else cache_dir()


def _shards(directory: str):
    root = os.path.join(directory, "v1")
    try:
        shards = sorted(os.scandir(root), key=lambda d: d.name)
    except OSError:
        return
    for shard in shards:
        if shard.is_dir(follow_symlinks=False):
            try:
                yield shard.path, sorted(os.listdir(shard.path))
            except OSError:
                continue


def _read_manifest(path: str) -> Optional[dict]:
    try:
        with open(path) as f:
            doc = json.load(f)
        return doc if isinstance(doc, dict) else None
    except (OSError, ValueError):
        return None


def entries(directory: Optional[str] = None) -> list[Entry]:
    """Every entry (an artifact file named by its key), oldest use first."""
    found = []
    for shard, names in _shards(_resolve(directory)):
        for name in names:
            if not name.endswith(".trnc") or not _KEY_RE.match(name[: -len(".trnc")]):
                continue
            path = os.path.join(shard, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # removed meanwhile
            manifest = _read_manifest(path[: -len(".trnc")] + ".json") or {}
            found.append(Entry(name[: -len(".trnc")], path, st.st_size, st.st_mtime, manifest))
    found.sort(key=lambda e: (e.last_used, e.key))
    return found


def verify(directory: Optional[str] = None) -> list[tuple[Entry, str]]:
    """Re-verify every entry (checksums, program, compiler identity): (entry, problem) list."""
    directory = _resolve(directory)
    problems = []
    for entry in entries(directory):
        looked = native().cache_lookup(directory, entry.key, False)
        if looked["status"] == "invalid":
            problems.append((entry, looked["reason"]))
        elif not entry.manifest:
            problems.append((entry, f"manifest {entry.manifest_path} is missing or unreadable"))
    return problems


def _remove(path: str) -> int:
    try:
        size = os.path.getsize(path)
        os.remove(path)
        return size
    except OSError:
        return 0


def _remove_entry(entry: Entry) -> int:
    # The artifact first: once it is gone the entry no longer exists.
    freed = _remove(entry.path)
    return freed + _remove(entry.manifest_path)


def _remove_leftovers(directory: str, now: float) -> int:
    """Temporary files of dead writers and manifests without an artifact."""
    freed = 0
    for shard, names in _shards(directory):
        present = set(names)
        for name in names:
            path = os.path.join(shard, name)
            stale_tmp = ".tmp-" in name
            orphan = name.endswith(".json") and name[: -len(".json")] + ".trnc" not in present
            if not (stale_tmp or orphan):
                continue
            try:
                if now - os.path.getmtime(path) < STALE_TEMP_SECONDS:
                    continue  # a writer may still be renaming it into place
            except OSError:
                continue
            freed += _remove(path)
    return freed


def prune(max_bytes: Union[int, str], directory: Optional[str] = None) -> tuple[int, int]:
    """Remove least recently used entries until the rest fit in ``max_bytes``;
    also stale temporary files. Returns (entries removed, bytes freed)."""
    limit = parse_size(max_bytes)
    directory = _resolve(directory)
    freed = _remove_leftovers(directory, time.time())
    current = entries(directory)
    total = sum(e.size + _size_of(e.manifest_path) for e in current)
    removed = 0
    for entry in current:  # oldest use first
        if total <= limit:
            break
        size = _remove_entry(entry)
        total -= size
        freed += size
        removed += 1
    return removed, freed


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _prune_quietly(directory: str) -> None:
    try:
        prune(max_size(), directory)
    except (OSError, TrncError):
        pass  # the cap is best effort; a bad TRNC_CACHE_MAX_SIZE is reported by `trnc cache`


def clear(directory: Optional[str] = None) -> int:
    """Remove every entry (and stale temporary files); returns the number removed."""
    directory = _resolve(directory)
    current = entries(directory)
    for entry in current:
        _remove_entry(entry)
    _remove_leftovers(directory, time.time())
    return len(current)


# ---------------------------------------------------------------- statistics


def reset_stats() -> None:
    """Zero this process's counters (tests)."""
    global _stats
    with _stats_lock:
        _stats = _ProcessStats()


def stats(options: OptionsLike = None, directory: Optional[str] = None) -> dict[str, Any]:
    """This process's counters plus the totals of the cache directory."""
    directory = os.path.abspath(directory) if directory else cache_dir(options)
    with _stats_lock:
        out: dict[str, Any] = dataclasses.asdict(_stats)
    current = entries(directory)
    out.update(
        cache_dir=directory,
        enabled=enabled(options),
        entries=len(current),
        bytes=sum(e.size for e in current),
        max_bytes=max_size(),
        total_hits=sum(e.hits for e in current),
        compile_seconds_saved=sum(e.hits * float(e.manifest.get("compile_seconds", 0.0)) for e in current),
    )
    return out
