"""Ahead-of-time compilation: the logic behind ``trnc compile`` and ``trnc precompile``.

Graphs are obtained the way ``torch.compile(model, backend="neuron",
dynamic=False)`` would produce them: the real backend runs (Dynamo,
AOTAutograd, trnc's decompositions, graph export) in collection mode
(collect.py), so the graph JSON and options are byte-identical to a later
real run's, and compiling them here fills the artifact cache that run
reads. Each graph is compiled through ``trnc.cache.compile_graph`` (or, while
the cache module is absent, straight through ``_C.compile``).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import importlib
import importlib.util
import json
import multiprocessing
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from . import collect
from ._native import native
from .collect import CollectedGraph
from .errors import CompileError, TrncError, error_from_result

__all__ = [
    "GraphResult",
    "parse_input_spec",
    "load_factory",
    "collect_module",
    "collect_pt2",
    "compile_collected",
    "compile_all",
    "write_output_dir",
    "cache_line",
    "summary_line",
    "failure_lines",
]

_DTYPES = {
    "f32": "float32", "float32": "float32", "float": "float32",
    "f16": "float16", "float16": "float16", "half": "float16",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "f64": "float64", "float64": "float64", "double": "float64",
    "i64": "int64", "int64": "int64", "long": "int64",
    "i32": "int32", "int32": "int32", "int": "int32",
    "i16": "int16", "int16": "int16",
    "i8": "int8", "int8": "int8",
    "u8": "uint8", "uint8": "uint8",
    "bool": "bool", "b8": "bool",
}
_SPEC_RE = re.compile(r"^\s*(?P<dtype>[A-Za-z0-9]+)\s*\[(?P<dims>[^\]]*)\]\s*$")


@dataclass
class GraphResult:
    """What happened to one graph: ``compiled``, ``cached`` (a cache hit) or ``failed``."""

    name: str
    status: str
    key: str = ""
    error: str = ""
    seconds: float = 0.0
    specs: dict[str, Any] = field(default_factory=dict)
    artifact: Optional[bytes] = None


# ----------------------------------------------------------------------------
# Inputs and models
# ----------------------------------------------------------------------------


def parse_input_spec(text: str) -> tuple[Any, tuple[int, ...]]:
    """``"bf16[8,128]"`` -> (torch.bfloat16, (8, 128)); ``"f32[]"`` is a scalar."""
    import torch

    match = _SPEC_RE.match(text)
    if not match:
        raise TrncError(f"bad --input '{text}': expected DTYPE[D0,D1,...], e.g. bf16[8,128]")
    dtype_name = _DTYPES.get(match["dtype"].lower())
    if dtype_name is None:
        known = ", ".join(sorted({k for k in _DTYPES if len(k) <= 4}))
        raise TrncError(f"bad --input '{text}': unknown dtype '{match['dtype']}' (known: {known})")
    dims = [d.strip() for d in match["dims"].split(",")] if match["dims"].strip() else []
    if not all(d.isdigit() for d in dims):
        raise TrncError(f"bad --input '{text}': dimensions must be non-negative integers")
    return getattr(torch, dtype_name), tuple(int(d) for d in dims)


def example_input(dtype: Any, shape: tuple[int, ...]) -> Any:
    """A tensor of that dtype and shape (values do not matter for static shapes)."""
    import torch

    if dtype.is_floating_point:
        return torch.randn(shape, dtype=torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.zeros(shape, dtype=dtype)
    return torch.randint(0, 2, shape, dtype=dtype)


def load_factory(spec: str) -> Callable[[], Any]:
    """``pkg.module:factory`` or ``path/to/file.py:factory`` -> the factory."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise TrncError(f"'{spec}' is neither MODULE:FACTORY nor a .pt2 file")
    try:
        if module_name.endswith(".py"):
            if not os.path.isfile(module_name):
                raise TrncError(f"cannot load '{spec}': no file {module_name}")
            loader = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())  # like `python -m`
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise TrncError(f"cannot import module '{module_name}': {exc}") from None
    except TrncError:
        raise
    except Exception as exc:  # the user's module failed while importing
        raise TrncError(f"importing '{module_name}' failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, attr):
        raise TrncError(f"module '{module_name}' has no attribute '{attr}'")
    return getattr(module, attr)


def _instantiate(factory: Any, spec: str) -> Any:
    import torch

    model = factory
    if not isinstance(model, torch.nn.Module):
        try:
            model = factory()
        except Exception as exc:
            raise TrncError(f"calling '{spec}' failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(model, torch.nn.Module):
        raise TrncError(f"'{spec}' returned {type(model).__name__}, expected a torch.nn.Module")
    return model


# ----------------------------------------------------------------------------
# Collecting graphs
# ----------------------------------------------------------------------------


def _requiring_grad(value: Any) -> list:
    import torch

    leaves = torch.utils._pytree.tree_leaves(value)
    return [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]


def _trace(model: Any, inputs: Sequence[Any], train: bool, what: str, options: dict) -> list[CollectedGraph]:
    """Run ``torch.compile(model, backend=neuron, dynamic=False)`` once in collection mode."""
    import torch

    from .backend import neuron

    graphs: list[CollectedGraph] = []
    try:  # eagerly first: a wrong input spec gets the model's own error, not Dynamo's
        with torch.no_grad():
            model(*inputs)
    except Exception as exc:
        raise TrncError(f"running {what} eagerly on the given inputs failed: {type(exc).__name__}: {exc}") from None
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=neuron, dynamic=False, options=dict(options))
    try:
        with collect.collecting(graphs.append):
            if train:
                outputs = _requiring_grad(compiled(*inputs))
                if not outputs:
                    raise TrncError(f"--train: {what} returned no tensor that requires grad")
                sum(o.float().sum() for o in outputs).backward()
            else:
                with torch.no_grad():
                    compiled(*inputs)
    except TrncError:
        raise
    except Exception as exc:
        inner = getattr(exc, "inner_exception", None) or exc
        if isinstance(inner, TrncError):  # keep its type (check_support reads UnsupportedOperatorError)
            raise inner from None
        raise TrncError(f"running {what} failed: {type(inner).__name__}: {inner}".rstrip()) from None
    return graphs


def collect_module(spec: str, input_specs: Sequence[str], train: bool, options: dict) -> list[CollectedGraph]:
    """Graphs of ``MODULE:FACTORY`` on inputs like ``bf16[8,128]``."""
    factory = load_factory(spec)
    if not input_specs:
        raise TrncError("give the model's inputs with --input DTYPE[SHAPE] (once per input)")
    parsed = [parse_input_spec(s) for s in input_specs]
    model = _instantiate(factory, spec)
    model.train(train)  # the mode a real training / inference run uses
    return _trace(model, [example_input(d, s) for d, s in parsed], train, spec, options)


def collect_pt2(path: str, options: dict) -> list[CollectedGraph]:
    """Graphs of a ``torch.export.save``d program (inference only)."""
    import torch

    if not os.path.isfile(path):
        raise TrncError(f"no such file: {path}")
    try:
        program = torch.export.load(path)
    except Exception as exc:
        raise TrncError(f"cannot load {path} as a torch.export program: {type(exc).__name__}: {exc}") from None
    args, kwargs = program.example_inputs or (None, None)
    if args is None:
        raise TrncError(f"{path} carries no example inputs; re-export it with torch.export.export(model, args)")
    if kwargs:
        raise TrncError(f"{path}: keyword inputs are not supported")
    return _trace(program.module(), list(args), False, path, options)


# ----------------------------------------------------------------------------
# Compiling graphs
# ----------------------------------------------------------------------------


def _cache_module() -> Any:
    try:
        from . import cache
    except ImportError:
        return None
    return cache if hasattr(cache, "compile_graph") else None


def artifact_key(graph: CollectedGraph) -> str:
    """The cache key when the cache can compute it; else a hash of the same ingredients."""
    cache = _cache_module()
    if cache is not None and hasattr(cache, "key"):
        return cache.key(graph.graph_json, graph.options())
    text = "\0".join((native().compiler_identity(), graph.options_json, graph.digest))
    return hashlib.sha256(text.encode()).hexdigest()


def _compile_bytes(graph: CollectedGraph) -> tuple[bytes, bool]:
    """(artifact, cache hit); raises CompileError."""
    options = graph.options()
    cache = _cache_module()
    if cache is not None:
        return cache.compile_graph(graph.graph_json, options)
    result = native().compile(graph.graph_json, options.to_json())
    if not result["ok"]:
        raise error_from_result(result, graph.name, None)
    return result["artifact"], False


def compile_collected(graph: CollectedGraph, keep_artifact: bool = False) -> GraphResult:
    """Compile one graph into the cache; never raises for a compile failure."""
    start = time.perf_counter()
    result = GraphResult(graph.name, "failed", specs=graph.spec_summary())
    try:
        result.key = artifact_key(graph)
        artifact, hit = _compile_bytes(graph)
    except TrncError as exc:
        result.error = exc.compiler_message if isinstance(exc, CompileError) else str(exc)
    except Exception as exc:  # a bug, not the user's: still one failed graph with its reason
        result.error = f"internal error: {type(exc).__name__}: {exc}"
    else:
        result.status = "cached" if hit else "compiled"
        result.artifact = artifact if keep_artifact else None
    result.seconds = time.perf_counter() - start
    return result


def compile_all(
    graphs: Sequence[CollectedGraph],
    jobs: int = 1,
    keep_artifacts: bool = False,
    on_done: Optional[Callable[[int, GraphResult], None]] = None,
) -> list[GraphResult]:
    """Compile ``graphs`` (in ``jobs`` worker processes when > 1), in input order."""
    results: list[Optional[GraphResult]] = [None] * len(graphs)
    done = 0

    def record(i: int, result: GraphResult) -> None:
        nonlocal done
        results[i] = result
        done += 1
        if on_done:
            on_done(done, result)

    if jobs <= 1 or len(graphs) <= 1:
        for i, g in enumerate(graphs):
            record(i, compile_collected(g, keep_artifacts))
        return results  # type: ignore[return-value]
    # fork: workers inherit the imported extension instead of re-importing torch.
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(graphs)), mp_context=context) as pool:
        futures = {pool.submit(compile_collected, g, keep_artifacts): i for i, g in enumerate(graphs)}
        for future in concurrent.futures.as_completed(futures):
            i = futures[future]
            try:
                record(i, future.result())
            except Exception as exc:  # a crashed worker fails its graph, not the run
                record(i, GraphResult(graphs[i].name, "failed", error=f"worker failed: {exc!r}"))
    return results  # type: ignore[return-value]


# ----------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------


def write_output_dir(directory: str, results: Sequence[GraphResult], source: str) -> str:
    """Write ``<key>.trnc`` per compiled graph and ``manifest.json``; returns the manifest path."""
    os.makedirs(directory, exist_ok=True)
    entries = []
    for r in results:
        entry = {"name": r.name, "key": r.key, "status": r.status, **r.specs}
        if r.artifact is not None:
            entry["file"] = f"{r.key}.trnc"
            with open(os.path.join(directory, entry["file"]), "wb") as f:
                f.write(r.artifact)
        else:
            entry["error"] = r.error
        entries.append(entry)
    manifest = {"source": source, "compiler": native().compiler_identity(), "graphs": entries}
    path = os.path.join(directory, "manifest.json")
    with open(path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    return path


def cache_line(graphs: Sequence[CollectedGraph]) -> str:
    """Where the artifacts go: ``cache: DIR``, or why they are not stored."""
    cache = _cache_module()
    if cache is None:
        return "cache: not available in this build; artifacts are not stored"
    options = graphs[0].options() if graphs else None
    if not cache.enabled(options):
        return "cache: disabled (TRNC_DISABLE_CACHE or options cache=False); artifacts are not stored"
    return f"cache: {cache.cache_dir(options)}"


def summary_line(results: Sequence[GraphResult], cached_label: str = "cache hits") -> str:
    """``graphs: N, compiled: a, <cached_label>: b, failed: c``."""
    count = lambda s: sum(r.status == s for r in results)  # noqa: E731
    return (
        f"graphs: {len(results)}, compiled: {count('compiled')}, "
        f"{cached_label}: {count('cached')}, failed: {count('failed')}"
    )


def failure_lines(results: Sequence[GraphResult]) -> list[str]:
    """One block per failed graph: its name, then the compiler's message indented."""
    lines = []
    for r in results:
        if r.status == "failed":
            lines.append(f"{r.name} failed:")
            lines.extend(f"  {line}" for line in r.error.splitlines())
    return lines
