"""``python -m trnc.demo``: train a small GPT eagerly and through trnc, side by side.

The nanoGPT-style decoder of trnc.models.gpt (d_model 256, 2 layers, 4 heads,
vocab 512, sequence 128, batch 2) learns a seeded synthetic next-token task
with AdamW, gradient clipping and a StepLR schedule (trnc.models.loop): once
in eager PyTorch and once through ``torch.compile(model, backend="neuron",
dynamic=False)`` from identical initial weights. Prints per-step losses and
their difference, compile time, artifact-cache hits, per-step wall time of the
CPU-hosted simulator, and the simulated NeuronCore performance of one training
step (time, engine utilisation, MFU, the bound): estimates from the timed
simulator's model of the public hardware facts, not measurements.
``--model mlp`` trains the earlier two-layer MLP instead.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from . import cache, profiling
from .backend import neuron
from .models import gpt
from .models.loop import train


@dataclass
class _Task:
    title: str
    model: torch.nn.Module
    batch: Callable[[torch.Generator], tuple]
    loss: Callable[[Callable, tuple], torch.Tensor]
    lr: float


def _gpt_task(batch_size: int) -> _Task:
    config = gpt.GPTConfig()
    torch.manual_seed(0)
    model = gpt.GPT(config)
    params = sum(p.numel() for p in model.parameters())
    title = (f"GPT (nanoGPT-style): d_model {config.n_embd}, {config.n_layer} layers, {config.n_head} heads, "
             f"vocab {config.vocab_size}, seq {config.block_size}, batch {batch_size}, {params / 1e6:.2f}M params")
    return _Task(title, model, lambda g: gpt.batch(config, batch_size, g), lambda run, b: run(*b)[1], 1e-3)


def _mlp_task(batch_size: int) -> _Task:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    centers = torch.randn(10, 64, generator=torch.Generator().manual_seed(1)) * 2

    def batch(g):
        y = torch.randint(0, 10, (batch_size,), generator=g)
        return centers[y] + torch.randn(batch_size, 64, generator=g), y

    return _Task(f"MLP 64-128-10, batch {batch_size}", model, batch,
                 lambda run, b: F.cross_entropy(run(b[0]).float(), b[1]), 1e-2)


def _batches(task: _Task, seed: int):
    gen = torch.Generator().manual_seed(seed)
    while True:
        yield task.batch(gen)


def _print_simulated(cap: "profiling.Capture") -> None:
    total_us = cap.total_ns / 1e3
    print(f"simulated NeuronCore time per training step: {total_us:.2f} us "
          f"({len(cap.graphs)} graph runs: " + ", ".join(f"{g.graph} {g.total_ns / 1e3:.2f} us" for g in cap.graphs) + ")")
    util = cap.utilisation()
    engines = ", ".join(f"{name} {100 * u:.1f}%" for name, u in util.items() if name != "dma")
    print(f"engine utilisation: {engines}; Tensor Engine MFU {100 * cap.mfu():.3f}% ({cap.mfu_dtypes()} peak)")
    print(f"HBM traffic per step: {cap.hbm_bytes / 1e6:.1f} MB; the minimum the step must touch (each graph's "
          f"inputs and outputs once: weights, gradients, saved activations) {cap.min_hbm_bytes / 1e6:.1f} MB "
          f"({cap.hbm_bytes / max(cap.min_hbm_bytes, 1):.1f}x)")
    bounds = []
    for g in cap.graphs:
        for line in g.summary().splitlines():
            if line.strip().lower().startswith("verdict:"):
                bounds.append(f"{g.graph} {line.split(':')[1].strip()}")
    if bounds:
        print("bound (AWS performance guide rule: an engine >= 90% busy = compute-bound, "
              ">= 60% of HBM bandwidth = memory-bound, else latency-bound): " + ", ".join(bounds))
    print("(simulated estimates from public hardware facts; trace: trnc.profiling.capture(trace=True).write_trace(path))")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["gpt", "mlp"], default="gpt")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=None, help="default: 2 (gpt), 32 (mlp)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="bfloat16: the step runs under torch.autocast('cpu', bfloat16)")
    parser.add_argument("--target", default="trn2")
    parser.add_argument("--plot", metavar="OUT.png", default=None,
                        help="draw the profiled step's engine and DMA-queue timeline (needs matplotlib)")
    args = parser.parse_args(argv)
    autocast = args.dtype == "bfloat16"
    task = (_gpt_task if args.model == "gpt" else _mlp_task)(args.batch or (2 if args.model == "gpt" else 32))
    loop = dict(steps=args.steps, lr=task.lr, clip=1.0, schedule=True, autocast=autocast)

    eager = train(copy.deepcopy(task.model), task.loss, _batches(task, args.seed), compiled=False, **loop)
    neuron.stats.reset()
    cache.reset_stats()
    profile_step = min(1, args.steps - 1)  # a steady-state step (step 0 also compiles)
    captured = {}

    @contextlib.contextmanager
    def around_step(step):
        if step != profile_step:
            yield
            return
        with profiling.capture(trace=bool(args.plot)) as cap:
            captured["cap"] = cap
            yield

    ours = train(copy.deepcopy(task.model), task.loss, _batches(task, args.seed), compiled=True,
                 options={"target": args.target}, around_step=around_step, **loop)

    print(f"{task.title}; AdamW + clip_grad_norm_ + StepLR, {args.dtype}, target {args.target} (simulated)")
    print(f"{'step':>4}  {'eager loss':>12}  {'neuron loss':>12}  {'abs diff':>10}")
    for step, (e, n) in enumerate(zip(eager.losses, ours.losses)):
        print(f"{step:>4}  {e:>12.6f}  {n:>12.6f}  {abs(e - n):>10.2e}")
    print()
    graphs = ", ".join(neuron.stats.graphs)
    print(f"compile time: {neuron.stats.compile_seconds:.2f} s ({graphs})")
    hits = cache.stats({"target": args.target})
    print(f"artifact cache: {hits['hits']} hits, {hits['misses']} misses this run "
          f"({hits['cache_dir'] if hits['enabled'] else 'disabled'}; a second run compiles nothing)")
    steady = ours.step_seconds[1:] or ours.step_seconds
    eager_steady = eager.step_seconds[1:] or eager.step_seconds
    print(f"wall time per step: eager {1e3 * sum(eager_steady) / len(eager_steady):.2f} ms, "
          f"neuron (simulator on CPU) {1e3 * sum(steady) / len(steady):.2f} ms after step 0")
    cap = captured.get("cap")
    if cap is not None and cap.graphs:
        _print_simulated(cap)
        if args.plot:
            print(f"timeline of the profiled step drawn to {cap.plot(args.plot)}")


if __name__ == "__main__":
    main()
