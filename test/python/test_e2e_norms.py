"""End to end, normalisation layers and softmax training: trnc against eager.

Group norm reaches the compiler as PyTorch's decomposition
(python/trnc/decomp_reductions.py): var_mean plus elementwise ops; layer norm
and batch norm (training, eval and their backwards) as one node each,
expanded by the graph importer (compiler/lib/Import/LayerNormImporters.cpp,
BatchNormImporters.cpp) into the ops those decompositions traced; softmax's
backward is the core table's mul/sum/sub.
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


def _graph_targets(model, x):
    """The ATen targets of the forward and backward graphs one compiled
    training step of `model` on `x` hands to the backend, by direction."""
    graphs = {}
    with trnc.collect.collecting(lambda g: graphs.setdefault(g.name, json.loads(g.graph_json))):
        torch._dynamo.reset()
        torch.compile(model, backend="neuron", dynamic=False)(x).sum().backward()
    targets = {name.split("_")[0]: [n["target"] for n in g["nodes"]] for name, g in graphs.items()}
    assert sorted(targets) == ["backward", "forward"]
    return targets


def test_batch_norm_is_one_node_per_direction():
    """The forward and backward graphs keep batch norm whole (the importer
    expands it): tracing PyTorch's decomposition of each one cost ~30 nodes
    and most of a batch-norm network's Python compile time."""
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    targets = _graph_targets(model, torch.randn(2, 3, 8, 8))
    assert targets["forward"].count("aten._native_batch_norm_legit_functional.default") == 1
    assert targets["backward"].count("aten.native_batch_norm_backward.default") == 1
    assert "aten.var_mean.correction" not in targets["forward"]
    assert len(targets["forward"]) <= 6, targets["forward"]


def _layer_norm_step(x, normalized, weight, bias, decomposed, monkeypatch):
    """One compiled forward + backward of layer_norm; with ``decomposed``,
    through PyTorch's decompositions of native_layer_norm and its backward
    (what trnc traced before keeping them whole)."""
    if decomposed:
        from torch._decomp import decomposition_table as torch_table
        import trnc.backend

        aten = torch.ops.aten
        table = trnc.backend.decomposition_table

        def with_torch_rules():
            t = table()
            for op in (aten.native_layer_norm.default, aten.native_layer_norm_backward.default):
                t[op] = torch_table[op]
            return t

        monkeypatch.setattr(trnc.backend, "decomposition_table", with_torch_rules)
    args = [t.detach().clone().requires_grad_() if t is not None else None for t in (x, weight, bias)]
    torch._dynamo.reset()
    out = compile_neuron(lambda x, w, b: torch.nn.functional.layer_norm(x, normalized, w, b))(*args)
    out.backward(torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(out.dtype))
    monkeypatch.undo()
    return [out.detach()] + [a.grad for a in args if a is not None]


@pytest.mark.parametrize("shape,k,weight,bias,dtype", [
    ((2, 9, 48), 1, True, True, torch.float32),
    ((3, 5, 6, 7), 2, True, False, torch.float32),  # normalized over [6, 7]
    ((4, 40), 1, False, True, torch.float32),
    ((6, 33), 1, False, False, torch.float32),
    ((5, 12), 2, True, True, torch.float32),  # no outer dims: per-element weight grads
    ((4, 3, 64), 1, True, True, torch.bfloat16),
    ((0, 4), 1, True, True, torch.float32),  # no rows (an OpInfo sample)
])
def test_layer_norm_whole_matches_its_decomposition(shape, k, weight, bias, dtype, monkeypatch):
    """native_layer_norm and its backward reach the importer whole
    (LayerNormImporters.cpp), which builds the ops PyTorch's decompositions
    traced: same results, bit for bit, as the decomposed graph, and eager's
    within tolerance."""
    torch.manual_seed(0)
    x = (torch.randn(shape) * 2 + 3).to(dtype)  # a mean large against the spread
    w = torch.randn(shape[-k:]).to(dtype) if weight else None
    b = torch.randn(shape[-k:]).to(dtype) if bias else None
    whole = _layer_norm_step(x, shape[-k:], w, b, False, monkeypatch)
    decomposed = _layer_norm_step(x, shape[-k:], w, b, True, monkeypatch)
    for a, e in zip(whole, decomposed):
        torch.testing.assert_close(a, e, atol=0, rtol=0)
    args = [t.detach().clone().requires_grad_() if t is not None else None for t in (x, w, b)]
    ref = torch.nn.functional.layer_norm(args[0], shape[-k:], args[1], args[2])
    ref.backward(torch.randn(ref.shape, generator=torch.Generator().manual_seed(1)).to(ref.dtype))
    tol = TOL if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}
    for a, e in zip(whole, [ref.detach()] + [t.grad for t in args if t is not None]):
        torch.testing.assert_close(a, e, **tol)


def test_layer_norm_is_one_node_per_direction():
    """Layer norm stays whole in both graphs, like batch norm: PyTorch's
    decompositions traced ~18 nodes forward and ~15 backward per layer norm,
    the largest cost of trnc's own rules in a transformer's first compile."""
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU())
    targets = _graph_targets(model, torch.randn(4, 16))
    assert targets["forward"].count("aten.native_layer_norm.default") == 1
    assert targets["backward"].count("aten.native_layer_norm_backward.default") == 1
    assert "aten.var_mean.correction" not in targets["forward"]
    assert len(targets["forward"]) <= 6, targets["forward"]
