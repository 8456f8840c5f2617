"""trnc's logging, through ``torch._logging`` (``TORCH_LOGS``).

- ``TORCH_LOGS=trnc`` (or ``torch._logging.set_logs(modules={"trnc": logging.INFO})``):
  the compiler's decisions, at INFO: each graph received, cache hits and misses,
  compile times, per-shape compilations of dynamic graphs. ``+trnc`` adds DEBUG.
- ``TORCH_LOGS=trnc_graph``: the graph JSON of every graph compiled.
- ``TORCH_LOGS=trnc_ir``: its IR after each compiler phase.

The names are registered while torch is imported (the ``_trnc_torch_logs`` entry
point) and again here. ``warn_at_user_line`` issues a warning attributed to the
user's source line of an FX node, not to trnc's file.
"""

from __future__ import annotations

import logging
import warnings
from typing import Optional, Type

import torch._logging

import _trnc_torch_logs

__all__ = ["log", "graph_log", "ir_log", "warn_at_user_line"]

_trnc_torch_logs.register()

log = logging.getLogger("trnc")
graph_log = torch._logging.getArtifactLogger("trnc", "trnc_graph")
ir_log = torch._logging.getArtifactLogger("trnc", "trnc_ir")


def warn_at_user_line(message: str, category: Type[Warning], location: Optional[object],
                      stacklevel: int = 3) -> None:
    """Warn at `location`, the user's source line of an FX node (an
    errors.SourceLocation or a graph JSON ``loc`` dict with file and line); without
    one, at the frame `stacklevel` above the caller, as ``warnings.warn`` would."""
    get = location.get if isinstance(location, dict) else (lambda k: getattr(location, k, None))
    if location is None or not get("file"):
        warnings.warn(message, category, stacklevel=stacklevel)
        return
    warnings.warn_explicit(message, category, get("file"), int(get("line") or 0))
