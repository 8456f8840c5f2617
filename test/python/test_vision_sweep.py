"""The vision sweep's fast subset (benchmarks/timm_sweep): small torchvision
models' training steps through backend="neuron" against eager, train and eval
mode, via the sweep's own worker functions; and the torchvision import shim."""

from __future__ import annotations

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "timm_sweep"))

try:
    import tv_shim  # noqa: E402

    tv_shim.import_torchvision()
    import vision_worker  # noqa: E402
except ImportError as exc:  # torchvision not installed (scripts/setup.sh installs it)
    pytest.skip(f"torchvision unavailable: {exc}", allow_module_level=True)

pytestmark = pytest.mark.needs_native


@pytest.mark.skipif(not os.path.isdir(tv_shim.vision_deps()), reason="scripts/setup.sh has not installed the vision packages")
def test_torchvision_comes_from_the_sweeps_own_directory():
    """scripts/setup.sh installs torchvision and timm with --target (not into the
    environment, where transformers would import them); the shim puts that
    directory first for the sweep's entry points."""
    import timm
    import torchvision

    deps = os.path.realpath(tv_shim.vision_deps())
    for module in (torchvision, timm):
        assert os.path.realpath(module.__file__).startswith(deps + os.sep), module.__file__


def test_shim_defines_the_extension_schemas_only():
    assert hasattr(torch.ops.torchvision, "nms")
    with pytest.raises(Exception):  # a schema without a kernel: calling it fails loudly
        torch.ops.torchvision.nms(torch.zeros(1, 4), torch.zeros(1), 0.5)


# squeezenet: convs, ReLU, ceil-mode max pooling, concatenation, a global average
# pool; the smallest torchvision classifier to compile (the sweep runs the rest).
@pytest.mark.parametrize("name", ["squeezenet1_1"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_vision_model_training_step_matches_eager(name, train):
    model = vision_worker.build("torchvision", name)
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    record: dict = {}
    vision_worker.run_mode(model, x, train, record)
    assert record["status"].startswith("pass"), record
    assert record["graphs"] == 2  # one forward, one backward: no graph break


def test_accuracy_rules_refuse_a_wrong_gradient():
    """vision_worker's FP64 / fp32-spread rules: eager's own step passes the
    FP64 rule, a step with one gradient off by 1% of its scale passes neither."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(1))
    eager = vision_worker.step(model, x, model)
    assert vision_worker._no_less_accurate(model, x, True, eager, eager) == "fp64 rule"
    wrong = {n: g.clone() for n, g in eager[1].items()}
    wrong["0.weight"][0, 0] += 0.01 * float(wrong["0.weight"].abs().max())
    assert vision_worker._no_less_accurate(model, x, True, (eager[0], wrong), eager) == ""


def _timm_families():
    pytest.importorskip("timm")
    import timm_families

    return timm_families


def test_family_selection_runs_a_fixed_size_model_at_the_sweeps_size():
    """timm_families: a ViT whose config fixes its input size is built for the
    sweep's size (vision_worker.create_timm) and so runs at 64x64; a model too
    deep for 64x64 (inception_v3's stride-2 stem and reductions leave a 2x2
    map under a 3x3 kernel) is refused, with the reason."""
    families = _timm_families()
    assert families._runs_at("test_vit", 64) == ""
    assert "Kernel size can't be greater than actual input size" in families._runs_at("inception_v3", 64)


def test_family_selection_orders_picks_by_size_and_leaves_out_skipped_families():
    families = _timm_families()
    selection = {"families": {
        "big": {"model": "b", "params": 30},
        "small": {"model": "a", "params": 3},
        "capped": {"smallest": "c", "params": 10**9, "skipped": "above the cap"},
    }}
    assert families.picked(selection) == ["timm:a", "timm:b"]


def test_markdown_lists_operator_checks_apart_from_the_pass_count():
    import sweep

    results = {
        "timm:a": {"model": "timm:a", "train": {"status": "pass"}, "eval": {"status": "mismatch"}},
        "timm:b": {"model": "timm:b", "check": {"ok": False, "unsupported": ["aten.roll.default"]}},
    }
    text = sweep.markdown(results, 64, 2)
    assert "**1 / 2 (model, mode) pairs pass** over 1 models" in text
    assert "| timm:b | no | aten.roll.default |" in text
