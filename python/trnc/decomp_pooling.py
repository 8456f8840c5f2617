"""trnc decomposition rules for average pooling with few output positions.

The importer lowers ``avg_pool2d`` (and its backward) as a depthwise
convolution with a window-sized kernel of ones (compiler/lib/Import/
ConvImporters.cpp): right for small sliding windows, but its cost grows with
kernel area x channels, not with the data. A window as large as (or larger
than) the input, global pooling and poolers such as Hugging Face
EfficientNet's ``nn.AvgPool2d(1280, ceil_mode=True)`` on a 1x1 map, has few
output positions, each summing the part of the input its window covers. For
at most ``MAX_POSITIONS`` output positions these rules compute exactly that:
per position one ``sum`` over the clipped window (a reduction whose cost
follows the input's size), divided by PyTorch's divisor; the backward
spreads each position's gradient over its window (expand + zero padding).

Window geometry follows ATen's AvgPool2d.cpp: window ``o`` spans
``[o*s - p, o*s - p + k)`` clipped to ``[-p, H + p)`` for the divisor
(count_include_pad) and to ``[0, H)`` for the sum; ``divisor_override``
replaces the divisor. Output sizes come from the fake tensor, which applies
ceil_mode's rule.
"""

from __future__ import annotations

import torch
from torch._meta_registrations import pooling_output_shape

aten = torch.ops.aten

# Output positions up to which per-position reductions beat the convolution.
MAX_POSITIONS = 16


def _two(v):
    v = [v] if isinstance(v, int) else list(v)
    return v * 2 if len(v) == 1 else v


def _windows(n: int, out: int, k: int, s: int, p: int, count_pad: bool):
    """Per output position along one dim: (start, end) of the summed input rows
    and the rows the divisor counts."""
    result = []
    for o in range(out):
        start = o * s - p
        end = min(start + k, n + p)
        counted = end - start
        lo, hi = max(start, 0), min(end, n)
        result.append((lo, hi, counted if count_pad else hi - lo))
    return result


def _geometry(x, kernel_size, stride, padding, ceil_mode, count_include_pad):
    """(row windows, column windows) of a pooling of x, ATen's output sizes."""
    kernel = _two(kernel_size)
    stride = _two(stride) if stride else kernel
    padding = _two(padding)
    H, W = x.shape[-2], x.shape[-1]
    out_h = pooling_output_shape(H, kernel[0], padding[0], stride[0], 1, ceil_mode)
    out_w = pooling_output_shape(W, kernel[1], padding[1], stride[1], 1, ceil_mode)
    rows = _windows(H, out_h, kernel[0], stride[0], padding[0], count_include_pad)
    cols = _windows(W, out_w, kernel[1], stride[1], padding[1], count_include_pad)
    return rows, cols


def _handled(x, rows, cols) -> bool:
    return (x.is_floating_point() and x.dim() in (3, 4) and len(rows) * len(cols) <= MAX_POSITIONS
            and all(hi > lo for lo, hi, _ in rows) and all(hi > lo for lo, hi, _ in cols))


def _avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    rows, cols = _geometry(x, kernel_size, stride, padding, ceil_mode, count_include_pad)
    if not _handled(x, rows, cols):
        return NotImplemented  # the importer's depthwise convolution
    h, w = x.dim() - 2, x.dim() - 1
    out_rows = []
    for r0, r1, rn in rows:
        band = aten.slice.Tensor(x, h, r0, r1)
        cells = []
        for c0, c1, cn in cols:
            window = aten.slice.Tensor(band, w, c0, c1)
            total = aten.sum.dim_IntList(window, [h, w], True)
            cells.append(aten.mul.Tensor(total, 1.0 / (divisor_override or rn * cn)))
        out_rows.append(cells[0] if len(cells) == 1 else aten.cat.default(cells, w))
    return out_rows[0] if len(out_rows) == 1 else aten.cat.default(out_rows, h)


def _avg_pool2d_backward(grad, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override):
    rows, cols = _geometry(x, kernel_size, stride, padding, ceil_mode, count_include_pad)
    if not _handled(x, rows, cols):
        return NotImplemented
    h, w = x.dim() - 2, x.dim() - 1
    H, W = x.shape[h], x.shape[w]
    acc = None
    for i, (r0, r1, rn) in enumerate(rows):
        for j, (c0, c1, cn) in enumerate(cols):
            g = aten.slice.Tensor(aten.slice.Tensor(grad, h, i, i + 1), w, j, j + 1)
            g = aten.mul.Tensor(g, 1.0 / (divisor_override or rn * cn))
            shape = list(x.shape)
            shape[h], shape[w] = r1 - r0, c1 - c0
            spread = aten.expand.default(g, shape)
            if (r0, r1, c0, c1) != (0, H, 0, W):
                spread = aten.constant_pad_nd.default(spread, [c0, W - c1, r0, H - r1], 0.0)
            acc = spread if acc is None else aten.add.Tensor(acc, spread)
    return acc if acc.dtype == x.dtype else aten._to_copy.default(acc, dtype=x.dtype)


def rules() -> dict:
    return {
        aten.avg_pool2d.default: _avg_pool2d,
        aten.avg_pool2d_backward.default: _avg_pool2d_backward,
    }
