"""Simulated time of fused attention over sequence lengths (issue 11's online
softmax): ``scaled_dot_product_attention``, compiled with
``backend="neuron"``, forward alone or forward + backward, as a Markdown table
of simulated microseconds, instruction counts and HBM bytes per graph.

    python3 benchmarks/attention_sweep.py                       # T 512..8192, head 64/128, bf16
    python3 benchmarks/attention_sweep.py --seq 4096 --head 64 --backward --dtype float32
    python3 benchmarks/attention_sweep.py --seq 1024 --head 64 --batch 4 --heads 16 --packed --causal-only --backward

By default one head of one sequence; ``--batch``/``--heads`` make it a model's
attention, and ``--packed`` takes q, k, v as head views of one [B, T, 3C]
activation (a GPT block's ``qkv`` projection, as benchmarks/workloads.py's
GPT builds it) rather than three contiguous tensors.

Past ``attention_ops.max_keys`` the rule decomposes (the [T, T] scores go
through HBM); the ``fused`` column says which path a row took.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

import trnc
from trnc import attention_ops


def measure(
    t: int, e: int, dtype: torch.dtype, causal: bool, backward: bool, batch: int = 1, heads: int = 1, packed: bool = False
) -> list[tuple]:
    """(graph, simulated us, instructions, HBM bytes) of each graph of one run."""
    torch.manual_seed(0)
    if packed:
        c = heads * e
        qkv = torch.randn(batch, t, 3 * c).to(dtype).requires_grad_(backward)

        def attend(qkv):
            q, k, v = (x.view(batch, t, heads, e).transpose(1, 2) for x in qkv.split(c, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            return y.transpose(1, 2).reshape(batch, t, c)

        fn, args = torch.compile(attend, backend="neuron"), (qkv,)
    else:
        args = tuple(torch.randn(batch, heads, t, e).to(dtype).requires_grad_(backward) for _ in range(3))
        fn = torch.compile(
            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal), backend="neuron"
        )

    def run() -> None:
        if backward:
            fn(*args).float().sum().backward()
        else:
            with torch.no_grad():
                fn(*args)

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
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=1)
    ap.add_argument("--packed", action="store_true", help="q, k, v as head views of one [B, T, 3C] activation")
    ap.add_argument("--causal-only", action="store_true", help="skip the non-causal rows")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    print("| B x H | T | head | causal | fused | graph | simulated us | instructions | HBM MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in args.seq:
        for e in args.head:
            x = torch.empty(args.batch, args.heads, t, e, dtype=dtype)
            fused = attention_ops.eligible(x, x, x, e**-0.5, backward=args.backward)
            for causal in (True,) if args.causal_only else (True, False):
                runs = measure(t, e, dtype, causal, args.backward, args.batch, args.heads, args.packed)
                for graph, us, n, hbm in runs:
                    print(
                        f"| {args.batch} x {args.heads} | {t} | {e} | {causal} | {fused} | {graph} | {us:.1f} | {n} "
                        f"| {hbm / 1e6:.1f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
