"""End-to-end tests of `trnc compile`, `trnc precompile` and `trnc inspect`.

The main flows run the CLI as users do (`python3 -m trnc.cli ...` in a child
process) against a temporary TRNC_CACHE_DIR, then check the effect a real
`torch.compile(..., backend="neuron")` run sees in a fresh process: every
graph a cache hit, no compile. Error messages are checked through
`trnc.cli.main` in-process (the same handler; child processes cost seconds
of torch start-up each). Fixtures (small models, a tiny training
script, the "real run" script) live in cli_fixtures/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import torch

from helpers import needs_entry_point, needs_native

pytestmark = [needs_native, needs_entry_point]

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "cli_fixtures")


@pytest.fixture(scope="module")
def cache_env(tmp_path_factory):
    env = dict(os.environ)
    env["TRNC_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    for name in ("TRNC_DISABLE_CACHE", "TRNC_COLLECT_DIR", "TRNC_DUMP_DIR"):
        env.pop(name, None)
    return env


def run(env, *args, check_rc=None):
    """Run a command with `env` from test/python; returns (rc, stdout, stderr)."""
    proc = subprocess.run(list(args), cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
    if check_rc is not None:
        assert proc.returncode == check_rc, f"rc={proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc.returncode, proc.stdout, proc.stderr


def trnc(env, *args, check_rc=None):
    return run(env, sys.executable, "-m", "trnc.cli", *args, check_rc=check_rc)


def trnc_C():
    import trnc._C

    return trnc._C


def cli_error(capsys, *args) -> str:
    """Run `trnc ARGS` in this process (as `python -m trnc.cli` does, minus the
    start-up cost); it must fail with exit code 1 and a one-line-headed message."""
    from trnc.cli import main

    capsys.readouterr()
    rc = main(list(args))
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("trnc: error: "), err
    return err


def report(stdout: str) -> dict:
    line = next(l for l in stdout.splitlines() if l.startswith("TRNC_REPORT "))
    return json.loads(line.removeprefix("TRNC_REPORT "))


def assert_all_hits(rep: dict, graphs: int) -> None:
    cache = rep["cache"]
    assert rep["compiles"] == 0, rep
    assert (cache["hits"], cache["misses"], cache["compiles"]) == (graphs, 0, 0), cache


@pytest.fixture(scope="module")
def compiled_mlp(cache_env, tmp_path_factory):
    """`trnc compile make_mlp --train -o OUT`; returns (OUT, stdout)."""
    out = tmp_path_factory.mktemp("out")
    _, stdout, _ = trnc(
        cache_env, "compile", "cli_fixtures.models:make_mlp", "--input", "f32[8,32]", "--train", "-o", str(out),
        check_rc=0,
    )
    return out, stdout


def test_compile_train_then_real_run_hits_cache(cache_env, compiled_mlp):
    out, stdout = compiled_mlp
    assert "graphs: 2, compiled: 2, cache hits: 0, failed: 0" in stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert [g["name"] for g in manifest["graphs"]] == ["forward_0", "backward_0"]
    for g in manifest["graphs"]:
        assert (out / g["file"]).is_file() and g["file"] == f"{g['key']}.trnc"
    assert {"shape": [8, 32], "stride": [32, 1], "dtype": "float32"} in manifest["graphs"][0]["inputs"]

    # A fresh process, plain torch.compile: forward and backward both hit, nothing compiles.
    _, stdout, _ = run(cache_env, sys.executable, os.path.join(FIXTURES, "run_model.py"), "train", check_rc=0)
    assert_all_hits(report(stdout), graphs=2)


def test_compile_pt2_then_real_run_hits_cache(cache_env, tmp_path):
    from cli_fixtures.models import make_mlp

    path = str(tmp_path / "mlp.pt2")
    torch.export.save(torch.export.export(make_mlp().eval(), (torch.randn(4, 32),)), path)
    _, stdout, _ = trnc(cache_env, "compile", path, check_rc=0)
    assert "graphs: 1, compiled: 1" in stdout and "inference_0: compiled" in stdout
    _, stdout, _ = run(cache_env, sys.executable, os.path.join(FIXTURES, "run_model.py"), path, check_rc=0)
    assert_all_hits(report(stdout), graphs=1)


def test_precompile_then_real_run_compiles_nothing(cache_env, tmp_path):
    env = dict(cache_env, TRNC_CACHE_DIR=str(tmp_path / "cache"))
    train = os.path.join(FIXTURES, "train.py")
    _, stdout, stderr = trnc(env, "precompile", "--jobs", "2", "--", sys.executable, train, "1", check_rc=0)
    # The collection run compiled nothing itself (eager execution, no simulation).
    assert report(stdout)["compiles"] == 0 and report(stdout)["counts"] == {}
    assert re.search(r"\[3/3\] \w+_0: compiled", stdout), stdout
    assert "graphs: 3, compiled: 3, already cached: 0, failed: 0" in stdout

    _, stdout, _ = run(env, sys.executable, train, "1", check_rc=0)
    rep = report(stdout)
    assert rep["counts"] == {"forward": 1, "backward": 1, "inference": 1}
    assert_all_hits(rep, graphs=3)


def test_inspect_counts_and_disassembly(cache_env, compiled_mlp, capsys):
    out, _ = compiled_mlp
    manifest = json.loads((out / "manifest.json").read_text())
    forward = out / manifest["graphs"][0]["file"]
    _, stdout, _ = trnc(cache_env, "inspect", "--json", "--disassemble", str(forward), check_rc=0)
    info = json.loads(stdout)
    assert info["name"] == "forward_0" and info["target"] == "trn2" and info["format_version"] >= 1
    inputs = [r for r in info["regions"] if r["kind"] == "input"]
    assert any(r["shape"] == [8, 32] and r["strides"] == [32, 1] and r["dtype"] == "f32" for r in inputs)
    counts = {e["engine"]: e["instructions"] for e in info["engines"]}
    assert counts["tensor"] >= 2  # two Linear layers: at least one matmul each
    for engine, n in counts.items():  # the disassembly has one line per counted instruction
        assert len(re.findall(rf"^  {engine} \d+: ", info["disassembly"], re.M)) == n
        assert sum(next(e for e in info["engines"] if e["engine"] == engine)["opcodes"].values()) == n

    from trnc.cli import main

    capsys.readouterr()
    assert main(["inspect", str(forward)]) == 0
    text = capsys.readouterr().out
    assert f"instructions: {sum(counts.values())}" in text
    assert f"  tensor: {counts['tensor']} (matmul {counts['tensor']})" in text
    assert re.search(r"^  input \d+: f32\[8,32\] strides \[32,1\]$", text, re.M), text
    # Once the extension has the timed simulator, inspect reports its estimate.
    if "profile" in trnc_C().Executable.run.__doc__:
        assert info["estimated_time_ns"] > 0 and re.search(r"^estimated time: [0-9.]+ us", text, re.M), text
    else:
        assert "estimated time: not available" in text


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_inspect_corrupt_artifact(compiled_mlp, tmp_path, damage, capsys):
    out, _ = compiled_mlp
    data = bytearray((out / json.loads((out / "manifest.json").read_text())["graphs"][0]["file"]).read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x40
    bad = tmp_path / "bad.trnc"
    bad.write_bytes(bytes(data))
    assert cli_error(capsys, "inspect", str(bad)).startswith(f"trnc: error: {bad}: invalid trnc artifact: ")


def test_compile_unsupported_operator(cache_env):
    rc, stdout, stderr = trnc(cache_env, "compile", "cli_fixtures.models:make_unsupported", "--input", "f32[4,8]")
    assert rc == 1, stdout + stderr
    assert "failed: 1" in stdout
    assert "unsupported operator" in stderr and "aten.special_bessel_j0" in stderr
    assert "models.py:" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(
    "args, message",
    [
        # usage errors (bad --input, exit code 2): test_cli_polish.py
        (["compile", "no_such_module:make", "--input", "f32[8]"], "cannot import module 'no_such_module'"),
        (["compile", "cli_fixtures.models:make_not_a_module", "--input", "f32[8]"], "expected a torch.nn.Module"),
        (["compile", "cli_fixtures.models:make_mlp", "--input", "f32[8,31]"], "failed: RuntimeError"),
        (["compile", "missing.pt2"], "no such file: missing.pt2"),
        (["inspect", "missing.trnc"], "cannot read missing.trnc"),
        (["precompile", "--", "no-such-program-xyz"], "cannot run no-such-program-xyz"),
    ],
)
def test_user_errors(args, message, capsys):
    assert message in cli_error(capsys, *args)


@pytest.mark.parametrize("command", ["compile", "precompile", "inspect"])
def test_help(command, capsys):
    from trnc.cli import main

    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"usage: trnc {command}" in capsys.readouterr().out


def test_input_specs():
    from trnc.aot import parse_input_spec

    assert parse_input_spec("bf16[8,128]") == (torch.bfloat16, (8, 128))
    assert parse_input_spec(" i64[ 4 , 2 ] ") == (torch.int64, (4, 2))
    assert parse_input_spec("f32[]") == (torch.float32, ())
