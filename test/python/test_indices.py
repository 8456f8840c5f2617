"""End to end, operators with indices (python/trnc/decomp_indices.py): trnc
(compiler + simulator) against eager. Indices must be exactly equal: ties
take the first occurrence, a NaN row its first NaN, as PyTorch.
"""

import json

import pytest
import torch
import torch.nn.functional as F
import trnc
from torch.utils._pytree import tree_leaves

from helpers import check_against_eager, compile_neuron, needs_native

pytestmark = needs_native


def run_both(fn, *inputs):
    expected = fn(*inputs)
    actual = compile_neuron(fn)(*[x.clone() for x in inputs])
    return actual, expected


def assert_same(actual, expected, **tol):
    """Values close, integer results (indices) exactly equal."""
    actual, expected = tree_leaves(actual), tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        if e.is_floating_point():
            torch.testing.assert_close(a, e, equal_nan=True, **tol)
        else:
            assert torch.equal(a, e), f"{a}\n!=\n{e}"


def with_ties_and_nan(shape):
    """Rounded values (many ties), one row holding two NaNs, one all -inf row."""
    x = torch.randn(shape).mul(2).round()
    flat = x.view(-1, shape[-1])
    flat[1, 2] = float("nan")
    flat[1, shape[-1] - 1] = float("nan")
    flat[2] = float("-inf")
    return x


# --- max.dim / min.dim / argmax / argmin -----------------------------------------


@pytest.mark.parametrize("shape,dim", [((4, 9), 1), ((4, 9), 0), ((3, 5, 300), -1), ((130, 6), 1), ((3, 4, 5), 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_dim(shape, dim, keepdim):
    x = with_ties_and_nan(shape)
    assert_same(*run_both(lambda t: (*torch.max(t, dim, keepdim), *torch.min(t, dim, keepdim)), x))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool, torch.bfloat16])
def test_max_dim_dtypes(dtype):
    x = torch.randint(-3, 4, (6, 7)).to(dtype)
    assert_same(*run_both(lambda t: (*torch.max(t, 1), *torch.min(t, 0)), x))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), (0, True)])
def test_argmax_argmin(dim, keepdim):
    x = with_ties_and_nan((5, 11))
    assert_same(*run_both(lambda t: (t.argmax(dim, keepdim), t.argmin(dim, keepdim)), x))


def test_argmax_scalar_and_noncontiguous():
    assert_same(*run_both(lambda t: (t.argmax(), torch.max(t, 0)), torch.tensor(2.5)))
    x = torch.randn(6, 8)
    assert_same(*run_both(lambda t: t.t().argmax(), x))


def test_max_dim_backward():
    # The gradient of max.dim goes to the index (a scatter in PyTorch's formula).
    x = torch.randn(4, 6)
    check_against_eager(lambda t: torch.max(t, 1)[0] * 2, [x])


# --- integer arange, tril/triu on int and bool -------------------------------------------


def test_integer_arange():
    fn = lambda t: (torch.arange(3, 300, 2, dtype=torch.int64) + t.sum().long(),
                    torch.arange(-5.5, 7, 1.5, dtype=torch.int32), torch.arange(10))
    assert_same(*run_both(fn, torch.zeros(2)))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.bool])
@pytest.mark.parametrize("diagonal", [0, -1, 2])
def test_tril_triu_int_bool(dtype, diagonal):
    x = torch.randint(-4, 5, (2, 5, 7)).to(dtype)
    assert_same(*run_both(lambda t: (torch.tril(t, diagonal), torch.triu(t, diagonal)), x))


# --- topk, sort, argsort ----------------------------------------------------------


def with_nan_inf(shape):
    x = torch.randn(shape)
    x.view(-1, shape[-1])[1, 3] = float("nan")
    x.view(-1, shape[-1])[2, 0] = float("inf")
    x.view(-1, shape[-1])[2, 4] = float("nan")
    return x


@pytest.mark.parametrize("dim", [1, 0])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dim, largest):
    x = with_nan_inf((5, 9))
    assert_same(*run_both(lambda t: torch.topk(t, 3, dim, largest), x))


def test_topk_int_and_backward():
    x = torch.randperm(40).view(4, 10)
    assert_same(*run_both(lambda t: torch.topk(t, 4), x))
    check_against_eager(lambda t: torch.topk(t, 2, 0).values, [torch.randn(6, 5)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_stable(dtype, descending):
    # Many ties (stable order), NaN and -inf rows for floats.
    x = with_ties_and_nan((4, 10)).to(dtype) if dtype.is_floating_point else torch.randint(-2, 3, (4, 10)).to(dtype)
    fn = lambda t: (torch.sort(t, dim=1, descending=descending, stable=True),
                    torch.argsort(t, dim=0, descending=descending, stable=True))
    assert_same(*run_both(fn, x))


def test_sort_backward():
    check_against_eager(lambda t: torch.sort(t, 1, descending=True).values * 3, [torch.randn(3, 7)])


# --- max_pool2d -------------------------------------------------------------------


POOLS = [
    # (input shape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 3, 8, 8), 2, 2, 0, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, True),
    ((2, 9, 10), (2, 3), (1, 2), (1, 0), (2, 1), False),
    ((1, 1, 6, 6), 2, 3, 0, 1, True),
    # Kernels larger than the map (CSPNeXt's SPP: 5, 9, 13 at stride 1 on a 2x2 map).
    ((2, 3, 2, 2), 13, 1, 6, 1, False),
    ((1, 2, 3, 5), 9, 1, 4, 1, False),
    ((1, 2, 4, 5), 7, 2, 3, 1, True),
]


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOLS)
def test_max_pool2d_with_indices(shape, k, s, p, d, ceil):
    x = torch.randn(shape).mul(2).round()  # ties inside windows
    x.view(-1)[5] = float("nan")
    fn = lambda t: F.max_pool2d(t, k, s, p, d, ceil_mode=ceil, return_indices=True)
    assert_same(*run_both(fn, x))


@pytest.mark.parametrize("shape,k,s,p,d,ceil", POOLS)
def test_max_pool2d_backward(shape, k, s, p, d, ceil):
    x = torch.randn(shape)
    check_against_eager(lambda t: F.max_pool2d(t, k, s, p, d, ceil_mode=ceil), [x])


def test_max_pool2d_backward_ties_bf16():
    x = torch.randn(2, 4, 6, 6).mul(2).round().to(torch.bfloat16)
    check_against_eager(lambda t: F.max_pool2d(t, 3, 1, 1), [x])


def test_max_pool2d_backward_reads_each_window_once():
    # ResNet's stem pool (3x3, stride 2, padding 1). The backward is one
    # elementwise group over the input's gradient reading the saved indices
    # and gradient as shifted views (decomp_indices._max_pool2d_backward):
    # measured 4.0x the bytes of its own inputs and output (the padded
    # copies, each shifted view, each element's index); it was 13.1x with a
    # select, pads and an interleaving copy per kernel position.
    x = torch.randn(2, 16, 32, 32, generator=torch.Generator().manual_seed(0))
    fn = lambda t: F.max_pool2d(t, 3, 2, 1)
    check_against_eager(fn, [x])
    c = compile_neuron(fn)
    t = x.clone().requires_grad_()
    out = c(t)
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    with trnc.profiling.capture() as p:
        out.backward(g)
    (backward,) = [gp for gp in p.graphs if gp.graph.startswith("backward")]
    io = out.numel() * (8 + 4) + x.numel() * 4  # indices, grad in; grad_input out
    moved = backward.to_dict()["hbm_bytes"]
    assert moved <= 6 * io, (moved, io)


def test_max_pool2d_builds_its_index_iotas_once():
    # ResNet's stem pool (3x3, stride 2, padding 1): the kernel positions'
    # flat indices and validity masks differ only by a constant, so their
    # iotas are built once per pool (decomp_indices._Pool). Built per position
    # they were 232 traced forward nodes (28 aranges), most of the rule's
    # tracing time under AOTAutograd; the values are the same exact integers.
    graphs = {}
    with trnc.collect.collecting(lambda g: graphs.setdefault(g.name, json.loads(g.graph_json))):
        torch._dynamo.reset()
        x = torch.randn(2, 4, 16, 16, requires_grad=True)
        compile_neuron(lambda t: F.max_pool2d(t, 3, 2, 1))(x).sum().backward()
    (forward,) = [[n["target"] for n in g["nodes"]] for name, g in graphs.items() if name.startswith("forward")]
    assert forward.count("aten.arange.start_step") == 2, forward
    assert len(forward) <= 140, len(forward)


def test_max_pool2d_backward_of_a_channels_last_gradient():
    # SAM2 Hiera's query pooling: a channels-last view pooled, then permuted
    # back, so the saved indices and the incoming gradient are channels last;
    # the gradient's elementwise ops keep that layout, and a view of their
    # result to [.., H, W] was refused.
    x = torch.randn(2, 8, 8, 6)
    check_against_eager(lambda t: F.max_pool2d(t.permute(0, 3, 1, 2), 2, 2).permute(0, 2, 3, 1), [x])


def test_max_pool2d_skips_kernel_positions_that_only_read_padding():
    # SPP's 13x13 pool (stride 1, padding 6) on a 2x2 map: only 3x3 kernel
    # positions (and window shifts) ever read the input. Tracing all 169
    # per pool, forward and backward, was most of cspnext_tiny's compile.
    from torch.fx.experimental.proxy_tensor import make_fx
    from trnc.decompositions import decomposition_table

    def wheres(fn, *args):
        gm = make_fx(fn, decomposition_table=decomposition_table(), tracing_mode="fake")(*args)
        return sum(1 for n in gm.graph.nodes if n.target == torch.ops.aten.where.self)

    x = torch.randn(2, 4, 2, 2)
    out, idx = F.max_pool2d(x, 13, 1, 6, return_indices=True)
    assert wheres(lambda t: F.max_pool2d(t, 13, 1, 6, return_indices=True), x) <= 2 * 9  # value, index
    bwd = lambda g, t, i: torch.ops.aten.max_pool2d_with_indices_backward(g, t, [13, 13], [1, 1], [6, 6],
                                                                           [1, 1], False, i)
    assert wheres(bwd, out, x, idx) <= 9


# --- group_norm, one_hot ------------------------------------------------------------


@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((3, 4, 7), 2), ((2, 8), 4)])
def test_group_norm(shape, groups):
    x = torch.randn(shape)
    w = torch.randn(shape[1])
    b = torch.randn(shape[1])
    check_against_eager(lambda t, w, b: F.group_norm(t, groups, w, b), [x, w, b], atol=1e-4, rtol=1e-4)
    check_against_eager(lambda t: F.group_norm(t, groups), [x], atol=1e-4, rtol=1e-4)


def test_one_hot():
    x = torch.tensor([[0, 3, 1], [4, 4, 2]])
    assert_same(*run_both(lambda t: F.one_hot(t, 6), x))
    assert_same(*run_both(lambda t: F.one_hot(t.to(torch.int32).long(), 5), x))
