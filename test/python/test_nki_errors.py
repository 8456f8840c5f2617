"""Bad trnc.nki kernels fail with an NkiError naming the rule and the kernel's source line.

Each bad line carries a `# bad: NAME` marker; the test finds that line's number
in this file and checks the message points at it (file:line) and quotes it.
"""

from __future__ import annotations

import os

import pytest
import torch

import trnc.nki as nki
import trnc.nki.isa as nisa
import trnc.nki.language as nl
from trnc.nki import NkiError

from helpers import needs_native

_FILE = os.path.abspath(__file__)


def _line(marker: str) -> int:
    with open(_FILE) as f:
        for i, text in enumerate(f, 1):
            if text.rstrip().endswith(f"# bad: {marker}"):
                return i
    raise AssertionError(marker)


def _raises(kernel, *args, marker: str, match: str) -> NkiError:
    with pytest.raises(NkiError, match=match) as info:
        kernel.trace(*args)
    assert f"{_FILE}:{_line(marker)}" in str(info.value), str(info.value)
    return info.value


@nki.jit
def too_many_partitions(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((256, 64), dtype=x.dtype, buffer=nl.sbuf)  # bad: partitions
    nl.store(out, t)
    return out


def test_tile_over_128_partitions():
    err = _raises(too_many_partitions, torch.randn(256, 64), marker="partitions", match="at most 128 partitions")
    assert "nl.ndarray((256, 64)" in str(err)  # the offending code is quoted


@nki.jit
def load_too_many_partitions(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load(x))  # bad: load partitions
    return out


def test_load_over_128_partitions():
    _raises(load_too_many_partitions, torch.randn(200, 8), marker="load partitions", match="at most 128 partitions")


@nki.jit
def psum_tile_too_big(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((128, 8192), nl.float32, buffer=nl.psum)  # bad: psum tile
    nl.store(out, nl.copy(acc))
    return out


def test_psum_tile_overflow():
    _raises(psum_tile_too_big, torch.randn(128, 8192), marker="psum tile", match="PSUM overflow")


@nki.jit(list_schedule=False)  # program order: all nine accumulators live at once
def psum_too_many_live(a, b):
    out = nl.ndarray((128, 512 * 9), dtype=nl.float32, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    accs = []
    for i in range(9):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)  # bad: psum live
        nisa.nc_matmul(acc, x, y)
        accs.append(acc)
    for i, acc in enumerate(accs):
        nl.store(out[:, i * 512:(i + 1) * 512], nl.copy(acc))
    return out


@needs_native
def test_psum_overflow_from_the_allocator_names_the_line():
    a = torch.randn(128, 128, dtype=torch.bfloat16)
    b = torch.randn(128, 512, dtype=torch.bfloat16)
    with pytest.raises(NkiError, match="does not fit in") as info:
        psum_too_many_live(a, b)
    assert f"{_FILE}:{_line('psum live')}" in str(info.value)
    assert "psum" in str(info.value).lower()


@nki.jit
def unsupported_language_api(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.load_transpose2d(x))  # bad: language api
    return out


def test_unsupported_language_api():
    _raises(unsupported_language_api, torch.randn(64, 64), marker="language api",
            match="nki.language.load_transpose2d is not supported")


@nki.jit
def unsupported_isa_api(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, nisa.tensor_tensor_scan(t, t, 0.0, nl.multiply, nl.add))  # bad: isa api
    return out


def test_unsupported_isa_api():
    _raises(unsupported_isa_api, torch.randn(64, 64), marker="isa api", match="nki.isa.tensor_tensor_scan is not")


@nki.jit
def fp8_tile(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x, dtype=nl.float8_e4m3)  # bad: fp8
    nl.store(out, t)
    return out


def test_unsupported_dtype():
    _raises(fp8_tile, torch.randn(64, 64), marker="fp8", match="float8_e4m3 is not supported by trnc's ISA")


@nki.jit
def bf16_psum_result(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_matmul(acc, nl.load(a), nl.load(b))  # bad: psum dtype
    nl.store(out, nl.copy(acc))
    return out


def test_matmul_psum_must_be_float32():
    a, b = torch.randn(128, 128), torch.randn(128, 512)
    _raises(bf16_psum_result, a, b, marker="psum dtype", match="must be nl.float32, not bfloat16")


@nki.jit
def int_matmul(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.matmul(nl.load(a), nl.load(b), transpose_x=True)  # bad: int matmul
    nl.store(out, nl.copy(acc))
    return out


def test_matmul_integer_inputs():
    a = torch.ones(128, 128, dtype=torch.int32)
    b = torch.ones(128, 512, dtype=torch.int32)
    _raises(int_matmul, a, b, marker="int matmul", match="operand is int32")


@nki.jit
def moving_too_wide(a, b):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.matmul(nl.load(a), nl.load(b), transpose_x=True)  # bad: moving
    nl.store(out, nl.copy(acc))
    return out


def test_matmul_moving_over_512():
    _raises(moving_too_wide, torch.randn(128, 128), torch.randn(128, 1024), marker="moving",
            match="moving free size 1024 exceeds 512")


@nki.jit
def partition_broadcast(a, b):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    x, row = nl.load(a), nl.load(b)
    nl.store(out, nl.add(x, row))  # bad: broadcast
    return out


def test_partition_broadcast_is_refused():
    _raises(partition_broadcast, torch.randn(128, 64), torch.randn(1, 64), marker="broadcast",
            match="cannot broadcast 1 partition")


def test_input_dtype_refused():
    with pytest.raises(NkiError, match="input 0 has dtype torch.float64"):
        too_many_partitions.trace(torch.randn(4, 4, dtype=torch.float64))


def test_outside_a_kernel():
    with pytest.raises(NkiError, match="only valid inside a kernel"):
        nl.zeros((4, 4), nl.float32)


def test_kernel_must_return_hbm():
    @nki.jit
    def returns_tile(x):
        return nl.load(x)

    with pytest.raises(NkiError, match="must return the HBM tensors"):
        returns_tile.trace(torch.randn(4, 4))


_BAD_KERNEL = """
func.func @main(%a: memref<16384xbf16> {nisa.input = 0 : i64, nisa.shape = array<i64: 128, 128>, nisa.strides = array<i64: 128, 1>},
                %b: memref<131072xbf16> {nisa.input = 1 : i64, nisa.shape = array<i64: 128, 1024>, nisa.strides = array<i64: 1024, 1>},
                %o: memref<131072xf32> {nisa.output = 0 : i64, nisa.shape = array<i64: 128, 1024>, nisa.strides = array<i64: 1024, 1>}) {
  %s = nisa.alloc : !nisa.tile<sbuf, 128, 128, bf16> loc("k.py":3:0)
  %m = nisa.alloc : !nisa.tile<sbuf, 128, 1024, bf16> loc("k.py":4:0)
  %p = nisa.alloc : !nisa.tile<psum, 128, 1024, f32> loc("k.py":5:0)
  nisa.matmul %p <0, [1024, 1], [128, 1024]>, %s <0, [128, 1], [128, 128]>, %m <0, [1024, 1], [128, 1024]>
      : !nisa.tile<psum, 128, 1024, f32>, !nisa.tile<sbuf, 128, 128, bf16>, !nisa.tile<sbuf, 128, 1024, bf16> loc("k.py":7:0)
  return
}
"""


@needs_native
def test_compile_kernel_reports_verifier_errors_at_the_kernel_line():
    """The C++ entry point: nisa text the verifiers refuse comes back as invalid_kernel, located."""
    from trnc._native import native

    result = native().compile_kernel(_BAD_KERNEL, "trn1")
    assert not result["ok"] and result["artifact"] is None
    assert result["error_kind"] == "invalid_kernel"
    assert "k.py:7: error: 'nisa.matmul' op moving free size 1024 exceeds 512" in result["message"]
    garbage = native().compile_kernel("func.func @main( {", "trn1")
    assert garbage["error_kind"] == "invalid_kernel" and "error:" in garbage["message"]
    assert native().compile_kernel(_BAD_KERNEL, "trn9")["message"] == "unknown target 'trn9'"
