"""trnc decomposition rule for ``_transformer_encoder_layer_fwd``, the fused
inference fast path of ``nn.TransformerEncoderLayer`` (taken under
``torch.no_grad()`` in eval mode, batch_first, an even number of heads).

The rule spells out what ATen's ``transformer_encoder_layer_forward``
(aten/src/ATen/native/transformers/transformer.cpp) computes, in the ops the
layer's slow path uses: layer norms, the packed QKV projection, per-head
scaled dot-product scores, a masked softmax, the output projection, the
ReLU / GELU feed-forward and the residual adds, post-norm or pre-norm
(``norm_first``).

The mask is the fast path's merged mask (``MultiheadAttention.merge_masks``):
``[L, L]`` (mask_type 0), ``[B, L]`` key padding (1) or ``[B, H|1, L, L]``
(2); ATen converts a float mask to bool (nonzero = masked); its CPU masked
softmax gives NaN for a row whose every key is masked, as the -inf scores here do.
Nested-tensor inputs (``enable_nested_tensor``) never reach an AOTAutograd
graph, so they are not handled.
"""

from __future__ import annotations

import math

import torch

aten = torch.ops.aten


def _linear(x, weight, bias):
    """x [..., in] @ weight[out, in]^T + bias, as the slow path's F.linear."""
    lead = list(x.shape[:-1])
    flat = aten.view.default(aten.clone.default(x, memory_format=torch.contiguous_format), [-1, x.shape[-1]])
    out = aten.addmm.default(bias, flat, aten.t.default(weight))
    return aten.view.default(out, lead + [weight.shape[0]])


def _layer_norm(x, weight, bias, eps):
    return aten.native_layer_norm.default(x, [x.shape[-1]], weight, bias, eps)[0]


def _mask_4d(mask, mask_type, B: int, L: int):
    """The merged mask as bool, broadcastable to the [B, H, L, L] scores."""
    masked = mask if mask.dtype == torch.bool else aten.ne.Scalar(mask, 0)
    if mask_type == 1 or (mask_type is None and list(mask.shape) == [B, L]):
        return aten.view.default(masked, [B, 1, 1, L])
    if masked.dim() == 2:
        return aten.view.default(masked, [1, 1, L, L])
    return masked


def _self_attention(x, num_heads: int, qkv_weight, qkv_bias, proj_weight, proj_bias, mask, mask_type):
    B, L, E = x.shape
    D = E // num_heads
    qkv = _linear(x, qkv_weight, qkv_bias)  # [B, L, 3E]
    qkv = aten.permute.default(aten.view.default(qkv, [B, L, 3, num_heads, D]), [2, 0, 3, 1, 4])

    def heads(i):  # [B*H, L, D]
        return aten.view.default(aten.clone.default(aten.select.int(qkv, 0, i), memory_format=torch.contiguous_format),
                                 [B * num_heads, L, D])

    q = aten.mul.Tensor(heads(0), 1.0 / math.sqrt(D))
    scores = aten.view.default(aten.bmm.default(q, aten.transpose.int(heads(1), 1, 2)), [B, num_heads, L, L])
    if mask is None:
        p = aten._softmax.default(scores, -1, False)
    else:
        masked = _mask_4d(mask, mask_type, B, L)
        neg_inf = aten.full.default([], -math.inf, dtype=scores.dtype, device=scores.device)
        p = aten._softmax.default(aten.where.self(masked, neg_inf, scores), -1, False)
    ctx = aten.bmm.default(aten.view.default(p, [B * num_heads, L, L]), heads(2))  # [B*H, L, D]
    ctx = aten.permute.default(aten.view.default(ctx, [B, num_heads, L, D]), [0, 2, 1, 3])
    ctx = aten.view.default(aten.clone.default(ctx, memory_format=torch.contiguous_format), [B, L, E])
    return _linear(ctx, proj_weight, proj_bias)


def _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                   use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
                                   norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2,
                                   mask=None, mask_type=None):
    x = src
    attn_in = _layer_norm(x, norm_weight_1, norm_bias_1, eps) if norm_first else x
    x = aten.add.Tensor(x, _self_attention(attn_in, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                           mask, mask_type))
    if not norm_first:
        x = _layer_norm(x, norm_weight_1, norm_bias_1, eps)
    ffn_in = _layer_norm(x, norm_weight_2, norm_bias_2, eps) if norm_first else x
    hidden = _linear(ffn_in, ffn_weight_1, ffn_bias_1)
    hidden = aten.gelu.default(hidden) if use_gelu else aten.relu.default(hidden)
    x = aten.add.Tensor(x, _linear(hidden, ffn_weight_2, ffn_bias_2))
    if not norm_first:
        x = _layer_norm(x, norm_weight_2, norm_bias_2, eps)
    return x


def rules() -> dict:
    return {aten._transformer_encoder_layer_fwd.default: _transformer_encoder_layer_fwd}
