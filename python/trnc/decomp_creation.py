"""trnc decomposition rules for creation operators the Hugging Face sweep
needed (docs/decompositions.md, "Hugging Face models").

* ``eye(n, m)``: PyTorch's rule compares two *uint8* aranges, a dtype trnc
  does not compute in (kimi_linear, bailing_hybrid add ``torch.eye(chunk)``
  to their attention). Here: a float32 iota column == a float32 iota row
  (exact below 2**24, far beyond any eye that fits HBM), cast to the dtype
  asked for. Three ops the compiler lowers: ``arange``, ``eq``, ``_to_copy``.
"""

from __future__ import annotations

import torch

__all__ = ["rules"]

aten = torch.ops.aten


def _eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=None):
    m = n if m is None else m
    dtype = dtype or torch.get_default_dtype()
    rows = aten.view.default(aten.arange.default(n, dtype=torch.float32), [n, 1])
    cols = aten.view.default(aten.arange.default(m, dtype=torch.float32), [1, m])
    hit = aten.eq.Tensor(rows, cols)
    return hit if dtype == torch.bool else aten._to_copy.default(hit, dtype=dtype)


def rules() -> dict:
    return {
        aten.eye.default: _eye,
        aten.eye.m: _eye,
    }
