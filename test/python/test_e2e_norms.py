"""End to end, normalisation layers and softmax training: trnc against eager.

Layer and group norm reach the compiler as PyTorch's decompositions
(python/trnc/decomp_reductions.py): var_mean plus elementwise ops; batch norm
(training, eval and its backward) as one node each, expanded by the graph
importer (compiler/lib/Import/BatchNormImporters.cpp); softmax's backward is
the core table's mul/sum/sub.
"""

import json

import pytest
import torch

import trnc
from helpers import check_against_eager, compile_neuron, needs_native

pytestmark = needs_native

TOL = {"atol": 1e-4, "rtol": 1e-4}


@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((130, 4, 20), 1), ((6, 9), 0)])
def test_softmax_backward(shape, dim):
    check_against_eager(lambda t: torch.softmax(t, dim), [torch.randn(shape) * 3], **TOL)


def test_log_softmax_backward():
    check_against_eager(lambda t: torch.log_softmax(t, -1), [torch.randn(12, 50)], **TOL)


@pytest.mark.parametrize("shape", [(8, 32), (3, 5, 64)])
def test_layer_norm(shape):
    torch.manual_seed(0)
    w, b = torch.randn(shape[-1]), torch.randn(shape[-1])
    check_against_eager(lambda x, w, b: torch.nn.functional.layer_norm(x, shape[-1:], w, b),
                        [torch.randn(shape), w, b], **TOL)


def test_rms_norm():
    check_against_eager(lambda x, w: torch.nn.functional.rms_norm(x, (32,), w),
                        [torch.randn(8, 32), torch.randn(32)], **TOL)


def test_group_norm():
    check_against_eager(lambda x, w, b: torch.nn.functional.group_norm(x, 2, w, b),
                        [torch.randn(3, 8, 5), torch.randn(8), torch.randn(8)], **TOL)


def test_batch_norm_eval():
    rm, rv = torch.randn(6), torch.rand(6) + 0.5
    check_against_eager(lambda x, w, b: torch.nn.functional.batch_norm(x, rm, rv, w, b, training=False),
                        [torch.randn(10, 6), torch.randn(6), torch.randn(6)], **TOL)


def test_batch_norm_training_updates_running_stats():
    torch.manual_seed(0)
    eager = torch.nn.BatchNorm1d(6)
    ours = torch.nn.BatchNorm1d(6)
    x = torch.randn(10, 6)
    expected = eager(x)
    actual = compile_neuron(ours)(x)
    torch.testing.assert_close(actual, expected, **TOL)
    torch.testing.assert_close(ours.running_mean, eager.running_mean, **TOL)
    torch.testing.assert_close(ours.running_var, eager.running_var, **TOL)


@pytest.mark.parametrize("shape,affine", [((4, 5, 6, 7), True), ((4, 5, 6, 7), False), ((9, 6), True), ((3, 6, 11), True)])
def test_batch_norm_training_backward(shape, affine):
    """Training step: output, input/weight/bias gradients and running stats."""
    torch.manual_seed(0)
    cls = torch.nn.BatchNorm2d if len(shape) == 4 else torch.nn.BatchNorm1d
    eager = cls(shape[1], affine=affine)
    if affine:
        with torch.no_grad():
            eager.weight.uniform_(0.5, 1.5)
            eager.bias.uniform_(-1, 1)
    ours = cls(shape[1], affine=affine)
    ours.load_state_dict(eager.state_dict())
    x = torch.randn(shape) * 2 + 3  # a mean large against the spread
    xe, xo = x.clone().requires_grad_(), x.clone().requires_grad_()
    g = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    expected = eager(xe)
    actual = compile_neuron(ours)(xo)
    torch.testing.assert_close(actual, expected, **TOL)
    expected.backward(g)
    actual.backward(g)
    torch.testing.assert_close(xo.grad, xe.grad, **TOL)
    if affine:
        torch.testing.assert_close(ours.weight.grad, eager.weight.grad, **TOL)
        torch.testing.assert_close(ours.bias.grad, eager.bias.grad, **TOL)
    torch.testing.assert_close(ours.running_mean, eager.running_mean, **TOL)
    torch.testing.assert_close(ours.running_var, eager.running_var, **TOL)


def test_batch_norm_eval_backward():
    """Eval mode with gradients: native_batch_norm_backward with train=False
    (running statistics, no batch reduction in the input gradient)."""
    rm, rv = torch.randn(6), torch.rand(6) + 0.5
    check_against_eager(lambda x, w, b: torch.nn.functional.batch_norm(x, rm, rv, w, b, training=False),
                        [torch.randn(4, 6, 3, 5), torch.randn(6), torch.randn(6)], **TOL)


def test_batch_norm_is_one_node_per_direction():
    """The forward and backward graphs keep batch norm whole (the importer
    expands it): tracing PyTorch's decomposition of each one cost ~30 nodes
    and most of a batch-norm network's Python compile time."""
    graphs = {}
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    with trnc.collect.collecting(lambda g: graphs.setdefault(g.name, json.loads(g.graph_json))):
        torch._dynamo.reset()
        torch.compile(model, backend="neuron", dynamic=False)(torch.randn(2, 3, 8, 8)).sum().backward()
    targets = {name.split("_")[0]: [n["target"] for n in g["nodes"]] for name, g in graphs.items()}
    assert sorted(targets) == ["backward", "forward"]
    assert targets["forward"].count("aten._native_batch_norm_legit_functional.default") == 1
    assert targets["backward"].count("aten.native_batch_norm_backward.default") == 1
    assert "aten.var_mean.correction" not in targets["forward"]
    assert len(targets["forward"]) <= 6, targets["forward"]
