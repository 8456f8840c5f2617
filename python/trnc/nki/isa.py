"""trnc.nki.isa: the ``nki.isa`` (``nisa``) instructions, one nisa instruction each.

Every instruction takes its destination first (NKI 0.6: ``nisa.nc_matmul(dst,
stationary, moving)``, ``nisa.dma_copy(dst, src)``); the older form that returns
the result (``acc += nisa.nc_matmul(a, b)``) is accepted too. ``op`` arguments are
``nl`` functions or their NumPy equivalents (``nl.exp``, ``np.add``, ...).
Instructions trnc's ISA lacks raise :class:`NkiError` naming the API and the
kernel line.
"""

from __future__ import annotations

from typing import Any, Optional

from . import _emit
from . import language as nl
from ._emit import Deferred, operand
from ._tracer import FLOAT32, IndexExpr, Predicate, View, check_dtype, fail


class engine:  # noqa: N801 (the NKI name)
    """Engines an instruction can name (nisa.engine / nisa.*_engine)."""

    tensor = "tensor"
    vector = "vector"
    scalar = "scalar"
    gpsimd = "gpsimd"
    unknown = None


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


def _op_name(op: Any, table: dict, kind: str) -> str:
    """The nisa name of an op given as an nl function, a NumPy ufunc or a string."""
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    aliases = {"true_divide": "divide", "max": "maximum", "min": "minimum", "amax": "maximum",
               "amin": "minimum", "sum": "add", "prod": "multiply", "identity": "copy", "bypass": "bypass",
               "negative": None}
    name = aliases.get(name, name)
    if name in table:
        return table[name]
    fail(f"{op!r} is not a {kind} trnc.nki supports (known: {', '.join(sorted(table))})")


_ALU = dict(nl._ALU, bypass="bypass")
_ACT = dict(nl._ACTIVATIONS, copy="copy")


def _dst_first(args: tuple, kwargs: dict, tensors_without_dst: int) -> tuple[Optional[View], tuple]:
    """(dst, remaining args): dst is the first positional tensor when one more tensor than the
    legacy form takes is given, or `dst=`."""
    if "dst" in kwargs:
        return kwargs.pop("dst"), args
    tensors = 0
    for a in args:
        if isinstance(a, (View, Deferred)):
            tensors += 1
        else:
            break
    if tensors > tensors_without_dst:
        return operand(args[0], "dst"), args[1:]
    return None, args


def _dst_op_data(args: tuple, kwargs: dict) -> tuple:
    """(dst or None, op, data, other positional args) of `f([dst,] op, data, ...)`."""
    dst = kwargs.pop("dst", None)
    rest = list(args)
    if dst is None and rest and isinstance(rest[0], (View, Deferred)):
        dst, rest = operand(rest[0], "dst"), rest[1:]
    op = kwargs.pop("op", None) or rest.pop(0)
    data = kwargs.pop("data", None) or rest.pop(0)
    return dst, op, data, rest


def _finish(dst: Optional[View], shape: tuple, dtype: Any, space: str, fill: Any, what: str,
            accumulate: Any = None) -> Optional[Deferred]:
    """Emit into `dst` now, or return the value (legacy form)."""
    if dst is not None:
        fill(dst)
        return None
    return Deferred(shape, check_dtype(dtype), space, fill, what, accumulate=accumulate)


def _no_extras(kwargs: dict, api: str, ignored: tuple = ("name", "mask")) -> None:
    if kwargs.get("mask") is not None:
        fail(f"nisa.{api}: mask= is not supported")
    extra = set(kwargs) - set(ignored)
    if extra:
        fail(f"nisa.{api}: arguments {sorted(extra)} are not supported by trnc.nki")


def nc_matmul(*args: Any, accumulate: Optional[bool] = None, is_transpose: bool = False, **kwargs: Any) -> Any:
    """dst (+)= stationary.T @ moving on the Tensor Engine (PSUM, float32).

    ``accumulate=None`` accumulates into a PSUM tile that holds data and overwrites one
    never written (or zeros pending from nl.zeros)."""
    dst, rest = _dst_first(args, kwargs, 2)
    stationary = kwargs.pop("stationary", None) or (rest[0] if rest else None)
    moving = kwargs.pop("moving", None) or (rest[1] if len(rest) > 1 else None)
    for flag in ("is_stationary_onezero", "is_moving_onezero"):
        kwargs.pop(flag, None)  # performance hints: no effect on results
    if kwargs.pop("tile_position", ()) or kwargs.pop("tile_size", ()):
        fail("nisa.nc_matmul: Tensor Engine row/column tiling (tile_position) is not supported")
    perf = kwargs.pop("perf_mode", None)
    if perf not in (None, "none") and getattr(perf, "name", "none") != "none":
        fail("nisa.nc_matmul: perf_mode is not supported (NeuronCore-v3 FP8 double row)")
    _no_extras(kwargs, "nc_matmul")
    s, m = operand(stationary, "stationary"), operand(moving, "moving")
    if is_transpose:
        return nc_transpose(dst, s) if dst is not None else nc_transpose(s)
    shape = (s.free_elements(), m.free_elements())

    def fill(out: View) -> None:
        acc = accumulate
        if acc is None:
            acc = out.buffer.written or out.buffer.zero_pending
        _emit.emit_matmul(out, s, m, accumulate=bool(acc))

    return _finish(dst, shape, FLOAT32, nl.psum, fill, "nisa.nc_matmul",
                   accumulate=lambda out: _emit.emit_matmul(out, s, m, accumulate=True))


def nc_transpose(*args: Any, engine: Any = None, **kwargs: Any) -> Any:
    """[P, F] -> [F, P] on the Tensor Engine (the Vector engine's 32x32 transpose is not modelled)."""
    dst, rest = _dst_first(args, kwargs, 1)
    data = kwargs.pop("data", None) or rest[0]
    _no_extras(kwargs, "nc_transpose")
    if engine == "vector":
        fail("nisa.nc_transpose on the Vector engine is not supported (trnc transposes on the Tensor Engine)")
    v = operand(data, "nc_transpose data")
    return _finish(dst, (v.free_elements(), v.partition_count()), FLOAT32, nl.psum,
                   lambda out: _emit.emit_transpose(out, v), "nisa.nc_transpose")


def activation(*args: Any, bias: Any = None, scale: Any = 1.0, dtype: Any = None, **kwargs: Any) -> Any:
    """dst = op(data * scale + bias) on the Scalar engine; bias a [P, 1] tile, scale a number."""
    dst, op, data, rest = _dst_op_data(args, kwargs)
    if kwargs.get("reduce_op") is not None or kwargs.get("reduce_res") is not None:
        fail("nisa.activation: reduce_op/reduce_res (activation_reduce) is not supported by trnc's ISA; "
             "reduce with nisa.tensor_reduce")
    kwargs.pop("reduce_op", None), kwargs.pop("reduce_res", None), kwargs.pop("reduce_cmd", None)
    _no_extras(kwargs, "activation")
    func = _op_name(op, _ACT, "Scalar engine activation")
    v = operand(data, "activation data")
    b = operand(bias, "activation bias") if bias is not None and not nl._is_scalar(bias) else None
    bias_imm = float(bias) if bias is not None and b is None else 0.0
    if not nl._is_scalar(scale):
        fail("nisa.activation: a per-partition scale tile is not supported (scale must be a number)")
    return _finish(dst, v.shape, dtype or v.dtype, nl.sbuf,
                   lambda out: _emit.emit_activation(func, out, v, bias=b, scale=float(scale), bias_imm=bias_imm),
                   "nisa.activation")


def tensor_tensor(*args: Any, op: Any = None, engine: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
    """dst = data1 op data2 on the Vector (or GpSimd) engine."""
    dst, rest = _dst_first(args, kwargs, 2)
    rest = list(rest)
    a = kwargs.pop("data1", None) or rest.pop(0)
    b = kwargs.pop("data2", None) or rest.pop(0)
    op = op if op is not None else rest.pop(0)
    _no_extras(kwargs, "tensor_tensor")
    alu = _op_name(op, _ALU, "Vector engine ALU op")
    x, y = operand(a, "data1"), operand(b, "data2")
    eng = engine if engine in ("vector", "gpsimd") else "vector"
    return _finish(dst, x.shape, dtype or x.dtype, nl.sbuf,
                   lambda out: _emit.emit_tensor_tensor(alu, out, x, y, eng), "nisa.tensor_tensor")


def tensor_scalar(*args: Any, op0: Any = None, operand0: Any = None, reverse0: bool = False, op1: Any = None,
                  operand1: Any = None, reverse1: bool = False, engine: Any = None, dtype: Any = None,
                  **kwargs: Any) -> Any:
    """dst = (data op0 operand0) op1 operand1; each operand a number or a [P, 1] tile (one value
    per partition): one instruction either way, as on the hardware."""
    dst, rest = _dst_first(args, kwargs, 1)
    rest = list(rest)
    data = kwargs.pop("data", None) or rest.pop(0)
    if op0 is None:
        op0 = rest.pop(0)
    if operand0 is None:
        operand0 = rest.pop(0)
    _no_extras(kwargs, "tensor_scalar")
    v = operand(data, "tensor_scalar data")
    ops = [(_op_name(op0, _ALU, "ALU op"), operand0, reverse0)]
    if op1 is not None:
        ops.append((_op_name(op1, _ALU, "ALU op"), operand1, reverse1))
    eng = engine if engine in ("vector", "scalar", "gpsimd") else "vector"

    def fill(out: View) -> None:
        (a0, o0, r0), (a1, o1, r1) = ops[0], ops[1] if len(ops) > 1 else ("bypass", 0.0, False)
        imm = [float(o) if nl._is_scalar(o) else 0.0 for o in (o0, o1)]
        tile = [None if nl._is_scalar(o) else operand(o, "tensor_scalar operand") for o in (o0, o1)]
        _emit.emit_tensor_scalar(out, v, a0, imm[0], a1, imm[1], r0, r1, eng, tile[0], tile[1])

    return _finish(dst, v.shape, dtype or v.dtype, nl.sbuf, fill, "nisa.tensor_scalar")


def tensor_reduce(*args: Any, axis: Any = None, negate: bool = False, keepdims: bool = False, dtype: Any = None,
                  **kwargs: Any) -> Any:
    """Reduce free axes of data with op (Vector engine); `negate` multiplies the result by -1."""
    dst, op, data, rest = _dst_op_data(args, kwargs)
    if axis is None:
        axis = rest.pop(0) if rest else None
    if axis is None:
        fail("nisa.tensor_reduce needs axis=")
    _no_extras(kwargs, "tensor_reduce")
    alu = _op_name(op, _ALU, "reduction op")
    v = operand(data, "tensor_reduce data")
    value = nl.reduce_free(v, alu, axis, keepdims, dtype or v.dtype, "nisa.tensor_reduce",
                           scale=-1.0 if negate else None)
    if dst is not None:
        _emit.assign(dst, value)
        return None
    return value


def tensor_copy(*args: Any, engine: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
    """A copy with cast, on the Vector, Scalar or GpSimd engine."""
    dst, rest = _dst_first(args, kwargs, 1)
    src = kwargs.pop("src", None) or rest[0]
    _no_extras(kwargs, "tensor_copy")
    v = operand(src, "tensor_copy src")
    eng = engine if engine in ("vector", "scalar", "gpsimd") else None
    return _finish(dst, v.shape, dtype or v.dtype, nl.sbuf, lambda out: _emit.emit_copy(out, v, eng),
                   "nisa.tensor_copy")


def memset(*args: Any, value: Any = None, dtype: Any = None, engine: Any = None, **kwargs: Any) -> Any:
    """Fill dst with a constant (legacy form: memset(shape, value, dtype) returns a tile)."""
    _no_extras(kwargs, "memset")
    rest = list(args)
    if rest and isinstance(rest[0], View):
        dst = rest.pop(0)
        value = value if value is not None else rest.pop(0)
        _emit.emit_memset(dst, float(value), engine if engine in ("vector", "gpsimd") else "vector")
        return None
    shape = rest.pop(0)
    value = value if value is not None else rest.pop(0)
    dtype = dtype or (rest.pop(0) if rest else None)
    return nl.full(shape, float(value), check_dtype(dtype))


def _affine(expr: Any, what: str) -> tuple[int, int, int]:
    """(const, partition coef, free coef) of an nl.arange expression over a 2-D [P, F] grid."""
    if not isinstance(expr, IndexExpr):
        fail(f"{what} must be an expression of nl.arange indices, got {expr!r}")
    pc = fc = 0
    for ax, c in expr.terms.items():
        if ax.ndim != 2:
            fail(f"{what}: place each nl.arange on a 2-D grid ([:, None] for partitions, [None, :] for free)")
        if ax.position == 0:
            pc += c
        else:
            fc += c
    return expr.const, pc, fc


def iota(*args: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """dst[p, f] = expr(p, f) for an affine nl.arange expression (GpSimd)."""
    _no_extras(kwargs, "iota")
    rest = list(args)
    dst = rest.pop(0) if rest and isinstance(rest[0], View) else None
    expr = kwargs.pop("expr", None) or rest.pop(0)
    dtype = dtype or (rest.pop(0) if rest else None) or (dst.dtype if dst is not None else None)
    const, pc, fc = _affine(expr, "nisa.iota expr")
    axes = expr.grid()
    shape = dst.shape if dst is not None else tuple(
        next((a.size for a in axes if a.position == i), 1) for i in range(2))

    def fill(out: View) -> None:
        if out.ndim != 2:
            fail("nisa.iota fills a 2-D [P, F] tile")
        _emit.emit_iota(out, float(const), 1.0, pc, fc)

    return _finish(dst, shape, dtype or FLOAT32, nl.sbuf, fill, "nisa.iota")


def affine_select(*args: Any, **kwargs: Any) -> Any:
    """dst = pred ? on_true_tile : on_false_value, pred an affine comparison of nl.arange indices."""
    _no_extras(kwargs, "affine_select", ("name", "mask", "pred", "on_true_tile", "on_false_value", "dtype", "dst"))
    rest = list(args)
    dst = kwargs.pop("dst", None)
    if dst is None and rest and isinstance(rest[0], View) and len(rest) == 4:
        dst = rest.pop(0)
    pred = kwargs.pop("pred", None) or rest.pop(0)
    src = kwargs.pop("on_true_tile", None) or rest.pop(0)
    fill_value = kwargs.pop("on_false_value", None)
    fill_value = fill_value if fill_value is not None else rest.pop(0)
    dtype = kwargs.pop("dtype", None)
    if not isinstance(pred, Predicate):
        fail("nisa.affine_select pred must be a comparison of nl.arange expressions (e.g. i_p - i_f >= 0)")
    const, pc, fc = _affine(pred.expr, "nisa.affine_select pred")
    v = operand(src, "on_true_tile")
    return _finish(dst, v.shape, dtype or v.dtype, nl.sbuf,
                   lambda out: _emit.emit_affine_select(pred.op, out, v, float(const), pc, fc, float(fill_value)),
                   "nisa.affine_select")


def dma_copy(*args: Any, **kwargs: Any) -> None:
    """dst = src by DMA (HBM <-> SBUF, either way, or on chip)."""
    rest = list(args)
    dst = kwargs.pop("dst", None) or rest.pop(0)
    src = kwargs.pop("src", None) or rest.pop(0)
    kwargs.pop("dge_mode", None)
    _no_extras(kwargs, "dma_copy")
    _emit.emit_dma(operand(dst, "dma_copy dst"), operand(src, "dma_copy src"))


def __getattr__(name: str) -> Any:
    """Public NKI ISA names trnc does not implement: a clear error at the kernel line."""
    if name.startswith("__"):
        raise AttributeError(name)
    fail(f"nki.isa.{name} is not supported by trnc.nki (trnc's ISA has no such instruction; docs/nki.md)")
