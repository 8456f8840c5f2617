"""The ``trnc`` command's edges (python/trnc/cli/__init__.py and its commands).

Exit codes (0 ok, 1 trnc error, 2 usage error, 141 reader gone), a quiet exit when
stdout's reader closes the pipe, ``trnc compile`` failing when nothing was stored,
help text for every command and a ``trnc --help`` that does not import torch.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import trnc

from helpers import compile_neuron, mlp, needs_entry_point, needs_native

pytestmark = [needs_native, needs_entry_point]

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = [sys.executable, "-m", "trnc.cli"]


def _run(*args, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=HERE, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, **kwargs)


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    """A compiled MLP forward artifact (compile-graph -o)."""
    out = tmp_path_factory.mktemp("art")
    graphs = {}
    real = trnc.backend.export_graph
    trnc.backend.export_graph = lambda gm, name: graphs.setdefault(name, real(gm, name))
    try:
        torch._dynamo.reset()
        with torch.no_grad():  # one graph (with grad, the backward is compiled beside the forward)
            compile_neuron(mlp())(torch.randn(32, 64))
    finally:
        trnc.backend.export_graph = real
    (graph,) = graphs.values()
    source = out / "g.graph.json"
    source.write_text(graph.to_json())
    path = out / "g.trnc"
    done = _run("compile-graph", str(source), "-o", str(path))
    assert done.returncode == 0, done.stderr
    return path


def _into_closed_pipe(*args) -> subprocess.CompletedProcess:
    """Run the CLI with stdout a pipe whose reader is already gone (`| head` that exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*CLI, *args], cwd=HERE, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [["inspect", "-d"], ["profile", "--json"], ["profile"]])
def test_closed_pipe_exits_quietly(artifact, args) -> None:
    done = _into_closed_pipe(args[0], str(artifact), *args[1:])
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


def test_help_does_not_import_torch() -> None:
    code = "import sys; from trnc.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit as e:\n    rc = e.code\n" \
           "sys.exit(10 if 'torch' in sys.modules else rc)"
    done = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "compile-graph" in done.stdout and "targets" in done.stdout


@pytest.mark.parametrize("command, words", [
    ("compile-graph", ["GRAPH.json", "--target", "--dump-dir", "-o FILE.trnc", "CompileError", "examples:"]),
    ("targets", ["--verbose", "--target"]),
])
def test_help_text(command, words) -> None:
    done = _run(command, "--help")
    assert done.returncode == 0
    for word in words:
        assert word in done.stdout, (word, done.stdout)


def test_targets_verbose_lists_ceilings() -> None:
    done = _run("targets", "-v")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("trn2: ") and "TFLOP/s" in done.stdout and "GB/s" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["compile", "cli_fixtures.models:make_mlp", "--input", "f32[8,x]"], "bad --input 'f32[8,x]'"),
    (["compile", "cli_fixtures.models:make_mlp", "--input", "q7[8]"], "unknown dtype 'q7'"),
    (["compile", "cli_fixtures.models:make_mlp", "--input", "f32[8,32]", "--target", "trn9"], "unknown target 'trn9'"),
    (["precompile"], "give the command to run after `--`"),
    (["precompile", "--jobs", "0", "--", "true"], "--jobs must be at least 1"),
    (["compile-graph", "x.json", "--target", "trn9"], None),
    (["no-such-command"], "invalid choice"),
])
def test_usage_errors_exit_2(args, message, capsys) -> None:
    from trnc.cli import main

    if args[0] == "compile-graph":  # needs a readable file before the target is checked
        args = ["compile-graph", os.path.join(HERE, "conftest.py"), *args[2:]]
        message = "unknown target 'trn9'"
    try:
        rc = main(args)
    except SystemExit as exc:  # argparse's own usage errors
        rc = exc.code
    err = capsys.readouterr().err
    assert rc == 2, err
    assert message in err and "Traceback" not in err


def test_compile_fails_when_nothing_is_stored(tmp_path) -> None:
    args = ["compile", "cli_fixtures.models:make_mlp", "--input", "f32[8,32]"]
    done = _run(*args, env={"TRNC_DISABLE_CACHE": "1"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no artifact was stored (disabled" in done.stderr and "-o DIR" in done.stderr
    done = _run(*args, "-o", str(tmp_path / "out"), env={"TRNC_DISABLE_CACHE": "1"})
    assert done.returncode == 0, done.stderr  # the artifacts went to -o
    done = _run(*args, env={"TRNC_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr


def test_version_is_trncs() -> None:
    done = _run("--version")
    assert done.returncode == 0 and done.stdout.startswith(f"trnc {trnc.__version__} (compiler: ")
