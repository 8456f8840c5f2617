"""``scatter_reduce.two`` with reduce="amax" / "amin" as a dense one-hot
reduction (see docs/decompositions.md, "Indexing: embedding, index_select,
gather, scatter, index_put, nll_loss"). blt's patch_reduce pools byte
embeddings into patches this way.

DmaIndirect writes overwrite or add, never max/min, so the scatter is turned
around: compare every index with every output position along ``dim``
(``mask[..., j, ..., p] = index[..., j, ...] == p``), fill the non-matching
pairs with the reduction's identity (-inf / +inf, the dtype's min / max for
integers), reduce over j, and keep ``self`` where no index hit (include_self
= False) or combine with it (include_self = True). Cost: numel(index) * n
elements through one where and one reduction (n = self.shape[dim]), so it is
refused (NotImplemented: the op is reported unsupported) past
``DENSE_LIMIT`` elements. The backward is PyTorch's scatter_reduce formula
(gather, scatter_add, masked_fill), which trnc lowers.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten

DENSE_LIMIT = 1 << 24  # elements of the [index..., n] one-hot pass

_REDUCE = {"amax": (aten.amax.default, aten.maximum.default, float("-inf")),
           "amin": (aten.amin.default, aten.minimum.default, float("inf"))}


def _identity(reduce: str, dtype: torch.dtype):
    fill = _REDUCE[reduce][2]
    if dtype.is_floating_point:
        return fill
    info = torch.iinfo(dtype)
    return info.min if fill < 0 else info.max


def scatter_minmax(x, dim, index, src, reduce, include_self=True):
    if reduce not in _REDUCE:
        return NotImplemented
    if index.numel() == 0:
        return aten.clone.default(x)
    if x.dim() == 0:  # one element: as a [1] tensor
        one = [1]
        out = scatter_minmax(aten.view.default(x, one), 0, aten.view.default(index, one),
                             aten.view.default(src, one), reduce, include_self)
        return out if out is NotImplemented else aten.view.default(out, [])
    if x.dtype == torch.bool:  # or / and, as max / min of 0/1 in int32
        i32 = torch.int32
        out = scatter_minmax(aten._to_copy.default(x, dtype=i32), dim, index,
                             aten._to_copy.default(src, dtype=i32), reduce, include_self)
        return out if out is NotImplemented else aten.ne.Scalar(out, 0)
    dim = dim % x.dim()
    n = x.shape[dim]
    if index.numel() * n > DENSE_LIMIT:
        return NotImplemented
    reduce_op, combine, _ = _REDUCE[reduce]
    for d in range(src.dim()):  # only src's leading index.shape block is read
        if src.shape[d] != index.shape[d]:
            src = aten.slice.Tensor(src, d, 0, index.shape[d])
    if src.dtype != x.dtype:
        src = aten._to_copy.default(src, dtype=x.dtype)
    positions = aten.arange.default(n, dtype=index.dtype, device=index.device)
    mask = aten.eq.Tensor(aten.unsqueeze.default(index, -1), positions)  # [*index, n]
    fill = aten.full.default([], _identity(reduce, x.dtype), dtype=x.dtype, device=x.device)
    vals = aten.where.self(mask, aten.unsqueeze.default(src, -1), fill)
    order = list(range(index.dim() - 1))  # the output position (last) back at dim
    order.insert(dim, index.dim() - 1)
    red = aten.permute.default(reduce_op(vals, [dim]), order)
    hit = aten.permute.default(aten.any.dim(mask, dim), order)
    # The block of self the index covers: index's sizes, n along dim.
    region = x
    for d in range(x.dim()):
        if d != dim and index.shape[d] != x.shape[d]:
            region = aten.slice.Tensor(region, d, 0, index.shape[d])
    if include_self:
        red = combine(red, region)
    out = aten.where.self(hit, red, region)
    for d in reversed(range(x.dim())):  # put the block back into self
        if d != dim and index.shape[d] != x.shape[d]:
            outer = x
            for e in range(d):
                if e != dim and index.shape[e] != x.shape[e]:
                    outer = aten.slice.Tensor(outer, e, 0, index.shape[e])
            out = aten.slice_scatter.default(outer, out, d, 0, index.shape[d])
    return out
