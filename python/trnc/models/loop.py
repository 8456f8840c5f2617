"""One training loop for the tests and the demo, eager or through trnc.

``train`` runs ``steps`` AdamW steps, each accumulating ``accumulate``
micro-batches (loss / accumulate, summed grads), optionally clipping the
gradient norm and stepping a learning-rate scheduler, and zeroing grads with
``set_to_none=True``. The model is compiled with
``torch.compile(model, backend=neuron, dynamic=False)`` when ``compiled``; the
optimizer, clipping and scheduler run eagerly, as in a typical loop.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

import torch

__all__ = ["TrainResult", "train"]


@dataclass
class TrainResult:
    losses: list[float] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)
    run: Optional[Callable] = None  # the (compiled) model the loop called


def train(
    model: torch.nn.Module,
    loss_fn: Callable[[Callable, tuple], torch.Tensor],
    batches: Iterator[tuple],
    *,
    steps: int,
    compiled: bool,
    accumulate: int = 1,
    lr: float = 1e-3,
    clip: Optional[float] = None,
    schedule: bool = False,
    autocast: bool = False,
    options: Optional[dict] = None,
    around_step: Optional[Callable[[int], contextlib.AbstractContextManager]] = None,
) -> TrainResult:
    """``loss_fn(run, batch)`` returns the micro-batch loss given the (compiled) model."""
    from ..backend import neuron

    run = torch.compile(model, backend=neuron, dynamic=False, options=options or {}) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=max(1, steps // 4), gamma=0.5) if schedule else None
    result = TrainResult(run=run)
    model.train()
    for step in range(steps):
        start = time.perf_counter()
        with around_step(step) if around_step else contextlib.nullcontext():
            total = 0.0
            for _ in range(accumulate):
                batch = next(batches)
                with torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext():
                    loss = loss_fn(run, batch)
                (loss.float() / accumulate).backward()
                total += loss.item() / accumulate
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            result.lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            opt.zero_grad(set_to_none=True)
            if sched is not None:
                sched.step()
        result.step_seconds.append(time.perf_counter() - start)
        result.losses.append(total)
    return result
