"""Linear-family interpolation (F.interpolate linear / bilinear / bicubic /
trilinear) as matmuls with per-axis weight matrices (decomp_resample.py):
results against eager forward and backward, the graphs hold matmuls and no
gathers or scatters, both matmul forms, and PyTorch's own kernels come back
after trnc's trace."""

import collections
import contextlib

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.backends.common import aot_autograd

from trnc import decomp_resample
from trnc.decompositions import decomposition_table
from helpers import check_against_eager, needs_native

aten = torch.ops.aten

CASES = {
    "linear_scale": ((2, 3, 10), dict(scale_factor=2.5, mode="linear")),
    "linear_align_corners": ((2, 3, 10), dict(size=7, mode="linear", align_corners=True)),
    "bilinear_scale": ((1, 2, 5, 6), dict(scale_factor=2, mode="bilinear")),
    "bilinear_down": ((1, 2, 9, 7), dict(size=(4, 5), mode="bilinear")),
    "bilinear_align_corners": ((1, 2, 5, 6), dict(size=(3, 9), mode="bilinear", align_corners=True)),
    "bilinear_per_axis": ((2, 4, 24, 20), dict(scale_factor=(1.5, 2), mode="bilinear")),
    "bicubic": ((1, 2, 5, 6), dict(scale_factor=2, mode="bicubic")),
    "bicubic_align_corners_down": ((1, 2, 9, 8), dict(size=(4, 11), mode="bicubic", align_corners=True)),
    "trilinear": ((1, 2, 3, 4, 5), dict(size=(5, 3, 8), mode="trilinear")),
    "nearest_repeat": ((2, 3, 4, 5), dict(scale_factor=(2, 3), mode="nearest")),
    "nearest_uneven": ((2, 3, 4, 5), dict(size=(7, 3), mode="nearest")),
    "nearest_exact_mixed": ((1, 2, 4, 6), dict(size=(8, 9), mode="nearest-exact")),
    "nearest_1d": ((2, 3, 5), dict(scale_factor=1.5, mode="nearest")),
    "nearest_3d": ((1, 2, 2, 3, 2), dict(scale_factor=2, mode="nearest")),
}


@needs_native
@pytest.mark.parametrize("case", CASES)
def test_interpolate_matches_eager_forward_and_backward(case):
    shape, kwargs = CASES[case]
    check_against_eager(lambda x: F.interpolate(x, **kwargs), [torch.randn(shape)], atol=2e-6, rtol=1e-5)


@needs_native
def test_bfloat16_interpolates_in_float32_and_rounds_once():
    # Eager's CPU kernel blends in float32 (opmath) and rounds the output once;
    # in bfloat16 weights the results would be off by up to 2**-9 of a weight.
    x = torch.randn(1, 3, 6, 5).bfloat16()
    check_against_eager(lambda x: F.interpolate(x, scale_factor=3, mode="bilinear"), [x])


def _traced_ops(fn, x, trnc_trace=True):
    """Operators of the forward and backward graphs trnc's decompositions make
    of fn (inside trnc's trace context, as the backend runs them, or outside)."""
    seen = collections.Counter()

    def compiler(gm, example_inputs):
        seen.update(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    backend = aot_autograd(fw_compiler=compiler, bw_compiler=compiler, decompositions=decomposition_table())
    x = x.clone().requires_grad_(True)
    with decomp_resample.interpolation_as_ops() if trnc_trace else contextlib.nullcontext():
        out = torch.compile(fn, backend=backend, dynamic=False)(x)
    out.sum().backward()
    return seen


@pytest.mark.parametrize("case", ["bilinear_scale", "bilinear_per_axis", "bicubic", "trilinear", "nearest_uneven"])
def test_graphs_hold_matmuls_not_gathers(case):
    shape, kwargs = CASES[case]
    torch._dynamo.reset()
    seen = _traced_ops(lambda x: F.interpolate(x, **kwargs), torch.randn(shape))
    assert seen["aten.mm.default"] + seen["aten.bmm.default"] >= 2  # forward and backward
    for op in seen:
        assert "index" not in op and "gather" not in op and "scatter" not in op, op


def test_nearest_repeats_are_expands_and_sums():
    # 2x / 3x nearest: no matmul and no arithmetic forward; the backward sums the copies.
    shape, kwargs = CASES["nearest_repeat"]
    torch._dynamo.reset()
    seen = _traced_ops(lambda x: F.interpolate(x, **kwargs), torch.randn(shape))
    assert seen["aten.mm.default"] + seen["aten.bmm.default"] == 0
    assert seen["aten.expand.default"] == 1 and seen["aten.sum.dim_IntList"] == 1  # every axis at once
    for op in seen:
        assert "index" not in op and "gather" not in op and "scatter" not in op, op


def test_a_repeated_resize_builds_its_weights_once_per_trace():
    # CoaT-style: many resizes of one shape share their weight matrices (forward
    # and backward), so the traced graphs grow by the matmuls only.
    def once(x):
        return F.interpolate(x, scale_factor=2, mode="bilinear")

    def thrice(x):
        return once(x) + once(x * 2) + once(x * 3)

    x = torch.randn(1, 2, 12, 12)  # 12x12 -> 24x24: per-axis matmuls
    torch._dynamo.reset()
    one = _traced_ops(once, x)
    torch._dynamo.reset()
    three = _traced_ops(thrice, x)
    assert three["aten.arange.start_step"] == one["aten.arange.start_step"] > 0
    assert three["aten.floor.default"] == one["aten.floor.default"] > 0
    assert three["aten.mm.default"] + three["aten.bmm.default"] == 3 * (one["aten.mm.default"] + one["aten.bmm.default"])


@pytest.mark.parametrize("limit", [0, 1 << 30], ids=["per_axis", "kronecker"])
def test_both_matmul_forms_apply_each_axis_matrix(monkeypatch, limit):
    monkeypatch.setattr(decomp_resample, "MAX_KRONECKER_ELEMENTS", limit)
    x = torch.randn(2, 3, 4, 5, 6, dtype=torch.float64)
    mats = [torch.randn(o, i, dtype=torch.float64) for o, i in ((7, 4), (2, 5), (9, 6))]
    want = torch.einsum("nciju,ai,bj,du->ncabd", x, *mats)
    torch.testing.assert_close(decomp_resample.apply_axis_matrices(x, mats), want)


@pytest.mark.parametrize("kwargs", [CASES[c][1] for c in ("linear_scale", "bilinear_align_corners", "bicubic")])
def test_weight_matrices_reproduce_eager_on_the_identity(kwargs):
    # Interpolating each unit vector gives one column of eager's weights (to a
    # few float32 ulps: eager's vectorised kernels may fuse the coordinate's
    # multiply-add).
    n = 9 if kwargs["mode"] == "linear" else 5
    shape = [1, n] if kwargs["mode"] == "linear" else [1, n, n]
    eye = torch.eye(n * (1 if kwargs["mode"] == "linear" else n)).view(-1, 1, *shape[1:])
    want = F.interpolate(eye.view(-1, 1, *shape[1:]), **kwargs)
    k = len(shape) - 1
    size = list(want.shape[-k:])
    scales = kwargs.get("scale_factor")
    scales = [scales] * k if isinstance(scales, (int, float)) else [None] * k
    got = decomp_resample._interpolate(eye, size, kwargs.get("align_corners", False), scales,
                                       kwargs["mode"] == "bicubic")
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)


def test_pytorch_kernels_are_restored_after_the_trace():
    ops = [op for op, _ in decomp_resample._overridden()]
    before = {op: dict(op.py_kernels) for op in ops}
    with decomp_resample.interpolation_as_ops():
        assert torch._C.DispatchKey.Autograd not in aten.upsample_bilinear2d.default.py_kernels
    assert {op: dict(op.py_kernels) for op in ops} == before
    # Outside trnc's trace, the op still decomposes as PyTorch does (Inductor's path).
    torch._dynamo.reset()
    seen = _traced_ops(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), torch.randn(1, 1, 3, 3),
                       trnc_trace=False)
    assert seen["aten._unsafe_index.Tensor"] > 0 or seen["trnc.gather_rows.default"] > 0
