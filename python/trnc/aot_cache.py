"""Warm starts above AOTAutograd: trnc's compiled graphs as cacheable ``OutputCode``.

PyTorch's AOTAutogradCache (torch/_functorch/_aot_autograd/autograd_cache.py)
stores what AOTAutograd made of a Dynamo graph (its runtime metadata and wrappers,
the compiled forward and backward) under a key over the Dynamo graph, its inputs'
metadata and the global configs; a hit in a later process skips AOTAutograd's
tracing, decomposition and partitioning, and the backend. In torch 2.13 it is
consulted only when the forward compiler is a ``SerializableAOTDispatchCompiler``
(aot_autograd.py, ``aot_module_simplified``), and it can store a compiled graph
that is not Inductor's only in its *bundled* mode (functorch config
``bundled_autograd_cache``: the entry pickles each graph's ``OutputCode``; the
unbundled mode stores Inductor FX-graph-cache keys and looks them up on load).

``TrncOutputCode`` is that OutputCode. Pickled, it holds the graph's export (graph
JSON document, I/O specs, output plan), its lifted constants and complex
boundary, the compile options, the artifact's cache key (docs/cache.md) and the
trnc cache tag it was made under; the artifact itself stays in trnc's cache. On
load (``post_compile``) it checks the tag, gets the artifact through trnc's cache
(a verified hit; a missing or damaged artifact is recompiled from the stored
graph JSON, with the cache's usual warning) and rebuilds the callable.

``scope(options)`` is what the backend wraps around one AOTAutograd call:
- ``torch.compiler.config.cache_key_tag`` gets trnc's tag appended (``tag()``:
  trnc's version, the compiler identity with ``TRNC_COMPILER_IDENTITY_OVERRIDE``,
  a digest of trnc's Python sources (decompositions, export: they shape the graph
  AOTAutograd's key does not see), the extension file's size and mtime, the
  options and the cache directory), so a changed trnc misses;
- the bundled mode is on;
- the backward is compiled with the forward (functorch config
  ``force_non_lazy_backward_lowering``), because AOTAutograd saves a training
  entry only once the backward is compiled, and a lazily compiled backward would
  be saved outside this scope, in unbundled mode, i.e. not at all. A backward
  that fails to compile still raises at ``.backward()`` (``DeferredError``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import time
from typing import Any, Callable, Iterator, Optional

import torch
from torch._inductor.output_code import OutputCode

from . import cache, collect
from ._native import native
from .errors import TrncError
from .logs import log
from .options import CompilerOptions

__all__ = ["TrncOutputCode", "DeferredError", "StaleEntryError", "usable", "scope", "tag"]


class StaleEntryError(TrncError):
    """A cached graph was made by another trnc build or options, or does not match
    its artifact key: never run. Through AOTAutograd's cache (whose key holds the
    tag, so this is a safety net) the load is abandoned and the graph compiled
    afresh; through Dynamo's precompile, torch.compile fails with it."""


def _bypass(reason: str) -> Exception:
    from torch._functorch._aot_autograd.autograd_cache import BypassAOTAutogradCache

    return BypassAOTAutogradCache(f"trnc: {reason}")


@functools.lru_cache(maxsize=None)
def _sources_digest() -> str:
    """SHA-256 over trnc's Python sources (relative path and content of each)."""
    root = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
            digest.update(b"\0")
    return digest.hexdigest()


def _dynamo_cache_dir() -> str:
    from torch._dynamo.package import DynamoCache

    return DynamoCache.path_prefix()


def _extension_stamp() -> list:
    module = native()
    path = getattr(module, "__file__", None)
    if not path or not os.path.exists(path):
        return [None]
    st = os.stat(path)
    return [os.path.basename(path), st.st_size, st.st_mtime_ns]


def tag(options: CompilerOptions) -> str:
    """trnc's part of the AOTAutograd cache key: changes with anything of trnc's
    that could change what a Dynamo graph compiles to, or where artifacts live."""
    from . import __version__

    parts = {
        "version": __version__,
        "compiler": native().compiler_identity(),
        "identity_override": os.environ.get("TRNC_COMPILER_IDENTITY_OVERRIDE", ""),
        "python": _sources_digest(),
        "extension": _extension_stamp(),
        "options": dataclasses.asdict(options),
        "cache_dir": cache.cache_dir(options),
    }
    text = json.dumps(parts, sort_keys=True, default=str)
    return "trnc-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def usable(options: CompilerOptions) -> bool:
    """Whether the backend uses AOTAutograd's cache for this compile: trnc's
    artifact cache on, PyTorch's AOTAutograd cache on (it also needs the FX graph
    cache setting, autograd_cache.check_cacheable), and not collecting graphs
    (``trnc compile``/``precompile`` must see every graph exported)."""
    from torch._functorch._aot_autograd.autograd_cache import should_use_local_autograd_cache

    return (
        cache.enabled(options)
        and not collect.active()
        and should_use_local_autograd_cache()
        and bool(torch._inductor.config.fx_graph_cache)
    )


@contextlib.contextmanager
def scope(options: CompilerOptions) -> Iterator[None]:
    """Around one AOTAutograd call of the backend (module docstring)."""
    own = tag(options)
    user = torch.compiler.config.cache_key_tag
    with torch.compiler.config.patch(cache_key_tag=f"{user}|{own}" if user else own), \
            torch._functorch.config.patch(bundled_autograd_cache=True, force_non_lazy_backward_lowering=True):
        yield


@dataclasses.dataclass
class Recipe:
    """What rebuilds one compiled graph's callable: its export, constants,
    complex boundary and options (``build``, supplied by backend.py)."""

    graph: Any  # ExportedGraph
    options: CompilerOptions
    constants: list
    pairs: Any  # complex_pairs.ComplexBoundary or None


class TrncOutputCode(OutputCode):
    """One compiled trnc graph as AOTAutograd's cache stores it (module docstring).
    Boxed calling convention, like the ``CompiledGraph`` it runs."""

    def __init__(self, recipe: Recipe, key: str, compiled: Callable, build: Callable, seconds: float) -> None:
        self.recipe = recipe
        self.key = key  # the artifact's key in trnc's cache
        self.tag = tag(recipe.options)
        self.build = build  # (recipe, executable) -> callable; a module-level function, pickled by name
        self.compiled: Optional[Callable] = compiled
        # Instance attributes (OutputCode declares them as dataclass fields
        # without being a dataclass, so the class attributes are Field objects).
        self._boxed_call = True
        self._fx_graph_cache_key = None
        self._fx_graph_cache_debug_lines = None
        self._time_taken_ns = int(seconds * 1e9)

    @property
    def name(self) -> str:
        return self.recipe.graph.name

    def __call__(self, inputs: list) -> Any:
        if self.compiled is None:
            raise TrncError(f"trnc: graph '{self.name}' was loaded from a cache but not rebuilt (post_compile)")
        return self.compiled(inputs)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["compiled"] = None  # the simulator's executable is rebuilt from trnc's cache
        return state

    def prepare_for_serialization(self) -> None:
        graph = self.recipe.graph
        if graph.collectives or graph.opaque_inputs:
            raise _bypass(f"graph '{graph.name}' has collectives or opaque inputs (process groups, meshes)")
        if any(n.get("target") == "trnc.nki_kernel" for n in graph.document.get("nodes", [])):
            # The kernel's traced text is in the graph JSON, not in AOTAutograd's key.
            raise _bypass(f"graph '{graph.name}' calls trnc.nki kernels")
        self.compiled = None

    def post_compile(self, example_inputs: Any, constants: Any, graph_kwargs: Any) -> None:
        if self.compiled is not None:
            return
        options = self.recipe.options
        if self.tag != tag(options):
            raise StaleEntryError(
                f"trnc: cached graph '{self.name}' was made by another trnc build or options. AOTAutograd's "
                "cache never serves it (its key holds trnc's tag); Dynamo's caching precompile (keyed by "
                f"the function only) does: delete {_dynamo_cache_dir()} to compile afresh")
        text = self.recipe.graph.to_json()
        if cache.key(text, options) != self.key:
            raise StaleEntryError(f"trnc: cached graph '{self.name}' does not match its artifact key")
        start = time.perf_counter()
        artifact, hit, _ = cache.compile_cached(text, options, self.name)
        log.info("graph %s: AOTAutograd cache hit, artifact %s, %.3f s", self.name,
                 "cache hit" if hit else "recompiled", time.perf_counter() - start)
        self.compiled = self.build(self.recipe, native().Executable(artifact))
        from .backend import neuron  # the backend imports this module

        neuron.stats.loaded[self.name.rsplit("_", 1)[0]] += 1

    def set_triton_bundle(self, triton_bundle: Any) -> None:
        pass


class DeferredError(OutputCode):
    """A backward compiled with its forward (``scope``) that failed: raises the
    error when the backward runs, as a lazily compiled one would; never cached."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self._boxed_call = True
        self._fx_graph_cache_key = None
        self._fx_graph_cache_debug_lines = None
        self._time_taken_ns = 0

    def __call__(self, inputs: list) -> Any:
        raise self.error

    def prepare_for_serialization(self) -> None:
        raise _bypass(f"a graph failed to compile: {self.error}")

    def post_compile(self, example_inputs: Any, constants: Any, graph_kwargs: Any) -> None:
        pass

    def set_triton_bundle(self, triton_bundle: Any) -> None:
        pass
