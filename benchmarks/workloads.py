"""The graphs the benchmark harness measures: bf16 matmuls, the MLP step, the GPT steps.

Each workload builds a fresh callable (a function or model), its inputs, and
says whether a step includes ``backward()`` and an optimizer step (compiled
with the same backend as the model). The same callable is handed to eager
PyTorch, ``backend="neuron"`` and ``backend="inductor"``. ``flops`` is the
model's matmul FLOPs per step in ``dtype`` (MFU and the roofline divide it by
that dtype's Tensor Engine peak).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Optional

import torch

from trnc.models import gpt

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
    dtype: str = "f32"  # the dtype the model's matmuls run in ("f32", "bf16")
    # An optimizer over make()'s parameters, stepped after backward() (then
    # grads zeroed, set_to_none); its step is compiled with the model's backend.
    optimizer: Optional[Callable[[torch.nn.Module], torch.optim.Optimizer]] = None
    flops_rule: str = "2*M*K*N"  # how `flops` was counted (RESULTS.md)
    key: str = ""  # short stable id: run.py --only/--skip, RESULTS.json

    def step(self, fn: Callable, args: list, opt_step: Optional[Callable] = None,
             opt: Optional[torch.optim.Optimizer] = None) -> float:
        """One step; returns the seconds spent in backward() (0 without training)."""
        out = fn(*args)
        if not self.train:
            return 0.0
        start = time.perf_counter()
        (self.loss(out) if self.loss else out.sum()).backward()
        took = time.perf_counter() - start
        if opt_step is not None:
            opt_step()
            opt.zero_grad(set_to_none=True)
        return took


def _matmul(m: int, k: int, n: int) -> Workload:
    def inputs():
        g = torch.Generator().manual_seed(0)
        return [torch.randn(m, k, generator=g).bfloat16(), torch.randn(k, n, generator=g).bfloat16()]

    big = m * k * n >= 2**34
    return Workload(f"matmul bf16 [{m},{k}]@[{k},{n}]", lambda: (lambda a, b: a @ b), inputs,
                    train=False, flops=2.0 * m * k * n, repeats=2 if big else 5, dtype="bf16",
                    key=f"matmul-{m}x{k}x{n}")


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
                    train=True, flops=fwd + bwd, repeats=9,
                    flops_rule="both forward matmuls, both weight gradients, the second layer's input gradient",
                    key="mlp")


def gpt_step_flops(config: gpt.GPTConfig, batch: int) -> float:
    """Matmul FLOPs of one GPT training step (forward + backward).

    Forward, per token: the fused QKV projection (C x 3C), the attention
    output projection (C x C), the MLP's two (C x 4C, 4C x C) in each of the
    L layers, and the tied LM head (C x V); per layer, causal attention's
    Q K^T and A V over the full T x T (as SDPA computes them, masked, not
    halved): forward = 2*B*T*(L*12*C^2 + C*V) + L*2*(2*B*T*T*C). The step is
    3x the forward (backward: the gradients of both operands of every
    matmul), the usual 6N-per-token rule plus attention. Embedding lookups,
    norms, softmax, GELU and the optimizer are elementwise and not counted.
    """
    c, t, layers = config.n_embd, config.block_size, config.n_layer
    linear = layers * (c * 3 * c + c * c + 2 * c * 4 * c) + c * config.vocab_size
    forward = 2.0 * batch * t * linear + layers * 2 * (2.0 * batch * t * t * c)
    return 3 * forward


GPT_FLOPS_RULE = "3 x forward; forward = 2*B*T*(L*12*C^2 + C*V) + L*4*B*T^2*C (workloads.gpt_step_flops)"


def _gpt(batch: int = 2) -> Workload:
    # The model `python -m trnc.demo` trains (trnc.models.gpt defaults): the
    # simulator-speed case, forward + backward of the causal-LM loss (the
    # demo's AdamW runs eagerly on the host, so it is not part of this step).
    config = gpt.GPTConfig()

    def make():
        torch.manual_seed(0)
        return gpt.GPT(config)

    def inputs():
        return list(gpt.batch(config, batch, torch.Generator().manual_seed(0)))

    return Workload(f"GPT (trnc.demo's) f32, batch {batch} x {config.block_size} tokens, forward+backward", make,
                    inputs, train=True, flops=gpt_step_flops(config, batch), repeats=5, loss=lambda out: out[1],
                    inductor=False, flops_rule=GPT_FLOPS_RULE, key="gpt-demo")


# The realistic GPT training step of issue 11 (its "Done when" list).
GPT_REALISTIC = gpt.GPTConfig(vocab_size=8192, block_size=1024, n_layer=2, n_head=16, n_embd=1024)


def _gpt_realistic(batch: int = 4, config: gpt.GPTConfig = GPT_REALISTIC) -> Workload:
    # bf16 parameters, activations and AdamW state (pure bf16 training: no
    # fp32 master weights), AdamW(lr 1e-4, weight decay 0.1, foreach) compiled
    # with torch.compile like the model, so the step is three graphs:
    # forward, backward, optimizer.
    def make():
        torch.manual_seed(0)
        return gpt.GPT(config).to(torch.bfloat16)

    def inputs():
        return list(gpt.batch(config, batch, torch.Generator().manual_seed(0)))

    def adamw(model: torch.nn.Module) -> torch.optim.Optimizer:
        return torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, foreach=True)

    name = (f"GPT bf16 d_model {config.n_embd}, {config.n_head} heads, {config.n_layer} layers, vocab "
            f"{config.vocab_size}, batch {batch} x {config.block_size} tokens, forward+backward+AdamW")
    return Workload(name, make, inputs, train=True, flops=gpt_step_flops(config, batch), repeats=1,
                    loss=lambda out: out[1], inductor=False, dtype="bf16", optimizer=adamw,
                    flops_rule=GPT_FLOPS_RULE, key=f"gpt-bf16-{config.n_embd}")


def warmup_workload() -> Workload:
    """A small training step unlike any measured one (no compiled kernel is reused)."""
    def make():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(24, 40), torch.nn.ReLU(), torch.nn.Linear(40, 6))

    return Workload("warm-up", make, lambda: [torch.randn(12, 24)], train=True, flops=0.0, repeats=1, key="warm-up")


def all_workloads() -> list[Workload]:
    # The MLP first: measured after the big matmuls, its eager step was 100x
    # slower (threads left spinning by the simulator's BLAS compete with torch's).
    return [_mlp(), _gpt()] + [_matmul(*s) for s in MATMUL_SHAPES] + [_gpt_realistic()]

