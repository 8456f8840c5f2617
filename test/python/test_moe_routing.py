"""MoE routing ops as static-shape graphs (python/trnc/decomp_moe.py): histc with an
explicit range, and transformers' grouped-matmul custom op with its backward."""

import pytest
import torch

from helpers import check_against_eager, needs_native

pytestmark = needs_native


def test_histc_counts_expert_ids():
    # transformers' routing: histc of the float expert ids over bins == experts.
    ids = torch.tensor([3, 0, 1, 1, 3, 3, 2, 0, 1, 3], dtype=torch.float32)
    check_against_eager(lambda x: torch.histc(x, bins=4, min=0, max=3), [ids], grad=False)


def test_histc_general_range_drops_outside():
    x = torch.tensor([-1.0, 0.0, 0.24, 0.25, 0.5, 0.99, 1.0, 1.5, float("nan")])
    check_against_eager(lambda t: torch.histc(t, bins=4, min=0, max=1), [x], grad=False)


def test_grouped_mm_fallback_forward_and_backward():
    pytest.importorskip("transformers.integrations.moe", reason="transformers is not installed")
    torch.manual_seed(0)
    x = torch.randn(10, 8)
    w = torch.randn(3, 8, 6)
    offs = torch.tensor([3, 3, 9], dtype=torch.int32)  # an empty group; row 9 in no group (zeros)

    def grouped(a, b):
        return torch.ops.transformers.grouped_mm_fallback(a, b, offs)

    check_against_eager(grouped, [x, w])


def test_sort_then_expert_offsets():
    # transformers' grouped-matmul routing up to the offsets: sort the
    # expert ids (a rank by counting on the device: each id's rank is the row
    # sum of a comparison matrix, read back as a row of columns), count the
    # ids per expert, cumsum. The ids come as floats (trnc's top-k yields
    # them through a cat) cast to int64, as in the model. The rank's row
    # sum, compared with the column index, once made its own row group read
    # its own result: a compile error naming trn.eq.
    ids = torch.tensor([[3, 0], [1, 1], [3, 2], [0, 1]] * 8, dtype=torch.float32)

    def offsets(top_k_index):
        expert_ids_g, _ = torch.sort(top_k_index.to(torch.int64).reshape(-1))
        counts = torch.histc(expert_ids_g.float(), bins=4, min=0, max=3)
        return torch.cumsum(counts, dim=0, dtype=torch.int32)

    check_against_eager(offsets, [ids], grad=False)
