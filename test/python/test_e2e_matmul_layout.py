"""End to end: the matmul lowering's operand layouts and loop orders against eager.

Operands whose contraction dim is contiguous (a row-major A, the W^T of x @ W^T,
the k^T of attention scores) are loaded as rows and transposed on the Tensor
Engine; operands already in [k, free] layout are loaded directly. The planner
(passes/Tile/MatmulBlocking.cpp) keeps A^T or B resident, or streams both for
very long contractions. These cases cover each route, ragged edges (M, K, N
not multiples of 128/512), K = 1, strided views, the three float dtypes,
batched products and gradients (whose products mix transposed views).
"""

import pytest
import torch

from helpers import check_against_eager, fp32_matmul_tol, needs_native

pytestmark = needs_native


def rand(*shape, dtype=torch.float32):
    return torch.randn(*shape).to(dtype)


# Low-precision products: inputs are rounded to the dtype, sums are fp32 (eager
# rounds the same products differently), so compare at the dtype's resolution.
LOW_TOL = {torch.bfloat16: dict(atol=0.1, rtol=0.02), torch.float16: dict(atol=0.02, rtol=0.005)}


@pytest.mark.parametrize("m,k,n", [(300, 200, 700), (130, 129, 520), (640, 384, 1100)])
def test_linear_weight_transposed(m, k, n):
    # x @ W^T: both operands have k contiguous, so both are transposed on chip.
    check_against_eager(lambda x, w: x @ w.t(), [rand(m, k), rand(n, k)], **fp32_matmul_tol(k))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_low_precision(dtype):
    check_against_eager(
        lambda x, w: x @ w.t(), [rand(257, 300, dtype=dtype), rand(600, 300, dtype=dtype)], grad=False, **LOW_TOL[dtype]
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_row_major_product(dtype):
    # Row-major A (transposed on chip) times row-major B (direct), ragged edges.
    a, b = rand(520, 390, dtype=dtype), rand(390, 530, dtype=dtype)
    tol = LOW_TOL.get(dtype, fp32_matmul_tol(390))
    check_against_eager(torch.mm, [a, b], grad=dtype == torch.float32, **tol)


def test_nn_linear_training_step_gradients():
    # Forward x @ W^T, and backward dX = dY @ W (direct) and dW = dY^T @ x
    # (a transposed view as stationary operand: a direct DMA).
    torch.manual_seed(0)
    lin = torch.nn.Linear(192, 320)
    check_against_eager(lambda x, w, b: torch.nn.functional.linear(x, w, b),
                        [rand(136, 192), lin.weight.detach(), lin.bias.detach()], **fp32_matmul_tol(192, 136))


def test_contraction_of_one():
    # The gradients contract over 600 and 200.
    check_against_eager(torch.mm, [rand(200, 1), rand(1, 600)], **fp32_matmul_tol(600))


def test_tiny_products_use_direct_loads():
    check_against_eager(lambda a, b: a @ b.t(), [rand(3, 5), rand(4, 5)])


def test_strided_views():
    # Every other column of A and a transposed, sliced B: arbitrary strides.
    def fn(a, b):
        return a[:, ::2] @ b[1:, :].t()

    check_against_eager(fn, [rand(140, 300), rand(131, 150)], **fp32_matmul_tol(150))


def test_batched_scores_transposed_keys():
    # Attention scores q @ k^T per batch: k^T has its contraction contiguous.
    q, k = rand(3, 130, 64), rand(3, 200, 64)
    check_against_eager(lambda q, k: q @ k.transpose(-1, -2), [q, k], **fp32_matmul_tol(64))


def test_long_contraction_streams_both_operands():
    # K * 128 * 4 bytes beyond half of SBUF per partition: nothing resident.
    a, b = rand(130, 30000), rand(30000, 3)
    check_against_eager(torch.mm, [a, b], grad=False, **fp32_matmul_tol(30000))


def test_wide_resident_weight():
    # W^T [k, n] resident across the token tiles, n beyond one PSUM bank.
    check_against_eager(lambda x, w: x @ w.t(), [rand(384, 128), rand(2100, 128)], grad=False,
                        **fp32_matmul_tol(128))


def test_non_finite_values_stay_in_their_rows():
    # trn2's Tensor Engine transposes bit-exactly: an Inf in A spreads to its
    # own row of the product only, as in eager (not to its 128-row block).
    a, b = rand(200, 200), rand(200, 64)
    a[3, 5] = float("inf")
    a[150, 7] = float("nan")
    check_against_eager(torch.mm, [a, b], grad=False, equal_nan=True, **fp32_matmul_tol(200))


@pytest.mark.parametrize("target", ["trn1", "trn3"])
def test_other_targets(target):
    # Block sizes follow each target's SBUF (trn1 192 KiB, trn3 256 KiB per
    # partition): a product whose resident block differs between them.
    torch.manual_seed(0)
    x, w = rand(700, 2048), rand(1500, 2048)
    fn = torch.compile(lambda x, w: x @ w.t(), backend="neuron", dynamic=False, options={"target": target})
    torch.testing.assert_close(fn(x, w), x @ w.t(), **fp32_matmul_tol(2048))


@pytest.mark.parametrize("m,k,n,bias", [(2048, 4096, 2560, False), (1600, 4096, 1536, True)])
def test_block_loops_around_column_loops(m, k, n, bias):
    # Blocks of A^T's rows resident (512 rows), 4 and 3 blocks with 5 and 3
    # column tiles: a tile loop over the blocks around the loop over each
    # block's columns, windows of windows (LowerMatmul.cpp; the lit test
    # lower-to-nisa-matmul-nested-loops.mlir); with a bias, the later blocks
    # reuse the rows the first one kept.
    x, w, b = rand(m, k), rand(n, k), 10 * rand(n)
    fn = (lambda x, w, b: torch.nn.functional.linear(x, w, b)) if bias else (lambda x, w, b: x @ w.t())
    check_against_eager(fn, [x, w, b], grad=False, **fp32_matmul_tol(k))
