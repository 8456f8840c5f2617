"""Average pooling with few output positions (global pooling, windows larger
than the input: Hugging Face EfficientNet's AvgPool2d(1280, ceil_mode=True) on
a 1x1 map) lowers as per-position reductions, not as a window-sized depthwise
convolution (trnc.decomp_pooling), forward and backward against eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

from helpers import check_against_eager
from trnc.decompositions import decomposition_table

# (input shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
CASES = [
    ((2, 8, 1, 1), 1280, None, 0, True, True, None),  # the EfficientNet pooler
    ((2, 64, 1, 1), 64, None, 0, True, True, None),
    ((2, 4, 7, 7), 7, None, 0, False, True, None),  # global pooling
    ((2, 4, 5, 6), 4, 3, 1, True, False, None),  # 2x2 positions, clipped windows
    ((2, 4, 5, 6), 4, 3, 1, True, True, None),
    ((1, 3, 6, 6), (6, 3), (6, 3), 0, False, True, None),  # 1x2 positions, rectangular
    ((2, 4, 3, 3), 8, None, 2, True, True, 5),  # divisor_override
    ((4, 5, 5), 5, None, 0, False, True, None),  # 3-D input
]


@pytest.mark.needs_native
@pytest.mark.parametrize("shape,kernel,stride,padding,ceil_mode,count_pad,divisor", CASES)
def test_large_window_avg_pool_forward_backward(shape, kernel, stride, padding, ceil_mode, count_pad, divisor):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    check_against_eager(
        lambda t: F.avg_pool2d(t, kernel, stride, padding, ceil_mode, count_pad, divisor), [x])


def _targets(fn, *args) -> set[str]:
    gm = make_fx(fn, decomposition_table=decomposition_table(), tracing_mode="fake")(*args)
    return {str(n.target) for n in gm.graph.nodes if n.op == "call_function"}


def test_a_pooler_window_is_a_reduction_not_a_convolution():
    x = torch.randn(2, 64, 1, 1)
    fwd = _targets(lambda t: F.avg_pool2d(t, 1280, ceil_mode=True), x)
    assert "aten.sum.dim_IntList" in fwd and not any("pool" in t or "convolution" in t for t in fwd)
    bwd = _targets(lambda g, t: torch.ops.aten.avg_pool2d_backward(g, t, [1280, 1280], [1280, 1280], [0, 0],
                                                                   True, True, None), x, x)
    assert not any("pool" in t or "convolution" in t for t in bwd)


def test_sliding_windows_keep_the_convolution():
    # 3x3 stride 1 on 8x8: 64 output positions, the depthwise convolution's case.
    assert "aten.avg_pool2d.default" in _targets(lambda t: F.avg_pool2d(t, 3, 1), torch.randn(1, 2, 8, 8))
