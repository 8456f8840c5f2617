"""Profiles of compiled calls: simulated time, utilisation, traces.

Every graph trnc compiles runs on the bundled NeuronCore simulator, which also
models time. Profiling is off by default and costs nothing then; inside
``capture()`` every compiled graph run (forward and backward) returns its
profile, and the capture collects them in call order::

    with trnc.profiling.capture(trace=True) as p:
        loss = compiled(x).sum()
        loss.backward()
    print(p.total_ns, p.summary())
    p.write_trace("step.json")          # open in ui.perfetto.dev or chrome://tracing

``trnc.last_profile()`` returns the most recent graph profile recorded (inside
a capture, or after ``enable()``). All times are simulated estimates built
from public hardware facts (docs/profiling.md), not measurements.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any, Iterator, Optional

__all__ = ["GraphProfile", "Capture", "capture", "enable", "disable", "last_profile", "simulated_us"]


@dataclass
class GraphProfile:
    """One run of one compiled graph: its name, call number and ``trnc._C.Profile``."""

    graph: str
    call: int
    profile: Any

    @property
    def total_ns(self) -> float:
        return self.profile.total_ns

    @property
    def lnc(self) -> int:
        """Physical cores the run spanned (its trace has a process per core)."""
        return self.profile.lnc

    def summary(self) -> str:
        return self.profile.summary()

    def to_dict(self) -> dict:
        return {"graph": self.graph, "call": self.call, **self.profile.to_dict()}

    def trace_json(self, pid: int = 1) -> str:
        """This run as a Chrome/Perfetto trace (slices only when recorded with trace=True)."""
        return self.profile.trace_json(pid, f"{self.graph} call {self.call}")

    def plot(self, path: str) -> str:
        """Draw this run's engine and DMA-queue timeline into `path` (trnc.plot.timeline)."""
        from .plot import timeline

        return timeline(self, path)


class Capture:
    """Collects the profile of every compiled graph run while active."""

    def __init__(self, trace: bool = False) -> None:
        #: Record one trace slice per instruction (needed by write_trace and the
        #: per-instruction part of summary(); costs memory on big graphs).
        self.trace = trace
        self.graphs: list[GraphProfile] = []

    def record(self, graph: str, call: int, profile: Any) -> None:
        self.graphs.append(GraphProfile(graph, call, profile))

    # -- totals over every graph run, as if run back to back -------------
    @property
    def total_ns(self) -> float:
        """Simulated time of all runs (graphs run one after another)."""
        return sum(g.total_ns for g in self.graphs)

    def _sum(self, key: str) -> float:
        return sum(g.profile.to_dict()[key] for g in self.graphs)

    @property
    def tensor_flops(self) -> float:
        return self._sum("tensor_flops")

    @property
    def useful_matmul_flops(self) -> float:
        return self._sum("useful_matmul_flops")

    @property
    def hbm_bytes(self) -> float:
        return self._sum("hbm_bytes")

    @property
    def collective_ns(self) -> float:
        """Simulated time of the runs' collectives (docs/distributed.md)."""
        return self._sum("collective_ns")

    @property
    def exposed_collective_ns(self) -> float:
        """The part of collective_ns no other work of the core hid."""
        return self._sum("exposed_collective_ns")

    @property
    def min_hbm_bytes(self) -> float:
        """HBM bytes of programs that read each input and write each output once (all else on
        chip): for a training step its weights, gradients, saved activations (and optimizer
        state when the optimizer step is compiled), the minimum ``hbm_bytes`` is compared with."""
        return self._sum("program_input_bytes") + self._sum("program_output_bytes")

    def engine_busy_ns(self) -> dict[str, float]:
        """Busy time per engine summed over runs."""
        busy: dict[str, float] = {}
        for g in self.graphs:
            for name, e in g.profile.engines.items():
                busy[name] = busy.get(name, 0.0) + e["busy_ns"]
        return busy

    def utilisation(self) -> dict[str, float]:
        """Per-engine busy time over total simulated time, in [0, 1]."""
        total = self.total_ns
        return {k: (v / total if total > 0 else 0.0) for k, v in self.engine_busy_ns().items()}

    def matmul_dtypes(self) -> dict[str, dict]:
        """Matmul work by the dtype it ran at, summed over runs: {"bf16": {"instructions",
        "tensor_flops", "useful_flops", "peak_flops_per_second"}, ...}."""
        out: dict[str, dict] = {}
        for g in self.graphs:
            for name, m in g.profile.to_dict()["matmul_dtypes"].items():
                acc = out.setdefault(name, {"instructions": 0, "tensor_flops": 0.0, "useful_flops": 0.0,
                                            "peak_flops_per_second": m["peak_flops_per_second"]})
                for key in ("instructions", "tensor_flops", "useful_flops"):
                    acc[key] += m[key]
        return out

    def mfu_dtypes(self) -> str:
        """The dtypes MFU/HFU are measured against, e.g. "bf16" or "f32+bf16" ("" without matmuls)."""
        return "+".join(self.matmul_dtypes())

    def _at_peak(self, key: str) -> float:
        total = self.total_ns
        return self._sum(key) / total if self.graphs and total > 0 else 0.0

    def mfu(self) -> float:
        """Useful matmul FLOPs against the peak of the dtype each ran at: the sum over dtypes of
        flops_d / peak_d, over the total time (the share of it the Tensor Engine needs at peak)."""
        return self._at_peak("useful_at_peak_ns")

    def hfu(self) -> float:
        """Like mfu(), over all Tensor Engine FLOPs (also the matmuls that are not model work)."""
        return self._at_peak("tensor_at_peak_ns")

    def summary(self) -> str:
        """Totals, then each graph run's own summary."""
        lines = [
            f"trnc profile: {len(self.graphs)} graph run(s), {self.total_ns / 1e3:.3f} us simulated in total "
            "(simulated estimates, not measurements)"
        ]
        for g in self.graphs:
            lines.append(f"  {g.graph} call {g.call}: {g.total_ns / 1e3:.3f} us")
        text = "\n".join(lines) + "\n"
        for g in self.graphs:
            text += "\n" + g.summary()
        return text

    def trace_json(self) -> str:
        """One Chrome/Perfetto trace: a process per graph run, runs laid end to end."""
        events: list = []
        offset_us = 0.0
        pid = 1
        for g in self.graphs:
            one = json.loads(g.trace_json(pid))
            for e in one["traceEvents"]:
                if "ts" in e:
                    e["ts"] += offset_us
                _own_flow_id(e, pid)
                events.append(e)
            offset_us += g.total_ns / 1e3
            pid += g.lnc  # an LNC=2 run is a process per physical core
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                           "otherData": {"generator": "trnc simulator (simulated time, not a measurement)"}})

    def write_trace(self, path: str) -> None:
        """Write trace_json() to `path` (needs capture(trace=True) for slices)."""
        with open(path, "w") as f:
            f.write(self.trace_json())

    def plot(self, path: str) -> str:
        """Draw the timeline of every run, laid end to end, into `path` (trnc.plot.timeline)."""
        from .plot import timeline

        return timeline(self, path)

    def merge_torch_trace(self, torch_trace: str, path: str) -> str:
        """Merge this capture into a trace written by torch.profiler
        (``prof.export_chrome_trace(torch_trace)``) and write the result to `path`.

        Each compiled graph run appears in torch's trace as the event
        ``trnc::<graph>`` (see ``torch_event``); its simulated NeuronCore time is
        added to that event's args, and its simulated engine timeline (trace=True)
        is added as a process of its own that starts with the event. Runs are
        matched to events in order, by graph name."""
        with open(torch_trace) as f:
            doc = json.load(f)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        marks = sorted((e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith(_EVENT_PREFIX)),
                       key=lambda e: e["ts"])
        runs = iter(self.graphs)
        added: list = []
        pid = _MERGED_PID_BASE
        for mark in marks:
            run = next((g for g in runs if _EVENT_PREFIX + g.graph == mark["name"]), None)
            if run is None:
                break
            mark.setdefault("args", {})["trnc simulated us"] = run.total_ns / 1e3
            for e in json.loads(run.trace_json(pid))["traceEvents"]:
                if e.get("ph") == "M" and e.get("name") == "process_name":
                    core = f" core {e['pid'] - pid}" if run.lnc > 1 else ""
                    e["args"]["name"] = f"trnc NeuronCore (simulated): {run.graph} call {run.call}{core}"
                if "ts" in e:
                    e["ts"] += mark["ts"]
                _own_flow_id(e, pid)
                added.append(e)
            pid += run.lnc
        events.extend(added)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path


def _own_flow_id(event: dict, run: int) -> None:
    """Flow ids (semaphore arrows) count from 0 in each run's trace; trace files
    match flows by id across processes, so each run gets its own id range."""
    if event.get("ph") in ("s", "f"):
        event["id"] = (run << 32) + event["id"]


# torch.profiler sees each compiled graph run as one event of this name prefix.
_EVENT_PREFIX = "trnc::"
_MERGED_PID_BASE = 1 << 24  # above the process ids torch's trace uses for the host


# The event inside each run's that carries its simulated time in its name.
_SIMULATED_PREFIX = "trnc simulated: "


def torch_profiling() -> bool:
    """Whether torch's profiler is recording (then every run is timed)."""
    import torch

    return bool(torch.autograd.profiler._is_profiler_enabled)


def torch_event(graph: str):
    """A ``torch.profiler.record_function`` named ``trnc::<graph>`` around one graph
    run while torch's profiler is recording; otherwise a no-op context."""
    import torch

    if torch_profiling():
        return torch.profiler.record_function(_EVENT_PREFIX + graph)
    return contextlib.nullcontext()


def torch_simulated_event(graph: str, total_ns: float) -> None:
    """A zero-length torch.profiler event, inside the run's ``trnc::<graph>`` one,
    named ``trnc simulated: <graph> <us> us``. The name carries the simulated time
    because Kineto keeps event names but drops ``record_function`` args, so this
    is what a live profile (``prof.key_averages()``, ``prof.events()``, an
    exported trace, TensorBoard) shows without a merge."""
    import torch

    with torch.profiler.record_function(f"{_SIMULATED_PREFIX}{graph} {total_ns / 1e3:.3f} us"):
        pass


def simulated_us(event_name: str) -> Optional[tuple[str, float]]:
    """(graph, simulated us) from an event name torch_simulated_event wrote, else None."""
    if not event_name.startswith(_SIMULATED_PREFIX) or not event_name.endswith(" us"):
        return None
    graph, _, us = event_name[len(_SIMULATED_PREFIX):-3].rpartition(" ")
    try:
        return graph, float(us)
    except ValueError:
        return None


# The active capture (innermost), or None: compiled_graph reads this on every
# run, so "not profiling" costs one global lookup.
_active: Optional[Capture] = None
_enabled: Optional[Capture] = None  # a capture that only keeps the last profile
_last: Optional[GraphProfile] = None


def active() -> Optional[Capture]:
    """The capture compiled graph runs report to, or None (profiling off)."""
    return _active


def record(graph: str, call: int, profile: Any) -> None:
    """Called by CompiledGraph with the profile of one run."""
    global _last
    if _active is not None:
        _active.record(graph, call, profile)
    _last = GraphProfile(graph, call, profile)


@contextlib.contextmanager
def capture(trace: bool = False) -> Iterator[Capture]:
    """Profile every compiled graph run inside the ``with`` block."""
    global _active
    previous = _active
    _active = Capture(trace=trace)
    try:
        yield _active
    finally:
        _active = previous


class _LastOnly(Capture):
    def record(self, graph: str, call: int, profile: Any) -> None:  # keep nothing but _last
        pass


def enable(trace: bool = False) -> None:
    """Profile every run from now on, keeping only the last (see last_profile())."""
    global _active, _enabled
    if _active is None:
        _enabled = _active = _LastOnly(trace=trace)


def disable() -> None:
    """Undo enable()."""
    global _active, _enabled
    if _active is _enabled:
        _active = None
    _enabled = None


def last_profile() -> Optional[GraphProfile]:
    """The most recent graph run profiled (inside capture() or after enable()), or None."""
    return _last
