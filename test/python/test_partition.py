"""trnc's forward/backward partition (python/trnc/partition.py): AOTAutograd's default
partition, except that forward values made from no input are recomputed by the
backward instead of saved. Checked on the graphs AOTAutograd hands each compiler
(aot_function, no native build needed) and end to end: a position embedding's
positions recomputed, its gradient then an add instead of a scatter (trn.scatter_rows
of an arange over every row, TrnIndexingPatterns.cpp), gradients against eager.
"""

import torch
from functorch.compile import aot_function, make_boxed_func

import trnc
from helpers import compile_neuron, needs_native
from trnc.partition import partition


def _graphs(fn, *inputs, partition_fn=partition):
    """Forward and backward FX graphs of `fn` split by `partition_fn` (trnc's)."""
    graphs = {}

    def keep(kind):
        def compiler(gm, _):
            graphs[kind] = gm
            return make_boxed_func(gm.forward)
        return compiler

    out = aot_function(fn, fw_compiler=keep("forward"), bw_compiler=keep("backward"),
                       partition_fn=partition_fn)(*inputs)
    out.sum().backward()
    return graphs["forward"], graphs["backward"]


def _targets(gm):
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _saved(gm):
    """Names of the forward's outputs past the user's (the saved values)."""
    (outputs,) = [n.args[0] for n in gm.graph.nodes if n.op == "output"]
    return [str(o) for o in outputs[1:]]


def test_an_arange_the_backward_reads_is_recomputed_not_saved():
    x = torch.randn(8, requires_grad=True)
    fw, bw = _graphs(lambda x: (x * torch.arange(8.0)).sin(), x)
    assert not any("arange" in s for s in _saved(fw))
    assert any("arange" in t for t in _targets(bw))
    assert any("arange" in t for t in _targets(fw))  # the forward still computes its own


def test_a_chain_of_input_free_ops_is_recomputed_whole():
    x = torch.randn(6, 6, requires_grad=True)
    fw, bw = _graphs(lambda x: (x * torch.ones(6, 6).triu()).exp(), x)
    assert not any("ones" in s or "triu" in s for s in _saved(fw))
    assert {"aten.ones.default", "aten.triu.default"} <= set(_targets(bw))


def test_a_random_value_is_saved_not_recomputed():
    # The backward must see the forward's exact mask: a random op is never cloned.
    x = torch.randn(64, requires_grad=True)
    fw, bw = _graphs(lambda x: (x * (torch.rand(64) > 0.5)).exp(), x)
    assert "gt" in _saved(fw)  # the mask
    # (The default partitioner leaves a dead copy of the rand in the backward.)
    assert all(not n.users for n in bw.graph.nodes if "rand" in str(n.target))


def test_the_graph_is_unchanged_without_input_free_values():
    # Nothing made from no input: the same split as AOTAutograd's default partition.
    from functorch.compile import default_partition

    fn = lambda x: (x.sin() * x).exp()  # noqa: E731
    x = torch.randn(8, requires_grad=True)
    fw, bw = _graphs(fn, x)
    fw_default, bw_default = _graphs(fn, x, partition_fn=default_partition)
    assert _saved(fw) == _saved(fw_default)
    assert _targets(fw) == _targets(fw_default) and _targets(bw) == _targets(bw_default)


class _Positions(torch.nn.Module):
    def __init__(self, t=24, d=16):
        super().__init__()
        self.pos = torch.nn.Embedding(t, d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        return self.proj(torch.tanh(x + self.pos(torch.arange(x.shape[1]))))


@needs_native
def test_position_embedding_gradient_without_a_saved_arange():
    # The backward recomputes positions = arange(T): the position embedding's
    # gradient, a scatter-add by positions into zeros, is an add (no indirect DMA).
    torch.manual_seed(0)
    model, compiled = _Positions(), _Positions()
    compiled.load_state_dict(model.state_dict())
    compiled = compile_neuron(compiled)
    x = torch.randn(3, 24, 16)
    model(x).square().mean().backward()
    with trnc.profiling.capture(trace=True) as p:
        compiled(x).square().mean().backward()
    for (name, a), b in zip(compiled.named_parameters(), model.parameters()):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-6, msg=name)
    (backward,) = [g for g in p.graphs if "backward" in g.graph]
    assert "dma_indirect" not in backward.trace_json()
