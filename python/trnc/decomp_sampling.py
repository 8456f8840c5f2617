"""trnc decomposition rules for ``grid_sampler_2d`` (``F.grid_sample``) and its backward.

Bilinear and nearest sampling with zeros or border padding, align_corners
either way, gather whole channel rows: the input is viewed as an
``[N*H*W, C]`` table (channels last) and each output pixel reads the rows of
its (up to four) source pixels with ``trnc.gather_rows`` (one DmaIndirect per
128 pixels, C elements each), then blends them with per-pixel weights. A
source pixel outside the input gets an index past the table's end, which reads
a zero row: that is the zeros padding, without multiplying anything by 0 (an
inf or nan in the input stays out of pixels that do not read it, as in eager).
Reflection padding mirrors the coordinate first (ATen's reflect_coordinates).
Bicubic interpolation uses PyTorch's own decomposition (element gathers:
correct, slower; its backward only with zeros padding, see
_grid_sampler_2d_backward).

Coordinates follow ATen's GridSampler.h: ``x`` in [-1, 1] maps to
``[0, W-1]`` (align_corners) or ``[-0.5, W-0.5]``; border padding clamps the
source coordinate to ``[0, W-1]``; nearest rounds half to even (nearbyint).

The backward (``grid_sampler_2d_backward``: input and grid gradients) is the
vector-Jacobian product of the forward rule (decomp_autograd.vjp): gathered
rows scatter-add back into the table, and the grid gradient is the blend
weights' derivative (floor and round contribute none, as in ATen; the border
clamp passes the gradient only inside the range, as ATen's clip_coordinates).
"""

from __future__ import annotations

import torch
from torch._decomp import decomposition_table as _torch_table

from . import decomp_autograd
from . import indirect_ops  # noqa: F401  (defines torch.ops.trnc.*)
from .decomp_indexing import check_exact_index
from .errors import CompileError

aten = torch.ops.aten
trnc_ops = torch.ops.trnc

_BILINEAR, _NEAREST = 0, 1
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def _source_coordinate(coord, size: int, padding_mode: int, align_corners: bool):
    """A normalised grid coordinate -> the source pixel coordinate (ATen's
    grid_sampler_compute_source_index)."""
    if align_corners:
        scale, offset = (size - 1) / 2, (size - 1) / 2
    else:
        scale, offset = size / 2, (size - 1) / 2
    c = aten.add.Tensor(aten.mul.Tensor(coord, scale), offset)
    if padding_mode == _REFLECTION:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
    if padding_mode in (_BORDER, _REFLECTION):
        # A clamp as two wheres: clamp's derivative formula is in-place
        # (logical_and_), which decomp_autograd.vjp cannot trace.
        c = aten.where.self(aten.lt.Scalar(c, 0), _scalar(0.0, c), c)
        c = aten.where.self(aten.gt.Scalar(c, size - 1), _scalar(float(size - 1), c), c)
    return c


def _reflect(c, twice_low: int, twice_high: int):
    """ATen's reflect_coordinates: c mirrored into [low, high] (bounds given doubled)."""
    if twice_low == twice_high:
        return aten.mul.Tensor(c, 0.0)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = aten.abs.default(aten.sub.Tensor(c, low))
    extra = aten.fmod.Scalar(dist, span)
    flips = aten.floor.default(aten.div.Tensor(dist, span))
    even = aten.eq.Scalar(aten.fmod.Scalar(flips, 2.0), 0)
    return aten.where.self(even, aten.add.Tensor(extra, low), aten.sub.Tensor(aten.mul.Tensor(extra, -1.0), -(span + low)))


def _scalar(value: float, like):
    return aten.full.default([], value, dtype=like.dtype, device=like.device)


def _rows(xs, ys, n_base, H: int, W: int, past_end: float):
    """Flat int32 table rows of pixels (xs, ys) (exact integers in fp32) of
    image n (n_base = n * H * W); pixels outside the image -> past_end."""
    inside = aten.logical_and.default(
        aten.logical_and.default(aten.ge.Scalar(xs, 0), aten.lt.Scalar(xs, W)),
        aten.logical_and.default(aten.ge.Scalar(ys, 0), aten.lt.Scalar(ys, H)))
    flat = aten.add.Tensor(aten.add.Tensor(aten.mul.Tensor(ys, float(W)), xs), n_base)
    flat = aten.where.self(inside, flat, _scalar(past_end, flat))
    return aten.view.default(aten._to_copy.default(flat, dtype=torch.int32), [-1])


def _grid_sampler_2d(x, grid, interpolation_mode, padding_mode, align_corners):
    if interpolation_mode not in (_BILINEAR, _NEAREST):
        return _torch_table[aten.grid_sampler_2d.default](x, grid, interpolation_mode, padding_mode, align_corners)
    N, C, H, W = x.shape
    _, oH, oW, _ = grid.shape
    if x.numel() == 0 or grid.numel() == 0:
        return aten.full.default([N, C, oH, oW], 0, dtype=x.dtype, device=x.device)
    check_exact_index(N * H * W + 1, "grid_sampler_2d")
    table = aten.clone.default(aten.permute.default(x, [0, 2, 3, 1]), memory_format=torch.contiguous_format)
    table = aten.view.default(table, [N * H * W, C])
    g = grid if grid.dtype == torch.float32 else aten._to_copy.default(grid, dtype=torch.float32)
    ix = _source_coordinate(aten.select.int(g, 3, 0), W, padding_mode, align_corners)  # [N, oH, oW]
    iy = _source_coordinate(aten.select.int(g, 3, 1), H, padding_mode, align_corners)
    n_base = aten.view.default(
        aten.mul.Tensor(aten.arange.start_step(0, N, 1, dtype=torch.float32, device=x.device), float(H * W)),
        [N, 1, 1])
    past_end = float(N * H * W)

    def read(xs, ys):  # [N*oH*oW, C], blended in float32 (one rounding at the end)
        rows = trnc_ops.gather_rows(table, _rows(xs, ys, n_base, H, W, past_end))
        return rows if rows.dtype == torch.float32 else aten._to_copy.default(rows, dtype=torch.float32)

    if interpolation_mode == _NEAREST:
        out = read(aten.round.default(ix), aten.round.default(iy))
    else:
        x0, y0 = aten.floor.default(ix), aten.floor.default(iy)
        x1, y1 = aten.add.Tensor(x0, 1), aten.add.Tensor(y0, 1)
        wx1, wy1 = aten.sub.Tensor(ix, x0), aten.sub.Tensor(iy, y0)  # weights of x1 / y1
        wx0, wy0 = aten.sub.Tensor(x1, ix), aten.sub.Tensor(y1, iy)
        out = None
        for xs, ys, wx, wy in ((x0, y0, wx0, wy0), (x1, y0, wx1, wy0), (x0, y1, wx0, wy1), (x1, y1, wx1, wy1)):
            w = aten.view.default(aten.mul.Tensor(wx, wy), [-1, 1])
            term = aten.mul.Tensor(read(xs, ys), w)
            out = term if out is None else aten.add.Tensor(out, term)
    if out.dtype != x.dtype:
        out = aten._to_copy.default(out, dtype=x.dtype)
    return aten.permute.default(aten.view.default(out, [N, oH, oW, C]), [0, 3, 1, 2])


def _grid_sampler_2d_backward(grad_output, x, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    if interpolation_mode not in (_BILINEAR, _NEAREST) and padding_mode != _ZEROS:
        # PyTorch's bicubic rule clamps with aten.clamp, whose derivative is in-place.
        raise CompileError("grid_sampler_2d backward: bicubic interpolation is supported with zeros padding "
                           f"only (got padding_mode {padding_mode})", error_kind="unsupported_operator")
    def forward(x_, grid_):
        return _grid_sampler_2d(x_, grid_, interpolation_mode, padding_mode, align_corners)

    grad_x, grad_grid = decomp_autograd.vjp(forward, [x, grid], [grad_output], [output_mask[0], True])
    return grad_x, grad_grid


def rules() -> dict:
    return {
        aten.grid_sampler_2d.default: _grid_sampler_2d,
        aten.grid_sampler_2d_backward.default: _grid_sampler_2d_backward,
    }
