"""The DmaIndirect lowering of trnc.gather_rows / trnc.scatter_rows, compiled
through backend="neuron" and run on the simulator, against the custom ops'
CPU implementations (python/trnc/indirect_ops.py, the contract): blocks of
128 indices, row chunks wider than one tile, out-of-range indices, int32 and
int64 indices and tables, last-writer-wins and fp32 accumulation of
duplicates across blocks (over the whole table, or only the touched rows
when there are no more indices than rows), tables past the 65535-row
pattern limit; an arange index read as a window of the table.
"""

import pytest
import torch

import trnc  # registers torch.ops.trnc.*
from helpers import check_against_eager, compile_neuron, needs_native

pytestmark = needs_native

gather_rows = torch.ops.trnc.gather_rows
scatter_rows = torch.ops.trnc.scatter_rows


def _index(m, n, dtype=torch.int64, seed=0):
    g = torch.Generator().manual_seed(seed)
    # Mostly valid rows, some -1 and some past the end (out of range).
    return torch.randint(-2, n + 2, (m,), generator=g).to(dtype)


def _same(fn, *args):
    expected = fn(*args)
    actual = compile_neuron(fn)(*args)
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64]
)
def test_gather_rows_exact(dtype, index_dtype):
    table = (torch.randn(37, 5) * 100).to(dtype)
    _same(lambda t, i: gather_rows(t, i), table, _index(300, 37, index_dtype))


def test_gather_rows_wide_rows_and_blocks():
    # 3000 f32 columns = two chunks (2048 + 952); 130 indices = two blocks.
    _same(lambda t, i: gather_rows(t, i), torch.randn(9, 3000), _index(130, 9))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_gather_rows_table_past_65535_rows(dtype):
    # int32 values past 2**24: the ranges combine without arithmetic (exact).
    table = (torch.randn(70000, 2) * 1e8).to(dtype)
    index = torch.tensor([0, 65534, 65535, 69999, 70000, -1, 12345, 66000])
    _same(lambda t, i: gather_rows(t, i), table, index)


def _gathers_rows_indirectly(fn, *args) -> bool:
    """Runs compiled `fn` against eager (exactly) and says whether its
    program moved rows with an indirect DMA."""
    expected = fn(*args)
    compiled = compile_neuron(fn)
    compiled(*args)
    with trnc.profiling.capture(trace=True) as p:
        actual = compiled(*args)
    torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    return "dma_indirect" in p.trace_json()


def test_gather_rows_by_arange_is_a_window_of_the_table():
    # Positions 0..T-1 gathering their rows, and a strided backwards arange:
    # trn.gather_rows of an in-range iota canonicalizes to a slice, read
    # through the access pattern, no indirect DMA.
    table = torch.randn(40, 6)
    fn = lambda t: (gather_rows(t, torch.arange(0, 32)),  # noqa: E731
                    gather_rows(t, torch.arange(39, 2, -4)))
    assert not _gathers_rows_indirectly(fn, table)


def test_gather_rows_by_arange_past_the_table_stays_a_gather():
    # Rows past the end gather zeros, which no window of the table reads.
    table = torch.randn(40, 6)
    assert _gathers_rows_indirectly(lambda t: gather_rows(t, torch.arange(30, 45)), table)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_scatter_rows_last_writer_wins(dtype):
    base = (torch.randn(20, 6) * 10).to(dtype)
    src = (torch.randn(260, 6) * 10).to(dtype)
    # 260 rows in three blocks, many duplicates across blocks.
    _same(lambda b, i, s: scatter_rows(b, i, s, False), base, _index(260, 20, seed=3), src)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_scatter_rows_accumulate_duplicates(dtype):
    base = torch.randn(7, 3000).to(dtype)
    src = torch.randn(200, 3000).to(dtype)
    fn = lambda b, i, s: scatter_rows(b, i, s, True)  # noqa: E731
    index = _index(200, 7, seed=5)
    expected, actual = fn(base, index, src), compile_neuron(fn)(base, index, src)
    # fp32 sums in index order, rounded once: as the CPU op, up to fp32 rounding.
    tol = {} if dtype == torch.float32 else {"rtol": 0, "atol": 0}
    torch.testing.assert_close(actual, expected, **tol)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_scatter_rows_accumulate_touched_rows(dtype):
    # At most as many indices as rows: only the touched rows are summed in
    # fp32 (LowerIndirect.cpp, scatterTouchedRows), still in index order
    # and rounded once. 300 indices (three blocks) into 400 rows of 3000
    # (two chunks), out-of-range ones, and duplicates within and across
    # blocks (rows 5 and 17 come back in the third block).
    base = torch.randn(400, 3000).to(dtype)
    src = torch.randn(300, 3000).to(dtype)
    index = _index(300, 400, seed=7)
    index[[0, 1, 129, 250, 299]] = torch.tensor([5, 5, 17, 17, 5])
    fn = lambda b, i, s: scatter_rows(b, i, s, True)  # noqa: E731
    torch.testing.assert_close(compile_neuron(fn)(base, index, src), fn(base, index, src), rtol=0, atol=0)


@pytest.mark.parametrize("lnc", [1, 2])
def test_scatter_rows_accumulate_touched_rows_block_loop(lnc):
    # Whole blocks of 128 indices, a row in one chunk: the sums are a tile
    # loop over the blocks after the first, which `fuse` joins to the loop
    # computing src (here a + b, exact in bf16 as eager rounds it), and
    # duplicates across blocks still sum in index order, rounded once. At
    # lnc=2 the blocks stay straight-line.
    base = torch.randn(600, 256).to(torch.bfloat16)
    a = torch.randn(512, 256).to(torch.bfloat16)
    b = torch.randn(512, 256).to(torch.bfloat16)
    index = _index(512, 600, seed=11)
    index[[3, 130, 260, 400, 511]] = 42
    fn = lambda t, i, x, y: scatter_rows(t, i, x + y, True)  # noqa: E731
    actual = compile_neuron(fn, options={"lnc": lnc})(base, index, a, b)
    torch.testing.assert_close(actual, fn(base, index, a, b), rtol=0, atol=0)


def test_scatter_rows_accumulate_touched_rows_past_65535_rows():
    base = torch.randn(66000, 3).to(torch.bfloat16)
    src = torch.randn(6, 3).to(torch.bfloat16)
    index = torch.tensor([65535, 1, 65999, 66000, 65535, -1])
    _same(lambda b, i, s: scatter_rows(b, i, s, True), base, index, src)


def test_scatter_rows_table_past_65535_rows():
    base = torch.zeros(66000, 1)
    src = torch.arange(6.0).view(6, 1)
    index = torch.tensor([65535, 1, 65999, 66000, 65535, -1])
    _same(lambda b, i, s: scatter_rows(b, i, s, True), base, index, src)


def test_gather_rows_backward_accumulates():
    # The backward of gather_rows is scatter_rows(zeros, index, grad, True).
    check_against_eager(lambda t, i: gather_rows(t, i) * 2.0, [torch.randn(11, 4), _index(150, 11)])
