"""The callable trnc returns to AOTAutograd for one compiled graph.

Boxed calling convention: it takes the list of graph inputs, clears it (so
AOTAutograd's references do not keep activations alive), allocates every
program output with ``torch.empty_strided`` using exactly the shape, stride
and dtype the graph declared, and hands the simulator buffer descriptors
(``buffer_of``: data pointer, bytes of storage, dtype, shape, strides; zero copy
both ways), which ``_C.Executable.run`` checks against the artifact's I/O regions
before anything runs, so an artifact that does not fit the tensors is an error.

Inputs must match what was compiled. A dtype or shape mismatch is an error
(Dynamo's guards make it unreachable in practice). A stride mismatch (e.g. a
non-contiguous gradient arriving at backward) is fixed with one copy into the
compiled layout, because the program addresses inputs through those strides.

dtype policy (docs/coverage.md): a graph exported with float64 tensors runs in
float32; its float64 inputs are cast down here and its float64 outputs cast
back up, so callers see the dtypes eager PyTorch would give. int64 inputs must
hold int32 values (the engines compute int64 as int32), and integer inputs
must stay within the bound the compiler's integer range check derived (the
fp32 ALUs are exact only up to 2**24, for inputs and intermediates alike; the
artifact's metadata lists the bounds): both checked per call, each a
TrncError naming the input (and the op and line).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

import torch

from . import profiling
from .distributed import GraphCollectives
from .decomp_random import draw_seed
from .errors import TrncError
from .graph_export import ExportedGraph, TensorSpec

__all__ = ["CompiledGraph", "buffer_of"]

# torch dtype -> the ISA's dtype names (runtime/isa: dtypeName).
_ISA_DTYPES = {
    torch.float32: "f32",
    torch.bfloat16: "bf16",
    torch.float16: "f16",
    torch.int32: "i32",
    torch.uint8: "u8",
    torch.int64: "i64",
    torch.bool: "bool",
}


def buffer_of(t: torch.Tensor, data_ptr: int = 0, nbytes: int = -1) -> tuple:
    """``t`` as the descriptor ``_C.Executable.run`` takes: (data pointer, bytes
    its storage holds from there, ISA dtype name, shape, strides). ``data_ptr`` /
    ``nbytes`` override the first two (a scratch buffer for a zero-element tensor)."""
    if not data_ptr:
        data_ptr = t.data_ptr()
        nbytes = t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()
    return (data_ptr, max(nbytes, 0), _ISA_DTYPES.get(t.dtype, str(t.dtype)), list(t.shape), list(t.stride()))


def _as_compiled_layout(t: Any, spec: TensorSpec, graph: str, index: int) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TrncError(f"trnc: graph '{graph}' input {index} is {type(t).__name__}, expected a tensor")
    if t.device.type != "cpu":
        raise TrncError(f"trnc: graph '{graph}' input {index} is on {t.device}; the simulator reads CPU memory")
    if t.dtype != spec.dtype or tuple(t.shape) != spec.shape:
        raise TrncError(
            f"trnc: graph '{graph}' input {index} is {t.dtype}{list(t.shape)}, "
            f"but the graph was compiled for {spec.dtype}{list(spec.shape)}"
        )
    if t.numel() > 1 and tuple(t.stride()) != spec.stride:
        fixed = torch.empty_strided(spec.shape, spec.stride, dtype=spec.dtype)
        fixed.copy_(t)
        return fixed
    return t


_INT32 = torch.iinfo(torch.int32)


def _check_int32_range(t: torch.Tensor, graph: str, index: int) -> None:
    """int64 tensors are int32 on the engines (docs/coverage.md, dtype policy): a
    value outside int32 would be saturated by the load, so it is an error here."""
    if t.numel() == 0:
        return
    lo, hi = torch.aminmax(t)
    if lo < _INT32.min or hi > _INT32.max:
        bad = int(lo) if lo < _INT32.min else int(hi)
        raise TrncError(
            f"trnc: graph '{graph}' input {index} (int64) holds {bad}, outside the int32 range: "
            "the engines compute int64 tensors as int32, so int64 values (and int64 wraparound "
            "arithmetic such as polynomial hashes) beyond it are not supported"
        )


def _integer_bounds(executable: Any, graph: ExportedGraph) -> dict[int, dict]:
    """The bounds the compiler's integer range check (passes/IntegerRangeCheck.cpp)
    put on integer inputs: {input: {bound, reason, op, where}}. The engines
    compute integers through fp32 ALUs, exact only up to 2**24; the graph is
    exact while every listed input stays within [-bound, bound]."""
    try:
        records = json.loads(executable.metadata_json).get("integer_inputs", [])
    except (AttributeError, ValueError):
        return {}
    nodes = {n.get("name"): n for n in graph.document.get("nodes", [])}
    bounds = {
        i: {"bound": spec["max_abs"], "reason": "the graph was compiled for this constant's magnitude"}
        for i, spec in enumerate(graph.document.get("inputs", [])) if "max_abs" in spec
    }  # lifted integer constants (backend.py): the range check assumed their magnitude
    for r in records:
        node = re.search(r"\(node '([^']*)'\)", r.get("where", ""))
        code = (nodes.get(node.group(1), {}).get("loc") or {}).get("code") if node else None
        bounds[int(r["input"])] = dict(r, code=code)
    return bounds


def _check_integer_bound(t: torch.Tensor, graph: str, index: int, limit: dict) -> None:
    """An integer input past its bound would make some integer intermediate
    (or the input itself) pass 2**24, where the fp32 ALUs round it
    (16777217 + 1 gives 16777216, 20001 * 1001 gives 20021000)."""
    if t.is_floating_point():  # the bound is on finite values (inf/NaN -> int is undefined)
        t = t[torch.isfinite(t)]
    if t.numel() == 0 or t.dtype == torch.bool:
        return
    largest = t.abs().max().item() if t.dtype != torch.uint8 else int(t.max())
    bound = limit["bound"]
    if largest <= bound:
        return
    largest = int(largest) if not t.is_floating_point() else largest
    where = f" at {limit['where']}" if limit.get("where") else ""
    code = f": {limit['code']}" if limit.get("code") else ""
    raise TrncError(
        f"trnc: graph '{graph}' input {index} ({t.dtype}) holds {largest}, which feeds "
        f"{limit.get('op') or 'integer arithmetic'}{where}{code}; the engines compute integers through "
        f"fp32 ALUs, exact only up to 2**24 (16777216) in magnitude, and this graph stays exact only for "
        f"inputs within [-{bound}, {bound}] ({limit.get('reason')}), so this call would be "
        "silently wrong"
    )


def _race_check() -> bool:
    """TRNC_RACE_CHECK=1: every run also checks that the program's semaphores
    order all conflicting accesses of different engines (a race is a
    RuntimeError naming both instructions). On for the whole test suite."""
    return os.environ.get("TRNC_RACE_CHECK", "0") not in ("", "0")


class CompiledGraph:
    """Runs one compiled artifact on the simulator; called by AOTAutograd."""

    def __init__(self, graph: ExportedGraph, executable: Any) -> None:
        # An instance attribute, not a class one: AOTAutograd wraps the backward
        # callable with functools.wraps, which copies only the instance __dict__.
        self._boxed_call = True
        self.name = graph.name
        self.inputs = graph.inputs
        self.outputs = graph.program_outputs
        self.output_plan = graph.output_plan
        self.float64_inputs = graph.float64_inputs
        self.float64_outputs = graph.float64_outputs
        # The trailing inputs that were trnc.seed nodes: drawn from torch's
        # default generator before every call (decomp_random.py).
        self.seed_inputs = graph.seed_inputs
        # Caller arguments that are opaque objects (DeviceMesh): not program
        # inputs; the output plan may return them.
        self.opaque_inputs = frozenset(graph.opaque_inputs)
        self.int64_inputs = [i for i, spec in enumerate(self.inputs) if spec.dtype == torch.int64]
        self.integer_bounds = {
            i: limit for i, limit in _integer_bounds(executable, graph).items() if i not in self.seed_inputs
        }  # seeds are random words for the Philox engine, not arithmetic operands
        # Runs the graph's collective instructions through torch.distributed.
        self.collectives = GraphCollectives(graph.name, list(graph.collectives)) if graph.collectives else None
        self.executable = executable
        self.calls = 0
        self.run_seconds = 0.0

    def __call__(self, args: list) -> list:
        expected = len(self.inputs) - len(self.seed_inputs) + len(self.opaque_inputs)
        if len(args) != expected:
            raise TrncError(f"trnc: graph '{self.name}' takes {expected} inputs, got {len(args)}")
        originals = list(args) + [draw_seed() for _ in self.seed_inputs]
        args.clear()
        program_args = [a for i, a in enumerate(originals) if i not in self.opaque_inputs]
        narrowed = [
            t.to(torch.float32) if i in self.float64_inputs and isinstance(t, torch.Tensor) and t.dtype == torch.float64 else t
            for i, t in enumerate(program_args)
        ]
        inputs = [_as_compiled_layout(t, s, self.name, i) for i, (t, s) in enumerate(zip(narrowed, self.inputs))]
        for i in self.int64_inputs:
            _check_int32_range(inputs[i], self.name, i)
        for i, limit in self.integer_bounds.items():
            _check_integer_bound(inputs[i], self.name, i, limit)
        outputs = [torch.empty_strided(s.shape, s.stride, dtype=s.dtype) for s in self.outputs]
        start = time.perf_counter()
        # A zero-element tensor has no storage (data_ptr() 0); the program still
        # names a (1-element) region for it, so hand it a small scratch buffer.
        scratch = torch.empty(64, dtype=torch.uint8)
        ins, outs = [
            [buffer_of(t) if t.numel() else buffer_of(t, scratch.data_ptr(), scratch.numel()) for t in ts]
            for ts in (inputs, outputs)
        ]
        sink = profiling.active()  # None unless profiling (trnc.profiling.capture)
        checks = {"race_check": True} if _race_check() else {}
        if self.collectives is not None:
            checks["collectives"] = self.collectives
        torch_profiling = profiling.torch_profiling()
        with profiling.torch_event(self.name):  # torch.profiler's view of the run
            if sink is None and not torch_profiling:
                self.executable.run(ins, outs, **checks)
            else:  # timed: a trnc capture or torch's profiler shows the simulated time
                profile = self.executable.run(ins, outs, profile=True, trace=bool(sink and sink.trace), **checks)
                profiling.record(self.name, self.calls, profile)
                if torch_profiling:
                    profiling.torch_simulated_event(self.name, profile.total_ns)
        self.run_seconds += time.perf_counter() - start
        self.calls += 1
        for j in self.float64_outputs:
            outputs[j] = outputs[j].to(torch.float64)
        result = []
        for source in self.output_plan:
            if source[0] == "program":
                result.append(outputs[source[1]])
            elif source[0] == "input":
                result.append(originals[source[1]])
            elif source[0] == "view":  # a view of an input or of another output
                _, kind, index, shape, stride, delta = source
                base = originals[index] if kind == "input" else outputs[index]
                result.append(base.as_strided(shape, stride, base.storage_offset() + delta))
            else:
                result.append(None)
        return result
