"""trnc decomposition of ``aten.linalg_solve_triangular`` and the deprecated
``aten.triangular_solve`` (docs/decompositions.md, "Linear algebra:
triangular solves").

GatedDeltaNet linear attention (olmo_hybrid, qwen3_5, qwen3_next, ...) solves a
unit-lower-triangular chunk system (n = 64) per head and chunk. Forward
substitution is n dependent row steps; here the solve is ~3 log2(n) Tensor
Engine matmuls instead, with every argument form handled:

* ``left=False`` (X A = B) is the left solve of the transposes:
  A^T X^T = B^T with the other triangle.
* Only the triangle the solve reads is used (``tril``/``triu``); the diagonal is
  taken as ones when ``unitriangular``, else A = D (I - N) with
  D = diag(A) and N = -D^-1 * strict(A): rows scaled by 1 / a_ii.
* N is strictly triangular, so nilpotent (N^n = 0) and
  (I - N)^-1 = sum_{j<n} N^j = (I + N^(2^(m-1))) ... (I + N^2)(I + N),
  2^m >= n. The factors commute, so they are applied to Y = D^-1 B one at a
  time: Y <- Y + N^(2^k) Y, with N^(2^k) by repeated squaring. That is
  m matmuls against B, 2m - 3 squaring products (N and N^T are both
  squared: see _unit_left_solve) and one transpose: 6 + 9 + 1 for n = 64,
  exact in exact arithmetic (no iteration to converge).

Numerics: each term N^j is a product of j entries of |N| along a path, and
every step adds at most one rounding per term, so the error is bounded by
~(2m) eps ((I - |N|)^-1 |D^-1 B|), the comparison-matrix bound that
substitution itself meets (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., sections 8.2-8.3); it is small whenever the inverse
has no large cancelling entries, as in GatedDeltaNet, where |N_ij| <= beta
|k_i||k_j| <= 1 with l2-normalised keys and decays <= 1.
bfloat16/float16 systems are solved in float32 and rounded once at the end
(eager has no half-precision triangular solve on CPU; rounding after each
of the 2m steps would compound).

The backward needs nothing more: autograd's formula for solve_triangular is
another solve_triangular (with A^H, the other triangle) and matmuls masked to
the triangle, which decompose the same way.
"""

from __future__ import annotations

import math

import torch

__all__ = ["rules", "solve_triangular"]

aten = torch.ops.aten


def _unit_left_solve(p, q, y):
    """(I - N)^-1 y for N = p strictly triangular [B, n, n], q = N^T, y [B, n, k].

    Every product's left operand is the transposed view of a tensor the
    graph computed (x.mT @ y): the Tensor Engine takes its stationary
    operand transposed, so that operand loads row by row, where a plain
    x @ y loads it element-strided (3.2x the simulated time for 8 64x64
    products). Hence N and N^T are both kept and squared:
    N^2 = (N^T)^T N, (N^T)^2 = N^T N^T = N^T (N^T) with left operand p^T.
    """
    n = p.shape[-1]
    reach = 1  # terms N^j with j < 2 * reach are in y after the next step
    while True:
        y = y + torch.bmm(q.mT, y)
        reach *= 2
        if reach >= n:
            return y
        q_next = torch.bmm(p.mT, q)  # (N^2)^T, for the next step
        if 2 * reach < n:  # another squaring follows: it needs N^2 as well
            p = torch.bmm(q.mT, p)
        q = q_next


def solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    if not left:
        return solve_triangular(a.mT, b.mT, upper=not upper, unitriangular=unitriangular).mT
    out_dtype = torch.promote_types(a.dtype, b.dtype)
    work = torch.float32 if out_dtype in (torch.bfloat16, torch.float16) else out_dtype
    a, b = a.to(work), b.to(work)
    n, k = a.shape[-1], b.shape[-1]
    strict = torch.triu(a, 1) if upper else torch.tril(a, -1)
    eye = torch.eye(n, dtype=work, device=a.device)
    if unitriangular:
        p, y = -strict, b
    else:
        inv_diag = torch.reciprocal((a * eye).sum(-1, keepdim=True))  # [..., n, 1]
        p, y = -(strict * inv_diag), b * inv_diag
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if n <= 1:  # nothing to substitute; the copy keeps the output from aliasing b
        return y.expand(*batch, n, k).clone().to(out_dtype)
    flat = math.prod(batch)
    p = p.expand(*batch, n, n).reshape(flat, n, n)
    # N^T as its own tensor: the Tensor Engine transposes (p^T @ I, exact), 36 us
    # simulated for 8 64x64 blocks where triu of a transposed view loads a^T
    # element-strided (58 us).
    q = torch.bmm(p.mT, eye.expand(flat, n, n))
    y = _unit_left_solve(p, q, y.expand(*batch, n, k).reshape(flat, n, k))
    return y.view(*batch, n, k).to(out_dtype)


def _linalg_solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    return solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular)


def _triangular_solve(b, a, upper=True, transpose=False, unitriangular=False):
    """The deprecated torch.triangular_solve: A X = b (A^T X = b if transpose),
    returning (X, A broadcast to the batch shape and copied)."""
    coefficient = a.mT if transpose else a
    x = solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return x, a.expand(*x.shape[:-2], *a.shape[-2:]).clone()


def rules() -> dict:
    return {
        aten.linalg_solve_triangular.default: _linalg_solve_triangular,
        aten.triangular_solve.default: _triangular_solve,
    }

