"""trnc's indirect row operators: ``torch.ops.trnc.gather_rows`` and
``torch.ops.trnc.scatter_rows`` (graph-JSON targets ``trnc.gather_rows.default``
and ``trnc.scatter_rows.default``, docs/graph-json.md).

They are the two primitives every indexing decomposition reaches
(decomp_indexing.py; embedding, index_select, gather, scatter, index_put,
nll_loss, max_pool2d backward); the compiler lowers each to the DmaIndirect
instruction (runtime/isa/Isa.h). The CPU implementations below *are* the
contract the lowering must match:

- ``gather_rows(table[N, D], index[M]) -> [M, D]``: ``out[m] = table[index[m]]``,
  a zero row where ``index[m]`` is outside ``[0, N)``.
- ``scatter_rows(base[N, D], index[M], src[M, D], accumulate) -> [N, D]``:
  a copy of ``base``; then for ``m = 0..M-1`` in order, where
  ``0 <= index[m] < N``: ``out[index[m]] = src[m]`` (last writer wins) or, with
  ``accumulate``, ``out[index[m]] += src[m]`` (summed in float32, then cast).
  Out-of-range rows are dropped (callers pass -1 for rows to skip).

``index`` is int32 or int64. Both operators also have autograd formulas (in
terms of each other), so they can be used in a model's forward too.
"""

from __future__ import annotations

import torch

__all__ = ["gather_rows", "scatter_rows"]


def _check(name: str, table: torch.Tensor, index: torch.Tensor) -> None:
    torch._check(table.dim() == 2, lambda: f"trnc::{name}: the table must be 2-D, got {table.dim()}-D")
    torch._check(index.dim() == 1, lambda: f"trnc::{name}: the index must be 1-D, got {index.dim()}-D")
    torch._check(
        index.dtype in (torch.int32, torch.int64),
        lambda: f"trnc::{name}: the index must be int32 or int64, got {index.dtype}",
    )


def _in_range(index: torch.Tensor, n: int) -> torch.Tensor:
    return (index >= 0) & (index < n)


@torch.library.custom_op("trnc::gather_rows", mutates_args=())
def gather_rows(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``out[m] = table[index[m]]``; a zero row for an index outside [0, N)."""
    _check("gather_rows", table, index)
    n = table.shape[0]
    valid = _in_range(index, n)
    safe = torch.where(valid, index, torch.zeros_like(index)).long()
    if n == 0:
        return table.new_zeros((index.shape[0], table.shape[1]))
    rows = table.index_select(0, safe)
    return torch.where(valid.unsqueeze(1), rows, torch.zeros_like(rows))


@gather_rows.register_fake
def _(table, index):
    _check("gather_rows", table, index)
    return table.new_empty((index.shape[0], table.shape[1]))


@torch.library.custom_op("trnc::scatter_rows", mutates_args=())
def scatter_rows(base: torch.Tensor, index: torch.Tensor, src: torch.Tensor, accumulate: bool) -> torch.Tensor:
    """A copy of ``base`` with row ``index[m]`` set to (or, with ``accumulate``,
    increased by) ``src[m]`` in order of m; out-of-range rows dropped."""
    _check("scatter_rows", base, index)
    torch._check(
        src.dim() == 2 and src.shape[0] == index.shape[0] and src.shape[1] == base.shape[1],
        lambda: f"trnc::scatter_rows: src must be [{index.shape[0]}, {base.shape[1]}], got {list(src.shape)}",
    )
    valid = _in_range(index, base.shape[0])
    rows = index[valid].long()
    values = src[valid]
    if accumulate:
        out = base.to(torch.float32, copy=True)
        out.index_add_(0, rows, values.to(torch.float32))  # rows in order, one fp32 add each
        return out.to(base.dtype)
    out = base.clone(memory_format=torch.contiguous_format)
    # Last writer wins: keep, per destination row, only the last m writing it.
    if rows.numel():
        order = torch.arange(rows.numel(), device=rows.device)
        last = torch.full((base.shape[0],), -1, dtype=torch.long, device=rows.device)
        last.scatter_reduce_(0, rows, order, reduce="amax")
        keep = last[rows] == order
        out[rows[keep]] = values[keep].to(base.dtype)
    return out


@scatter_rows.register_fake
def _(base, index, src, accumulate):
    _check("scatter_rows", base, index)
    return base.new_empty(base.shape)


# Autograd, written with the two operators themselves.
def _gather_setup(ctx, inputs, output):
    table, index = inputs
    ctx.save_for_backward(index)
    ctx.shape = table.shape
    ctx.dtype = table.dtype


def _gather_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    zeros = grad.new_zeros(ctx.shape)
    return scatter_rows(zeros, index, grad, True), None


gather_rows.register_autograd(_gather_backward, setup_context=_gather_setup)


def _scatter_setup(ctx, inputs, output):
    base, index, src, accumulate = inputs
    ctx.save_for_backward(index)
    ctx.accumulate = accumulate
    ctx.n = base.shape[0]


def _scatter_backward(ctx, grad):
    (index,) = ctx.saved_tensors
    if ctx.accumulate:
        return grad, None, gather_rows(grad, index), None
    m = index.shape[0]
    # base: rows written by some src row get no gradient.
    grad_base = scatter_rows(grad, index, grad.new_zeros((m, grad.shape[1])), False)
    # src: only the last writer of each row reaches the output. Row r holds the
    # position m of its last writer (+1, so 0 means "not written").
    position = torch.arange(1, m + 1, device=grad.device, dtype=torch.float32).unsqueeze(1)
    last = scatter_rows(position.new_zeros((ctx.n, 1)), index, position, False)
    won = gather_rows(last, index) == position
    grad_src = torch.where(won, gather_rows(grad, index), torch.zeros((), dtype=grad.dtype, device=grad.device))
    return grad_base, None, grad_src, None


scatter_rows.register_autograd(_scatter_backward, setup_context=_scatter_setup)
