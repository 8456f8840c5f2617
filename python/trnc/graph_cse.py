"""Common-subexpression elimination on an AOTAutograd graph, before export.

AOTAutograd's default partitioner (the one trnc's backend uses) does not run a CSE
pass, and decompositions repeat work: two triangular solves against one matrix
square the same matrix twice (decomp_linalg.py), the backward rebuilds masks and
transposes the forward already built. Every repeat is a real instruction sequence
on the engines, so the graph is deduplicated here: a call whose target and
arguments equal an earlier call's reuses that call's value.

Only pure calls merge: ATen/trnc operator overloads with no mutable argument and no
random draw (PyTorch's nondeterministic_seeded tag, functorch's random-op list,
trnc.seed: two dropouts must keep two masks), plus ``getitem``. Scalar arguments
compare by type and bits, so ``x + 1`` and ``x + 1.0`` (different type
promotion) or ``x * 0.0`` and ``x * -0.0`` stay apart. A graph output is never
merged into another value, so outputs that eager returns as separate tensors stay
separate.
"""

from __future__ import annotations

import math
import operator
import struct
from typing import Any

import torch
from torch._functorch.compile_utils import rand_ops

from .decomp_random import SEED_TARGET  # a fresh seed per call

__all__ = ["eliminate_common_subexpressions"]

_RANDOM = {str(op) for op in rand_ops}


def _pure(node: torch.fx.Node) -> bool:
    if node.op != "call_function":
        return False
    target = node.target
    if target is operator.getitem:
        return True
    if not isinstance(target, torch._ops.OpOverload):
        return False
    if str(target) == SEED_TARGET or str(target.overloadpacket) in _RANDOM:
        return False
    if torch.Tag.nondeterministic_seeded in target.tags:
        return False
    return not target._schema.is_mutable


def _key(value: Any) -> Any:
    """A hashable key equal only for arguments that are interchangeable."""
    if isinstance(value, torch.fx.Node):
        return ("node", value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    if isinstance(value, float):  # bits: -0.0 and 0.0 differ; every NaN payload equal
        return ("float", "nan" if math.isnan(value) else struct.pack("<d", value))
    if value is None or isinstance(value, (bool, int, str, torch.dtype, torch.device, torch.layout,
                                           torch.memory_format)):
        return (type(value).__name__, value)
    raise TypeError(f"no CSE key for {type(value).__name__}")


def eliminate_common_subexpressions(gm: torch.fx.GraphModule) -> int:
    """Merge repeated pure calls of ``gm`` in place; returns how many were removed."""
    graph = gm.graph
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    outputs = set(output.all_input_nodes)
    seen: dict[Any, torch.fx.Node] = {}
    removed = 0
    for node in list(graph.nodes):
        if not _pure(node):
            continue
        try:
            key = (node.target, _key(node.args), _key(node.kwargs))
        except TypeError:
            continue  # an argument kind with no safe equality: keep the call
        first = seen.get(key)
        if first is None:
            seen[key] = node
        elif node not in outputs:
            node.replace_all_uses_with(first)
            graph.erase_node(node)
            removed += 1
    if removed:
        gm.recompile()
    return removed
