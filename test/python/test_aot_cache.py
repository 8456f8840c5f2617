"""Warm starts through AOTAutograd's cache (python/trnc/aot_cache.py, docs/cache.md):
a second process hits AOTAutograd's cache and compiles nothing; a changed trnc
misses; a missing or damaged artifact behind a hit is recompiled, with the right
answer; entries of another trnc are refused on load.

Each run is a fresh process (cache_workers/gpt_step_worker.py) with its own
TRNC_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR (where AOTAutograd's cache lives).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest
import torch

import trnc
from helpers import BACKEND, needs_native

pytestmark = needs_native

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "cache_workers", "gpt_step_worker.py")


@pytest.fixture
def dirs(tmp_path):
    return {"TRNC_CACHE_DIR": str(tmp_path / "trnc"), "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "torch")}


def step(dirs: dict, **env_extra: str) -> dict:
    env = {**os.environ, **dirs, **env_extra}
    env.pop("TRNC_DISABLE_CACHE", None)
    out = subprocess.run([sys.executable, WORKER], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["loss_error"] < 1e-5 and result["max_grad_error"] < 1e-4, result  # matches eager
    return result


def artifacts(directory: str) -> list[str]:
    return [os.path.join(root, f) for root, _, files in os.walk(directory) for f in files if f.endswith(".trnc")]


def test_warm_process_hits_aotautograd_cache_and_compiles_nothing(dirs):
    cold = step(dirs)
    assert cold["aot"]["autograd_cache_miss"] == 1 and cold["aot"]["autograd_cache_saved"] == 1
    assert cold["graphs"] == {"forward": 1, "backward": 1} and cold["loaded"] == {}
    assert cold["pipeline_runs"] == 2

    warm = step(dirs)
    assert warm["aot"]["autograd_cache_hit"] == 1 and warm["aot"]["autograd_cache_miss"] == 0
    assert warm["graphs"] == {}  # no AOTAutograd trace, no export, no compile
    assert warm["loaded"] == {"forward": 1, "backward": 1}  # what the backend's stats report instead
    assert warm["pipeline_runs"] == 0
    assert (warm["trnc_cache"]["hits"], warm["trnc_cache"]["compiles"]) == (2, 0)  # both artifacts read
    assert warm["cache_warnings"] == []
    assert warm["loss"] == cold["loss"] and warm["grad_sums"] == cold["grad_sums"]


def test_changed_trnc_identity_misses(dirs):
    step(dirs)
    other = step(dirs, TRNC_COMPILER_IDENTITY_OVERRIDE="another-build")
    assert other["aot"]["autograd_cache_hit"] == 0 and other["aot"]["autograd_cache_miss"] == 1
    assert other["graphs"] == {"forward": 1, "backward": 1}
    assert other["pipeline_runs"] == 2  # the artifact key changed too


def test_changed_option_misses(dirs):
    step(dirs)
    other = step(dirs, TRNC_DUMP_DIR=os.path.join(dirs["TRNC_CACHE_DIR"], "dumps"))
    assert other["aot"]["autograd_cache_hit"] == 0 and other["aot"]["autograd_cache_miss"] == 1
    assert other["pipeline_runs"] == 0  # dump_dir is output-neutral: the artifacts are hits


def test_deleted_artifacts_behind_a_hit_are_recompiled(dirs):
    cold = step(dirs)
    for path in artifacts(dirs["TRNC_CACHE_DIR"]):
        os.remove(path)
    warm = step(dirs)
    assert warm["aot"]["autograd_cache_hit"] == 1
    assert warm["graphs"] == {}  # AOTAutograd was still skipped
    assert warm["pipeline_runs"] == 2  # from the graph JSON the entry holds
    assert warm["loss"] == cold["loss"] and warm["grad_sums"] == cold["grad_sums"]
    assert len(artifacts(dirs["TRNC_CACHE_DIR"])) == 2


def test_corrupted_artifacts_behind_a_hit_warn_and_are_recompiled(dirs):
    cold = step(dirs)
    for path in artifacts(dirs["TRNC_CACHE_DIR"]):
        with open(path, "r+b") as f:
            f.seek(os.path.getsize(path) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
    warm = step(dirs)
    assert warm["aot"]["autograd_cache_hit"] == 1
    assert warm["pipeline_runs"] == 2
    assert len(warm["cache_warnings"]) == 2, warm["cache_warnings"]
    assert warm["loss"] == cold["loss"] and warm["grad_sums"] == cold["grad_sums"]


def test_corrupted_aotautograd_entry_is_a_miss(dirs):
    cold = step(dirs)
    entries = [os.path.join(root, f) for root, _, files in os.walk(os.path.join(dirs["TORCHINDUCTOR_CACHE_DIR"], "aotautograd"))
               for f in files]
    assert len(entries) == 1
    with open(entries[0], "wb") as f:
        f.write(b"not a pickle")
    warm = step(dirs)
    assert warm["aot"]["autograd_cache_hit"] == 0
    assert warm["graphs"] == {"forward": 1, "backward": 1}  # traced again
    assert warm["pipeline_runs"] == 0  # the artifacts are still hits
    assert warm["loss"] == cold["loss"]


# ------------------------------------------------------------------ Dynamo's precompile


def test_caching_precompile_skips_dynamo_too(dirs):
    cold = step(dirs, WORKER_PRECOMPILE="1")
    assert cold["dynamo_cache"] == {"dynamo_cache_miss": 1}
    warm = step(dirs, WORKER_PRECOMPILE="1")
    assert warm["dynamo_cache"] == {"dynamo_cache_hit": 1}
    assert warm["aot"]["autograd_cache_hit"] == warm["aot"]["autograd_cache_miss"] == 0  # no AOTAutograd call at all
    assert warm["graphs"] == {} and warm["pipeline_runs"] == 0
    assert warm["loss"] == cold["loss"] and warm["grad_sums"] == cold["grad_sums"]


def test_caching_precompile_package_of_another_trnc_fails_clearly(dirs):
    """Dynamo's package is keyed by the function only (not by backend, options or
    trnc): the entry's own tag refuses it on install with StaleEntryError. Torch
    2.13 cannot fall back from a failed install (eval_frame.py re-initializes the
    package it already initialized: "CompilePackage is already initialized"), so
    torch.compile fails, naming trnc's reason; nothing runs."""
    step(dirs, WORKER_PRECOMPILE="1")
    env = {**os.environ, **dirs, "WORKER_PRECOMPILE": "1", "TRNC_COMPILER_IDENTITY_OVERRIDE": "another-build"}
    out = subprocess.run([sys.executable, WORKER], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode != 0 and out.stdout == ""
    assert "StaleEntryError: trnc: cached graph" in out.stderr and "another trnc build" in out.stderr
    assert "delete" in out.stderr and os.path.join(dirs["TORCHINDUCTOR_CACHE_DIR"], "dynamo") in out.stderr


# ------------------------------------------------------------------ in process


def compiled_output_codes(tmp_path, monkeypatch):
    """The TrncOutputCodes AOTAutograd stored for a small training graph."""
    from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torch"))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    x = torch.randn(4, 8)
    torch.compile(model, backend=BACKEND, dynamic=False)(x).sum().backward()
    root = AOTAutogradCache._get_tmp_dir()
    (path,) = [os.path.join(r, f) for r, _, files in os.walk(root) for f in files]
    with open(path, "rb") as f:
        entry = pickle.load(f)
    return entry.compiled_fw.result, entry.compiled_bw.result


def test_entry_of_another_trnc_is_refused_on_load(tmp_path, monkeypatch):
    """The precompile path (Dynamo's cache) loads entries without AOTAutograd's key:
    the entry's own tag is checked."""
    from trnc import aot_cache

    fw, bw = compiled_output_codes(tmp_path, monkeypatch)
    assert isinstance(fw, aot_cache.TrncOutputCode) and fw.compiled is None  # pickled without the executable
    fw.tag = "trnc-another"
    with pytest.raises(aot_cache.StaleEntryError, match="another trnc"):
        fw.post_compile([], None, {})
    bw.key = "0" * 64
    with pytest.raises(aot_cache.StaleEntryError, match="artifact key"):
        bw.post_compile([], None, {})


def test_loaded_output_code_runs_like_the_original(tmp_path, monkeypatch):
    fw, _ = compiled_output_codes(tmp_path, monkeypatch)
    with pytest.raises(trnc.TrncError, match="not rebuilt"):
        fw([])
    fw.post_compile([], None, {})
    assert fw.compiled is not None


def test_collection_mode_and_disabled_cache_bypass_aotautograd_cache(tmp_path, monkeypatch):
    from trnc import aot_cache, collect
    from trnc.options import CompilerOptions

    assert aot_cache.usable(CompilerOptions())
    assert not aot_cache.usable(CompilerOptions(cache=False))
    with collect.collecting(lambda graph: None):
        assert not aot_cache.usable(CompilerOptions())
    monkeypatch.setattr(torch.compiler.config, "force_disable_caches", True)
    assert not aot_cache.usable(CompilerOptions())
