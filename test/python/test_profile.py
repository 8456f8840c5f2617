"""Profiles of compiled calls: trnc.profiling, _C.Executable.run(profile=...), trnc profile.

The MLP training step (forward + backward) is profiled through
``trnc.profiling.capture``; its numbers are checked for sanity and its
Tensor Engine FLOPs against 2*M*K*N of the graphs' own matmuls; the trace
must be valid trace-event JSON with non-overlapping slices per track. The
``trnc profile`` command runs an artifact from ``trnc compile-graph``; its trace
has SBUF/PSUM occupancy tracks within capacity, and an artifact of the previous
format is refused.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

import pytest
import torch

import trnc
import trnc.backend
from helpers import compile_neuron, mlp, needs_native
from trnc.compiled_graph import buffer_of

pytestmark = needs_native

MATMULS = {torch.ops.aten.mm.default, torch.ops.aten.addmm.default}


@pytest.fixture
def exported(monkeypatch):
    """Every graph the backend exports, by name (to read matmul shapes, write graph JSON)."""
    graphs = {}
    real = trnc.backend.export_graph

    def spy(gm, name):
        graph = real(gm, name)
        graphs[name] = (gm, graph)
        return graph

    monkeypatch.setattr(trnc.backend, "export_graph", spy)
    return graphs


def only(exported: dict, kind: str):
    """The one exported graph of `kind` ("forward", "backward"): (gm, ExportedGraph)."""
    (name,) = [n for n in exported if n.startswith(kind)]
    return exported[name]


def matmul_flops(gm: torch.fx.GraphModule) -> dict[str, int]:
    """2*M*K*N of each mm/addmm node, by node name."""
    flops = {}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in MATMULS:
            a, b = node.args[-2:]
            (m, k), (_, n) = a.meta["val"].shape, b.meta["val"].shape
            flops[node.name] = 2 * m * k * n
    return flops


def mlp_step(trace: bool = True):
    model = compile_neuron(mlp())
    x = torch.randn(32, 64)
    with trnc.profiling.capture(trace=trace) as p:
        model(x).sum().backward()
    return p


def check_trace(trace: dict) -> list:
    """Valid trace-event JSON; per (pid, tid) slices are monotonic and disjoint."""
    assert isinstance(trace["traceEvents"], list)
    names = {(e["pid"], e["tid"]) for e in trace["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    end = collections.defaultdict(float)
    for e in slices:
        track = (e["pid"], e["tid"])
        assert track in names, f"slice on unnamed track {track}"
        assert e["name"] and e["dur"] >= 0 and "args" in e
        assert e["ts"] >= end[track] - 1e-9, f"overlap on track {track}: {e}"
        end[track] = e["ts"] + e["dur"]
    return slices


def test_mlp_step_profile_numbers(exported):
    p = mlp_step()
    assert [g.graph.split("_")[0] for g in p.graphs] == ["forward", "backward"]
    assert p.total_ns > 0
    assert p.total_ns == pytest.approx(sum(g.total_ns for g in p.graphs))
    for g in p.graphs:
        d = g.to_dict()
        assert d["total_ns"] > 0
        for name, e in d["engines"].items():
            assert 0.0 <= e["utilisation"] <= 1.0, (g.graph, name, e)
        assert 0.0 <= d["hfu"] <= 1.0 and 0.0 <= d["mfu"] <= d["hfu"] + 1e-12
        assert 0.0 <= d["mbu"] <= 1.0
        assert d["hbm_bytes"] > 0 and sum(d["dma_size_histogram"].values()) > 0
        assert d["verdict"] in ("compute-bound", "memory-bound", "latency-bound")
    for u in p.utilisation().values():
        assert 0.0 <= u <= 1.0
    assert trnc.last_profile().graph == p.graphs[-1].graph


def test_mlp_step_matmul_flops_match_the_graphs(exported):
    p = mlp_step()
    for g in p.graphs:
        expected = matmul_flops(exported[g.graph][0])
        assert expected, f"{g.graph} has no matmul"
        # FLOPs of the Tensor Engine instructions each matmul node lowered to,
        # without the transposes that lay its operands out (HFU, not MFU).
        by_node, transposed = collections.Counter(), collections.Counter()
        for e in json.loads(g.profile.trace_json())["traceEvents"]:
            if e["ph"] == "X" and e["name"] == "matmul":
                counter = transposed if e["args"].get("transpose") else by_node
                counter[e["args"].get("source_node")] += e["args"]["flops"]
        assert {k: by_node[k] for k in expected} == expected
        d = g.to_dict()
        assert d["tensor_flops"] == sum(by_node.values()) + sum(transposed.values())
        assert d["useful_matmul_flops"] == sum(by_node.values())
        assert d["tensor_flops"] >= sum(expected.values())
    # The forward graph has nothing but its two addmm on the Tensor Engine.
    forward = matmul_flops(only(exported, "forward")[0])
    assert p.graphs[0].to_dict()["useful_matmul_flops"] == sum(forward.values()) == 2 * 32 * (64 * 128 + 128 * 10)


def test_mlp_step_trace_and_summary(tmp_path):
    p = mlp_step()
    path = tmp_path / "step.json"
    p.write_trace(str(path))
    slices = check_trace(json.loads(path.read_text()))
    assert {e["pid"] for e in slices} == {1, 2}  # forward, backward
    assert {"matmul", "dma_copy"} <= {e["name"] for e in slices}
    mm = next(e for e in slices if e["name"] == "matmul")
    assert {"dst", "src0", "src1", "source_node"} <= set(mm["args"])
    text = p.summary()
    assert all(g.graph in text for g in p.graphs) and text.count("verdict:") == 2


def test_profiling_off_costs_nothing_and_returns_none():
    model = compile_neuron(mlp())
    model(torch.randn(32, 64))  # compiled, not profiled
    assert trnc.profiling.active() is None
    with trnc.profiling.capture(trace=False) as p:
        model(torch.randn(32, 64))
    assert len(p.graphs) == 1 and not p.graphs[0].profile.has_trace
    assert "run with trace recording on" in p.graphs[0].summary()
    assert trnc.profiling.active() is None


def test_executable_run_profile_flag(exported):
    compile_neuron(lambda a, b: a @ b)(torch.randn(128, 128), torch.randn(128, 128))
    (name,) = exported
    artifact_exe = trnc.backend.compile_exported(exported[name][1], trnc.CompilerOptions())
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128)
    ins, outs = [buffer_of(a), buffer_of(b)], [buffer_of(out)]
    assert artifact_exe.run(ins, outs) is None
    prof = artifact_exe.run(ins, outs, profile=True)
    assert prof.total_ns > 0 and not prof.has_trace
    torch.testing.assert_close(out, a @ b, rtol=1e-5, atol=1e-4)
    traced = artifact_exe.run(ins, outs, trace=True)
    assert traced.has_trace and traced.to_dict()["useful_matmul_flops"] == 2 * 128**3


def trnc_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trnc.cli", *args], capture_output=True, text=True, timeout=300)


def test_trnc_profile_command(exported, tmp_path):
    compile_neuron(mlp())(torch.randn(32, 64))
    graph = tmp_path / "forward.graph.json"
    graph.write_text(only(exported, "forward")[1].to_json())
    artifact = tmp_path / "forward.trnc"
    assert trnc_cli("compile-graph", str(graph), "-o", str(artifact)).returncode == 0

    trace = tmp_path / "trace.json"
    r = trnc_cli("profile", str(artifact), "--trace", str(trace))
    assert r.returncode == 0, r.stderr
    assert "total simulated time" in r.stdout and "verdict:" in r.stdout
    # The MLP is f32: MFU is labelled with, and measured against, the f32 peak.
    assert "MFU" in r.stdout and "against the peak of each matmul dtype: f32 " in r.stdout
    assert "on-chip memory (peak live, per partition): SBUF " in r.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    check_trace({"traceEvents": events})
    # Occupancy tracks from the artifact's allocation table: bytes per
    # partition live over simulated time, never above a partition (trn2).
    for space, capacity in (("SBUF", 224 * 1024), ("PSUM", 16 * 1024)):
        name = f"{space} live (bytes per partition, of {capacity})"
        values = [e["args"]["bytes"] for e in events if e["ph"] == "C" and e["name"] == name]
        assert values and 0 < max(values) <= capacity and values[-1] == 0, (space, values)

    r = trnc_cli("profile", str(artifact), "--inputs", "zeros", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["total_ns"] > 0 and set(d["matmul_dtypes"]) == {"f32"}
    assert d["mfu"] * d["total_ns"] == pytest.approx(d["useful_at_peak_ns"])
    assert 0 < d["sbuf_peak_bytes"] <= 224 * 1024 and 0 < d["psum_peak_bytes"] <= 16 * 1024

    # An artifact of a previous format (1: no allocation table; 2: no
    # streams per physical core; 3: no packed scratch) is refused by its
    # version, with what to do.
    for version in (1, 2, 3):
        old = bytearray(artifact.read_bytes())
        old[8:12] = version.to_bytes(4, "little")
        stale = tmp_path / "old.trnc"
        stale.write_bytes(bytes(old))
        r = trnc_cli("profile", str(stale))
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert (f"format version {version} found, this runtime reads version 4 (written by an older "
                "trnc: recompile") in r.stderr


def test_trnc_profile_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.trnc"
    bad.write_bytes(os.urandom(1000))
    r = trnc_cli("profile", str(bad))
    assert r.returncode == 1
    assert "invalid trnc artifact" in r.stderr and "Traceback" not in r.stderr

    r = trnc_cli("profile", str(tmp_path / "missing.trnc"))
    assert r.returncode == 1 and "cannot read" in r.stderr and "Traceback" not in r.stderr


def test_trnc_profile_generates_token_ids_and_masks(exported, tmp_path):
    # A language model's artifact takes int64 token ids (and masks): the
    # profile command generates them (random ids in [0, 8), or zeros).
    emb = torch.nn.Embedding(16, 32)

    def lookup(ids, keep):
        return emb(ids) * keep.unsqueeze(-1)

    with torch.no_grad():
        compile_neuron(lookup)(torch.randint(0, 16, (4, 8)), torch.ones(4, 8, dtype=torch.bool))
    graph = tmp_path / "lookup.graph.json"
    graph.write_text(only(exported, "inference")[1].to_json())
    artifact = tmp_path / "lookup.trnc"
    assert trnc_cli("compile-graph", str(graph), "-o", str(artifact)).returncode == 0
    for fill in ("random", "zeros"):
        r = trnc_cli("profile", str(artifact), "--inputs", fill)
        assert r.returncode == 0, r.stderr
        assert "total simulated time" in r.stdout
