"""The dtype policy: float64 runs as float32 with one warning per graph;
sparse, nested and quantized tensors are refused by name (complex tensors run as
real pairs: test_complex.py)."""

import warnings

import pytest
import torch

import trnc
from helpers import check_against_eager, compile_neuron, line_of, mlp, needs_native, trnc_error
from trnc.graph_export import Float64Warning

pytestmark = needs_native


def _float64_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, Float64Warning)]


def test_float64_is_computed_in_float32_and_cast_back():
    x, y = torch.randn(6, 9, dtype=torch.float64), torch.randn(9, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = compile_neuron(lambda a, b: torch.relu(a * b + 1.5))(x, y)
    assert out.dtype == torch.float64
    # float32 arithmetic: float32 accuracy, not float64's.
    torch.testing.assert_close(out, torch.relu(x * y + 1.5), rtol=1.3e-6, atol=1e-5)
    messages = _float64_warnings(record)
    assert len(messages) == 1, messages
    assert "float64" in messages[0] and "float32" in messages[0] and "inference_" in messages[0]


def test_float64_training_warns_once_per_graph():
    model = mlp().double()
    x = torch.randn(5, 64, dtype=torch.float64)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        check_against_eager(model, [x], grad=False, rtol=1e-5, atol=1e-5)
        out = compile_neuron(model)(x)
        out.sum().backward()
    messages = _float64_warnings(record)
    graphs = sorted(m.split("'")[1] for m in messages)
    assert len(graphs) == len(set(graphs)), messages  # one per graph, never repeated
    assert any(g.startswith("forward_") for g in graphs) and any(g.startswith("backward_") for g in graphs)
    assert all(p.grad.dtype == torch.float64 for p in model.parameters())


def test_float64_gradients_match_eager():
    x = torch.randn(7, 5, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Float64Warning)
        check_against_eager(lambda a: torch.relu(a) * a + a, [x], rtol=1e-5, atol=1e-5)


def _refusal(fn, *args) -> str:
    with pytest.raises(Exception) as excinfo:
        compile_neuron(fn)(*args)
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError), repr(excinfo.value)
    return str(err)


def test_complex_op_without_pair_rule_is_refused_by_name():
    message = _refusal(lambda signal: torch.exp(signal), torch.randn(4, dtype=torch.complex64))
    assert "aten.exp.default" in message and "complex" in message


def test_sparse_input_is_refused():
    # Dynamo itself refuses to trace a sparse input; with fullgraph=True that is an error.
    with pytest.raises(Exception, match="sparse"):
        torch.compile(lambda a: a * 2, backend=trnc.neuron, dynamic=False, fullgraph=True)(torch.randn(4, 4).to_sparse())


def test_nested_input_is_refused():
    nt = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(3, 3)], layout=torch.jagged)
    message = _refusal(lambda a: a * 2, nt)
    assert "nested" in message and "'l_a_'" in message


def test_quantized_tensor_is_refused():
    message = _refusal(lambda a: torch.quantize_per_tensor(a, 0.1, 0, torch.qint8), torch.randn(4))
    assert "quantized" in message and "qint8" in message and "quantize_per_tensor" in message


def test_int64_inputs_within_int32_compute_exactly():
    check_against_eager(lambda ids: ids * 3 + 7, [torch.tensor([[0, 5, -40000], [2**20, 1, 2]])], grad=False)


def test_int64_input_outside_int32_is_an_error_not_a_saturated_value():
    add_one = compile_neuron(lambda ids: ids + 1)
    torch.testing.assert_close(add_one(torch.tensor([1, 2, 3])), torch.tensor([2, 3, 4]))
    for bad in (2**40, -(2**31) - 1):
        with pytest.raises(trnc.TrncError, match=f"input 0 \\(int64\\) holds {bad}, outside the int32 range"):
            add_one(torch.tensor([1, bad, 3]))


def polynomial_hash(tokens):
    # blt's byte hash: relies on int64 wraparound past 2**31
    prime = torch.tensor(1000000007, dtype=torch.int64)
    powers = prime ** torch.arange(tokens.shape[-1])  # HASH-POW
    return (tokens * powers).sum(-1) % 30000


def test_large_integer_constant_in_arithmetic_is_refused_with_its_line():
    with pytest.raises(Exception) as excinfo:
        compile_neuron(polynomial_hash)(torch.randint(0, 256, (2, 4)))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError) and err.error_kind == "unsupported_integer_range", repr(err)
    message = str(err)
    assert "integer constant 1000000007" in message and "aten.pow" in message
    assert f"{__file__}:{line_of('HASH-POW', __file__)}" in message


def test_large_integer_constant_only_compared_compiles():
    def clamp_ids(ids):
        return torch.minimum(ids, torch.tensor(2**30))  # a bound, no arithmetic on it

    ids = torch.tensor([5, 2**24 - 7, -3])
    compiled = compile_neuron(clamp_ids)
    torch.testing.assert_close(compiled(ids), clamp_ids(ids))
    # The engines read ids through fp32: 2**29 + 1 would come back as 2**29.
    with pytest.raises(trnc.TrncError, match=r"holds 536870913, which feeds aten.minimum.*within \[-16777216, 16777216\]"):
        compiled(torch.tensor([5, 2**29 + 1, -3]))
