"""trnc.nki.language: the ``nki.language`` (``nl``) API, traced into nisa instructions.

Creation (``ndarray``, ``zeros``, ``ones``, ``full``, ``*_like``), memory
(``load``, ``store``, ``copy``), indexing (``arange``, ``mgrid``, ``ds``,
``par_dim``), loops (``affine_range``, ``sequential_range``, ``static_range``:
Python ranges, unrolled at trace time), math (elementwise, activation and
reduction functions, ``matmul``, ``transpose``, ``softmax``). Names of the
public API that trnc does not implement raise :class:`NkiError` naming the API
and the kernel line (docs/nki.md lists what is supported).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import _emit
from ._emit import Deferred, new_tile, operand
from ._tracer import (BFLOAT16, BOOL, FLOAT16, FLOAT32, INT8, INT32, UNSUPPORTED_DTYPES, DType, DynSlice,
                      IndexExpr, View, active, check_dtype, fail)

# --- dtypes ---------------------------------------------------------------------
float32 = FLOAT32
bfloat16 = BFLOAT16
float16 = FLOAT16
int32 = INT32
int8 = INT8
bool_ = BOOL
globals().update(UNSUPPORTED_DTYPES)

# --- buffers ----------------------------------------------------------------------
sbuf = "sbuf"
psum = "psum"
hbm = "hbm"
shared_hbm = "hbm"
private_hbm = "hbm"


class tile_size:  # noqa: N801 (the NKI name)
    """Hardware tile limits (NKI nl.tile_size)."""

    pmax = 128
    psum_fmax = 512
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    psum_partition_bytes = 16 * 1024
    sbuf_partition_bytes = 192 * 1024  # trn1; trn2 has 224 KiB


class par_dim(int):
    """Marks the partition dim of an on-chip tensor's shape (NKI nl.par_dim)."""


def ds(start: int, size: int) -> DynSlice:
    """A slice of `size` elements from `start`."""
    return DynSlice(int(start), int(size))


def arange(*args: int) -> IndexExpr:
    """nl.arange(n) / nl.arange(start, stop): one index axis (place it with [:, None] / [None, :])."""
    start, stop = (0, args[0]) if len(args) == 1 else (args[0], args[1])
    if len(args) > 2:
        fail("nl.arange with a step is not supported")
    return IndexExpr.axis(stop - start) + start


class _MGrid:
    def __getitem__(self, key: Any) -> tuple:
        key = key if isinstance(key, tuple) else (key,)
        out = []
        for i, k in enumerate(key):
            if not isinstance(k, slice) or (k.step not in (None, 1)):
                fail("nl.mgrid takes start:stop slices")
            start = k.start or 0
            out.append(IndexExpr.axis(k.stop - start, i, len(key)) + start)
        return tuple(out) if len(out) > 1 else out[0]


mgrid = _MGrid()


def affine_range(*args: int) -> range:
    """Iterations without loop-carried dependence (unrolled at trace time)."""
    return range(*args)


def sequential_range(*args: int) -> range:
    """Iterations in order (unrolled at trace time)."""
    return range(*args)


def static_range(*args: int) -> range:
    """A fully unrolled loop."""
    return range(*args)


def program_id(axis: int = 0) -> int:
    """The SPMD program index: trnc kernels run as one program."""
    return 0


def num_programs(axes: Any = None) -> int:
    return 1


def program_ndim() -> int:
    return 0


# --- creation ------------------------------------------------------------------------


def _layout(shape: Sequence[int]) -> tuple[int, list, list]:
    """(partition position, block dims, free dims) of an on-chip shape (nl.par_dim marks P)."""
    shape = [int(s) if not isinstance(s, par_dim) else s for s in shape]
    marks = [i for i, s in enumerate(shape) if isinstance(s, par_dim)]
    if len(marks) > 1:
        fail("more than one nl.par_dim in a shape")
    p = marks[0] if marks else 0
    return p, [int(s) for s in shape[:p]], [int(s) for s in shape[p + 1:]]


def ndarray(shape: Sequence[int], dtype: DType, buffer: Any = None, name: str = "", **kwargs: Any) -> View:
    """A new tensor on `buffer` (nl.sbuf by default, nl.psum, or nl.shared_hbm for a kernel output)."""
    builder = active()
    check_dtype(dtype)
    if kwargs:
        fail(f"nl.ndarray: unsupported arguments {sorted(kwargs)}")
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    buffer = buffer or sbuf
    if buffer not in (sbuf, psum, hbm):
        fail(f"buffer {buffer!r} is not supported (nl.sbuf, nl.psum, nl.shared_hbm; direct allocation is missing)")
    if buffer == hbm:
        return builder.hbm_tensor([int(s) for s in shape], dtype)
    p, blocks, free = _layout(shape if len(shape) > 1 else (shape[0], 1))
    partitions = int(shape[p])
    nblocks = 1
    for b in blocks:
        nblocks *= b
    nfree = 1
    for f in free:
        nfree *= f
    buf = builder.tile(buffer, partitions, nblocks * nfree, dtype)
    # Block dims lie in the free space, before the free dims: [B..., P, F...].
    dims, stride = [], 1
    for f in reversed(free):
        dims.append((f, stride))
        stride *= f
    fdims = list(reversed(dims))
    bdims, bstride = [], nfree
    for b in reversed(blocks):
        bdims.append((b, bstride))
        bstride *= b
    view = View(buf, 0, list(reversed(bdims)) + [(partitions, nblocks * nfree)] + fdims)
    if len(shape) == 1:
        view = View(buf, 0, view.dims[:1])
    return view


def _filled(shape: Sequence[int], dtype: DType, buffer: Any, value: float) -> View:
    t = ndarray(shape, dtype, buffer=buffer)
    if t.buffer.on_chip and buffer == psum and value == 0.0:
        t.buffer.zero_pending = True  # memset when first used (see _emit.py)
    elif t.buffer.on_chip:
        _emit.emit_memset(_as_tile_view(t), value)
    else:
        fail("filling an HBM tensor is not supported: fill a tile and nl.store it")
    return t


def _as_tile_view(t: View) -> View:
    """The whole buffer of `t` as one [P, free] view (block dims included)."""
    buf = t.buffer
    return View(buf, 0, [(buf.partitions, buf.elements), (buf.elements, 1)])


def zeros(shape: Sequence[int], dtype: DType, buffer: Any = None, **kwargs: Any) -> View:
    return _filled(shape, dtype, buffer or sbuf, 0.0)


def ones(shape: Sequence[int], dtype: DType, buffer: Any = None, **kwargs: Any) -> View:
    return _filled(shape, dtype, buffer or sbuf, 1.0)


def full(shape: Sequence[int], fill_value: float, dtype: DType, buffer: Any = None, **kwargs: Any) -> View:
    return _filled(shape, dtype, buffer or sbuf, float(fill_value))


def zeros_like(a: Any, dtype: Optional[DType] = None, buffer: Any = None, **kwargs: Any) -> View:
    return zeros(a.shape, dtype or a.dtype, buffer or _space(a))


def ones_like(a: Any, dtype: Optional[DType] = None, buffer: Any = None, **kwargs: Any) -> View:
    return ones(a.shape, dtype or a.dtype, buffer or _space(a))


def empty_like(a: Any, dtype: Optional[DType] = None, buffer: Any = None, **kwargs: Any) -> View:
    return ndarray(a.shape, dtype or a.dtype, buffer=buffer or _space(a))


def _space(a: Any) -> str:
    return a.space if isinstance(a, Deferred) else a.buffer.space


# --- memory -------------------------------------------------------------------------------


def _check_mask(kwargs: dict, api: str) -> None:
    if kwargs.get("mask") is not None:
        fail(f"{api}: mask= is not supported (slice the tile instead)")
    extra = set(kwargs) - {"mask"}
    if extra:
        fail(f"{api}: unsupported arguments {sorted(extra)}")


def load(src: View, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
    """HBM -> a new SBUF tile (cast to `dtype` by the DMA)."""
    _check_mask(kwargs, "nl.load")
    if not isinstance(src, View) or src.buffer.on_chip:
        fail("nl.load reads an HBM tensor (use nl.copy for on-chip tiles)")
    shape = src.shape if src.ndim >= 2 else (src.shape[0] if src.shape else 1, 1)
    return Deferred(shape, check_dtype(dtype or src.dtype), sbuf, lambda dst: _emit.emit_dma(dst, src), "nl.load")


def store(dst: View, value: Any, **kwargs: Any) -> None:
    """A tile -> HBM."""
    _check_mask(kwargs, "nl.store")
    if not isinstance(dst, View) or dst.buffer.on_chip:
        fail("nl.store writes an HBM tensor")
    _emit.emit_dma(dst, operand(value, "nl.store value"))


def copy(src: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
    """A copy of a tile (e.g. PSUM -> SBUF), cast to `dtype`."""
    _check_mask(kwargs, "nl.copy")
    x = operand(src, "nl.copy source")
    return Deferred(x.shape, check_dtype(dtype or x.dtype), sbuf, lambda dst: _emit.emit_copy(dst, x), "nl.copy")


# --- math -------------------------------------------------------------------------------------

# nl function -> Scalar engine activation (nisa ActFunc).
_ACTIVATIONS = {
    "exp": "exp", "log": "log", "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "gelu": "gelu",
    "gelu_apprx_tanh": "gelu_tanh", "silu": "silu", "sqrt": "sqrt", "rsqrt": "rsqrt", "reciprocal": "reciprocal",
    "gelu_dx": "gelu_dx", "silu_dx": "silu_dx", "square": "square", "abs": "abs", "sign": "sign", "erf": "erf", "sin": "sin", "cos": "cos",
    "softplus": "softplus", "mish": "mish", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "expm1": "expm1", "log1p": "log1p",
}
# nl function -> Vector engine ALU op (nisa AluOp).
_ALU = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide", "maximum": "max",
    "minimum": "min", "power": "pow", "equal": "is_equal", "not_equal": "not_equal", "greater": "is_gt",
    "greater_equal": "is_ge", "less": "is_lt", "less_equal": "is_le", "logical_and": "logical_and",
    "logical_or": "logical_or", "logical_xor": "logical_xor", "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "fmod": "fmod", "remainder": "remainder",
}
_REVERSIBLE = {"add", "multiply", "max", "min", "is_equal", "not_equal", "logical_and", "logical_or",
               "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"}
_MIRROR = {"is_gt": "is_lt", "is_lt": "is_gt", "is_ge": "is_le", "is_le": "is_ge"}


def _unary(name: str, func: str):
    def fn(x: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
        _check_mask(kwargs, f"nl.{name}")
        v = operand(x, f"nl.{name} input")
        return Deferred(v.shape, check_dtype(dtype or v.dtype), sbuf,
                        lambda dst: _emit.emit_activation(func, dst, v), f"nl.{name}")

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} on the Scalar engine (activation {func})."
    return fn


def _binary(name: str, alu: str):
    def fn(x: Any, y: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Any:
        _check_mask(kwargs, f"nl.{name}")
        xs, ys = _is_scalar(x), _is_scalar(y)
        if xs and ys:
            fail(f"nl.{name} of two Python numbers: compute it in Python")
        if ys or xs:
            t = operand(x if ys else y, f"nl.{name} input")
            value = float(y if ys else x)
            op, reverse = alu, xs
            if xs and alu in _MIRROR:
                op, reverse = _MIRROR[alu], False
            elif xs and alu in _REVERSIBLE:
                reverse = False
            return Deferred(t.shape, check_dtype(dtype or t.dtype), sbuf,
                            lambda dst: _emit.emit_tensor_scalar(dst, t, op, value, reverse0=reverse), f"nl.{name}")
        a, b = operand(x, f"nl.{name} first input"), operand(y, f"nl.{name} second input")
        shape = a.shape if a.free_elements() >= b.free_elements() else b.shape
        out_dtype = dtype or (a.dtype if a.dtype.is_float or not b.dtype.is_float else b.dtype)
        # A [P, 1] tile against a wider one: a tensor_scalar with it as the per-partition
        # operand (one pass of the row), not a tensor_tensor reading it broadcast (two).
        column = [t.free_elements() == 1 and t.shape[0] == other.shape[0] and other.free_elements() > 1
                  for t, other in ((a, b), (b, a))]
        if any(column):
            data, per_partition = (b, a) if column[0] else (a, b)
            return Deferred(shape, check_dtype(out_dtype), sbuf,
                            lambda dst: _emit.emit_tensor_scalar(dst, data, alu, 0.0, reverse0=column[0],
                                                                 operand0=per_partition), f"nl.{name}")
        return Deferred(shape, check_dtype(out_dtype), sbuf,
                        lambda dst: _emit.emit_tensor_tensor(alu, dst, a, b), f"nl.{name}")

    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (tensor_tensor / tensor_scalar {alu})."
    return fn


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


for _name, _func in _ACTIVATIONS.items():
    globals()[_name] = _unary(_name, _func)
for _name, _alu in _ALU.items():
    globals()[_name] = _binary(_name, _alu)


def negative(x: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
    return multiply(x, -1.0, dtype=dtype, **kwargs)  # noqa: F821 (defined above)


def _reduce(name: str, alu: str):
    def fn(x: Any, axis: Any, dtype: Optional[DType] = None, keepdims: bool = False, **kwargs: Any) -> Deferred:
        _check_mask(kwargs, f"nl.{name}")
        v = operand(x, f"nl.{name} input")
        return reduce_free(v, alu, axis, keepdims, dtype or v.dtype, f"nl.{name}")

    fn.__name__ = name
    fn.__doc__ = f"{name} over free axes (tensor_reduce {alu} on the Vector engine)."
    return fn


def reduce_free(v: View, alu: str, axis: Any, keepdims: bool, dtype: DType, api: str,
                scale: Optional[float] = None) -> Deferred:
    """Reduce the trailing free axes `axis` of `v` (one tensor_reduce over their merged dim)."""
    axes = sorted({a % v.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,))})
    if 0 in axes:
        fail(f"{api}: reducing the partition axis is not supported (trnc has no nisa.tensor_partition_reduce; "
             "transpose with nisa.nc_transpose first)")
    if axes != list(range(v.ndim - len(axes), v.ndim)):
        fail(f"{api}: only trailing free axes can be reduced, got axis={axis} of {v.ndim} dims")
    kept = [s for i, s in enumerate(v.shape) if i not in axes]
    shape = tuple(s if i not in axes else 1 for i, s in enumerate(v.shape)) if keepdims else tuple(kept)
    # The input as [P, kept free..., reduced] with the reduced axes merged into one.
    inner = 1
    for a in axes:
        inner *= v.shape[a]
    reduced = [d for i, d in enumerate(v.dims) if i in axes]
    expected = reduced[-1][1]
    for size, stride in reversed(reduced):
        if size > 1 and stride != expected:
            fail(f"{api}: the reduced axes are not contiguous in the tile")
        expected = stride * size
    src = View(v.buffer, v.offset, [d for i, d in enumerate(v.dims) if i not in axes] + [(inner, reduced[-1][1])])

    def fill(dst: View) -> None:
        out = View(dst.buffer, dst.offset, [dst.dims[0]] + [d for d in dst.dims[1:] if d[0] > 1] or [dst.dims[0]])
        if out.free_elements() * inner != src.free_elements() or out.partition_count() != src.partition_count():
            fail(f"{api}: result {list(dst.shape)} does not match the input {list(v.shape)} reduced over {axes}")
        _emit.emit_tensor_reduce(alu, out, src)
        if scale is not None:
            _emit.emit_tensor_scalar(out, out, "multiply", scale)

    return Deferred(shape if len(shape) > 1 else (shape[0], 1), check_dtype(dtype), sbuf, fill, api)


sum = _reduce("sum", "add")  # noqa: A001 (the NKI name)
max = _reduce("max", "max")  # noqa: A001
min = _reduce("min", "min")  # noqa: A001
prod = _reduce("prod", "multiply")


def mean(x: Any, axis: Any, dtype: Optional[DType] = None, keepdims: bool = False, **kwargs: Any) -> Deferred:
    """Sum over trailing free axes, then one multiply by 1/n."""
    _check_mask(kwargs, "nl.mean")
    v = operand(x, "nl.mean input")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = 1
    for a in axes:
        n *= v.shape[a]
    return reduce_free(v, "add", axis, keepdims, dtype or v.dtype, "nl.mean", scale=1.0 / n)


def matmul(x: Any, y: Any, transpose_x: bool = False, **kwargs: Any) -> Deferred:
    """x @ y on the Tensor Engine into PSUM (float32); `transpose_x`: x is already [K, M]."""
    _check_mask(kwargs, "nl.matmul")
    a, b = operand(x, "nl.matmul x"), operand(y, "nl.matmul y")
    if not transpose_x:
        # x is [M, K]: the Tensor Engine needs K on partitions, so transpose it first.
        staged = new_tile((a.free_elements(), a.partition_count()), a.dtype, sbuf)
        _emit.emit_transpose(staged, a)
        a = staged
    shape = (a.free_elements(), b.free_elements())
    return Deferred(shape, FLOAT32, psum, lambda dst: _emit.emit_matmul(dst, a, b, accumulate=False),
                    "nl.matmul", accumulate=lambda dst: _emit.emit_matmul(dst, a, b, accumulate=True))


def transpose(x: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
    """[P, F] -> [F, P] on the Tensor Engine (result in PSUM, float32)."""
    _check_mask(kwargs, "nl.transpose")
    v = operand(x, "nl.transpose input")
    return Deferred((v.free_elements(), v.partition_count()), check_dtype(dtype or FLOAT32),
                    psum if (dtype or FLOAT32) is FLOAT32 else sbuf,
                    lambda dst: _emit.emit_transpose(dst, v), "nl.transpose")


def softmax(x: Any, axis: Any, dtype: Optional[DType] = None, **kwargs: Any) -> Deferred:
    """exp(x - max) / sum over the last free axis: max, exp with bias, sum, reciprocal, multiply."""
    _check_mask(kwargs, "nl.softmax")
    v = operand(x, "nl.softmax input")
    if (axis if not isinstance(axis, (tuple, list)) else tuple(axis)) not in (v.ndim - 1, -1, (v.ndim - 1,), (-1,)):
        fail("nl.softmax: only the last axis is supported")
    rows = (v.partition_count(), 1)

    def fill(dst: View) -> None:
        neg_max = new_tile(rows, FLOAT32, sbuf)
        total = new_tile(rows, FLOAT32, sbuf)
        _emit.emit_tensor_reduce("max", neg_max, v)
        _emit.emit_tensor_scalar(neg_max, neg_max, "multiply", -1.0)
        _emit.emit_activation("exp", dst, v, bias=neg_max)
        _emit.emit_tensor_reduce("add", total, dst)
        _emit.emit_activation("reciprocal", total, total)
        _emit.emit_tensor_tensor("multiply", dst, dst, total)

    return Deferred(v.shape, check_dtype(dtype or v.dtype), sbuf, fill, "nl.softmax")


def __getattr__(name: str) -> Any:
    """Public NKI names trnc does not implement: a clear error at the kernel line."""
    if name.startswith("__"):
        raise AttributeError(name)
    fail(f"nki.language.{name} is not supported by trnc.nki (docs/nki.md lists the supported API)")
