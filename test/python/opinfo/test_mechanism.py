"""The sweep's own machinery: xfail lookup precedence, wildcard folding,
stable sample selection, claims resolving to OpInfos. No compiler needed."""

import torch

import harness
import xfails
from claims import AREA_OF, CLAIMS
from seed_xfails import fold


def test_every_claim_names_an_opinfo_in_one_area():
    assert len(AREA_OF) == sum(len(v) for v in CLAIMS.values())  # no claim in two areas
    assert set(harness.claimed_opinfos()) == set(AREA_OF)


def test_lookup_prefers_the_most_specific_entry(monkeypatch):
    table = {
        ("op", "", "*", "*"): "any",
        ("op", "", "bfloat16", "*"): "bf16",
        ("op", "", "bfloat16", "bwd"): "bf16 bwd",
        ("op", "*", "int64", "fwd"): "int64 any variant",
    }
    monkeypatch.setattr(xfails, "TABLE", table)
    assert xfails.lookup("op", "", "bfloat16", "bwd") == "bf16 bwd"
    assert xfails.lookup("op", "", "bfloat16", "fwd") == "bf16"
    assert xfails.lookup("op", "", "float32", "fwd") == "any"
    assert xfails.lookup("op", "v", "int64", "fwd") == "int64 any variant"
    assert xfails.lookup("other", "", "float32", "fwd") is None


def test_sample_entries_match_by_key_and_predicate(monkeypatch):
    class Sample:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

    entries = [
        (("scatter", "", "*", "fwd"), lambda s: s.kwargs.get("reduce") == "multiply", "multiply"),
    ]
    monkeypatch.setattr(xfails, "SAMPLE_ENTRIES", entries)
    assert xfails.sample_reason("scatter", "", "float16", "fwd", Sample(reduce="multiply")) == "multiply"
    assert xfails.sample_reason("scatter", "", "float16", "fwd", Sample(reduce="add")) is None
    assert xfails.sample_reason("scatter", "", "float16", "bwd", Sample(reduce="multiply")) is None
    assert xfails.sample_reason("gather", "", "float16", "fwd", Sample(reduce="multiply")) is None


def test_fold_uses_wildcards_only_when_every_case_agrees():
    ran = {("float32", "fwd"), ("float32", "bwd"), ("int64", "fwd")}
    same = {case: "not lowered yet: aten.x" for case in ran}
    assert fold(same, ran) == {("*", "*"): "not lowered yet: aten.x"}
    mixed = {("float32", "fwd"): "a", ("int64", "fwd"): "a", ("float32", "bwd"): "b"}
    assert fold(mixed, ran) == {("*", "fwd"): "a", ("*", "bwd"): "b"}
    partial = {("int64", "fwd"): "dtype"}
    assert fold(partial, ran) == {("int64", "fwd"): "dtype"}


def test_sample_choice_is_stable():
    first = [i for i, _ in harness.samples("add", torch.float32, "fwd")]
    again = [i for i, _ in harness.samples("add", torch.float32, "fwd")]
    assert first == again
    if not harness.FULL:  # a full run takes every sample
        assert len(first) == min(harness.SAMPLES_PER_CASE, len(first) or 1)


def test_tolerances_grow_with_contraction_length_for_reductions_only():
    small, large = harness.tolerance(torch.float32, "sum", 10), harness.tolerance(torch.float32, "sum", 100000)
    assert large["atol"] > small["atol"]
    assert harness.tolerance(torch.float32, "abs", 100000) == harness.tolerance(torch.float32, "abs", 1)
    assert harness.tolerance(torch.int64, "sum", 100) == {"rtol": 0.0, "atol": 0.0}
