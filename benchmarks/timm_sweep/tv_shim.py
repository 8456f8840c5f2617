"""Import torchvision beside the CPU torch (test/benchmark only).

torchvision==0.28.0 from PyPI is the CUDA build; its C extension does not load
beside torch's CPU wheel, and ``import torchvision`` then fails in
``torchvision/_meta_registrations.py`` (``operator torchvision::nms does not
exist``): that module registers fake kernels for the extension's operators.
The classification models are pure Python and never call those operators, so
defining their schemas (those of torchvision's csrc/ops/*.cpp, without any
kernel) before the import is enough. Calling one of them (detection models'
nms / roi_align) still fails, with "no kernel".

Where torchvision lives: scripts/setup.sh installs it, timm, pillow and pyyaml
into their own directory (``$TRNC_VISION_DEPS``, default ``.vision-deps`` at
the repository root), not into the environment: transformers imports
torchvision whenever it can, so with torchvision importable every
transformers model module failed to import in the project's environment.
``import_torchvision`` (the sweep's entry points: sweep.py, vision_worker.py,
test_vision_sweep.py, compile_cost.py) puts that directory first on
``sys.path``. ``guard_environment`` is for code that imports transformers: it
defines the schemas only when an older setup left torchvision importable from
the environment itself, and never adds the directory.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import torch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def vision_deps() -> str:
    """The directory scripts/setup.sh installs the sweep's packages into."""
    return os.environ.get("TRNC_VISION_DEPS") or os.path.join(REPO, ".vision-deps")

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, int sampling_ratio, "
    "bool aligned) -> Tensor",
    "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
    "int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, SymInt channels, "
    "SymInt height, SymInt width) -> Tensor",
    "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)",
    "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, "
    "SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
    "-> (Tensor, Tensor)",
    "_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, "
    "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, "
    "SymInt width) -> Tensor",
    "qroi_align(Tensor input, Tensor rois, float input_scale, int input_zero_point, float rois_scale, "
    "int rois_zero_point, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, "
    "bool aligned) -> Tensor",
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, "
    "SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, "
    "SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, "
    "Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
    "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor)",
)

_LIB = None


def _define_schemas() -> None:
    global _LIB
    if _LIB is None and not hasattr(torch.ops.torchvision, "nms"):
        _LIB = torch.library.Library("torchvision", "DEF")  # kept alive: the schemas live with it
        for schema in _SCHEMAS:
            _LIB.define(schema)


def import_torchvision():
    """``torchvision`` from the sweep's directory (else the environment), with the
    extension's schemas defined first if it did not load them; timm then imports
    from the same directory."""
    deps = vision_deps()
    if os.path.isdir(deps) and deps not in sys.path:
        sys.path.insert(0, deps)
    _define_schemas()
    import torchvision

    return torchvision


def guard_environment() -> None:
    """Before importing transformers: if torchvision is importable from the
    environment (not the sweep's directory), define its schemas so that its
    import inside transformers' model modules does not fail."""
    if importlib.util.find_spec("torchvision") is not None:
        _define_schemas()
