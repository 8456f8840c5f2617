"""Indexing: the trnc.gather_rows / trnc.scatter_rows custom ops (the indirect
rows contract) and the decompositions built on them (decomp_indexing.py):
embedding, index_select, gather, scatter(_add), index/index_put, nll_loss,
cross_entropy, upsample through F.interpolate, forward and backward.

Each case runs twice: decomposed by trnc's table and executed eagerly (the
custom ops' CPU implementations; checks the rules alone, no extension needed),
and compiled through backend="neuron" on the simulator.
"""

import collections

import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.backends.common import aot_autograd
from torch._subclasses.fake_tensor import FakeTensorMode

import trnc
from trnc import decomp_indexing
from trnc.decompositions import decomposition_table
from helpers import BACKEND, check_against_eager, compile_neuron, needs_native, trnc_error

gather_rows = torch.ops.trnc.gather_rows
scatter_rows = torch.ops.trnc.scatter_rows

# ---------------------------------------------------------------------------
# The custom ops' reference semantics (the contract the DmaIndirect lowering meets)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_gather_rows_out_of_range_gives_zero_rows(index_dtype):
    table = torch.arange(12.0).view(4, 3)
    out = gather_rows(table, torch.tensor([3, -1, 0, 4, 3], dtype=index_dtype))
    expected = torch.stack([table[3], torch.zeros(3), table[0], torch.zeros(3), table[3]])
    torch.testing.assert_close(out, expected)


def test_scatter_rows_last_writer_wins_and_drops_out_of_range():
    base = torch.zeros(3, 2)
    src = torch.arange(10.0).view(5, 2)
    out = scatter_rows(base, torch.tensor([2, -1, 2, 3, 0]), src, False)
    torch.testing.assert_close(out, torch.tensor([[8.0, 9.0], [0.0, 0.0], [4.0, 5.0]]))
    torch.testing.assert_close(base, torch.zeros(3, 2))  # functional


def test_scatter_rows_accumulates_in_fp32():
    base = torch.full((2, 1), 256.0, dtype=torch.bfloat16)
    src = torch.ones(4, 1, dtype=torch.bfloat16)
    out = scatter_rows(base, torch.tensor([0, 0, 0, 0]), src, True)
    # bf16 adds one at a time would stay at 256 (ulp 2); fp32 reaches 260.
    assert out.dtype == torch.bfloat16 and out[0, 0].item() == 260.0 and out[1, 0].item() == 256.0


def test_row_ops_opcheck_and_names():
    table = torch.randn(5, 3, requires_grad=True)
    index = torch.tensor([0, 4, -1, 5, 2, 4])
    torch.library.opcheck(gather_rows.default, (table, index))
    for accumulate in (True, False):
        torch.library.opcheck(scatter_rows.default, (table, index, torch.randn(6, 3, requires_grad=True), accumulate))
    assert str(gather_rows.default) == "trnc.gather_rows.default"
    assert str(scatter_rows.default) == "trnc.scatter_rows.default"


# ---------------------------------------------------------------------------
# Decompositions vs eager

W = torch.tensor  # short alias for literal index tensors
CLASS_WEIGHT = torch.linspace(0.2, 1.4, 5)


def _put(x, i, v):
    y = x.clone()
    y[:, i] = v
    return y


def _cases():
    x3 = lambda: torch.randn(3, 5, 4)  # noqa: E731
    cases = {
        "embedding": (lambda w, i: F.embedding(i, w), lambda: [torch.randn(10, 4), W([[1, 3, 3], [0, 9, 3]])]),
        "embedding_padding_idx": (lambda w, i: F.embedding(i, w, padding_idx=3),
                                  lambda: [torch.randn(10, 4), W([[1, 3, 3], [0, 9, 3]])]),
        "embedding_scale_grad_by_freq": (lambda w, i: F.embedding(i, w, padding_idx=0, scale_grad_by_freq=True),
                                         lambda: [torch.randn(10, 4), W([1, 3, 3, 0, 9, 3, 3])]),
        "index_select_dim1": (lambda x, i: torch.index_select(x, 1, i), lambda: [x3(), W([4, 0, 0, 2])]),
        "index_select_dim0": (lambda x, i: torch.index_select(x, 0, i), lambda: [x3(), W([2, 2, 1])]),
        "index_negative": (lambda x, i: x[i] * 2, lambda: [x3(), W([-1, 0, 2])]),
        "index_dim1_2d_index": (lambda x, i: x[:, i], lambda: [x3(), W([[-1, 0], [2, 2]])]),
        "index_adjacent_dims": (lambda x, i, j: x[:, i, j], lambda: [x3(), W([[-1, 0], [2, 2]]), W([1, 3])]),
        "index_split_dims": (lambda x, i, j: x[i, :, j], lambda: [x3(), W([[-1, 0], [2, 2]]), W([1, 3])]),
        "index_put": (_put, lambda: [x3(), W([4, 1]), torch.randn(3, 2, 4)]),
        "index_put_accumulate_duplicates": (
            lambda x, i, v: torch.ops.aten.index_put(x, [None, i], v, True),
            lambda: [x3(), W([4, 1, 4, 4]), torch.randn(3, 4, 4)]),
        "index_put_two_indices_broadcast": (
            lambda x, i, j, v: torch.ops.aten.index_put(x, [i, None, j], v, True),
            lambda: [x3(), W([0, 2, 0]), W([1]), torch.randn(5)]),
        "cross_entropy": (lambda x, t: F.cross_entropy(x, t), lambda: [torch.randn(6, 5), W([0, 4, -100, 2, 2, 1])]),
        "cross_entropy_ignore_index_label_smoothing": (
            lambda x, t: F.cross_entropy(x, t, ignore_index=2, label_smoothing=0.1),
            lambda: [torch.randn(6, 5), W([0, 4, 3, 2, 2, 1])]),
        "cross_entropy_weight_label_smoothing_sum": (
            lambda x, t: F.cross_entropy(x, t, weight=CLASS_WEIGHT, label_smoothing=0.2, reduction="sum"),
            lambda: [torch.randn(6, 5), W([0, 4, -100, 2, 2, 1])]),
        "nll_loss_2d": (lambda x, t: F.nll_loss(F.log_softmax(x, 1), t), lambda: [torch.randn(2, 3, 4, 4), torch.randint(0, 3, (2, 4, 4))]),
        "upsample_nearest": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), lambda: [torch.randn(1, 2, 5, 6)]),
        "upsample_nearest_size": (lambda x: F.interpolate(x, size=(7, 4), mode="nearest"), lambda: [torch.randn(1, 2, 5, 6)]),
        "upsample_bilinear": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), lambda: [torch.randn(1, 2, 5, 6)]),
        "upsample_bilinear_align_corners": (
            lambda x: F.interpolate(x, size=(3, 9), mode="bilinear", align_corners=True), lambda: [torch.randn(1, 2, 5, 6)]),
    }
    cases["take_negative"] = (lambda x: torch.take(x, W([[0, 19], [7, -1], [7, 3]])), lambda: [torch.randn(5, 4)])
    cases["index_add_duplicates"] = (lambda x, s: x.index_add(0, W([1, 3, 1]), s, alpha=2),
                                     lambda: [torch.randn(5, 4), torch.randn(3, 4)])
    cases["index_copy_dim1"] = (lambda x, s: x.index_copy(1, W([2, 0]), s), lambda: [torch.randn(5, 4), torch.randn(5, 2)])
    for red in ("none", "mean", "sum"):
        cases[f"nll_loss_weight_{red}"] = (
            lambda x, t, red=red: F.nll_loss(F.log_softmax(x, 1), t, weight=CLASS_WEIGHT, reduction=red, ignore_index=1),
            lambda: [torch.randn(6, 5), W([0, 4, 1, 2, 2, 1])])
    for d in (0, 1, 2):
        shape = [2, 3, 3]
        cases[f"gather_dim{d}"] = (lambda x, i, d=d: torch.gather(x, d, i),
                                   lambda d=d: [x3(), torch.randint(0, (3, 5, 4)[d], shape)])
        cases[f"scatter_add_dim{d}"] = (lambda x, i, s, d=d: torch.scatter_add(x, d, i, s),
                                        lambda d=d: [x3(), torch.randint(0, (3, 5, 4)[d], shape), torch.randn(shape)])
    cases["scatter"] = (lambda x, i, s: torch.scatter(x, 1, i, s),
                        lambda: [x3(), W([[[0, 1, 2, 3]], [[1, 2, 3, 4]]]), torch.randn(2, 1, 4)])
    cases["scatter_value"] = (lambda x, i: torch.scatter(x, 1, i, 2.5), lambda: [x3(), W([[[0, 1, 2, 3]], [[1, 2, 3, 4]]])])
    return cases


CASES = _cases()

# What a decomposed indexing graph may contain: the two row ops and ops the
# compiler lowers (never aten.index / gather / scatter / embedding / nll_loss).
ALLOWED = {
    "trnc.gather_rows.default", "trnc.scatter_rows.default", "aten._to_copy.default", "aten.add.Tensor",
    "aten.sub.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.arange.start_step", "aten.clone.default",
    "aten.expand.default", "aten.full.default", "aten.view.default", "aten.permute.default", "aten.where.self",
    "aten.lt.Scalar", "aten.eq.Scalar", "aten.eq.Tensor", "aten.ne.Scalar", "aten.logical_and.default",
    "aten.sum.default", "aten.sum.dim_IntList", "aten._log_softmax.default", "aten.exp.default",
    "aten.detach.default", "aten.clamp.default", "aten.bitwise_not.default", "aten.scalar_tensor.default",
    "aten.neg.default", "aten.mean.default", "aten._log_softmax_backward_data.default",
    "aten.lift_fresh_copy.default", "aten.floor.default", "aten.unsqueeze.default", "aten.slice.Tensor",
    "aten.cat.default",
}


def _eager_decomposed_backend(seen: collections.Counter):
    def compiler(gm, example_inputs):
        seen.update(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    return aot_autograd(fw_compiler=compiler, bw_compiler=compiler, decompositions=decomposition_table())


@pytest.mark.parametrize("gathered", [True, False], ids=["large", "small"])
def test_nll_loss_gathers_the_target_forward_and_compares_once_backward(monkeypatch, gathered):
    # A large loss's forward moves one row of R classes per sample
    # (gather_rows), no [N, C] pass; a small one (under MIN_GATHER_ELEMENTS)
    # keeps the one-hot select. The backward writes grad_input whole anyway,
    # with one compare: an ignored target becomes -1 per sample (no class
    # equals it), so no logical_and over every class (the GPT step's
    # [4096, 8192] loss).
    if gathered:
        monkeypatch.setattr(decomp_indexing, "MIN_GATHER_ELEMENTS", 0)
    seen = collections.Counter()
    x = torch.randn(6, 5, requires_grad=True)
    t = torch.tensor([0, 4, -100, 2, 2, 1])
    fn = lambda x, t: F.cross_entropy(x, t)  # noqa: E731
    out = torch.compile(fn, backend=_eager_decomposed_backend(seen), dynamic=False)(x, t)
    torch.testing.assert_close(out, fn(x, t))
    out.backward()
    assert seen["aten.logical_and.default"] == 0
    assert seen["trnc.gather_rows.default"] == (1 if gathered else 0)
    assert seen["aten.eq.Tensor"] == (1 if gathered else 2)  # the backward's one-hot (and the forward's)


@pytest.mark.parametrize("n, c, layout", [(3, 5, (3, 1)), (4096, 8192, (512, 128)), (4096, 50304, (128, 128)),
                                          (4096, 32000, (512, 256)), (4096, 50257, None)])
def test_nll_loss_gather_layout_keeps_tables_within_one_dma(n, c, layout):
    # (B, R): blocks of B rows, each a [B * C / R, R] table of at most 65535
    # rows (one DmaIndirect; every index exact in fp32); none for an odd
    # vocabulary (one-hot instead).
    assert decomp_indexing._pick_layout(n, c) == layout


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_native)], ids=["decomposed", "compiled"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_gathers_rows_of_several_classes(monkeypatch, compiled, weighted, reduction):
    # Tables of at most 400 rows (and no size floor) make [300, 96] gather in blocks of 128 rows
    # (the last one short) of rows of 32 classes: the target's column within
    # its row, an ignored target's zero row, the blocks' cat and class
    # weights are all exercised.
    monkeypatch.setattr(decomp_indexing, "MAX_TABLE_ROWS", 400)
    monkeypatch.setattr(decomp_indexing, "MIN_GATHER_ELEMENTS", 0)
    assert decomp_indexing._pick_layout(300, 96) == (128, 32)
    weight = torch.rand(96) + 0.5 if weighted else None
    fn = lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, weight=weight, reduction=reduction, ignore_index=7)  # noqa: E731
    t = torch.randint(0, 96, (300,), generator=torch.Generator().manual_seed(3))
    t[::6] = 7
    t[1], t[2], t[299] = 95, 0, 31  # the last and first columns of a row
    x = torch.randn(300, 96, generator=torch.Generator().manual_seed(4))
    if compiled:
        check_against_eager(fn, [x, t], rtol=1e-4, atol=1e-5)
        return
    seen = collections.Counter()
    x_ours = x.clone().requires_grad_()
    torch.testing.assert_close(torch.compile(fn, backend=_eager_decomposed_backend(seen), dynamic=False)(x_ours, t),
                               fn(x, t))
    assert seen["trnc.gather_rows.default"] == 3 + weighted  # 3 blocks (+ the weights)


@pytest.mark.parametrize("name", list(CASES))
def test_decomposition_runs_eagerly(name):
    fn, make = CASES[name]
    inputs = make()
    seen = collections.Counter()
    eager_in = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    ours_in = [x.clone().requires_grad_(x.is_floating_point()) for x in inputs]
    expected = fn(*eager_in)
    actual = torch.compile(fn, backend=_eager_decomposed_backend(seen), dynamic=False)(*ours_in)
    torch.testing.assert_close(actual, expected)
    g = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1))
    expected.backward(g)
    actual.backward(g.clone())
    for a, e in zip(ours_in, eager_in):
        if e.grad is not None:
            torch.testing.assert_close(a.grad, e.grad)
    assert set(seen) <= ALLOWED, f"ops outside the lowered set: {set(seen) - ALLOWED}"


@needs_native
@pytest.mark.parametrize("name", list(CASES))
def test_compiled_matches_eager(name):
    fn, make = CASES[name]
    check_against_eager(fn, make())


@needs_native
def test_embedding_bfloat16():
    check_against_eager(lambda w, i: F.embedding(i, w), [torch.randn(10, 8).bfloat16(), W([[1, 3, 3], [0, 9, 3]])])


@needs_native
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_tied_embedding_gradient(dtype):
    # A weight both embedded and used as the output projection (GPT-2's
    # tied wte / lm_head): its gradient is the projection's plus the
    # embedding's scatter-add, which trn.add's canonicalization turns into
    # one scatter-add into the projection's gradient (lit:
    # canonicalize-add-scatter.mlir). Repeated tokens sum onto a row.
    g = torch.Generator().manual_seed(0)
    w = torch.randn(64, 16, generator=g).to(dtype)
    idx = torch.tensor([[1, 3, 3, 7], [0, 63, 3, 1]])

    def tied(w, idx):
        return F.embedding(idx, w) @ w.T

    tol = {} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    check_against_eager(tied, [w, idx], **tol)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=needs_native)], ids=["decomposed", "compiled"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0])
def test_embedding_max_norm_renorms_the_weight_in_place(compiled, norm_type):
    weight = torch.randn(10, 4) * 2
    index = W([[1, 3, 3], [0, 9, 3]])
    fn = lambda w, i: F.embedding(i, w, max_norm=1.5, norm_type=norm_type) * 2  # noqa: E731
    w_eager, w_ours = weight.clone(), weight.clone()
    expected = fn(w_eager, index)
    backend = BACKEND if compiled else _eager_decomposed_backend(collections.Counter())
    actual = torch.compile(fn, backend=backend, dynamic=False)(w_ours, index)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(w_ours, w_eager)  # the renorm's write-back


@needs_native
def test_lm_head_sizes_span_several_tiles():
    """300 tokens (3 partition tiles), vocab 700, ignore_index on some targets:
    embedding forward/backward and cross_entropy across tiles."""
    def fn(w, ids, targets):
        h = F.embedding(ids, w)  # [300, 64]
        logits = h @ w.t()  # tied head: [300, 700]
        return F.cross_entropy(logits, targets, ignore_index=-100, label_smoothing=0.05)

    targets = torch.randint(0, 700, (300,))
    targets[::7] = -100
    check_against_eager(fn, [torch.randn(700, 64) * 0.1, torch.randint(0, 700, (300,)), targets],
                        rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# What is refused, and how


@needs_native
def test_scatter_multiply_is_reported_unsupported():
    fn = compile_neuron(lambda x, i, s: torch.scatter(x, 1, i, s, reduce="multiply"))
    with pytest.raises(Exception) as excinfo:
        fn(torch.randn(3, 5), W([[0, 1], [2, 3], [4, 0]]), torch.randn(3, 2))
    err = trnc_error(excinfo)
    assert isinstance(err, trnc.UnsupportedOperatorError), err
    assert "aten.scatter.reduce" in str(err)


def test_index_arithmetic_beyond_fp32_exact_range_is_refused():
    with FakeTensorMode():
        x = torch.empty(decomp_indexing.EXACT_INDEX_LIMIT + 8)
        index = torch.zeros(4, dtype=torch.int64)
        with pytest.raises(trnc.CompileError, match=r"beyond 2\*\*24"):
            decomp_indexing._gather(x, 0, index)
