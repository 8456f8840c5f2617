"""Integer constants too large for the engines' integer arithmetic are refused at compile time.

The engines hold int64 tensors as int32 and do integer arithmetic in their fp32
ALUs (docs/coverage.md, dtype policy): exact while values stay below 2**24 in
magnitude, saturating at the int32 limits beyond. Code that relies on int64
wraparound, such as blt's polynomial byte hash (``torch.tensor(1000000007) **
arange(n)`` times the tokens), would silently compute other numbers. Such code
builds its large integers from tensor constants, whose values are known when
the graph compiles (constants.py lifts them), so a constant of 2**24 or more that
feeds integer arithmetic is a CompileError naming it and the user's line. Large
integers only moved or compared (index bounds, fill values) are not refused.
Graph inputs are checked at call time instead (compiled_graph.py), against
the bounds the compiler's range analysis derives (passes/IntegerRangeCheck.cpp);
each lifted integer constant's magnitude is handed to that analysis as its
input's ``max_abs`` (and checked at every call like the other bounds).
"""

from __future__ import annotations

import torch
import torch.fx
from torch._subclasses.fake_tensor import unset_fake_temporarily

from .errors import CompileError
from .graph_export import _source_location  # the user's frame, as export reports it

__all__ = ["bound_integer_constants", "check_integer_constants", "EXACT_INTEGER_LIMIT"]

EXACT_INTEGER_LIMIT = 2**24  # fp32 significand; HARDWARE.md: "Engines compute in fp32 internally"

# Arithmetic whose integer result grows with its operands' magnitude.
_ARITHMETIC = {"pow", "mul", "add", "sub", "sum", "cumsum", "prod", "cumprod", "mm", "bmm", "addmm",
               "matmul", "div", "floor_divide", "remainder", "fmod", "lcm", "gcd"}
# Calls that pass a value through unchanged: follow them to its real users.
_PASS_THROUGH = {"lift_fresh_copy", "clone", "view", "_unsafe_view", "expand", "alias", "detach",
                 "unsqueeze", "squeeze", "permute", "t", "transpose", "_to_copy", "slice", "select"}


def _packet(node: torch.fx.Node) -> str:
    target = node.target
    return target.overloadpacket.__name__ if isinstance(target, torch._ops.OpOverload) else ""


def _arithmetic_user(node: torch.fx.Node) -> torch.fx.Node | None:
    todo, seen = list(node.users), set()
    while todo:
        user = todo.pop()
        if user in seen:
            continue
        seen.add(user)
        name = _packet(user)
        if name in _ARITHMETIC:
            return user
        if name in _PASS_THROUGH:
            todo.extend(user.users)
    return None


def _where(node: torch.fx.Node) -> str:
    loc = _source_location(node.meta.get("stack_trace"))
    return f" at {loc['file']}:{loc['line']}: {loc['code']}" if loc else ""


def check_integer_constants(gm: torch.fx.GraphModule, constants: list[torch.Tensor], graph_name: str) -> None:
    """Refuse `gm` if a lifted integer constant (the trailing placeholders, in
    `constants`' order) of magnitude >= 2**24 feeds integer arithmetic."""
    if not constants:
        return
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][-len(constants):]
    for node, value in zip(placeholders, constants):
        if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool or value.numel() == 0:
            continue
        with unset_fake_temporarily():  # compiled inside AOTAutograd's fake-tensor tracing
            largest = int(value.abs().max())
        if largest < EXACT_INTEGER_LIMIT:
            continue
        user = _arithmetic_user(node)
        if user is None:
            continue
        raise CompileError(
            f"integer constant {largest} ({value.dtype}) feeds {user.target}{_where(user)}; "
            f"the engines compute integers as int32 through fp32 ALUs, exact only below 2**24, "
            "so int64 arithmetic on larger values (e.g. wraparound hashes) is not supported",
            graph_name,
            error_kind="unsupported_integer_range",
        )


def bound_integer_constants(gm: torch.fx.GraphModule, graph, constants: list[torch.Tensor]) -> None:
    """Record each lifted integer constant's magnitude as ``max_abs`` of its
    graph input (the trailing placeholders of `gm`, in `constants`' order), so
    that the range analysis bounds it by its value rather than by the other
    inputs' bound."""
    if not constants:
        return
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][-len(constants):]
    specs = {spec.get("name"): spec for spec in graph.document["inputs"]}
    for node, value in zip(placeholders, constants):
        spec = specs.get(node.name)
        if spec is None or value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
            continue
        if value.numel() == 0:
            continue
        with unset_fake_temporarily():
            spec["max_abs"] = int(value.abs().max()) if value.dtype != torch.uint8 else int(value.max())
            # Read through fp32 and written back as int32 (saturating), unchanged?
            as_int32 = value.to(torch.int64).clamp(-(2**31), 2**31 - 1)
            spec["fp32_exact"] = bool(torch.equal(as_int32.to(torch.float32).to(torch.float64).clamp(-(2**31), 2**31 - 1).to(torch.int64), as_int32))
