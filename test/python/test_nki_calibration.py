"""benchmarks/calibration.py: the table, the RESULTS.md section and one small simulated point.

The published shapes take minutes; here a point is measured at a small shape
(the code path calibration.py runs), and the report is checked on hand-made
numbers.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import calibration  # noqa: E402
import nki_kernels  # noqa: E402

from helpers import needs_native  # noqa: E402


def _point(key: str, published_ms: float) -> calibration.Point:
    return calibration.Point(key, key, published_ms, "test", nki_kernels.matmul_tiled, lambda: ())


def _measured(key: str, published_ms: float, simulated_ms: float, gb: float = 1.0) -> calibration.Measured:
    return calibration.Measured(_point(key, published_ms), simulated_ms, simulated_ms * 2, int(gb * 1e9), 10,
                                0.1, 0.2, 0.3)


@needs_native  # the section quotes the model's HBM ceiling (trnc._C.target_ceilings)
def test_table_errors_and_ranking():
    results = [_measured("tiled", 50.0, 40.0), _measured("hoist", 40.0, 30.0), _measured("block_free", 20.0, 35.0),
               _measured("blocked", 7.0, 7.0)]
    rows = calibration.table(results)
    assert rows[2].startswith("| tiled | 50.00 ms | 40.00 ms | -20% | 80.00 ms | +60% | 1.00 GB | 20 | 25 |")
    assert "| 500.0 MB |" in calibration.table([_measured("x", 1.0, 1.0, gb=0.5)])[2]
    assert not calibration.ranking_kept(results)  # block_free simulated slower than hoist
    results[2] = _measured("block_free", 20.0, 20.0)
    assert calibration.ranking_kept(results)
    text = calibration.section(results)
    assert text.startswith("<!-- calibration:begin") and text.endswith("<!-- calibration:end -->")
    assert "Ranking of the four matmul versions preserved: yes." in text
    assert "20-50 GB/s of HBM traffic at their published times" in text
    assert "simulator fault" not in text
    results[0] = _measured("tiled", 50.0, 1.0, gb=1.0)  # 1000 GB/s simulated: above trn1's 410 GB/s
    assert "Simulated traffic above 410 GB/s is a simulator fault" in calibration.section(results)


def test_replace_section_keeps_the_rest():
    old = "head\n<!-- calibration:begin x -->old table<!-- calibration:end -->\ntail\n"
    new = calibration.replace_section(old, "<!-- calibration:begin y -->new<!-- calibration:end -->")
    assert new == "head\n<!-- calibration:begin y -->new<!-- calibration:end -->\ntail\n"
    appended = calibration.replace_section("head\n", "<!-- calibration:begin -->t<!-- calibration:end -->")
    assert appended == "head\n\n<!-- calibration:begin -->t<!-- calibration:end -->\n"


@needs_native
def test_measure_small_point():
    args = (torch.randn(256, 128).to(torch.bfloat16), torch.randn(256, 512).to(torch.bfloat16))
    point = calibration.Point("tiled", "tiled", 1.0, "test", nki_kernels.matmul_tiled, lambda: args)
    m = calibration.measure(point)
    assert m.simulated_ms > 0 and m.program_order_ms >= m.simulated_ms * 0.5
    # Two [128 x 128] and two [128 x 512] bf16 loads, one [128 x 512] bf16 store.
    assert m.hbm_bytes == 2 * (128 * 128 + 128 * 512) * 2 + 128 * 512 * 2
    assert m.instructions == 2 * 3 + 2  # per k: two loads and a matmul; then a copy and a store


@needs_native
def test_run_py_only_calibration_writes_the_section(tmp_path, monkeypatch):
    import run

    out = tmp_path / "RESULTS.md"
    (tmp_path / "RESULTS.json").write_text(run.json.dumps({"format": run.JSON_FORMAT, "workloads": {}}))
    out.write_text("old\n<!-- calibration:begin x -->stale<!-- calibration:end -->\n")
    fake = [_measured("tiled", 50.0, 40.0), _measured("blocked", 7.0, 7.0)]
    monkeypatch.setattr(calibration, "run", lambda log=print: fake)
    monkeypatch.setattr(sys, "argv", ["run.py", "--only", "calibration", "-o", str(out)])
    assert run.main() == 0
    text = out.read_text()
    assert "stale" not in text and text.count("<!-- calibration:begin") == 1
    assert "| tiled | 50.00 ms | 40.00 ms | -20% |" in text
    # --quick never runs it (and keeps the section it finds).
    monkeypatch.setattr(calibration, "run", lambda log=print: pytest.fail("calibration ran with --quick"))
    monkeypatch.setattr(sys, "argv", ["run.py", "--quick", "--render", "-o", str(out)])
    assert run.main() == 0
    assert "| tiled | 50.00 ms | 40.00 ms | -20% |" in out.read_text()
