"""HBM scratch packed by liveness at compile time (passes/PackScratch.cpp).

A graph whose intermediates go through HBM one after another: the artifact
declares each scratch region at an offset in one arena, regions never live
at once share bytes, and the result still matches eager with the race
checker on (conftest sets TRNC_RACE_CHECK), which sees scratch at its arena
bytes, so a reuse the semaphores did not order would fail the run."""

import torch

import trnc
from trnc.cli import inspect as cli_inspect


def _chain(x, w):
    # Each log_softmax is a row group whose result a matmul reads back from
    # HBM: a string of scratch buffers, each dead once the next is made.
    for _ in range(4):
        x = torch.log_softmax(x @ w, dim=-1)
    return x


def test_scratch_regions_share_an_arena_and_match_eager(tmp_path, monkeypatch):
    monkeypatch.setenv("TRNC_CACHE_DIR", str(tmp_path / "cache"))
    torch.manual_seed(0)
    x, w = torch.randn(256, 2048), torch.randn(2048, 2048) / 45
    with trnc.profiling.capture() as captured:
        got = torch.compile(_chain, backend="neuron", dynamic=False)(x, w)
    torch.testing.assert_close(got, _chain(x, w), rtol=1e-4, atol=1e-4)

    artifacts = list((tmp_path / "cache").rglob("*.trnc"))
    assert len(artifacts) == 1
    info = cli_inspect.describe(artifacts[0].read_bytes(), disassemble=False, estimate=False)
    scratch = [r for r in info["regions"] if r["kind"] == "scratch"]
    assert len(scratch) >= 2, info["regions"]
    assert all(r["arena_offset"] % 64 == 0 for r in scratch)
    arena = info["scratch_arena_bytes"]
    assert arena == max(r["arena_offset"] + -(-r["bytes"] // 64) * 64 for r in scratch)
    # Packed: smaller than the regions laid end to end, because some share.
    assert arena < sum(-(-r["bytes"] // 64) * 64 for r in scratch)
    offsets = [r["arena_offset"] for r in scratch]
    assert len(set(offsets)) < len(offsets)
    # The profile (and so benchmarks/RESULTS.md) reports both sizes.
    (graph,) = captured.graphs
    d = graph.to_dict()
    assert d["program_scratch_arena_bytes"] == arena
    assert d["program_scratch_bytes"] == sum(-(-r["bytes"] // 64) * 64 for r in scratch)
