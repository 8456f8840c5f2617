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

A table may also hold ``XFAIL_SAMPLES``: a list of ``(key, predicate, reason)``
for failures confined to particular samples (``predicate(sample_input) ->
bool``, e.g. ``lambda s: s.kwargs.get("reduce") == "multiply"``). Matching
samples must fail and every other sample of the case must pass, so the entry
is strict in the sampled run and in the full one alike, whichever samples each
selects. A case-level entry for the same case takes precedence.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

from claims import CLAIMS
from xfail_predicates import at

Key = tuple[str, str, str, str]
SampleEntry = tuple[Key, Callable[[Any], bool], str]


def _check_key(area: str, key: Any, reason: Any) -> None:
    if not isinstance(key, tuple) or len(key) != 4 or not isinstance(reason, str) or not reason:
        raise ValueError(f"xfail_{area}.py: bad entry {key!r}: {reason!r}")


def _load() -> tuple[dict[Key, str], list[SampleEntry]]:
    table: dict[Key, str] = {}
    sample_entries: list[SampleEntry] = []
    for area in CLAIMS:
        module = importlib.import_module(f"xfail_{area}")
        for key, reason in module.XFAIL.items():
            _check_key(area, key, reason)
            if key in table:
                raise ValueError(f"xfail_{area}.py: {key!r} is listed twice")
            table[key] = reason
        for entry in getattr(module, "XFAIL_SAMPLES", []):
            if len(entry) != 3 or not callable(entry[1]):
                raise ValueError(f"xfail_{area}.py: bad sample entry {entry!r}")
            _check_key(area, entry[0], entry[2])
            sample_entries.append(entry)
    return table, sample_entries


TABLE, SAMPLE_ENTRIES = _load()


def _candidates(name: str, variant: str, dtype: str, mode: str):
    for v in (variant, "*"):
        for d in (dtype, "*"):
            for m in (mode, "*"):
                yield (name, v, d, m)


def lookup(name: str, variant: str, dtype: str, mode: str) -> Optional[str]:
    """The reason this case is expected to fail, or None."""
    for key in _candidates(name, variant, dtype, mode):
        reason = TABLE.get(key)
        if reason is not None:
            return reason
    return None


def sample_reason(
    name: str, variant: str, dtype: str, mode: str, sample: Any, index: int = -1
) -> Optional[str]:
    """The reason this one sample is expected to fail (XFAIL_SAMPLES), or None."""
    keys = set(_candidates(name, variant, dtype, mode))
    for key, predicate, reason in SAMPLE_ENTRIES:
        if key not in keys:
            continue
        matched = index in predicate.indices if isinstance(predicate, at) else predicate(sample)
        if matched:
            return reason
    return None

