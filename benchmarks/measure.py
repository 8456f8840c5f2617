"""How the harness measures one workload: compile time, wall time, simulated profile.

Compile time, for neuron and inductor alike: the wall time Dynamo spends in
the backend calls (AOTAutograd tracing + compiling the forward graph, and
the optimizer step's graph when the workload has one), plus,
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
from trnc.backend import neuron as neuron_backend
from workloads import Workload


@dataclass
class Timing:
    first_s: float = 0.0
    runs_s: list = field(default_factory=list)
    error: Optional[str] = None
    backend_s: float = 0.0  # inside the backend call(s) Dynamo made
    first_bwd_s: float = 0.0
    bwd_s: list = field(default_factory=list)
    # The backend's own account of its compile time, when it keeps one (trnc's
    # CompileStats: the backend calls plus the backward graph compiled lazily
    # at the first backward()).
    recorded_compile_s: Optional[float] = None

    @property
    def median_s(self) -> float:
        return statistics.median(self.runs_s) if self.runs_s else float("nan")

    @property
    def compile_s(self) -> float:
        if self.recorded_compile_s is not None:
            return self.recorded_compile_s
        # Estimated: the first backward() minus a later one. With few steps the
        # difference carries the run-to-run noise of the step itself (for
        # trnc a backward simulated for seconds), so it is used only for
        # backends that keep no account (Inductor).
        lazy_bwd = self.first_bwd_s - statistics.median(self.bwd_s) if self.bwd_s else 0.0
        return self.backend_s + max(0.0, lazy_bwd)


@dataclass
class Runner:
    """What one step calls: the (compiled) model, and the optimizer's (compiled) step."""
    fn: Callable
    opt: Optional[torch.optim.Optimizer] = None
    opt_step: Optional[Callable] = None


def _runner(w: Workload, compile_fn: Optional[Callable] = None) -> Runner:
    """A fresh model (and optimizer), compiled with `compile_fn` when given."""
    model = w.make()
    fn = compile_fn(model) if compile_fn else model
    if w.optimizer is None:
        return Runner(fn)
    opt = w.optimizer(model)
    return Runner(fn, opt, compile_fn(opt.step) if compile_fn else opt.step)


def _step(t: Timing, w: Workload, r: Runner, args: list, first: bool) -> None:
    start = time.perf_counter()
    bwd = w.step(r.fn, args, r.opt_step, r.opt)
    took = time.perf_counter() - start
    if first:
        t.first_s, t.first_bwd_s = took, bwd
    else:
        t.runs_s.append(took)
        if w.train:
            t.bwd_s.append(bwd)


def time_steps(w: Workload, r: Runner, repeats: int, first: bool, t: Optional[Timing] = None) -> Timing:
    t = t or Timing()
    args = w.inputs()
    if first:
        _step(t, w, r, args, first=True)
    for _ in range(repeats):
        _step(t, w, r, args, first=False)
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


# An eager step projected to take longer than this (its matmul FLOP at this
# CPU's measured rate for the workload's dtype) is not timed: some CPUs have
# no bf16 matmul kernel (here 0.9 GFLOP/s against 40 in f32), and the
# [4096,8192]@[8192,8192] step alone would take ten minutes per repeat.
EAGER_BUDGET_S = 60.0


def cpu_matmul_flops_per_s(dtype: torch.dtype) -> float:
    """This CPU's eager matmul rate in `dtype` (a 512^3 product, best of 3)."""
    a = torch.randn(512, 512).to(dtype)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - start)
    return 2 * 512**3 / best


def too_slow_on_cpu(w: Workload) -> Optional[str]:
    """Why w's steps are not run on this CPU (eager, and Inductor's code, which
    calls the same matmul kernels), or None when they fit EAGER_BUDGET_S."""
    rate = cpu_matmul_flops_per_s(torch.bfloat16 if w.dtype == "bf16" else torch.float32)
    projected = w.flops / rate * (w.repeats + 2)
    if projected <= EAGER_BUDGET_S:
        return None
    return f"not timed: projected {projected:.0f} s on this CPU ({w.dtype} matmul at {rate / 1e9:.2g} GFLOP/s)"


def eager(w: Workload, threads: Optional[int] = None) -> Timing:
    """Eager steps with torch's intra-op threads, or with `threads` of them
    (not run when too_slow_on_cpu says why)."""
    default = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        reason = too_slow_on_cpu(w)
        if reason:
            return Timing(error=reason)
        r = _runner(w)
        time_steps(w, r, 1, first=False)  # warm-up (allocator, MKL/oneDNN init)
        return time_steps(w, r, w.repeats, first=False)
    finally:
        torch.set_num_threads(default)


def compiled(w: Workload, backend: str, profile: bool = False, options: Optional[dict] = None,
             repeats: Optional[int] = None):
    """Timing of torch.compile(backend) (model and optimizer step); with profile, also the
    step's GraphProfiles."""
    torch._dynamo.reset()
    repeats = w.repeats if repeats is None else repeats
    t = Timing()
    timed = _timed_backend(backend, t)
    stats = neuron_backend.stats if backend == "neuron" else None
    compiled_before = stats.compile_seconds if stats else 0.0
    try:
        r = _runner(w, lambda f: torch.compile(f, backend=timed, dynamic=False, options=options))
        graphs = []
        if not profile:
            time_steps(w, r, repeats, first=True, t=t)
        else:
            args = w.inputs()
            with trnc.profiling.capture() as p:  # the compiling step's runs are profiled too
                _step(t, w, r, args, first=True)
            graphs = p.graphs
            for _ in range(repeats):
                with trnc.profiling.capture() as p:
                    _step(t, w, r, args, first=False)
                graphs = p.graphs
        if stats:
            t.recorded_compile_s = stats.compile_seconds - compiled_before
        return t, graphs
    except Exception as exc:  # recorded in RESULTS.md, never hidden
        return Timing(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"), []
    finally:
        torch._dynamo.reset()
