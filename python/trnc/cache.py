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
import socket
import stat
import threading
import time
import warnings
from typing import Any, Callable, Mapping, NamedTuple, Optional, Union

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
    "prune_entries",
    "clear",
    "clear_entries",
    "Removal",
    "parse_size",
    "read_artifact_file",
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


# The C++ side takes an unsigned count of seconds; "inf" means wait this long.
MAX_LOCK_TIMEOUT = 2**31 - 1


def _lock_timeout() -> int:
    """``TRNC_CACHE_LOCK_TIMEOUT`` in seconds (default 600; "inf" waits for ever,
    near enough); anything unparsable, NaN or below 1 falls back to the default."""
    try:
        value = float(os.environ.get("TRNC_CACHE_LOCK_TIMEOUT") or DEFAULT_LOCK_TIMEOUT)
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT
    if value != value or value < 1:  # NaN, zero, negative
        return DEFAULT_LOCK_TIMEOUT
    return int(min(value, MAX_LOCK_TIMEOUT))


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
    artifact, hit, _ = compile_cached(graph_json, _options(options))
    return artifact, hit


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


class CachedCompile(NamedTuple):
    """What ``compile_cached`` returns: the artifact, whether the cache served
    it, and its cache key (None with the cache off or a malformed graph)."""

    artifact: bytes
    hit: bool
    key: Optional[str]


def compile_cached(
    graph_json: str,
    options: CompilerOptions,
    graph_name: Optional[str] = None,
    reproducer: Optional[Callable[[], Optional[str]]] = None,
) -> CachedCompile:
    """``compile_graph`` for the backend: ``reproducer()`` is called only on failure."""
    name = graph_name or _graph_name(graph_json)
    if not enabled(options):
        return CachedCompile(_compile_uncached(graph_json, options, name, reproducer), False, None)
    options_json = options.to_json()
    try:
        k = native().cache_key(graph_json, options_json)
    except ValueError:
        # Malformed graph: the compiler reports it properly.
        return CachedCompile(_compile_uncached(graph_json, options, name, reproducer), False, None)
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
    return CachedCompile(result["artifact"], result["hit"], k)


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

    # The manifest is data anyone who can write the directory may have edited:
    # a field of the wrong type reads as absent (``verify`` reports it).

    @property
    def graph_name(self) -> str:
        return _field(self.manifest, "graph_name", str, "?")

    @property
    def target(self) -> str:
        return _field(self.manifest, "target", str, "?")

    @property
    def hits(self) -> int:
        return _field(self.manifest, "hits", int, 0)

    @property
    def compile_seconds(self) -> float:
        return float(_field(self.manifest, "compile_seconds", (int, float), 0.0))


# What each manifest field must be (CacheStore.cpp writes them).
_MANIFEST_TYPES: dict[str, Any] = {
    "graph_name": str,
    "target": str,
    "options": dict,
    "key": str,
    "compiler": str,
    "artifact_bytes": int,
    "io_signature": str,
    "artifact_sha256": str,
    "mac": str,
    "compile_seconds": (int, float),
    "created": (int, float),
    "last_used": (int, float),
    "hits": int,
}


def _field(manifest: dict, name: str, kind: Any, default: Any) -> Any:
    value = manifest.get(name, default)
    if isinstance(value, bool) or not isinstance(value, kind):
        return default
    return value


def _manifest_problem(manifest: dict) -> Optional[str]:
    for name, kind in _MANIFEST_TYPES.items():
        if name in manifest and (isinstance(manifest[name], bool) or not isinstance(manifest[name], kind)):
            return f"manifest field '{name}' is {type(manifest[name]).__name__} {manifest[name]!r:.40}, not {getattr(kind, '__name__', 'a number')}"
    return None


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


MAX_MANIFEST_BYTES = 1 << 20  # CacheStore.cpp: kMaxManifestFileBytes


def _read_regular(path: str, max_bytes: int) -> Optional[bytes]:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``, else
    None: never follows a symlink, never blocks on a FIFO (docs/cache.md)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        return os.read(fd, max_bytes + 1)[:max_bytes]
    except OSError:
        return None
    finally:
        os.close(fd)


MAX_ARTIFACT_BYTES = 4 << 30  # CacheStore.cpp: kMaxArtifactFileBytes


def read_artifact_file(path: str) -> bytes:
    """The bytes of an artifact file for ``trnc inspect`` / ``trnc profile``:
    TrncError (not a hang, not an endless read) when it is not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise TrncError(f"cannot read {path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise TrncError(f"{path} is a directory; pass one artifact file")
        if not stat.S_ISREG(st.st_mode):
            raise TrncError(f"{path} is not a regular file (a FIFO or device); pass an artifact file")
        if st.st_size > MAX_ARTIFACT_BYTES:
            raise TrncError(f"{path} is {st.st_size} bytes, larger than any artifact ({MAX_ARTIFACT_BYTES} at most)")
        chunks, left = [], st.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break  # shrank meanwhile: the reader reports the truncation
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise TrncError(f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _read_manifest(path: str) -> Optional[dict]:
    data = _read_regular(path, MAX_MANIFEST_BYTES)
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _entry_files(directory: str):
    """(key, path, lstat) of every name shaped like an entry's artifact."""
    for shard, names in _shards(directory):
        for name in names:
            if not name.endswith(".trnc") or not _KEY_RE.match(name[: -len(".trnc")]):
                continue
            path = os.path.join(shard, name)
            try:
                yield name[: -len(".trnc")], path, os.lstat(path)
            except OSError:
                continue  # removed meanwhile


def entries(directory: Optional[str] = None) -> list[Entry]:
    """Every entry (a regular artifact file named by its key), oldest use first."""
    found = []
    for k, path, st in _entry_files(_resolve(directory)):
        if not stat.S_ISREG(st.st_mode):
            continue  # a FIFO, symlink or directory is never an entry (verify names it)
        manifest = _read_manifest(path[: -len(".trnc")] + ".json") or {}
        found.append(Entry(k, path, st.st_size, st.st_mtime, manifest))
    found.sort(key=lambda e: (e.last_used, e.key))
    return found


@dataclasses.dataclass
class Check:
    """What re-verifying every entry found: ``bad`` entries (corrupt, planted, swapped,
    not regular files) and ``stale`` ones (written by another trnc: another compiler
    identity or artifact format, and authenticated as this cache's own). Neither is ever
    served; only ``bad`` ones are a problem (stale ones go as the LRU prunes)."""

    bad: list  # (Entry, problem)
    stale: list  # (Entry, reason)


def check(directory: Optional[str] = None) -> Check:
    """Re-verify every entry (regular files, checksums, program, compiler identity,
    the key and I/O signature it is bound to, its MAC, manifest field types). Never
    blocks on, or follows, what is not a regular file."""
    directory = _resolve(directory)
    found = Check(bad=[], stale=[])
    for k, path, st in _entry_files(directory):
        if not stat.S_ISREG(st.st_mode):
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
            found.bad.append((Entry(k, path, 0, st.st_mtime, {}), f"{path} is {kind}"))
    for entry in entries(directory):
        looked = native().cache_lookup(directory, entry.key, False)
        if looked["status"] == "invalid" and looked["stale"]:
            found.stale.append((entry, looked["reason"]))
            continue
        problem = looked["reason"] if looked["status"] == "invalid" else _manifest_problem(entry.manifest)
        if looked["status"] == "miss":
            problem = f"{entry.path} vanished while being checked"
        if problem:
            found.bad.append((entry, problem))
    return found


def verify(directory: Optional[str] = None) -> list[tuple[Entry, str]]:
    """The bad entries check() finds: (entry, problem) list."""
    return check(directory).bad


@dataclasses.dataclass
class Removal:
    """What prune/clear did: entries and bytes removed, and what could not be."""

    entries: int = 0
    bytes: int = 0
    failed: list = dataclasses.field(default_factory=list)  # (path, reason)

    def remove(self, path: str) -> bool:
        try:
            size = os.lstat(path).st_size
            os.remove(path)
        except FileNotFoundError:
            return False  # removed meanwhile (another prune)
        except OSError as exc:
            self.failed.append((path, exc.strerror or str(exc)))
            return False
        self.bytes += size
        return True


def _remove_entry(entry: Entry, done: Removal) -> bool:
    # The artifact first: once it is gone the entry no longer exists.
    if not done.remove(entry.path):
        return False
    done.remove(entry.manifest_path)
    done.entries += 1
    return True


# Names trnc writes next to entries (CacheStore.cpp, llvm::LockFileManager).
_KEY = r"[0-9a-f]{64}"
_TEMP_RE = re.compile(rf"^{_KEY}\.(trnc|json)\.tmp-[0-9a-f]{{8}}$")
_ORPHAN_RE = re.compile(rf"^({_KEY})\.json$")
_LOCK_RE = re.compile(rf"^{_KEY}\.trnc\.lock(-[0-9a-f]{{8}})?$")
_ARTIFACT_MAGIC = b"TRNCART\0"


def _looks_like_ours(path: str, name: str) -> bool:
    """The header check: an artifact starts with the magic, a manifest is a JSON
    object, a lock holds "host pid"; a writer killed early may leave a prefix."""
    head = _read_regular(path, 1 << 20)
    if head is None:
        return False
    if ".trnc.lock" in name:
        return head == b"" or re.fullmatch(rb"\S+ \d+\s*", head) is not None
    if ".trnc" in name:
        return head[:8] == _ARTIFACT_MAGIC[: len(head[:8])]
    return head == b"" or head.lstrip()[:1] == b"{"


def _lock_owner_dead(path: str) -> bool:
    """True when the lock names a process on this host that no longer exists."""
    head = _read_regular(path, 4096) or b""
    m = re.fullmatch(rb"(\S+) (\d+)\s*", head)
    if not m or m.group(1).decode(errors="replace") != socket.gethostname():
        return False
    try:
        os.kill(int(m.group(2)), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def _remove_leftovers(directory: str, now: float, done: Removal) -> None:
    """What dead writers left: temporary files, manifests without an artifact,
    lock files. Only names trnc writes whose content looks like trnc's."""
    for shard, names in _shards(directory):
        present = set(names)
        for name in names:
            path = os.path.join(shard, name)
            orphan = _ORPHAN_RE.match(name)
            lock = _LOCK_RE.match(name)
            if not (_TEMP_RE.match(name) or lock or (orphan and orphan.group(1) + ".trnc" not in present)):
                continue
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or not _looks_like_ours(path, name):
                continue
            old = now - st.st_mtime >= STALE_TEMP_SECONDS  # a writer may still be renaming it
            if lock:
                # A dead owner's lock goes at once; a live (or other host's)
                # owner's lock stays; the uniquely suffixed lock files a
                # killed owner left go once stale.
                unique = lock.group(1) is not None
                if not (_lock_owner_dead(path) or (unique and old)):
                    continue
            elif not old:
                continue
            done.remove(path)


def prune(max_bytes: Union[int, str], directory: Optional[str] = None) -> tuple[int, int]:
    """Remove least recently used entries until the rest fit in ``max_bytes``;
    also what dead writers left. Returns (entries removed, bytes freed); raises
    TrncError naming the first file that could not be removed."""
    done = prune_entries(max_bytes, directory)
    _raise_if_failed(done, directory)
    return done.entries, done.bytes


def prune_entries(max_bytes: Union[int, str], directory: Optional[str] = None) -> Removal:
    """``prune`` that reports failures in the result instead of raising."""
    limit = parse_size(max_bytes)
    directory = _resolve(directory)
    done = Removal()
    _remove_leftovers(directory, time.time(), done)
    current = entries(directory)
    total = sum(e.size + _size_of(e.manifest_path) for e in current)
    for entry in current:  # oldest use first
        if total <= limit:
            break
        before = done.bytes
        if _remove_entry(entry, done):
            total -= done.bytes - before
    return done


def _raise_if_failed(done: Removal, directory: Optional[str]) -> None:
    if done.failed:
        path, reason = done.failed[0]
        raise TrncError(
            f"trnc: removed {done.entries} entries from {_resolve(directory)}, but could not remove "
            f"{len(done.failed)} files (first: {path}: {reason})"
        )


def _size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _prune_quietly(directory: str) -> None:
    try:
        prune_entries(max_size(), directory)
    except (OSError, TrncError):
        pass  # the cap is best effort; a bad TRNC_CACHE_MAX_SIZE is reported by `trnc cache`


def clear(directory: Optional[str] = None) -> int:
    """Remove every entry and what dead writers left; returns the number of
    entries removed; raises TrncError naming a file that could not be removed."""
    done = clear_entries(directory)
    _raise_if_failed(done, directory)
    return done.entries


def clear_entries(directory: Optional[str] = None) -> Removal:
    """``clear`` that reports failures in the result instead of raising."""
    directory = _resolve(directory)
    done = Removal()
    for entry in entries(directory):
        _remove_entry(entry, done)
    _remove_leftovers(directory, time.time(), done)
    return done


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
        compile_seconds_saved=sum(e.hits * e.compile_seconds for e in current),
    )
    return out
