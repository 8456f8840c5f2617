"""Which ReLU decisions of a compiled training step differ from float64's, and
whether they explain a miss of the fp64 rule (README: densenet121).

    python3 benchmarks/timm_sweep/relu_flips.py timm:densenet121 [--batch 2] [--seed 0]

Train mode, the sweep's model and input (vision_worker.build, 64x64). A
forward pre-hook on every nn.ReLU records its input in the eager float32,
compiled (backend="neuron") and eager float64 steps; per ReLU it prints the
elements whose sign differs from float64's in eager and in trnc, and the
RMS error of each from float64 there. Then the fp64 rule per tensor (RMS
error from float64 at most 2x eager float32's, plus 1e-6 of the largest
gradient) twice: against the float64 step, and against a float64 step
whose first ReLU with a trnc flip takes trnc's values at those elements.
A miss that vanishes in the second is one decision on a value within
float32 rounding of 0, amplified, not a lowering error.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hf_sweep"))

import vision_worker as vw  # noqa: E402  (imports tv_shim: TRNC_VISION_DEPS)


def relu_inputs(model, x, compiled=False):
    """One training step; returns (output, grads) and every ReLU's input."""
    seen = []
    for mod in model.modules():
        if isinstance(mod, torch.nn.ReLU):
            mod.register_forward_pre_hook(lambda m, inp: seen.append(inp[0].detach().clone()))
    run = torch.compile(model, backend="neuron", dynamic=False) if compiled else model
    return vw.step(run, x, model), seen


def forced_step(model, x, which: int, values: dict):
    """A float64 step whose ReLU number `which` takes `values` ({index: value}) as input there."""
    count = [0]

    def force(mod, inp):
        count[0] += 1
        if count[0] - 1 == which:
            v = inp[0].clone()
            for idx, val in values.items():
                v[idx] = val
            return (v,)
        return None

    for mod in model.modules():
        if isinstance(mod, torch.nn.ReLU):
            mod.register_forward_pre_hook(force)
    return vw.step(model, x, model)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="SOURCE:NAME, as the sweep")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    source, name = args.model.split(":", 1)
    model = vw.build(source, name, 64)
    x = torch.randn(args.batch, 3, 64, 64, generator=torch.Generator().manual_seed(args.seed))
    eager, e_in = relu_inputs(copy.deepcopy(model).train(), x)
    trnc, t_in = relu_inputs(copy.deepcopy(model).train(), x, compiled=True)
    f64, d_in = relu_inputs(copy.deepcopy(model).double().train(), x.double())
    first = None
    for k, (d, e, t) in enumerate(zip(d_in, e_in, t_in)):
        fe = [tuple(i) for i in ((d > 0) != (e > 0)).nonzero().tolist()]
        ft = [tuple(i) for i in ((d > 0) != (t > 0)).nonzero().tolist()]
        if not fe and not ft:
            continue
        rms = lambda a: float((a.double() - d).square().mean().sqrt())  # noqa: E731
        print(f"ReLU {k}: eager flips {len(fe)}, trnc flips {len(ft)}; RMS error from float64 "
              f"eager {rms(e):.2e}, trnc {rms(t):.2e}")
        for i in ft[:3]:
            print(f"  trnc {list(i)}: float64 {float(d[i]):.3e}, trnc {float(t[i]):.3e}")
        for i in fe[:3]:
            print(f"  eager {list(i)}: float64 {float(d[i]):.3e}, eager {float(e[i]):.3e}")
        if ft and first is None:
            first = (k, {i: float(t[i]) for i in ft})
    refs = [("float64", f64)]
    if first is not None:
        refs.append((f"float64 with ReLU {first[0]}'s decisions as trnc's",
                     forced_step(copy.deepcopy(model).double().train(), x.double(), *first)))
    names = ["output"] + list(f64[1])

    def pick(step, n):
        return step[0] if n == "output" else step[1][n]

    def rms(a, r):
        return float((a.double() - r).square().mean().sqrt())

    for label, ref in refs:
        floor = 1e-6 * max(float(g.abs().max()) for g in ref[1].values())
        ratios, beyond = [], 0
        for n in names:
            bound = rms(pick(eager, n), pick(f64, n))  # eager's error from the plain float64 step
            err = rms(pick(trnc, n), pick(ref, n))
            ratios.append(err / max(bound, 1e-30))
            beyond += err > 2 * bound + floor
        ratios.sort()
        print(f"vs {label}: {beyond} of {len(names)} tensors beyond 2x eager's RMS error; "
              f"trnc/eager median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
