"""The ``neuron`` torch.compile backend.

One module-level object, ``neuron``, is the backend: registered through the
``torch_dynamo_backends`` entry point (so ``torch.compile(m, backend="neuron")``
works without ``import trnc``) and usable directly as ``backend=trnc.neuron``.
Keeping one object matters: Dynamo compares backends when deciding whether a
cached graph can be reused, and a fresh object per call would recompile.

Each call runs AOTAutograd (trnc's decomposition table, functionalization,
forward/backward partition); every resulting ATen graph is exported to graph
JSON, compiled through the artifact cache (``trnc.cache``; a hit skips the
compiler) and wrapped in a boxed ``CompiledGraph``.
With the caches on, the graphs are ``TrncOutputCode``s that AOTAutograd's own
cache stores (aot_cache.py): a later process's hit skips AOTAutograd, export
and the compiler. Backward graphs are then compiled with their forward;
otherwise lazily by AOTAutograd at the first ``.backward()``. Either way their
errors surface at ``.backward()`` and are never swallowed.
In graph collection mode (collect.py) graphs are exported, handed to the
collector and run eagerly: nothing is compiled or simulated.
A graph with symbolic shapes (``dynamic=None`` after a shape changed) is compiled
once per concrete shape at call time (per_shape.py); ``dynamic=True`` is refused.
Decisions are logged on ``TORCH_LOGS=trnc``, graph JSON on ``trnc_graph`` (logs.py).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd

from . import aot_cache, collect
from . import cache
from ._native import native
from .compiled_graph import CompiledGraph
from .complex_pairs import rewrite_complex, with_complex_pairs
from .constants import lift_constants, with_constants
from . import decomp_resample
from .decompositions import decomposition_table
from .errors import CompileError, TrncError
from .graph_export import DYNAMIC_SHAPES_MESSAGE, ExportedGraph, export_graph, unsupported_tensor_kind
from .host_ints import split_int_bookkeeping
from .integer_range import bound_integer_constants, check_integer_constants
from .logs import graph_log, ir_log, log
from .options import CompilerOptions
from .partition import partition
from .per_shape import PerShapeGraph, describe_shapes, has_symbolic_shapes

__all__ = ["NeuronBackend", "neuron", "CompileStats", "compile_exported", "build_callable"]


@dataclass
class CompileStats:
    """What the backend compiled in this process (tests and the demo read it).
    ``counts``: graphs compiled here, by kind (and collective nodes);
    ``loaded``: graphs AOTAutograd's cache served instead (aot_cache.py), by
    kind: another process (another rank) or an earlier compile stored them."""

    counts: collections.Counter = field(default_factory=collections.Counter)
    loaded: collections.Counter = field(default_factory=collections.Counter)
    graphs: list[str] = field(default_factory=list)
    compile_seconds: float = 0.0

    def ran(self) -> collections.Counter:
        """Graphs compiled or loaded, by kind: what this process runs on trnc."""
        return self.counts + self.loaded

    def reset(self) -> None:
        self.counts.clear()
        self.loaded.clear()
        self.graphs.clear()
        self.compile_seconds = 0.0


def _check_static(example_inputs: Sequence[Any]) -> None:
    for i, value in enumerate(example_inputs):
        symbolic = isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)) or (
            isinstance(value, torch.Tensor)
            and any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride()))
        )
        if symbolic:
            where = f" (graph input {i}: {value if not isinstance(value, torch.Tensor) else list(value.shape)})"
            raise CompileError(DYNAMIC_SHAPES_MESSAGE.format(where=where), error_kind="dynamic_shapes")


def _check_tensor_kinds(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> None:
    """Refuse sparse, nested and quantized inputs by the user's name for them
    (complex ones are taken as real pairs, complex_pairs.py)."""
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    for i, value in enumerate(example_inputs):
        kind = unsupported_tensor_kind(value) if isinstance(value, torch.Tensor) else None
        if kind is not None and not kind.startswith("complex"):
            name = names[i] if i < len(names) else str(i)
            raise CompileError(f"graph input '{name}' (input {i}) is {kind}", error_kind="unsupported_dtype")


def _reproducer(graph: ExportedGraph, options: CompilerOptions) -> Optional[str]:
    if not options.dump_dir:
        return "Set TRNC_DUMP_DIR (or options={'dump_dir': ...}) to save the failing graph for a reproducer."
    os.makedirs(options.dump_dir, exist_ok=True)
    path = os.path.join(options.dump_dir, f"{graph.name}.graph.json")
    with open(path, "w") as f:
        f.write(graph.to_json())
    return f"Reproduce with: trnc compile-graph {path} --target {options.target}"


def compile_exported(graph: ExportedGraph, options: CompilerOptions) -> Any:
    """Compile an exported graph through the artifact cache (docs/cache.md): a hit
    skips the whole compiler. Returns a ``_C.Executable`` or raises CompileError."""
    return _compile_keyed(graph, options)[0]


def _compile_keyed(graph: ExportedGraph, options: CompilerOptions) -> tuple[Any, Optional[str]]:
    """compile_exported, with the artifact's cache key (None with the cache off):
    the graph is serialised and hashed once."""
    text = graph.to_json()
    graph_log.debug("graph %s (graph JSON, %d nodes):\n%s", graph.name, len(graph.document["nodes"]), text)
    start = time.perf_counter()
    artifact, hit, key = cache.compile_cached(text, options, graph.name, lambda: _reproducer(graph, options))
    log.info("graph %s: cache %s, %.3f s (target %s)", graph.name, "hit" if hit else "miss, compiled",
             time.perf_counter() - start, options.target)
    if ir_log.isEnabledFor(logging.DEBUG):
        _log_ir(graph.name, text, options)
    return native().Executable(artifact), key


def build_callable(recipe: aot_cache.Recipe, executable: Any) -> Any:
    """The boxed callable AOTAutograd runs for one compiled graph: the artifact's
    ``CompiledGraph`` with the graph's complex boundary and lifted constants.
    Also what ``TrncOutputCode`` rebuilds after a cache hit."""
    compiled = with_complex_pairs(CompiledGraph(recipe.graph, executable), recipe.pairs)
    return with_constants(compiled, recipe.constants)


def _log_ir(name: str, graph_json: str, options: CompilerOptions) -> None:
    """TORCH_LOGS=trnc_ir: the IR after import and after each pass. The artifact may
    have come from the cache, so the compiler runs once more, capturing its IR."""
    result = native().compile(graph_json, options.to_json(), capture_ir=True)
    ir_log.debug("graph %s: IR after each compiler phase (target %s):\n%s", name, options.target, result["ir"])


class NeuronBackend:
    """The torch.compile backend object (use the module-level ``neuron``)."""

    __name__ = "neuron"

    def __init__(self) -> None:
        self.stats = CompileStats()
        self._ids = collections.defaultdict(itertools.count)

    def _graph_compiler(self, kind: str, options: CompilerOptions, cacheable: bool):
        def compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Any:
            start = time.perf_counter()
            name = f"{kind}_{next(self._ids[kind])}"
            constants = lift_constants(gm)  # get_attr tensors -> trailing inputs (constants.py)
            check_integer_constants(gm, constants, name)  # no int arithmetic past 2**24 (integer_range.py)
            pairs = rewrite_complex(gm, name)  # complex values -> real (re, im) pairs (complex_pairs.py)
            graph = export_graph(gm, name)
            bound_integer_constants(gm, graph, constants)  # their magnitudes, for the range check
            eager = collect.intercept(graph, options, gm)  # trnc compile / precompile
            if eager is not None:
                return with_constants(with_complex_pairs(eager, pairs), constants)
            recipe = aot_cache.Recipe(graph, options, constants, pairs)
            executable, key = _compile_keyed(graph, options)
            compiled = build_callable(recipe, executable)
            self.stats.counts[kind] += 1
            if graph.collectives:  # collective nodes compiled (docs/distributed.md)
                self.stats.counts["collectives"] += len(graph.collectives)
            self.stats.graphs.append(name)
            seconds = time.perf_counter() - start
            if kind == "backward" and not cacheable:  # else counted by _compile_static, like the forward
                self.stats.compile_seconds += seconds
            if cacheable and key is not None:
                return aot_cache.TrncOutputCode(recipe, key, compiled, build_callable, seconds)
            return compiled

        if cacheable and kind == "backward":
            # Compiled with the forward (aot_cache.scope); its error belongs to .backward().
            def compile_backward(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Any:
                try:
                    return compile_graph(gm, example_inputs)
                except TrncError as exc:
                    return aot_cache.DeferredError(exc)

            compiler = compile_backward
        else:
            compiler = compile_graph
        compiler.__name__ = f"trnc_{kind}_compiler"
        if cacheable:
            from torch._functorch.aot_autograd import SerializableAOTDispatchCompiler

            return SerializableAOTDispatchCompiler(aot_cache.TrncOutputCode, compiler)
        return compiler

    def __call__(
        self,
        gm: torch.fx.GraphModule,
        example_inputs: Sequence[Any],
        *,
        options: Optional[Mapping[str, Any]] = None,
        mode: Optional[str] = None,
    ):
        if mode not in (None, "default"):
            raise TrncError(f"trnc: torch.compile mode={mode!r} is not supported; use options={{...}}")
        _check_tensor_kinds(gm, example_inputs)  # first: a nested input also brings SymInts
        opts = CompilerOptions.from_mapping(options)
        log.info("received a Dynamo graph: %d nodes, inputs %s", len(gm.graph.nodes), describe_shapes(example_inputs))
        # Symbolic shapes without dynamic=True asked for (the default dynamic=None after a
        # shape changed): one static compilation per concrete shape, at call time.
        if has_symbolic_shapes(gm, example_inputs):
            if not torch._dynamo.config.assume_static_by_default:  # dynamic=True
                where = " (torch.compile(..., dynamic=True) makes every dimension symbolic)"
                raise CompileError(DYNAMIC_SHAPES_MESSAGE.format(where=where), error_kind="dynamic_shapes")
            return PerShapeGraph(gm, example_inputs, lambda g, inputs: self._compile_static(g, inputs, opts))
        return self._compile_static(gm, example_inputs, opts)

    def _compile_static(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any], opts: CompilerOptions):
        # Python-int counters only read by guards (dynamic=None; host_ints.py) leave the graph.
        split = split_int_bookkeeping(gm, example_inputs)
        if split is not None:
            gm, example_inputs, wrap_ints = split
        _check_static(example_inputs)
        start = time.perf_counter()
        cacheable = aot_cache.usable(opts)
        inner = aot_autograd(
            fw_compiler=self._graph_compiler("forward", opts, cacheable),
            bw_compiler=self._graph_compiler("backward", opts, cacheable),
            inference_compiler=self._graph_compiler("inference", opts, cacheable),
            decompositions=decomposition_table(),
            partition_fn=partition,
        )
        with aot_cache.scope(opts) if cacheable else contextlib.nullcontext(), \
                decomp_resample.interpolation_as_ops():
            compiled = inner(gm, example_inputs)
        if split is not None:
            compiled = wrap_ints(compiled)
        # Includes AOTAutograd's tracing (or its cache hit) and the forward graph's
        # compilation (and the backward's, when compiled with it).
        self.stats.compile_seconds += time.perf_counter() - start
        return compiled

    def __repr__(self) -> str:
        return "<trnc neuron backend>"


neuron = NeuronBackend()
