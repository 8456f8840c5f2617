"""Diagonals (einsum with a repeated index, torch.diagonal, diag_embed,
diagonal_scatter; trnc.decomp_diagonal) forward and backward, and integer
and 16-bit linspace equal to eager bit for bit (trnc.decomp_linspace), through
backend="neuron"."""

from __future__ import annotations

import random

import pytest
import torch

from helpers import check_against_eager, compile_neuron, trnc_error
import trnc

# (function, input shapes): the plane last and contiguous (a pure view), planes
# that need the permuting copy, offsets above / below / past the edge, batches.
DIAGONAL_CASES = [
    (lambda x: torch.einsum("ii->i", x), [(5, 5)]),
    (lambda x, y: torch.einsum("bii,bi->b", x, y), [(2, 4, 4), (2, 4)]),
    (lambda x: torch.einsum("iji->j", x), [(3, 2, 3)]),
    (lambda x: torch.diagonal(x, 1, 0, 2) * 1, [(3, 4, 5)]),
    (lambda x: torch.diagonal(x, -2, 2, 0) * 1, [(3, 4, 5)]),
    (lambda x: torch.diagonal(x, 7) * 1, [(3, 4)]),
    (lambda x: torch.diagonal(x.t()) * 1, [(4, 6)]),
    (lambda x: torch.diag_embed(x, 1, 0, 2), [(3, 4)]),
    (lambda x: torch.diag_embed(x, -1, 2, 0), [(3, 4)]),
    (lambda x, s: torch.diagonal_scatter(x, s, -1), [(4, 5), (3,)]),
    (lambda x: torch.trace(x), [(4, 6)]),
]


@pytest.mark.parametrize("case", range(len(DIAGONAL_CASES)))
def test_diagonal_forward_backward(case):
    fn, shapes = DIAGONAL_CASES[case]
    gen = torch.Generator().manual_seed(case)
    check_against_eager(fn, [torch.randn(s, generator=gen) for s in shapes])


def test_diagonal_bfloat16_and_int():
    x = torch.randn(6, 6).to(torch.bfloat16)
    check_against_eager(lambda t: torch.einsum("ii->i", t) * 2, [x])
    check_against_eager(lambda t: torch.diag_embed(t, 2), [torch.arange(12).view(3, 4)], grad=False)


def _linspace_cases():
    """OpInfo's failing samples (start 4.3 / 0 with 50 steps), points where the
    double step lands just below an integer (0 -> -60 in 23 steps), fractional
    and negative ends, odd and even step counts, and a seeded random draw."""
    cases = [(4.3, -3, 50), (4.3, 0, 50), (4.3, 1, 50), (4.3, 50, 50), (0, 7, 50),
             (-60, 0, 23), (-60, 0, 45), (-60, 3, 46), (-60, -2, 51), (0, 1, 2), (-2.7, 2.7, 9)]
    rng = random.Random(0)
    cases += [(rng.uniform(-500, 500), rng.randint(-500, 500), rng.randint(2, 400)) for _ in range(6)]
    return cases


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("start,end,steps", _linspace_cases())
def test_integer_linspace_equals_eager(start, end, steps, dtype):
    fn = lambda: torch.linspace(start, end, steps, dtype=dtype)  # noqa: E731
    torch._dynamo.reset()
    torch.testing.assert_close(compile_neuron(fn, fullgraph=True)(), fn(), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("start,end,steps", _linspace_cases()[::3] + [(-100.7, 3000.1, 3000)])
def test_half_linspace_equals_eager(start, end, steps, dtype):
    # the kernel rounds step, each product and each sum to the 16-bit type
    fn = lambda: torch.linspace(start, end, steps, dtype=dtype)  # noqa: E731
    torch._dynamo.reset()
    torch.testing.assert_close(compile_neuron(fn, fullgraph=True)(), fn(), rtol=0, atol=0)


def test_integer_linspace_beyond_float32_exactness_is_refused():
    # |2 * start * (steps - 1)| >= 2**23: float32 cannot hold the numerators
    # exactly, so the rule declines and the importer names linspace.
    torch._dynamo.reset()
    fn = compile_neuron(lambda: torch.linspace(-100000, 100000, 100, dtype=torch.int64), fullgraph=True)
    with pytest.raises(Exception) as excinfo:
        fn()
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError)
    assert "aten.linspace" in str(err)
