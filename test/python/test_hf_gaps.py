"""Gaps the Hugging Face causal-LM sweep found (issue 5, benchmarks/RESULTS.md),
each reduced to the call the model makes, compiled and compared with eager:

- ``torch.eye`` (kimi_linear, bailing_hybrid): trnc's rule, iota == iota, not
  PyTorch's uint8 aranges (decomp_creation.py).
- ``Tensor.exponential_`` (phimoe's sparsemixer, training): -log1p(-u) / lambd
  from the device's uniform generator (decomp_random.py); checked bit for bit
  against the CPU formula for the seed the call draws, and by its mean.
"""

from __future__ import annotations

import pytest
import torch

from helpers import check_against_eager, compile_neuron, needs_native
from trnc.decomp_random import draw_seed

pytestmark = needs_native


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_eye_in_the_dtype_asked(dtype):
    def f(x):  # kimi_linear: attn = attn + torch.eye(chunk_size, dtype=attn.dtype)
        return x + torch.eye(x.shape[-1], dtype=dtype).to(x.dtype), torch.eye(3, 5, dtype=dtype)

    x = torch.randn(2, 16, 16)
    expected = f(x)
    actual = compile_neuron(f)(x)
    assert actual[1].dtype == dtype
    torch.testing.assert_close(actual, expected)


def test_eye_in_a_training_graph():
    def f(a):
        return torch.matmul(a, a + torch.eye(a.shape[-1], dtype=a.dtype, device=a.device))

    check_against_eager(f, [torch.randn(2, 8, 8)])


def test_exponential_matches_the_device_formula():
    lambd = 2.0
    f = compile_neuron(lambda x: torch.empty_like(x).exponential_(lambd) * x)
    x = torch.full((64, 48), 3.0)
    torch.manual_seed(5)
    y = f(x)
    torch.manual_seed(5)
    u = torch.ops.trnc.random_uniform([64, 48], torch.float32, draw_seed())
    torch.testing.assert_close(y, -torch.log1p(-u) / lambd * 3.0)
    assert (y >= 0).all() and torch.isfinite(y).all()
    # Mean of Exp(lambd) is 1/lambd: 5 standard errors (std = mean) of 3072 draws.
    assert abs(y.mean().item() / 3.0 - 1 / lambd) < 5 * (1 / lambd) / (64 * 48) ** 0.5


def test_exponential_in_phimoe_sparsemixer_form():
    # phimoe's training path: gumbel-like noise from exponential_().log() on a
    # tensor that requires grad, then a masked choice; the noise has no grad.
    def f(scores):
        noise = torch.empty_like(scores, memory_format=torch.legacy_contiguous_format).exponential_().log()
        return (scores - noise).max(dim=-1)[1], scores.softmax(-1) * 2

    scores = torch.randn(16, 8, requires_grad=True)
    idx, probs = compile_neuron(f)(scores)
    assert idx.shape == (16,) and (idx >= 0).all() and (idx < 8).all()
    probs.sum().backward()
    assert scores.grad is not None


# gemma3 / afmoe: transformers' SDPA with enable_gqa (no mask, causal, an
# explicit scale) reaches _scaled_dot_product_flash_attention_for_cpu with
# fewer kv heads; autograd emits its fused backward, which the backward rule
# now decomposes with the kv gradients summed over each query group.
@pytest.mark.parametrize("scale", [0.0625, None])
def test_sdpa_grouped_query_causal_trains(scale):
    def f(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale, enable_gqa=True)

    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, h, 16, 16, generator=gen) for h in (4, 2, 2))
    check_against_eager(f, [q, k, v])


def test_sdpa_grouped_query_with_mask_trains():
    def f(q, k, v, bias):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.25, enable_gqa=True)

    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, h, 8, 16, generator=gen) for h in (4, 2, 2))
    bias = torch.randn(1, 1, 8, 8, generator=gen)
    check_against_eager(f, [q, k, v, bias])


def test_scalar_plus_alpha_times_bool_mask():
    # phimoe: torch.add(0.3333, mask_for_one, alpha=0.6667) with a bool mask is float.
    def f(x):
        return torch.add(0.3333, x > 0, alpha=0.6667) * x

    check_against_eager(f, [torch.randn(32, 1)])


# got_ocr2 / moss_transcribe_diarize: the causal-LM loss's log_softmax over a
# 151k vocabulary exceeds the fused softmax's one-tile rows (2048 fp32); longer
# rows decompose to amax / sub / exp / sum / log (decomp_reductions.py).
@pytest.mark.parametrize("n", [2048, 2049, 5000])
def test_long_row_softmax_and_cross_entropy(n):
    def f(x, y):
        return torch.nn.functional.cross_entropy(x, y), torch.softmax(x * 2, dim=-1)

    gen = torch.Generator().manual_seed(n)
    x = torch.randn(4, n, generator=gen) * 4
    y = torch.randint(0, n, (4,), generator=gen)
    check_against_eager(lambda x: f(x, y)[0], [x])
    torch.testing.assert_close(compile_neuron(f)(x, y), f(x, y))


def test_long_row_log_softmax_bfloat16():
    # Computed in float32 like the fused softmax and eager's CPU kernel, rounded once.
    x = (torch.randn(3, 3000) * 3).to(torch.bfloat16)
    f = lambda x: torch.log_softmax(x, -1)  # noqa: E731
    actual = compile_neuron(f)(x)
    assert actual.dtype == torch.bfloat16
    torch.testing.assert_close(actual, f(x))
