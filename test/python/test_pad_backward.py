"""Reflection / replication pad backward through backend="neuron"
(trnc.decomp_data_movement): negative (cropping) pads, and 16-bit reflection
gradients summed in eager's order (bit-exact)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from helpers import check_against_eager

# (input shape, pads): 1-D, 2-D and 3-D padding, crops on one or both sides,
# a crop on one dim and a pad on another.
NEGATIVE_CASES = [
    ((2, 3, 8), (-2, 3)),
    ((1, 2, 6, 7), (2, -1, -2, 1)),
    ((1, 2, 4, 5, 6), (-1, -1, 1, 2, -2, 0)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("shape,pads", NEGATIVE_CASES)
def test_negative_pad_forward_backward(shape, pads, mode):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    check_against_eager(lambda t: F.pad(t, pads, mode=mode), [x])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape,pads", [((2, 3, 5), (2, 3)), ((2, 4, 5), (1, 2, 3, 1)),
                                        ((3, 3, 5, 5), (1, 1, 1, 1, 1, 1)), ((1, 3, 3, 3, 3), (1, 1, 1, 1, 1, 1))])
def test_half_reflect_backward_in_eager_order(shape, pads, dtype):
    # up to 27 contributions per input element, each sum rounded to 16 bits
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 4).to(dtype)
    check_against_eager(lambda t: F.pad(t, pads, mode="reflect"), [x], rtol=0, atol=0)
