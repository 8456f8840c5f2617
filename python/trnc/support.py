"""``trnc.check_support``: which of a model's operators would not lower, before compiling.

The model runs once through ``torch.compile(model, backend="neuron")`` in graph
collection mode (collect.py): every forward (and, with ``train=True``,
backward) graph is exported exactly as a real compile would export it, but
nothing is compiled or simulated; the model runs eagerly. Each exported graph
then goes through the C++ graph importer alone (``_C.check_graph``), which
names every ATen operator without a lowering and every tensor whose dtype the
backend cannot compute in, with the user's source lines.

    report = trnc.check_support(model, x, train=True)
    if not report.ok:
        print(report)

Side effects, as for ``trnc compile``: Dynamo's caches are reset
(``torch._dynamo.reset()``); with ``train=True`` the outputs' sum is
backpropagated, and the parameters' ``.grad`` are restored afterwards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .errors import SourceLocation, TrncError, UnsupportedOperatorError

__all__ = ["check_support", "SupportReport", "GraphSupport", "UnsupportedDtypeUse"]


@dataclass(frozen=True)
class UnsupportedDtypeUse:
    """A graph input or node result whose dtype the backend cannot compute in."""

    node: str
    target: str  # empty for a graph input
    dtype: str
    location: SourceLocation

    def __str__(self) -> str:
        what = f"node '{self.node}' ({self.target})" if self.target else f"input '{self.node}'"
        return f"{what}: {self.dtype} at {self.location}"


@dataclass
class GraphSupport:
    """The importer's verdict on one exported graph."""

    name: str  # forward_0, backward_0, inference_0...
    ok: bool
    error_kind: str = ""
    message: str = ""
    # (target, count, [SourceLocation], reason) per unsupported operator, first use first.
    unsupported: list[tuple[str, int, list[SourceLocation], str]] = field(default_factory=list)
    unsupported_dtypes: list[UnsupportedDtypeUse] = field(default_factory=list)


@dataclass
class SupportReport:
    """What ``check_support`` found; ``str()`` is a readable summary."""

    graphs: list[GraphSupport]

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.graphs)

    @property
    def unsupported_operators(self) -> dict[str, int]:
        """ATen target -> occurrences over every graph."""
        counts: dict[str, int] = {}
        for g in self.graphs:
            for target, count, _, _ in g.unsupported:
                counts[target] = counts.get(target, 0) + count
        return counts

    @property
    def unsupported_dtypes(self) -> set[str]:
        return {d.dtype for g in self.graphs for d in g.unsupported_dtypes}

    def __str__(self) -> str:
        if self.ok:
            return f"trnc: every operator of {len(self.graphs)} graph(s) lowers"
        lines = [f"trnc: {sum(not g.ok for g in self.graphs)} of {len(self.graphs)} graph(s) would not compile"]
        for g in self.graphs:
            if g.ok:
                lines.append(f"  {g.name}: ok")
                continue
            lines.append(f"  {g.name}: {g.error_kind}")
            for target, count, locations, reason in g.unsupported:
                lines.append(f"    {target} (x{count})" + (f": {reason}" if reason else ""))
                lines.extend(f"      {loc}" for loc in locations)
            lines.extend(f"    {d}" for d in g.unsupported_dtypes)
            if not g.unsupported and not g.unsupported_dtypes:
                lines.append(f"    {g.message}")
        return "\n".join(lines)

    __repr__ = __str__


def _location(entry: dict[str, Any]) -> SourceLocation:
    return SourceLocation(
        file=entry.get("file") or "",
        line=int(entry.get("line") or 0),
        code=entry.get("code") or "",
        node=entry.get("node") or "",
    )


def check_graph(name: str, graph_json: str) -> GraphSupport:
    """Run only the importer on one graph JSON document."""
    from ._native import native

    result = native().check_graph(graph_json)
    details = json.loads(result.get("details") or "{}")
    return GraphSupport(
        name=name,
        ok=bool(result["ok"]),
        error_kind=result.get("error_kind") or "",
        message=result.get("message") or "",
        unsupported=[
            (
                u["target"],
                int(u.get("count", len(u.get("locations", [])))),
                [_location(loc) for loc in u.get("locations", [])],
                u.get("reason") or "",
            )
            for u in details.get("unsupported", [])
        ],
        unsupported_dtypes=[
            UnsupportedDtypeUse(d.get("node") or "", d.get("target") or "", d.get("dtype") or "", _location(d))
            for d in details.get("unsupported_dtypes", [])
        ],
    )


def check_support(model: Any, *example_inputs: Any, train: bool = True, options: Any = None) -> SupportReport:
    """Report which operators and dtypes of ``model(*example_inputs)`` would not lower.

    ``train=True`` also traces the backward graphs (the sum of the outputs
    that require grad is backpropagated); ``train=False`` traces inference.
    ``options`` are compile options as for ``torch.compile(..., options=)``.
    Nothing is compiled: only graph export and the importer run.
    """
    import torch

    from .aot import _trace

    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    saved = [p.grad for p in params]
    try:
        graphs = _trace(model, list(example_inputs), train, type(model).__name__, dict(options or {}))
    except UnsupportedOperatorError as exc:
        # Found while exporting (e.g. a complex operator with no pair rule,
        # complex_pairs.py), before the importer could see the graph: the
        # report says so instead of raising.
        return SupportReport([GraphSupport(
            name=exc.graph_name or "graph", ok=False, error_kind=exc.error_kind, message=str(exc),
            unsupported=[(op.target, op.count, list(op.locations), op.reason) for op in exc.operators])])
    finally:
        for p, g in zip(params, saved):
            p.grad = g
    if not graphs:
        raise TrncError("trnc.check_support: the model produced no graph (was anything computed on tensors?)")
    return SupportReport([check_graph(g.name, g.graph_json) for g in graphs])
