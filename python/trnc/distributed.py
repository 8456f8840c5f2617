"""Collectives in compiled graphs: torch.distributed on the simulated cores.

Each rank is one process (torchrun) simulating its own NeuronCore. Graphs
that Dynamo and AOTAutograd build for DTensor, FSDP2 or direct use of
``torch.distributed._functional_collectives`` hold ``_c10d_functional.*``
nodes. At export (``annotate``) each such node gets its process group
resolved to global ranks, the world size and an id (its number in the
graph) as the keyword arguments ``trnc_ranks``, ``trnc_world_size`` and
``trnc_id``: the compiler lowers it to one collective instruction on the
collective DMA queue, and since the graph JSON is the cache key, the group
layout and world size are part of the key. ``wait_tensor`` becomes the
semaphore wait of the collective's consumers.

At run time the simulator reaches a collective instruction and calls back
into ``GraphCollectives``, which runs the very same functional collective
eagerly through the user's process group (``gloo`` on CPU) on the
instruction's bytes, so results equal eager PyTorch's exactly, and writes
the result into the program's buffer. docs/distributed.md has the details.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any, Optional

import torch
import torch.fx

from .errors import CompileError

__all__ = ["CollectiveSpec", "GraphCollectives", "annotate", "is_collective", "is_opaque", "NAMESPACE"]

NAMESPACE = "_c10d_functional"

# The collectives trnc lowers (docs/distributed.md). Each takes its
# group_name as its last positional argument; the _coalesced forms take a
# list of tensors and return one result per tensor. Any other
# _c10d_functional operator is refused by name as unsupported.
_COLLECTIVES = frozenset({
    "all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "all_to_all_single", "broadcast",
    "all_reduce_coalesced", "all_gather_into_tensor_coalesced", "reduce_scatter_tensor_coalesced",
})

_DTYPES = {
    "f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16,
    "i32": torch.int32, "u8": torch.uint8, "i64": torch.int64, "bool": torch.bool,
}


def is_opaque(value: Any) -> bool:
    """A script object input (DTensor graphs carry their DeviceMesh's as
    such), which a compiled program cannot take but may pass through."""
    from torch._library.fake_class_registry import FakeScriptObject

    return isinstance(value, (FakeScriptObject, torch.ScriptObject))


def is_collective(node: torch.fx.Node) -> bool:
    """A functional collective (not wait_tensor) of the graph."""
    op = getattr(node.target, "_schema", None)
    return op is not None and op.name.startswith(NAMESPACE + "::") and op.name.split("::")[1] in _COLLECTIVES


@dataclass(frozen=True)
class CollectiveSpec:
    """One collective instruction of a graph, as the host runs it."""

    id: int
    overload: Any  # torch.ops._c10d_functional.<name>.default
    args: tuple  # its arguments after the input tensor (group_name last)
    index: Optional[int]  # the element of a _coalesced form, else None
    group_size: int
    dtype: torch.dtype
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]

    def run(self, x: torch.Tensor) -> torch.Tensor:
        """The collective on this rank's input, as eager PyTorch runs it."""
        wait = torch.ops._c10d_functional.wait_tensor.default
        if self.index is None:
            return wait(self.overload(x, *self.args))
        return wait(self.overload([x], *self.args)[0])


def _resolve(group_name: str, graph: str, node: torch.fx.Node) -> list[int]:
    import torch.distributed as dist
    from torch.distributed.distributed_c10d import _resolve_process_group

    if not dist.is_available() or not dist.is_initialized():
        raise CompileError(
            f"node '{node.name}' ({node.target}) is a collective, but torch.distributed is not "
            "initialized in this process (call torch.distributed.init_process_group first)",
            graph,
        )
    try:
        group = _resolve_process_group(group_name)
    except Exception as e:  # an unknown name: say which
        raise CompileError(f"node '{node.name}' ({node.target}) names process group {group_name!r}, "
                           f"which this process does not know: {e}", graph) from e
    return list(dist.get_process_group_ranks(group))


def _meta_of(node: torch.fx.Node, index: Optional[int]) -> torch.Tensor:
    val = node.meta.get("val")
    return val[index] if index is not None else val


def annotate(node: torch.fx.Node, graph: str, first_id: int) -> tuple[dict[str, Any], list[CollectiveSpec]]:
    """The keyword arguments the exporter adds to collective `node` (its
    group's ranks, the world size, its id) and what the host runs for it."""
    import torch.distributed as dist

    name = node.target._schema.name.split("::")[1]
    group_name = node.args[-1]
    if not isinstance(group_name, str):
        raise CompileError(f"node '{node.name}' ({node.target}): the process group argument is "
                           f"{group_name!r}, not a group name", graph)
    ranks = _resolve(group_name, graph, node)
    coalesced = name.endswith("_coalesced")
    inputs = list(node.args[0]) if coalesced else [node.args[0]]
    specs = []
    for i, x in enumerate(inputs):
        out = _meta_of(node, i if coalesced else None)
        specs.append(CollectiveSpec(
            id=first_id + i,
            overload=node.target,
            args=tuple(node.args[1:]),
            index=i if coalesced else None,
            group_size=len(ranks),
            # float64 runs as float32 (dtype policy), collectives included
            dtype=torch.float32 if out.dtype == torch.float64 else out.dtype,
            in_shape=tuple(int(s) for s in x.meta["val"].shape),
            out_shape=tuple(int(s) for s in out.shape),
        ))
    kwargs = {"trnc_ranks": ranks, "trnc_world_size": dist.get_world_size(), "trnc_id": first_id}
    return kwargs, specs


def _tensor_at(address: int, nbytes: int, dtype: torch.dtype, shape: tuple[int, ...]) -> torch.Tensor:
    """The program's bytes at `address` as a tensor (zero copy)."""
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    buf = (ctypes.c_uint8 * nbytes).from_address(address)
    return torch.frombuffer(buf, dtype=torch.uint8).view(dtype).view(shape)


class GraphCollectives:
    """Runs one compiled graph's collective instructions (the simulator's
    CollectiveHook, through trnc._C.Executable.run(collectives=...))."""

    def __init__(self, graph: str, specs: list[CollectiveSpec]) -> None:
        self.graph = graph
        self.specs = {s.id: s for s in specs}

    def __call__(self, id: int, kind: str, reduce_op: str, group_size: int, dtype: str,
                 in_ptr: int, in_bytes: int, out_ptr: int, out_bytes: int) -> None:
        spec = self.specs.get(id)
        if spec is None:
            raise RuntimeError(f"trnc: graph '{self.graph}' has no collective {id}")
        want = _DTYPES.get(dtype)
        elem = spec.dtype.itemsize
        if (want != spec.dtype or group_size != spec.group_size
                or in_bytes != math.prod(spec.in_shape) * elem or out_bytes != math.prod(spec.out_shape) * elem):
            raise RuntimeError(
                f"trnc: graph '{self.graph}' collective {id} ({kind}) does not match its export: "
                f"{dtype} {in_bytes} -> {out_bytes} bytes over {group_size} ranks, exported as "
                f"{spec.dtype} {list(spec.in_shape)} -> {list(spec.out_shape)} over {spec.group_size}")
        x = _tensor_at(in_ptr, in_bytes, spec.dtype, spec.in_shape)
        result = spec.run(x.clone())  # the program may reuse its input buffer
        _tensor_at(out_ptr, out_bytes, spec.dtype, spec.out_shape).copy_(result)
