"""trnc decomposition rules for normalisation and norms (see
docs/decompositions.md, "Reductions, softmax, normalisation, dropout and
losses").

The compiler lowers reductions (sum/mean/amax/amin/prod/var_mean) and a fused
(log_)softmax itself. Normalisation layers are not in the core-ATen
decomposition table (``native_layer_norm`` etc. are core ops), so these rules
take PyTorch's own decompositions for them: each becomes ``var_mean`` plus
elementwise ops (add, rsqrt, sub, mul), which lower, instead of one opaque
op. Batch norm's running-stat update comes back from AOTAutograd as extra
graph outputs (the input mutation is applied by the runtime wrapper).
"""

from __future__ import annotations

import math

import torch
from torch._decomp import decomposition_table as _torch_table

aten = torch.ops.aten

# Normalisation ops whose PyTorch decomposition is used as is.
_FROM_TORCH = (
    aten.native_layer_norm.default,
    aten.native_group_norm.default,
    aten.native_batch_norm.default,
    aten._native_batch_norm_legit.default,
    aten._native_batch_norm_legit.no_stats,
    aten._native_batch_norm_legit_functional.default,
    aten._native_batch_norm_legit_no_training.default,
)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """2-norm as sqrt(sum(x * x)) (no pow), +-inf as amax/amin of |x|;
    other orders use PyTorch's rule."""
    if dtype is not None:
        x = aten._to_copy.default(x, dtype=dtype)
    dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if ord == 2:
        return aten.sqrt.default(aten.sum.dim_IntList(aten.mul.Tensor(x, x), dims, keepdim))
    if ord == math.inf:
        return aten.amax.default(aten.abs.default(x), dims, keepdim)
    if ord == -math.inf:
        return aten.amin.default(aten.abs.default(x), dims, keepdim)
    if ord == 1:
        return aten.sum.dim_IntList(aten.abs.default(x), dims, keepdim)
    return _torch_table[aten.linalg_vector_norm.default](x, ord, dim, keepdim)


def rules() -> dict:
    table = {op: _torch_table[op] for op in _FROM_TORCH if op in _torch_table}
    table[aten.linalg_vector_norm.default] = _vector_norm
    return table
