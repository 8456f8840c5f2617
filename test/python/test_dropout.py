"""Dropout and random numbers on the device (decomp_random.py, Isa.h Random).

The device's generator is not eager's, so values are checked by property (zeros
exactly where the mask drops, kept elements scaled by 1 / (1 - p), a binomial
bound on the keep fraction, the gradient through the same mask) and, where the
seed is known, bit for bit against ``torch.ops.trnc.random_uniform``'s CPU
implementation of the same formula: each call's seed is the next draw from
torch's default generator (``trnc.decomp_random.draw_seed``).
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from helpers import compile_neuron, needs_native
from trnc.decomp_random import draw_seed

pytestmark = needs_native


def _keep_bound(n: int, keep: float) -> float:
    """Five standard deviations of a binomial keep fraction."""
    return 5 * math.sqrt(keep * (1 - keep) / n)


def _reference_mask(shape, p: float, seed: torch.Tensor) -> torch.Tensor:
    """The mask decomp_random's native_dropout draws for this seed."""
    return torch.ops.trnc.random_uniform(list(shape), torch.float32, seed) < 1 - p


class Net(torch.nn.Module):
    def __init__(self, p: float) -> None:
        super().__init__()
        self.drop = torch.nn.Dropout(p)

    def forward(self, x):
        return self.drop(x * 1.0)


def _train_step(p: float, shape, dtype=torch.float32, seed: int = 0):
    """(x, y, x.grad, g) of one compiled train-mode call, after a warm-up call."""
    model = compile_neuron(Net(p).train())
    x = torch.randn(shape).to(dtype).requires_grad_()
    model(x)  # compile outside the seeded region
    torch.manual_seed(seed)
    y = model(x)
    g = torch.randn(shape).to(dtype)
    y.backward(g)
    return x.detach(), y.detach(), x.grad, g


def test_dropout_train_mask_scale_and_grad():
    p, shape = 0.3, (300, 1100)  # 330k elements: two 128 x 2048 tiles and more
    x, y, grad, g = _train_step(p, shape, seed=7)
    torch.manual_seed(7)
    mask = _reference_mask(shape, p, draw_seed())  # the seed the call drew
    # Zeros exactly where dropped; kept elements are x / (1 - p).
    assert torch.equal(y == 0, ~mask)
    torch.testing.assert_close(y[mask], x[mask] / (1 - p))
    keep = mask.float().mean().item()
    assert abs(keep - (1 - p)) < _keep_bound(mask.numel(), 1 - p)
    # The backward uses the forward's mask: grad = mask * g / (1 - p).
    assert torch.equal(grad == 0, ~mask)
    torch.testing.assert_close(grad, torch.where(mask, g / (1 - p), torch.zeros(())))


def test_dropout_fresh_mask_per_call_and_manual_seed_reproduces():
    f = compile_neuron(lambda x: F.dropout(x, 0.5, training=True))
    x = torch.randn(64, 33) + 10  # never 0
    f(x)
    torch.manual_seed(123)
    a, b = f(x), f(x)
    assert not torch.equal(a == 0, b == 0)
    torch.manual_seed(123)
    assert torch.equal(f(x), a)
    assert torch.equal(f(x), b)


def test_two_dropouts_in_one_graph_differ():
    f = compile_neuron(lambda x: (F.dropout(x, 0.5, True), F.dropout(x, 0.5, True)))
    x = torch.randn(40, 50) + 10
    a, b = f(x)
    assert not torch.equal(a == 0, b == 0)


def test_dropout_eval_is_identity():
    model = compile_neuron(Net(0.4).eval())
    x = torch.randn(16, 24, requires_grad=True)
    y = model(x)
    assert torch.equal(y, x)
    with torch.no_grad():
        assert torch.equal(model(x), x)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_dropout_edge_probabilities(p):
    x, y, grad, g = _train_step(p, (8, 40))
    if p == 0.0:
        assert torch.equal(y, x) and torch.equal(grad, g)
    else:
        assert torch.equal(y, torch.zeros_like(x)) and torch.equal(grad, torch.zeros_like(g))


def test_dropout_bfloat16():
    p, shape = 0.25, (96, 130)
    x, y, grad, g = _train_step(p, shape, torch.bfloat16, seed=3)
    assert y.dtype == torch.bfloat16 and grad.dtype == torch.bfloat16
    torch.manual_seed(3)
    mask = _reference_mask(shape, p, draw_seed())
    assert torch.equal(y == 0, ~mask)
    expected = (x.float() / (1 - p)).to(torch.bfloat16)
    torch.testing.assert_close(y[mask], expected[mask])
    assert abs(mask.float().mean().item() - (1 - p)) < _keep_bound(mask.numel(), 1 - p)
    torch.testing.assert_close(grad, torch.where(mask, g.float() / (1 - p), 0.0).to(torch.bfloat16))


def test_rand_matches_the_cpu_formula_bit_for_bit():
    f = compile_neuron(lambda x: (torch.rand_like(x), torch.rand(5, 7, dtype=torch.bfloat16)))
    x = torch.empty(130, 17)
    f(x)
    torch.manual_seed(11)
    u, v = f(x)
    torch.manual_seed(11)
    s1, s2 = draw_seed(), draw_seed()
    # One seed per random operator, drawn in graph order.
    assert torch.equal(u, torch.ops.trnc.random_uniform([130, 17], torch.float32, s1))
    assert torch.equal(v, torch.ops.trnc.random_uniform([5, 7], torch.bfloat16, s2))
    assert u.min() >= 0 and u.max() < 1


def test_randn_and_bernoulli_statistics():
    f = compile_neuron(lambda p: (torch.randn(200, 300), torch.bernoulli(p)))
    probs = torch.full((200, 300), 0.2)
    z, b = f(probs)
    n = z.numel()
    assert abs(z.mean().item()) < 5 / math.sqrt(n)
    assert abs(z.std().item() - 1) < 0.02
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - 0.2) < _keep_bound(n, 0.2)


def test_sdpa_with_dropout_forward_and_backward_use_one_mask():
    """SDPA with dropout_p > 0 takes PyTorch's math path: softmax, native_dropout
    (our mask), matmul; the backward reuses the saved mask."""
    p, scale = 0.4, 0.5
    q, k, v = (torch.randn(2, 3, 6, 4) for _ in range(3))

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p)

    f = compile_neuron(attention)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    f(*leaves)
    torch.manual_seed(5)
    out = f(*leaves)
    g = torch.randn(out.shape)
    out.backward(g)
    torch.manual_seed(5)
    mask = _reference_mask((2, 3, 6, 6), p, draw_seed())
    ref = [t.clone().requires_grad_() for t in (q, k, v)]
    weights = torch.softmax(ref[0] @ ref[1].transpose(-2, -1) * scale, dim=-1)
    expected = (weights * mask / (1 - p)) @ ref[2]
    expected.backward(g)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    for a, e in zip(leaves, ref):
        torch.testing.assert_close(a.grad, e.grad, rtol=1e-5, atol=1e-5)
