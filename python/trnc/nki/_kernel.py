"""@trnc.nki.jit kernels: trace per input signature, compile, run on the simulator.

``kernel(a, b)`` with torch tensors traces the kernel for their shapes and dtypes
(other arguments are compile-time constants), compiles the nisa text with
``_C.compile_kernel`` (cached per signature), runs the artifact on the functional
simulator and returns torch tensors. :func:`benchmark` runs it timed and returns
the simulated latency with the same profile object ``trnc profile`` prints.
"""

from __future__ import annotations

import functools
import inspect
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from .. import profiling
from .._native import native
from ..compiled_graph import _race_check, buffer_of
from . import _emit
from ._tracer import (BFLOAT16, BOOL, FLOAT16, FLOAT32, INT8, INT32, Buffer, Builder, NkiError, Tracing, View,
                      _row_major)

__all__ = ["Kernel", "jit", "benchmark", "BenchmarkResult", "BenchmarkedKernel"]

_DTYPES = {torch.float32: FLOAT32, torch.bfloat16: BFLOAT16, torch.float16: FLOAT16, torch.int32: INT32,
           torch.int8: INT8, torch.bool: BOOL}
_TORCH = {v.name: k for k, v in _DTYPES.items()}


@dataclass
class Traced:
    """One kernel traced for one signature: its nisa text and its outputs' shapes and dtypes."""

    name: str
    target: str
    mlir: str
    outputs: list  # (shape, torch dtype)
    single: bool  # the kernel returned one tensor, not a tuple
    instructions: int
    artifact: bytes = b""  # set by Kernel.compile
    trace_seconds: float = 0.0  # wall time of tracing (Python) and of compiling (C++)
    compile_seconds: float = 0.0


class Kernel:
    """A traced NKI kernel; call it with torch tensors (see the module doc)."""

    def __init__(self, fn: Callable, target: str = "trn2", list_schedule: bool = True) -> None:
        self.fn = fn
        self.target = target
        self.list_schedule = list_schedule
        self._compiled: dict = {}
        functools.update_wrapper(self, fn)

    def with_target(self, target: str) -> "Kernel":
        """The same kernel compiled for another NeuronCore target (trn1, trn2, trn3)."""
        return Kernel(self.fn, target, self.list_schedule)

    # --- tracing and compiling ---------------------------------------------------------
    def _signature(self, args: tuple) -> tuple:
        key = []
        for a in args:
            if isinstance(a, torch.Tensor):
                key.append(("tensor", tuple(a.shape), str(a.dtype)))
            elif isinstance(a, (int, float, str, bool, type(None), tuple)):
                key.append(("const", repr(a)))
            else:
                raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}': argument of type {type(a).__name__} is "
                               "neither a torch tensor nor a Python constant")
        return tuple(key)

    def trace(self, *args: Any) -> Traced:
        """Run the kernel's Python once for these arguments' shapes and dtypes; no compile."""
        builder = Builder(self.fn.__name__, self.target)
        traced_args = []
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                traced_args.append(a)
                continue
            if a.dtype not in _DTYPES:
                raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}': input {i} has dtype {a.dtype}; trnc.nki "
                               f"kernels take {', '.join(str(d) for d in _DTYPES)}")
            n = max(a.numel(), 1)
            buf = Buffer(f"in{i}", "hbm", _DTYPES[a.dtype], n, shape=tuple(a.shape), is_input=True)
            builder.inputs.append(buf)
            traced_args.append(View(buf, 0, _row_major(a.shape)))
        with Tracing(builder):
            result = self.fn(*traced_args)
            _emit.flush(builder)
        single = not isinstance(result, (tuple, list))
        returned = [result] if single else list(result)
        outputs = []
        for j, r in enumerate(returned):
            if not isinstance(r, View) or r.buffer.on_chip or r.buffer.is_input:
                raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}' must return the HBM tensors it created "
                               f"with nl.ndarray(..., buffer=nl.shared_hbm); result {j} is {r!r}")
            if r.offset or r.dims != [tuple(d) for d in _row_major(r.buffer.shape)]:
                raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}': result {j} is a slice; return whole tensors")
            if any(r.buffer is o.buffer for o in outputs):
                raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}' returns one tensor twice")
            outputs.append(r)
        if not outputs:
            raise NkiError(f"trnc.nki: kernel '{self.fn.__name__}' returns no tensor")
        text = builder.module([o.buffer for o in outputs], [o.buffer.shape for o in outputs])
        return Traced(self.fn.__name__, self.target, text,
                      [(o.buffer.shape, _TORCH[o.dtype.name]) for o in outputs], single, builder.instructions)

    def compile(self, *args: Any) -> tuple[Traced, Any]:
        """(traced kernel, loaded _C.Executable) for these arguments, cached per signature."""
        key = self._signature(args)
        if key not in self._compiled:
            start = time.perf_counter()
            traced = self.trace(*args)
            traced.trace_seconds = time.perf_counter() - start
            result = native().compile_kernel(traced.mlir, self.target, self.list_schedule)
            traced.compile_seconds = time.perf_counter() - start - traced.trace_seconds
            if not result["ok"]:
                raise NkiError(f"trnc.nki: kernel '{traced.name}' failed to compile for {self.target}:\n"
                               f"{result['message']}")
            traced.artifact = bytes(result["artifact"])
            self._compiled[key] = (traced, native().Executable(result["artifact"]))
        return self._compiled[key]

    def write_artifact(self, path: str, *args: Any) -> str:
        """Write the compiled artifact (for `trnc inspect` / `trnc profile PATH`)."""
        traced, _ = self.compile(*args)
        with open(path, "wb") as f:
            f.write(traced.artifact)
        return path

    # --- running ----------------------------------------------------------------------------
    def run(self, *args: Any, profile: bool = False, trace: bool = False) -> tuple[Any, Any]:
        """(outputs, trnc._C.Profile or None)."""
        traced, executable = self.compile(*args)
        inputs = [a.contiguous() for a in args if isinstance(a, torch.Tensor)]
        outputs = [torch.empty(shape, dtype=dtype) for shape, dtype in traced.outputs]
        scratch = torch.empty(64, dtype=torch.uint8)
        ins, outs = [[buffer_of(t) if t.numel() else buffer_of(t, scratch.data_ptr(), 64) for t in ts]
                     for ts in (inputs, outputs)]
        checks = {"race_check": True} if _race_check() else {}
        sink = profiling.active()
        timed = profile or trace or sink is not None
        prof = executable.run(ins, outs, profile=timed, trace=trace or bool(sink and sink.trace), **checks)
        if sink is not None:
            profiling.record(traced.name, 0, prof)
        result = outputs[0] if traced.single else tuple(outputs)
        return result, prof

    def __call__(self, *args: Any) -> Any:
        return self.run(*args)[0]

    def __repr__(self) -> str:
        return f"<trnc.nki kernel {self.fn.__name__} for {self.target}>"


def jit(fn: Optional[Callable] = None, *, target: str = "trn2", list_schedule: bool = True, **kwargs: Any) -> Any:
    """Decorate an NKI kernel (``@nki.jit`` or ``@nki.jit(target="trn1")``).

    NKI's own options (``mode=``, ``platform_target=``...) are accepted; ``platform_target``
    picks the trnc target. ``list_schedule=False`` keeps the kernel's instruction order."""
    target = {"trn1": "trn1", "trn2": "trn2", "trn3": "trn3"}.get(kwargs.pop("platform_target", target), target)
    kwargs.pop("mode", None)
    kwargs.pop("show_compiler_tb", None)
    kwargs.pop("debug_kernel", None)
    if kwargs:
        raise NkiError(f"trnc.nki.jit: unsupported options {sorted(kwargs)}")

    def wrap(f: Callable) -> Kernel:
        if not inspect.isfunction(f):
            raise NkiError(f"trnc.nki.jit decorates a function, got {f!r}")
        return Kernel(f, target, list_schedule)

    return wrap(fn) if fn is not None else wrap


class _Latency:
    """NKI's ``benchmark_result.nc_latency``: percentiles in microseconds (all equal here)."""

    def __init__(self, latency_ns: float) -> None:
        self.latency_ns = latency_ns

    def get_latency_percentile(self, percentile: float) -> float:
        return self.latency_ns / 1e3


@dataclass
class BenchmarkResult:
    """A simulated run of a kernel: latency from trnc's timed NeuronCore simulator, not hardware.

    The simulator is deterministic, so every percentile equals the one run's latency."""

    kernel: str
    target: str
    latency_ns: float
    profile: profiling.GraphProfile
    instructions: int

    @property
    def latency_us(self) -> float:
        return self.latency_ns / 1e3

    @property
    def percentiles_ns(self) -> dict:
        return {p: self.latency_ns for p in ("p50", "p90", "p99")}

    @property
    def nc_latency(self) -> _Latency:
        return _Latency(self.latency_ns)

    def summary(self) -> str:
        return (f"kernel '{self.kernel}' on {self.target}: {self.latency_us:.2f} us simulated "
                f"({self.instructions} instructions)\n{self.profile.summary()}")


class BenchmarkedKernel(Kernel):
    """NKI's decorator form, ``@nki.benchmark(warmup=5, iters=10)``: each call runs timed and
    leaves its result in ``benchmark_result`` (``.nc_latency.get_latency_percentile(99)``)."""

    benchmark_result: Optional[BenchmarkResult] = None

    def __call__(self, *args: Any) -> Any:
        outputs, prof = self.run(*args, profile=True)
        traced, _ = self.compile(*args)
        self.benchmark_result = BenchmarkResult(traced.name, self.target, prof.total_ns,
                                                profiling.GraphProfile(traced.name, 0, prof), traced.instructions)
        return outputs


def benchmark(kernel: Any = None, *args: Any, target: Optional[str] = None, trace: bool = False,
              **nki_options: Any) -> Any:
    """Simulated latency and profile of one run of `kernel` on these arguments (torch tensors).

    Also NKI's decorator form: ``@nki.benchmark(warmup=..., iters=...)`` over a kernel function
    (warmup/iters/save_* are accepted and ignored: the simulator is deterministic)."""
    unknown = set(nki_options) - {"warmup", "iters", "save_neff_name", "save_trace_name", "additional_compile_opt"}
    if unknown:
        raise NkiError(f"trnc.nki.benchmark: unsupported options {sorted(unknown)}")
    if kernel is None or (not args and not isinstance(kernel, Kernel)):
        def wrap(f: Any) -> BenchmarkedKernel:
            fn = f.fn if isinstance(f, Kernel) else f
            return BenchmarkedKernel(fn, target or getattr(f, "target", "trn2"), getattr(f, "list_schedule", True))

        return wrap(kernel) if kernel is not None else wrap
    if not isinstance(kernel, Kernel):
        raise NkiError(f"trnc.nki.benchmark takes a @trnc.nki.jit kernel, got {kernel!r}")
    if target is not None and target != kernel.target:
        kernel = kernel.with_target(target)
    traced, _ = kernel.compile(*args)
    _, prof = kernel.run(*args, profile=True, trace=trace)
    return BenchmarkResult(traced.name, kernel.target, prof.total_ns, profiling.GraphProfile(traced.name, 0, prof),
                           traced.instructions)
