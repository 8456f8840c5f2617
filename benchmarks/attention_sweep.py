"""Simulated time of fused attention over sequence lengths (issue 11's online
softmax): ``scaled_dot_product_attention`` of one head, compiled with
``backend="neuron"``, forward alone or forward + backward, as a Markdown table
of simulated microseconds, instruction counts and HBM bytes per graph.

    python3 benchmarks/attention_sweep.py                       # T 512..8192, head 64/128, bf16
    python3 benchmarks/attention_sweep.py --seq 4096 --head 64 --backward --dtype float32

Past ``attention_ops.max_keys`` the rule decomposes (the [T, T] scores go
through HBM); the ``fused`` column says which path a row took.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

import trnc
from trnc import attention_ops


def measure(t: int, e: int, dtype: torch.dtype, causal: bool, backward: bool) -> list[tuple]:
    """(graph, simulated us, instructions, HBM bytes) of each graph of one run."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 1, t, e).to(dtype).requires_grad_(backward) for _ in range(3))
    fn = torch.compile(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal), backend="neuron"
    )

    def run() -> None:
        if backward:
            fn(q, k, v).sum().backward()
        else:
            with torch.no_grad():
                fn(q, k, v)

    run()  # compile
    with trnc.profiling.capture() as p:
        run()
    rows = []
    for g in p.graphs:
        d = g.profile.to_dict()
        rows.append((g.graph.split("_")[0], d["total_ns"] / 1e3, d["program_instructions"], d["hbm_bytes"]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192])
    ap.add_argument("--head", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--backward", action="store_true", help="forward + backward (default: forward only)")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    print("| T | head | causal | fused | graph | simulated us | instructions | HBM MB |")
    print("|---|---|---|---|---|---|---|---|")
    for t in args.seq:
        for e in args.head:
            x = torch.empty(1, 1, t, e, dtype=dtype)
            fused = attention_ops.eligible(x, x, x, e**-0.5, backward=args.backward)
            for causal in (True, False):
                for graph, us, n, hbm in measure(t, e, dtype, causal, args.backward):
                    print(f"| {t} | {e} | {causal} | {fused} | {graph} | {us:.1f} | {n} | {hbm / 1e6:.1f} |", flush=True)


if __name__ == "__main__":
    main()
