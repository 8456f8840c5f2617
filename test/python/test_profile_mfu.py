"""MFU and HFU against the Tensor Engine peak of the dtype each matmul runs at.

The same [256,256]@[256,256] matmul compiled in f32 and in bf16: the profile
files its FLOPs under its dtype (``matmul_dtypes``), MFU divides them by that
dtype's peak (f32: a quarter of bf16), ``trnc.profiling.Capture`` sums the
graphs' per-dtype work the same way, and the summary names the dtypes. The
program's input/output bytes (the minimum HBM traffic of a program) and its
instruction count are reported beside the profile.
"""

from __future__ import annotations

import pytest
import torch

import trnc
from helpers import compile_neuron, needs_native

pytestmark = needs_native

N = 256


def _profiled_matmul(dtype: torch.dtype):
    g = torch.Generator().manual_seed(0)
    a, b = (torch.randn(N, N, generator=g).to(dtype) for _ in range(2))
    fn = compile_neuron(lambda x, y: x @ y)
    with trnc.profiling.capture() as p:
        out = fn(a, b)
    torch.testing.assert_close(out.float(), (a.float() @ b.float()), rtol=2e-2, atol=2e-1)
    assert len(p.graphs) == 1
    return p, p.graphs[0].to_dict()


@pytest.mark.parametrize("dtype, name", [(torch.float32, "f32"), (torch.bfloat16, "bf16")])
def test_matmul_flops_are_filed_under_their_dtype(dtype, name):
    p, d = _profiled_matmul(dtype)
    peaks = d["peak_flops_per_second_by_dtype"]
    assert peaks["bf16"] == d["peak_flops_per_second"] == 128 * 128 * 2 * 2.4e9  # trn2
    assert peaks["f32"] == peaks["bf16"] / 4 and peaks["f16"] == peaks["bf16"]
    assert set(d["matmul_dtypes"]) == {name}
    m = d["matmul_dtypes"][name]
    assert m["useful_flops"] == d["useful_matmul_flops"] == 2 * N**3
    assert m["peak_flops_per_second"] == peaks[name]
    assert d["useful_at_peak_ns"] == pytest.approx(2 * N**3 / peaks[name] * 1e9)
    assert d["mfu"] == pytest.approx(d["useful_at_peak_ns"] / d["total_ns"])
    assert p.mfu() == pytest.approx(d["mfu"]) and p.hfu() == pytest.approx(d["hfu"])
    assert p.mfu_dtypes() == name
    assert f"against the peak of each matmul dtype: {name} " in p.graphs[0].summary()
    # Inputs and output are N x N each, read / written once at the minimum.
    size = torch.empty((), dtype=dtype).element_size()
    assert d["program_input_bytes"] == 2 * N * N * size
    assert d["program_output_bytes"] == N * N * size
    assert d["program_instructions"] == sum(e["instructions"] for e in d["engines"].values())


def test_f32_mfu_is_not_divided_by_the_bf16_peak():
    _, f32 = _profiled_matmul(torch.float32)
    _, bf16 = _profiled_matmul(torch.bfloat16)
    # Against the bf16 peak, the f32 run would read 4x lower than its own MFU.
    against_bf16 = f32["useful_matmul_flops"] / (f32["total_ns"] * 1e-9 * f32["peak_flops_per_second"])
    assert f32["mfu"] == pytest.approx(4 * against_bf16)
    # f32 matmuls take longer on the Tensor Engine, so at the same work its
    # busy share (and MFU) is the higher one of the two.
    assert f32["mfu"] > bf16["mfu"]


def test_capture_sums_dtypes_over_graphs():
    a32, b32 = torch.randn(N, N), torch.randn(N, N)
    f32 = compile_neuron(lambda x, y: x @ y)
    bf16 = compile_neuron(lambda x, y: (x @ y) * 2)
    with trnc.profiling.capture() as p:
        f32(a32, b32)
        bf16(a32.bfloat16(), b32.bfloat16())
    dtypes = p.matmul_dtypes()
    assert set(dtypes) == {"f32", "bf16"} and p.mfu_dtypes() == "f32+bf16"
    assert all(m["useful_flops"] == 2 * N**3 for m in dtypes.values())
    at_peak = sum(m["useful_flops"] / m["peak_flops_per_second"] for m in dtypes.values())
    assert p.mfu() == pytest.approx(at_peak / (p.total_ns * 1e-9))
