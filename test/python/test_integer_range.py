"""Integer intermediates past 2**24 (issue 12): the compiler's range analysis
(passes/IntegerRangeCheck.cpp) proves a graph's integer arithmetic exact in
the engines' fp32, bounds the inputs it depends on (checked at every call),
or refuses the graph naming the op and the user's line."""

import json

import pytest
import torch

import trnc
from helpers import chain_graph, compile_neuron, line_of, trnc_error


def test_scaled_integers_exact_within_the_derived_bound():
    def f(i):
        return i * 1001 + 1  # marker: scaled

    compiled = compile_neuron(f)
    inside = torch.tensor([16760, -16760, 5, 0, -3, 7, 1, 2])
    assert torch.equal(compiled(inside), f(inside))
    # 20001 * 1001 + 1 = 20021002 would come back as 20021000 from fp32.
    with pytest.raises(trnc.TrncError) as info:
        compiled(torch.tensor([20001, 5, -3, 7, 1, 2, 3, 4]))
    message = str(info.value)
    assert "input 0 (torch.int64) holds 20001, which feeds aten.mul.Tensor" in message
    assert f"test_integer_range.py:{line_of('marker: scaled', __file__)}" in message
    assert "within [-16760, 16760]" in message and "computes integers up to 16777761" in message


def test_integer_sum_bound_scales_with_the_reduced_count():
    def f(i):
        return i.sum(-1) + 1

    compiled = compile_neuron(f)
    ok = torch.full((2, 64), 262143, dtype=torch.int32)  # 64 * 262143 + 1 < 2**24
    assert torch.equal(compiled(ok), f(ok))
    with pytest.raises(trnc.TrncError, match=r"holds 300000, which feeds aten.add.*within \[-262143, 262143\]"):
        compiled(torch.full((2, 64), 300000, dtype=torch.int32))


def test_bounded_float_to_int_arithmetic_compiles_and_matches_eager():
    def f(x, steps):
        buckets = (torch.sigmoid(x) * 10).long() + 3  # [3, 13] whatever x is
        positions = torch.arange(8) * 1000 + steps[:8]
        return buckets, positions, (steps % 7) * 3

    x, steps = torch.randn(8) * 100, torch.arange(16) * 977
    got, want = compile_neuron(f)(x, steps), f(x, steps)
    for g, w in zip(got, want):
        assert torch.equal(g, w)


def test_float_input_through_a_cast_is_bounded_like_an_integer_input():
    def f(x):
        return (x * 10).long() + 3

    compiled = compile_neuron(f)
    x = torch.tensor([1.5, -2.25, 1677720.0, 0.0])
    assert torch.equal(compiled(x), f(x))
    with pytest.raises(trnc.TrncError, match=r"input 0 \(torch.float32\) holds 2000000.0.*within \[-1677721, 1677721\]"):
        compiled(torch.tensor([1.0, 2000000.0, 0.0, 0.0]))


def test_arithmetic_past_2_24_regardless_of_inputs_is_refused_with_its_line():
    def f(i):
        big = torch.full_like(i, 1000000000) + 7  # marker: big-constant
        return big + i

    with pytest.raises(Exception) as info:
        compile_neuron(f)(torch.tensor([1, 2, 3]))
    error = trnc_error(info)
    assert isinstance(error, trnc.CompileError) and error.error_kind == "unsupported_integer_range", repr(error)
    message = str(error)
    assert "computes integers up to 1000000007" in message and "no bound on the graph's inputs makes this exact" in message
    assert f"test_integer_range.py:{line_of('marker: big-constant', __file__)}" in message


def test_lifted_constant_is_bounded_by_its_value():
    # blt-style small-prime hash: the constant 31 is a lifted graph input;
    # its own magnitude bounds it, so tokens up to 255 (and far beyond) pass.
    def f(tokens):
        powers = torch.tensor(31, dtype=torch.int64) ** torch.arange(3)
        return (tokens * powers).sum(-1) % 30000

    tokens = torch.randint(0, 256, (4, 3), generator=torch.Generator().manual_seed(0))
    assert torch.equal(compile_neuron(f)(tokens), f(tokens))


def test_the_bounds_are_in_the_artifact_metadata(tmp_path):
    # The metadata, not the process that compiled, carries the bound: a
    # cache hit in a fresh CompiledGraph checks the same inputs.
    from trnc.compiled_graph import _integer_bounds

    class Executable:
        metadata_json = json.dumps({"target": "trn2", "integer_inputs": [
            {"input": 1, "bound": 12, "reason": "r", "op": "aten.mul.Tensor", "where": "f.py:3 (node 'mul')"}]})

    class Graph:
        document = {"inputs": [{"name": "a"}, {"name": "b"}, {"name": "c", "max_abs": 31}],
                    "nodes": [{"name": "mul", "loc": {"code": "a * b"}}]}

    bounds = _integer_bounds(Executable(), Graph())
    assert bounds[1]["bound"] == 12 and bounds[1]["code"] == "a * b" and bounds[2]["bound"] == 31
    assert set(bounds) == {1, 2}


def _with_input_fields(**fields) -> str:
    doc = json.loads(chain_graph([("aten.mul.Tensor", [1001])], dtype="int64"))
    doc["inputs"][0].update(fields)
    return json.dumps(doc)


def test_input_bound_hints_in_graph_json_are_validated_and_keyed():
    from trnc import cache

    for bad, why in [({"max_abs": -1}, "expected a finite number >= 0"), ({"max_abs": "big"}, "expected a finite number"),
                     ({"fp32_exact": 1}, "expected a boolean")]:
        result = trnc._C.compile(_with_input_fields(**bad), json.dumps({"target": "trn2"}))
        assert not result["ok"] and why in result["message"], result["message"]
    # A hint changes the artifact's bounds, so it is part of the cache key.
    assert cache.key(_with_input_fields(max_abs=31)) != cache.key(_with_input_fields(max_abs=32))
    hinted = trnc._C.compile(_with_input_fields(max_abs=31), json.dumps({"target": "trn2"}))
    assert hinted["ok"], hinted["message"]
    plain = trnc._C.compile(_with_input_fields(), json.dumps({"target": "trn2"}))
    bounds = json.loads(trnc._C.Executable(plain["artifact"]).metadata_json)["integer_inputs"]
    assert [(b["input"], b["bound"], b["op"]) for b in bounds] == [(0, 16760, "aten.mul.Tensor")]
