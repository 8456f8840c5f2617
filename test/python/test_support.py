"""trnc.check_support: unsupported operators and dtypes found before compiling anything."""

import pytest
import torch

import trnc
from helpers import line_of, needs_native

pytestmark = needs_native
HERE = __file__

# Operators no area of trnc claims (issue 4), so these tests stay meaningful as
# coverage grows: Bessel functions.
FWD_ONLY = "aten.special_bessel_j0.default"
BWD_ONLY = "aten.special_bessel_j1.default"


class OddBackward(torch.autograd.Function):
    """Forward: a supported multiply. Backward: an unsupported operator."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.special.bessel_j1(grad)  # BWD-OP


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.linear(x))
        z = torch.special.bessel_j0(y)  # FWD-OP
        return OddBackward.apply(z + y)


def _compiles():
    return sum(trnc.neuron.stats.counts.values())


def test_forward_and_backward_gaps_are_reported_without_compiling():
    model, x = Model(), torch.randn(4, 8)
    before = _compiles()
    report = trnc.check_support(model, x, train=True)
    assert _compiles() == before, "check_support compiled a graph"
    assert not report.ok
    assert [g.name.split("_")[0] for g in report.graphs] == ["forward", "backward"]
    forward, backward = report.graphs
    assert [u[0] for u in forward.unsupported] == [FWD_ONLY]
    target, count, locations, _ = forward.unsupported[0]
    assert count == 1 and [loc.line for loc in locations] == [line_of("FWD-OP", HERE)]
    assert locations[0].file == HERE
    assert BWD_ONLY in [u[0] for u in backward.unsupported]
    assert report.unsupported_operators[FWD_ONLY] >= 1 and report.unsupported_operators[BWD_ONLY] == 1
    text = str(report)
    assert FWD_ONLY in text and BWD_ONLY in text and f"{HERE}:{line_of('FWD-OP', HERE)}" in text
    # The user's gradients are untouched by the trace.
    assert all(p.grad is None for p in model.parameters())


def test_inference_only_traces_forward():
    report = trnc.check_support(Model(), torch.randn(4, 8), train=False)
    assert [g.name.split("_")[0] for g in report.graphs] == ["inference"]
    assert set(report.unsupported_operators) == {FWD_ONLY}


def test_supported_model_is_ok():
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    report = trnc.check_support(model, torch.randn(3, 8))
    assert report.ok, str(report)
    assert "lowers" in str(report) and report.unsupported_operators == {}


def test_unsupported_dtype_is_reported():
    # int8 arithmetic is not a dtype the backend computes in (float64 is narrowed,
    # so it is not reported).
    report = trnc.check_support(lambda a: a * 3, torch.ones(4, dtype=torch.int8), train=False)
    assert not report.ok
    assert "int8" in report.unsupported_dtypes, str(report)
    assert "int8" in str(report)


def test_check_graph_binding_reports_the_importer_result():
    from trnc._native import native

    bad = native().check_graph("{}")
    assert not bad["ok"] and bad["error_kind"] == "invalid_graph"


def test_an_operator_refused_while_exporting_is_reported_not_raised():
    # torch.fft's complex operators have no (re, im) pair rule (complex_pairs.py):
    # export refuses them before the importer runs; check_support still returns a report.
    class Spectrum(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()

    report = trnc.check_support(Spectrum(), torch.randn(4, 8), train=False)
    assert not report.ok
    assert any("fft" in target for target in report.unsupported_operators), report
    assert "fft" in str(report)
