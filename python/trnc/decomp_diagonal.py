"""trnc decomposition rules for diagonals (docs/decompositions.md, "Indexing,
data movement and tensor creation").

A diagonal of the [n, m] plane (dim1, dim2) is every (m + 1)-th element of
that plane read row-major, starting at ``offset`` (above the main diagonal)
or ``-offset * m`` (below it). So, with the plane moved last and flattened:

* ``diagonal`` (einsum with a repeated index, ``torch.diagonal``, ``trace``):
  one strided ``slice`` of the flat view: no instruction when the plane is
  already the last two dims of a contiguous tensor, else one contiguous copy
  of the permuted input first.
* ``diagonal_scatter`` (so ``diagonal_backward``, whose core rule is zeros +
  diagonal_scatter): ``slice_scatter`` with step m + 1 on the flat view
  (decomp_data_movement's rule: a cat and a view, no indirect DMA).
* ``diag_embed``: ``diagonal_scatter`` into zeros, instead of the core rule's
  two aranges, an ``eq`` and a ``where`` over the whole output.
"""

from __future__ import annotations

import torch

__all__ = ["rules"]

aten = torch.ops.aten


def _plane(x, offset, dim1, dim2):
    """(permutation moving dim1, dim2 last, n, m, flat start, diagonal length)."""
    rank = x.dim()
    d1, d2 = dim1 % rank, dim2 % rank
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    perm = [d for d in range(rank) if d not in (d1, d2)] + [d1, d2]
    n, m = x.shape[d1], x.shape[d2]
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    return perm, n, m, start, length


def _flat(x, perm):
    """x with its plane moved last, as a contiguous [..., n * m] view."""
    if perm != list(range(x.dim())) or not x.is_contiguous():
        x = aten.clone.default(aten.permute.default(x, perm), memory_format=torch.contiguous_format)
    return aten.view.default(x, list(x.shape[:-2]) + [x.shape[-2] * x.shape[-1]])


def _diagonal(x, offset=0, dim1=0, dim2=1):
    perm, n, m, start, length = _plane(x, offset, dim1, dim2)
    flat = _flat(x, perm)
    if length == 0:
        return aten.slice.Tensor(flat, -1, 0, 0)
    return aten.slice.Tensor(flat, -1, start, start + (length - 1) * (m + 1) + 1, m + 1)


def _diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    perm, n, m, start, length = _plane(x, offset, dim1, dim2)
    flat = _flat(x, perm)
    if length == 0:
        return aten.clone.default(x)
    end = start + (length - 1) * (m + 1) + 1
    out = aten.slice_scatter.default(flat, src, flat.dim() - 1, start, end, m + 1)
    out = aten.view.default(out, [x.shape[d] for d in perm])
    if perm == list(range(x.dim())):
        return out
    inverse = [perm.index(d) for d in range(x.dim())]
    return aten.clone.default(aten.permute.default(out, inverse), memory_format=torch.contiguous_format)


def _diag_embed(t, offset=0, dim1=-2, dim2=-1):
    rank = t.dim() + 1
    d1, d2 = dim1 % rank, dim2 % rank
    size = t.shape[-1] + abs(offset)
    shape = list(t.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    zeros = aten.full.default(shape, 0, dtype=t.dtype, device=t.device)
    return _diagonal_scatter(zeros, t, offset, d1, d2)


def rules() -> dict:
    return {
        aten.diagonal.default: _diagonal,
        aten.diagonal_scatter.default: _diagonal_scatter,
        aten.diag_embed.default: _diag_embed,
    }
