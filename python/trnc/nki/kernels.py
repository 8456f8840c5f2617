"""Library kernels written in trnc.nki, ready as torch custom ops and modules.

``rms_normalize(x)`` = x / sqrt(mean(x^2, -1) + eps) over the rows of a 2-D
tensor (128 rows per tile, a partial last tile), fp32 inside. ``RMSNorm`` is
the module built on it (the learned scale multiplies in torch), used by the
GPT model with ``GPTConfig(norm="rmsnorm_nki")``: inside
``torch.compile(backend="neuron")`` the kernel is spliced into the graph.
"""

from __future__ import annotations

import torch

from . import language as nl
from ._custom_op import custom_op
from ._kernel import jit

__all__ = ["RMS_EPS", "rms_normalize", "rms_normalize_op", "RMSNorm"]

RMS_EPS = 1e-6


@jit
def rms_normalize(x):
    N, D = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((N, D), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range((N + P - 1) // P):
        rows = min(P, N - i * P)
        t = nl.load(x[i * P:i * P + rows, :], dtype=nl.float32)
        mean_sq = nl.mean(nl.square(t), axis=1, keepdims=True)
        inv = nl.rsqrt(nl.add(mean_sq, RMS_EPS))
        nl.store(out[i * P:i * P + rows, :], nl.multiply(t, inv, dtype=x.dtype))
    return out


def _setup_context(ctx, inputs, output) -> None:
    ctx.save_for_backward(inputs[0])


def _backward(ctx, grad: torch.Tensor) -> torch.Tensor:
    # y = x * r with r = (mean(x^2) + eps)^-1/2: dx = r * (g - x * r^2 * mean(g * x)).
    (x,) = ctx.saved_tensors
    inv = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + RMS_EPS)
    g, xf = grad.float(), x.float()
    return (inv * (g - xf * inv * inv * (g * xf).mean(-1, keepdim=True))).to(x.dtype)


rms_normalize_op = custom_op(rms_normalize, "rms_normalize", backward=_backward, setup_context=_setup_context)


class RMSNorm(torch.nn.Module):
    """RMS normalisation over the last dim with a learned scale; the normalisation is the kernel."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = rms_normalize_op(x.reshape(-1, x.shape[-1]).contiguous())
        return y.view(x.shape) * self.weight
