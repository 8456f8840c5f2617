"""trnc decomposition rules for normalisation and norms (see
docs/decompositions.md, "Reductions, softmax, normalisation, dropout and
losses").

The compiler lowers reductions (sum/mean/amax/amin/prod/var_mean) and a fused
(log_)softmax itself. Normalisation layers are not in the core-ATen
decomposition table (``native_layer_norm`` etc. are core ops), so these rules
take PyTorch's own decompositions for them: each becomes ``var_mean`` plus
elementwise ops (add, rsqrt, sub, mul), which lower, instead of one opaque
op. Layer norm and batch norm's training/eval forms are the exception: kept
whole, the graph importer builds those same ops (cheaper than tracing them). Batch norm's running-stat update comes back from AOTAutograd as extra
graph outputs (the input mutation is applied by the runtime wrapper).

``var_mean`` (what every norm decomposition computes its statistics with)
is the corrected two-pass algorithm (Chan, Golub and LeVeque, "Algorithms
for computing the sample variance", 1983): the first pass's mean ``m``
is refined by the mean of the centred values, ``m + sum(x - m) / N``, and
the variance subtracts that sum's square, ``(sum((x - m)^2) - sum(x - m)^2 / N)
/ (N - correction)``. With a mean large against the spread (batch norm after
a ReLU, images with an offset) the plain fp32 mean is ~1 ulp off; the
correction makes it ~0.5 ulp, as eager's double-accumulated Welford, at the
cost of one more sum over the centred values the second pass computes anyway.

``_softmax`` / ``_log_softmax`` stay the compiler's fused trn.softmax while a
row fits one SBUF tile; longer rows (a causal-LM loss over a 150k vocabulary:
got_ocr2, moss_transcribe_diarize) become amax, sub, exp, sum (log), whose
reductions chunk the free axis.
"""

from __future__ import annotations

import math

import torch
from torch._decomp import decomposition_table as _torch_table

aten = torch.ops.aten

# Normalisation ops whose PyTorch decomposition is used as is (group norm has
# its own rule in decomp_indices: PyTorch's uses as_strided).
_FROM_TORCH = (
    aten.native_batch_norm.default,
    aten._native_batch_norm_legit.default,
    aten._native_batch_norm_legit.no_stats,
)
# _native_batch_norm_legit_functional (training), _no_training (eval) and
# native_batch_norm_backward are not decomposed (decompositions.KEPT_OPERATORS):
# the graph importer expands them into the same var_mean and elementwise ops
# (compiler/lib/Import/BatchNormImporters.cpp), which is much cheaper than
# tracing ~30 ATen nodes per batch norm under AOTAutograd. So are
# native_layer_norm and its backward (compiler/lib/Import/LayerNormImporters.cpp).


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


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    if not x.is_floating_point() or x.numel() == 0:
        return NotImplemented
    dims = list(range(x.dim())) if dim is None or (isinstance(dim, (list, tuple)) and not dim) else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [d % max(x.dim(), 1) for d in dims] if x.dim() else []
    n = math.prod(x.shape[d] for d in dims) if dims else 1
    correction = 1 if correction is None else correction
    m = aten.mean.dim(x, dims, True)
    centred = aten.sub.Tensor(x, m)
    cs = aten.sum.dim_IntList(centred, dims, True)
    mean = aten.add.Tensor(m, aten.mul.Tensor(cs, 1.0 / n))
    ss = aten.sum.dim_IntList(aten.mul.Tensor(centred, centred), dims, True)
    ss = aten.sub.Tensor(ss, aten.mul.Tensor(aten.mul.Tensor(cs, cs), 1.0 / n))
    denom = n - correction
    var = aten.mul.Tensor(ss, 1.0 / denom if denom > 0 else math.inf)
    if not keepdim:
        var, mean = aten.squeeze.dims(var, dims), aten.squeeze.dims(mean, dims)
    return var, mean


# The fused softmax keeps a whole row on chip: three float32 row tiles in half
# of an SBUF partition, 8192 elements on trn1's 192 KiB (more on trn2/trn3;
# passes/Tile/LowerSoftmax.cpp maxSoftmaxRow, HARDWARE.md SBUF).
_FUSED_SOFTMAX_MAX_ROW = 8192


def _long_row_softmax(log: bool):
    def rule(x, dim, half_to_float):
        if x.dim() == 0 or x.shape[dim] <= _FUSED_SOFTMAX_MAX_ROW:
            return NotImplemented  # the fused trn.softmax
        out_dtype = torch.float32 if half_to_float else x.dtype
        xf = x if x.dtype == torch.float32 else aten._to_copy.default(x, dtype=torch.float32)
        shifted = aten.sub.Tensor(xf, aten.amax.default(xf, [dim], True))
        e = aten.exp.default(shifted)
        total = aten.sum.dim_IntList(e, [dim], True)
        y = aten.sub.Tensor(shifted, aten.log.default(total)) if log else aten.div.Tensor(e, total)
        return y if y.dtype == out_dtype else aten._to_copy.default(y, dtype=out_dtype)

    return rule


def rules() -> dict:
    table = {op: _torch_table[op] for op in _FROM_TORCH if op in _torch_table}
    table[aten.linalg_vector_norm.default] = _vector_norm
    table[aten.var_mean.correction] = _var_mean
    table[aten._softmax.default] = _long_row_softmax(log=False)
    table[aten._log_softmax.default] = _long_row_softmax(log=True)
    return table
