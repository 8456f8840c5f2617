"""The vision / long-tail operators of issue 13 through backend="neuron", against
eager, forward and backward: hardtanh (ReLU6), as_strided (+ as_strided_scatter,
its backward), grid_sampler_2d (+ backward), the fused
_transformer_encoder_layer_fwd and mkldnn_rnn_layer (+ backward)
(trnc.decompositions, decomp_strided, decomp_sampling, decomp_transformer,
decomp_rnn), and the backward of a transposed convolution
(decomp_matmul_conv)."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import trnc
from helpers import check_against_eager, compile_neuron, trnc_error

pytestmark = pytest.mark.needs_native


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


# hardtanh ---------------------------------------------------------------------


def test_relu6_and_hardtanh_forward_backward():
    x = torch.randn(6, 40, generator=_gen()) * 8
    check_against_eager(lambda t: F.relu6(t) + F.hardtanh(t, -2.0, 3.5), [x])


def test_mobilenet_style_inplace_relu6_block():
    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU6(inplace=True),
                                torch.nn.Conv2d(8, 8, 1), torch.nn.ReLU6(inplace=True))
    x = torch.randn(2, 4, 6, 6, generator=_gen())
    check_against_eager(block, [x], atol=1e-4, rtol=1e-4)


# transposed convolution's backward ----------------------------------------------


def _training_step_matches(module, x):
    """Output, input gradient and parameter gradients of one step vs eager."""
    results = []
    for run in (lambda m: m, compile_neuron):
        m = copy.deepcopy(module)
        t = x.clone().requires_grad_()
        out = run(m)(t)
        (out * torch.randn(out.shape, generator=_gen(1))).sum().backward()
        results.append([out.detach(), t.grad] + [p.grad for p in m.parameters()])
    for a, e in zip(*results):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("cin,cout,k,stride,padding,out_pad,groups,dilation,bias", [
    (6, 6, 3, 1, 1, 0, 6, 1, True),  # LowFormer's depthwise upsampling at attention stride 1
    (6, 6, 4, 2, 1, 0, 6, 1, True),  # ... and at stride 2
    (4, 6, 3, 2, 1, 1, 2, 1, False),  # grouped, output_padding
    (4, 3, 3, 1, 2, 0, 1, 2, True),  # dilated
])
def test_conv_transpose2d_training_step(cin, cout, k, stride, padding, out_pad, groups, dilation, bias):
    torch.manual_seed(0)
    up = torch.nn.ConvTranspose2d(cin, cout, k, stride, padding, out_pad, groups, bias, dilation)
    _training_step_matches(up, torch.randn(2, cin, 5, 4, generator=_gen()))


def test_conv_transpose1d_training_step():
    torch.manual_seed(0)
    up = torch.nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1)
    _training_step_matches(up, torch.randn(2, 3, 7, generator=_gen()))


# as_strided -------------------------------------------------------------------

# (input shape, permutation applied first, size, stride, offset): view forms
# (permuted storage, strided steps, broadcast, a tail past the last full row)
# and gather forms (overlapping windows, interleaved strides).
AS_STRIDED_CASES = [
    ((3, 4), None, (3, 2), (1, 3), 1),
    ((3, 4), (1, 0), (3, 2), (1, 3), 1),
    ((3, 4), None, (2, 2), (6, 2), 1),
    ((3, 4), None, (3, 2, 4), (0, 4, 1), 0),
    ((4, 5), None, (2, 3), (7, 2), 3),
    ((3, 4), None, (3, 3), (2, 1), 1),
    ((2, 3, 4), (0, 2, 1), (2, 2, 3), (12, 1, 4), 0),
    ((16,), None, (4, 4), (1, 3), 0),
    ((2, 8, 8, 3), (0, 3, 1, 2), (2, 3, 8, 8), (192, 1, 24, 3), 0),
]


@pytest.mark.parametrize("shape,perm,size,stride,offset", AS_STRIDED_CASES)
def test_as_strided_forward_backward(shape, perm, size, stride, offset):
    def fn(t):
        if perm is not None:
            t = t.permute(perm)
        return torch.as_strided(t, size, stride, offset) * 2

    check_against_eager(fn, [torch.randn(shape, generator=_gen())])


def test_as_strided_int64_forward():
    x = torch.randint(-100, 100, (4, 6), generator=_gen())
    check_against_eager(lambda t: torch.as_strided(t.t(), (3, 3), (1, 5), 2) + 1, [x], grad=False)


def test_adaptive_pooling_of_a_permuted_input():
    x = torch.randn(2, 6, 6, 3, generator=_gen())
    check_against_eager(lambda t: F.adaptive_avg_pool2d(t.permute(0, 3, 1, 2), (2, 3)), [x])


def test_as_strided_reading_outside_its_input_is_refused():
    fn = compile_neuron(lambda t: torch.as_strided(t[1:], (2, 4), (4, 1), 0) * 1)
    with pytest.raises(Exception) as excinfo:
        fn(torch.randn(3, 4))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError), repr(excinfo.value)
    assert "as_strided" in str(err) and "outside" in str(err)


def test_as_strided_of_a_strided_slice_is_refused():
    fn = compile_neuron(lambda t: torch.as_strided(t[:, ::2], (3, 2), (4, 2), 0) * 1)
    with pytest.raises(Exception) as excinfo:
        fn(torch.randn(3, 4))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError) and "not a dense layout" in str(err), repr(excinfo.value)


# grid_sampler_2d ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_forward_backward(mode, padding_mode, align_corners):
    x = torch.randn(2, 3, 5, 6, generator=_gen())
    # Coordinates past [-1, 1] exercise the padding.
    grid = torch.rand(2, 4, 7, 2, generator=_gen(1)) * 2.6 - 1.3
    check_against_eager(
        lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
        [x, grid], atol=1e-5, rtol=1e-5)


def test_grid_sample_bicubic_zeros_forward_backward():
    x = torch.randn(1, 2, 5, 5, generator=_gen())
    grid = torch.rand(1, 3, 4, 2, generator=_gen(1)) * 2.2 - 1.1
    check_against_eager(lambda a, g: F.grid_sample(a, g, mode="bicubic", align_corners=False), [x, grid],
                        atol=1e-5, rtol=1e-5)


def test_spatial_transformer_affine_grid_training_step():
    torch.manual_seed(0)
    loc = torch.nn.Linear(16, 6)
    x = torch.randn(2, 3, 4, 4, generator=_gen())

    def stn(a):
        theta = loc(a.mean(1).flatten(1)).view(-1, 2, 3) * 0.1 + torch.eye(2, 3)
        grid = F.affine_grid(theta, [2, 3, 4, 4], align_corners=False)
        return F.grid_sample(a, grid, align_corners=False)

    check_against_eager(stn, [x], atol=1e-5, rtol=1e-5)


def test_grid_sample_bicubic_border_backward_is_refused():
    x = torch.randn(1, 2, 5, 5, requires_grad=True)
    grid = torch.rand(1, 3, 4, 2) * 2 - 1
    fn = compile_neuron(lambda a, g: F.grid_sample(a, g, mode="bicubic", padding_mode="border", align_corners=False))
    with pytest.raises(Exception) as excinfo:
        fn(x, grid).sum().backward()
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.CompileError) and "bicubic" in str(err), repr(excinfo.value)


# _transformer_encoder_layer_fwd ---------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_fast_path_with_padding_mask(norm_first, activation):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=norm_first,
                                             activation=activation)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 5, 16, generator=_gen())
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[1, 3:] = True
    with torch.no_grad():
        expected = enc(x, src_key_padding_mask=mask)
        actual = compile_neuron(enc)(x, src_key_padding_mask=mask)
    torch.testing.assert_close(actual[0], expected[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(actual[1, :3], expected[1, :3], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mask_kind", ["none", "square", "merged"])
def test_transformer_encoder_layer_fwd_op(mask_kind):
    torch.manual_seed(0)
    E, H, B, L = 8, 2, 2, 4
    layer = torch.nn.TransformerEncoderLayer(E, H, 16, dropout=0.0, batch_first=True).eval()
    sa = layer.self_attn
    mask, mask_type = None, None
    if mask_kind == "square":
        mask, mask_type = torch.triu(torch.ones(L, L, dtype=torch.bool), 1), 0
    elif mask_kind == "merged":
        mask = torch.zeros(B, H, L, L)
        mask[1, :, :, 2:] = float("-inf")
        mask[0, 1, 3, :] = float("-inf")  # a fully masked row: NaN, as ATen's CPU masked softmax
        mask_type = 2

    def fn(x):
        return torch._transformer_encoder_layer_fwd(
            x, E, H, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, False, False,
            1e-5, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,
            layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias, mask, mask_type)

    x = torch.randn(B, L, E, generator=_gen())
    with torch.no_grad():
        torch.testing.assert_close(compile_neuron(fn)(x), fn(x), atol=1e-5, rtol=1e-5, equal_nan=True)


# mkldnn_rnn_layer (nn.LSTM traced by Dynamo) ------------------------------------------


@pytest.fixture
def allow_rnn():
    old = torch._dynamo.config.allow_rnn
    torch._dynamo.config.allow_rnn = True
    yield
    torch._dynamo.config.allow_rnn = old


@pytest.mark.parametrize("batch_first,bidirectional", [(True, False), (False, True)])
def test_lstm_training_step_matches_eager(allow_rnn, batch_first, bidirectional):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(4, 6, num_layers=2, batch_first=batch_first, bidirectional=bidirectional)
    x = torch.randn(2, 3, 4, generator=_gen())  # does not require grad: the first layer is fused

    def step(module):
        module.zero_grad()
        out, (h, c) = module(x)
        (out.square().sum() + h.sum() + 2 * c.sum()).backward()
        return out, h, c, [p.grad.clone() for p in module.parameters()]

    expected = step(lstm)
    actual = step(torch.compile(lstm, backend="neuron", dynamic=False))
    for a, e in zip(actual[:3], expected[:3]):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)
    for a, e in zip(actual[3], expected[3]):
        torch.testing.assert_close(a, e, atol=1e-5, rtol=1e-5)


def test_lstm_inference_with_initial_state(allow_rnn):
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(5, 4, bias=False)
    x = torch.randn(3, 2, 5, generator=_gen())
    h0, c0 = torch.randn(1, 2, 4, generator=_gen(1)), torch.randn(1, 2, 4, generator=_gen(2))
    with torch.no_grad():
        expected = lstm(x, (h0, c0))
        actual = torch.compile(lstm, backend="neuron", dynamic=False)(x, (h0, c0))
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)
