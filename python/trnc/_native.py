"""Access to the compiled extension ``trnc._C``, loaded on first use.

Importing ``trnc`` (and exporting graphs) works without the extension; only
compiling and running need it. A missing extension becomes a ``TrncError``
that says how to build it, instead of an ImportError deep inside Dynamo.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import TrncError

_module: ModuleType | None = None


def native() -> ModuleType:
    """Return ``trnc._C``, importing it on first use."""
    global _module
    if _module is None:
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
