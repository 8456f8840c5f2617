"""trnc decomposition rules for ``as_strided`` and ``as_strided_scatter``.

``as_strided(x, size, stride, offset)`` reads x's *storage*: element ``j`` of
the result is storage element ``offset + sum_k j_k * stride_k``. trnc's graph
values have no storage, so the rule first rebuilds the part of it x covers: a
dense x (a permutation of a contiguous layout, what views such as permute and
transpose produce, as its fake tensor's strides say) laid out in decreasing
stride order and flattened is exactly its storage from ``x.storage_offset()``
on. Reads outside that range, or through an x with gaps or broadcast
(stride 0) dims, would need memory the graph does not have: refused by name.

The result is then formed without copying per element where the geometry
allows (AOTAutograd's backward replays views this way, ConvNeXt / Swin layer
norms over permuted layouts):

- view form: size-1 dims dropped, stride-0 dims broadcast (``expand``), the
  rest sorted by decreasing stride; when every stride is a multiple of the next
  one and steps over its whole inner block, the storage slice
  ``[offset, offset + size_0 * stride_0)`` viewed as
  ``[size_0, stride_0/stride_1, ..., stride_last]`` and cut to the sizes
  (strided slices, HBM views) *is* the result, up to a permute.
- gather form (overlapping windows, strides that interleave): the element
  positions are computed with fp32 iotas (exact below 2**24) and read with
  one ``trnc.gather_rows`` over the storage viewed as ``[numel, 1]``.

``as_strided_scatter(base, src, ...)`` (the backward of as_strided, with
``base`` the zeros of the input's storage) writes src's elements to the same
positions of base's storage with ``trnc.scatter_rows`` (no accumulation, as
in ATen: overlapping positions keep one writer) and lays the storage back out
in base's geometry.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import torch

from . import indirect_ops  # noqa: F401  (defines torch.ops.trnc.*)
from .decomp_indexing import check_exact_index
from .errors import CompileError

aten = torch.ops.aten
trnc_ops = torch.ops.trnc


def _refuse(why: str):
    raise CompileError(f"as_strided: {why}", error_kind="unsupported_operator")


def _storage_order(t) -> list[int]:
    """t's dims by decreasing stride (size-1 dims anywhere): flattening
    ``permute(t, order)`` lists t's storage from its storage_offset on.
    Refuses a t that is not dense (gaps, overlaps, broadcast dims)."""
    order = sorted(range(t.dim()), key=lambda d: (-t.stride(d), d))
    expected = 1
    for d in reversed(order):
        if t.shape[d] == 1:
            continue
        if t.stride(d) != expected:
            _refuse(f"its input (sizes {list(t.shape)}, strides {list(t.stride())}) is not a dense "
                    "layout, so the storage it reads is not all in the graph")
        expected *= t.shape[d]
    return order


def _contiguous(t):
    return aten.clone.default(t, memory_format=torch.contiguous_format)


def _storage(t):
    """t's storage, [numel] (from t.storage_offset()), and t's dim order in it."""
    order = _storage_order(t)
    flat = aten.view.default(_contiguous(aten.permute.default(t, order)), [t.numel()])
    return flat, order


def _from_storage(flat, like, order):
    """Inverse of _storage: the [numel] storage laid out as ``like``."""
    sorted_shape = [like.shape[d] for d in order]
    inverse = [order.index(d) for d in range(like.dim())]
    return aten.permute.default(aten.view.default(flat, sorted_shape), inverse)


def _positions(size: Sequence[int], stride: Sequence[int], start: int, device):
    """fp32 [prod(size)]: the storage positions (relative to ``start``) of the view."""
    pos = aten.full.default([1] * len(size), float(start), dtype=torch.float32, device=device)
    for k, (n, s) in enumerate(zip(size, stride)):
        if n > 1 and s != 0:
            shape = [1] * len(size)
            shape[k] = n
            iota = aten.view.default(aten.arange.start_step(0, n, 1, dtype=torch.float32, device=device), shape)
            pos = aten.add.Tensor(pos, aten.mul.Tensor(iota, float(s)))
    pos = aten.expand.default(pos, list(size))
    return aten.view.default(_contiguous(pos), [-1])


def _check_range(size, stride, start: int, numel: int) -> None:
    if any(s < 0 for s in stride):
        _refuse(f"negative strides {list(stride)}")
    last = start + sum((n - 1) * s for n, s in zip(size, stride))
    if start < 0 or last >= numel:
        _refuse(f"the view (sizes {list(size)}, strides {list(stride)}) reads storage elements "
                f"{start}..{last} outside its input's {numel} elements")


def _view_form(flat, size, stride, start: int) -> Optional[torch.Tensor]:
    """The view as slices of the storage, or None when the strides interleave/overlap."""
    dims = [k for k in range(len(size)) if size[k] > 1 and stride[k] != 0]
    dims.sort(key=lambda k: -stride[k])
    for outer, inner in zip(dims, dims[1:]):
        if stride[outer] % stride[inner] or stride[outer] < stride[inner] * size[inner]:
            return None
    numel = flat.shape[0]
    if dims:
        blocks = [size[dims[0]]] + [stride[a] // stride[b] for a, b in zip(dims, dims[1:])] + [stride[dims[-1]]]
        length = math.prod(blocks)
    else:
        blocks, length = [1], 1
    if start + length > numel:  # the last block's tail is never read: pad it
        tail = aten.full.default([start + length - numel], 0, dtype=flat.dtype, device=flat.device)
        flat = aten.cat.default([flat, tail])
    v = aten.view.default(aten.slice.Tensor(flat, 0, start, start + length), blocks)
    for i, k in enumerate(dims[1:], 1):
        v = aten.slice.Tensor(v, i, 0, size[k])
    v = aten.select.int(v, len(blocks) - 1, 0) if dims else aten.view.default(v, [])
    # v's dims are `dims` in stride order: back to the view's order, then the
    # size-1 and broadcast dims.
    v = aten.permute.default(v, [dims.index(k) for k in sorted(dims)])
    shape = [size[k] if k in dims else 1 for k in range(len(size))]
    v = aten.view.default(_contiguous(v), shape)
    return aten.expand.default(v, list(size)) if shape != list(size) else v


def _as_strided(x, size, stride, storage_offset=None):
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    start = (x.storage_offset() if storage_offset is None else int(storage_offset)) - x.storage_offset()
    if math.prod(size) == 0:
        return aten.full.default(size, 0, dtype=x.dtype, device=x.device)
    flat, _ = _storage(x)
    _check_range(size, stride, start, x.numel())
    v = _view_form(flat, size, stride, start)
    if v is not None:
        return v
    check_exact_index(x.numel(), "as_strided")
    rows = trnc_ops.gather_rows(aten.view.default(flat, [x.numel(), 1]),
                                aten._to_copy.default(_positions(size, stride, start, x.device), dtype=torch.int32))
    return aten.view.default(rows, size)


def _as_strided_scatter(base, src, size, stride, storage_offset=None):
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    start = (base.storage_offset() if storage_offset is None else int(storage_offset)) - base.storage_offset()
    if math.prod(size) == 0:
        return _contiguous(base)
    flat, order = _storage(base)
    _check_range(size, stride, start, base.numel())
    check_exact_index(base.numel(), "as_strided_scatter")
    index = aten._to_copy.default(_positions(size, stride, start, base.device), dtype=torch.int32)
    values = aten.view.default(_contiguous(aten._to_copy.default(aten.expand.default(src, size), dtype=base.dtype)),
                               [-1, 1])
    out = trnc_ops.scatter_rows(aten.view.default(flat, [base.numel(), 1]), index, values, False)
    return _from_storage(aten.view.default(out, [base.numel()]), base, order)


def rules() -> dict:
    return {
        aten.as_strided.default: _as_strided,
        aten.as_strided_scatter.default: _as_strided_scatter,
    }
