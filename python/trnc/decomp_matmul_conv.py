"""trnc decomposition rules for pooling and attention (see docs/decompositions.md,
"Matmul family, attention, convolution, pooling").

* ``_adaptive_avg_pool2d`` (and its backward) with output sizes that divide the
  input are plain ``avg_pool2d`` windows (kernel = stride = in / out), which the
  compiler lowers as a depthwise convolution; other sizes (overlapping windows
  of varying size) are matmuls with averaging matrices P_h x P_w^T, built
  on the device from iota and comparisons (decomp_resample.apply_axis_matrices).
* ``_scaled_dot_product_flash_attention_for_cpu`` (what
  ``scaled_dot_product_attention`` becomes on CPU) without a mask or dropout:
  the fused ``trnc.attention`` (attention_ops.py; one group on the device, the
  scores never reach HBM) where its limits allow (``attention_ops.eligible``:
  head dims <= 128, keys and values of a head resident in SBUF), else
  ``softmax(q k^T * scale) v`` in matmuls and the fused softmax, the causal mask
  as an additive ``triu(full(min), 1)`` bias (no ``where``/``arange``);
  grouped-query attention (fewer kv heads, ``enable_gqa``) repeats each kv
  head over its query group (expand + reshape). The core
  rule also guards fully masked rows (``eq``/``any``/``where``), which only an
  explicit ``attn_mask`` can produce, so it keeps handling those (and dropout).
* ``_scaled_dot_product_flash_attention_for_cpu_backward`` (what autograd emits
  for it): ``trnc.attention_backward`` after the fused forward (a real
  [N, H, L] logsumexp), else the textbook attention gradient in matmuls, from the probabilities
  the forward rules save in the logsumexp slot (recomputed from q, k and a real
  logsumexp otherwise); with grouped-query attention the kv gradients are
  summed over each query group. Dropout is not recomputable (its mask is not saved):
  such graphs keep the fused op (unsupported).
* ``convolution_backward`` of a transposed convolution (``ConvTranspose2d``;
  the importer lowers only a plain convolution's backward): y = conv_t(x, w)
  is the input gradient of z = conv(., w), so <g, conv_t(x, w)> =
  <conv(g, w), x>: x's gradient is conv(g, w) (same stride, padding,
  dilation and groups; w is already [in, out / groups, k...], conv's
  [out, in / groups, k...]), w's is the weight gradient of conv with input g
  and output gradient x, the bias's the sum of g. A plain convolution's
  backward stays whole (NotImplemented).
"""

from __future__ import annotations

import math

import torch
from torch._decomp import core_aten_decompositions

from . import attention_ops
from .decomp_resample import apply_axis_matrices

aten = torch.ops.aten
_SDPA = aten._scaled_dot_product_flash_attention_for_cpu.default


def _divisible_windows(x, output_size):
    out = [output_size[0], output_size[-1]]
    ins = list(x.shape[-2:])
    if any(o <= 0 or i % o for i, o in zip(ins, out)):
        return None
    return [i // o for i, o in zip(ins, out)]


def _window_means(out: int, size: int, dtype) -> torch.Tensor:
    """[out, size]: row o averages adaptive window o, [floor(o*size/out),
    ceil((o+1)*size/out)), i.e. the h with o*size < (h+1)*out and
    h*out < (o+1)*size (exact in float for sizes < 2^24), built on the device."""
    o = torch.arange(out, dtype=torch.float32).view(out, 1)
    h = torch.arange(size, dtype=torch.float32).view(1, size)
    inside = torch.logical_and(o * size < (h + 1) * out, h * out < (o + 1) * size)
    m = inside.to(torch.float32)
    return (m / m.sum(dim=1, keepdim=True)).to(dtype)


def _adaptive_avg_pool2d(x, output_size):
    k = _divisible_windows(x, output_size)
    if k is not None:
        return aten.avg_pool2d.default(x, k, k)
    # Windows of varying size: out = P_h @ x @ P_w^T on the Tensor Engine.
    ph = _window_means(output_size[0], x.shape[-2], x.dtype)
    pw = _window_means(output_size[-1], x.shape[-1], x.dtype)
    return apply_axis_matrices(x, [ph, pw])


def _adaptive_avg_pool2d_backward(grad, x):
    k = _divisible_windows(x, list(grad.shape[-2:]))
    if k is not None:
        return aten.avg_pool2d_backward.default(grad, x, k, k, [0, 0], False, True, None)
    ph = _window_means(grad.shape[-2], x.shape[-2], grad.dtype)
    pw = _window_means(grad.shape[-1], x.shape[-1], grad.dtype)
    return apply_axis_matrices(grad, [ph.t(), pw.t()])


def _scores(q, k, is_causal, scale):
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if is_causal:
        lowest = torch.finfo(s.dtype).min
        s = s + torch.full((s.shape[-2], s.shape[-1]), lowest, dtype=s.dtype).triu(1)
    return s, scale


def _repeat_heads(x, heads):
    """Grouped-query attention: [N, Hkv, S, E] -> [N, heads, S, E], each kv head
    serving heads / Hkv consecutive query heads (PyTorch's enable_gqa)."""
    n, hkv, s, e = x.shape
    if hkv == heads:
        return x
    return x[:, :, None].expand(n, hkv, heads // hkv, s, e).reshape(n, heads, s, e)


def _sum_heads(g, hkv):
    """The gradient of _repeat_heads: sum each group of query heads."""
    n, heads, s, e = g.shape
    if hkv == heads:
        return g
    return g.reshape(n, hkv, heads // hkv, s, e).sum(dim=2)


def _sdpa_cpu(q, k, v, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None):
    if dropout_p > 0.0 or attn_mask is not None:
        return core_aten_decompositions()[_SDPA](
            q, k, v, dropout_p, is_causal, attn_mask=attn_mask, scale=scale
        )
    k, v = _repeat_heads(k, q.shape[1]), _repeat_heads(v, q.shape[1])
    fused_scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    if attention_ops.eligible(q, k, v, fused_scale):
        out, lse = torch.ops.trnc.attention(q, k, v, bool(is_causal), float(fused_scale))
        return out.permute(0, 2, 1, 3), lse
    # Like the CPU kernel, 16-bit inputs compute scores and softmax in float32.
    wide = q.dtype in (torch.bfloat16, torch.float16)
    if wide:
        q, k = q.float(), k.float()
    s, _ = _scores(q, k, is_causal, scale)
    p = torch.softmax(s, dim=-1)
    out = torch.matmul(p.to(v.dtype), v)
    # The fused kernel's output layout ([N, L, H, E] memory), as the core rule keeps it.
    out = out.permute(2, 0, 1, 3).contiguous().permute(1, 2, 0, 3)
    return out, p


def _sdpa_cpu_backward(grad_out, q, k, v, out, logsumexp, dropout_p, is_causal, attn_mask=None, scale=None):
    if dropout_p > 0.0:
        return NotImplemented
    dtypes = q.dtype, k.dtype, v.dtype
    hkv = k.shape[1]
    k, v = _repeat_heads(k, q.shape[1]), _repeat_heads(v, q.shape[1])
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    if logsumexp.dim() == 3 and attn_mask is None and attention_ops.eligible(q, k, v, scale, backward=True):
        dq, dk, dv = (
            g.permute(0, 2, 1, 3)  # sequence-major results, as views
            for g in torch.ops.trnc.attention_backward(
                grad_out, q, k, v, out, logsumexp, bool(is_causal), float(scale)
            )
        )
        return dq, _sum_heads(dk, hkv), _sum_heads(dv, hkv)
    if q.dtype in (torch.bfloat16, torch.float16):  # as the forward rule
        grad_out, q, k, v = grad_out.float(), q.float(), k.float(), v.float()
    if logsumexp.dim() == 4:
        # The forward rules (ours and the core one) save the probabilities here.
        p = logsumexp.to(q.dtype)
    else:
        s, _ = _scores(q, k, is_causal, scale)
        if attn_mask is not None:
            s = s.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else s + attn_mask
        p = torch.exp(s - logsumexp.unsqueeze(-1))
    dv = torch.matmul(p.transpose(-2, -1), grad_out)
    dp = torch.matmul(grad_out, v.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(dim=-1, keepdim=True))
    dq = torch.matmul(ds, k) * scale
    dk = torch.matmul(ds.transpose(-2, -1), q) * scale
    return dq.to(dtypes[0]), _sum_heads(dk, hkv).to(dtypes[1]), _sum_heads(dv, hkv).to(dtypes[2])


def _convolution_backward(grad, input, weight, bias_sizes, stride, padding, dilation, transposed,
                          output_padding, groups, output_mask):
    """A transposed convolution's backward as plain convolutions (header)."""
    if not transposed:
        return NotImplemented
    zeros = [0] * len(stride)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = aten.convolution.default(grad, weight, None, stride, padding, dilation, False, zeros, groups)
    if output_mask[1]:
        grad_weight = aten.convolution_backward.default(input, grad, weight, None, stride, padding, dilation, False,
                                                        zeros, groups, [False, True, False])[1]
    if output_mask[2]:
        grad_bias = aten.sum.dim_IntList(grad, [0] + list(range(2, grad.dim())))
    return grad_input, grad_weight, grad_bias


def rules() -> dict:
    return {
        aten._adaptive_avg_pool2d.default: _adaptive_avg_pool2d,
        aten._adaptive_avg_pool2d_backward.default: _adaptive_avg_pool2d_backward,
        _SDPA: _sdpa_cpu,
        aten._scaled_dot_product_flash_attention_for_cpu_backward.default: _sdpa_cpu_backward,
        aten.convolution_backward.default: _convolution_backward,
    }
