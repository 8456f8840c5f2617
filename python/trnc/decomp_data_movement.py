"""trnc decomposition rules for composite data movement (see
docs/decompositions.md, "Indexing, data movement and tensor creation").

The compiler lowers four primitives: ``slice.Tensor`` / ``select.int`` /
``flip`` (strided HBM views, no instruction), ``cat`` (one DMA copy per
input into its window of the output), plus ``expand``/``view``/``full``.
These rules rewrite the composites into them instead of the core-ATen
forms, which go through ``index``/``index_select`` with an ``arange``
(indirect DMA) where a plain strided copy does.
"""

from __future__ import annotations

import itertools

import torch

aten = torch.ops.aten


def _dim(d: int, rank: int) -> int:
    return d % max(rank, 1)


def _split_with_sizes(x, split_sizes, dim=0):
    dim = _dim(dim, x.dim())
    out, start = [], 0
    for n in split_sizes:
        out.append(aten.slice.Tensor(x, dim, start, start + n))
        start += n
    return out


def _split(x, split_size, dim=0):
    n = x.shape[_dim(dim, x.dim())]
    sizes = [min(split_size, n - s) for s in range(0, n, split_size)] if split_size else [n]
    return _split_with_sizes(x, sizes or [0], dim)


def _roll(x, shifts, dims=()):
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not dims:  # roll the flattened tensor
        flat = aten.view.default(aten.clone.default(x, memory_format=torch.contiguous_format), [-1])
        return aten.view.default(_roll(flat, shifts, [0]), list(x.shape))
    for shift, dim in zip(shifts, dims):
        dim = _dim(dim, x.dim())
        n = x.shape[dim]
        s = shift % n if n else 0
        if s:
            x = aten.cat.default(
                [aten.slice.Tensor(x, dim, n - s, n), aten.slice.Tensor(x, dim, 0, n - s)], dim)
    return x


def _pad_dims(x, pad, edge):
    """Applies pad (pairs from the last dim, torch.nn.functional.pad order);
    ``edge(x, dim, low, high)`` returns the low and high blocks."""
    for i in range(len(pad) // 2):
        dim = x.dim() - 1 - i
        low, high = pad[2 * i], pad[2 * i + 1]
        n = x.shape[dim]
        if low < 0 or high < 0:
            x = aten.slice.Tensor(x, dim, max(-low, 0), n - max(-high, 0))
            low, high = max(low, 0), max(high, 0)
        if low == 0 and high == 0:
            continue
        lo, hi = edge(x, dim, low, high)
        x = aten.cat.default([t for t, k in ((lo, low), (x, 1), (hi, high)) if k], dim)
    return x


def _constant_pad_nd(x, pad, value=0):
    def edge(t, dim, low, high):
        def block(k):
            shape = list(t.shape)
            shape[dim] = k
            return aten.full.default(shape, value, dtype=t.dtype, device=t.device)
        return block(low), block(high)
    return _pad_dims(x, pad, edge)


def _reflection_pad(x, padding):
    def edge(t, dim, low, high):
        n = t.shape[dim]
        lo = aten.flip.default(aten.slice.Tensor(t, dim, 1, 1 + low), [dim])
        hi = aten.flip.default(aten.slice.Tensor(t, dim, n - 1 - high, n - 1), [dim])
        return lo, hi
    return _pad_dims(x, padding, edge)


def _replication_pad(x, padding):
    def edge(t, dim, low, high):
        n = t.shape[dim]
        def block(start, k):
            shape = list(t.shape)
            shape[dim] = k
            return aten.expand.default(aten.slice.Tensor(t, dim, start, start + 1), shape)
        return block(0, low), block(n - 1, high)
    return _pad_dims(x, padding, edge)


def _zero_pad(t, dim, low, high):
    parts = []
    for k in (low, high):
        shape = list(t.shape)
        shape[dim] = k
        parts.append(aten.full.default(shape, 0, dtype=t.dtype, device=t.device) if k else None)
    return aten.cat.default([p for p in (parts[0], t, parts[1]) if p is not None], dim)


def _pad_backward(grad, padding, fold):
    """Undoes _pad_dims in reverse order: per dim, the grad of the centre plus
    ``fold(low_grad, high_grad, dim, low, high, n)`` (the edges' grads moved
    back onto the input positions they were copied from), then zeros for the
    positions a negative pad cropped (the forward crops before padding)."""
    for i in reversed(range(len(padding) // 2)):
        dim = grad.dim() - 1 - i
        low, high = padding[2 * i], padding[2 * i + 1]
        crop_low, crop_high = max(-low, 0), max(-high, 0)
        low, high = max(low, 0), max(high, 0)
        n = grad.shape[dim] - low - high
        centre = aten.slice.Tensor(grad, dim, low, low + n)
        for extra in fold(aten.slice.Tensor(grad, dim, 0, low), aten.slice.Tensor(grad, dim, low + n, low + n + high),
                          dim, low, high, n):
            centre = aten.add.Tensor(centre, extra)
        grad = _zero_pad(centre, dim, crop_low, crop_high) if crop_low or crop_high else centre
    return grad


def _reflection_pad_backward_in_order(grad, x, padding):
    """16-bit gradients: eager's kernel adds each output gradient into its input
    element in row-major output order, rounding every sum to the 16-bit type,
    so the per-dim folds (another order) differ by an ulp. Here the same sums
    in the same order: per padded dim the groups left (flipped), centre,
    right (flipped) lie in output order, so one zero-padded block per group
    combination, added in lexicographic order (outer dim slowest), repeats
    eager's sequence for every input element (3^k blocks for k padded dims)."""
    per_dim = []
    for i in range(len(padding) // 2):
        dim, low, high = grad.dim() - 1 - i, padding[2 * i], padding[2 * i + 1]
        n = x.shape[dim]
        groups = [(0, low, True, 1)] if low else []
        groups.append((low, low + n, False, 0))
        groups += [(low + n, low + n + high, True, n - 1 - high)] if high else []
        per_dim.append((dim, n, groups))
    per_dim.sort(key=lambda entry: entry[0])
    acc = None
    for combo in itertools.product(*(groups for _, _, groups in per_dim)):
        block = grad
        for (dim, n, _), (start, end, flip, at) in zip(per_dim, combo):
            block = aten.slice.Tensor(block, dim, start, end)
            block = aten.flip.default(block, [dim]) if flip else block
            if end - start != n:
                block = _zero_pad(block, dim, at, n - at - (end - start))
        acc = block if acc is None else aten.add.Tensor(acc, block)
    return acc


def _reflection_pad_backward(grad, x, padding):
    if grad.dtype in (torch.float16, torch.bfloat16) and min(padding) >= 0:
        return _reflection_pad_backward_in_order(grad, x, padding)

    def fold(gl, gr, dim, low, high, n):
        out = []
        if low:
            out.append(_zero_pad(aten.flip.default(gl, [dim]), dim, 1, n - 1 - low))
        if high:
            out.append(_zero_pad(aten.flip.default(gr, [dim]), dim, n - 1 - high, 1))
        return out
    return _pad_backward(grad, padding, fold)


def _replication_pad_backward(grad, x, padding):
    def fold(gl, gr, dim, low, high, n):
        out = []
        if low:
            out.append(_zero_pad(aten.sum.dim_IntList(gl, [dim], True), dim, 0, n - 1))
        if high:
            out.append(_zero_pad(aten.sum.dim_IntList(gr, [dim], True), dim, n - 1, 0))
        return out
    return _pad_backward(grad, padding, fold)


def _repeat(x, repeats):
    repeats = list(repeats)
    shape = [1] * (len(repeats) - x.dim()) + list(x.shape)
    inter, expanded, final = [], [], []
    for r, s in zip(repeats, shape):
        inter += [1, s]
        expanded += [r, s]
        final.append(r * s)
    y = aten.expand.default(aten.view.default(x, inter), expanded)
    y = aten.clone.default(y, memory_format=torch.contiguous_format)
    return aten.view.default(y, final)


def _slice_scatter(x, src, dim=0, start=None, end=None, step=1):
    dim = _dim(dim, x.dim())
    n = x.shape[dim]
    start = 0 if start is None else (start + n if start < 0 else start)
    end = n if end is None else (end + n if end < 0 else end)
    start, end = max(0, min(start, n)), max(0, min(end, n))
    m = src.shape[dim]
    if m == 0:
        return x
    if step != 1:
        # Rows start, start+step, ... : view the window as [m, step] (padded
        # to m*step), put src in column 0, drop the padding.
        r = (m - 1) * step + 1
        window = [aten.slice.Tensor(x, dim, start, start + r)]
        if step > 1:
            shape = list(x.shape)
            shape[dim] = step - 1
            window.append(aten.full.default(shape, 0, dtype=x.dtype, device=x.device))
        w = aten.cat.default(window, dim) if len(window) > 1 else window[0]
        split = list(x.shape[:dim]) + [m, step] + list(x.shape[dim + 1:])
        w = aten.view.default(aten.clone.default(w, memory_format=torch.contiguous_format), split)
        w = aten.cat.default([aten.unsqueeze.default(src, dim + 1), aten.slice.Tensor(w, dim + 1, 1, step)], dim + 1)
        merged = list(x.shape[:dim]) + [m * step] + list(x.shape[dim + 1:])
        src = aten.slice.Tensor(aten.view.default(w, merged), dim, 0, r)
        end = start + r
    parts = [aten.slice.Tensor(x, dim, 0, start), src, aten.slice.Tensor(x, dim, end, n)]
    return aten.cat.default([p for p in parts if p.shape[dim]], dim)


def _select_scatter(x, src, dim, index):
    dim = _dim(dim, x.dim())
    index = index % x.shape[dim]
    return _slice_scatter(x, aten.unsqueeze.default(src, dim), dim, index, index + 1)


def rules() -> dict:
    table = {
        aten.split_with_sizes.default: _split_with_sizes,
        aten.split.Tensor: _split,
        aten.roll.default: _roll,
        aten.constant_pad_nd.default: _constant_pad_nd,
        aten.repeat.default: _repeat,
        aten.slice_scatter.default: _slice_scatter,
        aten.select_scatter.default: _select_scatter,
    }
    for n in (1, 2, 3):
        table[getattr(aten, f"reflection_pad{n}d").default] = _reflection_pad
        table[getattr(aten, f"replication_pad{n}d").default] = _replication_pad
        table[getattr(aten, f"reflection_pad{n}d_backward").default] = _reflection_pad_backward
        table[getattr(aten, f"replication_pad{n}d_backward").default] = _replication_pad_backward
    return table
