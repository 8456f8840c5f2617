"""Python-int counters in a graph compiled with dynamic=None (python/trnc/host_ints.py).

Dynamo makes an int attribute that changes between calls a SymInt graph input and
returns its update (``counter += 1``) as a graph output. When no tensor depends on
it, trnc compiles the tensor part once and evaluates the int arithmetic on the call's
ints: one graph for every later value, the counter advanced as in eager. An int that
feeds a tensor stays refused as symbolic (static shapes only).
"""

from __future__ import annotations

import pytest
import torch

import trnc

from helpers import BACKEND, needs_native, trnc_error

pytestmark = needs_native


class Counter:
    def __init__(self) -> None:
        self.n = 0


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_counter_read_by_guards_only_compiles_once() -> None:
    state = Counter()

    def step(x: torch.Tensor) -> torch.Tensor:
        full = state.n >= 100  # a guard (n <= 99), not a graph value
        state.n += 1
        return x * 3.0 if full else x * 2.0 + 1.0

    compiled = torch.compile(step, backend=BACKEND, dynamic=None)
    x = torch.randn(4, 8)
    trnc.neuron.stats.reset()
    for i in range(5):
        torch.testing.assert_close(compiled(x), x * 2.0 + 1.0)
        assert state.n == i + 1
    # n = 0 specialises the first graph; from n = 1 on the counter is a SymInt input.
    assert sum(trnc.neuron.stats.counts.values()) == 2, dict(trnc.neuron.stats.counts)


def test_counter_feeding_a_tensor_is_refused() -> None:
    state = Counter()

    def step(x: torch.Tensor) -> torch.Tensor:
        state.n += 1
        return x + state.n  # the int is a graph value: a symbolic scalar

    compiled = torch.compile(step, backend=BACKEND, dynamic=None)
    x = torch.randn(4, 8)
    torch.testing.assert_close(compiled(x), x + 1)  # n = 1: specialised
    with pytest.raises(Exception) as excinfo:
        compiled(x)
    assert isinstance(trnc_error(excinfo), trnc.CompileError)
    assert "symbolic" in str(trnc_error(excinfo))
