"""Trust boundaries (issue 12): what the cache serves is bound to the graph that
asked for it, the runtime checks every buffer against the artifact, and hostile
files in a cache directory are a miss or a clear error, never a hang, a crash or
a wrong answer. The torture cases (planted, swapped, forged, FIFO, symlink,
wrong-type manifest, foreign files, read-only, full disk) each assert a correct
result or a clear error.

conftest.py gives every test its own TRNC_CACHE_DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import warnings

import pytest
import torch

import trnc
import trnc.cache as cache
from helpers import chain_graph, needs_native
from trnc.cli import cache as cache_cli
from trnc.compiled_graph import buffer_of

pytestmark = needs_native

RELU_TIMES_2 = [("aten.relu.default", []), ("aten.mul.Tensor", [2.0])]
SIGMOID_PLUS_1 = [("aten.sigmoid.default", []), ("aten.add.Tensor", [1.0])]


def native():
    return trnc._native.native()


def run_artifact(artifact: bytes, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    native().Executable(artifact).run([buffer_of(x)], [buffer_of(out)])
    return out


def entry_of(graph: str) -> cache.Entry:
    k = cache.key(graph)
    (found,) = [e for e in cache.entries() if e.key == k]
    return found


def compile_warned(graph: str) -> tuple[bytes, bool, list[str]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        artifact, hit = cache.compile_graph(graph)
    return artifact, hit, [str(w.message) for w in record if issubclass(w.category, cache.TrncCacheWarning)]


# ------------------------------------------------------------------ bound entries


@pytest.mark.parametrize("with_manifest", [False, True])
def test_swapped_entry_is_a_miss_not_a_wrong_answer(with_manifest):
    a, b = chain_graph(RELU_TIMES_2, name="a"), chain_graph(SIGMOID_PLUS_1, name="b")
    cache.compile_graph(a)
    cache.compile_graph(b)
    ea, eb = entry_of(a), entry_of(b)
    shutil.copyfile(eb.path, ea.path)  # same I/O layout, another graph
    if with_manifest:
        shutil.copyfile(eb.manifest_path, ea.manifest_path)
    problems = cache.verify()
    assert [e.key for e, _ in problems] == [ea.key] and "stored under key" in problems[0][1]
    artifact, hit, got = compile_warned(a)
    assert hit is False and len(got) == 1 and "stored under key" in got[0]
    x = torch.randn(8)
    torch.testing.assert_close(run_artifact(artifact, x), torch.relu(x) * 2)
    assert cache.compile_graph(a)[1] is True and cache.verify() == []  # replaced


def test_planted_artifact_with_a_larger_region_is_a_miss():
    a, big = chain_graph(RELU_TIMES_2, name="a"), chain_graph(RELU_TIMES_2, name="big", n=4096)
    cache.compile_graph(a)
    cache.compile_graph(big)
    ea, eb = entry_of(a), entry_of(big)
    shutil.copyfile(eb.path, ea.path)
    shutil.copyfile(eb.manifest_path, ea.manifest_path)
    artifact, hit, got = compile_warned(a)
    assert hit is False and len(got) == 1
    x = torch.randn(8)
    torch.testing.assert_close(run_artifact(artifact, x), torch.relu(x) * 2)


def test_forged_entry_without_the_secret_is_a_miss():
    a = chain_graph(RELU_TIMES_2, name="a")
    cache.compile_graph(a)
    e = entry_of(a)
    manifest = json.loads(open(e.manifest_path).read())
    manifest["mac"] = "0" * 64  # what a writer without the secret can do
    with open(e.manifest_path, "w") as f:
        json.dump(manifest, f)
    (problem,) = cache.verify()
    assert "fails authentication" in problem[1]
    _, hit, got = compile_warned(a)
    assert hit is False and len(got) == 1 and "fails authentication" in got[0]


def test_secret_is_private():
    cache.compile_graph(chain_graph(RELU_TIMES_2))
    st = os.stat(os.path.join(cache.cache_dir(), "secret"))
    assert st.st_mode & 0o777 == 0o600


# ------------------------------------------------------------------ runtime checks


def test_executable_run_checks_every_buffer():
    artifact, _ = cache.compile_graph(chain_graph(RELU_TIMES_2, n=8))
    exe = native().Executable(artifact)
    x, out = torch.randn(8), torch.empty(8)
    assert "input 0 f32 [8] strides [1] bytes 32" in exe.io_signature
    exe.run([buffer_of(x)], [buffer_of(out)])
    torch.testing.assert_close(out, torch.relu(x) * 2)

    def refused(ins, outs, match):
        with pytest.raises(ValueError, match=match):
            exe.run(ins, outs)

    refused([buffer_of(x.to(torch.bfloat16))], [buffer_of(out)], r"input 0: the artifact expects f32\[8\] strides \[1\], got bf16")
    refused([buffer_of(torch.randn(16))], [buffer_of(out)], r"got f32\[16\]")
    refused([buffer_of(torch.randn(16)[::2])], [buffer_of(out)], r"strides \[2\]")
    short = torch.empty(4)  # torch cannot make an out-of-bounds view: describe one directly
    refused([(short.data_ptr(), 16, "f32", [8], [1])], [buffer_of(out)], "holds 16 bytes of storage")
    assert buffer_of(torch.empty(12)[8:])[1] == 16  # bytes from the view's start to the storage end
    refused([buffer_of(x)], [buffer_of(torch.empty(4))], "output 0")
    refused([], [buffer_of(out)], "takes 1 inputs, got 0")
    with pytest.raises(TypeError, match="must be a .data_ptr, nbytes, dtype, shape, strides. tuple"):
        exe.run([x.data_ptr()], [out.data_ptr()])


# ------------------------------------------------------------------ hostile files


_HOSTILE_SCRIPT = r"""
import json, os, resource, sys, warnings
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))  # /dev/zero cannot eat the machine
import trnc.cache as c
graph = sys.argv[1]
out = {}
for kind in ("fifo", "symlink"):
    c.clear()
    c.compile_graph(graph)
    (e,) = c.entries()
    os.remove(e.path)
    if kind == "fifo":
        os.mkfifo(e.path)
    else:
        os.symlink("/dev/zero", e.path)
    problems = [p for _, p in c.verify()]
    with warnings.catch_warnings(record=True) as r:
        warnings.simplefilter("always")
        _, hit = c.compile_graph(graph)
    out[kind] = {"problems": problems, "hit": hit, "warnings": [str(w.message) for w in r],
                 "regular": os.path.isfile(e.path) and not os.path.islink(e.path)}
print(json.dumps(out))
"""


def test_fifo_and_symlink_entries_neither_hang_nor_read_forever():
    proc = subprocess.run(
        [sys.executable, "-c", _HOSTILE_SCRIPT, chain_graph(RELU_TIMES_2)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "is a FIFO" in r["fifo"]["problems"][0]
    assert "is a symbolic link" in r["symlink"]["problems"][0]
    for kind in ("fifo", "symlink"):
        assert r[kind]["hit"] is False and len(r[kind]["warnings"]) == 1, r[kind]
        assert r[kind]["regular"]  # the store replaced the name with a real entry


def test_manifest_fields_of_the_wrong_type(capsys):
    g = chain_graph(RELU_TIMES_2)
    cache.compile_graph(g)
    e = entry_of(g)
    manifest = json.loads(open(e.manifest_path).read())
    manifest.update(hits="many", graph_name=3, compile_seconds=[1])
    with open(e.manifest_path, "w") as f:
        json.dump(manifest, f)
    assert cache.compile_graph(g)[1] is True  # compiles of that graph still work
    assert cache.entries()[0].hits == 1  # the hit reset the bad count
    s = cache.stats()
    assert s["entries"] == 1 and s["compile_seconds_saved"] == 0.0
    args = argparse.Namespace(cache_dir=None)
    assert cache_cli.run_ls(args) == 0 and cache_cli.run_stats(args) == 0
    assert "?" in capsys.readouterr().out  # graph_name 3 reads as absent
    (problem,) = cache.verify()
    assert "manifest field 'graph_name' is int" in problem[1]


def shard_of(graph: str) -> str:
    return os.path.dirname(entry_of(graph).path)


def test_prune_and_clear_delete_only_what_trnc_wrote():
    g = chain_graph(RELU_TIMES_2)
    cache.compile_graph(g)
    shard, k = shard_of(g), cache.key(g)
    other = "f" * 64
    foreign = {
        "notes.json": b'{"mine": true}',
        "data.tmp-12345678": b"user data",
        f"{other}.json": b"not json at all",  # named like a manifest, is not one
        f"{other}.trnc.tmp-abcdef12": b"user data",  # named like a temp file, is not one
        "README": b"hello",
    }
    old = time.time() - 3600
    for name, data in foreign.items():
        with open(os.path.join(shard, name), "wb") as f:
            f.write(data)
        os.utime(os.path.join(shard, name), (old, old))
    # What trnc itself leaves behind when killed: a stale temp file, an orphan manifest.
    ours = {f"{k}.trnc.tmp-0badc0de": b"TRNCART\0", f"{other[:-1]}e.json": b'{"key": "x"}'}
    for name, data in ours.items():
        with open(os.path.join(shard, name), "wb") as f:
            f.write(data)
        os.utime(os.path.join(shard, name), (old, old))
    cache.prune(0)
    assert cache.clear() == 0
    left = set(os.listdir(shard))
    assert set(foreign) <= left and not (set(ours) & left)


def test_clear_removes_dead_lock_files():
    g = chain_graph(RELU_TIMES_2)
    cache.compile_graph(g)
    shard, k = shard_of(g), cache.key(g)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = socket.gethostname()
    files = {
        f"{k}.trnc.lock": f"{host} {dead.pid}",  # owner died
        f"{'a' * 64}.trnc.lock-0123abcd": f"{host} {dead.pid}",
        f"{'b' * 64}.trnc.lock": f"{host} {os.getpid()}",  # a live owner: kept
    }
    for name, text in files.items():
        with open(os.path.join(shard, name), "w") as f:
            f.write(text)
    assert cache.clear() == 1
    assert set(os.listdir(shard)) == {f"{'b' * 64}.trnc.lock"}


def test_read_only_cache_reports_what_it_could_not_remove(monkeypatch, capsys):
    cache.compile_graph(chain_graph(RELU_TIMES_2))

    def refuse(path):
        raise PermissionError(30, "Read-only file system", path)

    args = argparse.Namespace(cache_dir=cache.cache_dir(), yes=True, max_size="0")
    with monkeypatch.context() as m:
        m.setattr(os, "remove", refuse)  # root ignores permission bits: simulate EROFS
        assert cache_cli.run_clear(args) == 1
        out, err = capsys.readouterr()
        assert "removed 0 entries" in out and "could not remove" in err and "Read-only" in err
        assert cache_cli.run_prune(args) == 1
        with pytest.raises(trnc.TrncError, match="could not remove"):
            cache.clear()
    assert len(cache.entries()) == 1


def test_clear_of_the_default_cache_asks_first(monkeypatch, capsys):
    cache.compile_graph(chain_graph(RELU_TIMES_2))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert cache_cli.run_clear(argparse.Namespace(cache_dir=None, yes=False)) == 1
    assert len(cache.entries()) == 1 and "nothing removed" in capsys.readouterr().out
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    assert cache_cli.run_clear(argparse.Namespace(cache_dir=None, yes=False)) == 0
    assert cache.entries() == []


def test_lock_timeout_inf_and_nonsense(monkeypatch):
    for value, expected in (("inf", cache.MAX_LOCK_TIMEOUT), ("nan", 600), ("-3", 600), ("lots", 600), ("2.5", 2)):
        monkeypatch.setenv("TRNC_CACHE_LOCK_TIMEOUT", value)
        assert cache._lock_timeout() == expected
    monkeypatch.setenv("TRNC_CACHE_LOCK_TIMEOUT", "inf")
    assert cache.compile_graph(chain_graph(RELU_TIMES_2))[1] is False


# ------------------------------------------------------------------ trnc inspect / profile


def trnc_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trnc.cli", *args], capture_output=True, text=True, timeout=120)


def test_inspect_and_profile_refuse_hostile_files(tmp_path):
    fifo = tmp_path / "fifo.trnc"
    os.mkfifo(fifo)
    garbage = tmp_path / "garbage.trnc"
    garbage.write_bytes(b"TRNCART\0" + os.urandom(2000))
    for tool in ("inspect", "profile"):
        for path, message in ((fifo, "not a regular file"), (garbage, "invalid trnc artifact"), (tmp_path, "is a directory")):
            r = trnc_cli(tool, str(path))
            assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, (tool, path, r.stderr)


def test_inspect_memory_is_bounded_by_the_file_not_the_artifact(tmp_path):
    # A real artifact whose input is 4 GiB (only 8 elements are read): inspect
    # describes it without allocating its regions.
    big = {"shape": [1 << 30], "stride": [1], "dtype": "float32"}
    small = {"shape": [8], "stride": [1], "dtype": "float32"}
    graph = json.dumps({
        "schema": "trnc.graph", "version": 1, "name": "head",
        "inputs": [{"name": "x", **big}],
        "nodes": [
            {"name": "s", "target": "aten.slice.Tensor", "args": [{"node": "x"}, 0, 0, 8, 1], "kwargs": {},
             "meta": small, "loc": None, "stack_trace": ""},
            {"name": "m", "target": "aten.mul.Tensor", "args": [{"node": "s"}, 2.0], "kwargs": {},
             "meta": small, "loc": None, "stack_trace": ""},
        ],
        "outputs": [{"node": "m", **small}],
    })
    artifact, _ = cache.compile_graph(graph)
    assert len(artifact) < 1 << 20
    path = tmp_path / "head.trnc"
    path.write_bytes(artifact)
    r = trnc_cli("inspect", str(path))
    assert r.returncode == 0, r.stderr
    assert "input 0: f32[1073741824]" in r.stdout and "estimated time: skipped" in r.stdout


def test_inspect_bounds_the_estimate_and_survives_hostile_metadata(monkeypatch):
    from trnc.cli import inspect as inspect_cli

    class Hostile:
        """What _C.inspect_artifact returns for a verified but hostile artifact."""

        def inspect_artifact(self, data):
            return {
                "metadata_json": "[" * 100000,  # RecursionError in json.loads
                "regions": [{"kind": "input", "index": 0, "dtype": "f32", "shape": [4], "strides": [1], "bytes": 16}],
                "scratch_arena_bytes": 0,
                "engines": [{"engine": "vector", "instructions": 1, "opcodes": {}, "elements": 2.0**48}],
            }

        def Executable(self, data):
            raise AssertionError("the estimate must not run")

    monkeypatch.setattr(inspect_cli, "native", lambda: Hostile())
    info = inspect_cli.describe(b"", disassemble=False)
    assert info["metadata"] == {"invalid_metadata_json": True}
    assert info["estimated_time_ns"] is None and "touch 2.81e+14 elements" in info["estimate_skipped"]
