"""End to end: the matmul family, convolution and average pooling against eager.

Forward and backward (input gradients) through trnc's compiler and simulator.
Batched products (bmm, matmul/einsum with batch dims, baddbmm) lower to
trn.matmul with a batch dim; convolutions, their gradients and avg pooling to
trn.conv2d (implicit GEMM).
"""

import pytest
import torch
import torch.nn.functional as F

from helpers import check_against_eager, fp32_matmul_tol, needs_native

pytestmark = needs_native


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


@pytest.mark.parametrize("b,m,k,n", [(1, 1, 1, 1), (3, 7, 13, 5), (2, 130, 129, 520)])
def test_bmm(b, m, k, n):
    check_against_eager(torch.bmm, [rand(b, m, k), rand(b, k, n)], **fp32_matmul_tol(k, m, n))


def test_bmm_bfloat16():
    a, b = rand(2, 16, 32, dtype=torch.bfloat16), rand(2, 32, 8, dtype=torch.bfloat16)
    check_against_eager(torch.bmm, [a, b], grad=False, atol=0.1, rtol=0.02)


def test_baddbmm():
    check_against_eager(
        lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), [rand(2, 3, 5), rand(2, 3, 4), rand(2, 4, 5)]
    )


@pytest.mark.parametrize(
    "fn,shapes",
    [
        (torch.matmul, [(2, 2, 3, 4), (2, 2, 4, 5)]),  # expand + view + bmm
        (torch.matmul, [(2, 3, 4), (4, 5)]),  # view + mm
        (lambda a, b: torch.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)]),
        (lambda a, b: torch.einsum("bhqd,bhkd->bhqk", a, b), [(1, 2, 5, 8), (1, 2, 6, 8)]),
        (F.linear, [(2, 3, 4), (5, 4), (5,)]),
    ],
    ids=["matmul4d", "matmul3x2", "einsum_bmm", "einsum_qk", "linear3d"],
)
def test_matmul_forms(fn, shapes):
    check_against_eager(fn, [rand(*s) for s in shapes])


CONV2D = [
    # (N, C, H, W), (O, C/g, KH, KW), stride, padding, dilation, groups
    ((1, 3, 8, 8), (4, 3, 3, 3), 1, 0, 1, 1),
    ((2, 4, 9, 7), (6, 4, 3, 2), 2, 1, 1, 1),
    ((1, 4, 10, 10), (4, 2, 3, 3), 1, 2, 2, 2),
    ((1, 6, 7, 7), (6, 1, 3, 3), (2, 1), (1, 0), 1, 6),  # depthwise, asymmetric
    ((1, 130, 5, 5), (3, 130, 1, 1), 1, 0, 1, 1),  # two input-channel chunks
    # LowerConv.cpp's other loop nests (each picked by instruction count):
    ((2, 3, 20, 20), (4, 3, 3, 3), 1, 1, 1, 1),  # weight grad: position GEMM, 4 row chunks
    ((2, 2, 3, 150), (3, 2, 1, 3), 1, 0, 1, 1),  # weight grad: kernel rows > 128 positions
    ((2, 130, 24, 24), (130, 1, 3, 3), 1, 1, 1, 130),  # depthwise (Vector), 2 partition chunks
    ((2, 8, 25, 25), (8, 1, 3, 3), 2, 2, 2, 8),  # depthwise, strided + dilated; dot weight grad
    ((1, 8, 24, 24), (4, 2, 3, 3), 1, 1, 1, 4),  # one output channel per group, 2 inputs
    ((2, 3, 40, 40), (8, 3, 7, 7), 2, 3, 1, 1),  # stem: packed GEMM, K = (c, 7, 7) chunks
    # Batches of 3+: the images after the first are a tile loop (windows of
    # the input and the result), in the forward and the input gradient.
    ((4, 4, 9, 7), (6, 4, 3, 2), 2, 1, 1, 1),  # channel GEMM, padded input scratch
    ((3, 130, 5, 5), (3, 130, 1, 1), 1, 0, 1, 1),  # two input-channel chunks
    ((4, 3, 20, 20), (8, 3, 7, 7), 2, 3, 1, 1),  # packed stem
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation,groups", CONV2D)
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(xs, ws, stride, padding, dilation, groups, bias):
    args = [rand(*xs), rand(*ws)] + ([rand(ws[0])] if bias else [])

    def fn(x, w, b=None):
        return F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)

    check_against_eager(fn, args, **fp32_matmul_tol(xs[2] * xs[3] * xs[0]))


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv1d(stride, padding, dilation):
    check_against_eager(
        lambda x, w, b: F.conv1d(x, w, b, stride=stride, padding=padding, dilation=dilation),
        [rand(2, 3, 11), rand(5, 3, 3), rand(5)],
    )


def test_depthwise_conv2d_bfloat16():
    x, w = rand(1, 32, 24, 24, dtype=torch.bfloat16), rand(32, 1, 3, 3, dtype=torch.bfloat16)
    check_against_eager(lambda x, w: F.conv2d(x, w, padding=1, groups=32), [x, w], grad=False, atol=0.1, rtol=0.02)


def test_conv2d_bfloat16():
    x, w = rand(1, 4, 6, 6, dtype=torch.bfloat16), rand(8, 4, 3, 3, dtype=torch.bfloat16)
    check_against_eager(lambda x, w: F.conv2d(x, w, padding=1), [x, w], grad=False, atol=0.1, rtol=0.02)


@pytest.mark.parametrize("stride,padding,output_padding,groups", [(1, 0, 0, 1), (2, 1, 1, 1), (2, 0, 0, 2)])
def test_conv_transpose2d_forward(stride, padding, output_padding, groups):
    check_against_eager(
        lambda x, w: F.conv_transpose2d(x, w, stride=stride, padding=padding, output_padding=output_padding, groups=groups),
        [rand(1, 4, 5, 5), rand(4, 3, 3, 3)],
        grad=False,
    )


def test_conv_net_training_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(8, 4, 3, stride=2), torch.nn.Flatten(), torch.nn.Linear(4, 2),
    )
    check_against_eager(net, [rand(2, 3, 8, 8)], **fp32_matmul_tol(128))


@pytest.mark.parametrize(
    "kernel,stride,padding",
    [(2, None, 0), (3, 2, 1), ((2, 3), (1, 2), (1, 0))],
)
def test_avg_pool2d(kernel, stride, padding):
    check_against_eager(lambda x: F.avg_pool2d(x, kernel, stride, padding), [rand(2, 3, 7, 8)])


@pytest.mark.parametrize("ceil_mode,count_include_pad", [(True, True), (False, False), (True, False)])
def test_avg_pool2d_per_window_count(ceil_mode, count_include_pad):
    # Windows clipped at the border divide by their own element count.
    check_against_eager(
        lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=ceil_mode, count_include_pad=count_include_pad),
        [rand(1, 2, 8, 8)],
    )


def test_avg_pool2d_divisor_override():
    check_against_eager(lambda x: F.avg_pool2d(x, 2, divisor_override=3), [rand(1, 2, 4, 4)])


def test_avg_pool2d_unbatched():
    check_against_eager(lambda x: F.avg_pool2d(x, 2), [rand(3, 4, 6)])


def test_adaptive_avg_pool2d_divisible():
    check_against_eager(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [rand(2, 3, 8, 9)])


# Under torch.compile a causal SDPA takes PyTorch's math path (decomposed above
# trnc's table): a bool tril mask, where(-inf) and the eq/any/where guard of
# fully masked rows.
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_scaled_dot_product_attention(causal, scale):
    # L != S for the plain case: the causal mask is top-left aligned as in eager.
    q, k, v = rand(2, 3, 5, 8), rand(2, 3, 6 if not causal else 5, 8), rand(2, 3, 6 if not causal else 5, 4)
    check_against_eager(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale),
        [q, k, v], atol=1e-4, rtol=1e-4,
    )


def test_adaptive_avg_pool2d_uneven():
    # Overlapping windows of varying size: averaging matrices and two matmuls.
    check_against_eager(lambda x: F.adaptive_avg_pool2d(x, (5, 3)), [rand(2, 3, 8, 7)])
