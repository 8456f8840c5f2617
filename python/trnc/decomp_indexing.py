"""trnc decomposition rules for indexing (see docs/decompositions.md,
"Indexing: gather, scatter, index_put, embedding, nll_loss").

Every indexing operator becomes the two indirect-row primitives of
indirect_ops.py (``trnc.gather_rows`` / ``trnc.scatter_rows``, one DmaIndirect
per 128 rows) plus views and elementwise ops the compiler already lowers:

- Row forms (``embedding``, ``index_select``, ``index``/``index_put``): view the
  tensor as a [rows, row_len] table (indexed dims first, the rest flattened
  into the row) and move whole rows.
- Element forms (``gather``, ``scatter*``): a [numel, 1] table and a linearised
  index ``sum(coord_d * stride_d)``.

Index arithmetic (linearising, wrapping negatives, padding_idx -> -1) runs in
float32 (``arange`` is an fp32 iota; there is no integer iota yet) and is
converted to int32 at the end: exact only below 2**24, so larger tables are
refused with a CompileError. An index outside the table gives a zero row
(gather) or is dropped (scatter), which is how padding_idx / ignore_index rows
are skipped. nll_loss over [N, C] gathers each row's target element (in
blocks of rows, each a table of short rows: indices stay below 2**16);
other shapes, or a C with too few factors of two, select it with a one-hot
compare (no index arithmetic, no size limit; reasons in the docs).

A rule returns NotImplemented for a form it does not handle (bool masks with
data-dependent sizes, scatter reduce='multiply'); the op then reaches the
importer, which reports it unsupported.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import torch

from . import decomp_scatter_minmax
from . import indirect_ops  # noqa: F401  (defines torch.ops.trnc.*)
from .errors import CompileError

aten = torch.ops.aten
trnc_ops = torch.ops.trnc

# fp32 represents every integer below 2**24 exactly (HARDWARE.md: the engines'
# integer arithmetic goes through fp32 lanes).
EXACT_INDEX_LIMIT = 1 << 24


def check_exact_index(n: int, op: str) -> None:
    """Refuse index arithmetic over more than 2**24 positions (float32 lanes)."""
    if n > EXACT_INDEX_LIMIT:
        raise CompileError(
            f"{op}: indexing {n} rows/elements/positions needs index arithmetic beyond 2**24, "
            "which trnc computes in float32 lanes and cannot do exactly",
            error_kind="unsupported_operator",
        )


def _numel(shape: Sequence[int]) -> int:
    return math.prod(int(s) for s in shape)


def _reshape(x, shape):
    """View ``x`` as ``shape``, copying to row-major first if it is not."""
    if not x.is_contiguous():
        x = aten.clone.default(x, memory_format=torch.contiguous_format)
    return aten.view.default(x, list(shape))


def _zeros(shape, like, dtype=None):
    return aten.full.default(list(shape), 0, dtype=dtype or like.dtype, device=like.device)


def _as_float(index):
    return aten._to_copy.default(index, dtype=torch.float32)


def _as_index(f):
    """An fp32 tensor of exact integers -> flat int32 row indices."""
    return _reshape(aten._to_copy.default(f, dtype=torch.int32), [-1])


def _iota(n: int, rank: int, dim: int, device):
    """0..n-1 in fp32, shaped to broadcast along ``dim`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[dim] = n
    r = aten.arange.start_step(0, n, 1, dtype=torch.float32, device=device)
    return aten.view.default(r, shape)


def _wrap(f, n: int):
    """PyTorch's negative indices: i < 0 means i + n."""
    return aten.where.self(aten.lt.Scalar(f, 0), aten.add.Tensor(f, float(n)), f)


def _inverse(perm: Sequence[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _permute(x, perm):
    return x if list(perm) == list(range(len(perm))) else aten.permute.default(x, list(perm))


# embedding ------------------------------------------------------------------


def _embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    d = weight.shape[1]
    if indices.numel() == 0:
        return _zeros([*indices.shape, d], weight)
    rows = trnc_ops.gather_rows(weight, _reshape(indices, [-1]))
    return aten.view.default(rows, [*indices.shape, d])


def _embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    d = grad_output.shape[-1]
    out = _zeros([num_weights, d], grad_output)
    if indices.numel() == 0:
        return out
    grad = _reshape(grad_output, [-1, d])
    index = _reshape(indices, [-1])
    if padding_idx >= 0:  # the padding row gets no gradient: index -1 drops it
        check_exact_index(num_weights, "embedding backward")
        f = _as_float(index)
        f = aten.where.self(aten.eq.Scalar(f, padding_idx), aten.full.default([], -1.0, dtype=torch.float32), f)
        index = _as_index(f)
    if scale_grad_by_freq:  # divide each row's grad by how often its index occurs
        ones = aten.full.default([index.shape[0], 1], 1.0, dtype=torch.float32, device=grad.device)
        counts = trnc_ops.scatter_rows(_zeros([num_weights, 1], grad, torch.float32), index, ones, True)
        count = aten._to_copy.default(trnc_ops.gather_rows(counts, index), dtype=grad.dtype)
        grad = aten.div.Tensor(grad, count)
    return trnc_ops.scatter_rows(out, index, grad, True)


def _embedding_renorm(weight, indices, max_norm, norm_type):
    """The functional form of embedding(max_norm=...)'s in-place renorm: the
    referenced rows whose norm exceeds max_norm are scaled by
    max_norm / (norm + 1e-7) (ATen's constant). Duplicate indices rewrite the
    same scaled row."""
    if indices.numel() == 0:
        return aten.clone.default(weight)
    index = _reshape(indices, [-1])
    rows = trnc_ops.gather_rows(weight, index)
    x = aten._to_copy.default(rows, dtype=torch.float32)
    if norm_type == 2:
        norm = aten.sqrt.default(aten.sum.dim_IntList(aten.mul.Tensor(x, x), [1], True))
    elif norm_type == 1:
        norm = aten.sum.dim_IntList(aten.abs.default(x), [1], True)
    else:
        p = aten.pow.Tensor_Scalar(aten.abs.default(x), float(norm_type))
        norm = aten.pow.Tensor_Scalar(aten.sum.dim_IntList(p, [1], True), 1.0 / norm_type)
    scale = aten.div.Tensor(aten.full.default([], float(max_norm), dtype=torch.float32),
                            aten.add.Tensor(norm, 1e-7))
    scaled = aten._to_copy.default(aten.mul.Tensor(x, scale), dtype=weight.dtype)
    new = aten.where.self(aten.gt.Scalar(norm, float(max_norm)), scaled, rows)
    return trnc_ops.scatter_rows(weight, index, new, False)


# index_select ----------------------------------------------------------------


def _rows_view(x, dims: Sequence[int]):
    """x with ``dims`` moved first (in order) as a [prod(dims), prod(rest)]
    table; returns (table, permutation, rest sizes)."""
    rest = [d for d in range(x.dim()) if d not in dims]
    perm = list(dims) + rest
    rest_sizes = [x.shape[d] for d in rest]
    table = _reshape(_permute(x, perm), [_numel(x.shape[d] for d in dims), _numel(rest_sizes)])
    return table, perm, rest_sizes


def _index_select(x, dim, index):
    if x.dim() == 0:
        return aten.view.default(_index_select(aten.view.default(x, [1]), 0, index), [])
    dim = dim % x.dim()
    m = index.numel()
    out_shape = list(x.shape)
    out_shape[dim] = m
    if _numel(out_shape) == 0:
        return _zeros(out_shape, x)
    table, perm, rest = _rows_view(x, [dim])
    rows = trnc_ops.gather_rows(table, _reshape(index, [-1]))
    return _permute(aten.view.default(rows, [m, *rest]), _inverse(perm))


# gather / scatter (element forms) --------------------------------------------


def _linear_index(x, dim: int, index, op: str):
    """int32 [numel(index)]: the row of x's [numel, 1] view that element i of
    ``index`` addresses along ``dim`` (its own coordinates elsewhere)."""
    check_exact_index(x.numel(), op)
    rank = x.dim()
    strides = [_numel(x.shape[d + 1:]) for d in range(rank)]
    f = aten.mul.Tensor(_as_float(index), float(strides[dim]))
    for d in range(rank):
        if d != dim and index.shape[d] > 1:
            f = aten.add.Tensor(f, aten.mul.Tensor(_iota(index.shape[d], rank, d, x.device), float(strides[d])))
    return _as_index(f)


def _gather(x, dim, index, sparse_grad=False):
    if index.numel() == 0:
        return _zeros(index.shape, x)
    if x.dim() == 0:
        return aten.view.default(_gather(aten.view.default(x, [1]), 0, aten.view.default(index, [1])),
                                 list(index.shape))
    dim = dim % x.dim()
    rows = trnc_ops.gather_rows(_reshape(x, [x.numel(), 1]), _linear_index(x, dim, index, "gather"))
    return aten.view.default(rows, list(index.shape))


def _scatter_elements(x, dim, index, src, accumulate: bool, op: str):
    if index.numel() == 0:
        return aten.clone.default(x)
    if x.dim() == 0:
        one = [1]
        out = _scatter_elements(aten.view.default(x, one), 0, aten.view.default(index, one),
                                aten.view.default(src, one), accumulate, op)
        return aten.view.default(out, [])
    dim = dim % x.dim()
    for d in range(src.dim()):  # scatter reads only src's leading index.shape block
        if src.shape[d] != index.shape[d]:
            src = aten.slice.Tensor(src, d, 0, index.shape[d])
    if src.dtype != x.dtype:
        src = aten._to_copy.default(src, dtype=x.dtype)
    out = trnc_ops.scatter_rows(
        _reshape(x, [x.numel(), 1]), _linear_index(x, dim, index, op), _reshape(src, [-1, 1]), accumulate)
    return aten.view.default(out, list(x.shape))


def _value_src(index, value, x):
    return aten.full.default(list(index.shape), value, dtype=x.dtype, device=x.device)


def _scatter_src(x, dim, index, src):
    return _scatter_elements(x, dim, index, src, False, "scatter")


def _scatter_value(x, dim, index, value):
    return _scatter_elements(x, dim, index, _value_src(index, value, x), False, "scatter")


def _scatter_add(x, dim, index, src):
    return _scatter_elements(x, dim, index, src, True, "scatter_add")


def _scatter_reduce(x, dim, index, src, reduce):
    if reduce != "add":  # 'multiply' needs a product scatter: not in DmaIndirect
        return NotImplemented
    return _scatter_elements(x, dim, index, src, True, "scatter")


def _scatter_value_reduce(x, dim, index, value, reduce):
    return _scatter_reduce(x, dim, index, _value_src(index, value, x), reduce)


def _scatter_reduce_two(x, dim, index, src, reduce, include_self=True):
    if reduce in ("amax", "amin"):  # a dense one-hot reduction instead
        return decomp_scatter_minmax.scatter_minmax(x, dim, index, src, reduce, include_self)
    if reduce != "sum":  # prod/mean: not in DmaIndirect's write modes
        return NotImplemented
    if not include_self:  # zero the written elements first, then add
        x = _scatter_elements(x, dim, index, aten.zeros_like.default(src), False, "scatter_reduce")
    return _scatter_elements(x, dim, index, src, True, "scatter_reduce")


# index / index_put (advanced indexing) -------------------------------------


class _Advanced:
    """PyTorch's advanced-indexing layout for ``x[indices]``: the indexed dims
    as rows of a table, the broadcast index shape, where its dims land."""

    def __init__(self, x, indices, op: str):
        self.x = x
        self.dims = [d for d, t in enumerate(indices) if t is not None]
        tensors = [indices[d] for d in self.dims]
        self.broadcast = list(torch.broadcast_shapes(*[t.shape for t in tensors]))
        sizes = [x.shape[d] for d in self.dims]
        self.rows = _numel(sizes)
        self.table, self.perm, self.rest = _rows_view(x, self.dims)
        # Row index: sum over the indexed dims of wrap(i_k) * stride_k.
        check_exact_index(self.rows, op)
        f = None
        for k, t in enumerate(tensors):
            term = _wrap(_as_float(t), sizes[k])
            stride = _numel(sizes[k + 1:])
            if stride != 1:
                term = aten.mul.Tensor(term, float(stride))
            f = term if f is None else aten.add.Tensor(f, term)
        if list(f.shape) != self.broadcast:
            f = aten.expand.default(f, self.broadcast)
        self.index = _as_index(f)
        # Adjacent indexed dims keep their place in the result; otherwise the
        # broadcast dims go first. Our row layout is broadcast + rest.
        nb, first = len(self.broadcast), self.dims[0]
        adjacent = self.dims == list(range(first, self.dims[-1] + 1))
        pre = first if adjacent else 0
        self.out_perm = [nb + i for i in range(pre)] + list(range(nb)) + [
            nb + i for i in range(pre, len(self.rest))]
        self.out_shape = [([*self.broadcast, *self.rest])[p] for p in self.out_perm]


def _has_bool(indices) -> bool:
    return any(t is not None and t.dtype in (torch.bool, torch.uint8) for t in indices)


def _index(x, indices):
    if _has_bool(indices):  # a mask gives a data-dependent result size
        return NotImplemented
    adv = _Advanced(x, list(indices), "index")
    if _numel(adv.out_shape) == 0:
        return _zeros(adv.out_shape, x)
    rows = trnc_ops.gather_rows(adv.table, adv.index)
    return _permute(aten.view.default(rows, [*adv.broadcast, *adv.rest]), adv.out_perm)


def _mask_put(x, mask, values, accumulate):
    """``x[mask] = v`` where v does not vary along the selected-element dim
    (it broadcasts over x's trailing dims): a where, no indexing. Returns
    NotImplemented when v has one value per selected element (data-dependent)."""
    k = mask.dim()
    rest = list(x.shape[k:])
    v = list(values.shape)
    if len(v) == len(rest) + 1 and v[0] == 1:
        values = aten.view.default(values, v[1:])
    elif len(v) > len(rest):
        return NotImplemented
    m = aten.view.default(aten._to_copy.default(mask, dtype=torch.bool), list(mask.shape) + [1] * len(rest))
    if values.dtype != x.dtype:
        values = aten._to_copy.default(values, dtype=x.dtype)
    new = aten.add.Tensor(x, values) if accumulate else aten.expand.default(values, list(x.shape))
    return aten.where.self(m, new, x)


def _index_put(x, indices, values, accumulate=False):
    indices = list(indices)
    if _has_bool(indices):
        if len(indices) == 1:
            return _mask_put(x, indices[0], values, accumulate)
        return NotImplemented  # a mask with per-element values: data-dependent count
    adv = _Advanced(x, indices, "index_put")
    if _numel(adv.out_shape) == 0:
        return aten.clone.default(x)
    if values.dtype != x.dtype:
        values = aten._to_copy.default(values, dtype=x.dtype)
    v = _permute(aten.expand.default(values, adv.out_shape), _inverse(adv.out_perm))
    src = _reshape(v, [adv.index.shape[0], _numel(adv.rest)])
    out = trnc_ops.scatter_rows(adv.table, adv.index, src, bool(accumulate))
    permuted = [x.shape[p] for p in adv.perm]
    return _permute(aten.view.default(out, permuted), _inverse(adv.perm))


def _put(x, index, source, accumulate=False):
    """put (take's backward): index_put on the flattened tensor."""
    flat = _index_put(_reshape(x, [x.numel()]), [_reshape(index, [-1])], _reshape(source, [-1]), accumulate)
    return aten.view.default(flat, list(x.shape))


# nll_loss ---------------------------------------------------------------------


def _class_mask(self, target, ignore_index):
    """One-hot of target along the class dim (1, or 0 for unbatched input),
    false where target == ignore_index; and the valid-target mask. An ignored
    target becomes -1 per sample, which no class equals: one compare over the
    [N, C] classes instead of a compare and a logical_and (the GPT step's
    [4096, 8192] loss reads that many elements once less, forward and
    backward)."""
    cdim = 1 if self.dim() >= 2 else 0
    classes = _iota(self.shape[cdim], self.dim(), cdim, self.device)
    t = aten.unsqueeze.default(_as_float(target), cdim)
    valid = aten.ne.Scalar(t, ignore_index)
    none = aten.full.default([], -1.0, dtype=t.dtype, device=t.device)
    onehot = aten.eq.Tensor(classes, aten.where.self(valid, t, none))
    return onehot, valid, cdim


def _select(mask, values, cdim):
    """sum over the class dim of where(mask, values, 0): the selected class."""
    picked = aten.where.self(mask, values, _zeros([], values))
    return aten.sum.dim_IntList(picked, [cdim], False)


def _class_weight(weight, ndim, cdim):
    shape = [1] * ndim
    shape[cdim] = weight.shape[0]
    return aten.view.default(weight, shape)


# Below this many classes in all, the one-hot select (three cheap passes)
# is faster than the gathers' chain of small ops and DMAs: the demo GPT's
# [256, 512] loss took 8 us longer gathered (forward 0.222 -> 0.230 ms).
MIN_GATHER_ELEMENTS = 1 << 20

# Rows one DmaIndirect table may span (passes/Tile/LowerIndirect.cpp,
# kMaxTableRows: an HBM pattern's row count is 16-bit); a bigger table is
# gathered once per 64Ki-row range.
MAX_TABLE_ROWS = 65535


def _pick_layout(n: int, c: int) -> Optional[tuple[int, int]]:
    """(B, R) for gathering one class per row of an [n, c] input: blocks of
    B rows whose [B * c / R, R] table is one DmaIndirect table, R the
    fewest classes (a power of two dividing c) that allows blocks of 512
    rows (fewer, down to 128, when c has too few factors of two; a block is
    a few ops, R columns per row a select); None when even 128-row blocks
    need more table rows."""
    for b in (512, 256, 128):
        b = min(b, n)
        r = 1
        while c % r == 0:
            if b * (c // r) <= MAX_TABLE_ROWS:
                return b, r
            r *= 2
    return None


def _gathered_target(self, target, weight, ignore_index):
    """For an [N, C] input: self[i, target[i]] * weight[target[i]] (0 for an
    ignored target) and the selected weights (without a weight: the
    valid-target mask), each [N], moving one row of R classes per sample by
    gather_rows instead of a one-hot pass over all N * C classes; None when
    C has too few factors of two (_pick_layout) or the input has fewer than
    MIN_GATHER_ELEMENTS elements.

    Rows are taken in blocks of B samples: sample p of a block finds its
    target t in row p * (C / R) + floor(t / R) of the block's rows viewed as
    [B * C / R, R] (R a power of two: the division is exact in fp32; every
    index is below 2**16), at column t mod R. An ignored target gets row
    index -1, which gather_rows fills with zeros."""
    n, c = (int(s) for s in self.shape)
    layout = _pick_layout(n, c) if n * c >= MIN_GATHER_ELEMENTS else None
    if layout is None or (weight is not None and c > EXACT_INDEX_LIMIT):
        return None
    block, r = layout
    t = _as_float(target)
    valid = aten.ne.Scalar(t, ignore_index)
    none = aten.full.default([], -1.0, dtype=t.dtype, device=t.device)
    q = aten.floor.default(aten.mul.Tensor(t, 1.0 / r))
    parts = []
    for b0 in range(0, n, block):
        nb = min(block, n - b0)
        row = aten.add.Tensor(aten.mul.Tensor(_iota(nb, 1, 0, self.device), float(c // r)),
                              aten.slice.Tensor(q, 0, b0, b0 + nb))
        index = aten.where.self(aten.slice.Tensor(valid, 0, b0, b0 + nb), row, none)
        table = _reshape(aten.slice.Tensor(self, 0, b0, b0 + nb), [nb * c // r, r])
        parts.append(trnc_ops.gather_rows(table, _as_index(index)))
    rows = parts[0] if len(parts) == 1 else aten.cat.default(parts)
    if r == 1:
        picked = aten.view.default(rows, [n])
    else:
        col = aten.unsqueeze.default(aten.sub.Tensor(t, aten.mul.Tensor(q, float(r))), 1)
        picked = _select(aten.eq.Tensor(_iota(r, 2, 1, self.device), col), rows, 1)
    if weight is None:
        return picked, valid
    w = trnc_ops.gather_rows(aten.view.default(weight, [c, 1]), _as_index(aten.where.self(valid, t, none)))
    w = aten.view.default(w, [n])
    return aten.mul.Tensor(picked, w), w


def _nll_loss_forward(self, target, weight, reduction, ignore_index):
    gathered = _gathered_target(self, target, weight, ignore_index) if self.dim() == 2 else None
    if gathered is not None:
        picked, selected_weight = gathered
        loss = aten.mul.Tensor(picked, -1)
        if weight is None:  # a count of valid targets, summed in fp32 like the one-hot path's
            total = aten._to_copy.default(aten.sum.default(aten._to_copy.default(selected_weight, dtype=torch.float32)),
                                          dtype=self.dtype)
        else:
            total = aten.sum.default(selected_weight)
    else:
        onehot, valid, cdim = _class_mask(self, target, ignore_index)
        x = self if weight is None else aten.mul.Tensor(self, _class_weight(weight, self.dim(), cdim))
        loss = aten.mul.Tensor(_select(onehot, x, cdim), -1)
        if weight is None:
            total = aten._to_copy.default(aten.sum.default(aten._to_copy.default(valid, dtype=torch.float32)),
                                          dtype=self.dtype)
        else:
            w = aten.expand.default(_class_weight(weight, self.dim(), cdim), list(self.shape))
            total = aten.sum.default(_select(onehot, w, cdim))
    if reduction == 0 and self.dim() > 1:  # 'none'
        return loss, _zeros([], self)
    if reduction == 1:  # 'mean'
        return aten.div.Tensor(aten.sum.default(loss), total), total
    if reduction == 2:  # 'sum'
        return aten.sum.default(loss), total
    return loss, total


def _nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    onehot, _, cdim = _class_mask(self, target, ignore_index)
    g = grad_output
    if reduction == 1:
        g = aten.div.Tensor(g, total_weight)
    if self.dim() > g.dim() > 0:  # reduction 'none': one grad per sample
        g = aten.unsqueeze.default(g, cdim)
    g = aten.mul.Tensor(g, -1)
    if weight is not None:
        g = aten.mul.Tensor(g, _class_weight(weight, self.dim(), cdim))
    g = aten.expand.default(g, list(self.shape)) if list(g.shape) != list(self.shape) else g
    return aten.where.self(onehot, g, _zeros([], self))


def rules() -> dict:
    return {
        aten.embedding.default: _embedding,
        aten.embedding_dense_backward.default: _embedding_dense_backward,
        aten.embedding_renorm.default: _embedding_renorm,
        aten.index_select.default: _index_select,
        aten.gather.default: _gather,
        aten.scatter.src: _scatter_src,
        aten.scatter.value: _scatter_value,
        aten.scatter.reduce: _scatter_reduce,
        aten.scatter.value_reduce: _scatter_value_reduce,
        aten.scatter_add.default: _scatter_add,
        aten.scatter_reduce.two: _scatter_reduce_two,
        aten.index.Tensor: _index,
        aten._unsafe_index.Tensor: _index,
        aten.index_put.default: _index_put,
        aten._unsafe_index_put.default: _index_put,
        aten.put.default: _put,
        aten.nll_loss_forward.default: _nll_loss_forward,
        aten.nll_loss_backward.default: _nll_loss_backward,
        aten.nll_loss2d_forward.default: _nll_loss_forward,
        aten.nll_loss2d_backward.default: _nll_loss_backward,
    }
