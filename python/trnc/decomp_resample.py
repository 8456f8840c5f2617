"""trnc decomposition rules for interpolation (``F.interpolate`` with mode
linear, bilinear, bicubic, trilinear, nearest or nearest-exact) and their
backwards: matmuls on the Tensor Engine, and expands for nearest repeats.

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

Nearest (and nearest-exact) copies: along an axis whose outputs repeat each
input r times (2x, 3x upsampling: ATen's source indices are checked in
float32 at compile time) the op is an expand and its backward a sum of the
r copies, exact in any dtype; any other layout is a one-hot matrix [out, in]
(exact for finite values: one non-zero product per output).

One difference from eager: a matmul multiplies every input position by its
weight, zero or not, so an inf or NaN in the input reaches every output of
its rows (0 * inf is NaN), where eager's gathers touch only its neighbours.
Nearest repeats have no such difference.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import struct
from typing import Iterator, Optional, Sequence

import torch
from torch.fx.experimental.proxy_tensor import get_proxy_mode

aten = torch.ops.aten
_DK = torch._C.DispatchKey

# Above this many elements in the Kronecker matrix (prod(out) x prod(in)),
# one matmul per axis is cheaper: the Kronecker form's FLOPs grow with the
# product of the spatial sizes, the per-axis form's with their sum.
MAX_KRONECKER_ELEMENTS = 1 << 15

# Cubic convolution's A (ATen's get_cubic_upsample_coefficients).
_CUBIC_A = -0.75

# Weight matrices built in the current trace, while interpolation_as_ops is
# active: a model resizes the same shapes many times (CoaT-tiny's 36 resizes
# have 4 distinct shapes; each matrix is ~20 traced ops per axis), and its
# backward needs the same matrices again, so each is built once per trace.
_built: Optional[dict] = None


def _memoized(key: tuple, build):
    """build(), or the tensor an earlier call with ``key`` built in this trace
    (the proxy mode tracing it; outside a trace nothing is kept)."""
    mode = get_proxy_mode()
    if _built is None or mode is None:
        return build()
    if (mode, key) not in _built:  # the dict holds the mode: one trace's tensors never serve another
        _built[(mode, key)] = build()
    return _built[(mode, key)]


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


def _along_axis(y: torch.Tensor, axis: int, mat: torch.Tensor) -> torch.Tensor:
    """``y`` with ``mat`` ([out, in]) applied along dim ``axis`` (> 0): the
    last dim as a plain 2D matmul, an inner one batched over the dims before it."""
    before = math.prod(y.shape[:axis])
    after = math.prod(y.shape[axis + 1:])
    out, inner = mat.shape
    shape = list(y.shape)
    shape[axis] = out
    if after == 1:
        return torch.mm(y.reshape(before, inner), mat.t()).view(shape)
    return torch.bmm(mat.expand(before, out, inner), y.reshape(before, inner, after)).view(shape)


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
        y = _along_axis(y, j + 1, mats[j])
    return y.view(*lead, *outs)


def _compute_dtype(t: torch.Tensor):
    """Blends run in float32 for 16-bit and integer tensors (eager's opmath;
    integers are exact below 2**24, trnc's integer policy)."""
    return t.dtype if t.dtype in (torch.float32, torch.float64) else torch.float32


# Nearest ---------------------------------------------------------------------


def _nearest_sources(in_size: int, out_size: int, scale: Optional[float], exact: bool) -> list[int]:
    """ATen's nearest (exact: nearest-exact) source index of every output
    position: min(floor((o [+ 0.5]) * scale), in - 1) in float32."""
    s = _axis_scale(in_size, out_size, False, scale)
    offset = 0.5 if exact else 0.0
    return [min(int(math.floor(_f32((o + offset) * s))), in_size - 1) for o in range(out_size)]


def _nearest_matrix(in_size: int, out_size: int, scale: Optional[float], exact: bool):
    """[out, in] one-hot: output o copies its source position (built on the device)."""
    return _memoized(("nearest", in_size, out_size, scale, exact),
                     lambda: _build_nearest_matrix(in_size, out_size, scale, exact))


def _build_nearest_matrix(in_size: int, out_size: int, scale: Optional[float], exact: bool):
    s = _axis_scale(in_size, out_size, False, scale)
    o = torch.arange(out_size, dtype=torch.float32).view(out_size, 1)
    src = torch.clamp_max(torch.floor((o + (0.5 if exact else 0.0)) * s), float(in_size - 1))
    i = torch.arange(in_size, dtype=torch.float32).view(1, in_size)
    return (i == src).to(torch.float32)


def _repeats(in_size: int, out_size: int, scale: Optional[float], exact: bool) -> Optional[int]:
    """r when every input position is copied to r consecutive outputs (1: the
    identity), else None."""
    src = _nearest_sources(in_size, out_size, scale, exact)
    r = out_size // in_size
    return r if r * in_size == out_size and src == [o // r for o in range(out_size)] else None


def _nearest(x, out_sizes, scales, exact: bool):
    """Axes whose outputs repeat each input r times are one expand together
    (no arithmetic, any dtype); other axes a one-hot matmul each."""
    k = len(out_sizes)
    first = x.dim() - k
    reps = [_repeats(x.shape[first + j], out_sizes[j], scales[j], exact) for j in range(k)]
    y = x
    for j in range(k):
        if reps[j] is None:
            mat = _nearest_matrix(x.shape[first + j], out_sizes[j], scales[j], exact)
            dtype = _compute_dtype(y)
            y = _along_axis(y.to(dtype), first + j, mat.to(dtype)).to(x.dtype)
    if any(r not in (None, 1) for r in reps):
        wide, expanded, out = list(y.shape[:first]), list(y.shape[:first]), list(y.shape[:first])
        for j, r in enumerate(reps):
            size = y.shape[first + j]
            wide += [size, 1]
            expanded += [size, r or 1]
            out.append(size * (r or 1))
        y = y.reshape(wide).expand(expanded).reshape(out)
    return y


def _nearest_backward(grad, out_sizes, in_sizes, scales, exact: bool):
    """_nearest's gradient: the copies of the repeated axes summed in one
    reduction, the one-hot matrices of the others transposed."""
    k = len(out_sizes)
    first = grad.dim() - k
    ins = list(in_sizes[-k:])
    reps = [_repeats(ins[j], out_sizes[j], scales[j], exact) for j in range(k)]
    g = grad
    if any(r not in (None, 1) for r in reps):
        split, summed = list(g.shape[:first]), []
        for j, r in enumerate(reps):
            if r in (None, 1):
                split.append(g.shape[first + j])
            else:
                summed.append(len(split) + 1)
                split += [ins[j], r]
        g = g.reshape(split).sum(summed)
    for j in range(k):
        if reps[j] is None:
            mat = _nearest_matrix(ins[j], out_sizes[j], scales[j], exact)
            dtype = _compute_dtype(g)
            g = _along_axis(g.to(dtype), first + j, mat.to(dtype).t()).to(grad.dtype)
    return g


# Rules -----------------------------------------------------------------------


def _matrices(in_sizes, out_sizes, align_corners, scales, cubic: bool, dtype) -> list[torch.Tensor]:
    build = _cubic_matrix if cubic else _linear_matrix
    return [_memoized(("cubic" if cubic else "linear", i, o, align_corners, s, dtype),
                      lambda i=i, o=o, s=s: build(o, i, align_corners, s).to(dtype))
            for i, o, s in zip(in_sizes, out_sizes, scales)]


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


@dataclasses.dataclass(frozen=True)
class _Family:
    """One interpolation operator: its ATen name, spatial rank and mode."""

    name: str
    k: int
    mode: str  # "linear", "cubic", "nearest" or "nearest-exact"

    def overload(self, suffix: str = "", overload: str = "default"):
        return getattr(getattr(aten, self.name + suffix), overload)

    @property
    def aligned(self) -> bool:
        """Whether the op takes align_corners (the linear and cubic modes)."""
        return self.mode in ("linear", "cubic")

    def _arguments(self, rest) -> tuple[bool, list]:
        """(align_corners, per-axis scales) from the arguments after the sizes."""
        align_corners, scales = (rest[0], rest[1:]) if self.aligned else (False, rest)
        return align_corners, list(scales) + [None] * (self.k - len(scales))

    def forward(self, x, output_size, *rest):
        align_corners, scales = self._arguments(rest)
        if not self.aligned:
            return _nearest(x, list(output_size), scales, self.mode == "nearest-exact")
        return _interpolate(x, list(output_size), align_corners, scales, self.mode == "cubic")

    def vec(self, x, output_size, *rest):
        """The .vec overload's kernel inside interpolation_as_ops: records .default."""
        size, scales = _vec_sizes(x, output_size, rest[-1], self.k)
        return self.overload()(x, size, *rest[:-1], *scales)

    def backward(self, grad, output_size, input_size, *rest):
        align_corners, scales = self._arguments(rest)
        if not self.aligned:
            return _nearest_backward(grad, list(output_size), list(input_size), scales,
                                     self.mode == "nearest-exact")
        return _interpolate_backward(grad, list(output_size), list(input_size), align_corners,
                                     scales, self.mode == "cubic")


FAMILIES = (
    _Family("upsample_linear1d", 1, "linear"),
    _Family("upsample_bilinear2d", 2, "linear"),
    _Family("upsample_trilinear3d", 3, "linear"),
    _Family("upsample_bicubic2d", 2, "cubic"),
    _Family("upsample_nearest1d", 1, "nearest"),
    _Family("upsample_nearest2d", 2, "nearest"),
    _Family("upsample_nearest3d", 3, "nearest"),
    _Family("_upsample_nearest_exact1d", 1, "nearest-exact"),
    _Family("_upsample_nearest_exact2d", 2, "nearest-exact"),
    _Family("_upsample_nearest_exact3d", 3, "nearest-exact"),
)


def _overridden():
    """(op, kernel or None) of every Python kernel interpolation_as_ops replaces."""
    pairs = []
    for f in FAMILIES:
        pairs += [(f.overload(), None), (f.overload(overload="vec"), f.vec)]
    return pairs


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
    below then decompose both, building each weight matrix once per trace
    (``_memoized``). PyTorch's kernels are restored on exit.
    """
    global _built
    keys = (_DK.Autograd, _DK.CompositeImplicitAutograd)
    saved = []
    outer, _built = _built, {}
    try:
        for op, kernel in _overridden():
            for key in keys:
                if key in op.py_kernels:
                    saved.append((op, key, op.py_kernels.pop(key)))
                if kernel is not None:
                    op.py_kernels[key] = kernel
            op._dispatch_cache.clear()
        yield
    finally:
        for op, _ in _overridden():
            for key in keys:
                op.py_kernels.pop(key, None)
        for op, key, kernel in saved:
            op.py_kernels[key] = kernel
        for op, _ in _overridden():
            op._dispatch_cache.clear()
        _built = outer


def rules() -> dict:
    table = {}
    for f in FAMILIES:
        # No .vec entry: PyTorch's .vec kernels run above autograd, before any
        # table; inside interpolation_as_ops they record .default instead.
        table[f.overload()] = f.forward
        table[f.overload("_backward")] = f.backward
    return table
