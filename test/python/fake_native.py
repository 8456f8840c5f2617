"""A pure-Python stand-in for ``trnc._C``, for testing the Python glue alone.

Used only when the real extension is not importable and
TRNC_TEST_FAKE_NATIVE=1 is set (see conftest.py). ``compile`` checks the
graph against the first compiler slice and returns the graph JSON itself as
the "artifact"; ``Executable.run`` interprets it with eager ATen, reading and
writing the caller's buffers through raw pointers exactly as the simulator
does. This exercises export, the boxed calling convention, output allocation
and error reporting end to end; it says nothing about the C++ compiler.
"""

from __future__ import annotations

import collections
import ctypes
import json

import torch

SUPPORTED = {
    "aten.mm.default", "aten.addmm.default", "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
    "aten.relu.default", "aten.threshold_backward.default", "aten.sum.dim_IntList", "aten.sum.default",
    "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.t.default",
    "aten.transpose.int", "aten.permute.default", "aten.expand.default", "aten.clone.default",
    "aten._to_copy.default", "aten.detach.default", "aten.full.default",
}


def compiler_identity() -> str:
    return "fake-native 0"


def known_targets() -> list:
    return ["trn2", "trn1", "trn3"]


def target_max_lnc(target: str) -> int:
    return 1 if target == "trn1" else 2


def compile(graph_json: str, options_json: str) -> dict:
    graph = json.loads(graph_json)
    opts = json.loads(options_json)
    assert set(opts) <= {"target", "dump_dir"}, opts
    bad = collections.OrderedDict()
    for node in graph["nodes"]:
        if node["target"] not in SUPPORTED:
            loc = dict(node["loc"] or {}, node=node["name"])
            bad.setdefault(node["target"], []).append(loc)
    if bad:
        details = {"unsupported": [{"target": t, "count": len(l), "locations": l} for t, l in bad.items()]}
        return {"ok": False, "artifact": None, "error_kind": "unsupported_operator",
                "message": "unsupported: " + ", ".join(bad), "details": json.dumps(details)}
    return {"ok": True, "artifact": graph_json.encode(), "error_kind": "", "message": "", "details": "{}"}


def _view(buffer: tuple, spec: dict) -> torch.Tensor:
    ptr = buffer[0]  # (data_ptr, nbytes, dtype, shape, strides), as _C.Executable.run takes
    dtype = getattr(torch, spec["dtype"])
    shape, stride = spec["shape"], spec["stride"]
    if any(s == 0 for s in shape):
        return torch.empty(shape, dtype=dtype)
    span = sum((s - 1) * st for s, st in zip(shape, stride)) + 1
    nbytes = span * torch.empty((), dtype=dtype).element_size()
    buf = (ctypes.c_char * nbytes).from_address(ptr)
    return torch.frombuffer(buf, dtype=dtype, count=span).as_strided(shape, stride)


def _decode(value, env):
    if isinstance(value, list):
        return [_decode(v, env) for v in value]
    if isinstance(value, dict):
        if "node" in value:
            v = env[value["node"]]
            return v[value["index"]] if "index" in value else v
        if "float" in value:
            return float(value["float"])
        if "dtype" in value:
            return getattr(torch, value["dtype"])
        if "device" in value:
            return torch.device(value["device"])
        if "enum" in value:
            return eval(value["enum"], {"torch": torch})
        if "str" in value:
            return value["str"]
    return value


def _op(target: str):
    _, name, overload = target.split(".")
    return getattr(getattr(torch.ops.aten, name), overload)


class Executable:
    def __init__(self, artifact: bytes) -> None:
        try:
            self.graph = json.loads(bytes(artifact).decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"fake artifact is corrupt: {exc}") from None
        self.target, self.name = "trn2", self.graph["name"]
        self.num_inputs, self.num_outputs = len(self.graph["inputs"]), len(self.graph["outputs"])
        self.metadata_json = "{}"

    def run(self, inputs: list, outputs: list) -> None:
        env = {spec["name"]: _view(p, spec) for p, spec in zip(inputs, self.graph["inputs"])}
        for node in self.graph["nodes"]:
            env[node["name"]] = _op(node["target"])(*_decode(node["args"], env), **{k: _decode(v, env) for k, v in node["kwargs"].items()})
        for p, spec in zip(outputs, self.graph["outputs"]):
            dst = _view(p, spec)
            src = _decode({k: spec[k] for k in ("node", "index") if k in spec}, env)
            # A stride-0 (broadcast) output overlaps itself: write one copy of each value.
            for dim, stride in enumerate(spec["stride"]):
                if stride == 0:
                    dst, src = dst.narrow(dim, 0, 1), src.narrow(dim, 0, 1)
            dst.copy_(src)
