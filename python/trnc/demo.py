"""``python -m trnc.demo``: train a small MLP eagerly and through trnc, side by side.

A two-layer MLP (64 -> 128 -> 10) on seeded synthetic 10-class data, batch 32,
plain SGD for a few steps: once in eager PyTorch and once through
``torch.compile(model, backend="neuron", dynamic=False)`` from identical
initial weights. Prints per-step losses and their difference, compile time, per-step wall
time of the CPU-hosted simulator, and the simulated NeuronCore performance of
one training step (time, engine utilisation, MFU, the bound): estimates from
the timed simulator's model of the public hardware facts, not measurements.
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from . import profiling
from .backend import neuron


def _batches(steps: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(10, 64, generator=gen) * 2
    for _ in range(steps):
        y = torch.randint(0, 10, (32,), generator=gen)
        x = centers[y] + torch.randn(32, 64, generator=gen)
        yield x, y


def _train(model: torch.nn.Module, runner, steps: int, seed: int, dtype: torch.dtype, profile_step: int = -1):
    """Train; when profile_step >= 0, return that step's simulated profile too."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, times, captured = [], [], None
    for step, (x, y) in enumerate(_batches(steps, seed)):
        start = time.perf_counter()
        with profiling.capture() if step == profile_step else _nothing() as cap:
            loss = torch.nn.functional.cross_entropy(runner(x.to(dtype)).float(), y)
            opt.zero_grad()
            loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if cap is not None:
            captured = cap
    return losses, times, captured


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _print_simulated(cap: "profiling.Capture") -> None:
    total_us = cap.total_ns / 1e3
    print(f"simulated NeuronCore time per training step: {total_us:.2f} us "
          f"({len(cap.graphs)} graph runs: " + ", ".join(f"{g.graph} {g.total_ns / 1e3:.2f} us" for g in cap.graphs) + ")")
    util = cap.utilisation()
    engines = ", ".join(f"{name} {100 * u:.1f}%" for name, u in util.items() if name != "dma")
    print(f"engine utilisation: {engines}; Tensor Engine MFU {100 * cap.mfu():.3f}%")
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
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--target", default="trn2")
    args = parser.parse_args(argv)
    dtype = getattr(torch, args.dtype)

    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dtype)
    eager_model, trnc_model = copy.deepcopy(model), copy.deepcopy(model)

    eager_losses, eager_times, _ = _train(eager_model, eager_model, args.steps, args.seed, dtype)
    neuron.stats.reset()
    compiled = torch.compile(trnc_model, backend=neuron, dynamic=False, options={"target": args.target})
    # Profile a steady-state step (step 0 also compiles).
    trnc_losses, trnc_times, cap = _train(trnc_model, compiled, args.steps, args.seed, dtype,
                                          profile_step=min(1, args.steps - 1))

    print(f"MLP 64-128-10, batch 32, SGD lr 0.1, {args.dtype}, target {args.target} (simulated)")
    print(f"{'step':>4}  {'eager loss':>12}  {'neuron loss':>12}  {'abs diff':>10}")
    for step, (e, n) in enumerate(zip(eager_losses, trnc_losses)):
        print(f"{step:>4}  {e:>12.6f}  {n:>12.6f}  {abs(e - n):>10.2e}")
    print()
    graphs = ", ".join(neuron.stats.graphs)
    print(f"compile time: {neuron.stats.compile_seconds:.2f} s ({graphs})")
    # Step 0 includes compiling the forward and backward graphs.
    steady = trnc_times[1:] or trnc_times
    print(f"wall time per step: eager {1e3 * sum(eager_times) / len(eager_times):.2f} ms, "
          f"neuron (simulator on CPU) {1e3 * sum(steady) / len(steady):.2f} ms after step 0")
    if cap is not None and cap.graphs:
        _print_simulated(cap)


if __name__ == "__main__":
    main()
