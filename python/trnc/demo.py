"""``python -m trnc.demo``: train a small MLP eagerly and through trnc, side by side.

A two-layer MLP (64 -> 128 -> 10) on seeded synthetic 10-class data, batch 32,
plain SGD for a few steps: once in eager PyTorch and once through
``torch.compile(model, backend="neuron", dynamic=False)`` from identical
initial weights. Prints per-step losses and their difference, then compile
time and per-step wall time (of the CPU-hosted simulator, not of Trainium).
"""

from __future__ import annotations

import argparse
import copy
import time

import torch

from .backend import neuron


def _batches(steps: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(10, 64, generator=gen) * 2
    for _ in range(steps):
        y = torch.randint(0, 10, (32,), generator=gen)
        x = centers[y] + torch.randn(32, 64, generator=gen)
        yield x, y


def _train(model: torch.nn.Module, runner, steps: int, seed: int, dtype: torch.dtype):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses, times = [], []
    for x, y in _batches(steps, seed):
        start = time.perf_counter()
        loss = torch.nn.functional.cross_entropy(runner(x.to(dtype)).float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    return losses, times


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

    eager_losses, eager_times = _train(eager_model, eager_model, args.steps, args.seed, dtype)
    neuron.stats.reset()
    compiled = torch.compile(trnc_model, backend=neuron, dynamic=False, options={"target": args.target})
    trnc_losses, trnc_times = _train(trnc_model, compiled, args.steps, args.seed, dtype)

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
    # Simulated device time (timed simulator, a later issue) goes here:
    print("simulated device time per step: not available yet (functional simulator only)")


if __name__ == "__main__":
    main()
