"""Expected failures of the OpInfo sweep: the per-area tables merged, looked up.

Each area's table (xfail_<area>.py) is a dict ``XFAIL`` mapping
``(op name, variant, dtype, mode)`` to a reason string, where

* op name and variant are the OpInfo's ``name`` and ``variant_test_name``
  ("div", "trunc_rounding"; variant "" when the OpInfo has none);
* dtype is "float32", "bfloat16", "float16", "int32", "int64", "bool";
* mode is "fwd" (inference graph) or "bwd" (training forward + backward);
* variant, dtype and mode may be "*" (any).

The most specific entry wins (exact beats wildcard; dtype before mode).
An entry means "at least one sample of this case fails"; when every sample
passes, the run fails (strict): delete the entry as the operator lands.
"""

from __future__ import annotations

import importlib
from typing import Optional

from claims import CLAIMS

Key = tuple[str, str, str, str]


def _load() -> dict[Key, str]:
    table: dict[Key, str] = {}
    for area in CLAIMS:
        module = importlib.import_module(f"xfail_{area}")
        for key, reason in module.XFAIL.items():
            if len(key) != 4 or not isinstance(reason, str) or not reason:
                raise ValueError(f"xfail_{area}.py: bad entry {key!r}: {reason!r}")
            if key in table:
                raise ValueError(f"xfail_{area}.py: {key!r} is listed twice")
            table[key] = reason
    return table


TABLE = _load()


def lookup(name: str, variant: str, dtype: str, mode: str) -> Optional[str]:
    """The reason this case is expected to fail, or None."""
    for v in (variant, "*"):
        for d in (dtype, "*"):
            for m in (mode, "*"):
                reason = TABLE.get((name, v, d, m))
                if reason is not None:
                    return reason
    return None

