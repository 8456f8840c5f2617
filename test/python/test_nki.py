"""trnc.nki kernels run on the simulator against eager PyTorch (small shapes).

Each kernel is written as an NKI kernel would be (only the imports differ); its
torch outputs come from the functional simulator, with the race checker on
(conftest.py), so the compiler's semaphores are checked too.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

import trnc.nki as nki
import trnc.nki.isa as nisa
import trnc.nki.language as nl

from helpers import needs_native

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import nki_kernels  # noqa: E402

pytestmark = needs_native


def _bf16_matmul_ref(lhsT: torch.Tensor, rhs: torch.Tensor) -> torch.Tensor:
    return (lhsT.double().T @ rhs.double()).to(lhsT.dtype)


@nki.jit
def add_rows(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[i * 128:(i + 1) * 128, :])
        y = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], nl.add(x, y))
    return out


def test_elementwise_add():
    a, b = torch.randn(256, 384), torch.randn(256, 384)
    torch.testing.assert_close(add_rows(a, b), a + b)


@nki.jit
def activations(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    y = nl.multiply(nl.exp(t), 0.5)
    z = nl.maximum(y, nl.tanh(t))
    w = 1.0 - nl.sigmoid(z)
    nl.store(out, w)
    return out


def test_activation_and_scalar_ops():
    x = torch.randn(128, 256)
    expected = 1.0 - torch.sigmoid(torch.maximum(torch.exp(x) * 0.5, torch.tanh(x)))
    torch.testing.assert_close(activations(x), expected, rtol=2e-5, atol=2e-5)


@nki.jit
def derivative_activations(x):
    gelu = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    silu = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(gelu, nl.gelu_dx(t))
    nl.store(silu, nl.silu_dx(t))
    return gelu, silu


def test_derivative_activations():
    # nl.gelu_dx / nl.silu_dx: the derivatives autograd computes for gelu and silu.
    x = torch.randn(128, 96) * 3
    g, s = x.clone().requires_grad_(), x.clone().requires_grad_()
    torch.nn.functional.gelu(g).sum().backward()
    torch.nn.functional.silu(s).sum().backward()
    gelu, silu = derivative_activations(x)
    torch.testing.assert_close(gelu, g.grad, rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(silu, s.grad, rtol=2e-5, atol=2e-5)


@nki.jit
def row_stats(x):
    P, F = x.shape
    sums = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    maxes = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    means = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(sums, nl.sum(t, axis=1, keepdims=True))
    nl.store(maxes, nisa.tensor_reduce(np.max, t, axis=1, keepdims=True))
    nl.store(means, nl.mean(t, axis=[1], keepdims=True))
    return sums, maxes, means


def test_reductions():
    x = torch.randn(96, 300)
    s, m, mean = row_stats(x)
    torch.testing.assert_close(s, x.sum(1, keepdim=True), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(m, x.amax(1, keepdim=True))
    torch.testing.assert_close(mean, x.mean(1, keepdim=True), rtol=1e-5, atol=1e-5)


@nki.jit
def softmax_rows(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        neg_max = nisa.tensor_reduce(nl.max, t, axis=1, keepdims=True, negate=True)
        e = nisa.activation(op=nl.exp, data=t, bias=neg_max)
        total = nl.sum(e, axis=1, keepdims=True)
        nl.store(out[i * 128:(i + 1) * 128, :], nl.divide(e, total))
    return out


def test_softmax_like():
    x = torch.randn(256, 200) * 4
    torch.testing.assert_close(softmax_rows(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@nki.jit
def normalize_rows(x):
    """(x - mean) * rstd with both operands per partition, then 2 - y with an immediate."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    mean = nl.mean(t, axis=1, keepdims=True)
    rstd = nl.rsqrt(nl.add(nl.mean(nl.square(t), axis=1, keepdims=True), 1.0))
    y = nisa.tensor_scalar(data=t, op0=nl.subtract, operand0=mean, op1=nl.multiply, operand1=rstd)
    nl.store(out, nisa.tensor_scalar(data=y, op0=nl.subtract, operand0=2.0, reverse0=True,
                                     op1=nl.multiply, operand1=rstd))
    return out


def test_tensor_scalar_per_partition_operands(tmp_path):
    from trnc._native import native

    x = torch.randn(128, 96)
    mean = x.mean(1, keepdim=True)
    rstd = torch.rsqrt((x * x).mean(1, keepdim=True) + 1.0)
    torch.testing.assert_close(normalize_rows(x), (2 - (x - mean) * rstd) * rstd, rtol=1e-5, atol=1e-5)
    # Each is one tensor_scalar (per-partition operands in src1 / src2), not a tensor_tensor
    # reading the operand broadcast along the row (twice the cost).
    path = normalize_rows.write_artifact(str(tmp_path / "norm.trnc"), x)
    with open(path, "rb") as f:
        info = native().inspect_artifact(f.read())
    ops: dict = {}
    for e in info["engines"]:
        for name, count in e["opcodes"].items():
            ops[name] = ops.get(name, 0) + count
    assert "tensor_tensor" not in ops
    assert ops["tensor_scalar"] >= 2


@nki.jit
def column_ops(x, c):
    """nl binary ops of a tile and a [P, 1] column, in both orders."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t, col = nl.load(x), nl.load(c)
    nl.store(out, nl.add(nl.divide(t, col), nl.subtract(col, t)))
    return out


def test_nl_ops_with_a_column_are_tensor_scalars(tmp_path):
    from trnc._native import native

    x, c = torch.randn(128, 64), torch.rand(128, 1) + 0.5
    torch.testing.assert_close(column_ops(x, c), x / c + (c - x))
    path = column_ops.write_artifact(str(tmp_path / "col.trnc"), x, c)
    with open(path, "rb") as f:
        info = native().inspect_artifact(f.read())
    ops = [name for e in info["engines"] for name, n in e["opcodes"].items() for _ in range(n)]
    assert ops.count("tensor_scalar") == 2 and ops.count("tensor_tensor") == 1, ops


def test_tensor_scalar_operand_shape_is_checked():
    @nki.jit
    def bad(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x)
        nl.store(out, nisa.tensor_scalar(data=t, op0=nl.add, operand0=t))
        return out

    with pytest.raises(Exception, match=r"tensor_scalar operand must be a number or a \[128, 1\] tile"):
        bad(torch.randn(128, 8))


@nki.jit
def softmax_builtin(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.softmax(nl.load(x), axis=1))
    return out


def test_nl_softmax():
    x = torch.randn(64, 96)
    torch.testing.assert_close(softmax_builtin(x), torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


@nki.jit
def matmul_dst_first(lhsT, rhs):
    """NKI 0.6 style: every instruction writes a tensor the kernel allocated."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
        b = nl.ndarray((128, N), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(b, rhs[nl.ds(k * 128, 128), :])
        nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    res = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=result, src=res)
    return result


def test_matmul_dst_first_accumulates():
    lhsT = torch.randn(384, 128, dtype=torch.bfloat16)
    rhs = torch.randn(384, 256, dtype=torch.bfloat16)
    torch.testing.assert_close(matmul_dst_first(lhsT, rhs), _bf16_matmul_ref(lhsT, rhs), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("kernel", ["matmul_tiled", "matmul_hoist_load", "matmul_block_free"])
def test_tutorial_matmuls(kernel):
    lhsT = torch.randn(256, 256, dtype=torch.bfloat16)
    rhs = torch.randn(256, 1024, dtype=torch.bfloat16)
    out = getattr(nki_kernels, kernel)(lhsT, rhs)
    torch.testing.assert_close(out, _bf16_matmul_ref(lhsT, rhs), rtol=2e-2, atol=5e-2)


def test_tutorial_matmul_blocked():
    # Small blocks: 2 K blocks accumulate in SBUF (bf16 partial sums, as the tutorial keeps them).
    lhsT = torch.randn(512, 256, dtype=torch.bfloat16)
    rhs = torch.randn(512, 2048, dtype=torch.bfloat16)
    out = nki_kernels.matmul_blocked(lhsT, rhs, 2, 2, 2)
    torch.testing.assert_close(out.float(), _bf16_matmul_ref(lhsT, rhs).float(), rtol=3e-2, atol=0.3)


def test_attention_kernel():
    q, k, v = (torch.randn(512, 64, dtype=torch.bfloat16) for _ in range(3))
    expected = torch.softmax(q.float() @ k.float().T, dim=1) @ v.float()
    out = nki_kernels.attention(q, k, v)
    torch.testing.assert_close(out.float(), expected, rtol=3e-2, atol=3e-2)


@nki.jit
def mgrid_and_iota(x):
    """Legacy indexing with nl.mgrid / nl.arange, and an iota + causal mask."""
    P, F = x.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:P, 0:F]
    t = nl.load(x[i_p, i_f])
    idx = nisa.iota(i_p * F + i_f, dtype=nl.float32)
    masked = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=t, on_false_value=-1.0)
    nl.store(out[i_p, i_f], nl.add(masked, idx))
    return out


def test_iota_and_affine_select():
    x = torch.randn(64, 64)
    idx = torch.arange(64 * 64, dtype=torch.float32).reshape(64, 64)
    expected = torch.where(torch.ones(64, 64).tril().bool(), x, torch.full_like(x, -1.0)) + idx
    torch.testing.assert_close(mgrid_and_iota(x), expected)


@nki.jit
def transpose_kernel(x):
    P, F = x.shape
    out = nl.ndarray((F, P), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.copy(nl.transpose(nl.load(x)), dtype=x.dtype))
    return out


def test_transpose():
    x = torch.randn(96, 80)
    torch.testing.assert_close(transpose_kernel(x), x.T.contiguous())


def test_benchmark_reports_simulated_time_and_profile():
    lhsT = torch.randn(256, 128, dtype=torch.bfloat16)
    rhs = torch.randn(256, 512, dtype=torch.bfloat16)
    r = nki.benchmark(nki_kernels.matmul_tiled, lhsT, rhs, target="trn1")
    assert r.target == "trn1" and r.latency_ns > 0
    assert r.latency_ns == r.profile.total_ns == r.percentiles_ns["p50"]
    assert "simulated" in type(r).__doc__
    d = r.profile.to_dict()
    assert d["graph"] == "matmul_tiled"
    # 2 matmuls of [128 x 128] x [128 x 512] on the Tensor Engine.
    assert r.profile.profile.to_dict()["tensor_flops"] == 2 * 2 * 128 * 128 * 512


def test_artifact_for_trnc_profile(tmp_path):
    from trnc.cli import main

    x = torch.randn(128, 64)
    path = add_rows.write_artifact(str(tmp_path / "add.trnc"), x, x)
    assert main(["profile", path]) == 0


def test_kernel_cache_per_signature():
    kernel = nki.jit(add_rows.fn)
    a = torch.randn(128, 64)
    kernel(a, a)
    kernel(a, a)
    kernel(torch.randn(256, 64), torch.randn(256, 64))
    assert len(kernel._compiled) == 2


@nki.jit
def swap_and_stride(x):
    """3-D HBM tensors, a block-dim SBUF tensor, a strided (step 2) HBM slice."""
    B, P, F = x.shape
    swapped = nl.ndarray((B, P, F), dtype=x.dtype, buffer=nl.shared_hbm)
    evens = nl.ndarray((P, F // 2), dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = nl.ndarray((B, nl.par_dim(P), F), dtype=x.dtype, buffer=nl.sbuf)
    for b in nl.affine_range(B):
        tiles[b] = nl.load(x[b])
    for b in nl.affine_range(B):
        nl.store(swapped[b], tiles[B - 1 - b])
    nl.store(evens, nl.load(x[0, :, ::2]))
    return swapped, evens


def test_views_block_dims_and_strides():
    x = torch.randn(3, 128, 64)
    swapped, evens = swap_and_stride(x)
    torch.testing.assert_close(swapped, x.flip(0))
    torch.testing.assert_close(evens, x[0, :, ::2])


def test_benchmark_decorator_form():
    @nki.benchmark(warmup=2, iters=5, target="trn1")
    def scaled(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(x), 3.0))
        return out

    x = torch.randn(128, 64)
    torch.testing.assert_close(scaled(x), x * 3)
    us = scaled.benchmark_result.nc_latency.get_latency_percentile(99)
    assert us == scaled.benchmark_result.latency_ns / 1e3 > 0
    assert scaled.benchmark_result.target == "trn1"
    with pytest.raises(nki.NkiError, match="unsupported options"):
        nki.benchmark(bogus=1)


@nki.jit
def three_tiles_then_a(x, y, z):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    e = nl.load(z)
    c = nl.multiply(b, e)  # a is idle here, and a, b, e and c exceed SBUF
    nl.store(out, nl.add(c, a))
    return out


def test_sbuf_overflow_spills_an_idle_tile_to_hbm():
    # Four [128, 16000] f32 tiles (62.5 KiB per partition each) do not fit
    # trn2's 224 KiB partitions: the allocator stores `a` to HBM after its load
    # and loads it back before the add, instead of refusing the kernel.
    x, y, z = (torch.randn(128, 16000) for _ in range(3))
    torch.testing.assert_close(three_tiles_then_a(x, y, z), y * z + x)
