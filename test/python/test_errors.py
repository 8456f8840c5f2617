"""Errors: unsupported operators (forward and backward), symbolic shapes, bad artifacts."""

import pytest
import torch

import trnc
from helpers import BACKEND, compile_neuron, line_of, needs_native, trnc_error

pytestmark = needs_native
HERE = __file__


def uses_unsupported_ops(x):
    # Operators with no lowering (keep these unlowered ones as the examples).
    a = torch.special.bessel_j0(x)  # BESSEL-1
    b = torch.special.bessel_j0(x * 2)  # BESSEL-2
    # sort of rows over 256 elements is not decomposed (trnc.decomp_indices)
    values, _ = torch.sort(a + b, dim=1)  # SORT
    return values


def test_unsupported_forward_operators_are_all_listed():
    with pytest.raises(Exception) as excinfo:
        compile_neuron(uses_unsupported_ops)(torch.randn(4, 300))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError), repr(excinfo.value)
    ops = {target: (count, locs) for target, count, locs in err.operators}
    bessel = "aten.special_bessel_j0.default"
    assert set(ops) == {bessel, "aten.sort.default"}
    assert ops[bessel][0] == 2 and ops["aten.sort.default"][0] == 1
    bessel_lines = sorted(loc.line for loc in ops[bessel][1])
    assert bessel_lines == [line_of("BESSEL-1", HERE), line_of("BESSEL-2", HERE)]
    message = str(err)
    for marker in ("BESSEL-1", "BESSEL-2", "SORT"):
        assert f"{HERE}:{line_of(marker, HERE)}: " in message
    assert f"{bessel} (x2)" in message and "aten.sort.default (x1)" in message


def test_higher_order_operator_is_reported_by_the_operator_it_wraps():
    # linalg.inv checks for singular input with a side-effecting op that AOTAutograd
    # wraps in higher_order.with_effects: reported unsupported, not an encoding error.
    def inverse(x):
        return torch.linalg.inv(x)  # INVERSE

    with pytest.raises(Exception) as excinfo:
        compile_neuron(inverse)(torch.randn(4, 4))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError), repr(excinfo.value)
    ops = {target: locs for target, _count, locs in err.operators}
    effect = "higher_order.with_effects(aten._linalg_check_errors.default)"
    assert set(ops) == {"aten.linalg_inv_ex.default", effect}
    assert [loc.line for loc in ops[effect]] == [line_of("INVERSE", HERE)]


class DoubleWithOddBackward(torch.autograd.Function):
    """Forward uses only supported ops; backward uses one with no lowering."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.special.bessel_j0(grad)  # BACKWARD-BESSEL


def test_unsupported_backward_operator_raises_at_backward():
    x = torch.randn(4, 5, requires_grad=True)
    out = compile_neuron(DoubleWithOddBackward.apply)(x)  # the forward compiles and runs
    torch.testing.assert_close(out, x * 2)
    with pytest.raises(trnc.UnsupportedOperatorError) as excinfo:
        out.sum().backward()
    (target, count, locs), = excinfo.value.operators
    assert target == "aten.special_bessel_j0.default" and count == 1
    assert (locs[0].file, locs[0].line) == (HERE, line_of("BACKWARD-BESSEL", HERE))
    assert excinfo.value.graph_name.startswith("backward_")


def test_backward_error_is_not_swallowed_on_second_call():
    x = torch.randn(4, 5, requires_grad=True)
    fn = compile_neuron(DoubleWithOddBackward.apply)
    for _ in range(2):
        with pytest.raises(trnc.UnsupportedOperatorError):
            fn(x).sum().backward()


def test_symbolic_shapes_ask_for_dynamic_false():
    compiled = torch.compile(lambda x: x * 2, backend=BACKEND, dynamic=True)
    with pytest.raises(Exception) as excinfo:
        compiled(torch.randn(4, 5))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError)
    assert "dynamic=False" in str(err)


def test_corrupt_artifact_is_a_value_error():
    from trnc import _C

    with pytest.raises(ValueError):
        _C.Executable(b"\x00not an artifact\xff" * 8)


def test_dump_dir_gives_a_reproducer(tmp_path):
    compiled = torch.compile(uses_unsupported_ops, backend=BACKEND, dynamic=False,
                             options={"dump_dir": str(tmp_path)})
    with pytest.raises(Exception) as excinfo:
        compiled(torch.randn(4, 5))
    err = trnc_error(excinfo)
    assert err.reproducer and "trnc compile-graph" in err.reproducer
    assert list(tmp_path.glob("*.graph.json"))
