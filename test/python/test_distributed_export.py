"""Export of graphs with collectives in one process: the group's ranks and
the world size go into the graph JSON (the cache key), a missing process
group is a clear CompileError, and a world of one runs (docs/distributed.md)."""

import os
import socket

import pytest
import torch
import torch.distributed as dist
from torch.fx.experimental.proxy_tensor import make_fx

import trnc
from trnc.errors import CompileError
from trnc.graph_export import export_graph

from helpers import needs_native

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs gloo")


def _graph():
    def f(x):
        y = torch.ops._c10d_functional.all_reduce.default(x * 2, "sum", "0")
        return torch.ops._c10d_functional.wait_tensor.default(y) + 1

    return make_fx(f, tracing_mode="fake")(torch.ones(4, 8))


@pytest.fixture
def world_of_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        yield dist.group.WORLD.group_name
    finally:
        dist.destroy_process_group()


def test_no_process_group_is_a_compile_error():
    assert not dist.is_initialized()
    with pytest.raises(CompileError, match="torch.distributed is not initialized"):
        export_graph(_graph(), "forward_0")


def test_ranks_and_world_size_are_in_the_graph(world_of_one):
    graph = export_graph(_graph(), "forward_0")
    (node,) = [n for n in graph.document["nodes"] if n["target"] == "_c10d_functional.all_reduce.default"]
    assert node["kwargs"] == {"trnc_ranks": [0], "trnc_world_size": 1, "trnc_id": 0}
    assert [c.id for c in graph.collectives] == [0]


@needs_native
def test_world_of_one_runs_like_eager(world_of_one):
    import torch.distributed._functional_collectives as fc

    def g(x):
        return fc.all_reduce(x * 2, "sum", dist.group.WORLD) + 1

    x = torch.randn(4, 8)
    torch.testing.assert_close(torch.compile(g, backend="neuron")(x), g(x), rtol=0, atol=0)
