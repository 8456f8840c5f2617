"""scripts/compare_lowering.py: a corpus of collected graphs lowered by two
trnc-opt builds, compared with values renamed by first use. Needs the CMake
build's tools (build/bin), which test.sh builds before the tests."""

import json
import os
import stat
import subprocess
import sys

import pytest

from trnc.collect import CollectedGraph, write_collected

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "compare_lowering.py")
OPT = os.path.join(ROOT, "build", "bin", "trnc-opt")

pytestmark = pytest.mark.skipif(not os.path.exists(OPT), reason="needs build/bin/trnc-opt")

MATMUL = {
    "schema": "trnc.graph", "version": 1, "name": "inference_0",
    "inputs": [{"name": "a", "shape": [256, 128], "stride": [128, 1], "dtype": "float32"},
               {"name": "b", "shape": [128, 640], "stride": [640, 1], "dtype": "float32"}],
    "nodes": [{"name": "mm", "target": "aten.mm.default", "args": [{"node": "a"}, {"node": "b"}], "kwargs": {},
               "meta": {"shape": [256, 640], "stride": [640, 1], "dtype": "float32"}}],
    "outputs": [{"node": "mm", "shape": [256, 640], "stride": [640, 1], "dtype": "float32"}],
}


def corpus(tmp_path) -> str:
    directory = str(tmp_path / "corpus")
    write_collected(directory, CollectedGraph("inference_0", json.dumps(MATMUL), json.dumps({"target": "trn2"})))
    return directory


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=300)


def test_the_same_build_lowers_the_same_program(tmp_path):
    proc = run("--base", OPT, "--corpus", corpus(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 same of 1 graphs (phase unroll)" in proc.stdout


def test_a_different_lowering_is_reported(tmp_path):
    # A "base" whose output has one more instruction-like line.
    fake = tmp_path / "base-opt"
    fake.write_text(f'#!/bin/sh\n"{os.path.abspath(OPT)}" "$@" || exit 1\n'
                    'for a in "$@"; do last="$a"; done\necho "// extra" >> "$last"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    proc = run("--base", str(fake), "--corpus", corpus(tmp_path), "--phase", "tile")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "differ" in proc.stdout and "inference_0" in proc.stdout
    assert "1 differ of 1 graphs (phase tile)" in proc.stdout
