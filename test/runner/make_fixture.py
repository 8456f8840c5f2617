"""Fixtures for the trnc-run ctest tests: artifacts compiled ahead of time plus eager outputs.

For each case (a small MLP in float32 and in bfloat16) this captures the ATen
inference graph exactly as torch.compile(model, backend="neuron") would see it
(AOTAutograd with trnc's decompositions), exports it to graph JSON, compiles it
with the `trnc compile-graph` CLI into CASE.trnc, and saves with torch.save:

  CASE.inputs.pt            the graph's inputs (parameters and x), in graph order
  CASE.noncontig_inputs.pt  the same, x as a non-contiguous view (one-copy path)
  CASE.bad_inputs.pt        the same, x with a wrong shape (negative test)
  CASE.expected.pt          eager PyTorch's outputs

Usage: make_fixture.py OUTDIR. Exits 77 (ctest SKIP_RETURN_CODE) after writing
OUTDIR/SKIPPED when torch or the installed trnc package is missing; any other
failure is an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

SKIP = 77


def skip(outdir: str, reason: str) -> None:
    with open(os.path.join(outdir, "SKIPPED"), "w") as f:
        f.write(reason + "\n")
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def capture_inference_graph(model, x, name):
    """The ATen inference graph of model(x), its real inputs and its eager outputs."""
    import torch
    from torch._dynamo.backends.common import aot_autograd

    from trnc.decompositions import decomposition_table
    from trnc.graph_export import export_graph

    captured = {}

    def compiler(gm, example_inputs):
        captured["graph"] = export_graph(gm, name)

        def run(args):
            captured["inputs"] = [a.detach().clone() for a in args]
            result = gm(*args)
            captured["outputs"] = [r.detach().clone() if isinstance(r, torch.Tensor) else r for r in result]
            return result

        run._boxed_call = True
        return run

    backend = aot_autograd(fw_compiler=compiler, inference_compiler=compiler, decompositions=decomposition_table())
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend, dynamic=False)(x)
        eager = model(x)
    torch.testing.assert_close(captured["outputs"][0], eager, rtol=0, atol=0)
    return captured


def make_case(outdir: str, name: str, dtype) -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).to(dtype).eval()
    x = torch.randn(4, 16, dtype=dtype)
    cap = capture_inference_graph(model, x, name)
    graph = cap["graph"]
    base = os.path.join(outdir, name)
    with open(base + ".graph.json", "w") as f:
        f.write(graph.to_json())
    subprocess.run(
        [sys.executable, "-m", "trnc.cli", "compile-graph", base + ".graph.json", "-o", base + ".trnc"],
        check=True,
    )

    inputs = cap["inputs"]
    expected = [None] * len(graph.program_outputs)
    for position, source in enumerate(graph.output_plan):
        if source[0] == "program":
            expected[source[1]] = cap["outputs"][position]
    x_index = next(i for i, t in enumerate(inputs) if t.shape == x.shape and torch.equal(t, x))
    noncontig = list(inputs)
    noncontig[x_index] = x.t().contiguous().t()  # same values, strides (1, 4)
    assert not noncontig[x_index].is_contiguous()
    bad = list(inputs)
    bad[x_index] = torch.randn(5, 16, dtype=dtype)

    torch.save(inputs, base + ".inputs.pt")
    torch.save(noncontig, base + ".noncontig_inputs.pt")
    torch.save(bad, base + ".bad_inputs.pt")
    torch.save(expected, base + ".expected.pt")
    with open(base + ".case.json", "w") as f:
        json.dump({"x_index": x_index, "num_inputs": len(inputs)}, f)
    print(f"{name}: {len(inputs)} inputs (x is input {x_index}), {len(expected)} outputs -> {base}.trnc")


def main() -> int:
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for stale in os.listdir(outdir):
        os.remove(os.path.join(outdir, stale))
    try:
        import torch  # noqa: F401

        import trnc._C  # noqa: F401  the installed package with its extension
    except ImportError as e:
        skip(outdir, f"torch or the installed trnc package is missing ({e}); run scripts/build.sh")
    import torch

    make_case(outdir, "mlp_f32", torch.float32)
    make_case(outdir, "mlp_bf16", torch.bfloat16)
    with open(os.path.join(outdir, "READY"), "w") as f:
        f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
