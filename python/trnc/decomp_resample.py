"""trnc decomposition rules for linear-family interpolation (``F.interpolate``
with mode linear, bilinear, bicubic or trilinear) and their backwards, as
matmuls on the Tensor Engine.

Interpolation is separable: along each spatial axis every output position is
a fixed weighted sum of a few input positions, i.e. a matrix ``A`` of shape
[out, in] (two non-zeros per row for linear, four for cubic). The whole op is
``x`` multiplied by one such matrix per axis, and its backward the same with
each matrix transposed. PyTorch's own decomposition instead gathers the 2 (4,
8, 16) neighbours of every output element (``_unsafe_index``): each gather is
a chain of index arithmetic plus indirect DMAs, and the backward scatters
back (``index_put``). On a CoaT-tiny training step the 36 bilinear resizes
were 144 gathers and 144 scatters, the largest share of trnc's rule time
while tracing; a [2, 64, 56, 56] -> 224x224 bilinear upsample simulated at
16 ms. As matmuls: a handful of ops per resize and a few microseconds.

``apply_axis_matrices`` picks the form: when the spatial size is small, one
matmul with the Kronecker product of the axis matrices (the matrix is built
from the axis matrices on the device; one contraction over all input
positions); otherwise one matmul per axis, the last axis as a plain 2D matmul
and inner axes batched over the leading positions. adaptive_avg_pool2d's
averaging matrices use it too (decomp_matmul_conv.py).

Weights follow ATen's CPU kernels (UpSample.h, UpSampleKernel.cpp): the
source coordinate ``scale * (o + 0.5) - 0.5`` (``scale * o`` with
align_corners; a given ``scales`` value s means scale 1 / s), computed in
float32 as the kernels' opmath does; linear clamps it at 0, takes
``i0 = min(floor(src), in - 1)``, ``lambda = clamp(src - i0, 0, 1)`` and the
neighbour ``min(i0 + 1, in - 1)``; cubic uses taps ``i0 - 1 .. i0 + 2``
clamped into the input with the A = -0.75 convolution coefficients. The
matrices are built from iota and comparisons on the device. 16-bit inputs are
interpolated in float32 and rounded once, as eager's opmath.

One difference from eager: a matmul multiplies every input position by its
weight, zero or not, so an inf or NaN in the input reaches every output of
its rows (0 * inf is NaN), where eager's gathers touch only its neighbours.
"""

from __future__ import annotations

import contextlib
import math
import struct
from typing import Iterator, Optional, Sequence

import torch

aten = torch.ops.aten
_DK = torch._C.DispatchKey

# Above this many elements in the Kronecker matrix (prod(out) x prod(in)),
# one matmul per axis is cheaper: the Kronecker form's FLOPs grow with the
# product of the spatial sizes, the per-axis form's with their sum.
MAX_KRONECKER_ELEMENTS = 1 << 15

# Cubic convolution's A (ATen's get_cubic_upsample_coefficients).
_CUBIC_A = -0.75


def _f32(value: float) -> float:
    """``value`` rounded to float32, as ATen's ``static_cast<float>``."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _axis_scale(in_size: int, out_size: int, align_corners: bool, scale: Optional[float]) -> float:
    """ATen's area_pixel_compute_scale for one axis (opmath float)."""
    if align_corners:
        return _f32((in_size - 1) / (out_size - 1)) if out_size > 1 else 0.0
    if scale is not None and scale > 0:
        return _f32(1.0 / scale)
    return _f32(in_size / out_size)


def _source(out_size: int, in_size: int, align_corners: bool, scale: Optional[float], cubic: bool):
    """[out, 1] float32: each output position's source coordinate."""
    s = _axis_scale(in_size, out_size, align_corners, scale)
    o = torch.arange(out_size, dtype=torch.float32).view(out_size, 1)
    if align_corners:
        return o * s
    src = (o + 0.5) * s - 0.5
    return src if cubic else torch.clamp_min(src, 0.0)


def _index_and_lambda(src, in_size: int):
    """ATen's guard_index_and_lambda: i0 = min(floor(src), in - 1) and the
    fraction clamped to [0, 1]."""
    i0 = torch.clamp_max(torch.floor(src), float(in_size - 1))
    return i0, torch.clamp(src - i0, 0.0, 1.0)


def _linear_matrix(out_size, in_size, align_corners, scale):
    src = _source(out_size, in_size, align_corners, scale, cubic=False)
    i0, lam = _index_and_lambda(src, in_size)
    i1 = torch.clamp_max(i0 + 1.0, float(in_size - 1))
    i = torch.arange(in_size, dtype=torch.float32).view(1, in_size)
    zero = torch.zeros((), dtype=torch.float32)
    return torch.where(i == i0, 1.0 - lam, zero) + torch.where(i == i1, lam, zero)


def _cubic_coefficients(t):
    """The four tap weights for fraction t (ATen's cubic_convolution1/2)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    x2 = 1.0 - t
    return far(t + 1.0), near(t), near(x2), far(x2 + 1.0)


def _cubic_matrix(out_size, in_size, align_corners, scale):
    src = _source(out_size, in_size, align_corners, scale, cubic=True)
    i0, t = _index_and_lambda(src, in_size)
    i = torch.arange(in_size, dtype=torch.float32).view(1, in_size)
    zero = torch.zeros((), dtype=torch.float32)
    m = None
    for k, w in enumerate(_cubic_coefficients(t)):  # taps i0 - 1 .. i0 + 2, clamped into the input
        tap = torch.clamp(i0 + float(k - 1), 0.0, float(in_size - 1))
        term = torch.where(i == tap, w, zero)
        m = term if m is None else m + term
    return m


def _kronecker(mats: Sequence[torch.Tensor]) -> torch.Tensor:
    """[prod(out), prod(in)]: the Kronecker product of the axis matrices."""
    k = mats[0]
    for m in mats[1:]:
        (ko, ki), (mo, mi) = k.shape, m.shape
        k = (k.view(ko, 1, ki, 1) * m.view(1, mo, 1, mi)).reshape(ko * mo, ki * mi)
    return k


def apply_axis_matrices(x: torch.Tensor, mats: Sequence[torch.Tensor]) -> torch.Tensor:
    """``x`` ([..., in_1, ..., in_k]) with matrix ``mats[j]`` ([out_j, in_j],
    ``x``'s dtype) applied along its j-th trailing axis: [..., out_1, ..., out_k]."""
    k = len(mats)
    lead = list(x.shape[:-k])
    ins = [m.shape[1] for m in mats]
    outs = [m.shape[0] for m in mats]
    n = math.prod(lead)
    if k > 1 and math.prod(ins) * math.prod(outs) <= MAX_KRONECKER_ELEMENTS:
        y = torch.mm(x.reshape(n, math.prod(ins)), _kronecker(mats).t())
        return y.view(*lead, *outs)
    y = x.reshape(n, *ins)
    for j in reversed(range(k)):  # the last axis first: a plain 2D matmul
        before = math.prod(y.shape[1:j + 1]) * n
        after = math.prod(y.shape[j + 2:])
        if after == 1:
            y = torch.mm(y.reshape(before, ins[j]), mats[j].t()).view(*y.shape[:j + 1], outs[j])
        else:
            shape = list(y.shape)
            shape[j + 1] = outs[j]
            z = torch.bmm(mats[j].expand(before, outs[j], ins[j]), y.reshape(before, ins[j], after))
            y = z.view(shape)
    return y.view(*lead, *outs)


def _matrices(in_sizes, out_sizes, align_corners, scales, cubic: bool, dtype) -> list[torch.Tensor]:
    build = _cubic_matrix if cubic else _linear_matrix
    return [build(o, i, align_corners, s).to(dtype) for i, o, s in zip(in_sizes, out_sizes, scales)]


def _compute_dtype(t: torch.Tensor):
    return torch.float32 if t.dtype in (torch.bfloat16, torch.float16) else t.dtype


def _interpolate(x, output_size, align_corners, scales, cubic=False):
    k = len(output_size)
    dtype = _compute_dtype(x)
    mats = _matrices(x.shape[-k:], output_size, align_corners, scales, cubic, dtype)
    return apply_axis_matrices(x.to(dtype), mats).to(x.dtype)


def _interpolate_backward(grad, output_size, input_size, align_corners, scales, cubic=False):
    k = len(output_size)
    dtype = _compute_dtype(grad)
    mats = _matrices(input_size[-k:], output_size, align_corners, scales, cubic, dtype)
    return apply_axis_matrices(grad.to(dtype), [m.t() for m in mats]).to(grad.dtype)


def _vec_sizes(x, output_size, scale_factors, k: int):
    """The .vec overloads' output size and per-axis scales (ATen's
    upsample::compute_output_size: floor(in * scale) when only scales are given)."""
    if output_size is not None:
        return list(output_size), [None] * k
    ins = x.shape[-k:]
    return [int(math.floor(float(i) * float(s))) for i, s in zip(ins, scale_factors)], list(scale_factors)


def _default(k: int, cubic: bool = False):
    def rule(x, output_size, align_corners, *scales):
        scales = list(scales) + [None] * (k - len(scales))
        return _interpolate(x, list(output_size), align_corners, scales, cubic)
    return rule


def _vec(k: int, cubic: bool = False):
    def rule(x, output_size, align_corners, scale_factors):
        size, scales = _vec_sizes(x, output_size, scale_factors, k)
        return _interpolate(x, size, align_corners, scales, cubic)
    return rule


def _backward(k: int, cubic: bool = False):
    def rule(grad, output_size, input_size, align_corners, *scales):
        scales = list(scales) + [None] * (k - len(scales))
        return _interpolate_backward(grad, list(output_size), list(input_size), align_corners, scales, cubic)
    return rule


def _vec_as_default(default, k: int):
    """A .vec overload's kernel that records the .default op (whose autograd
    formula gives the _backward op) instead of PyTorch's gathers."""
    def kernel(x, output_size, align_corners, scale_factors):
        size, scales = _vec_sizes(x, output_size, scale_factors, k)
        return default(x, size, align_corners, *scales)
    return kernel


def _interpolation_overloads():
    """(.default, .vec, spatial rank) of every op these rules cover."""
    return [
        (aten.upsample_linear1d.default, aten.upsample_linear1d.vec, 1),
        (aten.upsample_bilinear2d.default, aten.upsample_bilinear2d.vec, 2),
        (aten.upsample_trilinear3d.default, aten.upsample_trilinear3d.vec, 3),
        (aten.upsample_bicubic2d.default, aten.upsample_bicubic2d.vec, 2),
    ]


@contextlib.contextmanager
def interpolation_as_ops() -> Iterator[None]:
    """While trnc traces a graph, keep the interpolation ops whole.

    PyTorch registers its gather decompositions of these ops as Python kernels
    *above* autograd (``py_impl(DispatchKey.Autograd)`` and
    ``CompositeImplicitAutograd`` in torch/_decomp/decompositions.py), so
    AOTAutograd would trace the gathers and differentiate them (index_put),
    and a decomposition table, consulted below autograd, would never see the
    ops. Inside this context the .default ops take their C++ autograd kernel
    (recording the op, and ``*_backward`` in the backward graph) and the .vec
    overloads compute the output size and record the .default op; the rules
    above then decompose both into matmuls. The kernels are restored on exit.
    """
    saved = []
    try:
        for default, vec, k in _interpolation_overloads():
            for op, kernel in ((default, None), (vec, _vec_as_default(default, k))):
                for key in (_DK.Autograd, _DK.CompositeImplicitAutograd):
                    if key in op.py_kernels:
                        saved.append((op, key, op.py_kernels.pop(key)))
                    if kernel is not None:
                        op.py_kernels[key] = kernel
                op._dispatch_cache.clear()
        yield
    finally:
        for default, vec, _ in _interpolation_overloads():
            for op in (default, vec):
                for key in (_DK.Autograd, _DK.CompositeImplicitAutograd):
                    op.py_kernels.pop(key, None)
        for op, key, kernel in saved:
            op.py_kernels[key] = kernel
        for default, vec, _ in _interpolation_overloads():
            default._dispatch_cache.clear()
            vec._dispatch_cache.clear()


def rules() -> dict:
    return {
        aten.upsample_linear1d.default: _default(1),
        aten.upsample_linear1d.vec: _vec(1),
        aten.upsample_linear1d_backward.default: _backward(1),
        aten.upsample_bilinear2d.default: _default(2),
        aten.upsample_bilinear2d.vec: _vec(2),
        aten.upsample_bilinear2d_backward.default: _backward(2),
        aten.upsample_trilinear3d.default: _default(3),
        aten.upsample_trilinear3d.vec: _vec(3),
        aten.upsample_trilinear3d_backward.default: _backward(3),
        aten.upsample_bicubic2d.default: _default(2, cubic=True),
        aten.upsample_bicubic2d.vec: _vec(2, cubic=True),
        aten.upsample_bicubic2d_backward.default: _backward(2, cubic=True),
    }
