"""Tile-loop fusion (passes/FuseTileLoops.cpp) end to end against eager: a
layer norm's row loop joined by the loop of the matmul that reads its rows.

The normalised rows are too many to hold on chip from the layer norm's loop
to the matmul's (8192 rows of 1024 f32, 256 KiB a partition): only with the
loops fused does each row tile go to the matmul as it is computed, so the
profile's HBM bytes stay near the inputs and the output.
"""

import torch

import trnc
from helpers import compile_neuron, needs_native

pytestmark = needs_native


def test_layer_norm_rows_go_to_the_matmul_on_chip():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.LayerNorm(1024), torch.nn.Linear(1024, 512)).eval()
    x = torch.randn(8192, 1024, generator=torch.Generator().manual_seed(1))
    c = compile_neuron(model)
    with torch.no_grad():
        expected = model(x)
        actual = c(x)
        with trnc.profiling.capture() as p:
            c(x)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
    io = (8192 * 1024 + 2 * 1024 + 1024 * 512 + 512 + 8192 * 512) * 4
    # Unfused, the normalised rows are stored and read back: 2 x 32 MiB more.
    assert p.hbm_bytes <= 1.15 * io, (p.hbm_bytes, io)
