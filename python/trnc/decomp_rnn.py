"""trnc decomposition rules for ``mkldnn_rnn_layer`` (one LSTM layer) and its backward.

When Dynamo traces an ``nn.LSTM`` (``torch._dynamo.config.allow_rnn``),
PyTorch's ``aten.lstm`` decomposition hands each layer and direction to the
fused oneDNN kernel ``mkldnn_rnn_layer`` whenever the layer's input does not
require grad (inference, or the first layer of a training step); other layers
are unrolled by PyTorch itself. This rule unrolls the fused layer the same
way: one input projection for the whole sequence (a single matmul), then per
time step ``gates = x_t W_ih^T + b_ih + h W_hh^T + b_hh`` split into the
input, forget, cell and output gates (PyTorch's i, f, g, o order),
``c = f * c + i * tanh(g)``, ``h = o * tanh(c)``; ``reverse`` walks the
sequence backwards and writes each step's output in place.

Outputs are those of the fused op: the sequence output, ``hy`` and ``cy``
(``[1, B, H]``) and an empty uint8 workspace (no backward here reads it). The
backward, ``mkldnn_rnn_layer_backward``, is the vector-Jacobian product of the
unrolled forward (decomp_autograd.vjp): back-propagation through time over the
same ops. Only LSTM (mode 2, the only mode PyTorch's decomposition emits) with
packed-sequence ``batch_sizes`` empty is handled; anything else is refused by
name.
"""

from __future__ import annotations

import torch

from . import decomp_autograd
from .errors import CompileError

aten = torch.ops.aten

_LSTM_MODE = 2  # ideep::rnn_kind::LSTM (third_party/ideep abstract_types.hpp)


def _check(mode: int, batch_sizes) -> None:
    if mode != _LSTM_MODE:
        raise CompileError(f"mkldnn_rnn_layer: rnn mode {mode} is not supported (only LSTM, mode 2)",
                           error_kind="unsupported_operator")
    if len(batch_sizes):
        raise CompileError("mkldnn_rnn_layer: packed sequences (batch_sizes) are not supported",
                           error_kind="unsupported_operator")


def _lstm_layer(x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse: bool, hidden_size: int, has_biases: bool,
                batch_first: bool):
    """Unrolled LSTM layer: (output, hy [1,B,H], cy [1,B,H])."""
    if batch_first:
        x = aten.permute.default(x, [1, 0, 2])
    T, B, I = x.shape
    H = hidden_size
    proj = aten.mm.default(aten.view.default(aten.clone.default(x, memory_format=torch.contiguous_format),
                                             [T * B, I]), aten.t.default(w_ih))
    if has_biases:
        proj = aten.add.Tensor(proj, aten.add.Tensor(b_ih, b_hh))
    proj = aten.view.default(proj, [T, B, 4 * H])
    h = aten.view.default(hx, [B, H])
    c = aten.view.default(cx, [B, H])
    w_hh_t = aten.t.default(w_hh)
    steps = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        gates = aten.add.Tensor(aten.select.int(proj, 0, t), aten.mm.default(h, w_hh_t))
        i, f, g, o = (aten.slice.Tensor(gates, 1, k * H, (k + 1) * H) for k in range(4))
        c = aten.add.Tensor(aten.mul.Tensor(aten.sigmoid.default(f), c),
                            aten.mul.Tensor(aten.sigmoid.default(i), aten.tanh.default(g)))
        h = aten.mul.Tensor(aten.sigmoid.default(o), aten.tanh.default(c))
        steps[t] = aten.view.default(h, [1, B, H])
    out = aten.cat.default(steps, 0)
    if batch_first:
        out = aten.permute.default(out, [1, 0, 2])
    return out, aten.view.default(h, [1, B, H]), aten.view.default(c, [1, B, H])


def _mkldnn_rnn_layer(x, w0, w1, w2, w3, hx, cx, reverse, batch_sizes, mode, hidden_size, num_layers,
                      has_biases, bidirectional, batch_first, train):
    _check(mode, batch_sizes)
    out, hy, cy = _lstm_layer(x, w0, w1, w2, w3, hx, cx, reverse, hidden_size, has_biases, batch_first)
    workspace = aten.full.default([0], 0, dtype=torch.uint8, device=x.device)
    return out, hy, cy, workspace


def _mkldnn_rnn_layer_backward(x, w0, w1, w2, w3, hx, cx, output, hy, cy, grad_output, grad_hy, grad_cy,
                               reverse, mode, hidden_size, num_layers, has_biases, train, bidirectional,
                               batch_sizes, batch_first, workspace):
    _check(mode, batch_sizes)

    def forward(x_, w0_, w1_, w2_, w3_, hx_, cx_):
        return _lstm_layer(x_, w0_, w1_, w2_, w3_, hx_, cx_, reverse, hidden_size, has_biases, batch_first)

    gx, g0, g1, g2, g3, ghx, gcx = decomp_autograd.vjp(
        forward, [x, w0, w1, w2, w3, hx, cx], [grad_output, grad_hy, grad_cy], [True] * 7)
    # The fused kernel has one bias gradient (b_ih + b_hh enter as their sum), returned for both.
    return gx, g0, g1, g2, g3, ghx, gcx


def rules() -> dict:
    return {
        aten.mkldnn_rnn_layer.default: _mkldnn_rnn_layer,
        aten.mkldnn_rnn_layer_backward.default: _mkldnn_rnn_layer_backward,
    }
