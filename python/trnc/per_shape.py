"""Graphs with symbolic shapes under ``dynamic=None``: one static graph per shape.

``torch.compile(model)`` (what users of ``set_default_backend("neuron")`` write)
leaves ``dynamic=None``: the first call compiles static shapes, and when an input
shape changes Dynamo marks the dimension dynamic and hands the backend a graph with
symbolic sizes (``s0``) and SymInt inputs. trnc's programs are static, so instead of
refusing that graph the backend returns a ``PerShapeGraph``: at each call it looks at
the concrete inputs, and for each new shape signature specialises the Dynamo graph
(every SymInt input replaced by the call's int) and compiles it through the usual
static path (AOTAutograd, graph JSON, the artifact cache). Dynamo's own guards keep
deciding when the graph as a whole is valid; this only chooses among static
compilations of it. ``dynamic=True`` asked for explicitly is still refused
(backend.py), as are symbolic scalars feeding tensors with every shape static.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

import torch
import torch.fx

from .logs import log

__all__ = ["has_symbolic_shapes", "PerShapeGraph"]

_SYM = (torch.SymInt, torch.SymBool, torch.SymFloat)


def _symbolic_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and any(
        isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride(), value.storage_offset())
    )


def _fakes(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> list:
    """Dynamo hands the backend real example tensors; the symbolic shapes are on the
    placeholders' fake values."""
    nodes = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return [n.meta.get("example_value", n.meta.get("val", v)) for n, v in zip(nodes, example_inputs)]


def has_symbolic_shapes(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether some tensor input of `gm` has a symbolic size, stride or offset."""
    return any(_symbolic_tensor(v) for v in (*example_inputs, *_fakes(gm, example_inputs)))


def describe_shapes(values: Sequence[Any]) -> str:
    """Tensor shapes and int values of a call, e.g. ``[s0, 64], 32`` or ``[32, 64], 32``."""
    parts = []
    for v in values:
        if isinstance(v, torch.Tensor):
            parts.append(str(list(v.shape)))
        elif isinstance(v, (int, *_SYM)):
            parts.append(str(v))
    return ", ".join(parts)


def _signature(args: Sequence[Any]) -> Hashable:
    """What a static compilation depends on: every tensor's metadata and int value."""
    key: list = [torch.is_grad_enabled()]
    for a in args:
        if isinstance(a, torch.Tensor):
            key.append((tuple(a.shape), tuple(a.stride()), a.storage_offset(), a.dtype, a.device, a.requires_grad))
        elif isinstance(a, (int, float, bool)):
            key.append((type(a), a))
        else:
            key.append(type(a))
    return tuple(key)


def specialize(gm: torch.fx.GraphModule, args: Sequence[Any]) -> tuple[torch.fx.GraphModule, list[int]]:
    """A copy of `gm` with each scalar (SymInt) input replaced by its value in
    `args`; returns it and the indices of the inputs it still takes (the tensors)."""
    graph = torch.fx.Graph()
    copies: dict = {}
    out = graph.graph_copy(gm.graph, copies)
    graph.output(out)
    placeholders = [copies[n] for n in gm.graph.nodes if n.op == "placeholder"]
    kept = []
    for i, (node, value) in enumerate(zip(placeholders, args)):
        if isinstance(value, torch.Tensor):
            kept.append(i)
            continue
        for user in list(node.users):
            user.args = torch.fx.node.map_arg(user.args, lambda a: value if a is node else a)
            user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda a: value if a is node else a)
        graph.erase_node(node)
    graph.lint()
    return torch.fx.GraphModule(gm, graph), kept


class PerShapeGraph:
    """Dynamo's compiled function for a graph with symbolic shapes: compiles and
    caches one static graph per input signature seen (unboxed calling convention)."""

    def __init__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                 compile_static: Callable[[torch.fx.GraphModule, list], Callable]) -> None:
        self.gm = gm
        self.compile_static = compile_static
        self.compiled: dict[Hashable, tuple[Callable, list[int]]] = {}
        log.info(
            "graph with symbolic shapes (%s) under dynamic=None: compiling one static graph "
            "per concrete input shape at call time", describe_shapes(_fakes(gm, example_inputs))
        )

    def __call__(self, *args: Any) -> Any:
        key = _signature(args)
        entry = self.compiled.get(key)
        if entry is None:
            log.info("static compile %d of a dynamic-shape graph, for inputs %s",
                     len(self.compiled) + 1, describe_shapes(args))
            gm, kept = specialize(self.gm, args)
            entry = self.compiled[key] = (self.compile_static(gm, [args[i] for i in kept]), kept)
        fn, kept = entry
        return fn(*[args[i] for i in kept])
