"""trnc: a torch.compile backend ("neuron") for AWS Trainium NeuronCores.

Graphs are compiled by trnc's MLIR compiler and run on the bundled NeuronCore
simulator (nothing executes on Trainium hardware).

    model = torch.compile(model, backend="neuron")

The public names below load on first use (PEP 562), so ``import trnc`` alone
does not import torch and the ``trnc`` command starts fast. Imported after
torch (the usual ``import torch; import trnc``), everything loads at once as
before, including the ``torch.ops.trnc`` operators (indirect_ops.py).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

__version__ = "0.1.0"

# name -> (module, attribute or None for the module itself)
_PUBLIC = {
    "neuron": ("backend", "neuron"),
    "TrncError": ("errors", "TrncError"),
    "CompileError": ("errors", "CompileError"),
    "UnsupportedOperatorError": ("errors", "UnsupportedOperatorError"),
    "CompilerOptions": ("options", "CompilerOptions"),
    "profiling": ("profiling", None),
    "last_profile": ("profiling", "last_profile"),
    "check_support": ("support", "check_support"),
    "SupportReport": ("support", "SupportReport"),
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'trnc' has no attribute {name!r}")
    module, attribute = _PUBLIC[name]
    value = importlib.import_module(f"{__name__}.{module}")
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))


if "torch" in sys.modules:
    from . import indirect_ops, attention_ops  # noqa: F401  (define torch.ops.trnc.*)
    from . import backend as _backend  # noqa: F401
    for _name in _PUBLIC:
        __getattr__(_name)
