"""trnc decomposition rules for sliding windows: ``Tensor.unfold`` and its
backward (see docs/decompositions.md, "Indexing, data movement and tensor
creation").

``x.unfold(dim, size, step)`` has ``nw = (n - size) // step + 1`` windows:
``out[..., i, ..., k] = x[..., i * step + k, ...]`` with the window index at
``dim`` and the offset ``k`` as a new last dim. Both directions are built from
strided slices (HBM views, no instruction) and one ``cat`` (a DMA copy per
piece), looping over whichever of the ``size`` offsets or the ``nw`` windows
is fewer: no index tensor and no indirect DMA, and no copy per element.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def _windows(n: int, size: int, step: int) -> int:
    return (n - size) // step + 1


def _move_last_to(t, dim: int):
    """Moves t's last dim to position ``dim`` (a permute view)."""
    order = list(range(t.dim() - 1))
    order.insert(dim, t.dim() - 1)
    return aten.permute.default(t, order)


def _zeros(like_shape, dim: int, k: int, t):
    shape = list(like_shape)
    shape[dim] = k
    return aten.full.default(shape, 0, dtype=t.dtype, device=t.device)


def _pad(t, dim: int, low: int, high: int):
    """t with ``low`` / ``high`` zero rows around it along dim (one cat)."""
    parts = [_zeros(t.shape, dim, low, t) if low else None, t,
             _zeros(t.shape, dim, high, t) if high else None]
    parts = [p for p in parts if p is not None]
    return parts[0] if len(parts) == 1 else aten.cat.default(parts, dim)


def _unfold(x, dim, size, step):
    if x.dim() == 0:  # a 0-d tensor has one window of size 1
        return aten.view.default(x, [1])
    dim = dim % x.dim()
    n = x.shape[dim]
    nw = _windows(n, size, step)
    if size == 0 or x.numel() == 0:  # nothing to copy: the empty result
        shape = list(x.shape)
        shape[dim] = nw
        return aten.full.default(shape + [size], 0, dtype=x.dtype, device=x.device)
    if size <= nw:
        # One strided slice per offset k (rows k, k + step, ...), stacked last.
        span = (nw - 1) * step + 1
        parts = [aten.unsqueeze.default(aten.slice.Tensor(x, dim, k, k + span, step), -1)
                 for k in range(size)]
        return aten.cat.default(parts, -1)
    # One slice per window (rows i*step .. i*step + size), stacked at dim.
    parts = []
    for i in range(nw):
        w = aten.slice.Tensor(x, dim, i * step, i * step + size)
        order = [d for d in range(x.dim()) if d != dim] + [dim]
        parts.append(aten.unsqueeze.default(aten.permute.default(w, order), dim))
    return aten.cat.default(parts, dim)


def _unfold_backward(grad, input_sizes, dim, size, step):
    """The gradient of unfold: every window element added back onto the input
    row it was read from (rows of overlapping windows receive several)."""
    input_sizes = list(input_sizes)
    if not input_sizes:
        return aten.view.default(grad, [])
    dim = dim % len(input_sizes)
    n = input_sizes[dim]
    nw = grad.shape[dim]
    if size == 0 or grad.numel() == 0:  # no window element: a zero gradient
        return aten.full.default(input_sizes, 0, dtype=grad.dtype, device=grad.device)
    if nw < size:
        # Per window: its [.., size, ..] block padded to n rows at i*step; summed.
        acc = None
        for i in range(nw):
            block = _move_last_to(aten.select.int(grad, dim, i), dim)
            block = _pad(block, dim, i * step, n - i * step - size)
            acc = block if acc is None else aten.add.Tensor(acc, block)
        return acc
    # Per offset k = j*step + r: input row i*step + k is row i + j of column r
    # of the input viewed as [m, step] (m*step >= n). Each column r sums its
    # offsets' grads shifted by j rows; the columns are interleaved by a cat
    # on a new dim and a view, then cut (or zero-padded) to n rows.
    m = nw + (size - 1) // step
    cols = []
    for r in range(min(step, size)):
        col = None
        for k in range(r, size, step):
            j = k // step
            g = _pad(aten.select.int(grad, -1, k), dim, j, m - nw - j)
            col = g if col is None else aten.add.Tensor(col, g)
        cols.append(aten.unsqueeze.default(col, dim + 1))
    if step > size:
        cols.append(_zeros(cols[0].shape, dim + 1, step - size, cols[0]))
    out = aten.cat.default(cols, dim + 1) if len(cols) > 1 else cols[0]
    out = aten.clone.default(out, memory_format=torch.contiguous_format)
    flat = list(out.shape[:dim]) + [m * step] + list(out.shape[dim + 2:])
    out = aten.view.default(out, flat)
    if m * step >= n:
        return aten.slice.Tensor(out, dim, 0, n)
    return _pad(out, dim, 0, n - m * step)


def rules() -> dict:
    return {
        aten.unfold.default: _unfold,
        aten.unfold_backward.default: _unfold_backward,
    }
