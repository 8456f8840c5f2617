"""trnc decomposition rules for operators that return indices (see
docs/decompositions.md, "Operators with indices").

The engines have no arg-reduction instruction, so an index is computed from a
value reduction: the max (``amax``), a mask of the positions that hold it,
and a min over an iota masked by it (first occurrence, as PyTorch). The iota
is a float32 ``arange`` (exact below 2**24 positions) broadcast along the
reduced dim; the index is cast to int64 at the end. Everything here is ops
the compiler lowers: amax/amin, eq/ne/gt, logical_or, where, arange, slices,
pads, views and casts.

- ``max.dim`` / ``min.dim`` / ``argmax`` / ``argmin``: as above; a NaN is the
  max (and the min) of its row and its first position is the index (PyTorch).
- ``max_pool2d_with_indices``: the window max walked over the kernel
  positions in PyTorch's order, updating when ``v > max`` or ``v`` is NaN;
  the flat H*W index of each position is an iota expression.
- ``max_pool2d_with_indices_backward``: no scatter: the input viewed by
  stride phase, each window that may cover an element read as a shifted view
  of the padded gradient and indices and kept where its saved index is the
  element's own: one elementwise group over the input's gradient.
- ``native_group_norm`` (+ backward): PyTorch's CPU formula with reshapes
  instead of its ``as_strided``.
- ``one_hot`` with an explicit ``num_classes`` is PyTorch's own rule
  (``eq(x[..., None], arange)``, applied above this table) once its two
  range asserts are dropped (``_assert_async`` below).
"""

from __future__ import annotations

import math

import torch

from trnc.decomp_indexing import check_exact_index

aten = torch.ops.aten


def _iota(n: int, rank: int, dim: int):
    """A float32 arange(n) shaped to broadcast along `dim` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[dim] = n
    r = aten.arange.start_step(0, n, 1, dtype=torch.float32, device="cpu")
    return aten.view.default(r, shape)


def _scalar(value, dtype):
    return aten.full.default([], value, dtype=dtype, device="cpu")


def _hits(x, value):
    """Where x equals its reduced value; NaNs count as hits (a NaN row's
    reduced value is NaN, which equals nothing)."""
    hit = aten.eq.Tensor(x, value)
    if x.is_floating_point():
        hit = aten.logical_or.default(hit, aten.ne.Tensor(x, x))
    return hit


def _value_and_index(x, dim: int, keepdim: bool, largest: bool):
    if x.dim() == 0:
        return aten.clone.default(x), _scalar(0, torch.int64)
    dim = dim % x.dim()
    n = x.shape[dim]
    check_exact_index(n, "max/min index")
    work = aten._to_copy.default(x, dtype=torch.int32) if x.dtype == torch.bool else x
    reduce = aten.amax.default if largest else aten.amin.default
    value = reduce(work, [dim], True)
    where = aten.where.self(_hits(work, value), _iota(n, x.dim(), dim), _scalar(float(n), torch.float32))
    index = aten._to_copy.default(aten.amin.default(where, [dim], keepdim), dtype=torch.int64)
    if not keepdim:
        value = aten.view.default(value, [s for i, s in enumerate(x.shape) if i != dim])
    if x.dtype == torch.bool:
        value = aten._to_copy.default(value, dtype=torch.bool)
    return value, index


def _max_dim(x, dim, keepdim=False):
    return _value_and_index(x, dim, keepdim, True)


def _min_dim(x, dim, keepdim=False):
    return _value_and_index(x, dim, keepdim, False)


def _arg(largest: bool):
    def rule(x, dim=None, keepdim=False):
        if dim is not None:
            return _value_and_index(x, dim, keepdim, largest)[1]
        flat = aten.reshape.default(x, [-1]) if x.dim() != 1 else x
        index = _value_and_index(flat, 0, False, largest)[1]
        if keepdim:
            index = aten.view.default(index, [1] * x.dim())
        return index

    return rule


# --- topk, sort --------------------------------------------------------------------

# topk is k passes over the row; sort compares every pair of a row: both are
# for small sizes, larger ones stay unlowered (reported unsupported).
_TOPK_MAX_K = 16
_SORT_MAX_ROW = 256


def _last(x, dim: int):
    """x with `dim` moved last (a permute view), and the inverse permutation."""
    perm = [d for d in range(x.dim()) if d != dim] + [dim]
    inverse = [perm.index(d) for d in range(x.dim())]
    return aten.permute.default(x, perm), inverse


def _topk(x, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """k rounds: the first NaN not yet taken (NaN is the largest, as in
    PyTorch), else the first extreme among the values not taken; its value
    is read back through a one-position mask."""
    if k == 0 or k > _TOPK_MAX_K or x.dtype == torch.bool:
        return NotImplemented
    if x.dim() == 0:  # k == 1: the element itself
        return aten.clone.default(x), _scalar(0, torch.int64)
    dim = dim % x.dim()
    n = x.shape[dim]
    check_exact_index(n, "topk index")
    iota = _iota(n, x.dim(), dim)
    none = _scalar(float(n), torch.float32)
    floating = x.is_floating_point()
    if floating:
        low = -math.inf if largest else math.inf
        nan = aten.ne.Tensor(x, x)
    else:
        info = torch.iinfo(torch.int32)
        low = info.min if largest else info.max
    reduce = aten.amax.default if largest else aten.amin.default
    taken = aten.full.default(list(x.shape), False, dtype=torch.bool, device="cpu")
    values, indices = [], []
    for _ in range(k):
        skip = aten.logical_or.default(taken, nan) if floating else taken
        masked = aten.where.self(skip, _scalar(low, x.dtype), x)
        best = reduce(masked, [dim], True)
        hit = aten.logical_and.default(aten.eq.Tensor(masked, best), aten.logical_not.default(skip))
        index = aten.amin.default(aten.where.self(hit, iota, none), [dim], True)
        if floating:
            fresh_nan = aten.logical_and.default(nan, aten.logical_not.default(taken))
            first_nan = aten.amin.default(aten.where.self(fresh_nan, iota, none), [dim], True)
            if largest:
                index = aten.where.self(aten.lt.Scalar(first_nan, n), first_nan, index)
            else:
                index = aten.where.self(aten.lt.Scalar(index, n), index, first_nan)
        pick = aten.eq.Tensor(iota, index)
        taken = aten.logical_or.default(taken, pick)
        values.append(aten.sum.dim_IntList(aten.where.self(pick, x, _scalar(0, x.dtype)), [dim], True))
        indices.append(index)
    value = aten.cat.default(values, dim)
    index = aten._to_copy.default(aten.cat.default(indices, dim), dtype=torch.int64)
    return aten._to_copy.default(value, dtype=x.dtype), index


def _sort(x, dim: int = -1, descending: bool = False, stable: bool = True):
    """A stable sort by ranks: rank[i] = #{j before i} (j's value comes
    first, or is equal with j < i; NaN is the largest), then position r
    takes the element whose rank is r (a compare with an iota, a masked sum).
    O(n^2) compares per row on the Vector engine."""
    if x.dim() == 0:
        return aten.clone.default(x), _scalar(0, torch.int64)
    dim = dim % x.dim()
    n = x.shape[dim]
    if n > _SORT_MAX_ROW:
        return NotImplemented
    work = aten._to_copy.default(x, dtype=torch.int32) if x.dtype == torch.bool else x
    t, inverse = _last(work, dim)
    a = aten.unsqueeze.default(t, -1)  # element i: [.., n, 1]
    b = aten.unsqueeze.default(t, -2)  # element j: [.., 1, n]
    first = aten.gt.Tensor(b, a) if descending else aten.lt.Tensor(b, a)
    same = aten.eq.Tensor(a, b)
    if work.is_floating_point():
        a_nan, b_nan = aten.ne.Tensor(a, a), aten.ne.Tensor(b, b)
        nan_first = aten.logical_and.default(b_nan if descending else a_nan,
                                             aten.logical_not.default(a_nan if descending else b_nan))
        first = aten.logical_or.default(first, nan_first)
        same = aten.logical_or.default(same, aten.logical_and.default(a_nan, b_nan))
    i = _iota(n, 2, 0)  # [n, 1]
    j = _iota(n, 2, 1)  # [1, n]
    first = aten.logical_or.default(first, aten.logical_and.default(same, aten.lt.Tensor(j, i)))
    rank = aten.sum.dim_IntList(aten._to_copy.default(first, dtype=torch.float32), [-1])  # [.., n]
    pick = aten.eq.Tensor(aten.unsqueeze.default(rank, -2), i)  # [.., r, i]
    value = aten.sum.dim_IntList(aten.where.self(pick, aten.unsqueeze.default(t, -2), _scalar(0, work.dtype)), [-1])
    index = aten.sum.dim_IntList(aten.where.self(pick, j, _scalar(0.0, torch.float32)), [-1])
    value = aten._to_copy.default(value, dtype=x.dtype)
    index = aten._to_copy.default(index, dtype=torch.int64)
    return aten.permute.default(value, inverse), aten.permute.default(index, inverse)


def _sort_default(x, dim=-1, descending=False):
    return _sort(x, dim, descending)


def _sort_stable(x, *, stable=None, dim=-1, descending=False):
    return _sort(x, dim, descending)


# --- max_pool2d -------------------------------------------------------------


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """ATen's pooling_output_shape."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pair(v, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        v = default
    if isinstance(v, int):
        return v, v
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


class _Pool:
    """The static geometry of one max_pool2d: sizes, per-kernel-position
    offsets, and which positions can fall into the padding."""

    def __init__(self, x, kernel_size, stride, padding, dilation, ceil_mode):
        self.kh, self.kw = _pair(kernel_size)
        self.sh, self.sw = _pair(stride, (self.kh, self.kw))
        self.ph, self.pw = _pair(padding)
        self.dh, self.dw = _pair(dilation)
        self.H, self.W = x.shape[-2], x.shape[-1]
        self.OH = _pool_out(self.H, self.kh, self.sh, self.ph, self.dh, ceil_mode)
        self.OW = _pool_out(self.W, self.kw, self.sw, self.pw, self.dw, ceil_mode)
        check_exact_index(self.H * self.W, "max_pool2d index")

    def positions(self):
        """The kernel positions that some window reads inside the input; the
        rest (a large kernel on a small map, e.g. SPP's 13x13 on a 2x2 map:
        9 of 169) only ever read padding, which never wins a window."""
        rows = [i for i in range(self.kh) if any(0 <= r < self.H for r in self.rows(i))]
        cols = [j for j in range(self.kw) if any(0 <= c < self.W for c in self.cols(j))]
        for i in rows:
            for j in cols:
                yield i, j

    def rows(self, i: int) -> list[int]:
        return [oh * self.sh - self.ph + i * self.dh for oh in range(self.OH)]

    def cols(self, j: int) -> list[int]:
        return [ow * self.sw - self.pw + j * self.dw for ow in range(self.OW)]

    def all_valid(self, i: int, j: int) -> bool:
        r, c = self.rows(i), self.cols(j)
        return r[0] >= 0 and r[-1] < self.H and c[0] >= 0 and c[-1] < self.W

    # The index and validity grids differ between kernel positions only by a
    # constant offset, so their iotas are built once per pool (memoized on
    # this per-call object) and each position adds its offset: 9 ops per
    # position for the index and 17 for validity were most of a 3x3 pool's
    # ~230 traced nodes. Every value is an integer below 2**24, exact in
    # float32 in either order of the additions.
    def _steps(self):
        """(arange(OH) * sh, arange(OW) * sw), float32."""
        if not hasattr(self, "_step_iotas"):
            rows = aten.arange.start_step(0, self.OH, 1, dtype=torch.float32, device="cpu")
            cols = aten.arange.start_step(0, self.OW, 1, dtype=torch.float32, device="cpu")
            self._step_iotas = (aten.mul.Tensor(rows, float(self.sh)), aten.mul.Tensor(cols, float(self.sw)))
        return self._step_iotas

    def flat_index(self, i: int, j: int):
        """[OH, OW] float32: (row * W + col) of kernel position (i, j)."""
        if not hasattr(self, "_flat_base"):
            rows, cols = self._steps()
            self._flat_base = aten.add.Tensor(aten.view.default(aten.mul.Tensor(rows, float(self.W)), [self.OH, 1]),
                                              aten.view.default(cols, [1, self.OW]))
        r0, c0 = self.rows(i)[0], self.cols(j)[0]
        return aten.add.Tensor(self._flat_base, float(r0 * self.W + c0))

    def valid(self, i: int, j: int):
        """[OH, OW] bool: kernel position (i, j) lies inside the input."""
        if not hasattr(self, "_inside"):
            self._inside = {}
        rows, cols = self._steps()

        def inside(key, steps, start, n, shape):
            if key not in self._inside:
                v = aten.add.Tensor(steps, float(start))
                v = aten.logical_and.default(aten.ge.Scalar(v, 0), aten.lt.Scalar(v, n))
                self._inside[key] = aten.view.default(v, shape)
            return self._inside[key]

        return aten.logical_and.default(
            inside(("row", i), rows, self.rows(i)[0], self.H, [self.OH, 1]),
            inside(("col", j), cols, self.cols(j)[0], self.W, [1, self.OW]),
        )

    def window(self, xp, i: int, j: int):
        """x_padded[..., rows of position i, cols of position j]: [.., OH, OW]."""
        r0 = i * self.dh
        c0 = j * self.dw
        v = aten.slice.Tensor(xp, -2, r0, r0 + (self.OH - 1) * self.sh + 1, self.sh)
        return aten.slice.Tensor(v, -1, c0, c0 + (self.OW - 1) * self.sw + 1, self.sw)

    def padded(self, x, value: float):
        """x padded so that every window lies inside it."""
        bottom = max(0, (self.OH - 1) * self.sh + (self.kh - 1) * self.dh + 1 - self.H - self.ph)
        right = max(0, (self.OW - 1) * self.sw + (self.kw - 1) * self.dw + 1 - self.W - self.pw)
        if self.ph == 0 and self.pw == 0 and bottom == 0 and right == 0:
            return x
        return aten.constant_pad_nd.default(x, [self.pw, right, self.ph, bottom], value)


def _max_pool2d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """PyTorch's CPU loop: per window, walk the kernel positions in order,
    starting at the first one inside the input, and take a value when it is
    greater than the max so far or NaN."""
    g = _Pool(x, kernel_size, stride, padding, dilation, ceil_mode)
    low = -math.inf if x.is_floating_point() else torch.iinfo(x.dtype).min
    xp = g.padded(x, low)
    best = index = None
    for i, j in g.positions():
        v = g.window(xp, i, j)
        pos = g.flat_index(i, j)
        if best is None and g.all_valid(i, j):
            best, index = v, aten.expand.default(pos, list(v.shape))
            continue
        if best is None:  # the window may start in the padding
            best = aten.full.default(list(v.shape), low, dtype=x.dtype, device="cpu")
            index = aten.full.default(list(v.shape), -1.0, dtype=torch.float32, device="cpu")
        take = aten.gt.Tensor(v, best)
        if x.is_floating_point():
            take = aten.logical_or.default(take, aten.ne.Tensor(v, v))
        if not g.all_valid(i, j):
            take = aten.logical_or.default(take, aten.lt.Scalar(index, 0))
            take = aten.logical_and.default(take, g.valid(i, j))
        best = aten.where.self(take, v, best)
        index = aten.where.self(take, pos, index)
    return best, aten._to_copy.default(index, dtype=torch.int64)


def _window_span(pad: int, k: int, d: int, s: int, blocks: int, out: int) -> tuple[int, int]:
    """The windows that may hold input row h = u*s + a (any phase a < s,
    u < blocks): oh = u + e for e in [lo, hi]. Window oh covers padded rows
    oh*s + i*d (i < k), and h is padded row h + pad. Shifts whose windows
    u + e all lie outside [0, out) are left out: they would read only the
    padding (a large kernel on a small map)."""
    lo, hi = -(((k - 1) * d - pad) // s), (s - 1 + pad) // s
    return max(lo, 1 - blocks), min(hi, out - 1)


def _max_pool2d_backward(grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """grad_input[.., h, w] = sum of grad[.., oh, ow] over the windows whose
    saved index is h*W + w, with no scatter and no per-tap copies: the input
    is viewed by stride phase, [.., U, sh, V, sw] with h = u*sh + a, and the
    windows that may hold any (u, a) are oh = u + e for a few e (2 per dim
    for a 3x3 stride-2 pool). For each such (e, f) the saved index and the
    gradient at (u + e, v + f) are read as shifted views of padded copies,
    broadcast over the phases (a, b), and kept where the index is this
    element's own h*W + w (a window that does not cover it never holds its
    index). So the whole gradient is one elementwise group over the output
    (each shifted view loaded once, at the windows' resolution, and widened
    over the phases on chip). The terms are
    added in window order (row-major), the order of PyTorch's loop, so
    16-bit gradients round the same way."""
    g = _Pool(x, kernel_size, stride, padding, dilation, ceil_mode)
    sh, sw = g.sh, g.sw
    U, V = -(-g.H // sh), -(-g.W // sw)  # phase blocks covering the input
    elo, ehi = _window_span(g.ph, g.kh, g.dh, sh, U, g.OH)
    flo, fhi = _window_span(g.pw, g.kw, g.dw, sw, V, g.OW)
    top, left = max(0, -elo), max(0, -flo)
    pad = [left, max(0, V + fhi - g.OW), top, max(0, U + ehi - g.OH)]
    # -1 matches no element (the targets below are >= 0 or -2).
    index = aten.constant_pad_nd.default(aten._to_copy.default(indices, dtype=torch.float32), pad, -1.0)
    padded = aten.constant_pad_nd.default(grad, pad, 0.0)
    # Each element's own flat index h*W + w as [U, sh, V, sw]; -2 on the
    # rows and columns past the input when H or W is not a multiple of the
    # stride (cropped below).
    rows = aten.arange.start_step(0, U * sh, 1, dtype=torch.float32, device="cpu")
    cols = aten.arange.start_step(0, V * sw, 1, dtype=torch.float32, device="cpu")
    target = aten.add.Tensor(aten.view.default(aten.mul.Tensor(rows, float(g.W)), [U * sh, 1]),
                             aten.view.default(cols, [1, V * sw]))
    if U * sh != g.H or V * sw != g.W:
        inside = aten.logical_and.default(aten.view.default(aten.lt.Scalar(rows, g.H), [U * sh, 1]),
                                          aten.view.default(aten.lt.Scalar(cols, g.W), [1, V * sw]))
        target = aten.where.self(inside, target, _scalar(-2.0, torch.float32))
    lead = list(grad.shape[:-2])
    phased = lead + [U, sh, V, sw]
    target = aten.view.default(target, [U, sh, V, sw])
    zero = _scalar(0.0, grad.dtype)
    total = None
    for e in range(elo, ehi + 1):
        for f in range(flo, fhi + 1):
            def shifted(t):
                t = aten.slice.Tensor(t, -2, top + e, top + e + U)
                t = aten.slice.Tensor(t, -1, left + f, left + f + V)
                return aten.expand.default(aten.view.default(t, lead + [U, 1, V, 1]), phased)

            term = aten.where.self(aten.eq.Tensor(shifted(index), target), shifted(padded), zero)
            total = term if total is None else aten.add.Tensor(total, term)
    # reshape: the terms keep a channels-last gradient's layout, which no view merges.
    full = aten.reshape.default(total, lead + [U * sh, V * sw])
    if U * sh != g.H:
        full = aten.slice.Tensor(full, -2, 0, g.H)
    if V * sw != g.W:
        full = aten.slice.Tensor(full, -1, 0, g.W)
    return full


# --- group_norm and one_hot's asserts -------------------------------------------


def _native_group_norm(x, weight, bias, N: int, C: int, HxW: int, group: int, eps: float):
    """PyTorch's CPU formula (out = x * rstd*gamma + (beta - mean*rstd*gamma))
    with reshapes where its reference uses as_strided."""
    acc = torch.float32 if x.dtype in (torch.bfloat16, torch.float16) else x.dtype
    xa = aten._to_copy.default(x, dtype=acc) if acc != x.dtype else x
    grouped = aten.reshape.default(xa, [N, group, (C // group) * HxW])
    var, mean = aten.var_mean.correction(grouped, [2], correction=0, keepdim=True)
    rstd = aten.rsqrt.default(aten.add.Tensor(var, eps))  # [N, G, 1]
    scale = aten.expand.default(aten.view.default(rstd, [N, group, 1]), [N, group, C // group])
    shift = aten.mul.Tensor(aten.expand.default(mean, [N, group, C // group]), -1.0)
    shift = aten.mul.Tensor(shift, scale)
    if weight is not None:
        w = aten.view.default(weight, [1, group, C // group])
        scale = aten.mul.Tensor(scale, w)
        shift = aten.mul.Tensor(shift, w)
    if bias is not None:
        shift = aten.add.Tensor(shift, aten.view.default(bias, [1, group, C // group]))
    spatial = [1] * (x.dim() - 2)
    scale = aten.reshape.default(scale, [N, C] + spatial)
    shift = aten.reshape.default(shift, [N, C] + spatial)
    out = aten.add.Tensor(aten.mul.Tensor(xa, scale), shift)
    out = aten._to_copy.default(out, dtype=x.dtype) if acc != x.dtype else out
    mean = aten.view.default(mean, [N, group])
    rstd = aten.view.default(rstd, [N, group])
    if acc != x.dtype:
        mean = aten._to_copy.default(mean, dtype=x.dtype)
        rstd = aten._to_copy.default(rstd, dtype=x.dtype)
    return out, mean, rstd


def _assert_async(cond, msg):
    """one_hot's range checks (class < 0 or >= num_classes) are dropped:
    an engine has no way to raise, and such a class gives an all-zero row.
    Every other assert stays in the graph (and is reported unsupported)."""
    if msg.startswith("one_hot: Class values must be"):
        return None
    return NotImplemented


def rules() -> dict:
    return {
        aten.max.dim: _max_dim,
        aten.min.dim: _min_dim,
        aten.argmax.default: _arg(True),
        aten.argmin.default: _arg(False),
        aten.max_pool2d_with_indices.default: _max_pool2d_with_indices,
        aten.max_pool2d_with_indices_backward.default: _max_pool2d_backward,
        aten.native_group_norm.default: _native_group_norm,
        aten.topk.default: _topk,
        aten.sort.default: _sort_default,
        aten.sort.stable: _sort_stable,
        aten._assert_async.msg: _assert_async,
    }
