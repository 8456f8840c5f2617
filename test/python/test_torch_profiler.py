"""torch.profiler sees each compiled graph run (python/trnc/profiling.py).

Every run is a ``trnc::<graph>`` event in torch's profile; ``Capture.merge_torch_trace``
adds each run's simulated time to its event and its simulated engine timeline as a
process of the exported trace, starting with the event.
"""

from __future__ import annotations

import json

import torch

import trnc

from helpers import compile_neuron, mlp, needs_native

pytestmark = needs_native


def test_graph_runs_are_named_profiler_events_with_simulated_time(tmp_path) -> None:
    model = compile_neuron(mlp())
    x = torch.randn(32, 64)
    model(x).sum().backward()  # compiled outside the profile
    names = [g for g in trnc.neuron.stats.graphs[-2:]]
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof, \
            trnc.profiling.capture(trace=True) as cap:
        model(x).sum().backward()
    events = {e.key for e in prof.key_averages()}
    assert {f"trnc::{n}" for n in names} <= events, sorted(e for e in events if "trnc" in e)

    torch_trace = tmp_path / "torch.json"
    prof.export_chrome_trace(str(torch_trace))
    merged = tmp_path / "merged.json"
    cap.merge_torch_trace(str(torch_trace), str(merged))
    doc = json.loads(merged.read_text())
    events = doc["traceEvents"]
    marks = {e["name"]: e for e in events if e.get("ph") == "X" and e.get("name", "").startswith("trnc::")}
    for g in cap.graphs:
        mark = marks[f"trnc::{g.graph}"]
        assert mark["args"]["trnc simulated us"] == g.total_ns / 1e3
        process = [e for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                   and e["args"]["name"].endswith(f"{g.graph} call {g.call}")]
        assert len(process) == 1
        slices = [e for e in events if e.get("ph") == "X" and e.get("pid") == process[0]["pid"]]
        assert slices and min(e["ts"] for e in slices) >= mark["ts"]


def test_live_profile_carries_the_simulated_time_in_an_event_name(tmp_path) -> None:
    # Kineto drops record_function args, so the time rides in a name: a
    # zero-length event inside each run's trnc::<graph> event, no merge needed.
    model = compile_neuron(mlp())
    x = torch.randn(32, 64)
    model(x).sum().backward()
    with trnc.profiling.capture() as cap:
        model(x).sum().backward()
    want = {g.graph: round(g.total_ns / 1e3, 3) for g in cap.graphs}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        model(x).sum().backward()
    got = {}
    for e in prof.events():
        parsed = trnc.profiling.simulated_us(e.name)
        if parsed:
            got[parsed[0]] = parsed[1]
    assert got == want and all(us > 0 for us in got.values()), (got, want)
    trace = tmp_path / "torch.json"
    prof.export_chrome_trace(str(trace))
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    for graph in want:
        outer = next(e for e in events if e["name"] == f"trnc::{graph}")
        inner = next(e for e in events if (trnc.profiling.simulated_us(e["name"]) or ("",))[0] == graph)
        assert outer["ts"] <= inner["ts"] <= outer["ts"] + outer["dur"]
    assert trnc.profiling.simulated_us("trnc simulated: g x us") is None
    assert trnc.profiling.simulated_us("trnc::forward_0") is None


def test_no_profiler_no_event_cost() -> None:
    assert not torch.autograd.profiler._is_profiler_enabled
    from trnc.profiling import torch_event

    import contextlib

    assert isinstance(torch_event("forward_0"), contextlib.nullcontext)


def test_semaphore_flows_and_counters_in_a_capture_trace() -> None:
    model = compile_neuron(mlp())
    x = torch.randn(32, 64)
    model(x).sum().backward()
    with trnc.profiling.capture(trace=True) as cap:
        model(x).sum().backward()
    events = json.loads(cap.trace_json())["traceEvents"]
    starts = {(e["id"]): e for e in events if e["ph"] == "s"}
    finishes = [e for e in events if e["ph"] == "f"]
    assert finishes and len(starts) == len(finishes)
    for f in finishes:  # each arrow stays inside its run and points forward in time
        s = starts[f["id"]]
        assert s["pid"] == f["pid"] and s["ts"] <= f["ts"] and f["name"].startswith("s")
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert counters == {
        "HBM bandwidth (GB/s)",
        "DMA transfers in flight",
        "SBUF live (bytes per partition, of 229376)",  # trn2: 224 KiB
        "PSUM live (bytes per partition, of 16384)",
    }
    peak = max(e["args"]["GB/s"] for e in events if e["ph"] == "C" and e["name"].startswith("HBM"))
    assert 0 < peak
