"""FX GraphModule -> graph JSON (docs/graph-json.md, schema version 1).

AOTAutograd hands the backend one ATen-level FX graph per forward/backward.
This module turns it into the versioned JSON document the C++ importer reads:
inputs with their tensor metadata, ``call_function`` nodes in topological
order with encoded arguments, result metadata and the user's source location,
and the outputs the compiled program writes.

Outputs that are ``None``, a graph input, or a view of a graph input or of
another output (a saved ``t(W)``, a reshaped activation also returned whole)
are not produced by the compiled program; ``ExportedGraph.output_plan`` tells
the caller how to rebuild the graph's full result tuple from the program's
outputs (views are rebuilt with ``as_strided`` on the same storage, as eager
returns them).
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import torch
import torch.fx

from .decomp_random import SEED_TARGET  # a random op's seed: becomes a graph input
from . import distributed  # collectives: their groups resolved at export
from .errors import CompileError
from .logs import warn_at_user_line


__all__ = [
    "ExportedGraph",
    "TensorSpec",
    "export_graph",
    "unsupported_tensor_kind",
    "Float64Warning",
    "DYNAMIC_SHAPES_MESSAGE",
    "SCHEMA",
    "VERSION",
]

SCHEMA = "trnc.graph"
VERSION = 1

DYNAMIC_SHAPES_MESSAGE = (
    "trnc supports static shapes only, but this graph has symbolic shapes{where}. "
    "Use torch.compile(..., dynamic=False); every new input shape then compiles a new graph."
)

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.*)$')


@dataclass(frozen=True)
class TensorSpec:
    """Static tensor metadata: what the program reads or writes."""

    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype

    def to_json(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "stride": list(self.stride), "dtype": dtype_name(self.dtype)}


# How the compiled callable rebuilds output i of the FX graph:
# ("program", j): the program's output j; ("input", i): graph input i; ("none",): None.
OutputSource = Union[tuple[str, int], tuple[str], tuple[str, str, int, tuple, tuple, int]]

# Ops whose result is a view of their first argument's storage.
_VIEW_OPS = {
    torch.ops.aten.t.default,
    torch.ops.aten.transpose.int,
    torch.ops.aten.permute.default,
    torch.ops.aten.view.default,
    torch.ops.aten._unsafe_view.default,
    torch.ops.aten.alias.default,
    torch.ops.aten.expand.default,
    torch.ops.aten.unsqueeze.default,
    torch.ops.aten.squeeze.dim,
    torch.ops.aten.squeeze.dims,
    torch.ops.aten.slice.Tensor,
    torch.ops.aten.select.int,
}


# Ops returning several views of their input (reached through getitem).
_MULTI_VIEW_OPS = {
    torch.ops.aten.split.Tensor,
    torch.ops.aten.split_with_sizes.default,
    torch.ops.aten.unbind.int,
}


def _view_source(node: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The tensor ``node`` is a view of, when it is a view op (or one result
    of a split), else None."""
    if node.op != "call_function" or not node.args:
        return None
    if node.target is operator.getitem:
        multi = node.args[0]
        if (isinstance(multi, torch.fx.Node) and multi.op == "call_function"
                and multi.target in _MULTI_VIEW_OPS and multi.args):
            node = multi
        else:
            return None
    elif node.target not in _VIEW_OPS:
        return None
    src = node.args[0]
    return src if isinstance(src, torch.fx.Node) else None


def _view_of(res: torch.fx.Node, sources: set) -> Optional[torch.fx.Node]:
    """The node in ``sources`` whose storage ``res`` views through a chain of
    view ops (checked on the fake tensors' storages too), or None."""
    node = res
    while node not in sources:
        node = _view_source(node)
        if node is None:
            return None
    a, b = res.meta.get("val"), node.meta.get("val")
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.dtype != b.dtype:
        return None
    try:
        if a.untyped_storage()._cdata != b.untyped_storage()._cdata:
            return None
    except (RuntimeError, NotImplementedError):
        return None
    return node


def _view_root(res: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The first node under ``res``'s chain of view ops when ``res`` views its
    storage (``res`` itself is not a view: None)."""
    node = res
    while (src := _view_source(node)) is not None:
        node = src
    return None if node is res else _view_of(res, {node})


@dataclass
class ExportedGraph:
    name: str
    document: dict[str, Any]
    inputs: list[TensorSpec]
    program_outputs: list[TensorSpec]
    output_plan: list[OutputSource] = field(default_factory=list)
    # dtype policy: float64 graph inputs / program outputs, computed as float32
    # (``inputs``/``program_outputs`` hold the float32 specs the program uses).
    float64_inputs: frozenset[int] = frozenset()
    float64_outputs: frozenset[int] = frozenset()
    # Inputs that were ``trnc.seed`` nodes (decomp_random.py): the last ones,
    # filled by the caller with fresh words from torch's generator per call.
    seed_inputs: tuple[int, ...] = ()
    # The graph's collectives by id (distributed.py): what the host runs
    # when the simulator reaches each collective instruction.
    collectives: tuple["distributed.CollectiveSpec", ...] = ()
    # Caller argument positions of opaque inputs (DeviceMesh objects of
    # DTensor graphs): not program inputs, only passed through to outputs.
    opaque_inputs: tuple[int, ...] = ()

    def to_json(self) -> str:
        return json.dumps(self.document, allow_nan=False)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Float64Warning(UserWarning):
    """A graph's float64 tensors are computed in float32 (once per graph)."""


def unsupported_tensor_kind(value: Any) -> Optional[str]:
    """Why trnc cannot take this tensor at all, or None (dtype policy, docs/coverage.md)."""
    if getattr(value, "is_nested", False):
        return "a nested tensor (torch.nested); trnc takes dense strided tensors only"
    if value.layout != torch.strided:
        return f"a sparse tensor ({value.layout}); trnc takes dense strided tensors only, use .to_dense()"
    if value.dtype.is_complex:
        return f"complex ({dtype_name(value.dtype)}); trnc has no complex arithmetic, use torch.view_as_real"
    if getattr(value, "is_quantized", False) or value.dtype in _QUANTIZED:
        return f"quantized ({dtype_name(value.dtype)}); trnc does not run quantized tensors, use .dequantize()"
    return None


_QUANTIZED = {torch.qint8, torch.quint8, torch.qint32, torch.quint4x2, torch.quint2x4}


def _narrow(spec: "TensorSpec") -> "TensorSpec":
    return TensorSpec(spec.shape, spec.stride, torch.float32) if spec.dtype == torch.float64 else spec


def _narrow_document(value: Any) -> Any:
    """float64 -> float32 in every dtype field and dtype argument of the JSON."""
    if isinstance(value, dict):
        return {k: ("float32" if k == "dtype" and v == "float64" else _narrow_document(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_narrow_document(v) for v in value]
    return value


def _is_symbolic(value: Any) -> bool:
    return isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def _dynamic_error(graph_name: str, where: str) -> CompileError:
    return CompileError(DYNAMIC_SHAPES_MESSAGE.format(where=where), graph_name, error_kind="dynamic_shapes")


def tensor_spec(value: Any, graph_name: str, where: str) -> TensorSpec:
    """Metadata of a (fake) tensor, refusing symbolic sizes and strides."""
    if not isinstance(value, torch.Tensor):
        if _is_symbolic(value):
            raise _dynamic_error(graph_name, f" ({where} is the symbolic value {value})")
        raise CompileError(f"{where} is not a tensor ({type(value).__name__}); only tensors are supported", graph_name)
    kind = unsupported_tensor_kind(value)
    if kind is not None:
        raise CompileError(f"{where} is {kind}", graph_name, error_kind="unsupported_dtype")
    if any(_is_symbolic(s) for s in (*value.shape, *value.stride(), value.storage_offset())):
        raise _dynamic_error(graph_name, f" ({where} has shape {list(value.shape)})")
    return TensorSpec(tuple(int(s) for s in value.shape), tuple(int(s) for s in value.stride()), value.dtype)


def _source_location(stack_trace: Optional[str]) -> Optional[dict[str, Any]]:
    """The user's frame of a stack trace: the last frame outside torch, else the last one."""
    if not stack_trace:
        return None
    lines = stack_trace.splitlines()
    frames = []
    for i, text in enumerate(lines):
        match = _FRAME_RE.match(text)
        if match:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) else ""
            frames.append({"file": match["file"], "line": int(match["line"]), "code": code})
    if not frames:
        return None
    user = [f for f in frames if not f["file"].startswith(_TORCH_DIR)]
    return (user or frames)[-1]


class _Encoder:
    """Encodes one graph's node arguments per the schema's argument table."""

    def __init__(self, graph_name: str) -> None:
        self.graph_name = graph_name
        self.refs: dict[torch.fx.Node, dict[str, Any]] = {}
        self.node = ""  # the node whose arguments are being encoded

    def encode(self, value: Any) -> Any:
        if isinstance(value, torch.fx.Node):
            if value not in self.refs:
                raise CompileError(f"node '{value.name}' ({value.op}) cannot be used as an argument", self.graph_name)
            return dict(self.refs[value])
        if _is_symbolic(value):
            raise _dynamic_error(self.graph_name, f" (argument {value})")
        if value is None or isinstance(value, (bool, int, str)):
            return {"str": value} if isinstance(value, str) else value
        if isinstance(value, float):
            if math.isnan(value):
                return {"float": "nan"}
            if math.isinf(value):
                return {"float": "inf" if value > 0 else "-inf"}
            return value  # json renders floats with a fraction or exponent
        if isinstance(value, (list, tuple, torch.Size)):
            return [self.encode(v) for v in value]
        if isinstance(value, torch.dtype):
            if value.is_complex or value in _QUANTIZED:
                kind = "complex" if value.is_complex else "quantized"
                raise CompileError(
                    f"node '{self.node}' makes {kind} tensors ({dtype_name(value)}); trnc does not support {kind} tensors",
                    self.graph_name,
                    error_kind="unsupported_dtype",
                )
            return {"dtype": dtype_name(value)}
        if isinstance(value, torch.device):
            return {"device": str(value)}
        if isinstance(value, (torch.layout, torch.memory_format)):
            return {"enum": str(value)}
        if isinstance(value, torch._ops.OpOverload):  # a higher-order op's operand, e.g. with_effects
            return {"str": str(value)}
        raise CompileError(f"cannot encode argument {value!r} of type {type(value).__name__}", self.graph_name)


def _target_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # aten.mm.default
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"higher_order.{target.name()}"  # with_effects, cond, ...: reported unsupported by this name
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{getattr(target, '__qualname__', str(target))}".lstrip(".")


def _node_target(node: torch.fx.Node) -> str:
    """The name a node is imported (or reported unsupported) by; a higher-order op
    names the operator it wraps, e.g. higher_order.with_effects(aten._linalg_check_errors.default)."""
    name = _target_name(node.target)
    if isinstance(node.target, torch._ops.HigherOrderOperator):
        inner = [str(a) for a in node.args if isinstance(a, torch._ops.OpOverload)]
        if inner:
            return f"{name}({', '.join(inner)})"
    return name


def _nki_kernel_kwargs(target: str, node: torch.fx.Node) -> Optional[dict]:
    """A trnc.nki custom op's call: the kernel traced for this node's shapes (trnc/nki/_custom_op.py)."""
    if not target.startswith("trnc_nki."):
        return None
    from .nki._custom_op import kernel_node

    return kernel_node(target, node.args)


def _node_meta(node: torch.fx.Node, graph_name: str) -> Any:
    val = node.meta.get("val")
    if val is None:
        return None
    if isinstance(val, (list, tuple)):
        return [
            None if v is None else tensor_spec(v, graph_name, f"result {i} of node '{node.name}'").to_json()
            for i, v in enumerate(val)
        ]
    return tensor_spec(val, graph_name, f"node '{node.name}'").to_json()


def export_graph(gm: torch.fx.GraphModule, name: str) -> ExportedGraph:
    """Export ``gm`` (an AOTAutograd ATen graph) as graph JSON named ``name``."""
    enc = _Encoder(name)
    inputs: list[TensorSpec] = []
    input_index: dict[torch.fx.Node, int] = {}
    nodes: list[dict[str, Any]] = []
    outputs_doc: list[dict[str, Any]] = []
    program_outputs: list[TensorSpec] = []
    plan: list[OutputSource] = []
    program_output_of: dict[tuple, int] = {}
    seed_inputs: list[int] = []
    collectives: list[distributed.CollectiveSpec] = []
    # Where each input sits in the caller's argument list (placeholders, then
    # seeds): differs from its program input index once opaque inputs drop out.
    caller_index: dict[torch.fx.Node, int] = {}
    opaque_inputs: list[int] = []

    for node in gm.graph.nodes:
        if node.op == "placeholder" and distributed.is_opaque(node.meta.get("val")):
            # A DeviceMesh / process group object DTensor graphs carry: only
            # passed through to the outputs; a node using it cannot be
            # encoded (node args name no refs for it) and is refused.
            caller_index[node] = len(caller_index)
            opaque_inputs.append(caller_index[node])
        elif node.op == "placeholder":
            spec = tensor_spec(node.meta.get("val"), name, f"input '{node.name}'")
            input_index[node] = len(inputs)
            caller_index[node] = len(caller_index)
            inputs.append(spec)
            enc.refs[node] = {"node": node.name}
        elif node.op == "call_function" and _target_name(node.target) == SEED_TARGET:
            # A random operator's seed: an int32[2] graph input (after every
            # placeholder, which FX orders first), filled before each call.
            input_index[node] = len(inputs)
            caller_index[node] = len(caller_index)
            inputs.append(TensorSpec((2,), (1,), torch.int32))
            seed_inputs.append(input_index[node])
            enc.refs[node] = {"node": node.name}
        elif node.op == "call_function" and node.target is operator.getitem:
            base, index = node.args
            enc.refs[node] = {"node": base.name, "index": int(index)}
        elif node.op == "call_function":
            enc.refs[node] = {"node": node.name}
            enc.node = node.name
            stack_trace = node.meta.get("stack_trace")
            target = _node_target(node)
            kernel = _nki_kernel_kwargs(target, node)
            kwargs = {k: enc.encode(v) for k, v in node.kwargs.items()}
            if distributed.is_collective(node):  # group -> ranks, world size, id
                extra, specs = distributed.annotate(node, name, len(collectives))
                kwargs.update({k: enc.encode(v) for k, v in extra.items()})
                collectives.extend(specs)
            nodes.append(
                {
                    "name": node.name,
                    "target": "trnc.nki_kernel" if kernel else target,
                    "args": [enc.encode(a) for a in node.args],
                    "kwargs": kernel or kwargs,
                    "meta": _node_meta(node, name),
                    "loc": _source_location(stack_trace),
                    "stack_trace": stack_trace or None,
                }
            )
        elif node.op == "output":
            results = node.args[0]
            results = list(results) if isinstance(results, (list, tuple)) else [results]
            direct = {r for r in results if isinstance(r, torch.fx.Node)}
            input_nodes = set(caller_index)
            # Several outputs viewing one computed tensor that is not itself
            # returned (q, k and v split from one projection, saved for the
            # backward): the tensor is returned once and each output rebuilt
            # as a view of it, instead of one strided copy per output.
            roots = {r: _view_root(r) for r in direct}
            shared = {t for t in roots.values() if t is not None and t not in input_nodes
                      and sum(1 for u in roots.values() if u is t) > 1}
            plan_of: dict[torch.fx.Node, OutputSource] = {}

            def produce(i, res):
                ref = enc.encode(res)
                key = (ref["node"], ref.get("index"))
                if key not in program_output_of:
                    spec = tensor_spec(res.meta.get("val"), name, f"output {i} ('{res.name}')")
                    program_output_of[key] = len(program_outputs)
                    program_outputs.append(spec)
                    outputs_doc.append({**ref, **spec.to_json()})
                return ("program", program_output_of[key])

            for i, res in enumerate(results):
                if res is None:
                    plan.append(("none",))
                elif res in caller_index:
                    plan.append(("input", caller_index[res]))
                elif isinstance(res, torch.fx.Node):
                    base = _view_of(res, input_nodes) or _view_of(res, direct - {res})
                    if base is None and roots.get(res) in shared:
                        base = roots[res]
                    if base is not None:
                        val, src = res.meta["val"], base.meta["val"]
                        if base in caller_index:
                            origin = ("input", caller_index[base])
                        else:
                            origin = plan_of.get(base) or produce(i, base)
                            plan_of[base] = origin
                        plan.append(("view", origin[0], origin[1], tuple(val.shape), tuple(val.stride()),
                                     int(val.storage_offset() - src.storage_offset())))
                        continue
                    plan_of[res] = produce(i, res)
                    plan.append(plan_of[res])
                else:
                    raise CompileError(f"output {i} is the constant {res!r}; only tensors are supported", name)
        else:  # get_attr, call_module, call_method: not produced by AOTAutograd for us
            raise CompileError(
                f"node '{node.name}' has op '{node.op}' ({node.target}); only placeholders, "
                "call_function and output nodes are supported (constant tensors are not yet)",
                name,
            )

    document = {
        "schema": SCHEMA,
        "version": VERSION,
        "name": name,
        "inputs": [{"name": n.name, **inputs[i].to_json()} for n, i in input_index.items()],
        "nodes": nodes,
        "outputs": outputs_doc,
    }
    wide_in = frozenset(i for i, s in enumerate(inputs) if s.dtype == torch.float64)
    wide_out = frozenset(i for i, s in enumerate(program_outputs) if s.dtype == torch.float64)
    if "float64" in json.dumps(document["inputs"]) or wide_out or any(
        "float64" in json.dumps([n["meta"], n["args"], n["kwargs"]]) for n in nodes
    ):
        # At the user's line of the first float64 operation (logs.py), not at trnc's.
        wide = [n for n in nodes if "float64" in json.dumps([n["meta"], n["args"], n["kwargs"]])]
        warn_at_user_line(
            f"trnc: graph '{name}' has float64 tensors; the engines have no float64, so they are computed "
            "in float32 (inputs are cast down, outputs cast back up to float64)",
            Float64Warning,
            next((n["loc"] for n in wide + nodes if n.get("loc")), None),
        )
        document = _narrow_document(document)
        inputs = [_narrow(s) for s in inputs]
        program_outputs = [_narrow(s) for s in program_outputs]
    return ExportedGraph(name, document, inputs, program_outputs, plan, wide_in, wide_out, tuple(seed_inputs),
                         tuple(collectives), tuple(opaque_inputs))
