"""Mixture-of-experts routing as static-shape ops: histc and transformers' grouped matmul.

transformers' default MoE path on CPU ("grouped_mm" experts) counts tokens per
expert with ``torch.histc`` and multiplies each expert's contiguous block of
sorted tokens by its weight in the opaque custom op
``transformers::grouped_mm_fallback`` (a Python loop over ``offs.tolist()``:
data-dependent block sizes), with ``grouped_mm_fallback_backward`` for autograd.
Both become dense, static-shape graphs here:

- ``aten.histc`` (explicit range): bin index by floor((x - min) * bins / (max - min))
  (x == max in the last bin, out-of-range and NaN dropped), compared with every
  bin and summed. A range of min == max (taken from the data) is left unsupported.
- ``grouped_mm_fallback(input [T, K], weight [G, K, N], offs [G])``: row t belongs
  to group g when offs[g-1] <= t < offs[g] (a [T, G] one-hot from comparisons with
  the cumulative offsets; rows past offs[-1] belong to none and give zeros, as in
  the fallback). With X = onehot[:, :, None] * input[:, None, :] viewed [T, G*K]:
  out = X @ weight.view(G*K, N); grad_input = sum_g onehot * (grad @ W^T) and
  grad_weight = X^T @ grad: one matmul each, G times the FLOPs of the grouped
  product, no gather or scatter. Row coordinates are float32 (exact below 2**24).
"""

from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten

__all__ = ["rules"]


def _histc(x, bins=100, min=0, max=0):  # noqa: A002 - ATen's argument names
    lo, hi = float(min), float(max)
    if not hi > lo:
        return NotImplemented  # the range comes from the data: no static lowering
    flat = aten.view.default(x, [-1]).to(torch.float32)
    pos = aten.floor.default((flat - lo) * (bins / (hi - lo)))
    pos = aten.where.self(flat == hi, aten.full_like.default(pos, bins - 1), pos)
    valid = aten.logical_and.default(flat >= lo, flat <= hi)
    edges = aten.arange.start_step(0, bins, 1, dtype=torch.float32)
    hits = aten.logical_and.default(pos.unsqueeze(1) == edges.unsqueeze(0), valid.unsqueeze(1))
    return aten.sum.dim_IntList(hits.to(torch.float32), [0]).to(x.dtype)


def _onehot_rows(offs, rows: int, dtype):
    """[rows, G]: 1 where offs[g-1] <= t < offs[g] (offs are cumulative block ends)."""
    ends = offs.to(torch.float32)
    starts = aten.cat.default([aten.full.default([1], 0.0, dtype=torch.float32), ends[:-1]])
    t = aten.arange.start_step(0, rows, 1, dtype=torch.float32).unsqueeze(1)
    inside = aten.logical_and.default(t >= starts.unsqueeze(0), t < ends.unsqueeze(0))
    return inside.to(dtype)


def _expanded(x, onehot):
    """[T, G*K]: row t's input in the slot of its group, zeros elsewhere."""
    t, g, k = x.shape[0], onehot.shape[1], x.shape[1]
    return aten.view.default(onehot.unsqueeze(2) * x.unsqueeze(1), [t, g * k])


def _grouped_mm(input, weight, offs):  # noqa: A002
    g, k, n = weight.shape
    onehot = _onehot_rows(offs, input.shape[0], input.dtype)
    return aten.mm.default(_expanded(input, onehot), weight.reshape(g * k, n))


def _grouped_mm_backward(input, weight, offs, grad_output):  # noqa: A002
    g, k, n = weight.shape
    t = input.shape[0]
    onehot = _onehot_rows(offs, t, input.dtype)
    w = weight.reshape(g * k, n)
    per_group = aten.view.default(aten.mm.default(grad_output, aten.t.default(w)), [t, g, k])
    grad_input = aten.sum.dim_IntList(per_group * onehot.unsqueeze(2), [1])
    grad_weight = aten.mm.default(aten.t.default(_expanded(input, onehot)), grad_output)
    return grad_input, aten.view.default(grad_weight, [g, k, n])


def rules() -> dict[torch._ops.OpOverload, Callable]:
    """The rules; transformers' ops only once transformers has registered them."""
    table: dict[torch._ops.OpOverload, Callable] = {aten.histc.default: _histc}
    ns = torch.ops.transformers
    for name, rule in (("grouped_mm_fallback", _grouped_mm), ("grouped_mm_fallback_backward", _grouped_mm_backward)):
        try:
            table[getattr(ns, name).default] = rule
        except (AttributeError, RuntimeError):
            pass  # transformers not imported (or another version): nothing to decompose
    return table
