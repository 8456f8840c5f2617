"""Instructions of a traced kernel: deferred values, operand checks, nisa text.

An ``nl.*`` call returns a :class:`Deferred`: the instruction that computes it,
not yet emitted. Assigned (``t[...] = nl.exp(x)``) it is emitted straight into
the target; accumulated into PSUM (``acc += nisa.nc_matmul(a, b)``) it becomes an
accumulating matmul; used as an operand it is materialized into a fresh tile of
its default buffer. Only one value is ever pending, and any other instruction
materializes it first, so program order is the kernel's order. ``nl.zeros`` in
PSUM leaves the memset pending too: a first matmul covering the whole tile then
overwrites instead of accumulating, as the NKI compiler does.

Every emitter checks the hardware rule the nisa verifier would (so the error
names the kernel line in Python terms) and appends one instruction.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ._tracer import FLOAT32, DType, View, active, fail, user_frame

_FLOAT_TYPES = {"f32", "bf16", "f16"}


class Deferred:
    """An instruction's result before it has a destination."""

    def __init__(self, shape: tuple, dtype: DType, space: str, fill: Callable[[View], None],
                 what: str, accumulate: Optional[Callable[[View], None]] = None) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.space = space
        self.fill = fill  # emit into a destination view
        self.accumulate_into = accumulate  # emit as an accumulation (matmul), if possible
        self.what = what
        self.view: Optional[View] = None
        self.origin = user_frame()  # the kernel line that asked for it
        builder = active()
        flush(builder)
        builder.pending = self

    @property
    def buffer_kind(self) -> str:
        return self.space

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def materialize(self) -> View:
        if self.view is None:
            builder = active()
            if builder.pending is self:
                builder.pending = None
            with builder.at(self.origin):
                self.view = new_tile(self.shape, self.dtype, self.space)
                self.fill(self.view)
        return self.view

    def __getitem__(self, key: Any) -> View:
        return self.materialize()[key]

    def __repr__(self) -> str:
        return f"<trnc.nki {self.what} result {list(self.shape)} {self.dtype.name}>"

    # Arithmetic as on tiles.
    def __add__(self, o: Any) -> Any:
        return self.materialize() + o

    def __radd__(self, o: Any) -> Any:
        return o + self.materialize()

    def __sub__(self, o: Any) -> Any:
        return self.materialize() - o

    def __rsub__(self, o: Any) -> Any:
        return o - self.materialize()

    def __mul__(self, o: Any) -> Any:
        return self.materialize() * o

    def __rmul__(self, o: Any) -> Any:
        return o * self.materialize()

    def __truediv__(self, o: Any) -> Any:
        return self.materialize() / o

    def __neg__(self) -> Any:
        return -self.materialize()


def flush(builder: Any) -> None:
    """Materialize the pending value (before any other instruction)."""
    pending = builder.pending
    if pending is not None:
        builder.pending = None
        pending.materialize()


def new_tile(shape: tuple, dtype: DType, space: str) -> View:
    """A fresh on-chip tile of `shape` (first dim on partitions)."""
    if space == "hbm":
        fail("a result cannot be placed in HBM directly: store it with nl.store")
    if not shape:
        shape = (1, 1)
    if len(shape) == 1:
        shape = (shape[0], 1)
    free = 1
    for s in shape[1:]:
        free *= s
    buf = active().tile(space, shape[0], free, dtype)
    dims = []
    stride = 1
    for s in reversed(shape[1:]):
        dims.append((s, stride))
        stride *= s
    return View(buf, 0, [(shape[0], free)] + list(reversed(dims)))


def operand(x: Any, what: str) -> View:
    """A View for an instruction operand (Deferred values are materialized)."""
    if isinstance(x, Deferred):
        return x.materialize()
    if isinstance(x, View):
        return x
    fail(f"{what} must be a tensor, got {type(x).__name__} {x!r}")


def _touch(view: View, written: bool = False, whole: bool = False) -> None:
    """A zero-pending PSUM tile gets its memset before its first other use."""
    buf = view.buffer
    if written:
        buf.written = True
    if not buf.zero_pending:
        return
    buf.zero_pending = False
    if written and whole and _covers(view):
        return
    full = View(buf, 0, [(buf.partitions, buf.elements), (buf.elements, 1)])
    _emit_memset(full, 0.0, "vector")


def _covers(view: View) -> bool:
    buf = view.buffer
    return view.offset == 0 and view.numel() == buf.partitions * buf.elements and _is_dense(view)


def _is_dense(view: View) -> bool:
    expected = 1
    for size, stride in reversed(view.dims):
        if size > 1 and stride != expected:
            return False
        expected *= size
    return True


def _type(view: View) -> str:
    return view.buffer.mlir_type()


def _f32(value: float) -> str:
    return f"{float(value):.9e}"


def same_shape(dst: View, src: View, what: str) -> View:
    """`src` shaped like `dst`: equal shapes, or size-1 free dims broadcast (stride 0)."""
    if dst.partition_count() != src.partition_count():
        if src.partition_count() == 1 and dst.partition_count() > 1:
            fail(f"{what}: cannot broadcast 1 partition to {dst.partition_count()} on a compute engine "
                 "(no partition stride on chip); load the data onto every partition")
        fail(f"{what}: {src.partition_count()} partitions, expected {dst.partition_count()} "
             f"(shapes {list(src.shape)} vs {list(dst.shape)})")
    if src.free_elements() == dst.free_elements():
        return src
    if len(src.dims) == len(dst.dims) and all(s == d or s == 1 for (s, _), (d, _) in zip(src.dims[1:], dst.dims[1:])):
        dims = [src.dims[0]] + [(d, st if s == d else 0) for (s, st), (d, _) in zip(src.dims[1:], dst.dims[1:])]
        return View(src.buffer, src.offset, dims)
    fail(f"{what}: shape {list(src.shape)} does not match {list(dst.shape)}")


def check_on_chip(view: View, what: str, spaces: tuple = ("sbuf", "psum")) -> None:
    if view.buffer.space not in spaces:
        fail(f"{what} must be in {' or '.join(s.upper() for s in spaces)}, not {view.buffer.space.upper()}"
             + (" (nl.load it first)" if view.buffer.space == "hbm" else ""))


# ----------------------------------------------------------------------------
# Assignment and accumulation
# ----------------------------------------------------------------------------


def assign(dst: View, value: Any) -> None:
    """dst[...] = value."""
    builder = active()
    if isinstance(value, Deferred) and value.view is None:
        if builder.pending is value:
            builder.pending = None
        with builder.at(value.origin):
            value.fill(dst)
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        check_on_chip(dst, "the destination of a constant")
        emit_memset(dst, float(value))
        return
    src = operand(value, "the assigned value")
    if dst.buffer.on_chip and src.buffer.on_chip:
        emit_copy(dst, src)
    else:
        emit_dma(dst, src)


def accumulate(dst: View, value: Any) -> None:
    """dst += value: a matmul accumulates in PSUM; anything else is an add."""
    builder = active()
    if isinstance(value, Deferred) and value.view is None and value.accumulate_into is not None \
            and dst.buffer.space == "psum":
        if builder.pending is value:
            builder.pending = None
        with builder.at(value.origin):
            value.accumulate_into(dst)
        return
    src = operand(value, "the accumulated value")
    flush(builder)
    emit_tensor_tensor("add", dst, dst, src)


# ----------------------------------------------------------------------------
# Emitters: one nisa instruction each
# ----------------------------------------------------------------------------


def emit_dma(dst: View, src: View) -> None:
    if dst.numel() != src.numel():
        fail(f"DMA of {list(src.shape)} into {list(dst.shape)}: element counts differ")
    if dst.buffer.is_input:
        fail("a kernel cannot write its input tensors: return a new nl.shared_hbm tensor")
    _touch(src)
    _touch(dst, written=True, whole=True)
    chip = dst if dst.buffer.on_chip else src if src.buffer.on_chip else None
    pair = chip.partition_count() if chip is not None else None
    active().emit(f"nisa.dma_copy {dst.ap(pair, 'DMA destination')}, {src.ap(pair, 'DMA source')} "
                 f": {_type(dst)}, {_type(src)}")


def emit_matmul(dst: View, stationary: View, moving: View, accumulate: bool, transpose: bool = False) -> None:
    check_on_chip(stationary, "the stationary operand", ("sbuf",))
    check_on_chip(moving, "the moving operand", ("sbuf",))
    if dst.buffer.space != "psum":
        fail(f"nc_matmul writes PSUM, not {dst.buffer.space.upper()} (allocate the result with buffer=nl.psum)")
    if dst.dtype.mlir != "f32":
        fail(f"nc_matmul accumulates in float32: its PSUM result must be nl.float32, not {dst.dtype.name}")
    for v, name in ((stationary, "stationary"), (moving, "moving")):
        if v.dtype.mlir not in _FLOAT_TYPES:
            fail(f"nc_matmul {name} operand is {v.dtype.name}; the Tensor Engine multiplies float32, "
                 "bfloat16 or float16")
    k, m = stationary.partition_count(), stationary.free_elements()
    k2, n = moving.partition_count(), moving.free_elements()
    if k != k2:
        fail(f"nc_matmul contraction differs: stationary has {k} partitions, moving {k2}")
    if m > 128:
        fail(f"nc_matmul stationary free size {m} exceeds 128 (nl.tile_size.gemm_stationary_fmax)")
    if n > 512:
        fail(f"nc_matmul moving free size {n} exceeds 512 (nl.tile_size.gemm_moving_fmax)")
    if dst.partition_count() != m or dst.free_elements() != n:
        fail(f"nc_matmul result is [{m}, {n}], the destination is {list(dst.shape)}")
    _touch(stationary)
    _touch(moving)
    if accumulate and dst.buffer.zero_pending and _covers(dst):
        dst.buffer.zero_pending = False
        accumulate = False  # the first write of the group overwrites the zeros
    _touch(dst, written=True, whole=not accumulate)
    builder = active()
    flush(builder)
    flags = (" accumulate" if accumulate else "") + (" transpose" if transpose else "")
    builder.emit(f"nisa.matmul {dst.ap(None, 'matmul result')}, {stationary.ap(None, 'stationary operand')}, "
                 f"{moving.ap(None, 'moving operand')}{flags} : {_type(dst)}, {_type(stationary)}, {_type(moving)}")


def identity(dtype: DType, k: int) -> View:
    """A [k, k] identity in SBUF (the moving operand of a Tensor Engine transpose), one per kernel."""
    builder = active()
    key = dtype.name
    if key not in builder.identities:
        ones = new_tile((128, 128), dtype, "sbuf")
        eye = new_tile((128, 128), dtype, "sbuf")
        _emit_memset(ones, 1.0, "gpsimd")
        builder.emit(f"nisa.affine_select is_equal {eye.ap()}, {ones.ap()}, offset = {_f32(0)}, "
                     f"coefs = [-1, 1], fill = {_f32(0)} on gpsimd : {_type(eye)}, {_type(ones)}")
        builder.identities[key] = eye
    return builder.identities[key][0:k, 0:k]


def emit_transpose(dst: View, src: View) -> None:
    """Tensor Engine transpose: dst[f, p] = src[p, f] (PSUM f32, via an identity matmul)."""
    check_on_chip(src, "the transposed tile", ("sbuf",))
    p, f = src.partition_count(), src.free_elements()
    if f > 128:
        fail(f"a Tensor Engine transpose takes at most 128 free elements, got {f}")
    if src.dtype.mlir not in _FLOAT_TYPES:
        fail(f"a Tensor Engine transpose takes float32, bfloat16 or float16, not {src.dtype.name}")
    if dst.buffer.space != "psum" or dst.dtype.mlir != "f32":
        staging = new_tile((f, p), FLOAT32, "psum")
        emit_transpose(staging, src)
        emit_copy(dst, staging)
        return
    emit_matmul(dst, src, identity(src.dtype, p), accumulate=False, transpose=True)


def emit_activation(func: str, dst: View, src: View, bias: Optional[View] = None, scale: float = 1.0,
                    bias_imm: float = 0.0) -> None:
    check_on_chip(src, "the activation input")
    check_on_chip(dst, "the activation output")
    src = same_shape(dst, src, "activation input")
    _touch(src)
    text_bias, type_bias = "", ""
    if bias is not None:
        check_on_chip(bias, "the activation bias")
        if bias.partition_count() != dst.partition_count() or bias.free_elements() != 1:
            fail(f"activation bias must be [{dst.partition_count()}, 1] (one value per partition), "
                 f"got {list(bias.shape)}")
        _touch(bias)
        text_bias, type_bias = f" bias {bias.ap(None, 'bias')}", f", {_type(bias)}"
    _touch(dst, written=True, whole=True)
    attrs = []
    if scale != 1.0:
        attrs.append(f"scale = {_f32(scale)} : f32")
    if bias_imm != 0.0:
        attrs.append(f"bias_imm = {_f32(bias_imm)} : f32")
    attr = f" {{{', '.join(attrs)}}}" if attrs else ""
    active().emit(f"nisa.activation {func} {dst.ap()}, {src.ap()}{text_bias}{attr} : {_type(dst)}, {_type(src)}"
                 f"{type_bias}")


def emit_tensor_tensor(op: str, dst: View, a: View, b: View, engine: str = "vector") -> None:
    for v, name in ((a, "first input"), (b, "second input"), (dst, "output")):
        check_on_chip(v, f"tensor_tensor {name}")
    a = same_shape(dst, a, "tensor_tensor first input")
    b = same_shape(dst, b, "tensor_tensor second input")
    if a.buffer.space == "psum" and b.buffer.space == "psum":
        fail("tensor_tensor cannot read both inputs from PSUM (copy one to SBUF first)")
    if engine == "gpsimd" and "psum" in (a.buffer.space, b.buffer.space, dst.buffer.space):
        engine = "vector"  # GpSimd has no PSUM access
    _touch(a)
    _touch(b)
    _touch(dst, written=True, whole=True)
    active().emit(f"nisa.tensor_tensor {op} {dst.ap()}, {a.ap()}, {b.ap()} on {engine} : {_type(dst)}, {_type(a)}, "
                 f"{_type(b)}")


def emit_tensor_scalar(dst: View, src: View, op0: str, imm0: float, op1: str = "bypass", imm1: float = 0.0,
                       reverse0: bool = False, reverse1: bool = False, engine: str = "vector",
                       operand0: Optional[View] = None, operand1: Optional[View] = None) -> None:
    """dst = (src op0 a) op1 b: a is `operand0` (a [P, 1] tile: one value per partition) or imm0,
    b likewise `operand1` or imm1."""
    check_on_chip(src, "tensor_scalar input")
    check_on_chip(dst, "tensor_scalar output")
    src = same_shape(dst, src, "tensor_scalar input")
    tiles = [t for t in (operand0, operand1) if t is not None]
    for t in tiles:
        check_on_chip(t, "tensor_scalar operand")
        if t.free_elements() != 1 or t.shape[0] != dst.shape[0]:
            fail(f"tensor_scalar operand must be a number or a [{dst.shape[0]}, 1] tile, got {list(t.shape)}")
    if engine == "scalar" and not {op0, op1} <= {"multiply", "add", "bypass"}:
        engine = "vector"  # the Scalar engine's ALU only multiplies and adds
    if engine == "gpsimd" and "psum" in [v.buffer.space for v in (src, dst, *tiles)]:
        engine = "vector"
    for v in (src, *tiles):
        _touch(v)
    _touch(dst, written=True, whole=True)
    flags = [f for f, on in (("reverse0", reverse0), ("reverse1", reverse1)) if on]
    attr = f" {{{', '.join(flags)}}}" if flags else ""
    per0 = f" per_partition {operand0.ap()}" if operand0 is not None else ""
    per1 = f" per_partition {operand1.ap()} : {_type(operand1)}" if operand1 is not None else ""
    type0 = f", {_type(operand0)}" if operand0 is not None else ""
    active().emit(f"nisa.tensor_scalar {dst.ap()}, {src.ap()} {op0} {_f32(imm0)}{per0}, {op1} {_f32(imm1)}{per1}"
                 f" on {engine}{attr} : {_type(dst)}, {_type(src)}{type0}")


def emit_tensor_reduce(op: str, dst: View, src: View) -> None:
    """Reduce the innermost free dim of `src` (after merging contiguous dims)."""
    check_on_chip(src, "tensor_reduce input")
    check_on_chip(dst, "tensor_reduce output")
    _touch(src)
    _touch(dst, written=True, whole=True)
    active().emit(f"nisa.tensor_reduce {op} {dst.ap()}, {src.ap(keep_last=True)} on vector : {_type(dst)}, {_type(src)}")


def emit_copy(dst: View, src: View, engine: Optional[str] = None) -> None:
    check_on_chip(src, "the copied tile")
    check_on_chip(dst, "the copy destination")
    src = same_shape(dst, src, "copy source")
    if engine is None:
        # PSUM -> SBUF copies go to the Scalar engine (ACT), as the lowering does.
        engine = "scalar" if src.buffer.space == "psum" else "vector"
    if engine == "gpsimd" and "psum" in (src.buffer.space, dst.buffer.space):
        engine = "vector"
    _touch(src)
    _touch(dst, written=True, whole=True)
    active().emit(f"nisa.tensor_copy {dst.ap()}, {src.ap()} on {engine} : {_type(dst)}, {_type(src)}")


def _emit_memset(dst: View, value: float, engine: str) -> None:
    active().emit(f"nisa.memset {dst.ap()}, {_f32(value)} on {engine} : {_type(dst)}")


def emit_memset(dst: View, value: float, engine: str = "vector") -> None:
    check_on_chip(dst, "memset destination")
    if engine == "gpsimd" and dst.buffer.space == "psum":
        engine = "vector"
    _touch(dst, written=True, whole=True)
    _emit_memset(dst, value, engine)


def emit_iota(dst: View, base: float, scale: float, partition_coef: int, free_coef: int) -> None:
    check_on_chip(dst, "iota destination", ("sbuf",))
    _touch(dst, written=True, whole=True)
    active().emit(f"nisa.iota {dst.ap()}, base = {_f32(base)}, scale = {_f32(scale)}, coefs = [{partition_coef}, "
                 f"{free_coef}] on gpsimd : {_type(dst)}")


def emit_affine_select(op: str, dst: View, src: View, offset: float, partition_coef: int, free_coef: int,
                       fill_value: float) -> None:
    check_on_chip(src, "affine_select input", ("sbuf",))
    check_on_chip(dst, "affine_select output", ("sbuf",))
    src = same_shape(dst, src, "affine_select input")
    _touch(src)
    _touch(dst, written=True, whole=True)
    active().emit(f"nisa.affine_select {op} {dst.ap()}, {src.ap()}, offset = {_f32(offset)}, coefs = "
                 f"[{partition_coef}, {free_coef}], fill = {_f32(fill_value)} on gpsimd : {_type(dst)}, {_type(src)}")
