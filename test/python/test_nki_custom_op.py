"""trnc.nki kernels as torch custom ops: eager, and lowered inside backend="neuron" graphs.

The kernel is an RMS normalisation; the compiled model calls it between two
Linear layers, forward and backward (a backward written in torch, registered
with the op), in one graph per direction: the kernel's instructions are
spliced into the graph's program, not run as a graph break.
"""

from __future__ import annotations

import json

import pytest
import torch

import trnc.nki as nki
import trnc.nki.language as nl
from trnc.graph_export import export_graph

from helpers import needs_native

EPS = 1e-6


@nki.jit
def rms_normalize(x):
    N, D = x.shape
    out = nl.ndarray((N, D), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(N // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :], dtype=nl.float32)
        mean_sq = nl.mean(nl.square(t), axis=1, keepdims=True)
        inv = nl.rsqrt(nl.add(mean_sq, EPS))
        nl.store(out[i * 128:(i + 1) * 128, :], nl.multiply(t, inv, dtype=x.dtype))
    return out


def _reference(x: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    inv = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    return inv * (grad - x * inv * inv * (grad * x).mean(-1, keepdim=True))


rms_op = nki.custom_op(rms_normalize, "rms_normalize_test", backward=_backward, setup_context=_setup_context)


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(32, 64)
        self.down = torch.nn.Linear(64, 16)

    def forward(self, x):
        return self.down(rms_op(self.up(x)))


@needs_native
def test_custom_op_eager_runs_the_kernel():
    x = torch.randn(256, 64)
    torch.testing.assert_close(rms_op(x), _reference(x), rtol=1e-5, atol=1e-5)


def test_graph_export_carries_the_traced_kernel():
    from torch.fx.experimental.proxy_tensor import make_fx

    gm = make_fx(lambda x: rms_op(x) * 2, tracing_mode="fake")(torch.randn(128, 64))
    doc = export_graph(gm, "g").document
    kernel = [n for n in doc["nodes"] if n["target"] == "trnc.nki_kernel"]
    assert len(kernel) == 1
    assert kernel[0]["kwargs"]["name"] == {"str": "trnc_nki.rms_normalize_test.default"}
    text = kernel[0]["kwargs"]["kernel"]["str"]
    assert "func.func @main" in text and "nisa.activation rsqrt" in text
    assert json.dumps(doc)  # serialisable as graph JSON


@needs_native
def test_custom_op_inside_a_compiled_training_step():
    torch.manual_seed(0)
    model = Block()
    reference = Block()
    reference.load_state_dict(model.state_dict())
    x = torch.randn(128, 32)

    torch._dynamo.reset()
    counters = torch._dynamo.utils.counters
    counters.clear()
    compiled = torch.compile(model, backend="neuron")
    loss = compiled(x).square().mean()
    loss.backward()

    ref_loss = reference.down(_reference(reference.up(x))).square().mean()
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-5, msg=name)
    assert counters["stats"]["unique_graphs"] == 1, dict(counters["graph_break"])
    assert not counters["graph_break"]


def test_custom_op_refuses_a_non_kernel():
    with pytest.raises(nki.NkiError, match="takes a @trnc.nki.jit kernel"):
        nki.custom_op(lambda x: x)


@needs_native
def test_library_rms_normalize_partial_tile():
    from trnc.nki.kernels import rms_normalize_op

    x = torch.randn(200, 48)  # one full tile of 128 rows and one of 72
    torch.testing.assert_close(rms_normalize_op(x), _reference(x), rtol=1e-5, atol=1e-5)


@needs_native
def test_gpt_with_an_nki_rmsnorm_kernel_compiled_forward_and_backward():
    from trnc.models.gpt import GPT, GPTConfig, batch

    config = GPTConfig(vocab_size=64, block_size=64, n_layer=1, n_head=2, n_embd=64, norm="rmsnorm_nki")
    torch.manual_seed(0)
    model = GPT(config)
    reference = GPT(config)
    reference.load_state_dict(model.state_dict())
    idx, targets = batch(config, 2, torch.Generator().manual_seed(0))

    torch._dynamo.reset()
    counters = torch._dynamo.utils.counters
    counters.clear()
    _, loss = torch.compile(model, backend="neuron")(idx, targets)
    loss.backward()
    _, ref_loss = reference(idx, targets)  # eager: the kernel runs on the simulator per call
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss, rtol=1e-4, atol=1e-4)
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=2e-3, atol=2e-5, msg=name)
    assert not counters["graph_break"]
