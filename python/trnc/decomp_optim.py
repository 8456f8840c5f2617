"""trnc decomposition rules for compiled optimizer steps (see
docs/decompositions.md, "Optimizers and training loops").

``torch.compile(optimizer.step)`` graphs contain three things the operator
tables do not: the ``_foreach_*`` family (``foreach=True`` optimizers and
``clip_grad_norm_(foreach=True)``), ``aten.copy`` (functionalized ``copy_``,
e.g. Dynamo's rewrite of ``addcmul_``/``addcdiv_``/``add_(alpha=tensor)``)
and ``prims.fma`` (the same rewrite's fused multiply-add). Each ``_foreach_X``
becomes one ``X`` per list element (the compiler fuses nothing across
tensors, so a per-tensor op loses nothing); ``copy`` becomes a cast and/or
broadcast of the source; ``fma(a, b, c)`` becomes ``a * b + c`` (two
roundings instead of one: within 1 ulp of eager's addcmul, which is not fused
either on CPU).
"""

from __future__ import annotations

import functools
from typing import Callable

import torch

aten = torch.ops.aten

# Element ops whose name differs from the foreach op's, keyed by (name, overload).
_SPECIAL: dict[tuple[str, str], Callable] = {
    ("maximum", "Scalar"): lambda x, s: aten.clamp_min.default(x, s),
    ("maximum", "ScalarList"): lambda x, s: aten.clamp_min.default(x, s),
    ("minimum", "Scalar"): lambda x, s: aten.clamp_max.default(x, s),
    ("minimum", "ScalarList"): lambda x, s: aten.clamp_max.default(x, s),
    ("max", "default"): lambda x: aten.amax.default(x, []),
    ("zero", "default"): lambda x: aten.zeros_like.default(x),
    ("clone", "default"): lambda x, memory_format=None: aten.clone.default(x),
}


def _norm(x, ord=2, dtype=None):
    return aten.linalg_vector_norm.default(x, ord, dtype=dtype)


def _addc(op: Callable) -> Callable:
    """addcmul/addcdiv; ``value`` may be the 0-d slice of a ``scalars`` tensor."""

    def elem(x, t1, t2, value=1):
        if isinstance(value, torch.Tensor):
            return aten.add.Tensor(x, aten.mul.Tensor(op(t1, t2), value))
        return (aten.addcmul if op is aten.mul.Tensor else aten.addcdiv).default(x, t1, t2, value=value)

    return elem


_BY_NAME: dict[str, Callable] = {
    "norm": _norm,
    "addcmul": _addc(aten.mul.Tensor),
    "addcdiv": _addc(aten.div.Tensor),
}


def _element_op(name: str, overload: str) -> Callable:
    if (name, overload) in _SPECIAL:
        return _SPECIAL[(name, overload)]
    if name in _BY_NAME:
        return _BY_NAME[name]
    return getattr(aten, name)  # the packet picks the overload from the arguments


def _foreach_rule(op: torch._ops.OpOverload, elem: Callable) -> Callable:
    """One element op per list position; non-list arguments are shared."""
    schema = op._schema
    listed = [isinstance(a.type, torch.ListType) for a in schema.arguments]
    kwarg_only = [a.kwarg_only for a in schema.arguments]
    names = [a.name for a in schema.arguments]
    # A ``scalars`` tensor (addcmul/addcdiv .Tensor overloads) holds one value per element.
    per_element_tensor = [n == "scalars" and not l for n, l in zip(names, listed)]

    def rule(*args, **kwargs):
        bound = list(args) + [kwargs[n] if n in kwargs else a.default_value
                              for n, a in zip(names[len(args):], schema.arguments[len(args):])]
        count = next(len(v) for v, l in zip(bound, listed) if l)
        results = []
        for i in range(count):
            positional, keywords = [], {}
            for v, name, l, kw, pet in zip(bound, names, listed, kwarg_only, per_element_tensor):
                v = v[i] if l else (aten.select.int(v, 0, i) if pet else v)
                if kw:
                    keywords[name] = v
                else:
                    positional.append(v)
            results.append(elem(*positional, **keywords))
        return results

    return rule


def _foreach_ops() -> list[torch._ops.OpOverload]:
    names = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names()
             if n.startswith("aten::_foreach_")}
    ops = []
    for name in sorted(names):
        if name.endswith("_") or name[len("_foreach_"):] in ("mm", "powsum"):
            continue  # in-place variants are functionalized first; mm/powsum have no element op
        packet = getattr(aten, name)
        for overload in packet.overloads():
            op = getattr(packet, overload)
            if not any(a.is_out for a in op._schema.arguments):
                ops.append(op)
    return ops


def _copy(dst, src, non_blocking=False):
    """Functional ``copy``: src cast to dst's dtype and broadcast to its shape.
    The result is a fresh value in a functional graph, so src itself will do."""
    out = src
    if out.dtype != dst.dtype:
        out = aten._to_copy.default(out, dtype=dst.dtype)
    if tuple(out.shape) != tuple(dst.shape):
        out = aten.clone.default(aten.expand.default(out, list(dst.shape)))
    return out


def _fma(a, b, c):
    return aten.add.Tensor(aten.mul.Tensor(a, b), c)


@functools.lru_cache(maxsize=None)
def rules() -> dict:
    table = {}
    for op in _foreach_ops():
        name = op.name().split("::")[1].split(".")[0][len("_foreach_"):]
        table[op] = _foreach_rule(op, _element_op(name, op._overloadname))
    table[aten.copy.default] = _copy
    try:  # prims.fma is registered by inductor_prims, which Dynamo imports
        import torch._inductor.inductor_prims  # noqa: F401

        table[torch.ops.prims.fma.default] = _fma
    except (ImportError, AttributeError):
        pass
    return table
