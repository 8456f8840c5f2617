"""End to end, reductions and softmax: trnc (compiler + simulator) against eager.

Shapes cover inner and leading dims, several dims at once, more kept rows
than partitions (128) and reduced rows longer than one SBUF tile (2048 fp32).
Backward runs where every op of the backward graph lowers today (amax/prod
backward need eq/div-by-tensor and cumprod).
"""

import pytest
import torch

from helpers import check_against_eager, needs_native

pytestmark = needs_native

SHAPES_DIMS = [((5,), None), ((7, 300), 1), ((7, 300), 0), ((130, 9, 6), (0, 2)), ((3, 2500), -1), ((4, 5, 6), None)]


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean(shape, dim, keepdim):
    x = torch.randn(shape)
    if dim is None:
        check_against_eager(lambda t: t.sum() + t.mean(), [x], atol=1e-4, rtol=1e-5)
    else:
        check_against_eager(lambda t: t.sum(dim, keepdim=keepdim) * 0.5 + t.mean(dim, keepdim=keepdim), [x],
                            atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_amax_amin(shape, dim):
    x = torch.randn(shape)
    d = () if dim is None else dim
    check_against_eager(lambda t: torch.amax(t, d) - torch.amin(t, d, keepdim=False), [x], grad=False)


def test_max_min_all():
    check_against_eager(lambda t: t.max() + t.min(), [torch.randn(33, 70)], grad=False)


@pytest.mark.parametrize("shape,dim", [((6, 40), 1), ((6, 40), 0), ((3, 4, 5), None)])
def test_prod(shape, dim):
    x = torch.rand(shape) + 0.5  # keep the product finite and well scaled
    fn = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim))
    check_against_eager(fn, [x], grad=False, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((130, 9, 6), (0, 2)), ((3, 2500), -1), ((4, 5), None)])
@pytest.mark.parametrize("correction", [0, 1])
def test_var(shape, dim, correction):
    check_against_eager(lambda t: torch.var(t, dim, correction=correction), [torch.randn(shape)],
                        atol=1e-4, rtol=1e-4)


def test_var_mean_keepdim():
    def fn(t):
        v, m = torch.var_mean(t, (1,), keepdim=True)
        return v + m

    check_against_eager(fn, [torch.randn(9, 31)], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((7, 300), 0), ((130, 4, 20), 1), ((2, 3, 2048), -1), ((5,), 0)])
def test_softmax(shape, dim):
    x = torch.randn(shape) * 4
    check_against_eager(lambda t: torch.softmax(t, dim), [x], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((130, 4, 20), 1), ((2, 3, 2048), -1)])
def test_log_softmax_forward(shape, dim):
    # Its backward needs exp (elementwise area); the forward alone here.
    check_against_eager(lambda t: torch.log_softmax(t, dim), [torch.randn(shape) * 4], grad=False,
                        atol=1e-5, rtol=1e-5)


def test_softmax_is_stable():
    # exp(1000) overflows fp32; the max shift keeps every row exact.
    x = torch.tensor([[1000.0, 999.0, 998.0], [-1000.0, -1001.0, -1000.0]])
    check_against_eager(lambda t: torch.softmax(t, 1), [x], grad=False)
    check_against_eager(lambda t: torch.log_softmax(t, 1), [x], grad=False)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision(dtype):
    x = torch.randn(20, 300).to(dtype)
    check_against_eager(lambda t: t.sum(1) + t.amax(1), [x], grad=False, atol=0.1, rtol=2e-2)
    check_against_eager(lambda t: torch.softmax(t, -1), [x], grad=False, atol=2e-3, rtol=2e-2)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_long_row_stays_fused(log):
    # A vocabulary-sized row (5000, beyond one 8 KiB working tile) is still one
    # fused trn.softmax: the whole row on chip.
    x = torch.randn(3, 5000)
    fn = (lambda t: torch.log_softmax(t, -1)) if log else (lambda t: torch.softmax(t, -1))
    check_against_eager(fn, [x], atol=2e-5, rtol=1e-4)


def test_log_softmax_vocabulary_rows_bf16():
    # A bf16 GPT's loss: 8192-wide rows over more than one partition tile
    # (130 rows), whose fp32 exponentials are kept a 2048-column chunk at a
    # time (LowerSoftmax.cpp); sums and shifts stay fp32, rounded once.
    x = (torch.randn(130, 8192) * 3).to(torch.bfloat16)
    check_against_eager(lambda t: torch.log_softmax(t, -1), [x], grad=False, atol=3e-2, rtol=1e-2)


def test_softmax_row_longer_than_on_chip():
    # Rows over the on-chip limit (8192 fp32 on trn1) decompose to
    # amax/sub/exp/sum (decomp_reductions.py) instead of the fused trn.softmax,
    # which refuses them.
    x = torch.randn(2, 9000)
    check_against_eager(lambda t: torch.softmax(t, -1), [x])


@pytest.mark.parametrize("shape,dim", [((4, 9), 1), ((4, 9), 0), ((3, 5000), -1), ((130, 3, 7), 1), ((6,), 0)])
def test_cumsum(shape, dim):
    # The backward is flip + cumsum + flip (flip is a strided view).
    check_against_eager(lambda t: torch.cumsum(t, dim), [torch.randn(shape)], atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("shape,dim", [((4, 9), 1), ((3, 2500), -1), ((5, 6), 0)])
def test_cumprod(shape, dim):
    x = 1.0 + 0.001 * torch.randn(shape)  # products stay near 1 over long rows
    check_against_eager(lambda t: torch.cumprod(t, dim), [x], grad=False, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dim", [None, 1, 0])
def test_any_all(dim):
    x = torch.randn(6, 40)
    x[2] = 0.0
    x[:, 3] = 0.0
    if dim is None:
        check_against_eager(lambda t: (t.any(), t.all(), (t * 0).any()), [x], grad=False)
    else:
        check_against_eager(lambda t: (torch.any(t, dim), torch.all(t, dim), torch.all(t + 10, dim)), [x], grad=False)


def test_integer_sum_computes_in_fp32():
    x = torch.randint(-100, 100, (9, 50))
    check_against_eager(lambda t: (t.sum(1), t.cumsum(0), t.amax(0)), [x], grad=False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_few_long_rows(dtype):
    # A reduction over a few long rows (LowerReduction's Vector path: the
    # kept elements over all partitions, the rows folded in fp32), with a
    # tail that does not fill the last [128, F] tile, and its gradient.
    x = torch.randn(3, 4, 128 * 520 + 7, generator=torch.Generator().manual_seed(0)).to(dtype)
    tol = 1e-5 if dtype == torch.float32 else 4e-2  # bf16: the sum, product and add each round
    check_against_eager(lambda t: t.sum(0) + t.amax(0) * t.mean(0), [x], atol=tol, rtol=tol, grad=False)


def test_position_embedding_gradient_over_batch():
    # The GPT pattern: a position table broadcast over a batch of 4 (the add
    # is tiled over all partitions), whose gradient sums over the batch.
    pos = torch.randn(256, 512, requires_grad=True)
    check_against_eager(lambda x, p: (x + p).tanh(), [torch.randn(4, 256, 512), pos], atol=1e-5, rtol=1e-5)


def test_sum_over_a_small_batch_folds_on_vector():
    # A position embedding's gradient over a batch of 2 ([2, 128, 256] f32 summed
    # over the batch): the two rows fold on Vector, with no Tensor Engine matmul.
    import trnc
    from helpers import compile_neuron

    x = torch.randn(2, 128, 256)
    fn = lambda t: t.sum(0)  # noqa: E731
    compiled = compile_neuron(fn)
    compiled(x)
    with trnc.profiling.capture(trace=True) as p:
        actual = compiled(x)
    torch.testing.assert_close(actual, fn(x), rtol=1e-6, atol=1e-6)
    assert '"matmul"' not in p.graphs[0].trace_json()
