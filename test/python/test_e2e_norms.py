"""End to end, normalisation layers and softmax training: trnc against eager.

Layer/group/batch norm reach the compiler as PyTorch's decompositions
(python/trnc/decomp_reductions.py): var_mean plus elementwise ops; softmax's
backward is the core table's mul/sum/sub.
"""

import pytest
import torch

from helpers import check_against_eager, compile_neuron, needs_native

pytestmark = needs_native

TOL = {"atol": 1e-4, "rtol": 1e-4}


@pytest.mark.parametrize("shape,dim", [((7, 300), 1), ((130, 4, 20), 1), ((6, 9), 0)])
def test_softmax_backward(shape, dim):
    check_against_eager(lambda t: torch.softmax(t, dim), [torch.randn(shape) * 3], **TOL)


def test_log_softmax_backward():
    check_against_eager(lambda t: torch.log_softmax(t, -1), [torch.randn(12, 50)], **TOL)


@pytest.mark.parametrize("shape", [(8, 32), (3, 5, 64)])
def test_layer_norm(shape):
    torch.manual_seed(0)
    w, b = torch.randn(shape[-1]), torch.randn(shape[-1])
    check_against_eager(lambda x, w, b: torch.nn.functional.layer_norm(x, shape[-1:], w, b),
                        [torch.randn(shape), w, b], **TOL)


def test_rms_norm():
    check_against_eager(lambda x, w: torch.nn.functional.rms_norm(x, (32,), w),
                        [torch.randn(8, 32), torch.randn(32)], **TOL)


def test_group_norm():
    check_against_eager(lambda x, w, b: torch.nn.functional.group_norm(x, 2, w, b),
                        [torch.randn(3, 8, 5), torch.randn(8), torch.randn(8)], **TOL)


def test_batch_norm_eval():
    rm, rv = torch.randn(6), torch.rand(6) + 0.5
    check_against_eager(lambda x, w, b: torch.nn.functional.batch_norm(x, rm, rv, w, b, training=False),
                        [torch.randn(10, 6), torch.randn(6), torch.randn(6)], **TOL)


def test_batch_norm_training_updates_running_stats():
    torch.manual_seed(0)
    eager = torch.nn.BatchNorm1d(6)
    ours = torch.nn.BatchNorm1d(6)
    x = torch.randn(10, 6)
    expected = eager(x)
    actual = compile_neuron(ours)(x)
    torch.testing.assert_close(actual, expected, **TOL)
    torch.testing.assert_close(ours.running_mean, eager.running_mean, **TOL)
    torch.testing.assert_close(ours.running_var, eager.running_var, **TOL)
