"""The graphs the benchmark harness measures: bf16 matmuls, the MLP step and the GPT step.

Each workload builds a fresh callable (a function or model), its inputs, and
says whether a step includes ``backward()``. The same callable is handed to
eager PyTorch, ``backend="neuron"`` and ``backend="inductor"``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional

import torch

# (M, K, N) of [M, K] @ [K, N]; the last is the NKI matmul tutorial's shape
# ([4096, 8192] @ [8192, 8192], HARDWARE.md "Reference results").
MATMUL_SHAPES = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 8192, 8192)]


@dataclass
class Workload:
    name: str
    make: Callable[[], Callable]  # a fresh callable (model or function)
    inputs: Callable[[], list]  # fresh inputs
    train: bool  # step = forward + backward of the output's sum
    flops: float  # useful FLOPs of one step (2*M*K*N per matmul)
    repeats: int  # timed repetitions (medians)
    loss: Optional[Callable] = None  # the scalar to differentiate (default: the output's sum)
    inductor: bool = True  # also compile with Inductor (compile-time table)

    def step(self, fn: Callable, args: list) -> float:
        """One step; returns the seconds spent in backward() (0 without training)."""
        out = fn(*args)
        if not self.train:
            return 0.0
        start = time.perf_counter()
        (self.loss(out) if self.loss else out.sum()).backward()
        return time.perf_counter() - start


def _matmul(m: int, k: int, n: int) -> Workload:
    def inputs():
        g = torch.Generator().manual_seed(0)
        return [torch.randn(m, k, generator=g).bfloat16(), torch.randn(k, n, generator=g).bfloat16()]

    big = m * k * n >= 2**34
    return Workload(f"matmul bf16 [{m},{k}]@[{k},{n}]", lambda: (lambda a, b: a @ b), inputs,
                    train=False, flops=2.0 * m * k * n, repeats=2 if big else 5)


def _mlp(batch: int = 32) -> Workload:
    # The model of the README, test/python/helpers.py and scripts/demo.sh.
    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))

    def inputs():
        return [torch.randn(batch, 64, generator=torch.Generator().manual_seed(0))]

    # Forward: two matmuls. Backward: both weight gradients, and the input
    # gradient of the second layer only (x does not require grad).
    fwd = 2.0 * batch * (64 * 128 + 128 * 10)
    bwd = 2.0 * batch * (64 * 128 + 128 * 10) + 2.0 * batch * 128 * 10
    return Workload(f"MLP 64-128-10 f32, batch {batch}, forward+backward", make, inputs,
                    train=True, flops=fwd + bwd, repeats=9)


def _gpt(batch: int = 2) -> Workload:
    # The model `python -m trnc.demo` trains (trnc.models.gpt defaults): the
    # simulator-speed case, forward + backward of the causal-LM loss.
    from trnc.models import gpt

    config = gpt.GPTConfig()

    def make():
        torch.manual_seed(0)
        return gpt.GPT(config)

    def inputs():
        return list(gpt.batch(config, batch, torch.Generator().manual_seed(0)))

    c, t, layers = config.n_embd, config.block_size, config.n_layer
    # Per token: c_attn, c_proj, the MLP's two, and the tied head; plus
    # causal attention's QK^T and AV over the full T x T (as SDPA computes).
    linear = layers * (c * 3 * c + c * c + 2 * c * 4 * c) + c * config.vocab_size
    forward = 2.0 * batch * t * linear + layers * 2 * (2.0 * batch * t * t * c)
    return Workload(f"GPT (trnc.demo's) f32, batch {batch} x {t} tokens, forward+backward", make, inputs,
                    train=True, flops=3 * forward, repeats=5, loss=lambda out: out[1], inductor=False)


def warmup_workload() -> Workload:
    """A small training step unlike any measured one (no compiled kernel is reused)."""
    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.ReLU(), torch.nn.Linear(40, 6))

    return Workload("warm-up", make, lambda: [torch.randn(12, 24)], train=True, flops=0.0, repeats=1)


def all_workloads() -> list[Workload]:
    # The MLP first: measured after the big matmuls, its eager step was 100x
    # slower (threads left spinning by the simulator's BLAS compete with torch's).
    return [_mlp(), _gpt()] + [_matmul(*s) for s in MATMUL_SHAPES]
