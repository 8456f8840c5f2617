"""The ``target`` option end to end: the MLP on trn1, trn2 and trn3.

``torch.compile(..., options={"target": ...})`` reaches the compiler (which
tiles against that target's SBUF size and matmul limits) and the simulator
(which times the program with that target's clocks and bandwidths). Results
must equal eager on every target; simulated times must differ between
targets whose machine models differ.
"""

import copy

import pytest
import torch

from helpers import compile_neuron, mlp, needs_native

pytestmark = needs_native


def _forward_backward(model, x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss.detach(), [p.grad.detach().clone() for p in model.parameters()]


def _batch():
    gen = torch.Generator().manual_seed(7)
    return torch.randn(32, 64, generator=gen), torch.randint(0, 10, (32,), generator=gen)


@pytest.mark.parametrize("target", ["trn1", "trn2", "trn3"])
def test_mlp_matches_eager_on_target(target):
    torch._dynamo.reset()
    x, y = _batch()
    model = mlp()
    eager_loss, eager_grads = _forward_backward(copy.deepcopy(model), x, y)
    compiled = compile_neuron(copy.deepcopy(model), options={"target": target})
    loss, grads = _forward_backward(compiled, x, y)
    torch.testing.assert_close(loss, eager_loss)
    torch.testing.assert_close(grads, eager_grads)


def test_unknown_target_is_refused():
    torch._dynamo.reset()
    with pytest.raises(Exception, match="unknown target 'trn9'"):
        compile_neuron(torch.nn.Linear(4, 4), options={"target": "trn9"})(torch.randn(2, 4))


def test_targets_differ_in_simulated_time():
    profiling = pytest.importorskip("trnc.profiling")
    if not hasattr(profiling, "capture"):
        pytest.skip("trnc.profiling.capture is not available yet")
    x, y = _batch()
    times = {}
    for target in ("trn1", "trn3"):
        torch._dynamo.reset()
        compiled = compile_neuron(copy.deepcopy(mlp()), options={"target": target})
        _forward_backward(compiled, x, y)  # compile outside the capture
        with profiling.capture() as capture:
            _forward_backward(compiled, x, y)
        if not capture.graphs:
            pytest.skip("compiled graphs do not report profiles yet")
        times[target] = capture.total_ns
    assert times["trn1"] > 0 and times["trn3"] > 0
    assert times["trn1"] != times["trn3"]
