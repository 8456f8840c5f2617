"""Facts about the machine and software a benchmark run used (for RESULTS.md)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

import torch

import trnc
from trnc._native import native


def _run(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _lscpu(field: str) -> str:
    for line in _run("lscpu").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == field:
            return value.strip()
    return "?"


def _memory() -> str:
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        return f"{kib / 2**20:.1f} GiB"
    except (OSError, ValueError, IndexError):
        return "?"


def cxx_compiler() -> str:
    """The C++ compiler Inductor would use, or '' when none is found."""
    for name in (os.environ.get("CXX", ""), "g++", "c++", "clang++"):
        if name and shutil.which(name):
            return f"{shutil.which(name)} ({_run(name, '--version').splitlines()[0] if _run(name, '--version') else '?'})"
    return ""


def commit() -> str:
    """The short git commit of the benchmarked tree ("?" outside git), "+dirty" with local changes."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    head = _run("git", "-C", repo, "rev-parse", "--short", "HEAD") or "?"
    dirty = _run("git", "-C", repo, "status", "--porcelain", "--untracked-files=no")
    return head + ("+dirty" if dirty else "")


def facts() -> list[tuple[str, str]]:
    return [
        ("CPU", f"{_lscpu('Model name')} ({_lscpu('CPU(s)')} CPUs, {_lscpu('Thread(s) per core')} thread(s)/core)"),
        ("memory", _memory()),
        ("OS", f"{platform.platform()}"),
        ("python", platform.python_version()),
        ("torch", f"{torch.__version__} (intra-op threads: {torch.get_num_threads()})"),
        ("trnc", f"{trnc.__version__}, compiler {native().compiler_identity()}"),
        ("git commit", commit()),
        ("C++ compiler for Inductor", cxx_compiler() or "none found"),
    ]
