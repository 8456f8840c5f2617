"""Graph export (FX -> graph JSON) on known small graphs; needs no compiler."""

import json
import math
import operator

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd

import trnc
from trnc.decompositions import decomposition_table
from trnc.graph_export import export_graph

HERE = __file__


def capture(fn, *inputs, dynamic=False):
    """AOTAutograd graphs of fn (as trnc would see them), keyed by kind."""
    graphs = {}

    def keep(kind):
        def compiler(gm, example_inputs):
            graphs[kind] = gm
            return gm  # run the graph itself (unboxed is fine here)

        return compiler

    from functorch.compile import make_boxed_compiler

    backend = aot_autograd(
        fw_compiler=make_boxed_compiler(keep("forward")),
        bw_compiler=make_boxed_compiler(keep("backward")),
        decompositions=decomposition_table(),
    )
    out = torch.compile(fn, backend=backend, dynamic=dynamic)(*inputs)
    if isinstance(out, torch.Tensor) and out.requires_grad:
        out.sum().backward()
    return graphs


def linear_relu(x, w, b):
    return torch.relu(torch.nn.functional.linear(x, w, b))  # EXPORT-LINE


def test_forward_document_shape_and_contents():
    x, w, b = torch.randn(8, 16), torch.randn(4, 16, requires_grad=True), torch.randn(4, requires_grad=True)
    doc = export_graph(capture(linear_relu, x, w, b)["forward"], "forward_0").document
    assert doc["schema"] == "trnc.graph" and doc["version"] == 1 and doc["name"] == "forward_0"
    assert [i["shape"] for i in doc["inputs"]] == [[8, 16], [4, 16], [4]]
    assert all(set(i) == {"name", "shape", "stride", "dtype"} for i in doc["inputs"])
    assert doc["inputs"][1] == {"name": "primals_2", "shape": [4, 16], "stride": [16, 1], "dtype": "float32"}
    targets = [n["target"] for n in doc["nodes"]]
    assert targets[:3] == ["aten.t.default", "aten.addmm.default", "aten.relu.default"]
    t, addmm = doc["nodes"][0], doc["nodes"][1]
    assert t["args"] == [{"node": "primals_2"}]
    assert t["meta"] == {"shape": [16, 4], "stride": [1, 16], "dtype": "float32"}
    assert addmm["args"] == [{"node": "primals_3"}, {"node": "primals_1"}, {"node": t["name"]}]
    line = next(i for i, s in enumerate(open(HERE), 1) if s.rstrip().endswith("# EXPORT-LINE"))
    assert addmm["loc"]["file"] == HERE and addmm["loc"]["line"] == line
    assert addmm["loc"]["code"].startswith("return torch.relu(torch.nn.functional.linear(x, w, b))")
    assert "line" in addmm["stack_trace"]
    assert doc["outputs"][0]["node"] == "relu" and doc["outputs"][0]["shape"] == [8, 4]
    json.loads(json.dumps(doc))  # plain JSON, no NaN


def test_backward_graph_has_locations_and_tangents():
    x, w, b = torch.randn(8, 16), torch.randn(4, 16, requires_grad=True), torch.randn(4, requires_grad=True)
    graph = export_graph(capture(linear_relu, x, w, b)["backward"], "backward_0")
    names = [i["name"] for i in graph.document["inputs"]]
    assert any(n.startswith("tangents") for n in names)
    targets = {n["target"] for n in graph.document["nodes"]}
    assert "aten.threshold_backward.default" in targets and "aten.mm.default" in targets
    assert all(n["loc"] and n["loc"]["file"] == HERE for n in graph.document["nodes"])
    # grad of x is None (x does not require grad): returned directly, not compiled
    assert ("none",) in graph.output_plan or len(graph.output_plan) == 2


def test_scalar_dtype_and_special_float_encoding():
    def fn(x):
        return (x * 2.5 + float("inf")).to(torch.bfloat16) * 3

    graph = export_graph(capture(fn, torch.randn(3, 5))["forward"], "forward_0")
    nodes = graph.document["nodes"]
    mul = next(n for n in nodes if n["target"] == "aten.mul.Tensor")
    assert mul["args"][1] == 2.5
    add = next(n for n in nodes if n["target"] == "aten.add.Tensor")
    assert add["args"][1] == {"float": "inf"}
    cast = next(n for n in nodes if n["target"] == "aten._to_copy.default")
    assert cast["kwargs"]["dtype"] == {"dtype": "bfloat16"}
    assert graph.document["outputs"][0]["dtype"] == "bfloat16"
    assert "Infinity" not in graph.to_json()


def test_input_or_none_returned_as_output_is_not_compiled():
    from torch.fx.experimental.proxy_tensor import make_fx

    def fn(x, y):
        return x, y * 2, None

    gm = make_fx(fn, tracing_mode="fake")(torch.randn(4), torch.randn(4))
    graph = export_graph(gm, "forward_0")
    assert graph.output_plan == [("input", 0), ("program", 0), ("none",)]
    assert len(graph.document["outputs"]) == 1


def test_views_of_inputs_and_outputs_are_not_compiled():
    # A saved t(W) and a reshaped activation also returned whole: rebuilt by
    # the caller as views (as eager returns them), not copied by the program.
    from torch.fx.experimental.proxy_tensor import make_fx

    def fn(w, x):
        h = x * 2
        return w.t(), h, h.view(2, 8), h[1:]

    gm = make_fx(fn, tracing_mode="fake")(torch.randn(3, 5), torch.randn(16))
    graph = export_graph(gm, "forward_0")
    assert graph.output_plan == [
        ("view", "input", 0, (5, 3), (1, 5), 0),
        ("program", 0),
        ("view", "program", 0, (2, 8), (8, 1), 0),
        ("view", "program", 0, (15,), (1,), 1),
    ]
    assert len(graph.document["outputs"]) == 1


def test_views_of_one_unreturned_tensor_share_one_program_output():
    # q, k and v split from one projection and saved: the projection is
    # returned once and each split rebuilt as a view of it, not copied.
    from torch.fx.experimental.proxy_tensor import make_fx

    def fn(x):
        qkv = x * 2
        q, k, v = qkv.split(4, dim=1)
        return q.t(), k, v

    gm = make_fx(fn, tracing_mode="fake")(torch.randn(3, 12))
    graph = export_graph(gm, "forward_0")
    assert graph.output_plan == [
        ("view", "program", 0, (4, 3), (1, 12), 0),
        ("view", "program", 0, (3, 4), (12, 1), 4),
        ("view", "program", 0, (3, 4), (12, 1), 8),
    ]
    assert [o["shape"] for o in graph.document["outputs"]] == [[3, 12]]


def test_split_outputs_match_eager():
    from helpers import compile_neuron

    def fn(x):
        q, k, v = (x * 2).split(4, dim=1)
        return q, k + 0, v

    x = torch.randn(3, 12)
    q, k, v = compile_neuron(fn)(x)
    for a, b in zip((q, k, v), fn(x)):
        torch.testing.assert_close(a, b)
    assert q.data_ptr() + 8 * 4 == v.data_ptr()  # views of one buffer, as eager


def test_view_outputs_alias_like_eager():
    from helpers import compile_neuron

    def fn(w, x):
        h = x * 2
        return w.t(), h, h.view(2, 8)

    w, x = torch.randn(3, 5), torch.randn(16)
    wt, h, hv = compile_neuron(fn)(w, x)
    torch.testing.assert_close(wt, w.t())
    torch.testing.assert_close(hv, (x * 2).view(2, 8))
    assert wt.data_ptr() == w.data_ptr() and wt.stride() == (1, 5)
    assert hv.data_ptr() == h.data_ptr()


def test_getitem_of_multi_output_node_is_an_index_reference():
    def fn(x):
        values, _ = torch.sort(x, dim=1)
        return values * 2

    # Rows over 256 elements: sort stays one node (trnc.decomp_indices).
    graph = export_graph(capture(fn, torch.randn(4, 300))["forward"], "forward_0")
    sort = next(n for n in graph.document["nodes"] if n["target"] == "aten.sort.default")
    assert isinstance(sort["meta"], list) and sort["meta"][1]["dtype"] == "int64"
    mul = next(n for n in graph.document["nodes"] if n["target"] == "aten.mul.Tensor")
    assert mul["args"][0] == {"node": sort["name"], "index": 0}


def test_symbolic_shapes_are_rejected_with_dynamic_false_hint():
    gm = capture(lambda x: x * 2, torch.randn(4, 5), dynamic=True)["forward"]
    with pytest.raises(trnc.CompileError, match=r"dynamic=False"):
        export_graph(gm, "forward_0")
