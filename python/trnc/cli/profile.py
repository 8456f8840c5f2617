"""``trnc profile ARTIFACT``: run a compiled artifact once on the timed simulator.

Loads (and verifies) an artifact written by ``trnc compile-graph -o`` (or
``trnc compile``), binds generated inputs shaped by the artifact's own input
regions, prints the profile summary and optionally writes a Chrome/Perfetto
trace. Times are simulated estimates (docs/profiling.md), not measurements.
"""

from __future__ import annotations

import argparse
import os

from .._native import native
from ..errors import TrncError

_TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "i32": "int32", "u8": "uint8"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="run an artifact on the timed simulator; print its profile, write a trace",
        description="Run one compiled artifact with generated inputs and print its simulated profile.",
    )
    p.add_argument("artifact", help="an artifact file (trnc compile-graph -o FILE)")
    p.add_argument("--trace", metavar="TRACE.json", default=None,
                   help="write a Chrome/Perfetto trace (open in ui.perfetto.dev)")
    p.add_argument("--inputs", choices=("random", "zeros"), default="random",
                   help="how to fill the inputs (default: random, seeded)")
    p.add_argument("--json", action="store_true", help="print the profile numbers as JSON instead")
    p.add_argument("--plot", metavar="OUT.png", default=None,
                   help="draw the engine and DMA-queue timeline (needs matplotlib)")
    p.set_defaults(func=run)


def _tensor(region: dict, fill: str, gen):
    import torch

    dtype = getattr(torch, _TORCH_DTYPES.get(region["dtype"], ""), None)
    if dtype is None:
        raise TrncError(f"input {region['index']} has dtype {region['dtype']}, which trnc profile cannot generate")
    t = torch.empty_strided(region["shape"], region["strides"], dtype=dtype)
    if fill == "zeros":
        t.zero_()
    elif dtype.is_floating_point:
        t.copy_(torch.randn(t.shape, generator=gen).to(dtype))
    else:
        t.copy_(torch.randint(0, 8, t.shape, generator=gen).to(dtype))
    return t


def _bind(regions: list, kind: str, fill: str, gen) -> tuple[list, list]:
    """Tensors for every region of `kind`, and pointers by graph position (0 where unbound)."""
    mine = [r for r in regions if r["kind"] == kind]
    count = max((r["index"] for r in mine), default=-1) + 1
    pointers = [0] * count
    tensors = []
    for r in mine:
        t = _tensor(r, fill, gen)
        tensors.append(t)
        pointers[r["index"]] = t.data_ptr()
    return tensors, pointers


def run(args: argparse.Namespace) -> int:
    import json

    import torch

    if os.path.isdir(args.artifact):
        raise TrncError(f"{args.artifact} is a directory; pass one artifact file")
    try:
        with open(args.artifact, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise TrncError(f"cannot read {args.artifact}: {exc.strerror}") from exc
    try:
        info = native().inspect_artifact(data)
        executable = native().Executable(data)
    except ValueError as exc:
        raise TrncError(f"{args.artifact}: {exc}") from exc

    gen = torch.Generator().manual_seed(0)
    inputs, in_ptrs = _bind(info["regions"], "input", args.inputs, gen)
    outputs, out_ptrs = _bind(info["regions"], "output", "zeros", gen)
    try:
        profile = executable.run(in_ptrs, out_ptrs, profile=True, trace=bool(args.trace or args.plot))
    except RuntimeError as exc:
        raise TrncError(str(exc)) from exc
    if args.json:
        print(json.dumps(profile.to_dict(), indent=2))
    else:
        print(profile.summary(), end="")
    if args.trace:
        with open(args.trace, "w") as f:
            f.write(profile.trace_json())
        if not args.json:
            print(f"trace written to {args.trace} (open in ui.perfetto.dev or chrome://tracing)")
    if args.plot:
        from ..plot import timeline

        timeline(profile, args.plot)
        if not args.json:
            print(f"timeline drawn to {args.plot}")
    return 0
