"""Pictures of simulated runs (python/trnc/plot.py): timeline and roofline files.

Each test checks that a PNG is written and non-empty and that bad input (a profile
without a trace, a point without bytes, an unknown target, matplotlib missing) is a
TrncError that says what to do.
"""

from __future__ import annotations

import sys

import pytest
import torch

import trnc
import trnc.plot

from helpers import compile_neuron, mlp, needs_native

pytestmark = needs_native
matplotlib = pytest.importorskip("matplotlib")

_PNG = b"\x89PNG\r\n\x1a\n"


def _train_step(trace: bool) -> trnc.profiling.Capture:
    model = compile_neuron(mlp())
    x = torch.randn(32, 64)
    model(x).sum().backward()  # compile outside the capture
    with trnc.profiling.capture(trace=trace) as cap:
        model(x).sum().backward()
    return cap


def _is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(_PNG)


def test_timeline_of_one_run_and_of_a_capture(tmp_path) -> None:
    cap = _train_step(trace=True)
    assert [g.graph.split("_")[0] for g in cap.graphs] == ["forward", "backward"]
    one = tmp_path / "forward.png"
    assert cap.graphs[0].plot(str(one)) == str(one)
    assert _is_png(one)
    both = tmp_path / "step.png"
    trnc.plot.timeline(cap, str(both))
    assert _is_png(both)


def test_timeline_rows_are_engines_and_dma_queues() -> None:
    cap = _train_step(trace=True)
    labels, rows = trnc.plot._rows(__import__("json").loads(cap.trace_json())["traceEvents"])
    assert labels[:4] == ["tensor engine", "vector engine", "scalar engine", "gpsimd engine"]
    assert any(label.startswith("dma queue") for label in labels)
    assert all("lane" not in label for label in labels)
    assert sum(len(r) for r in rows.values()) > 10


def test_timeline_without_trace_says_how_to_record_one(tmp_path) -> None:
    cap = _train_step(trace=False)
    with pytest.raises(trnc.TrncError, match=r"capture\(trace=True\)"):
        cap.plot(str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()


def test_roofline_of_graph_runs(tmp_path) -> None:
    cap = _train_step(trace=False)
    points = trnc.plot.roofline_points(cap)
    assert len(points) == 2 and all(p[1] > 0 and p[2] > 0 and p[3] > 0 for p in points)
    path = tmp_path / "roofline.png"
    trnc.plot.roofline(points + [("a point", 1e9, 1e6, 1e-3)], "trn2", str(path))
    assert _is_png(path)


def test_roofline_bad_input_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(trnc.TrncError, match="unknown target 'trn9'"):
        trnc.plot.roofline([("x", 1.0, 1.0, 1.0)], "trn9", str(tmp_path / "r.png"))
    with pytest.raises(trnc.TrncError, match="bytes > 0"):
        trnc.plot.roofline([("x", 1.0, 0, 1.0)], "trn2", str(tmp_path / "r.png"))
    with pytest.raises(trnc.TrncError, match=r"\(name, flop, bytes, seconds\)"):
        trnc.plot.roofline([("x", 1.0)], "trn2", str(tmp_path / "r.png"))
    with pytest.raises(trnc.TrncError, match="no points"):
        trnc.plot.roofline([], "trn2", str(tmp_path / "r.png"))


def test_missing_matplotlib_names_the_package(monkeypatch, tmp_path) -> None:
    cap = _train_step(trace=True)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(trnc.TrncError, match="pip install matplotlib"):
        trnc.plot.timeline(cap, str(tmp_path / "t.png"))


def test_trnc_profile_plot(monkeypatch, tmp_path) -> None:
    import subprocess

    graphs = {}
    real = trnc.backend.export_graph
    monkeypatch.setattr(trnc.backend, "export_graph", lambda gm, name: graphs.setdefault(name, real(gm, name)))
    with torch.no_grad():  # one graph (with grad, the backward is compiled beside the forward)
        compile_neuron(mlp())(torch.randn(32, 64))
    (graph,) = graphs.values()
    source = tmp_path / "g.graph.json"
    source.write_text(graph.to_json())
    artifact = tmp_path / "g.trnc"
    cli = [sys.executable, "-m", "trnc.cli"]
    done = subprocess.run([*cli, "compile-graph", str(source), "-o", str(artifact)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "timeline.png"
    done = subprocess.run([*cli, "profile", str(artifact), "--plot", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"timeline drawn to {out}" in done.stdout and _is_png(out)
