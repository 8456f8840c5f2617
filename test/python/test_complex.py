"""Complex tensors computed as real (re, im) pairs (python/trnc/complex_pairs.py):
complex rotary embeddings (Llama 4, DeepSeek-V2), complex arithmetic chains, complex
graph inputs and outputs, forward and backward vs eager; a complex op without a
pair rule is refused by name and source line."""

import pytest
import torch

import trnc
from helpers import check_against_eager, compile_neuron, line_of, needs_native, trnc_error

pytestmark = needs_native


def llama4_rope(xq: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Llama 4's rotary (modeling_llama4.py): [batch, seq, heads, dim] queries."""
    freqs_cis = torch.polar(torch.ones_like(angles), angles) * 1.0  # attention_scaling
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return torch.view_as_real(xq_ * freqs_cis[:, :, None, :]).flatten(3)


def deepseek_rope(xq: torch.Tensor, xk: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """DeepSeek-V2's rotary (modeling_deepseek_v2.py): [batch, heads, seq, dim]."""
    freqs_cis = torch.polar(torch.ones_like(angles), angles).unsqueeze(1)
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3).type_as(xq)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3).type_as(xk)
    return torch.cat([xq_out, xk_out], dim=1)


def test_llama4_rotary_forward_and_backward():
    torch.manual_seed(0)
    x, angles = torch.randn(2, 6, 3, 16), torch.randn(2, 6, 8)
    check_against_eager(llama4_rope, [x, angles])  # grads of x and of the angles


def test_deepseek_rotary_forward_and_backward():
    torch.manual_seed(1)
    xq, xk, angles = torch.randn(2, 4, 5, 8), torch.randn(2, 1, 5, 8), torch.randn(2, 5, 4)
    check_against_eager(deepseek_rope, [xq, xk, angles])


def test_rotary_angles_from_positions_without_grad():
    """The Hugging Face form: freqs from inv_freq x positions, computed in the graph."""
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 16, 2).float() / 16))

    def rope(x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[1]).float()
        return llama4_rope(x, torch.outer(positions, inv_freq).expand(x.shape[0], -1, -1))

    check_against_eager(rope, [torch.randn(2, 7, 2, 16)])


def complex_chain(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    ca, cb = torch.view_as_complex(a), torch.view_as_complex(b)
    r = (ca * cb + ca.conj()) / cb - 2 * ca + (1 - 0.5j) * cb
    s = r * cb.real - r.imag[:, :1] + torch.complex(a[..., 0], b[..., 1])
    return torch.cat([torch.view_as_real(s).flatten(), r.abs().flatten(), s.real.flatten()])


def test_complex_arithmetic_chain_forward_and_backward():
    torch.manual_seed(2)
    a = torch.randn(3, 4, 2)
    b = torch.randn(3, 4, 2) + torch.tensor([2.0, 0.0])  # keep |b| away from 0 for the division
    check_against_eager(complex_chain, [a, b], rtol=1e-5, atol=1e-5)


def test_complex_views_and_layout_ops():
    def fn(a: torch.Tensor) -> torch.Tensor:
        c = torch.view_as_complex(a)  # [4, 3, 5]
        t = c.permute(2, 0, 1).transpose(-1, -2)[1:4].unsqueeze(-1).squeeze(-1)  # [3, 3, 4]
        u = torch.cat([t, t.flip(0)], dim=-1).select(1, 2)  # [3, 8]
        v = torch.stack([u, u.conj()], dim=0).sum(dim=-1)  # [2, 3]
        return torch.view_as_real(v.reshape(6).expand(2, 6))

    torch.manual_seed(3)
    check_against_eager(fn, [torch.randn(4, 3, 5, 2)])


def test_complex_graph_input_and_output():
    def fn(signal: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
        return signal * torch.view_as_complex(pairs) + signal.conj()

    torch.manual_seed(4)
    signal = torch.randn(5, 6, dtype=torch.complex64)
    pairs = torch.randn(5, 6, 2)
    trnc.neuron.stats.reset()
    actual = compile_neuron(fn)(signal, pairs)
    assert actual.dtype == torch.complex64
    torch.testing.assert_close(actual, fn(signal, pairs))
    assert sum(trnc.neuron.stats.counts.values()) == 1  # ran compiled on the simulator


def test_complex_saved_for_backward():
    """The forward returns complex freqs_cis for the backward (a complex forward
    output and backward input), as in the Hugging Face rotary models."""

    def fn(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
        freqs_cis = torch.polar(torch.ones_like(angles), angles.detach())
        return torch.view_as_real(torch.view_as_complex(x) * freqs_cis).sum(-1)

    torch.manual_seed(5)
    check_against_eager(fn, [torch.randn(4, 6, 2), torch.randn(4, 6)])


def test_unsupported_complex_op_is_named_with_its_line():
    def fn(a: torch.Tensor) -> torch.Tensor:
        c = torch.view_as_complex(a)
        return torch.view_as_real(torch.exp(c))  # complex-exp

    with pytest.raises(Exception) as excinfo:
        compile_neuron(fn)(torch.randn(3, 2))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError), repr(excinfo.value)
    assert [op.target for op in err.operators] == ["aten.exp.default"]
    assert err.operators[0].locations[0].line == line_of("complex-exp", __file__)
    assert "complex" in str(err) and "aten.exp.default" in str(err)


def test_fft_is_refused_by_name():
    with pytest.raises(Exception) as excinfo:
        compile_neuron(lambda a: torch.view_as_real(torch.fft.rfft(a)))(torch.randn(8))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError), repr(excinfo.value)
    assert "fft" in str(err) and "complex" in str(err)


def _c(t: torch.Tensor) -> torch.Tensor:
    return torch.view_as_complex(t)


# (a, b: [3, 4, 2] pairs; r: [3, 4] real, >= 1) -> real; each exercises one pair rule.
PAIR_RULES = {
    "div_by_real": lambda a, b, r: torch.view_as_real(_c(a) / r),
    "real_div_complex": lambda a, b, r: torch.view_as_real(r / _c(b)),
    "sub_alpha": lambda a, b, r: torch.view_as_real(torch.sub(_c(a), _c(b), alpha=0.5)),
    "add_real_broadcast": lambda a, b, r: torch.view_as_real(_c(a) + r[:, :1]),
    "real_to_complex": lambda a, b, r: torch.view_as_real(r.to(torch.complex64) * _c(b)),
    "complex_real_part": lambda a, b, r: (_c(a) * _c(b)).real * r,
    "where": lambda a, b, r: torch.view_as_real(torch.where(r > 1.5, _c(a), _c(b))),
    "mean": lambda a, b, r: torch.view_as_real((_c(a) * _c(b)).mean(0)),
    "squeeze_times_i": lambda a, b, r: torch.view_as_real(_c(a)[:1].squeeze() * 1j),
    "stack_cos_sin": lambda a, b, r: torch.view_as_real(_c(torch.stack([r.cos(), r.sin()], -1)) * _c(a)),
    "neg_sum": lambda a, b, r: torch.view_as_real(-_c(a).sum()),
}


@pytest.mark.parametrize("rule", sorted(PAIR_RULES))
def test_pair_rule(rule):
    torch.manual_seed(6)
    a, b = torch.randn(3, 4, 2), torch.randn(3, 4, 2) + torch.tensor([2.0, 0.0])
    check_against_eager(PAIR_RULES[rule], [a, b, torch.rand(3, 4) + 1], rtol=1e-5, atol=1e-5)


def test_complex_parameter_gets_a_complex_gradient():
    """A complex nn.Parameter: a complex forward input and a complex backward output."""

    class Scale(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4, 3, dtype=torch.complex64))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.view_as_real(self.w * torch.view_as_complex(x)).pow(2).sum()

    torch.manual_seed(7)
    eager, compiled = Scale(), Scale()
    compiled.load_state_dict(eager.state_dict())
    x = torch.randn(4, 3, 2)
    expected, actual = eager(x), compile_neuron(compiled)(x)
    expected.backward()
    actual.backward()
    torch.testing.assert_close(actual, expected)
    assert compiled.w.grad.dtype == torch.complex64
    torch.testing.assert_close(compiled.w.grad, eager.w.grad)
