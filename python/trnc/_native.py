"""Access to the compiled extension ``trnc._C``, loaded on first use.

Importing ``trnc`` (and exporting graphs) works without the extension; only
compiling and running need it. A missing extension becomes a ``TrncError``
that says how to build it, instead of an ImportError deep inside Dynamo.

The simulator's matmuls are OpenBLAS sgemm calls. OpenBLAS picks its kernels
from the CPU model when the library loads, and its 0.3.21 (Debian 12) does not
know recent Xeons (e.g. family 6 model 207): it falls back to its SSE3
"Prescott" kernels, 4-8x slower than the AVX-512 ones the CPU runs. So before
the extension (and with it OpenBLAS) loads, ``OPENBLAS_CORETYPE`` (OpenBLAS's
documented override) is set from the CPU's flags, unless the user set it, and
``OPENBLAS_NUM_THREADS`` to 1 unless set: the simulator calls BLAS on its own
thread only (sim/TensorEngineSemantics.cpp), so OpenBLAS's idle workers would
only spin against torch's threads.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

from .errors import TrncError

_module: ModuleType | None = None


def _blas_core() -> str | None:
    """The OpenBLAS kernel family this CPU runs: SkylakeX (AVX-512), Haswell
    (AVX2 + FMA), or None (leave OpenBLAS's own choice)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "SkylakeX"
    if {"avx2", "fma"} <= set(flags):
        return "Haswell"
    return None


def native() -> ModuleType:
    """Return ``trnc._C``, importing it on first use."""
    global _module
    if _module is None:
        core = None if "OPENBLAS_CORETYPE" in os.environ else _blas_core()
        if core:
            os.environ["OPENBLAS_CORETYPE"] = core
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            _module = importlib.import_module("trnc._C")
        except ImportError as exc:
            raise TrncError(
                "trnc._C (the compiler and simulator extension) is not built or not importable: "
                f"{exc}. Build and install it with `pip install --no-build-isolation .` "
                "from the repository root."
            ) from exc
    return _module


def available() -> bool:
    """True when the extension can be imported."""
    try:
        native()
    except TrncError:
        return False
    return True
