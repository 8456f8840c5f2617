"""``trnc targets``: list the NeuronCore targets the compiler knows (default first)."""

from __future__ import annotations

import argparse

from .._native import native

EPILOG = """Each name is a value for --target (trnc compile, compile-graph) and for
torch.compile(..., options={"target": NAME}). --verbose adds each target's
per-core roofline ceilings: Tensor Engine peak FLOP/s and HBM bandwidth."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "targets",
        help="list the NeuronCore targets the compiler knows (default first)",
        description="List the NeuronCore targets the compiler knows, the default first.",
        epilog=EPILOG,
    )
    p.add_argument("-v", "--verbose", action="store_true", help="also print each target's per-core peaks")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for name in native().known_targets():
        if args.verbose:
            c = native().target_ceilings(name)
            print(f"{name}: {c['peak_flops_per_second'] / 1e12:.1f} TFLOP/s Tensor Engine peak, "
                  f"{c['peak_hbm_bytes_per_second'] / 1e9:.1f} GB/s HBM per core")
        else:
            print(name)
    return 0
