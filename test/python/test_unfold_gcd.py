"""Tensor.unfold (forward and unfold_backward), integer gcd / lcm and
scatter_reduce amax / amin through backend="neuron", against eager
(trnc.decomp_windows, trnc.decomp_integer, trnc.decomp_scatter_minmax): the
operators blt, inkling2 and reformer needed."""

from __future__ import annotations

import math

import pytest
import torch

from helpers import check_against_eager, compile_neuron
from trnc.decomp_integer import euclid_steps

# (shape, dim, size, step): offsets loop (size <= windows), windows loop
# (fewer windows than offsets), step > size (gaps), overlapping step > 1,
# the last window short of the end, a one-element window.
UNFOLD_CASES = [
    ((2, 8, 4), 1, 3, 1),
    ((2, 8, 4), -1, 2, 2),
    ((10,), 0, 3, 3),
    ((1000,), 0, 3, 11),
    ((12, 6), 0, 5, 2),
    ((4, 5), 1, 4, 1),
    ((3, 9), 1, 7, 1),
    ((5, 5, 5), 2, 3, 2),
    ((10, 10), 0, 1, 2),
    ((3, 11), 1, 4, 3),
]


def _unfold(dim, size, step):
    # * 1: an output that is not a view of the input (AOTAutograd would
    # otherwise replay the view outside the graph).
    return lambda x: x.unfold(dim, size, step) * 1


@pytest.mark.parametrize("shape,dim,size,step", UNFOLD_CASES)
def test_unfold_float32_forward_backward(shape, dim, size, step):
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    check_against_eager(_unfold(dim, size, step), [x])


@pytest.mark.parametrize("shape,dim,size,step", [((2, 8, 4), 1, 3, 1), ((4, 5), 1, 4, 1), ((3, 11), 1, 4, 3)])
def test_unfold_bfloat16_forward_backward(shape, dim, size, step):
    # Pure data movement plus (backward) sums of at most `size` bf16 terms.
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    check_against_eager(_unfold(dim, size, step), [x], atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("shape,dim,size,step", [((2, 8, 4), 1, 3, 1), ((3, 9), 1, 7, 1), ((10,), 0, 3, 3)])
def test_unfold_int64_forward(shape, dim, size, step):
    x = torch.randint(-1000, 1000, shape, generator=torch.Generator().manual_seed(0))
    check_against_eager(_unfold(dim, size, step), [x], grad=False)


def test_unfold_0d():
    check_against_eager(_unfold(0, 1, 1), [torch.tensor(3.5)])


def test_blt_token_groups():
    """blt's byte_group_hash_function: zero-padded int64 tokens, windows of
    group_size along the sequence, a polynomial hash (small prime: int64 lives
    in int32 tiles on chip)."""
    def hashes(tokens):
        group = 3
        padding = torch.zeros(tokens.shape[0], group - 1, dtype=torch.int64)
        windows = torch.cat([padding, tokens], dim=1).unfold(1, group, 1)
        powers = torch.tensor(31, dtype=torch.int64) ** torch.arange(group)
        return torch.sum(windows * powers, dim=-1) % 30000

    tokens = torch.randint(0, 256, (2, 16), generator=torch.Generator().manual_seed(0))
    check_against_eager(hashes, [tokens], grad=False)


def test_inkling2_short_conv():
    """inkling2's dynamic short convolution: causal windows over time, newest
    first, per-position weights; forward and backward."""
    kernel, seq = 4, 10

    def conv(hidden, weights):
        context = torch.nn.functional.pad(hidden.transpose(1, 2), (kernel - 1, 0))
        windows = context.unfold(-1, kernel, 1).flip(-1).transpose(1, 2)
        return (windows * weights).sum(-1)

    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(2, seq, 8, generator=g)
    weights = torch.randn(2, seq, 8, kernel, generator=g)
    check_against_eager(conv, [hidden, weights])


# gcd / lcm


def _ints(shape, low, high, seed, dtype=torch.int64):
    return torch.randint(low, high, shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("op", [torch.gcd, torch.lcm])
def test_gcd_lcm_zeros_and_negatives(op, dtype):
    a = _ints((6, 7), -40, 41, 0, dtype)
    b = _ints((6, 7), -40, 41, 1, dtype)
    a[0, :3] = 0  # gcd(0, b) = |b|, lcm(0, b) = 0, gcd(0, 0) = lcm(0, 0) = 0
    b[0, 1:5] = 0
    check_against_eager(lambda x, y: op(x, y), [a, b], grad=False)


@pytest.mark.parametrize("op", [torch.gcd, torch.lcm])
def test_gcd_lcm_broadcast(op):
    a = _ints((3, 1, 5), -12, 13, 2)
    b = _ints((4, 5), -12, 13, 3)
    check_against_eager(lambda x, y: op(x, y), [a, b], grad=False)


def test_lcm_0d_reformer():
    """reformer: np.lcm(lsh_attn_chunk_length, local_attn_chunk_length) on
    0-d int64 tensors."""
    check_against_eager(lambda x, y: torch.lcm(x, y) + 0, [torch.tensor(64), torch.tensor(48)], grad=False)


def _fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def test_gcd_worst_case_operands():
    """Consecutive Fibonacci numbers take the most Euclid steps; the largest
    pair inside the exact range (2**24) and multiples of a common factor."""
    a = torch.tensor([_fib(36), _fib(35), 7 * 2**20, 0, -(2**23), 12345678], dtype=torch.int64)
    b = torch.tensor([_fib(35), _fib(36), 5 * 2**20, 16777215, 3 * 2**21, -9876543], dtype=torch.int64)
    assert int(a.abs().max()) <= 2**24 and int(b.abs().max()) <= 2**24
    check_against_eager(lambda x, y: torch.gcd(x, y), [a, b], grad=False)


def test_euclid_steps_is_lames_bound():
    def steps(a, b):
        n = 0
        while b:
            a, b = b, a % b
            n += 1
        return n

    for m in (1, 2, 10, 100, 255):
        assert max(steps(a, b) for a in range(m + 1) for b in range(m + 1)) <= euclid_steps(m)
    # The worst pair below 2**31 (consecutive Fibonacci numbers, smaller first).
    k = max(i for i in range(60) if _fib(i) <= 2**31)
    assert steps(_fib(k - 1), _fib(k)) <= euclid_steps(2**31)
    assert euclid_steps(2**31) == 46
    assert math.gcd(_fib(k), _fib(k - 1)) == 1


# scatter_reduce amax / amin (blt's patch_reduce; trnc.decomp_scatter_minmax)


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
def test_scatter_reduce_minmax_blt_patches(reduce, include_self):
    """blt: token embeddings [B, T, D] pooled into P patches by patch id,
    forward and backward (ties split the gradient, as PyTorch's formula)."""
    g = torch.Generator().manual_seed(0)
    patch_ids = torch.sort(torch.randint(0, 5, (2, 12), generator=g), dim=1).values

    def pool(hidden):
        index = patch_ids.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
        base = torch.zeros(2, 6, hidden.shape[-1])
        return base.scatter_reduce(1, index, hidden, reduce=reduce, include_self=include_self)

    check_against_eager(pool, [torch.randn(2, 12, 8, generator=g)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_scatter_reduce_minmax_partial_index(dtype):
    """An index smaller than self in the other dims, along dim 0; rows no
    index reaches keep self."""
    g = torch.Generator().manual_seed(1)
    x = torch.randint(-50, 50, (5, 4), generator=g).to(dtype)
    src = torch.randint(-50, 50, (4, 6), generator=g).to(dtype)
    index = torch.randint(0, 4, (3, 3), generator=g)
    check_against_eager(lambda a, b: a.scatter_reduce(0, index, b, reduce="amax", include_self=False), [x, src],
                        grad=False)
    check_against_eager(lambda a, b: a.scatter_reduce(0, index, b, reduce="amin"), [x, src], grad=False)


def test_unfold_decomposes_to_views_and_cat():
    """unfold and unfold_backward become slices/selects, cat and adds: no
    index tensor, no indirect DMA (the core rule's index_put)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from trnc.decompositions import decomposition_table

    aten = torch.ops.aten
    table = decomposition_table()
    allowed = {"aten.slice.Tensor", "aten.select.int", "aten.view.default", "aten.cat.default",
               "aten.permute.default", "aten.add.Tensor", "aten.full.default", "aten.clone.default"}
    for fn, example in [
        (lambda x: aten.unfold(x, 1, 3, 2), torch.randn(2, 9, 4)),
        (lambda x: aten.unfold(x, 1, 7, 1), torch.randn(2, 9, 4)),
        (lambda g: aten.unfold_backward(g, [2, 9, 4], 1, 3, 2), torch.randn(2, 4, 4, 3)),
        (lambda g: aten.unfold_backward(g, [2, 9, 4], 1, 7, 1), torch.randn(2, 3, 4, 7)),
    ]:
        graph = make_fx(fn, decomposition_table=table)(example).graph
        targets = {str(n.target) for n in graph.nodes if n.op == "call_function"}
        assert targets <= allowed, targets - allowed
