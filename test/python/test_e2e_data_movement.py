"""End to end, data movement: slices/selects/flips (strided views), cat/stack
(DMA copies into windows) and the composites trnc's decomposition rules build
from them (split, chunk, roll, pad, repeat, tile), forward and backward; arange
(GpSimd iota) and tril/triu (GpSimd affine_select)."""

import pytest
import torch
import torch.nn.functional as F

from helpers import check_against_eager, needs_native

pytestmark = needs_native

X = (5, 7, 6)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x[1:4, ::2, 3:] * 2,
        lambda x: x[:, 2] + 1,
        lambda x: x.select(-1, 0) * 3,
        lambda x: x.narrow(1, 2, 4) - 1,
        lambda x: x.flip(0, 2) * 2,
        lambda x: x.flip(1),
        lambda x: x.split(3, dim=1)[1] * 2,
        lambda x: x.chunk(3, dim=2)[2] + x.chunk(3, dim=2)[0],
        lambda x: torch.cat([x, x * 2, x[:, :1]], dim=1),
        lambda x: torch.stack([x, x + 1], dim=0),
        lambda x: x.roll(3, 1),
        lambda x: x.roll((1, -2), (0, 2)),
        lambda x: x.roll(5),
        lambda x: x.repeat(2, 1, 3),
        lambda x: x.tile((2,)),
    ],
    ids=["slice", "select", "select_last", "narrow", "flip02", "flip1", "split", "chunk",
         "cat", "stack", "roll", "roll2", "roll_flat", "repeat", "tile"],
)
def test_views_and_copies(fn):
    check_against_eager(fn, [torch.randn(*X)])


@pytest.mark.parametrize(
    "pad,mode",
    [((1, 2), "constant"), ((2, 0, 1, 3), "constant"), ((-1, 2), "constant"),
     ((2, 1), "reflect"), ((1, 2, 2, 1), "reflect"), ((2, 3), "replicate"),
     ((1, 1, 2, 0), "replicate")],
)
def test_pad(pad, mode):
    kwargs = {"value": 1.5} if mode == "constant" else {}
    check_against_eager(lambda x: F.pad(x, pad, mode=mode, **kwargs) * 2, [torch.randn(*X)])


def test_cat_bf16_large():
    # More rows than partitions and a window offset in the free axis.
    a, b = torch.randn(300, 40).bfloat16(), torch.randn(300, 90).bfloat16()
    check_against_eager(lambda a, b: torch.cat([a, b], 1), [a, b], grad=False)


@pytest.mark.parametrize("diagonal", [0, 2, -1])
def test_tril_triu(diagonal):
    # 2 matrices of 150 rows: two row tiles each, with the diagonal offset.
    check_against_eager(lambda x: x.tril(diagonal) + x.triu(diagonal + 1) * 2, [torch.randn(2, 150, 40)])


@pytest.mark.parametrize("args", [(10,), (3.0, 10.0, 0.5), (-4, 1000, 3)])
def test_arange(args):
    check_against_eager(lambda x: torch.arange(*args, dtype=torch.float32) + x, [torch.zeros(1)], grad=False)
