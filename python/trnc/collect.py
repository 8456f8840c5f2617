"""Graph collection mode: export every graph, compile and simulate nothing.

When collection is active, the ``neuron`` backend still runs AOTAutograd and
exports each forward/backward/inference graph exactly as it would for a real
compile (same decompositions, same graph JSON, same options), hands the
export to a *sink*, and returns an eager callable instead of a simulated one,
so the program runs at eager speed. Two ways to turn it on:

* ``collecting(sink)``: in-process, for ``trnc compile`` (the sink is a
  Python callable receiving each ``CollectedGraph``);
* the ``TRNC_COLLECT_DIR`` environment variable, for ``trnc precompile``: a
  child process running the user's script writes one JSON file per distinct
  graph into that directory (``write_collected`` / ``read_collected``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from .graph_export import ExportedGraph
from .options import CompilerOptions

__all__ = [
    "COLLECT_DIR_ENV",
    "CollectedGraph",
    "active",
    "collecting",
    "intercept",
    "read_collected",
    "write_collected",
]

COLLECT_DIR_ENV = "TRNC_COLLECT_DIR"
_SUFFIX = ".graph.json"


@dataclass(frozen=True)
class CollectedGraph:
    """One exported graph and the options it would have been compiled with."""

    name: str
    graph_json: str
    options_json: str  # every CompilerOptions field (cache_dir too), not only to_json()'s

    @property
    def digest(self) -> str:
        """Identity of the compile job: the graph minus its name, plus the options.

        Two call sites of the same computation differ only in name and stack
        traces; they still get two files, and the second compile is a cache hit.
        """
        doc = json.loads(self.graph_json)
        doc.pop("name", None)
        text = json.dumps(doc, sort_keys=True) + "\0" + self.options_json
        return hashlib.sha256(text.encode()).hexdigest()

    def options(self) -> CompilerOptions:
        return CompilerOptions(**json.loads(self.options_json))

    def spec_summary(self) -> dict[str, Any]:
        """Inputs and outputs as {shape, stride, dtype} lists (for manifests)."""
        doc = json.loads(self.graph_json)
        keep = ("shape", "stride", "dtype")
        return {
            "inputs": [{k: t[k] for k in keep} for t in doc.get("inputs", [])],
            "outputs": [{k: t[k] for k in keep} for t in doc.get("outputs", [])],
        }


Sink = Callable[[CollectedGraph], None]
_sink: Optional[Sink] = None


@contextlib.contextmanager
def collecting(sink: Sink) -> Iterator[None]:
    """Within the block, the backend collects graphs into ``sink``."""
    global _sink
    previous, _sink = _sink, sink
    try:
        yield
    finally:
        _sink = previous


def _active_sink() -> Optional[Sink]:
    if _sink is not None:
        return _sink
    directory = os.environ.get(COLLECT_DIR_ENV)
    if directory:
        return lambda graph: write_collected(directory, graph)
    return None


def active() -> bool:
    """Whether graph collection mode is on (the backend then skips caches that
    would return a compiled graph without exporting it)."""
    return _active_sink() is not None


def intercept(graph: ExportedGraph, options: CompilerOptions, gm: Any) -> Optional[Callable]:
    """The backend's hook: in collection mode, collect ``graph`` and return an
    eager (boxed) callable running ``gm``; otherwise return None."""
    sink = _active_sink()
    if sink is None:
        return None
    from torch._functorch.aot_autograd import make_boxed_func

    sink(CollectedGraph(graph.name, graph.to_json(), _options_json(options)))
    return make_boxed_func(gm.forward)


def _options_json(options: CompilerOptions) -> str:
    return json.dumps(dataclasses.asdict(options), sort_keys=True, default=str)


def write_collected(directory: str, graph: CollectedGraph) -> str:
    """Write ``graph`` as ``<digest>.graph.json`` (atomically; a repeat is a no-op)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, graph.digest + _SUFFIX)
    if os.path.exists(path):
        return path
    doc = {"name": graph.name, "options": json.loads(graph.options_json), "graph": json.loads(graph.graph_json)}
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, path)
    return path


def read_collected(directory: str) -> list[CollectedGraph]:
    """Every graph written to ``directory``, in a stable order (by graph name)."""
    graphs = []
    for entry in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        if not entry.endswith(_SUFFIX):
            continue
        with open(os.path.join(directory, entry)) as f:
            doc = json.load(f)
        graphs.append(
            CollectedGraph(doc["name"], json.dumps(doc["graph"], allow_nan=False), json.dumps(doc["options"], sort_keys=True))
        )
    return sorted(graphs, key=lambda g: (_natural_key(g.name), g.digest))


def _natural_key(name: str) -> tuple:
    kind, _, number = name.rpartition("_")
    return (kind, int(number)) if number.isdigit() else (name, -1)
