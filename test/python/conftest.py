"""pytest set-up for trnc's Python tests: seeds, Dynamo reset, the extension.

End-to-end tests need ``trnc._C`` (``pip install --no-build-isolation .``).
When it is missing they are skipped, unless TRNC_TEST_FAKE_NATIVE=1 asks for
the pure-Python stand-in in fake_native.py (tests of the Python glue only).
"""

import importlib
import os
import sys

import pytest
import torch

_HERE = os.path.dirname(os.path.abspath(__file__))


def _install_native() -> str:
    try:
        importlib.import_module("trnc._C")
        return "real"
    except ImportError:
        if os.environ.get("TRNC_TEST_FAKE_NATIVE") == "1":
            sys.path.insert(0, _HERE)
            import fake_native

            sys.modules["trnc._C"] = fake_native
            return "fake"
        return "missing"


NATIVE = _install_native()

# Every end-to-end run also proves the compiler's semaphores sufficient: the
# simulator's race checker fails a run whose engines could touch the same
# bytes (one writing) unordered. Only the real extension has the checker.
if NATIVE == "real":
    os.environ.setdefault("TRNC_RACE_CHECK", "1")


def pytest_report_header(config):
    return f"trnc._C: {NATIVE}"


def pytest_collection_modifyitems(config, items):
    if NATIVE != "missing":
        return
    skip = pytest.mark.skip(reason="trnc._C is not built (pip install --no-build-isolation .)")
    for item in items:
        if "needs_native" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_native: needs the trnc._C extension (compiler + simulator)")


@pytest.fixture(autouse=True)
def _fresh_state():
    torch.manual_seed(0)
    torch._dynamo.reset()
    import trnc

    trnc.neuron.stats.reset()
    yield
    torch._dynamo.reset()
    torch.compiler.set_default_backend(None)


@pytest.fixture(scope="session", autouse=True)
def _private_torch_cache_dir(tmp_path_factory):
    """PyTorch's caches (AOTAutograd's, which holds trnc's graphs: docs/cache.md,
    "Warm starts"; Inductor's) in a directory of this session, not the user's
    /tmp/torchinductor_$USER: no session hits an entry an earlier one stored.
    Within the session each test's own TRNC_CACHE_DIR (below) is part of the key."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path_factory.mktemp("torch-cache")))
        yield


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory, monkeypatch):
    """A fresh artifact cache per test (docs/cache.md), never ~/.cache/trnc:
    no test hits an entry another test compiled."""
    monkeypatch.setenv("TRNC_CACHE_DIR", str(tmp_path_factory.mktemp("trnc-cache")))
    monkeypatch.delenv("TRNC_DISABLE_CACHE", raising=False)
    import trnc.cache

    trnc.cache.reset_stats()
    yield
