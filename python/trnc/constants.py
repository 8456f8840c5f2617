"""Tensor constants of an AOTAutograd graph become trailing graph inputs.

A model that builds a tensor from Python data inside ``forward``
(``torch.tensor(...)``, ``torch.finfo(...)`` masks, a scalar turned tensor) gets
``get_attr`` nodes (``_tensor_constant0``...) in its ATen graph. Graph JSON has
no constant tensors, so before export each one becomes a placeholder after the
graph's own, and the compiled callable appends the constants' current values to
every call. The compiled program sees an ordinary input; its artifact does not
depend on the constants' values, only on their shapes, dtypes and strides.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.fx

__all__ = ["lift_constants", "with_constants"]


def _attr(gm: torch.nn.Module, target: str) -> Any:
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def lift_constants(gm: torch.fx.GraphModule) -> list[torch.Tensor]:
    """Turn every tensor ``get_attr`` node of ``gm`` into a trailing placeholder
    (in place); returns the tensors, in the order of the new placeholders."""
    graph = gm.graph
    constants: list[torch.Tensor] = []
    for node in [n for n in graph.nodes if n.op == "get_attr"]:
        value = _attr(gm, node.target)
        if not isinstance(value, torch.Tensor):
            continue  # not a tensor: left for export to report
        first = next(n for n in graph.nodes if n.op != "placeholder")  # placeholders stay first
        with graph.inserting_before(first):
            placeholder = graph.placeholder(f"constant_{node.name}")
        placeholder.meta.update(node.meta)
        placeholder.meta.setdefault("val", value)
        node.replace_all_uses_with(placeholder)
        graph.erase_node(node)
        constants.append(value)
    if constants:
        gm.recompile()
    return constants


def with_constants(compiled: Callable, constants: list[torch.Tensor]) -> Callable:
    """A boxed callable that appends ``constants`` to the caller's inputs."""
    if not constants:
        return compiled

    def call(args: list) -> Any:
        args.extend(constants)
        return compiled(args)

    call._boxed_call = True  # type: ignore[attr-defined]
    call.__name__ = getattr(compiled, "__name__", "trnc_compiled")
    call.compiled = compiled  # type: ignore[attr-defined]  # the CompiledGraph, for tests and stats
    return call
