"""End to end, op by op: trnc (compiler + simulator) against eager PyTorch."""

import pytest
import torch

from helpers import check_against_eager, fp32_matmul_tol, needs_native

pytestmark = needs_native


# Sizes not multiples of 128, and larger than the tile limits (K, M <= 128, N <= 512).
MM_SIZES = [(1, 1, 1), (7, 13, 5), (129, 130, 257), (300, 700, 600)]


@pytest.mark.parametrize("m,k,n", MM_SIZES)
def test_mm(m, k, n):
    check_against_eager(torch.mm, [torch.randn(m, k), torch.randn(k, n)], **fp32_matmul_tol(m, k, n))


@pytest.mark.parametrize("m,k,n", MM_SIZES)
def test_addmm(m, k, n):
    check_against_eager(
        lambda b, x, w: torch.addmm(b, x, w),
        [torch.randn(n), torch.randn(m, k), torch.randn(k, n)],
        **fp32_matmul_tol(m, k, n),
    )


@pytest.mark.parametrize("m,k,n", [(32, 64, 10), (200, 300, 520)])
def test_linear(m, k, n):
    check_against_eager(
        torch.nn.functional.linear, [torch.randn(m, k), torch.randn(n, k), torch.randn(n)], **fp32_matmul_tol(m, k, n)
    )


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a * b,
        lambda a, b: torch.add(a, b, alpha=2.5),
        lambda a, b: torch.sub(a, b, alpha=0.5),
        lambda a, b: a * 3 + 1.5 - b * 0.25,
        lambda a, b: 2 - a * b,
    ],
    ids=["add", "sub", "mul", "add_alpha", "sub_alpha", "scalars", "rsub"],
)
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (5,)), ((3, 1, 5), (4, 1)), ((130, 600), (600,))])
def test_elementwise_broadcasting(fn, shapes):
    check_against_eager(fn, [torch.randn(s) for s in shapes])


def test_relu_forward_backward():
    check_against_eager(torch.relu, [torch.randn(37, 300)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: a.sum(),
        lambda a: a.sum(0),
        lambda a: a.sum(-1),
        lambda a: a.sum((0, 2)),
        lambda a: a.sum(1, keepdim=True),
    ],
    ids=["all", "dim0", "dim-1", "dims02", "keepdim"],
)
def test_sum(fn):
    check_against_eager(fn, [torch.randn(6, 130, 7)])


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: a.view(20, 6) * 2,
        lambda a: a.reshape(6, 20) + 1,
        lambda a: a.transpose(0, 2) * 2,
        lambda a: a.permute(2, 0, 1).contiguous() + 1,
        lambda a: a.view(4, 30).t() * 1.5,
        lambda a: a.sum(1, keepdim=True).expand(4, 5, 6) * a,
        lambda a: a.unsqueeze(0).expand(3, 4, 5, 6).sum(0),
    ],
    ids=["view", "reshape", "transpose", "permute", "t", "expand", "expand_sum"],
)
def test_views(fn):
    check_against_eager(fn, [torch.randn(4, 5, 6)])


def test_dtype_casts():
    check_against_eager(lambda a: (a.to(torch.bfloat16) * 2).to(torch.float32), [torch.randn(8, 9)])


def test_fills():
    check_against_eager(lambda a: a + torch.zeros_like(a) + torch.ones(4, 5) * torch.full((5,), 2.0), [torch.randn(4, 5)])


def test_no_grad_inference_graph():
    import trnc

    model = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    with torch.no_grad():
        expected = model(x)
        actual = torch.compile(model, backend=__import__("helpers").BACKEND, dynamic=False)(x)
    torch.testing.assert_close(actual, expected)
    assert trnc.neuron.stats.counts["inference"] == 1


def test_mm_operands_larger_than_sbuf():
    """A is 32 MiB of float32, more than trn2's 28 MiB SBUF: tiles must stream from HBM."""
    m, k, n = 1024, 8192, 512
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)
    assert a.numel() * a.element_size() > 28 * 1024 * 1024
    check_against_eager(torch.mm, [a, b], grad=False, **fp32_matmul_tol(m, k, n))
