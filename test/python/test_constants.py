"""Tensor constants in an ATen graph (``get_attr`` nodes, e.g. the index tensor of
``x[..., [-1], :]``) reach the compiled program as trailing inputs
(python/trnc/constants.py). Falcon, CTRL, CPM-Ant and Gemma 3 have them."""

import torch

from helpers import check_against_eager, needs_native

pytestmark = needs_native


def test_list_index_constant_forward_and_backward():
    # A Python list index becomes a `_tensor_constant` (lift_fresh_copy) in the graph.
    check_against_eager(lambda x: x[..., [-2], :] * 2 + x[..., [0], :], [torch.randn(2, 5, 3)])


def test_several_constants_of_several_dtypes():
    check_against_eager(lambda x: x[:, [3, 1]] * x[:, [0, 2]], [torch.randn(3, 4)])
