"""Sample predicates for the XFAIL_SAMPLES entries of the xfail tables (a module
of its own so the tables and xfails.py can both import it)."""

from __future__ import annotations

from typing import Any


class at:  # noqa: N801 (reads as a predicate in the tables: at(8, 12))
    """A sample predicate matching sample indices (``op.sample_inputs`` order
    under ``torch.manual_seed(0)``), for failures no argument form describes."""

    def __init__(self, *indices: int) -> None:
        self.indices = frozenset(indices)

    def __call__(self, sample: Any) -> bool:
        raise TypeError("at(...) matches by index; sample_reason handles it")
