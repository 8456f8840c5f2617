"""``trnc inspect ARTIFACT``: what a compiled artifact holds.

Header (format version, target, compiler identity, graph name), inputs and
outputs (shape, strides, dtype), HBM regions, per-engine instruction counts
by opcode, the estimated device time (one timed simulation on zero-filled
inputs, when the extension has the timed simulator and the program fits in
ESTIMATE_MAX_BYTES and ESTIMATE_MAX_ELEMENTS), and with ``--disassemble`` one line per instruction. The
artifact is fully verified first (``_C.inspect_artifact``); a corrupt or
truncated file is an error (exit 1), never a crash.
"""

from __future__ import annotations

import argparse
import ctypes
import json
from typing import Any, Optional

from .._native import native
from ..cache import read_artifact_file
from ..errors import TrncError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect",
        help="show an artifact's header, inputs/outputs, instruction counts and disassembly",
        description="Describe a compiled trnc artifact (a .trnc file from `trnc compile -o` or the cache).",
    )
    p.add_argument("artifact", metavar="ARTIFACT", help="a .trnc artifact file")
    p.add_argument("--disassemble", "-d", action="store_true", help="also print every instruction")
    p.add_argument("--json", action="store_true", help="print the description as JSON")
    p.add_argument("--no-estimate", action="store_true",
                   help="skip the estimated time (it runs the timed simulator once on zero inputs)")
    p.set_defaults(func=run)


# The estimate runs the program, which needs every input, output and scratch
# region in host memory; above this it is skipped (memory stays bounded by the
# file, not by what a possibly hostile artifact declares). `trnc profile` runs it.
ESTIMATE_MAX_BYTES = 256 << 20
# ... and when its instructions would touch more elements than this (a verified
# stride-0 pattern may repeat one tile 2**48 times): time stays bounded too.
ESTIMATE_MAX_ELEMENTS = 1 << 32


def describe(data: bytes, disassemble: bool, estimate: bool = True) -> dict[str, Any]:
    """The artifact's description as a JSON-ready dict; raises TrncError if invalid."""
    C = native()
    try:
        info = dict(C.inspect_artifact(data))
        if disassemble:
            info["disassembly"] = C.disassemble(data)
    except (ValueError, RuntimeError, MemoryError) as exc:
        raise TrncError(str(exc) or type(exc).__name__) from None
    try:
        metadata = json.loads(info.pop("metadata_json") or "{}")
    except (ValueError, RecursionError):
        metadata = {"invalid_metadata_json": True}
    info["metadata"] = metadata if isinstance(metadata, dict) else {"value": metadata}
    info["estimated_time_ns"] = None
    info["estimate_skipped"] = None
    if estimate:
        needed = info["scratch_arena_bytes"] + sum(
            int(r["bytes"]) for r in info["regions"] if r["kind"] in ("input", "output")
        )
        work = sum(float(e.get("elements", 0)) for e in info["engines"])
        if needed > ESTIMATE_MAX_BYTES:
            info["estimate_skipped"] = (
                f"its regions span {needed} bytes, more than the {ESTIMATE_MAX_BYTES >> 20} MiB "
                "inspect allocates; run `trnc profile` for a timed run"
            )
        elif work > ESTIMATE_MAX_ELEMENTS:
            info["estimate_skipped"] = (
                f"its instructions touch {work:.3g} elements, more than the {ESTIMATE_MAX_ELEMENTS:.3g} "
                "inspect simulates; run `trnc profile` for a timed run"
            )
        else:
            info["estimated_time_ns"] = _estimated_time_ns(data, info["regions"])
    return info


def _estimated_time_ns(data: bytes, regions: list[dict[str, Any]]) -> Optional[float]:
    """Simulated time of one run on zero-filled inputs (timing does not depend on
    the values), or None when the extension has no timed simulator or the run fails."""
    buffers = []

    def views(kind: str) -> list[tuple]:
        mine = sorted((r for r in regions if r["kind"] == kind), key=lambda r: r["index"])
        out = []
        for r in mine:
            size = max(int(r["bytes"]), 1)
            buffers.append(ctypes.create_string_buffer(size))
            out.append((ctypes.addressof(buffers[-1]), size, r["dtype"], list(r["shape"]), list(r["strides"])))
        return out

    try:
        profile = native().Executable(data).run(views("input"), views("output"), profile=True)
    except (TypeError, ValueError, RuntimeError, MemoryError):
        return None  # no timed simulator in this build, or the run failed
    total = getattr(profile, "total_ns", None)
    return float(total) if total is not None else None


def _tensor(r: dict[str, Any]) -> str:
    shape = ",".join(str(d) for d in r["shape"])
    strides = ",".join(str(d) for d in r["strides"])
    return f"{r['dtype']}[{shape}] strides [{strides}]"


def format_text(path: str, info: dict[str, Any]) -> str:
    lines = [
        f"artifact: {path} ({info['bytes']} bytes)",
        f"format version: {info['format_version']} (isa {info['isa_version']})",
        f"target: {info['target']}" + (f" (LNC={info['lnc']}: {info['lnc']} physical cores)"
                                         if info.get("lnc", 1) > 1 else ""),
        f"compiler: {info['compiler']}",
        f"graph: {info['name']}",
    ]
    regions = info["regions"]
    for kind in ("input", "output"):
        mine = sorted((r for r in regions if r["kind"] == kind), key=lambda r: r["index"])
        lines.append(f"{kind}s: {len(mine)}")
        lines.extend(f"  {kind} {r['index']}: {_tensor(r)}" for r in mine)
    kinds = {k: [r for r in regions if r["kind"] == k] for k in ("input", "output", "scratch", "constant")}
    scratch = sum(r["bytes"] for r in kinds["scratch"])
    lines.append(
        f"regions: {len(regions)} ("
        + ", ".join(f"{len(v)} {k}" for k, v in kinds.items())
        + f"; {sum(r['bytes'] for r in regions) - scratch + info['scratch_arena_bytes']} HBM bytes)"
    )
    if kinds["scratch"]:
        lines.append(
            f"scratch arena: {info['scratch_arena_bytes']} bytes for {scratch} bytes of scratch "
            "regions (packed by liveness)"
        )
    total = sum(e["instructions"] for e in info["engines"])
    lines.append(f"instructions: {total}")
    for e in info["engines"]:
        ops = ", ".join(f"{name} {count}" for name, count in e["opcodes"].items())
        lines.append(f"  {e['engine']}: {e['instructions']}" + (f" ({ops})" if ops else ""))
    ns = info["estimated_time_ns"]
    if ns is not None:
        lines.append(f"estimated time: {ns / 1000:.3f} us (timed simulator, one run)")
    elif info.get("estimate_skipped"):
        lines.append(f"estimated time: skipped ({info['estimate_skipped']})")
    else:
        lines.append("estimated time: not available (no timed simulator in this build, or --no-estimate)")
    if "disassembly" in info:
        lines += ["", info["disassembly"].rstrip("\n")]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    data = read_artifact_file(args.artifact)
    try:
        info = describe(data, args.disassemble, not args.no_estimate)
    except TrncError as exc:
        raise TrncError(f"{args.artifact}: {exc}") from None
    print(json.dumps(info, indent=2) if args.json else format_text(args.artifact, info))
    return 0
