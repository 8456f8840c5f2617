"""Common-subexpression elimination before export (trnc/graph_cse.py): what merges, what must not."""

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from helpers import compile_neuron, needs_native
from trnc.decompositions import decomposition_table
from trnc.graph_cse import eliminate_common_subexpressions

aten = torch.ops.aten


def _calls(gm, target):
    return sum(1 for n in gm.graph.nodes if n.op == "call_function" and n.target == target)


def test_repeated_calls_merge_and_the_graph_still_computes_the_same():
    def f(a, b):
        return torch.mm(a, b) + torch.mm(a, b).exp()

    a, b = torch.randn(4, 5), torch.randn(5, 3)
    gm = make_fx(f)(a, b)
    assert _calls(gm, aten.mm.default) == 2
    assert eliminate_common_subexpressions(gm) == 1
    assert _calls(gm, aten.mm.default) == 1
    torch.testing.assert_close(gm(a, b), f(a, b))


def test_scalars_of_another_type_or_sign_stay_apart():
    def f(x):
        return aten.add.Tensor(x, 1), aten.add.Tensor(x, 1.0), aten.mul.Tensor(x, 0.0), aten.mul.Tensor(x, -0.0)

    gm = make_fx(f)(torch.arange(4, dtype=torch.int32))
    assert eliminate_common_subexpressions(gm) == 0


def test_random_draws_and_outputs_are_not_merged():
    def f(x):
        return torch.rand_like(x) + torch.rand_like(x), x.sin(), x.sin()

    gm = make_fx(f)(torch.randn(3))
    assert eliminate_common_subexpressions(gm) == 0  # two draws; the two sin() are outputs
    r, s1, s2 = gm(torch.randn(3))
    assert s1 is not s2


def test_in_place_calls_are_not_merged():
    def f(x):
        y = x.clone()
        y.add_(1)
        y.add_(1)
        return y

    gm = make_fx(f)(torch.zeros(2))
    assert _calls(gm, aten.add_.Tensor) == 2
    assert eliminate_common_subexpressions(gm) == 0
    torch.testing.assert_close(gm(torch.zeros(2)), torch.full((2,), 2.0))


@needs_native
def test_two_triangular_solves_share_their_squarings_on_the_engines():
    # GatedDeltaNet solves one unit-lower system for two right-hand sides
    # (decomp_linalg.py): the powers of N are built once.
    def two_solves(a, b, c):
        x = torch.linalg.solve_triangular(a, b, upper=False, unitriangular=True)
        y = torch.linalg.solve_triangular(a, c, upper=False, unitriangular=True)
        return x, y

    torch.manual_seed(0)
    a = torch.eye(64) + 0.1 * torch.randn(64, 64).tril(-1)
    b, c = torch.randn(64, 8), torch.randn(64, 8)
    gm = make_fx(two_solves, decomposition_table=decomposition_table())(a, b, c)
    products = _calls(gm, aten.mm.default) + _calls(gm, aten.bmm.default)
    eliminate_common_subexpressions(gm)
    # the powers of N and N^T are built once for both right-hand sides (n = 64: 32 -> 22 bmm)
    assert _calls(gm, aten.mm.default) + _calls(gm, aten.bmm.default) < products
    got = compile_neuron(two_solves)(a, b, c)
    torch.testing.assert_close(got, two_solves(a, b, c), rtol=1e-4, atol=1e-5)
