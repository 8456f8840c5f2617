"""End to end: elementwise operators and the int/bool/f16 dtypes, trnc vs eager."""

import pytest
import torch
import trnc

from helpers import check_against_eager, compile_neuron, needs_native

pytestmark = needs_native


def _randint(*shape, low=-50, high=50, dtype=torch.int32):
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(3), dtype=dtype)


# --- dtypes: casts between float32/bfloat16/float16/int32/int64/bool -------

CAST_DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("src", CAST_DTYPES, ids=str)
@pytest.mark.parametrize("dst", CAST_DTYPES, ids=str)
def test_cast(src, dst):
    x = (torch.randn(37, 130, generator=torch.Generator().manual_seed(0)) * 40).to(src)
    check_against_eager(lambda t: t.to(dst), [x], grad=False)


def test_cast_special_values():
    x = torch.tensor([0.0, -0.0, 0.5, -0.5, 1.5, -2.7, float("nan"), float("inf"), 3e9, -3e9])
    check_against_eager(lambda t: t.to(torch.bool), [x], grad=False)
    check_against_eager(lambda t: t.to(torch.int32), [x[:6]], grad=False)


def test_int64_arithmetic():
    a, b = _randint(6, 300, dtype=torch.int64), _randint(300, dtype=torch.int64)
    check_against_eager(lambda x, y: x + y * 3 - 7, [a, b], grad=False)


def test_int32_mixed_with_float():
    a = _randint(5, 7)
    check_against_eager(lambda x, y: x * y + 1, [a, torch.randn(5, 7)])


def test_float16():
    a, b = torch.randn(64, 33).half(), torch.randn(33).half()
    check_against_eager(lambda x, y: torch.relu(x + y) * 2, [a, b], grad=False)


# --- unary ------------------------------------------------------------------

_X = torch.randn(70, 150, generator=torch.Generator().manual_seed(1)) * 3
_POS = _X.abs() + 0.1

UNARY = {
    "abs": (torch.abs, _X), "neg": (torch.neg, _X), "exp": (torch.exp, _X),
    "expm1": (torch.expm1, _X), "log": (torch.log, _POS), "log1p": (torch.log1p, _POS),
    "sqrt": (torch.sqrt, _POS), "rsqrt": (torch.rsqrt, _POS), "reciprocal": (torch.reciprocal, _POS),
    "sin": (torch.sin, _X), "cos": (torch.cos, _X), "tanh": (torch.tanh, _X),
    "sigmoid": (torch.sigmoid, _X), "relu": (torch.relu, _X),
    "leaky_relu": (lambda t: torch.nn.functional.leaky_relu(t, 0.2), _X),
    "gelu": (torch.nn.functional.gelu, _X),
    "gelu_tanh": (lambda t: torch.nn.functional.gelu(t, approximate="tanh"), _X),
    "silu": (torch.nn.functional.silu, _X), "mish": (torch.nn.functional.mish, _X),
    "softplus": (torch.nn.functional.softplus, _X), "erf": (torch.erf, _X),
    "sign": (torch.sign, _X), "floor": (torch.floor, _X), "ceil": (torch.ceil, _X),
    "round": (torch.round, _X), "trunc": (torch.trunc, _X),
    "clamp": (lambda t: torch.clamp(t, -1.0, 2.0), _X),
    "clamp_min": (lambda t: torch.clamp(t, min=-0.5), _X),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    fn, x = UNARY[name]
    check_against_eager(fn, [x], rtol=2e-5, atol=2e-5)


def test_round_half_even_and_nan():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, float("nan"), float("inf"), -2.4])
    check_against_eager(torch.round, [x], grad=False, equal_nan=True)
    check_against_eager(torch.relu, [x], grad=False, equal_nan=True)
    check_against_eager(lambda t: torch.clamp(t, -1, 1), [x], grad=False, equal_nan=True)
    check_against_eager(lambda t: (torch.isnan(t), torch.isinf(t)), [x], grad=False)


def test_logical_and_bitwise_not():
    b = _X > 0
    check_against_eager(lambda t: torch.logical_not(t), [_X], grad=False)
    check_against_eager(lambda t: ~t, [b], grad=False)
    check_against_eager(lambda t: ~t, [_randint(9, 40)], grad=False)


# --- binary / ternary -----------------------------------------------------------

_A = torch.randn(33, 1, 70, generator=torch.Generator().manual_seed(2)) * 4
_B = torch.randn(5, 70, generator=torch.Generator().manual_seed(4)) * 4 + 0.3

BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - 2 * b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "pow_scalar": lambda a, b: a.abs() ** 1.7 + b, "rpow": lambda a, b: 2.0 ** a + b,
    "pow": lambda a, b: a.abs() ** b, "maximum": torch.maximum, "minimum": torch.minimum,
    "remainder": torch.remainder, "fmod": torch.fmod, "where": lambda a, b: torch.where(a > b, a, b * 2),
    "lerp": lambda a, b: torch.lerp(a, b, 0.3), "addcmul": lambda a, b: torch.addcmul(a, a, b, value=0.5),
    "addcdiv": lambda a, b: torch.addcdiv(a, a, b, value=0.5),
    "masked_fill": lambda a, b: (a * b).masked_fill(b > 1, -3.0),
    "clamp_tensor": lambda a, b: torch.clamp(a, min=b - 1, max=b + 1),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name):
    # pow's gradients (a^b * log a, summed over the broadcast) differ from eager's
    # by a few hundred fp32 ulps in the reduction order.
    tol = 2e-4 if name.startswith("pow") else 2e-5
    check_against_eager(BINARY[name], [_A, _B], rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare(op):
    a, b = _A.round(), _B.round()
    f = getattr(torch, op)
    check_against_eager(lambda x, y: (f(x, y), f(x, 1.0), f(_randint(33, 5, 70), y)), [a, b], grad=False)


def test_logical_and_bitwise_binary():
    p, q = _A > 0, _B > 0
    check_against_eager(
        lambda x, y: (torch.logical_and(x, y), torch.logical_or(x, y), torch.logical_xor(x, y), x & y, x | y, x ^ y),
        [p, q], grad=False,
    )
    i, j = _randint(33, 5, 70), _randint(70)
    check_against_eager(lambda x, y: (x & y, x | y, x ^ y, x & 6), [i, j], grad=False)


def test_integer_division_and_modulo():
    i, j = _randint(40, 70), _randint(70, low=1, high=9) * torch.where(_randint(70) > 0, 1, -1).int()
    check_against_eager(
        lambda x, y: (torch.div(x, y, rounding_mode="trunc"), torch.div(x, y, rounding_mode="floor"),
                      x % y, torch.fmod(x, y), x / y),
        [i, j], grad=False,
    )


def test_threshold_backward_nonfinite_grad():
    # relu's backward is a select: an inf/NaN gradient where the input is <= 0 gives 0.
    g = torch.tensor([float("inf"), 1.0, float("nan"), 2.0])
    grads = []
    for fn in (torch.relu, compile_neuron(torch.relu)):
        x = torch.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
        fn(x).backward(g)
        grads.append(x.grad)
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_where_zero_nonfinite(dtype):
    # where(mask, g, 0): the zero fill is a memset for bf16 (a copy of the
    # constant otherwise); an inf/NaN in g where the mask is off gives +0.0,
    # one where it is on passes through, bit for bit as eager.
    g = torch.tensor([[float("inf"), 1.5, float("nan"), -2.0, float("-inf"), 3.0]] * 3, dtype=dtype)
    m = torch.tensor([[False, True, False, True, True, False]] * 3)
    fn = lambda m, g: torch.where(m, g, 0.0)
    got, want = compile_neuron(fn)(m, g), fn(m, g)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)
    assert not torch.signbit(got[~m]).any()


# --- activation gradients: grad * f'(x), f' one activation ---------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("act", ["gelu", "silu"])
def test_activation_gradient_is_one_derivative_activation(act, dtype):
    # aten.gelu_backward / silu_backward are kept (decompositions.py) and
    # imported as grad * gelu_dx(x) / silu_dx(x) (NKI's derivative
    # activations), in fp32 and rounded once like eager's kernels.
    fn = getattr(torch.nn.functional, act)
    x = _X.detach().to(dtype).clone().requires_grad_()
    xc = x.detach().clone().requires_grad_()
    g = torch.randn(x.shape, generator=torch.Generator().manual_seed(5)).to(dtype)
    fn(x).backward(g)
    compiled = compile_neuron(fn)
    compiled(xc).backward(g)
    xc.grad = None
    with trnc.profiling.capture(trace=True) as p:
        compiled(xc).backward(g)
    tol = {"rtol": 2e-5, "atol": 2e-5} if dtype == torch.float32 else {"rtol": 8e-3, "atol": 8e-3}
    torch.testing.assert_close(xc.grad, x.grad, **tol)
    (backward,) = [r for r in p.graphs if "backward" in r.graph]
    trace = backward.trace_json()
    assert f"aten.{act}_backward.default" in trace
    assert "aten.erf.default" not in trace and "aten.sigmoid.default" not in trace


@pytest.mark.parametrize("act", ["gelu", "silu"])
def test_activation_gradient_edges(act):
    # +-inf: eager's formulas give NaN (inf * 0), and so does the derivative.
    x = torch.tensor([float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 40.0, -40.0, 1.5])
    fn = getattr(torch.nn.functional, act)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    fn(a).sum().backward()
    compile_neuron(fn)(b).sum().backward()
    torch.testing.assert_close(b.grad, a.grad, equal_nan=True, rtol=1e-6, atol=1e-6)
