"""Shared helpers for trnc's end-to-end tests: compile, compare with eager."""

from __future__ import annotations

import copy
import importlib.metadata
import os
from typing import Callable, Sequence

import pytest
import torch

import trnc

# The entry point exists only once the package is installed (pip install .);
# in-tree runs pass the backend object itself.
ENTRY_POINT_INSTALLED = "neuron" in importlib.metadata.entry_points(group="torch_dynamo_backends").names
BACKEND = "neuron" if ENTRY_POINT_INSTALLED else trnc.neuron
needs_entry_point = pytest.mark.skipif(
    not ENTRY_POINT_INSTALLED, reason="trnc is not installed (pip install --no-build-isolation .)"
)
needs_native = pytest.mark.needs_native


def compile_neuron(fn: Callable, **kwargs) -> Callable:
    return torch.compile(fn, backend=BACKEND, dynamic=False, **kwargs)


def profile_inference(fn: Callable, *inputs: torch.Tensor, **tol):
    """Compiles `fn`, checks its output against eager under no_grad (`tol`:
    assert_close's rtol/atol) and returns the trnc.profiling capture of a
    second compiled run (its hbm_bytes, simulated time)."""
    c = compile_neuron(fn)
    with torch.no_grad():
        expected = fn(*inputs)
        actual = c(*inputs)
        with trnc.profiling.capture() as p:
            c(*inputs)
    torch.testing.assert_close(actual, expected, **tol)
    return p


def trnc_error(excinfo: pytest.ExceptionInfo) -> BaseException:
    """The trnc exception behind an error: Dynamo wraps forward-compile errors
    in BackendCompilerFailed; backward errors arrive as raised."""
    exc = excinfo.value
    return getattr(exc, "inner_exception", exc)


def line_of(marker: str, path: str) -> int:
    """1-based line of the first line of `path` ending with `# <marker>`."""
    with open(path) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(f"marker {marker} not found in {path}")


def fp32_matmul_tol(*dims: int) -> dict:
    """Tolerances for float32 products contracting over up to max(dims) terms.

    The Tensor Engine (and so the simulator) accumulates in PSUM one K-tile after
    another, summing sequentially in fp32, while eager's MKL sums in blocks. Both are
    correctly rounded per step; their difference grows with the contraction length
    (measured: K=700 differs by 1.3e-4 with eager itself 6.9e-5 from the float64
    result). 4 * eps_fp32 * K bounds it with margin; small K keeps the defaults.
    """
    k = max(dims)
    return {"rtol": 1.3e-6, "atol": max(1e-5, 4 * torch.finfo(torch.float32).eps * k)}


def check_against_eager(fn: Callable, inputs: Sequence[torch.Tensor], grad: bool = True, **tol) -> None:
    """Run fn eagerly and through trnc; compare outputs and (if grad) input grads."""
    eager_in = [x.detach().clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    trnc_in = [x.detach().clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    expected = fn(*eager_in)
    actual = compile_neuron(fn)(*trnc_in)
    torch.testing.assert_close(actual, expected, **tol)
    if grad:
        # A fixed, non-uniform upstream gradient exercises the backward graph fully.
        seed = torch.Generator().manual_seed(1)
        g = torch.randn(expected.shape, generator=seed).to(expected.dtype)
        expected.backward(g)
        actual.backward(g.clone())
        for a, e in zip(trnc_in, eager_in):
            if e.grad is not None:
                torch.testing.assert_close(a.grad, e.grad, **tol)


def mlp(dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
    ).to(dtype)


def train(model: torch.nn.Module, steps: int, dtype: torch.dtype, compiled: bool):
    """SGD on seeded synthetic 10-class data; returns per-step losses and grads."""
    model = copy.deepcopy(model)
    run = compile_neuron(model) if compiled else model
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1234)
    losses, grads = [], []
    for _ in range(steps):
        x = torch.randn(32, 64, generator=gen).to(dtype)
        y = torch.randint(0, 10, (32,), generator=gen)
        loss = torch.nn.functional.cross_entropy(run(x).float(), y)
        opt.zero_grad()
        loss.backward()
        losses.append(loss.detach())
        grads.append([p.grad.detach().clone() for p in model.parameters()])
        opt.step()
    return losses, grads


def chain_graph(ops, dtype: str = "float32", name: str = "g", n: int = 8) -> str:
    """Graph JSON of one [n] input through a chain of elementwise ATen ops:
    ``ops`` is [(target, extra args), ...], e.g. [("aten.relu.default", [])]."""
    import json

    spec = {"shape": [n], "stride": [1], "dtype": dtype}
    nodes, prev = [], f"{name}_x"
    for i, (target, extra) in enumerate(ops):
        nodes.append(
            {
                "name": f"{name}_{i}",
                "target": target,
                "args": [{"node": prev}, *extra],
                "kwargs": {},
                "meta": spec,
                "loc": {"file": f"{name}.py", "line": 1 + i, "code": target},
                "stack_trace": name,
            }
        )
        prev = f"{name}_{i}"
    return json.dumps(
        {
            "schema": "trnc.graph",
            "version": 1,
            "name": name,
            "inputs": [{"name": f"{name}_x", **spec}],
            "nodes": nodes,
            "outputs": [{"node": prev, **spec}],
        }
    )
