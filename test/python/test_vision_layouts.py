"""Convolution-net layouts through backend="neuron" against eager (issue 13):
ShuffleNet's channel shuffle (a view / transpose / reshape chain around a
chunk and a cat: pure data movement, so bit-exact forward and backward) and
its blocks, and batch norm over NCHW batches whose few images would fill few
partitions (forEachTile's partition split, passes/Tile/HbmView.cpp: 64
channels on 64 partitions, 512 channels of 7x7 maps 4 to a partition)."""

from __future__ import annotations

import copy

import pytest
import torch

from helpers import check_against_eager, compile_neuron

pytestmark = pytest.mark.needs_native


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    """torchvision.models.shufflenetv2.channel_shuffle."""
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, c, h, w)


@pytest.mark.parametrize("shape", [(4, 232, 2, 2), (2, 116, 8, 8), (3, 48, 5, 7)])
def test_channel_shuffle_split_and_cat_are_exact(shape):
    """The stride-1 ShuffleNet block's data movement: chunk, a computed half,
    cat, shuffle. No arithmetic moves the values, so eager's and trnc's
    results and gradients are identical."""

    def f(x):
        x1, x2 = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat((x1, x2 * 2.0), dim=1), 2)

    x = torch.randn(*shape, generator=_gen())
    check_against_eager(f, [x], rtol=0, atol=0)


class ShuffleBlock(torch.nn.Module):
    """torchvision's InvertedResidual (ShuffleNet v2) at stride 1 and 2."""

    def __init__(self, inp: int, oup: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        half = oup // 2
        bn = torch.nn.BatchNorm2d
        if stride > 1:
            self.branch1 = torch.nn.Sequential(
                torch.nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False), bn(inp),
                torch.nn.Conv2d(inp, half, 1, bias=False), bn(half), torch.nn.ReLU())
        cin = inp if stride > 1 else half
        self.branch2 = torch.nn.Sequential(
            torch.nn.Conv2d(cin, half, 1, bias=False), bn(half), torch.nn.ReLU(),
            torch.nn.Conv2d(half, half, 3, stride, 1, groups=half, bias=False), bn(half),
            torch.nn.Conv2d(half, half, 1, bias=False), bn(half), torch.nn.ReLU())

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


def _train_step(model, x):
    model.zero_grad(set_to_none=True)
    out = model(x)
    (out * torch.randn(out.shape, generator=_gen(1), dtype=out.dtype)).sum().backward()
    return out.detach(), {n.replace("_orig_mod.", ""): p.grad for n, p in model.named_parameters()}


def _rms(a, r):
    return float((a.double() - r).square().mean().sqrt())


@pytest.mark.parametrize("stride,hw", [(2, 8), (1, 4)])
def test_shuffle_blocks_train_step_as_close_to_float64_as_eager(stride, hw):
    """Two ShuffleNet v2 blocks in train mode (batch-norm batch statistics),
    batch 4: the output and every gradient no further from a float64 step than
    eager float32's (2x RMS, the sweep's fp64 rule)."""
    torch.manual_seed(0)
    inp = 58 if stride > 1 else 116
    model = torch.nn.Sequential(ShuffleBlock(inp, 116, stride), ShuffleBlock(116, 116, 1)).train()
    x = torch.randn(4, inp, hw, hw, generator=_gen())
    ref_model = copy.deepcopy(model).double()
    ref = _train_step(ref_model, x.double())
    eager_model = copy.deepcopy(model)
    eager = _train_step(eager_model, x)
    trnc_model = copy.deepcopy(model)
    actual = _train_step(compile_neuron(trnc_model), x)
    floor = 1e-6 * max(float(g.abs().max()) for g in ref[1].values())
    assert _rms(actual[0], ref[0]) <= 2 * _rms(eager[0], ref[0]) + floor
    for name, r in ref[1].items():
        assert _rms(actual[1][name], r) <= 2 * _rms(eager[1][name], r) + floor, name


@pytest.mark.parametrize("shape", [(8, 64, 16, 16), (8, 512, 7, 7), (4, 96, 6, 6)])
def test_batch_norm_over_few_images_train_step(shape):
    """Batch norm's x - mean and its gradient are [N, C, H*W] against a
    per-channel broadcast; with few images the tiles spread C over the
    partitions (64: one channel per partition; 512 at 7x7: 4 channels to
    each of 128; 96 at 6x6: 4 channels to each of 24, runs of 144) instead
    of walking the images' 8 or 4 partitions."""
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(shape[1]).train()
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    x = torch.randn(*shape, generator=_gen()) * 2 + 0.5
    eager_bn, trnc_bn = copy.deepcopy(bn), copy.deepcopy(bn)
    eager = _train_step(eager_bn, x)
    actual = _train_step(compile_neuron(trnc_bn), x)
    torch.testing.assert_close(actual[0], eager[0], rtol=1e-5, atol=1e-5)
    for name, e in eager[1].items():
        torch.testing.assert_close(actual[1][name], e, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(trnc_bn.running_mean, eager_bn.running_mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(trnc_bn.running_var, eager_bn.running_var, rtol=1e-5, atol=1e-6)
