"""torch.compile's default dynamic=None with the neuron backend (python/trnc/per_shape.py).

After ``torch.compiler.set_default_backend("neuron")`` users write ``torch.compile(model)``;
the second batch size makes Dynamo mark the batch dimension dynamic. trnc compiles that
graph once per concrete shape at call time (cached), says so on the ``trnc`` log, and
matches eager in outputs and gradients. ``dynamic=True`` stays refused (test_errors.py).
"""

from __future__ import annotations

import logging

import pytest
import torch

import trnc

from helpers import BACKEND, mlp, needs_native, trnc_error

pytestmark = needs_native


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def default_backend():
    torch.compiler.set_default_backend(BACKEND)
    yield
    torch.compiler.set_default_backend("inductor")


def _step(model: torch.nn.Module, x: torch.Tensor):
    out = model(x)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return out.detach(), grads


@pytest.fixture
def trnc_log():
    """Records of the `trnc` logger at INFO (torch._logging's loggers do not propagate)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("trnc")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_readme_example_three_batch_sizes(default_backend, trnc_log) -> None:
    eager = mlp()
    compiled = torch.compile(mlp())  # dynamic=None, the default backend
    trnc.neuron.stats.reset()
    for batch in (32, 16, 8, 16):
        x = torch.randn(batch, 64)
        out, grads = _step(compiled, x)
        want, want_grads = _step(eager, x)
        torch.testing.assert_close(out, want)
        for g, w in zip(grads, want_grads):
            torch.testing.assert_close(g, w)
    # Batch 32: a static graph; 16 and 8: the dynamic graph, one static forward and
    # backward for each; the second 16 reuses its compilation.
    assert trnc.neuron.stats.counts == {"forward": 3, "backward": 3}, dict(trnc.neuron.stats.counts)
    said = [r.getMessage() for r in trnc_log if "per concrete input shape" in r.getMessage()]
    assert len(said) == 1, said
    assert "dynamic=None" in said[0]


def test_symbolic_view_size_is_specialised_per_shape() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0] // 2, -1) * 2.0  # a SymInt input feeding a view size

    compiled = torch.compile(fn, backend=BACKEND)
    for rows in (4, 6, 8):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(compiled(x), fn(x))


def test_inference_under_no_grad_and_grad_use_separate_compilations() -> None:
    model = mlp()
    compiled = torch.compile(model, backend=BACKEND)
    compiled(torch.randn(4, 64))
    for batch in (5, 6):
        x = torch.randn(batch, 64)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x))
        torch.testing.assert_close(compiled(x), model(x))


def test_dynamic_true_is_still_refused() -> None:
    compiled = torch.compile(lambda x: x + 1, backend=BACKEND, dynamic=True)
    with pytest.raises(Exception) as excinfo:
        compiled(torch.randn(3, 4))
    assert isinstance(trnc_error(excinfo), trnc.CompileError)
    assert "dynamic=False" in str(trnc_error(excinfo))
