"""torch.linalg.solve_triangular through backend="neuron" (decomp_linalg.py),
compared with eager: every argument form (upper/lower, left/right,
unit/non-unit diagonal), broadcast batches, n in {1, 5, 64, 130}, forward and
backward (autograd's formula is another solve_triangular, decomposed the same
way), the deprecated torch.triangular_solve, GatedDeltaNet's chunk system as
transformers builds it, and bfloat16 against eager's float32 solve (eager has
no half-precision CPU solve).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from helpers import check_against_eager, compile_neuron, needs_native
from trnc.decompositions import decomposition_table

aten = torch.ops.aten


def _system(n: int, batch=(), unit: bool = False, upper: bool = False, seed: int = 0):
    """A well-conditioned triangular system: off-diagonal N(0, 1/n), diagonal
    (unless unit, where it is ignored) 2 + |N(0, 1)|, with random signs."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(*batch, n, n, generator=g) / math.sqrt(n)
    if not unit:
        sign = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)
        a = a + torch.diag(sign * (2 + torch.randn(n, generator=g).abs()))
    return a  # the other triangle holds random values too: the solve must not read them


def _rhs(n: int, k: int, left: bool, batch=(), seed: int = 1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*batch, n, k, generator=g) if left else torch.randn(*batch, k, n, generator=g)


def _tol(n: int) -> dict:
    # Both sides substitute in float32 with ~n-term sums per entry (eager by rows,
    # trnc by 2 log2 n matmuls whose PSUM accumulates sequentially): 4 eps n
    # absolute as for an n-long contraction (helpers.fp32_matmul_tol); rtol 4x
    # torch's default (measured max relative difference vs float64: 3e-7).
    return {"rtol": 4 * 1.3e-6, "atol": max(1e-5, 4 * torch.finfo(torch.float32).eps * n)}


FORMS = [(u, l, t) for u in (False, True) for l in (True, False) for t in (False, True)]


@needs_native
@pytest.mark.parametrize("upper,left,unit", FORMS, ids=lambda v: str(v))
def test_every_argument_form_batched(upper, left, unit):
    # A [2, 1, n, n] broadcasts against B [3, ...]: batch shape [2, 3].
    n, k = 5, 3
    a = _system(n, (2, 1), unit, upper)
    b = _rhs(n, k, left, (3,))

    def f(a, b):
        return torch.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)

    check_against_eager(f, [a, b], **_tol(n))


@needs_native
@pytest.mark.parametrize(
    "n,upper,left,unit",
    [(1, False, True, False), (1, True, False, True), (64, False, True, True), (64, True, False, False),
     (130, False, True, False), (130, True, True, True)],
)
def test_sizes(n, upper, left, unit):
    a = _system(n, (2,), unit, upper)
    b = _rhs(n, 4, left, (2,))

    def f(a, b):
        return torch.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)

    check_against_eager(f, [a, b], **_tol(n))


@needs_native
@pytest.mark.parametrize("upper,transpose,unit", [(True, False, False), (False, True, True)])
def test_deprecated_triangular_solve(upper, transpose, unit):
    # torch.triangular_solve(b, A): A X = b (A^T X = b), and A copied to the batch shape.
    n = 6
    a = _system(n, (2, 1), unit, upper)
    b = _rhs(n, 3, True, (3,))

    def f(b, a):
        return torch.triangular_solve(b, a, upper=upper, transpose=transpose, unitriangular=unit)

    check_against_eager(lambda b, a: f(b, a).solution, [b, a], **_tol(n))
    torch.testing.assert_close(compile_neuron(f)(b, a).cloned_coefficient, f(b, a).cloned_coefficient)


def _gated_delta_chunk(key, value, beta, decay):
    """transformers' GatedDeltaNet intra-chunk solve (modeling_olmo_hybrid.py,
    torch_chunk_gated_delta_rule), one chunk: the UT system and its two solves."""
    n = key.shape[-2]
    k_beta, v_beta = key * beta.unsqueeze(-1), value * beta.unsqueeze(-1)
    cum = decay.cumsum(-1)
    upper_mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    pairwise = (cum.unsqueeze(-1) - cum.unsqueeze(-2)).masked_fill(upper_mask, float("-inf")).exp()
    ut_system = (k_beta @ key.transpose(-1, -2)) * pairwise
    decayed_k_beta = k_beta * cum.exp().unsqueeze(-1)
    new_values = torch.linalg.solve_triangular(ut_system, v_beta, upper=False, unitriangular=True)
    k_cumdecay = torch.linalg.solve_triangular(ut_system, decayed_k_beta, upper=False, unitriangular=True)
    return new_values, k_cumdecay


@needs_native
def test_gated_delta_net_chunk_system():
    g = torch.Generator().manual_seed(3)
    b, h, n, d = 1, 2, 64, 16
    key = torch.nn.functional.normalize(torch.randn(b, h, n, d, generator=g), dim=-1)
    value = torch.randn(b, h, n, d, generator=g)
    beta = torch.rand(b, h, n, generator=g)
    decay = -torch.rand(b, h, n, generator=g) * 0.2  # log-space decays (g <= 0)

    def f(key, value, beta, decay):
        new_values, k_cumdecay = _gated_delta_chunk(key, value, beta, decay)
        return new_values + k_cumdecay

    check_against_eager(f, [key, value, beta, decay], **_tol(n))


@needs_native
@pytest.mark.parametrize("upper,left", [(False, True), (True, False)])
def test_bfloat16_against_eager_float32(upper, left):
    # trnc solves half precision in float32 and rounds once: the solution is
    # within one bfloat16 rounding (eps/2 relative) of eager's float32 solve
    # of the same (bf16-exact) inputs; 2 eps covers the float32 part. The
    # gradients round grad_B and X to bf16 before grad_A = -grad_B X^T, so
    # entries that cancel carry eps x the largest entry: atol 2 eps x max.
    n = 64
    a = _system(n, (2,), False, upper).bfloat16()
    b = _rhs(n, 8, left, (2,)).bfloat16()

    def f(a, b):
        return torch.linalg.solve_triangular(a, b, upper=upper, left=left)

    ta, tb = a.clone().requires_grad_(), b.clone().requires_grad_()
    ea, eb = a.float().requires_grad_(), b.float().requires_grad_()
    actual, expected = compile_neuron(f)(ta, tb), f(ea, eb)
    assert actual.dtype == torch.bfloat16
    g = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1)).bfloat16()
    actual.backward(g)
    expected.backward(g.float())
    eps = torch.finfo(torch.bfloat16).eps
    for got, want in ((actual, expected), (ta.grad, ea.grad), (tb.grad, eb.grad)):
        assert got.dtype == torch.bfloat16
        scale = want.abs().max().item()
        torch.testing.assert_close(got.float(), want.detach(), rtol=2 * eps, atol=2 * eps * scale)


@pytest.mark.parametrize("n,steps", [(2, 1), (5, 3), (64, 6), (130, 8)])
def test_graph_is_logarithmic_in_n(n, steps):
    """ceil(log2 n) products against B, N and N^T squared (one fewer time for N^T,
    two fewer for N), and one transpose of N: 16 for n = 64, not 64 row steps."""
    a, b = _system(n, unit=True), _rhs(n, 3, True)

    def f(a, b):
        return aten.linalg_solve_triangular.default(a, b, upper=False, unitriangular=True)

    gm = make_fx(f, decomposition_table=decomposition_table())(a, b)
    targets = [node.target for node in gm.graph.nodes if node.op == "call_function"]
    assert aten.linalg_solve_triangular.default not in targets
    products = [t for t in targets if t in (aten.mm.default, aten.bmm.default)]
    assert len(products) == steps + (steps - 1) + max(steps - 2, 0) + 1
    torch.testing.assert_close(gm(a, b), f(a, b), **_tol(n))
