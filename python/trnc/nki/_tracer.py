"""The tracing core of trnc.nki: kernel state, tensors, views and their access patterns.

A kernel runs once per input signature as ordinary Python (``nl.affine_range`` is
``range``: loops unroll at trace time). Every NKI call appends nisa instructions to
the active :class:`Builder`; the result is the MLIR text of one ``func.func @main``
over HBM memrefs and unallocated tiles, which ``_C.compile_kernel`` runs through the
compiler's ``trnc-compile-kernel`` pipeline (list schedule, allocate, semaphores).

Tensors are views: a buffer (an HBM memref or an on-chip ``nisa.alloc`` tile) plus an
element offset and (size, stride) dims over the buffer's linear element space (for a
tile: partition * free_size + free index). Indexing a view gives a view; an
instruction operand is a view turned into a ``#nisa.ap`` access pattern. Every error
names the kernel source line that caused it (:func:`user_frame`).
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..errors import TrncError

__all__ = ["NkiError", "DType", "Builder", "View", "IndexExpr", "active", "fail"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_PMAX = 128
_MAX_FREE_DIMS = 4


class NkiError(TrncError):
    """A kernel that cannot be traced or compiled; the message names the kernel source line."""


@dataclass(frozen=True)
class DType:
    """An NKI element type and its nisa/MLIR spelling (None: trnc's ISA has no such type)."""

    name: str
    mlir: Optional[str]
    bytes: int
    is_float: bool = True

    def __repr__(self) -> str:
        return f"nl.{self.name}"


FLOAT32 = DType("float32", "f32", 4)
BFLOAT16 = DType("bfloat16", "bf16", 2)
FLOAT16 = DType("float16", "f16", 2)
INT32 = DType("int32", "i32", 4, False)
INT8 = DType("int8", "i8", 1, False)
BOOL = DType("bool_", "i1", 1, False)
# NKI types trnc's ISA does not have: tracing with them is a clear error.
UNSUPPORTED_DTYPES = {
    name: DType(name, None, size, name.startswith("float") or name == "tfloat32")
    for name, size in (("float8_e4m3", 1), ("float8_e5m2", 1), ("tfloat32", 4), ("int16", 2), ("uint8", 1),
                       ("uint16", 2), ("uint32", 4), ("float8_e4m3fn", 1))
}


def user_frame() -> tuple[str, int, str]:
    """(file, line, code) of the innermost frame outside trnc.nki: the kernel's own line."""
    frame = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0, "")
    import linecache

    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return (frame.f_code.co_filename, frame.f_lineno, code)


def fail(message: str) -> "NoReturn":  # noqa: F821
    """Raise NkiError for `message` at the kernel line being traced."""
    builder = _state.builder
    file, line, code = builder.where if builder and builder.where else user_frame()
    kernel = f"kernel '{builder.name}'" if builder else "trnc.nki"
    where = f"{file}:{line}"
    text = f"trnc.nki: {kernel} at {where}: {message}"
    if code:
        text += f"\n    {code}"
    raise NkiError(text)


class _State(threading.local):
    builder: Optional["Builder"] = None


_state = _State()


def active() -> "Builder":
    """The kernel being traced; NKI calls outside a kernel are an error."""
    if _state.builder is None:
        file, line, _ = user_frame()
        raise NkiError(f"trnc.nki: {file}:{line}: NKI calls are only valid inside a kernel being traced "
                       "(decorate the function with @trnc.nki.jit and call it)")
    return _state.builder


# ----------------------------------------------------------------------------
# Affine index expressions (nl.arange / nl.mgrid) and dynamic slices (nl.ds)
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Axis:
    """One iteration axis: `size` values, result dim `position` of `ndim`."""

    size: int
    position: int
    ndim: int


class IndexExpr:
    """const + sum(coef * axis): an affine expression of nl.arange axes."""

    def __init__(self, terms: dict, const: int = 0) -> None:
        self.terms = terms  # _Axis -> int coefficient
        self.const = const

    @staticmethod
    def axis(size: int, position: int = 0, ndim: int = 1) -> "IndexExpr":
        return IndexExpr({_Axis(size, position, ndim): 1})

    def __getitem__(self, key: Any) -> "IndexExpr":
        # nl.arange(n)[:, None] / [None, :]: place a 1-D axis in a 2-D grid.
        if len(self.terms) != 1 or self.const:
            fail("only a bare nl.arange can be indexed with None to place it")
        (ax,) = self.terms
        key = key if isinstance(key, tuple) else (key,)
        slots = [k for k in key if k is not None]
        if len(slots) != 1 or not isinstance(slots[0], slice) or slots[0] != slice(None):
            fail("place an nl.arange with [:, None] or [None, :]")
        position = next(i for i, k in enumerate(key) if k is not None)
        return IndexExpr({_Axis(ax.size, position, len(key)): 1})

    def _combine(self, other: Any, sign: int) -> "IndexExpr":
        if isinstance(other, IndexExpr):
            terms = dict(self.terms)
            for ax, c in other.terms.items():
                terms[ax] = terms.get(ax, 0) + sign * c
            return IndexExpr({a: c for a, c in terms.items() if c}, self.const + sign * other.const)
        if isinstance(other, int):
            return IndexExpr(dict(self.terms), self.const + sign * other)
        return NotImplemented

    def __add__(self, other: Any) -> "IndexExpr":
        return self._combine(other, 1)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "IndexExpr":
        return self._combine(other, -1)

    def __rsub__(self, other: Any) -> "IndexExpr":
        return (-self)._combine(other, 1)

    def __neg__(self) -> "IndexExpr":
        return IndexExpr({a: -c for a, c in self.terms.items()}, -self.const)

    def __mul__(self, other: Any) -> "IndexExpr":
        if not isinstance(other, int):
            return NotImplemented
        return IndexExpr({a: c * other for a, c in self.terms.items() if c * other}, self.const * other)

    __rmul__ = __mul__

    def _compare(self, other: Any, op: str) -> "Predicate":
        return Predicate(self - other if not isinstance(other, IndexExpr) else self - other, op)

    def __ge__(self, other: Any) -> "Predicate":
        return self._compare(other, "is_ge")

    def __gt__(self, other: Any) -> "Predicate":
        return self._compare(other, "is_gt")

    def __le__(self, other: Any) -> "Predicate":
        return self._compare(other, "is_le")

    def __lt__(self, other: Any) -> "Predicate":
        return self._compare(other, "is_lt")

    def __eq__(self, other: Any) -> "Predicate":  # type: ignore[override]
        return self._compare(other, "is_equal")

    __hash__ = object.__hash__

    def grid(self) -> list[_Axis]:
        """The axes by result position (a 2-D grid needs both positions filled)."""
        axes = sorted(self.terms, key=lambda a: a.position)
        return axes


@dataclass
class Predicate:
    """`expr <op> 0` over nl.arange axes (nisa.affine_select, masks)."""

    expr: IndexExpr
    op: str


@dataclass(frozen=True)
class DynSlice:
    """nl.ds(start, size): `size` elements from `start`."""

    start: int
    size: int


# ----------------------------------------------------------------------------
# Buffers and views
# ----------------------------------------------------------------------------


@dataclass
class Buffer:
    """An HBM memref (kernel argument, output or scratch) or an on-chip tile."""

    name: str  # SSA name without '%'
    space: str  # "hbm", "sbuf", "psum"
    dtype: DType
    elements: int  # HBM: total elements; tile: free size per partition
    partitions: int = 0  # tiles only
    zero_pending: bool = False  # nl.zeros in PSUM: memset deferred to first use
    shape: tuple = ()  # HBM: the tensor's shape (argument attributes)
    is_input: bool = False  # a kernel argument (read only)
    written: bool = False  # some instruction has written it (nc_matmul's accumulate=None)
    origin: tuple = ("<unknown>", 0, "")  # where the kernel created it

    @property
    def on_chip(self) -> bool:
        return self.space != "hbm"

    def mlir_type(self) -> str:
        if self.on_chip:
            return f"!nisa.tile<{self.space}, {self.partitions}, {self.elements}, {self.dtype.mlir}>"
        return f"memref<{self.elements}x{self.dtype.mlir}>"


class View:
    """A tensor: `dims` = [(size, stride)] over `buffer`'s linear elements from `offset`.

    On chip the first dim of a tile is the partition dim (stride = the tile's free
    size, or a single partition)."""

    def __init__(self, buffer: Buffer, offset: int, dims: Sequence[tuple[int, int]]) -> None:
        self.buffer = buffer
        self.offset = offset
        self.dims = [tuple(d) for d in dims]

    # --- NKI tensor attributes -------------------------------------------------
    @property
    def shape(self) -> tuple:
        return tuple(s for s, _ in self.dims)

    @property
    def dtype(self) -> DType:
        return self.buffer.dtype

    @property
    def buffer_kind(self) -> str:
        return self.buffer.space

    @property
    def ndim(self) -> int:
        return len(self.dims)

    def numel(self) -> int:
        n = 1
        for s, _ in self.dims:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"<trnc.nki tensor {self.buffer.space} {list(self.shape)} {self.dtype.name}>"

    # --- indexing ----------------------------------------------------------------
    def __getitem__(self, key: Any) -> "View":
        return index_view(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        from ._emit import assign

        target = index_view(self, key)
        if isinstance(value, View) and value.same_as(target):
            return  # `t[i] += x` stores the updated view back into itself: nothing to do
        assign(target, value)

    def same_as(self, other: "View") -> bool:
        return self.buffer is other.buffer and self.offset == other.offset and self.dims == other.dims

    def __iadd__(self, value: Any) -> "View":
        from ._emit import accumulate

        accumulate(self, value)
        return self

    # Arithmetic on tiles is the nl.* function of the same name.
    def _binary(self, other: Any, name: str, reverse: bool = False) -> Any:
        from . import language as nl

        fn = getattr(nl, name)
        return fn(other, self) if reverse else fn(self, other)

    def __add__(self, o: Any) -> Any:
        return self._binary(o, "add")

    def __radd__(self, o: Any) -> Any:
        return self._binary(o, "add", True)

    def __sub__(self, o: Any) -> Any:
        return self._binary(o, "subtract")

    def __rsub__(self, o: Any) -> Any:
        return self._binary(o, "subtract", True)

    def __mul__(self, o: Any) -> Any:
        return self._binary(o, "multiply")

    def __rmul__(self, o: Any) -> Any:
        return self._binary(o, "multiply", True)

    def __truediv__(self, o: Any) -> Any:
        return self._binary(o, "divide")

    def __rtruediv__(self, o: Any) -> Any:
        return self._binary(o, "divide", True)

    def __neg__(self) -> Any:
        return self._binary(-1.0, "multiply")

    # --- access patterns -----------------------------------------------------------
    def partition_count(self) -> int:
        return self.dims[0][0] if self.dims else 1

    def free_dims(self) -> list[tuple[int, int]]:
        return list(self.dims[1:])

    def free_elements(self) -> int:
        n = 1
        for s, _ in self.dims[1:]:
            n *= s
        return n

    def ap(self, pair_partitions: Optional[int] = None, what: str = "operand", keep_last: bool = False) -> str:
        """`%name <offset, [strides], [counts]>` for this view (see NisaBase.td); `keep_last`
        keeps the innermost dim whole (the dim a tensor_reduce reduces)."""
        buf = self.buffer
        if buf.on_chip:
            p, pstride = self.dims[0] if self.dims else (1, buf.elements)
            if p > 1 and pstride != buf.elements:
                fail(f"{what}: the partition dim must be the first index of an on-chip tile "
                     f"(it walks stride {pstride}, the tile's partitions are {buf.elements} apart)")
            start = self.offset // buf.elements
            if start + p > buf.partitions:
                fail(f"{what}: partitions {start}..{start + p - 1} of a {buf.partitions}-partition tile")
            free = _merge(self.dims[1:-1]) + [self.dims[-1]] if keep_last and len(self.dims) > 1 \
                else _merge(self.dims[1:])
            if len(free) > _MAX_FREE_DIMS:
                fail(f"{what}: {len(free)} free dims after merging; an access pattern has at most {_MAX_FREE_DIMS}")
            dims = [(p, buf.elements)] + (free or [(1, 1)])
        else:
            if pair_partitions is not None and self.dims and self.dims[0][0] == pair_partitions:
                dims = [self.dims[0]] + (_merge(self.dims[1:]) or [(1, 1)])
            else:
                dims = _merge(self.dims) or [(1, 1)]
            if len(dims) > 5:
                fail(f"{what}: {len(dims)} dims after merging; an HBM access pattern has at most 5")
        strides = ", ".join(str(s) for _, s in dims)
        counts = ", ".join(str(c) for c, _ in dims)
        return f"%{buf.name} <{self.offset}, [{strides}], [{counts}]>"


def _merge(dims: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop size-1 dims and merge (outer, inner) pairs with outer stride = inner size * stride."""
    out: list[list[int]] = []
    for size, stride in dims:
        if size == 1:
            continue
        if out and out[-1][1] == size * stride:
            out[-1] = [out[-1][0] * size, stride]
        else:
            out.append([size, stride])
    return [(s, st) for s, st in out]


def _normalize_key(view: View, key: Any) -> list:
    key = list(key) if isinstance(key, tuple) else [key]
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = view.ndim - (len(key) - 1)
        key = key[:i] + [slice(None)] * fill + key[i + 1:]
    if len(key) > view.ndim:
        fail(f"{len(key)} indices for a tensor of {view.ndim} dims {list(view.shape)}")
    return key + [slice(None)] * (view.ndim - len(key))


def index_view(view: View, key: Any) -> View:
    """view[key]: ints, slices (step 1 or more), nl.ds, Ellipsis, or nl.arange expressions."""
    key = _normalize_key(view, key)
    exprs = [k for k in key if isinstance(k, IndexExpr)]
    if exprs:
        return _index_affine(view, key)
    offset = view.offset
    dims = []
    for k, (size, stride) in zip(key, view.dims):
        if isinstance(k, bool) or not isinstance(k, (int, slice, DynSlice)):
            if hasattr(k, "__index__"):
                k = int(k)
            else:
                fail(f"unsupported index {k!r} (use ints, slices, nl.ds or nl.arange)")
        if isinstance(k, int):
            if not -size <= k < size:
                fail(f"index {k} out of range for a dim of {size}")
            offset += (k % size) * stride
        elif isinstance(k, DynSlice):
            if k.start < 0 or k.size < 1 or k.start + k.size > size:
                fail(f"nl.ds({k.start}, {k.size}) out of range for a dim of {size}")
            offset += k.start * stride
            dims.append((k.size, stride))
        else:
            start, stop, step = k.indices(size)
            n = len(range(start, stop, step))
            if n < 1:
                fail(f"empty slice {k.start}:{k.stop} of a dim of {size}")
            if step < 1:
                fail("negative slice steps are not supported")
            offset += start * stride
            dims.append((n, stride * step))
    return View(view.buffer, offset, dims)


def _index_affine(view: View, key: list) -> View:
    """Indexing with nl.arange expressions: each result dim is one arange axis."""
    axes: dict = {}
    offset = view.offset
    for k, (size, stride) in zip(key, view.dims):
        if isinstance(k, int):
            offset += k * stride
            continue
        if not isinstance(k, IndexExpr):
            fail("mixing nl.arange indices with slices is not supported: index every dim with an expression or an int")
        lo, hi = k.const, k.const
        for ax, c in k.terms.items():
            lo += min(0, c * (ax.size - 1))
            hi += max(0, c * (ax.size - 1))
            axes[ax] = axes.get(ax, 0) + c * stride
        if lo < 0 or hi >= size:
            fail(f"index expression covers {lo}..{hi} of a dim of {size}")
        offset += k.const * stride
    ordered = sorted(axes.items(), key=lambda item: item[0].position)
    positions = [a.position for a, _ in ordered]
    if len(set(positions)) != len(positions):
        fail("two nl.arange axes share one result position")
    return View(view.buffer, offset, [(a.size, s) for a, s in ordered])


# ----------------------------------------------------------------------------
# The kernel being traced
# ----------------------------------------------------------------------------


@dataclass
class Builder:
    """Collects one kernel's buffers and instructions as nisa MLIR text."""

    name: str
    target: str
    inputs: list = field(default_factory=list)  # Buffer per kernel argument
    hbm: list = field(default_factory=list)  # HBM buffers created by the kernel
    body: list = field(default_factory=list)  # MLIR lines of the function body
    pending: Any = None  # the one Deferred not yet materialized (_emit.py)
    identities: dict = field(default_factory=dict)  # dtype name -> identity tile view
    counter: int = 0
    instructions: int = 0
    where: Optional[tuple] = None  # (file, line, code) of the deferred value being emitted

    def at(self, where: tuple) -> "_At":
        """Attribute what is emitted inside to `where` (a deferred value's kernel line)."""
        return _At(self, where)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def loc(self) -> str:
        file, line, _ = self.where or user_frame()
        file = file.replace("\\", "\\\\").replace('"', '\\"')
        return f'loc("{file}":{line}:0)'

    def tile(self, space: str, partitions: int, free: int, dtype: DType) -> Buffer:
        """A new on-chip buffer (one nisa.alloc), checked against the hardware's limits."""
        check_dtype(dtype)
        if partitions > _PMAX:
            fail(f"a tile has at most {_PMAX} partitions (nl.tile_size.pmax), this one {partitions}")
        if partitions < 1 or free < 1:
            fail(f"empty tile [{partitions}, {free}]")
        if space == "psum" and free * dtype.bytes > 16 * 1024:
            fail(f"PSUM overflow: a PSUM tile of {free} {dtype.name} per partition needs {free * dtype.bytes} bytes, "
                 "PSUM has 16384 per partition (8 banks of 2 KiB)")
        buf = Buffer(self.fresh("t"), space, dtype, free, partitions, origin=self.where or user_frame())
        self.body.append(f"%{buf.name} = nisa.alloc : {buf.mlir_type()} {self.loc()}")
        return buf

    def hbm_tensor(self, shape: Sequence[int], dtype: DType) -> View:
        check_dtype(dtype)
        n = 1
        for s in shape:
            n *= s
        buf = Buffer(self.fresh("h"), "hbm", dtype, max(n, 1), shape=tuple(shape), origin=user_frame())
        self.hbm.append(buf)
        return View(buf, 0, _row_major(shape))

    def emit(self, text: str) -> None:
        """Append one instruction (the pending value is materialized first, in program order)."""
        pending = self.pending
        if pending is not None:
            self.pending = None
            pending.materialize()
        self.body.append(f"{text} {self.loc()}")
        self.instructions += 1

    def module(self, outputs: Sequence[Buffer], shapes: Sequence[tuple]) -> str:
        """The kernel as MLIR text: inputs, then outputs as @main arguments; other HBM is scratch."""
        args = []
        for i, buf in enumerate(self.inputs):
            args.append(_arg(buf, "input", i, buf.shape))
        for j, (buf, shape) in enumerate(zip(outputs, shapes)):
            args.append(_arg(buf, "output", j, shape))
        out_names = {b.name for b in outputs}
        scratch = [f"%{b.name} = nisa.dram_alloc : {b.mlir_type()}" for b in self.hbm if b.name not in out_names]
        lines = [f'module attributes {{trn.target = "{self.target}"}} {{',
                 f'  func.func @main({", ".join(args)}) attributes {{trn.graph_name = "{self.name}"}} {{']
        lines += ["    " + line for line in scratch + self.body]
        lines += ["    return", "  }", "}", ""]
        return "\n".join(lines)


class _At:
    def __init__(self, builder: Builder, where: tuple) -> None:
        self.builder, self.where, self.saved = builder, where, None

    def __enter__(self) -> None:
        self.saved, self.builder.where = self.builder.where, self.builder.where or self.where

    def __exit__(self, *exc: Any) -> None:
        self.builder.where = self.saved


def _arg(buf: Buffer, kind: str, index: int, shape: Sequence[int]) -> str:
    strides = [s for _, s in _row_major(shape)]
    shape_attr = ", ".join(str(s) for s in shape) if shape else ""
    stride_attr = ", ".join(str(s) for s in strides) if shape else ""
    return (f"%{buf.name}: {buf.mlir_type()} {{nisa.{kind} = {index} : i64, "
            f"nisa.shape = array<i64{': ' + shape_attr if shape_attr else ''}>, "
            f"nisa.strides = array<i64{': ' + stride_attr if stride_attr else ''}>}}")


def _row_major(shape: Sequence[int]) -> list[tuple[int, int]]:
    dims = []
    stride = 1
    for s in reversed(list(shape)):
        dims.append((int(s), stride))
        stride *= int(s)
    return list(reversed(dims))


def check_dtype(dtype: Any) -> DType:
    if not isinstance(dtype, DType):
        fail(f"{dtype!r} is not an NKI dtype (use nl.float32, nl.bfloat16, ...)")
    if dtype.mlir is None:
        fail(f"dtype {dtype.name} is not supported by trnc's ISA (supported: float32, bfloat16, float16, "
             "int32, int8, bool_)")
    return dtype


class Tracing:
    """Context manager installing `builder` as the active kernel."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder

    def __enter__(self) -> Builder:
        if _state.builder is not None:
            raise NkiError(f"trnc.nki: kernel '{self.builder.name}' called while tracing kernel "
                           f"'{_state.builder.name}': calling one kernel from another is not supported")
        _state.builder = self.builder
        return self.builder

    def __exit__(self, *exc: Any) -> None:
        _state.builder = None
