"""``trnc profile ARTIFACT``: run a compiled artifact once on the timed simulator.

Loads (and verifies) an artifact written by ``trnc compile-graph -o`` (or
``trnc compile``), binds generated inputs shaped by the artifact's own input
regions, prints the profile summary and optionally writes a Chrome/Perfetto
trace. Times are simulated estimates (docs/profiling.md), not measurements.
"""

from __future__ import annotations

import argparse

from .._native import native
from ..cache import read_artifact_file
from ..errors import TrncError

_TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "i32": "int32", "i64": "int64",
                 "u8": "uint8", "bool": "bool"}


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
    """Tensors for every region of `kind`, and their buffer descriptors by graph position."""
    from ..compiled_graph import buffer_of

    mine = sorted((r for r in regions if r["kind"] == kind), key=lambda r: r["index"])
    tensors = [_tensor(r, fill, gen) for r in mine]
    views = []
    for r, t in zip(mine, tensors):
        if t.numel() == 0:  # no storage; the program names a one-element region
            tensors.append(torch_empty_bytes(max(int(r["bytes"]), 1)))
            views.append(buffer_of(t, tensors[-1].data_ptr(), tensors[-1].numel()))
        else:
            views.append(buffer_of(t))
    return tensors, views


def torch_empty_bytes(n: int):
    import torch

    return torch.zeros(n, dtype=torch.uint8)


def run(args: argparse.Namespace) -> int:
    import json

    import torch

    data = read_artifact_file(args.artifact)
    try:
        info = native().inspect_artifact(data)
        executable = native().Executable(data)
    except (ValueError, RuntimeError, MemoryError) as exc:
        raise TrncError(f"{args.artifact}: {exc}") from exc

    gen = torch.Generator().manual_seed(0)
    try:
        inputs, in_views = _bind(info["regions"], "input", args.inputs, gen)
        outputs, out_views = _bind(info["regions"], "output", "zeros", gen)
        profile = executable.run(in_views, out_views, profile=True, trace=bool(args.trace or args.plot))
    except MemoryError as exc:
        raise TrncError(f"{args.artifact}: not enough memory for the buffers the artifact declares") from exc
    except (ValueError, RuntimeError, TypeError) as exc:
        # A bad artifact (a binding that does not fit, a failed simulation) or a
        # buffer torch cannot allocate: the message says which.
        raise TrncError(f"{args.artifact}: {exc}") from exc
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
