"""trnc.nki kernels as PyTorch custom ops, lowered inside backend="neuron" graphs.

``op = trnc.nki.custom_op(kernel)`` registers ``trnc_nki::<name>``: called eagerly
it runs the kernel on the simulator; inside ``torch.compile(backend="neuron")`` the
graph exporter writes it as a ``trnc.nki_kernel`` node carrying the kernel traced
for that node's shapes (nisa text), which the compiler splices into the graph's
program (passes/Tile/LowerKernel.cpp) instead of breaking the graph. The traced
text is part of the graph JSON, so it is part of the artifact's cache key. A
backward, when given, is registered with ``register_autograd`` (it is traced by
AOTAutograd like any other code, and may call other kernels).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import torch

from ._kernel import Kernel
from ._tracer import NkiError

__all__ = ["custom_op", "kernel_node"]

NAMESPACE = "trnc_nki"
_KERNELS: dict[str, Kernel] = {}  # "trnc_nki.<name>.default" (the FX target's name) -> kernel


def custom_op(kernel: Kernel, name: Optional[str] = None, *, backward: Optional[Callable] = None,
              setup_context: Optional[Callable] = None) -> Any:
    """Register `kernel` (one tensor out, tensors in) as the torch custom op ``trnc_nki::name``."""
    if not isinstance(kernel, Kernel):
        raise NkiError(f"trnc.nki.custom_op takes a @trnc.nki.jit kernel, got {kernel!r}")
    name = name or kernel.fn.__name__
    params = list(inspect.signature(kernel.fn).parameters)
    schema = "(" + ", ".join(f"Tensor {p}" for p in params) + ") -> Tensor"

    def run(*args: torch.Tensor) -> torch.Tensor:
        out = kernel(*args)
        if isinstance(out, tuple):
            raise NkiError(f"trnc.nki.custom_op: kernel '{name}' returns {len(out)} tensors; a custom op "
                           "kernel returns one")
        return out

    op = torch.library.custom_op(f"{NAMESPACE}::{name}", run, mutates_args=(), schema=schema)

    @op.register_fake
    def _(*args: torch.Tensor) -> torch.Tensor:
        traced = kernel.trace(*args)
        if len(traced.outputs) != 1:
            raise NkiError(f"trnc.nki.custom_op: kernel '{name}' returns {len(traced.outputs)} tensors; a custom op "
                           "kernel returns one")
        shape, dtype = traced.outputs[0]
        return args[0].new_empty(shape, dtype=dtype)

    if backward is not None:
        op.register_autograd(backward, setup_context=setup_context)
    _KERNELS[f"{NAMESPACE}.{name}.default"] = kernel
    return op


def kernel_node(target: str, args: tuple) -> Optional[dict]:
    """For the graph exporter: the kwargs of a ``trnc.nki_kernel`` node for a call of the custom
    op named `target` on these FX args (their ``meta["val"]``), or None if `target` is not one."""
    kernel = _KERNELS.get(target)
    if kernel is None:
        return None
    vals = [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in args]
    if not all(isinstance(v, torch.Tensor) for v in vals):
        raise NkiError(f"trnc.nki kernel '{target}' called with a non-tensor argument in a graph")
    traced = kernel.trace(*vals)
    return {"name": {"str": target}, "kernel": {"str": traced.mlir}}
