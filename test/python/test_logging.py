"""trnc speaks torch's logging (python/trnc/logs.py, python/_trnc_torch_logs).

``TORCH_LOGS=trnc`` shows the backend's decisions (graphs received, cache misses and
hits, compile times), ``trnc_graph`` the graph JSON and ``trnc_ir`` the IR after each
compiler phase. The names must be known while ``import torch`` parses TORCH_LOGS
(else torch itself refuses to import), so each case runs in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from helpers import needs_entry_point, needs_native

pytestmark = [needs_native, needs_entry_point]

PROGRAM = """
import torch
f = torch.compile(lambda x: torch.relu(x) * 2.0, backend="neuron", dynamic=False)
x = torch.randn(8, 16)
torch.testing.assert_close(f(x), torch.relu(x) * 2.0)
torch._dynamo.reset()
f = torch.compile(lambda x: torch.relu(x) * 2.0, backend="neuron", dynamic=False)
f(x)  # the same graph again: an AOTAutograd cache hit, its artifact a cache hit
"""


def _run(torch_logs: str, cache_dir: str) -> str:
    env = {**os.environ, "TORCH_LOGS": torch_logs, "TRNC_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True,
                          cwd="/", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def test_torch_logs_trnc_shows_decisions(tmp_path) -> None:
    err = _run("trnc", str(tmp_path))
    assert "received a Dynamo graph" in err
    assert "graph inference_0: cache miss, compiled" in err
    assert "graph inference_0: AOTAutograd cache hit, artifact cache hit" in err
    assert '"schema": "trnc.graph"' not in err  # artifacts are off unless named


def test_torch_logs_artifacts_show_graph_json_and_ir(tmp_path) -> None:
    err = _run("trnc_graph,trnc_ir", str(tmp_path))
    assert '"schema": "trnc.graph"' in err or '"schema":"trnc.graph"' in err
    assert "IR Dump After import (graph JSON)" in err
    assert err.count("// -----// IR Dump After") >= 3  # import and each pass
    assert "received a Dynamo graph" not in err  # the decisions log is not asked for


def test_set_logs_in_process_enables_trnc(capfd) -> None:
    import logging

    import torch

    torch._logging.set_logs(modules={"trnc": logging.INFO})
    try:
        torch._dynamo.reset()
        f = torch.compile(lambda x: x + 1.0, backend="neuron", dynamic=False)
        f(torch.randn(3))
    finally:
        torch._logging.set_logs()
    assert "received a Dynamo graph" in capfd.readouterr().err


def test_unknown_torch_logs_name_still_fails_as_torch_says() -> None:
    env = {**os.environ, "TORCH_LOGS": "trnc_nonexistent"}
    done = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True, cwd="/")
    assert done.returncode != 0 and "trnc_nonexistent" in done.stderr


def _float64_op(a, b):
    return torch.relu(a * b + 1.5)  # float64-op


def test_float64_warning_points_at_the_users_line() -> None:
    import warnings

    import torch

    from helpers import compile_neuron, line_of
    from trnc.graph_export import Float64Warning

    torch._dynamo.reset()
    x, y = torch.randn(6, 9, dtype=torch.float64), torch.randn(9, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        compile_neuron(_float64_op)(x, y)
    (w,) = [w for w in record if issubclass(w.category, Float64Warning)]
    assert w.filename == __file__ and w.lineno == line_of("float64-op", __file__), (w.filename, w.lineno)
