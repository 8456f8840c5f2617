"""How the harness measures one workload: compile time, wall time, simulated profile.

Compile time, for neuron and inductor alike: the wall time Dynamo spends in
the backend call (AOTAutograd tracing + compiling the forward graph), plus,
for training steps, the first backward() minus the median later backward()
(both backends compile the backward graph lazily there); every compile cache
off (TRNC_DISABLE_CACHE=1, Inductor's FX-graph cache off, fresh cache dirs).
"First step minus median step" was tried first and is swamped by run-time
noise when a step runs for seconds.
Wall times: medians of `repeats` steps after that first one. Simulated
numbers: the trnc profile of those same steps (trnc.profiling.capture),
which is deterministic, so one step's profile stands for all.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch

import trnc
from workloads import Workload


@dataclass
class Timing:
    first_s: float = 0.0
    runs_s: list = field(default_factory=list)
    error: Optional[str] = None
    backend_s: float = 0.0  # inside the backend call(s) Dynamo made
    first_bwd_s: float = 0.0
    bwd_s: list = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(self.runs_s) if self.runs_s else float("nan")

    @property
    def compile_s(self) -> float:
        lazy_bwd = self.first_bwd_s - statistics.median(self.bwd_s) if self.bwd_s else 0.0
        return self.backend_s + max(0.0, lazy_bwd)


def _step(t: Timing, w: Workload, fn: Callable, args: list, first: bool) -> None:
    start = time.perf_counter()
    bwd = w.step(fn, args)
    took = time.perf_counter() - start
    if first:
        t.first_s, t.first_bwd_s = took, bwd
    else:
        t.runs_s.append(took)
        if w.train:
            t.bwd_s.append(bwd)


def time_steps(w: Workload, fn: Callable, repeats: int, first: bool, t: Optional[Timing] = None) -> Timing:
    t = t or Timing()
    args = w.inputs()
    if first:
        _step(t, w, fn, args, first=True)
    for _ in range(repeats):
        _step(t, w, fn, args, first=False)
    return t


def _timed_backend(name: str, t: Timing) -> Callable:
    """The named backend, with the time Dynamo spends calling it added to t.backend_s."""
    real = torch._dynamo.lookup_backend(name)

    def backend(gm, example_inputs, **kwargs):
        start = time.perf_counter()
        try:
            return real(gm, example_inputs, **kwargs)
        finally:
            t.backend_s += time.perf_counter() - start

    return backend


def eager(w: Workload, threads: Optional[int] = None) -> Timing:
    """Eager steps with torch's intra-op threads, or with `threads` of them."""
    default = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        fn = w.make()
        time_steps(w, fn, 1, first=False)  # warm-up (allocator, MKL/oneDNN init)
        return time_steps(w, fn, w.repeats, first=False)
    finally:
        torch.set_num_threads(default)


def compiled(w: Workload, backend: str, profile: bool = False, options: Optional[dict] = None,
             repeats: Optional[int] = None):
    """Timing of torch.compile(backend); with profile, also the step's GraphProfiles."""
    torch._dynamo.reset()
    repeats = w.repeats if repeats is None else repeats
    t = Timing()
    fn = torch.compile(w.make(), backend=_timed_backend(backend, t), dynamic=False, options=options)
    try:
        if not profile:
            return time_steps(w, fn, repeats, first=True, t=t), []
        args = w.inputs()
        with trnc.profiling.capture() as p:  # the compiling step's runs are profiled too
            _step(t, w, fn, args, first=True)
        graphs = p.graphs
        for _ in range(repeats):
            with trnc.profiling.capture() as p:
                _step(t, w, fn, args, first=False)
            graphs = p.graphs
        return t, graphs
    except Exception as exc:  # recorded in RESULTS.md, never hidden
        return Timing(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"), []
    finally:
        torch._dynamo.reset()
