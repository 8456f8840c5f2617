"""The decomposition table AOTAutograd applies before a graph reaches trnc.

Policy (see docs/decompositions.md): start from PyTorch's core-ATen table,
so that composite operators reach the compiler as the small core-ATen set the
compiler grows into, but *keep* the operators the compiler lowers directly
and better than their decomposition would be. For example ``aten.t`` stays
``aten.t`` (the core table rewrites it to ``permute``, losing nothing but
readability) and ``aten.threshold_backward`` stays one op (the core table
turns it into ``le`` + ``scalar_tensor`` + ``where``, three ops the first
compiler slice does not have).
"""

from __future__ import annotations

import functools
from typing import Callable

import torch
from torch._decomp import core_aten_decompositions

from trnc import decomp_creation
from trnc import decomp_data_movement
from trnc import decomp_diagonal
from trnc import decomp_indices
from trnc import decomp_integer
from trnc import decomp_indexing
from trnc import decomp_linalg
from trnc import decomp_linspace
from trnc import decomp_matmul_conv
from trnc import decomp_moe
from trnc import decomp_optim
from trnc import decomp_pooling
from trnc import decomp_random
from trnc import decomp_reductions
from trnc import decomp_rnn
from trnc import decomp_resample
from trnc import decomp_sampling
from trnc import decomp_strided
from trnc import decomp_transformer
from trnc import decomp_windows

__all__ = ["decomposition_table", "KEPT_OPERATORS", "DuplicateRuleError", "merge_rules"]

aten = torch.ops.aten

# Operators the compiler lowers itself: never decomposed, even though the core
# table has a rule for them. Every overload of an OpOverloadPacket is kept.
KEPT_OPERATORS = (
    aten.t,
    aten.transpose.int,
    aten.threshold_backward,
    aten.detach,
    aten._unsafe_view,
    aten.sum.default,
    aten.tril,  # one GpSimd affine_select per tile, not arange + le + where
    aten.triu,
    aten.silu.default,  # one Scalar-engine activation, not x * sigmoid(x)
    aten.mish.default,  # one activation, not x * tanh(softplus(x))
    # grad * f'(x), f' one activation (gelu_dx, silu_dx), not 7-10 elementwise ops.
    aten.gelu_backward.default,
    aten.silu_backward.default,
    # Batch norm: one node each, expanded by the importer (BatchNormImporters.cpp);
    # tracing the decompositions was half of a batch-norm network's Python compile.
    aten._native_batch_norm_legit_functional.default,
    aten._native_batch_norm_legit_no_training.default,
    aten.native_batch_norm_backward.default,
    # Layer norm likewise (LayerNormImporters.cpp): ~33 traced nodes per layer
    # norm and direction were the largest of trnc's own rules in a transformer.
    aten.native_layer_norm.default,
    aten.native_layer_norm_backward.default,
)


def _overloads(op) -> list:
    if isinstance(op, torch._ops.OpOverloadPacket):
        return [getattr(op, name) for name in op.overloads()]
    return [op]


# trnc's own rules: rewrite small ops into ones the compiler already lowers,
# so that the first compiler slice stays small. Each runs under AOTAutograd's
# fake-tensor tracing, so only the ops it calls end up in the graph.
def _neg(x):
    return aten.mul.Tensor(x, -1)


def _scalar_to_tensor_overload(op):
    def rule(x, other, alpha=None):
        if alpha is None:
            return op(x, other)
        return op(x, other, alpha=alpha)

    return rule


def _unsqueeze(x, dim):
    dim = dim % (x.dim() + 1)
    shape = list(x.shape)
    shape.insert(dim, 1)
    return aten.view.default(x, shape)


def _squeeze(x, dims=None):
    if dims is None:
        dims = range(x.dim())
    elif isinstance(dims, int):
        dims = [dims]
    if x.dim() == 0:  # squeeze of a 0-d tensor (dim 0 or -1) is a view of it
        return aten.view.default(x, [])
    drop = {d % x.dim() for d in dims if x.shape[d] == 1}
    return aten.view.default(x, [s for i, s in enumerate(x.shape) if i not in drop])


def _full_like(x, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return aten.full.default(
        list(x.shape), fill_value, dtype=dtype or x.dtype, layout=layout or x.layout,
        device=device or x.device, pin_memory=False,
    )


def _empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    # empty's contents are unspecified: zeros are one valid choice, and a fill is one
    # memset-like instruction per tile where the importer has no "uninitialised" tensor.
    return aten.full.default(list(size), 0, dtype=dtype or torch.get_default_dtype(),
                             layout=layout, device=device, pin_memory=False)


def _hardtanh(x, min_val=-1.0, max_val=1.0):
    # ReLU6 and friends: one clamp (hardtanh_backward keeps the core table's where).
    # Integer inputs clamp to integer bounds and stay integers (torch._refs).
    if not x.is_floating_point():
        min_val, max_val = int(min_val), int(max_val)
    return aten.clamp.default(x, min_val, max_val)


def _empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _empty(size, dtype=dtype, layout=layout, device=device)


_TRNC_RULES = {
    aten.empty.memory_format: _empty,  # new_empty/empty_like then filled (HF MLA keys, MoE)
    aten.empty_permuted.default: _empty_permuted,
    aten.neg.default: _neg,
    aten.add.Scalar: _scalar_to_tensor_overload(aten.add.Tensor),
    aten.sub.Scalar: _scalar_to_tensor_overload(aten.sub.Tensor),
    aten.mul.Scalar: _scalar_to_tensor_overload(aten.mul.Tensor),
    aten.unsqueeze.default: _unsqueeze,
    aten.squeeze.default: _squeeze,
    aten.squeeze.dim: _squeeze,
    aten.squeeze.dims: _squeeze,
    aten.full_like.default: _full_like,
    aten.hardtanh.default: _hardtanh,
}

# Every module of trnc rules, merged by merge_rules (one owner per operator).
_RULE_MODULES = (
    decomp_reductions, decomp_data_movement, decomp_diagonal, decomp_indexing, decomp_matmul_conv,
    decomp_indices, decomp_optim, decomp_random, decomp_creation, decomp_windows, decomp_integer,
    decomp_linalg, decomp_linspace, decomp_pooling, decomp_resample, decomp_sampling, decomp_strided,
    decomp_transformer, decomp_rnn,
)


class DuplicateRuleError(RuntimeError):
    """Two trnc rule sources claim the same operator overload."""


def merge_rules(sources) -> dict:
    """{op: rule} from (source name, {op: rule}) pairs; an op claimed by two
    sources is refused (which one would win is an accident of their order)."""
    merged: dict = {}
    owner: dict = {}
    for name, rules in sources:
        for op, rule in rules.items():
            if op in merged:
                raise DuplicateRuleError(
                    f"decomposition rule for {op} is registered by both {owner[op]} and {name}: "
                    "keep exactly one")
            merged[op] = rule
            owner[op] = name
    return merged


def _sources() -> list:
    return [("decompositions._TRNC_RULES", _TRNC_RULES)] + [(m.__name__, m.rules()) for m in _RULE_MODULES]


@functools.lru_cache(maxsize=None)
def _trnc_rules() -> dict:
    return merge_rules(_sources())


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    table = dict(core_aten_decompositions())
    for op in KEPT_OPERATORS:
        for overload in _overloads(op):
            table.pop(overload, None)
    table.update(_trnc_rules())  # trnc's rules override the core table's
    return table


def decomposition_table() -> dict[torch._ops.OpOverload, Callable]:
    """A fresh copy of trnc's table (callers may extend it)."""
    table = dict(_table())
    # Per call: transformers' MoE ops exist once it is imported.
    table.update(merge_rules([("trnc rules", _trnc_rules()), (decomp_moe.__name__, decomp_moe.rules())]))
    return table
