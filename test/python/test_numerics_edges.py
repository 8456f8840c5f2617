"""Numerics at the edges and limits worded for the user (issue 12, defects 7, 8).

-0.0 keeps its sign through every op eager keeps it through, sign/gelu follow
eager at NaN and infinity, integer inputs past the engines' exact range are an
error naming the input, and graphs past the device's limits are refused before
lowering with a message naming the tensor and the user's line.
"""

from __future__ import annotations

import pytest
import torch

import trnc
from helpers import compile_neuron, line_of, needs_native, trnc_error

pytestmark = needs_native

EDGES = torch.tensor([-0.0, 0.0, float("nan"), float("inf"), float("-inf"), -2.5, 3.0, -1e-30])


def _same_edge(g: float, w: float) -> bool:
    if w != w:
        return g != g
    if w == 0 or abs(w) == float("inf"):
        return g == w and torch.tensor(g).signbit() == torch.tensor(w).signbit()
    return abs(g - w) <= 1e-6 * abs(w)


def same_edges(got: torch.Tensor, want: torch.Tensor, alt: torch.Tensor) -> None:
    """NaN where eager has NaN, the same infinities and signed zeros bit for
    bit, other values within float32 rounding. ``alt`` is eager one element
    at a time: eager's scalar and vectorised CPU kernels may differ at the
    edges (gelu(-0.0) is -0.0 alone and +0.0 in a vector; some CPUs'
    vectorised erf makes gelu(+inf) NaN), and either is eager's answer."""
    assert got.dtype == want.dtype and got.shape == want.shape
    for g, w, a in zip(got.tolist(), want.tolist(), alt.tolist()):
        assert _same_edge(g, w) or _same_edge(g, a), (got, want, alt)


@pytest.mark.parametrize(
    "fn",
    [
        torch.relu, torch.floor, torch.ceil, torch.trunc, torch.tanh, torch.sin, torch.reciprocal,
        torch.rsqrt, torch.sign, torch.nn.functional.gelu, lambda x: 1 / x, torch.neg, torch.abs,
    ],
    ids=["relu", "floor", "ceil", "trunc", "tanh", "sin", "reciprocal", "rsqrt", "sign", "gelu", "one_over",
         "neg", "abs"],
)
def test_edge_values_match_eager(fn):
    one_at_a_time = torch.cat([fn(x.reshape(1)) for x in EDGES.clone()])
    same_edges(compile_neuron(fn)(EDGES.clone()), fn(EDGES.clone()), one_at_a_time)


def test_integer_inputs_past_2_24_are_refused():
    f = compile_neuron(lambda i: i + 1)
    small = torch.tensor([1, 2, 16777215], dtype=torch.int32)
    torch.testing.assert_close(f(small), small + 1)
    with pytest.raises(trnc.TrncError, match=r"input 0 \(torch.int32\) holds 16777217, which feeds aten.add"):
        f(torch.tensor([16777217, 3], dtype=torch.int32))


def test_tensor_past_hbm_is_a_user_facing_limit():
    def huge(x):
        return x.expand(400000, 100000) * 2  # marker: huge-output

    with pytest.raises(Exception) as info:
        compile_neuron(huge)(torch.randn(1, 100000))
    error = trnc_error(info)
    message = str(error)
    assert "internal error" not in message and "limit of the device" in message
    assert "[400000, 100000] needs 160.0 GB" in message and "96 GiB of HBM" in message
    assert f"test_numerics_edges.py:{line_of('marker: huge-output', __file__)}" in message
    assert error.error_kind == "resource_limit"


def test_quadratic_artifact_is_refused_early():
    # Refused from the graph JSON, before lowering (it used to end in
    # std::bad_alloc after 8 minutes).
    with pytest.raises(Exception) as info:
        compile_neuron(lambda t: (t.t() @ t).sum())(torch.randn(1, 90000))
    error = trnc_error(info)
    assert "too large to compile" in str(error) and "artifact would need at least" in str(error)
    assert "[90000, 90000]" in str(error) and error.error_kind == "resource_limit"
