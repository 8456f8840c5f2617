"""Complex tensors as real (re, im) pairs: an FX pass over each AOTAutograd graph.

The engines have no complex arithmetic. Models that write rotary embeddings in
complex form (Llama 4, DeepSeek-V2: ``torch.polar``, ``view_as_complex``, a
complex multiply, ``view_as_real``) are still plain real arithmetic underneath,
so before export every complex value becomes a real tensor with a trailing
dimension of 2 holding (re, im) -- exactly ``torch.view_as_real``'s layout --
and the ATen ops on it are rewritten into real ops the importer lowers
(``_HANDLERS``). ``view_as_complex`` / ``view_as_real`` become the identity.

Complex graph inputs and outputs (AOTAutograd saves ``freqs_cis`` for the
backward) keep their complex type for the caller: ``with_complex_pairs`` views
them as pairs on the way in and as complex on the way out (free views).

A complex op without a rule fails with an ``UnsupportedOperatorError`` naming
the op and the user's source line; nothing falls back to the host.
"""

from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch
import torch.fx
from torch.fx.operator_schemas import normalize_function

from .errors import SourceLocation, UnsupportedOperator, UnsupportedOperatorError

__all__ = ["ComplexBoundary", "rewrite_complex", "with_complex_pairs", "SUPPORTED"]

aten = torch.ops.aten
_REAL_OF = {torch.complex32: torch.float16, torch.complex64: torch.float32, torch.complex128: torch.float64}


@dataclass(frozen=True)
class ComplexBoundary:
    """Which graph inputs / outputs were complex (now pairs inside the program)."""

    inputs: frozenset[int]
    outputs: frozenset[int]


def _is_complex_val(val: Any) -> bool:
    return isinstance(val, torch.Tensor) and val.is_complex()


def _touches_complex(node: torch.fx.Node) -> bool:
    if _is_complex_val(node.meta.get("val")):
        return True
    found = []
    torch.fx.map_arg((node.args, node.kwargs), lambda a: found.append(_is_complex_val(a.meta.get("val"))))
    return any(found)


def _dim(d: int, rank: int) -> int:
    """A dim of a rank-``rank`` complex tensor, as a non-negative dim of its pair."""
    return d + rank if d < 0 else d


class _Rewriter:
    """Builds the pair graph; ``env`` maps old nodes to new ones, ``pairs`` holds
    the new nodes that stand for complex values."""

    def __init__(self, graph: torch.fx.Graph, fake_mode: Any) -> None:
        self.graph = graph
        self.fake_mode = fake_mode
        self.env: dict[torch.fx.Node, torch.fx.Node] = {}
        self.pairs: set[torch.fx.Node] = set()
        self.current: Optional[torch.fx.Node] = None  # the old node being rewritten

    # --- emission -----------------------------------------------------------
    def op(self, target: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        """A new call_function node with its fake ``val`` and the user's stack trace."""
        node = self.graph.call_function(target, args, kwargs)
        fake_args, fake_kwargs = torch.fx.map_arg((args, kwargs), lambda n: n.meta["val"])
        ctx = self.fake_mode if self.fake_mode is not None else contextlib.nullcontext()
        with ctx:
            node.meta["val"] = target(*fake_args, **fake_kwargs)
        if self.current is not None and self.current.meta.get("stack_trace"):
            node.meta["stack_trace"] = self.current.meta["stack_trace"]
        return node

    def val(self, node: torch.fx.Node) -> Any:
        return node.meta["val"]

    # --- operands -------------------------------------------------------------
    def arg(self, value: Any) -> Any:
        return torch.fx.map_arg(value, lambda n: self.env[n])

    def is_pair(self, value: Any) -> bool:
        return isinstance(value, torch.fx.Node) and value in self.pairs

    def parts(self, value: Any) -> tuple[Any, Any]:
        """(re, im) of an operand: a node, a Python number, or None for zero."""
        if self.is_pair(value):
            return self.op(aten.select.int, value, -1, 0), self.op(aten.select.int, value, -1, 1)
        if isinstance(value, complex):
            return (value.real or None), (value.imag or None)
        if isinstance(value, numbers.Number) and value == 0:
            return None, None
        return value, None

    # --- real arithmetic on parts (None = 0, numbers folded) ------------------
    def mul(self, a: Any, b: Any) -> Any:
        if a is None or b is None:
            return None
        if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
            return a * b
        if isinstance(a, numbers.Number):
            a, b = b, a
        return a if isinstance(b, numbers.Number) and b == 1 else self.op(aten.mul.Tensor, a, b)

    def add(self, a: Any, b: Any) -> Any:
        if a is None or b is None:
            return b if a is None else a
        if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
            return a + b
        if isinstance(a, numbers.Number):
            a, b = b, a
        return self.op(aten.add.Tensor, a, b)

    def neg(self, a: Any) -> Any:
        if a is None or isinstance(a, numbers.Number):
            return None if a is None else -a
        return self.op(aten.neg.default, a)

    def sub(self, a: Any, b: Any) -> Any:
        if b is None or a is None:
            return a if b is None else self.neg(b)
        if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
            return a - b
        if isinstance(a, numbers.Number):
            return self.op(aten.rsub.Scalar, b, a)
        return self.op(aten.sub.Tensor, a, b)

    def div(self, a: Any, b: Any) -> Any:
        if a is None:
            return None
        if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
            return a / b
        if isinstance(a, numbers.Number):
            return self.mul(a, self.op(aten.reciprocal.default, b))
        return self.op(aten.div.Tensor, a, b)

    def full(self, shape: list[int], value: float, dtype: torch.dtype) -> torch.fx.Node:
        return self.op(
            aten.full.default, list(shape), value, dtype=dtype, layout=torch.strided,
            device=torch.device("cpu"), pin_memory=False,
        )

    def pack(self, re: Any, im: Any) -> torch.fx.Node:
        """The pair of (re, im), shaped and typed like the current (complex) node."""
        val = self.current.meta["val"]
        shape, dtype = list(val.shape), _REAL_OF[val.dtype]
        halves = []
        for part in (re, im):
            if part is None or isinstance(part, numbers.Number):
                part = self.full(shape, float(part or 0.0), dtype)
            else:
                if self.val(part).dtype != dtype:
                    part = self.op(aten._to_copy.default, part, dtype=dtype)
                if list(self.val(part).shape) != shape:
                    part = self.op(aten.expand.default, part, shape)
            halves.append(self.op(aten.unsqueeze.default, part, -1))
        return self.op(aten.cat.default, halves, -1)

    def real_operand(self, value: Any, dtype: torch.dtype) -> Any:
        """A real tensor operand, typed like the pairs and with a trailing unit
        dim, so that it broadcasts against a pair as it did against the complex."""
        if isinstance(value, torch.fx.Node):
            if self.val(value).dtype != dtype:
                value = self.op(aten._to_copy.default, value, dtype=dtype)
            return self.op(aten.unsqueeze.default, value, -1)
        return value


# --- handlers: (rewriter, normalized kwargs, old node) -> new node ---------------
Handler = Callable[[_Rewriter, dict, torch.fx.Node], torch.fx.Node]


def _rank(kw: dict) -> int:
    return kw["input"].meta["val"].dim() - 1  # the complex rank of a pair operand


def _identity(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return kw["input"]


def _same_op(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(node.target, kw["input"])


def _clone(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.clone.default, kw["input"])


def _conj(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    if isinstance(kw["input"], numbers.Number):  # autograd conjugates Python scalars too
        return kw["input"].conjugate()
    if not rw.is_pair(kw["input"]):
        return kw["input"]  # conj of a real tensor
    re, im = rw.parts(kw["input"])
    return rw.pack(re, rw.neg(im))


def _polar(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    r, theta = kw["abs"], kw["angle"]
    return rw.pack(rw.mul(r, rw.op(aten.cos.default, theta)), rw.mul(r, rw.op(aten.sin.default, theta)))


def _complex(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.pack(kw["real"], kw["imag"])


def _sizes(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    """view / reshape / _unsafe_view / expand: the sizes gain the trailing 2."""
    key = "size" if "size" in kw else "shape"
    return rw.op(node.target, kw["input"], [*kw[key], 2], **({"implicit": kw["implicit"]} if kw.get("implicit") else {}))


def _unsqueeze(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.unsqueeze.default, kw["input"], _dim(kw["dim"], _rank(kw) + 1))


def _squeeze(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    rank = _rank(kw)
    dims = kw.get("dim", None)
    if dims is None:
        dims = [d for d in range(rank) if rw.val(kw["input"]).shape[d] == 1]
    dims = [dims] if isinstance(dims, int) else dims
    return rw.op(aten.squeeze.dims, kw["input"], [_dim(d, rank) for d in dims])


def _permute(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    rank = _rank(kw)
    return rw.op(aten.permute.default, kw["input"], [*(_dim(d, rank) for d in kw["dims"]), rank])


def _transpose(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    rank = _rank(kw)
    if node.target == aten.t.default:
        return kw["input"] if rank < 2 else rw.op(aten.transpose.int, kw["input"], 0, 1)
    return rw.op(aten.transpose.int, kw["input"], _dim(kw["dim0"], rank), _dim(kw["dim1"], rank))


def _slice(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.slice.Tensor, kw["input"], _dim(kw["dim"], _rank(kw)), kw["start"], kw["end"], kw["step"])


def _select(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.select.int, kw["input"], _dim(kw["dim"], _rank(kw)), kw["index"])


def _flip(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.flip.default, kw["input"], [_dim(d, _rank(kw)) for d in kw["dims"]])


def _as_pairs(rw: _Rewriter, values: list) -> list:
    """Every tensor of a list as a pair (a real one gets a zero imaginary part)."""
    out = []
    for v in values:
        if rw.is_pair(v):
            out.append(v)
        else:
            zero = rw.op(aten.zeros_like.default, v)
            out.append(rw.op(aten.cat.default, [rw.op(aten.unsqueeze.default, v, -1),
                                                rw.op(aten.unsqueeze.default, zero, -1)], -1))
    return out


def _cat(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    tensors = _as_pairs(rw, kw["tensors"])
    rank = node.meta["val"].dim()
    return rw.op(aten.cat.default, tensors, _dim(kw["dim"], rank))


def _stack(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    rank = node.meta["val"].dim()
    dim = _dim(kw["dim"], rank)
    return rw.op(aten.cat.default, [rw.op(aten.unsqueeze.default, t, dim) for t in _as_pairs(rw, kw["tensors"])], dim)


def _reduce(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    """sum / mean over complex dims: the pair's trailing dim is never reduced."""
    rank = _rank(kw)
    dims = kw.get("dim")
    dims = list(range(rank)) if not dims else ([dims] if isinstance(dims, int) else dims)
    target = aten.mean.dim if node.target in (aten.mean.dim, aten.mean.default) else aten.sum.dim_IntList
    return rw.op(target, kw["input"], [_dim(d, rank) for d in dims], kw.get("keepdim", False))


def _binary(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    """add / sub / mul / div with at least one complex operand (tensor or scalar)."""
    a, b = kw["input"], kw["other"]
    alpha = kw.get("alpha", 1)
    name = node.target.overloadpacket.__name__
    out_dtype = _REAL_OF[node.meta["val"].dtype]
    simple = not isinstance(alpha, complex) and not isinstance(b, complex) and not isinstance(a, complex)
    if rw.is_pair(a) and rw.is_pair(b) and name in ("add", "sub") and simple:
        return rw.op(getattr(aten, name).Tensor, a, b, **({"alpha": alpha} if alpha != 1 else {}))
    if rw.is_pair(a) and not rw.is_pair(b) and name in ("mul", "div") and simple:
        return rw.op(getattr(aten, name).Tensor, a, rw.real_operand(b, out_dtype))
    if rw.is_pair(b) and not rw.is_pair(a) and name == "mul" and simple:
        return rw.op(aten.mul.Tensor, b, rw.real_operand(a, out_dtype))
    (ar, ai), (br, bi) = rw.parts(a), rw.parts(b)
    if name in ("add", "sub"):
        if alpha != 1:
            (br, bi) = _cmul(rw, br, bi, *rw.parts(alpha))
        combine = rw.add if name == "add" else rw.sub
        return rw.pack(combine(ar, br), combine(ai, bi))
    if name == "mul":
        return rw.pack(*_cmul(rw, ar, ai, br, bi))
    # div: a / b = a * conj(b) / |b|^2
    if bi is None:
        return rw.pack(rw.div(ar, br), rw.div(ai, br))
    den = rw.add(rw.mul(br, br), rw.mul(bi, bi))
    re, im = _cmul(rw, ar, ai, br, rw.neg(bi))
    return rw.pack(rw.div(re, den), rw.div(im, den))


def _cmul(rw: _Rewriter, ar: Any, ai: Any, br: Any, bi: Any) -> tuple[Any, Any]:
    return rw.sub(rw.mul(ar, br), rw.mul(ai, bi)), rw.add(rw.mul(ar, bi), rw.mul(ai, br))


def _neg(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    return rw.op(aten.neg.default, kw["input"])


def _abs(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    re, im = rw.parts(kw["input"])
    return rw.op(aten.sqrt.default, rw.add(rw.mul(re, re), rw.mul(im, im)))


def _where(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    cond = rw.op(aten.unsqueeze.default, kw["condition"], -1)
    a, b = (v if rw.is_pair(v) else _as_pairs(rw, [v])[0] for v in (kw["input"], kw["other"]))
    return rw.op(aten.where.self, cond, a, b)


def _to_copy(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    src, dtype = kw["input"], node.meta["val"].dtype
    if rw.is_pair(src) and dtype.is_complex:
        return rw.op(aten._to_copy.default, src, dtype=_REAL_OF[dtype])
    if rw.is_pair(src):  # complex -> real keeps the real part (PyTorch warns)
        return rw.op(aten._to_copy.default, rw.op(aten.select.int, src, -1, 0), dtype=dtype)
    return rw.pack(src, None)


def _creation(rw: _Rewriter, kw: dict, node: torch.fx.Node) -> torch.fx.Node:
    """full / scalar_tensor / zeros / ones (and their _like forms) of complex dtype."""
    name = node.target.overloadpacket.__name__
    value = {"zeros": 0.0, "zeros_like": 0.0, "ones": 1.0, "ones_like": 1.0}.get(name)
    if value is None:
        value = kw.get("fill_value", kw.get("s"))
    value = complex(value)
    return rw.pack(value.real, value.imag)


_VIEWS_SIZES = (aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.expand.default)
_HANDLERS: dict[Any, Handler] = {
    aten.view_as_complex.default: _identity,
    aten.view_as_real.default: _identity,
    aten.polar.default: _polar,
    aten.complex.default: _complex,
    aten._conj.default: _conj,
    aten.conj_physical.default: _conj,
    aten.conj.default: _conj,
    aten.resolve_conj.default: _identity,
    aten.clone.default: _clone,
    aten.alias.default: _same_op,
    aten.detach.default: _same_op,
    aten.lift_fresh_copy.default: _same_op,
    aten.neg.default: _neg,
    aten.abs.default: _abs,
    aten.where.self: _where,
    aten._to_copy.default: _to_copy,
    aten.unsqueeze.default: _unsqueeze,
    aten.squeeze.default: _squeeze,
    aten.squeeze.dim: _squeeze,
    aten.squeeze.dims: _squeeze,
    aten.permute.default: _permute,
    aten.transpose.int: _transpose,
    aten.t.default: _transpose,
    aten.slice.Tensor: _slice,
    aten.select.int: _select,
    aten.flip.default: _flip,
    aten.cat.default: _cat,
    aten.stack.default: _stack,
    aten.sum.dim_IntList: _reduce,
    aten.sum.default: _reduce,
    aten.mean.dim: _reduce,
    aten.mean.default: _reduce,
    **{t: _sizes for t in _VIEWS_SIZES},
    **{getattr(getattr(aten, n), o): _binary for n in ("add", "sub", "mul", "div") for o in ("Tensor", "Scalar")},
    **{t: _creation for t in (aten.full.default, aten.full_like.default, aten.scalar_tensor.default,
                              aten.zeros.default, aten.ones.default, aten.zeros_like.default, aten.ones_like.default)},
}
SUPPORTED = frozenset(str(t) for t in _HANDLERS)


def _location(node: torch.fx.Node) -> SourceLocation:
    from .graph_export import _source_location

    loc = _source_location(node.meta.get("stack_trace")) or {}
    return SourceLocation(loc.get("file", ""), int(loc.get("line", 0)), loc.get("code", ""), node.name)


def _refuse(nodes: list[torch.fx.Node], graph_name: str) -> UnsupportedOperatorError:
    grouped: dict[str, list[torch.fx.Node]] = {}
    for n in nodes:
        grouped.setdefault(str(n.target), []).append(n)
    reason = ("on complex tensors: trnc computes complex values as real (re, im) pairs, "
              "and this operator has no pair rule (python/trnc/complex_pairs.py)")
    ops = [UnsupportedOperator(t, len(ns), [_location(n) for n in ns], reason) for t, ns in grouped.items()]
    return UnsupportedOperatorError(ops, graph_name)


def rewrite_complex(gm: torch.fx.GraphModule, graph_name: str = "") -> Optional[ComplexBoundary]:
    """Rewrite ``gm`` in place so that no value is complex; None if none was.
    Raises UnsupportedOperatorError for complex ops without a rule."""
    if not any(_touches_complex(n) for n in gm.graph.nodes if n.op != "output"):
        return None
    unknown = [n for n in gm.graph.nodes if n.op == "call_function" and _touches_complex(n)
               and n.target not in _HANDLERS]
    if unknown:
        raise _refuse(unknown, graph_name)
    vals = [n.meta.get("val") for n in gm.graph.nodes]
    fake_mode = torch._guards.detect_fake_mode([v for v in vals if isinstance(v, torch.Tensor)])
    rw = _Rewriter(torch.fx.Graph(), fake_mode)
    complex_inputs: list[int] = []
    complex_outputs: list[int] = []
    placeholder_index = 0
    for node in gm.graph.nodes:
        rw.current = node
        if node.op == "placeholder":
            new = rw.graph.placeholder(node.name)
            new.meta.update(node.meta)
            if _is_complex_val(node.meta.get("val")):
                with fake_mode if fake_mode is not None else contextlib.nullcontext():
                    new.meta["val"] = torch.view_as_real(node.meta["val"].resolve_conj())
                rw.pairs.add(new)
                complex_inputs.append(placeholder_index)
            placeholder_index += 1
        elif node.op == "output":
            results = node.args[0]
            flat = results if isinstance(results, (list, tuple)) else [results]
            complex_outputs = [i for i, r in enumerate(flat)
                               if isinstance(r, torch.fx.Node) and _is_complex_val(r.meta.get("val"))]
            new = rw.graph.output(rw.arg(results))
        elif node.op == "call_function" and _touches_complex(node):
            kw = normalize_function(node.target, rw.arg(node.args), rw.arg(node.kwargs),
                                    normalize_to_only_use_kwargs=True).kwargs
            new = _HANDLERS[node.target](rw, kw, node)
            if _is_complex_val(node.meta.get("val")) and isinstance(new, torch.fx.Node):
                rw.pairs.add(new)
        else:
            new = rw.graph.node_copy(node, lambda n: rw.env[n])
        rw.env[node] = new
    gm.graph = rw.graph
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return ComplexBoundary(frozenset(complex_inputs), frozenset(complex_outputs))


def _to_complex(t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        return t
    if t.stride(-1) != 1 or t.storage_offset() % 2 or any(s % 2 for s in t.stride()[:-1]):
        t = t.contiguous()
    return torch.view_as_complex(t)


def with_complex_pairs(compiled: Callable, boundary: Optional[ComplexBoundary]) -> Callable:
    """A boxed callable taking and returning complex tensors where the graph did,
    around ``compiled``, which takes and returns their (re, im) pairs."""
    if boundary is None or not (boundary.inputs or boundary.outputs):
        return compiled

    def call(args: list) -> Any:
        for i in boundary.inputs:
            if isinstance(args[i], torch.Tensor) and args[i].is_complex():
                args[i] = torch.view_as_real(args[i].resolve_conj())
        result = list(compiled(args))
        for j in boundary.outputs:
            result[j] = _to_complex(result[j])
        return result

    call._boxed_call = True  # type: ignore[attr-defined]
    call.__name__ = getattr(compiled, "__name__", "trnc_compiled")
    call.compiled = getattr(compiled, "compiled", compiled)  # type: ignore[attr-defined]
    return call
