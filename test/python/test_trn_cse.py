"""Repeated work is computed once by the compiler's trn-level CSE (canonicalize + CSE,
the first passes of passes/Pipelines.cpp), end to end against eager: what merges, and
what must stay apart (constants of another type or sign, random draws, outputs)."""

import torch

import trnc
from helpers import compile_neuron, needs_native


def _instructions(fn, *args):
    """The compiled program's instruction count, and its outputs."""
    with trnc.profiling.capture() as p:
        out = compile_neuron(fn)(*args)
    (graph,) = p.graphs
    return sum(e["instructions"] for e in graph.to_dict()["engines"].values()), out


@needs_native
def test_a_repeated_product_is_computed_once():
    def twice(a, b):
        return torch.mm(a, b) + torch.mm(a, b).exp()

    def once(a, b):
        m = torch.mm(a, b)
        return m + m.exp()

    # Scaled so exp() does not amplify the product's fp32 rounding (eager's
    # BLAS sums in another order on each CPU) past the comparison's tolerance.
    a, b = torch.randn(256, 128) * 0.1, torch.randn(128, 64)
    n_twice, got = _instructions(twice, a, b)
    n_once, _ = _instructions(once, a, b)
    assert n_twice == n_once
    torch.testing.assert_close(got, twice(a, b))


@needs_native
def test_constants_of_another_type_or_sign_stay_apart():
    def f(x):
        return x + 1, x + 1.0, x * 0.0, x * -0.0

    x = torch.arange(-4, 4, dtype=torch.int32)
    got, want = compile_neuron(f)(x), f(x)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        torch.testing.assert_close(g, w)
    y = torch.randn(64)
    got = compile_neuron(f)(y)
    assert torch.equal(torch.signbit(got[2]), torch.signbit(y * 0.0))
    assert torch.equal(torch.signbit(got[3]), torch.signbit(y * -0.0))


@needs_native
def test_random_draws_differ_and_a_value_returned_twice_is_two_outputs():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5), torch.nn.functional.dropout(x, 0.5), x.sin(), x.sin()

    x = torch.randn(128, 64)
    d1, d2, s1, s2 = compile_neuron(f)(x)
    assert not torch.equal(d1 == 0, d2 == 0)  # two masks
    torch.testing.assert_close(s1, x.sin())
    torch.testing.assert_close(s2, x.sin())
    assert s1.data_ptr() != s2.data_ptr()
    s1.add_(1.0)  # writing one leaves the other as eager would
    torch.testing.assert_close(s2, x.sin())


@needs_native
def test_two_triangular_solves_share_their_squarings_on_the_engines():
    # GatedDeltaNet solves one unit-lower system for two right-hand sides
    # (decomp_linalg.py): the powers of the matrix are built once.
    def solve(a, b):
        return torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True)

    def two_solves(a, b, c):
        return solve(a, b), solve(a, c)

    torch.manual_seed(0)
    a = torch.eye(64) + 0.1 * torch.randn(64, 64).tril(-1)
    b, c = torch.randn(64, 8), torch.randn(64, 8)
    n_two, got = _instructions(two_solves, a, b, c)
    n_one, _ = _instructions(solve, a, b)
    assert n_two < 2 * n_one - 20  # 121 instructions against 2 x 78 when written
    torch.testing.assert_close(got, two_solves(a, b, c), rtol=1e-4, atol=1e-5)
