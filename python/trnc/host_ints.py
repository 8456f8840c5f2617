"""Python-int bookkeeping in a Dynamo graph, kept off the engines.

With ``dynamic=None`` (PyTorch's default, and transformers' ``CompileConfig``) Dynamo
turns a Python int that changes between calls into a SymInt graph input instead of
recompiling for each value. transformers' static sliding-window cache keeps such a
counter (``StaticSlidingWindowLayer.cumulative_length_int``): each decode step reads it
(guards only, while the window is not full) and the graph returns ``counter + 1`` so
Dynamo can write the attribute back.

When no tensor of the graph depends on those ints and every tensor shape is static,
the graph splits cleanly: the tensor part compiles as usual (static shapes, every
tensor op on the engines) and the few int operations (``operator.add`` on the
counter) are evaluated by the wrapper on the call's Python ints, as eager Python
would. Dynamo's guards (e.g. ``counter <= window - 1``) keep the graph valid.
An int that feeds a tensor (a shape, an index, a mask offset) is not handled here:
the caller then refuses the graph as symbolic (static shapes only).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import torch

__all__ = ["split_int_bookkeeping"]

_SYM = (torch.SymInt, torch.SymBool, torch.SymFloat)


def _value(node: torch.fx.Node) -> Any:
    return node.meta.get("example_value", node.meta.get("val"))


def split_int_bookkeeping(
    gm: torch.fx.GraphModule, example_inputs: Sequence[Any]
) -> Optional[tuple[torch.fx.GraphModule, list[Any], Callable[[Callable], Callable]]]:
    """If `gm`'s symbolic inputs are Python ints only used by int arithmetic whose
    results are graph outputs, return (`gm` without that arithmetic, its example
    inputs, wrap), where wrap(compiled tensor graph) is the callable for the
    original graph (its arguments, unboxed). Else None."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        return None
    sym_index = [i for i, v in enumerate(example_inputs) if isinstance(v, _SYM)]
    if not sym_index:
        return None
    for v in example_inputs:  # every tensor shape and stride static
        if isinstance(v, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in (*v.shape, *v.stride())):
            return None
    # Every node reachable from a symbolic input: int arithmetic (call_function on
    # scalars) ending at the output, never a tensor.
    int_nodes: list[torch.fx.Node] = []
    reached = {placeholders[i] for i in sym_index}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output") or not (reached & set(node.all_input_nodes)):
            continue
        if node.op != "call_function" or not isinstance(_value(node), (*_SYM, int, bool, float)):
            return None
        if any(a not in reached for a in node.all_input_nodes):
            return None  # mixes in a non-int value
        reached.add(node)
        int_nodes.append(node)
    output = next(n for n in gm.graph.nodes if n.op == "output")
    outs = output.args[0]
    if not isinstance(outs, (tuple, list)):
        return None
    int_out = {i for i, o in enumerate(outs) if isinstance(o, torch.fx.Node) and o in reached}
    sym_nodes = [placeholders[i] for i in sym_index]

    def evaluate(ints: Sequence[Any]) -> dict:
        env: dict = dict(zip(sym_nodes, ints))
        for node in int_nodes:
            args = torch.fx.node.map_arg(node.args, env.__getitem__)
            kwargs = torch.fx.node.map_arg(node.kwargs, env.__getitem__)
            env[node] = node.target(*args, **kwargs)
        return env

    # The tensor graph: a copy (Dynamo calls the result with `gm`'s placeholders) without
    # the int outputs, the int arithmetic and the int inputs.
    graph = torch.fx.Graph()
    copies: dict = {}
    graph.graph_copy(gm.graph, copies)
    graph.output(tuple(copies[o] if isinstance(o, torch.fx.Node) else o
                       for i, o in enumerate(outs) if i not in int_out))
    for node in (*reversed(int_nodes), *sym_nodes):
        graph.erase_node(copies[node])
    tensor_gm = torch.fx.GraphModule(gm, graph)
    sym_set = set(sym_index)
    kept = [v for i, v in enumerate(example_inputs) if i not in sym_set]

    def wrap(compiled: Callable) -> Callable:
        def run(*args: Any) -> list:
            env = evaluate([args[i] for i in sym_index])
            rest = [a for i, a in enumerate(args) if i not in sym_set]
            tensors = iter(compiled(*rest))  # Dynamo's convention: unboxed, like aot_autograd's
            return [env[outs[i]] if i in int_out else next(tensors) for i in range(len(outs))]

        return run

    return tensor_gm, kept, wrap
