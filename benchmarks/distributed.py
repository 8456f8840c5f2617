#!/usr/bin/env python3
"""Scaling of the demo GPT training step over simulated NeuronCores.

``python3 benchmarks/distributed.py`` prints (and with ``--write`` puts into
the distributed section of benchmarks/RESULTS.md) the simulated step time
of the GPT of ``trnc.models`` (the README demo's model and batch) at 1, 2,
4 and 8 ranks:

- data parallel (weak scaling: every rank keeps the demo's batch): the
  gradients are all-reduced inside the compiled backward graph, DDP-style
  in buckets (``SyncBucket``: one all_reduce of a bucket's gradients
  flattened together, issued when the last of them is computed), so the
  simulator charges the ring all-reduce per bucket and the list scheduler
  overlaps it with the backward of the buckets after it. Rows for a bucket
  per parameter, 1 MiB buckets and one bucket (no overlap possible: the
  all-reduce waits for the last gradient); efficiency = T(1) / T(n).
- DDP graph split: ``torch.compile(DDP(model, bucket_cap_mb=...))`` at the
  largest rank count, the forward and backward graph counts Dynamo's DDP
  optimizer makes and their simulated compute (DDP's reducer all-reduces
  between the pieces, outside the simulator).
- tensor parallel (strong scaling: the same batch on every rank):
  Megatron-style ColwiseParallel/RowwiseParallel on every block's MLP
  through DTensor (the model's fused QKV projection splits q, k, v by the
  full width, so attention stays replicated); efficiency = T(1) / (n T(n)).

- logical cores (``--modes lnc``): the model's step (no collectives)
  compiled with ``options={"lnc": 1}`` and ``{"lnc": 2}``, one logical
  core of one or two physical cores of a trn2 chip (docs/distributed.md
  "LNC=2"); efficiency = T(lnc=1) / (2 T(lnc=2)), per physical core like
  strong scaling.

Efficiencies are against the 1-rank row of the same mode (the same program,
its collectives over a group of one: local copies); the first row is the
plain one-core step without collectives. Timing needs no real peers: one
process joins a ``fake`` process group of n ranks (torch.testing's FakeStore, whose collectives move no data), so the
numbers are simulated time only; numerics are covered by the 2-rank tests
(test/python/test_distributed.py). "exposed" is the part of the collectives'
simulated time during which no compute engine was busy.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import re

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc

import machine  # benchmarks/machine.py
import trnc
from trnc.models import gpt

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
BEGIN, END = "<!-- distributed:begin", "<!-- distributed:end -->"
def note(rows: list[tuple[str, int, dict, float]], splits: list[tuple[float, dict]]) -> str:
    """What the measured rows show, its figures taken from the rows themselves."""
    def row(mode: str, n: int):
        return next((d for m, k, d, _ in rows if m == mode and k == n), None)

    per_param, mib, one = (_bucket_mode(b)[0] for b in ("param", "1", "all"))
    top = max((k for _, k, _, _ in rows), default=1)
    parts = [
        "The data-parallel rows all-reduce the gradients inside the backward graph in DDP's buckets "
        "(SyncBucket): a bucket per parameter, 1 MiB buckets (DDP's bucket assignment), or one bucket of "
        "everything. Ring steps are latency-bound (one DMA fixed cost each, 2(n-1) per all-reduce) and "
        "the collectives run one after another on their queue."]
    p, m, o = row(per_param, top), row(mib, top), row(one, top)
    if p and m and o:
        share = lambda d: 100 * d["exposed_ns"] / d["total_ns"]  # noqa: E731
        parts.append(
            f"At {top} ranks the {p['collectives']} per-parameter all-reduces outlast the backward left "
            f"to hide them ({share(p):.1f}% of the step exposed); the {m['collectives']} buckets of 1 MiB, "
            f"each issued once its gradients are written, hide all but {m['exposed_ns'] / 1e3:.1f} us of "
            f"{m['collective_ns'] / 1e3:.1f} us ({share(m):.1f}%); one bucket cannot start before the last "
            f"gradient and is all exposed ({o['exposed_ns'] / 1e3:.1f} us).")
    p1, m1, o1 = row(per_param, 1), row(mib, 1), row(one, 1)
    if p1 and m1 and o1:
        parts.append(
            "Buckets cost a flattening copy in and out (the 1-rank rows: "
            f"{p1['total_ns'] / 1e6:.3f} ms per parameter, {m1['total_ns'] / 1e6:.3f} ms with 1 MiB buckets, "
            f"{o1['total_ns'] / 1e6:.3f} ms one bucket).")
    if splits:
        parts.append(
            "The DDP rows compile torch.compile(DDP(model)) itself: Dynamo's DDP optimizer splits the graph "
            "at the bucket boundaries, and DDP's reducer all-reduces between the pieces outside the "
            "simulator, so their time is the pieces' compute only.")
    parts.append("Tensor parallel splits only the MLPs, so its efficiency falls fast.")
    return " ".join(parts)


class SyncBucket(torch.autograd.Function):
    """DDP's gradient bucket inside the compiled backward graph: identity
    forward on the bucket's parameters; backward averages their gradients
    over the data-parallel group with one all_reduce of them flattened
    together, issued once the last of them is computed."""

    @staticmethod
    def forward(ctx, *params):
        return tuple(p.view_as(p) for p in params)

    @staticmethod
    def backward(ctx, *grads):
        flat = fc.all_reduce(torch.cat([g.reshape(-1) for g in grads]), "avg", dist.group.WORLD)
        return tuple(t.view_as(g) for t, g in zip(flat.split([g.numel() for g in grads]), grads))


def buckets(named: list, cap_mb: float) -> list[list[str]]:
    """DDP's bucketing (compute_bucket_assignment_by_size): parameters in
    reverse registration order (about the order the backward produces
    their gradients), a bucket closed once it holds cap_mb MiB or more;
    cap_mb 0 is a bucket per parameter."""
    out, size = [[]], 0
    for name, p in reversed(named):
        out[-1].append(name)
        size += p.numel() * p.element_size()
        if size >= cap_mb * 2**20:
            out.append([])
            size = 0
    return [b for b in out if b]


def _fake_world(n: int) -> None:
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=n)


def _profile(step, *args) -> dict:
    step(*args)  # compile outside the capture
    with trnc.profiling.capture() as cap:
        step(*args)
    return {"total_ns": cap.total_ns, "collective_ns": cap.collective_ns,
            "exposed_ns": cap.exposed_collective_ns,
            "collectives": sum(g.profile.to_dict()["collectives"] for g in cap.graphs)}


def synced(model: torch.nn.Module, bucket_mb: float | None):
    """model's forward with its gradients all-reduced in the backward in
    buckets of bucket_mb MiB (0: one per parameter; None: not at all)."""
    named = list(model.named_parameters())
    groups = [] if bucket_mb is None else buckets(named, bucket_mb)

    def call(*args):
        params = dict(named)
        for names in groups:
            params.update(zip(names, SyncBucket.apply(*(params[k] for k in names))))
        return torch.func.functional_call(model, params, args)

    call.buckets = len(groups)
    return call


def data_parallel(n: int, batch: int, bucket_mb: float | None = 0) -> dict:
    """The GPT step with its gradients all-reduced in buckets (synced)."""
    _fake_world(n)
    torch.manual_seed(0)
    config = gpt.GPTConfig()
    model = synced(gpt.GPT(config), bucket_mb)
    idx, tgt = gpt.batch(config, batch, torch.Generator().manual_seed(1))

    def step(idx, tgt):
        loss = model(idx, tgt)[1]
        loss.backward()
        return loss.detach()

    torch._dynamo.reset()
    return dict(_profile(torch.compile(step, backend="neuron"), idx, tgt), buckets=model.buckets)


def tensor_parallel(n: int, batch: int) -> dict:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    _fake_world(n)
    torch.manual_seed(0)
    config = gpt.GPTConfig()
    model = gpt.GPT(config)
    if n > 1:
        mesh = init_device_mesh("cpu", (n,))
        for block in model.h:  # the fused QKV projection stays replicated
            parallelize_module(block, mesh, {"mlp.c_fc": ColwiseParallel(), "mlp.c_proj": RowwiseParallel()})
    idx, tgt = gpt.batch(config, batch, torch.Generator().manual_seed(1))
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="neuron", dynamic=False)  # DTensor: compile the module

    def step(idx, tgt):
        loss = compiled(idx, tgt)[1]
        loss.backward()
        return loss.detach()

    return _profile(step, idx, tgt)


def logical_cores(batch: int, lnc: int) -> dict:
    """The plain GPT step (no collectives) compiled at logical-core degree lnc."""
    torch.manual_seed(0)
    config = gpt.GPTConfig()
    model = gpt.GPT(config)
    idx, tgt = gpt.batch(config, batch, torch.Generator().manual_seed(1))
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="neuron", dynamic=False, options={"lnc": lnc})

    def step(idx, tgt):
        loss = compiled(idx, tgt)[1]
        loss.backward()
        return loss.detach()

    return _profile(step, idx, tgt)


def ddp_split(n: int, batch: int, cap_mb: float) -> dict:
    """torch.compile(DDP(model, bucket_cap_mb=cap_mb)): Dynamo's DDP optimizer
    splits the graph at the bucket boundaries. DDP's reducer all-reduces
    each bucket eagerly between the compiled pieces (here a comm hook that
    moves nothing: the fake group has no data), so the simulated time is
    the pieces' compute only."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    def no_comm(state, bucket):
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer())
        return fut

    _fake_world(n)
    torch.manual_seed(0)
    config = gpt.GPTConfig()
    ddp = DDP(gpt.GPT(config), bucket_cap_mb=cap_mb)
    ddp.register_comm_hook(None, no_comm)
    idx, tgt = gpt.batch(config, batch, torch.Generator().manual_seed(1))
    torch._dynamo.reset()
    before = dict(trnc.neuron.stats.counts)
    compiled = torch.compile(ddp, backend="neuron")

    def step(idx, tgt):
        loss = compiled(idx, tgt)[1]
        loss.backward()
        return loss.detach()

    d = _profile(step, idx, tgt)
    return dict(d, **{k: trnc.neuron.stats.counts[k] - before.get(k, 0) for k in ("forward", "backward")})


def table(rows: list[tuple[str, int, dict, float]]) -> str:
    lines = ["| mode | ranks | simulated step | scaling efficiency | collectives per step | collective time | exposed communication (share of step) |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for mode, n, d, eff in rows:
        share = d["exposed_ns"] / d["total_ns"] if d["total_ns"] else 0.0
        effective = "-" if eff != eff else f"{eff * 100:.1f}%"
        lines.append(f"| {mode} | {n} | {d['total_ns'] / 1e6:.3f} ms | {effective} | {d['collectives']} | "
                     f"{d['collective_ns'] / 1e3:.1f} us | {d['exposed_ns'] / 1e3:.1f} us ({share * 100:.1f}%) |")
    return "\n".join(lines)


def split_table(n: int, rows: list[tuple[float, dict]]) -> str:
    lines = [f"| DDP bucket_cap_mb ({n} ranks) | forward graphs | backward graphs | simulated compute of the pieces |",
             "|---:|---:|---:|---:|"]
    lines += [f"| {mb:g} | {d['forward']} | {d['backward']} | {d['total_ns'] / 1e6:.3f} ms |" for mb, d in rows]
    return "\n".join(lines)


def _bucket_mode(spec: str) -> tuple[str, float]:
    if spec == "param":
        return "data parallel, a bucket per parameter", 0
    if spec == "all":
        return "data parallel, one bucket", float("inf")
    return f"data parallel, {spec} MiB buckets", float(spec)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1,2,4,8")
    ap.add_argument("--batch", type=int, default=2, help="per-rank batch (the demo's 2)")
    ap.add_argument("--modes", default="dp,tp,ddp,lnc",
                    help="dp (data parallel), tp (tensor parallel), ddp (DDP graph split), lnc (LNC=2)")
    ap.add_argument("--buckets", default="param,1,all",
                    help="data-parallel gradient buckets: 'param' (one per parameter), MiB, or 'all' (one)")
    ap.add_argument("--write", action="store_true", help="update the distributed section of RESULTS.md")
    args = ap.parse_args(argv)
    os.environ.setdefault("TRNC_DISABLE_CACHE", "1")  # every row compiles (the compile is not timed)
    os.environ.setdefault("TRNC_RACE_CHECK", "1")  # a time only for a program the race checker accepts
    ranks = [int(r) for r in args.ranks.split(",")]
    modes = args.modes.split(",")
    # The plain one-core step (no collectives at all), for reference.
    rows = [("one core, no collectives", 1, data_parallel(1, args.batch, bucket_mb=None), float("nan"))]
    runs = [(name, functools.partial(data_parallel, bucket_mb=mb), False)
            for name, mb in map(_bucket_mode, args.buckets.split(",")) if "dp" in modes]
    runs += [("tensor parallel", tensor_parallel, True)] if "tp" in modes else []
    for mode, fn, strong in runs:
        base = None  # the first row's work (rank-time for strong scaling)
        for n in ranks:
            d = fn(n, args.batch)
            work = d["total_ns"] * (n if strong else 1)
            base = work if base is None else base
            eff = base / work
            rows.append((mode, n, d, eff))
            print(f"{mode} {n}: {d['total_ns'] / 1e6:.3f} ms, collectives {d['collectives']}, "
                  f"{d['collective_ns'] / 1e3:.1f} us, exposed {d['exposed_ns'] / 1e3:.1f} us, eff {eff * 100:.1f}%",
                  flush=True)
    if "lnc" in modes:
        one, two = logical_cores(args.batch, 1), logical_cores(args.batch, 2)
        eff = one["total_ns"] / (2 * two["total_ns"])
        rows += [("logical core, lnc=1 (1 physical core)", 1, one, 1.0),
                 ("logical core, lnc=2 (2 physical cores)", 1, two, eff)]
        print(f"lnc=2: {two['total_ns'] / 1e6:.3f} ms vs {one['total_ns'] / 1e6:.3f} ms at lnc=1 "
              f"({two['total_ns'] / one['total_ns']:.3f}x), eff {eff * 100:.1f}%", flush=True)
    splits = [(mb, ddp_split(ranks[-1], args.batch, mb)) for mb in (1, 25)] if "ddp" in modes else []
    text = table(rows) + ("\n\n" + split_table(ranks[-1], splits) if splits else "")
    print(text)
    if args.write:
        commit = machine.commit()
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        section = (f"{BEGIN} (benchmarks/distributed.py --write writes this section) -->\n"
                   "## Many NeuronCores: the GPT step over simulated ranks (issue 16)\n\n"
                   f"`python3 benchmarks/distributed.py --write` on {when} at commit {commit}, target trn2: the demo "
                   f"GPT (d_model 256, 2 layers, seq 128), per-rank batch {args.batch}, forward + backward "
                   "(no optimizer step), float32. Ranks are physical cores of one trn2 chip (8 per chip), so "
                   "collectives use the intra-chip model (DMA fixed cost per ring step, the core's DMA "
                   "bandwidth; docs/distributed.md). One process per row in a `fake` process group: simulated "
                   "time only. Data parallel is weak scaling (efficiency T1/Tn), tensor parallel strong "
                   "scaling (T1/(n Tn)) of the blocks' MLPs (attention replicated); the LNC row is the one-core "
                   "step compiled with lnc=2 over two physical cores (efficiency T1/(2 T2)). "
                   + note(rows, splits) + "\n\n" + text + f"\n{END}")
        old = open(RESULTS).read()
        if BEGIN in old:
            new = re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda m: section, old, flags=re.S)
        else:
            new = old.rstrip("\n") + "\n\n" + section + "\n"
        with open(RESULTS, "w") as f:
            f.write(new)
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
