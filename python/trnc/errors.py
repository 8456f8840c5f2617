"""Exceptions raised by the trnc backend.

Every error the backend raises derives from ``TrncError`` (a ``RuntimeError``).
Compile failures carry the compiler's message, the name of the graph that
failed and, when available, a hint for reproducing the failure outside
``torch.compile``. Unsupported operators get their own type so that callers can
inspect exactly which ATen ops are missing and where the user wrote them.

Note that Dynamo wraps exceptions raised while compiling a *forward* graph in
``torch._dynamo.exc.BackendCompilerFailed`` (the trnc error is its
``inner_exception``); a *backward* graph's error reaches the caller unwrapped
at the first ``.backward()`` (whether AOTAutograd compiled it lazily there or,
with the caches on, together with the forward: aot_cache.DeferredError).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional, Sequence

__all__ = [
    "TrncError",
    "CompileError",
    "UnsupportedOperatorError",
    "SourceLocation",
    "error_from_result",
]


class TrncError(RuntimeError):
    """Base class of every error raised by trnc."""


class CompileError(TrncError):
    """A graph could not be compiled.

    Attributes:
        compiler_message: the compiler's own message (without trnc's prefix).
        graph_name: the graph that failed (``forward_0``, ``backward_3``...).
        reproducer: a hint for reproducing the failure, or ``None``.
        error_kind: the compiler's error kind (``invalid_graph``, ...).
    """

    def __init__(
        self,
        compiler_message: str,
        graph_name: Optional[str] = None,
        reproducer: Optional[str] = None,
        error_kind: str = "compile_error",
    ) -> None:
        self.compiler_message = compiler_message
        self.graph_name = graph_name
        self.reproducer = reproducer
        self.error_kind = error_kind
        super().__init__(self._format())

    def _format(self) -> str:
        head = f"trnc: cannot compile graph '{self.graph_name}'" if self.graph_name else "trnc"
        text = f"{head}: {self.compiler_message}"
        if self.reproducer:
            text += f"\n{self.reproducer}"
        return text


class SourceLocation(NamedTuple):
    """Where the user wrote an operator: ``str()`` gives ``file:line: code``."""

    file: str
    line: int
    code: str = ""
    node: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else f"<unknown> (node {self.node})"
        return f"{where}: {self.code}" if self.code else where


@dataclass(frozen=True)
class UnsupportedOperator:
    """One ATen operator the compiler has no lowering for."""

    target: str
    count: int
    locations: list[SourceLocation]
    reason: str = ""  # why it cannot lower, when the reporter knows (complex_pairs.py, the importers)

    # Unpacks as the (target, count, locations) triple the API documents.
    def __iter__(self):
        return iter((self.target, self.count, self.locations))


class UnsupportedOperatorError(CompileError):
    """The graph uses ATen operators the compiler cannot lower.

    ``operators`` lists every such operator as ``(target, count, locations)``
    where ``locations`` holds one ``SourceLocation`` per occurrence.
    """

    def __init__(
        self,
        operators: Sequence[UnsupportedOperator],
        graph_name: Optional[str] = None,
        reproducer: Optional[str] = None,
    ) -> None:
        self.operators = list(operators)
        super().__init__(
            _describe_unsupported(self.operators),
            graph_name=graph_name,
            reproducer=reproducer,
            error_kind="unsupported_operator",
        )


def _describe_unsupported(operators: Sequence[UnsupportedOperator]) -> str:
    total = sum(op.count for op in operators)
    lines = [f"{len(operators)} unsupported operator(s), {total} occurrence(s):"]
    for op in operators:
        lines.append(f"  {op.target} (x{op.count})" + (f": {op.reason}" if op.reason else ""))
        lines.extend(f"    {loc}" for loc in op.locations)
    return "\n".join(lines)


def _parse_unsupported(details: dict[str, Any]) -> list[UnsupportedOperator]:
    ops = []
    for entry in details.get("unsupported", []):
        locs = [
            SourceLocation(
                file=loc.get("file") or "",
                line=int(loc.get("line") or 0),
                code=loc.get("code") or "",
                node=loc.get("node") or "",
            )
            for loc in entry.get("locations", [])
        ]
        # The compiler's reason, when an importer gave one (an argument form
        # it cannot lower, e.g. uneven all_to_all_single splits).
        ops.append(UnsupportedOperator(entry["target"], int(entry.get("count", len(locs))), locs,
                                       entry.get("reason", "")))
    return ops


def error_from_result(result: dict[str, Any], graph_name: str, reproducer: Optional[str]) -> CompileError:
    """Turn a failed ``_C.compile`` result into the matching exception."""
    try:
        details = json.loads(result.get("details") or "{}")
    except ValueError:
        details = {}
    kind = result.get("error_kind") or "compile_error"
    if kind == "unsupported_operator":
        operators = _parse_unsupported(details)
        if operators:
            return UnsupportedOperatorError(operators, graph_name, reproducer)
    return CompileError(result.get("message") or "unknown compiler error", graph_name, reproducer, kind)
