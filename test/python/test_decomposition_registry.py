"""trnc's decomposition registry (trnc.decompositions): one rule per operator.

Two rule modules claiming the same overload used to be merged silently, the
later one winning (``native_group_norm`` was in both decomp_reductions and
decomp_indices); merge_rules refuses that."""

from __future__ import annotations

import pytest
import torch

from trnc import decomp_indices, decomp_reductions, decompositions

aten = torch.ops.aten


def test_merge_refuses_an_operator_claimed_twice():
    def first(x):
        return x

    def second(x):
        return x

    with pytest.raises(decompositions.DuplicateRuleError, match=r"aten.relu.default.*\bmod_a\b.*\bmod_b\b"):
        decompositions.merge_rules([("mod_a", {aten.relu.default: first}), ("mod_b", {aten.relu.default: second})])


def test_merge_keeps_distinct_operators():
    merged = decompositions.merge_rules([("a", {aten.relu.default: abs}), ("b", {aten.tanh.default: abs})])
    assert set(merged) == {aten.relu.default, aten.tanh.default}


def test_every_rule_module_owns_its_operators_alone():
    # Building the table merges every module (raises on a duplicate).
    table = decompositions.decomposition_table()
    seen = {}
    for name, rules in decompositions._sources():
        for op in rules:
            assert op not in seen, f"{op}: {seen[op]} and {name}"
            seen[op] = name
    trnc_rules = decompositions._trnc_rules()
    assert set(trnc_rules) == set(seen)
    assert all(table[op] is rule for op, rule in trnc_rules.items())


def test_group_norm_has_one_rule():
    assert aten.native_group_norm.default not in decomp_reductions.rules()
    rule = decompositions.decomposition_table()[aten.native_group_norm.default]
    assert rule is decomp_indices.rules()[aten.native_group_norm.default]


@pytest.mark.parametrize("op", [aten.hardtanh.default, aten.as_strided.default, aten.as_strided_scatter.default,
                                aten.grid_sampler_2d.default, aten.grid_sampler_2d_backward.default,
                                aten._transformer_encoder_layer_fwd.default, aten.mkldnn_rnn_layer.default,
                                aten.mkldnn_rnn_layer_backward.default])
def test_issue13_operators_have_rules(op):
    assert op in decompositions.decomposition_table()
