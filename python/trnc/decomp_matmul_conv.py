"""trnc decomposition rules for pooling and attention (see docs/decompositions.md,
"Matmul family, attention, convolution, pooling").

* ``_adaptive_avg_pool2d`` (and its backward) with output sizes that divide the
  input are plain ``avg_pool2d`` windows (kernel = stride = in / out), which the
  compiler lowers as a depthwise convolution; other sizes stay as they are and
  are reported unsupported.
* ``_scaled_dot_product_flash_attention_for_cpu_backward`` (what autograd emits
  for ``scaled_dot_product_attention`` on CPU) is recomputed from q, k, v with
  the textbook attention gradient in matmuls + softmax, so the backward graph
  uses the same primitives as the forward one. Dropout is not recomputable
  (its mask is not saved): such graphs keep the fused op (unsupported).
"""

from __future__ import annotations

import math

import torch

aten = torch.ops.aten


def _divisible_windows(x, output_size):
    out = [output_size[0], output_size[-1]]
    ins = list(x.shape[-2:])
    if any(o <= 0 or i % o for i, o in zip(ins, out)):
        return None
    return [i // o for i, o in zip(ins, out)]


def _adaptive_avg_pool2d(x, output_size):
    k = _divisible_windows(x, output_size)
    if k is None:
        return NotImplemented
    return aten.avg_pool2d.default(x, k, k)


def _adaptive_avg_pool2d_backward(grad, x):
    k = _divisible_windows(x, list(grad.shape[-2:]))
    if k is None:
        return NotImplemented
    return aten.avg_pool2d_backward.default(grad, x, k, k, [0, 0], False, True, None)


def _sdpa_cpu_backward(grad_out, q, k, v, out, logsumexp, dropout_p, is_causal, attn_mask=None, scale=None):
    if dropout_p > 0.0:
        return NotImplemented
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if is_causal:
        keep = torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
    p = torch.softmax(s, dim=-1)
    dv = torch.matmul(p.transpose(-2, -1), grad_out)
    dp = torch.matmul(grad_out, v.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = torch.matmul(ds, k) * scale
    dk = torch.matmul(ds.transpose(-2, -1), q) * scale
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def rules() -> dict:
    return {
        aten._adaptive_avg_pool2d.default: _adaptive_avg_pool2d,
        aten._adaptive_avg_pool2d_backward.default: _adaptive_avg_pool2d_backward,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default: _sdpa_cpu_backward,
    }
