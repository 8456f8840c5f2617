"""One vision model's training step through backend="neuron" against eager.

    python3 benchmarks/timm_sweep/vision_worker.py OUT.json SOURCE:NAME [--size 64] [--batch 2] [--check]

SOURCE is ``torchvision`` (torchvision.models, built with random weights) or
``timm`` (timm.create_model, when timm is installed). For each of train mode
(batch-norm batch statistics, dropout off: p = 0 everywhere so eager and trnc
agree) and eval mode (running statistics) the worker runs one step
``loss = (model(x) * g).sum(); loss.backward()`` eagerly and compiled
(``torch.compile(backend="neuron", dynamic=False)``) on copies of one model,
and records: status (pass / mismatch / the error's kind), the largest
relative output and gradient errors vs eager (max |a - e| / max |e| per
tensor; a gradient that is zero in exact arithmetic, e.g. the bias of a batch
norm whose output feeds another batch norm, is rounding noise on both sides,
so a step that misses REL_TOL is judged against a float64 eager run instead:
the project's FP64 rule (Inductor's fp64_ref, as the OpInfo harness's
_no_less_accurate): per tensor, the RMS error vs float64 at most 2x eager's
plus 1e-6 of the step's largest gradient; failing that, against the worst of
a few eager float32 steps on inputs perturbed by one rounding: the "fp32
spread" rule, see _no_less_accurate), the compile time (trnc.neuron.stats),
the peak RSS of the process
after the compiled step, the simulated time of the compiled step
(trnc.profiling) and the first unsupported operator of a failure. The record
is written after every stage, so a crash or timeout still leaves what ran.
"""

from __future__ import annotations

import copy
import json
import os
import resource
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "hf_sweep"))

import tv_shim  # noqa: E402
from worker import classify  # noqa: E402  (hf_sweep's: the cause of a failure)

# Relative errors (vs the largest eager value of the tensor) a pass allows:
# float32 convolutions and batch-norm reductions in another summation order.
REL_TOL = 1e-3
# Eager float32 steps on inputs one rounding away, for the "fp32 spread" rule.
SPREAD_RUNS = 3


def create_timm(name: str, size: int = 0) -> torch.nn.Module:
    """timm.create_model(name) with random weights; a model whose pretrained
    config says its input size is fixed (ViTs' position embeddings, Swin's
    windows) is built for size x size instead, when size is given."""
    tv_shim.import_torchvision()
    import timm

    cfg = timm.get_pretrained_cfg(name)
    kwargs = {"img_size": size} if size and cfg is not None and cfg.fixed_input_size else {}
    return timm.create_model(name, pretrained=False, **kwargs)


def build(source: str, name: str, size: int = 0) -> torch.nn.Module:
    torch.manual_seed(0)
    if source == "torchvision":
        models = tv_shim.import_torchvision().models
        kwargs = {"weights": None}
        if name in ("inception_v3", "googlenet"):
            kwargs["aux_logits"] = False
            kwargs["init_weights"] = True
        model = models.get_model(name, **kwargs)
    elif source == "timm":
        model = create_timm(name, size)
    else:
        raise ValueError(f"unknown source {source!r}")
    for m in model.modules():  # no randomness: eager and trnc draw different masks
        # nn.Dropout*, torchvision's StochasticDepth (p), timm's DropPath (drop_prob)
        random = isinstance(m, torch.nn.modules.dropout._DropoutNd) or type(m).__name__ in (
            "StochasticDepth", "DropPath", "DropBlock2d")
        if random:
            for attr in ("p", "drop_prob"):
                if hasattr(m, attr):
                    setattr(m, attr, 0.0)
    return model.float()


def _rel(a: torch.Tensor, e: torch.Tensor) -> float:
    if a.shape != e.shape:
        return float("inf")
    scale = float(e.detach().abs().max()) if e.numel() else 0.0
    diff = float((a.detach().float() - e.detach().float()).abs().max()) if e.numel() else 0.0
    return diff / scale if scale else diff


def step(model, x: torch.Tensor, params: torch.nn.Module, g_seed: int = 1):
    """One forward + backward of model (params: the module whose grads to read)."""
    params.zero_grad(set_to_none=True)
    out = model(x)
    out = out.logits if hasattr(out, "logits") else out
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(g_seed))
    (out * g).sum().backward()
    return out.detach(), {n: p.grad.detach().clone() for n, p in params.named_parameters() if p.grad is not None}


def run_mode(model: torch.nn.Module, x: torch.Tensor, train: bool, rec: dict) -> None:
    import trnc

    eager_model = copy.deepcopy(model).train(train)
    trnc_model = copy.deepcopy(model).train(train)
    ref_out, ref_grads = step(eager_model, x, eager_model)
    torch._dynamo.reset()
    stats = trnc.neuron.stats
    stats.reset()
    compiled = torch.compile(trnc_model, backend="neuron", dynamic=False)
    start, cpu = time.perf_counter(), time.process_time()
    out, grads = step(compiled, x, trnc_model)
    rec["first_step_s"] = round(time.perf_counter() - start, 2)
    # CPU time too: on a shared machine the wall time of a compile varies 5-10x.
    rec["first_step_cpu_s"] = round(time.process_time() - cpu, 2)
    rec["compile_s"] = round(stats.compile_seconds, 2)
    rec["graphs"] = sum(stats.counts.values())
    rec["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    rec["out_rel_err"] = _rel(out, ref_out)
    missing = sorted(set(ref_grads) - set(grads))
    rec["grad_rel_err"] = max([_rel(grads[n], g) for n, g in ref_grads.items() if n in grads] + [0.0])
    # timm's EfficientFormerV2 and EfficientViT (MSRA) cache their attention
    # biases in eval mode, autograd graph included: a second backward fails
    # in eager too ("backward through the graph a second time"). Their
    # train() override clears the cache.
    trnc_model.train(train)
    with trnc.profiling.capture() as p:
        step(compiled, x, trnc_model)
    rec["simulated_ms"] = round(p.total_ns / 1e6, 3)
    ok = not missing and rec["out_rel_err"] <= REL_TOL and rec["grad_rel_err"] <= REL_TOL
    if not ok and not missing:
        verdict = _no_less_accurate(model, x, train, (out, grads), (ref_out, ref_grads))
        if verdict:
            rec["status"] = f"pass ({verdict})"
            return
    rec["status"] = "pass" if ok else ("missing gradients" if missing else "mismatch")


def _no_less_accurate(model, x, train: bool, actual, eager) -> str:
    """The FP64 rule over the output and every gradient (see the header):
    "fp64 rule" when trnc is within it of eager's float32 step, else
    "fp32 spread" when it is within it of the worst of SPREAD_RUNS eager
    float32 steps on inputs one rounding away (x * (1 + 2^-24 u)): a
    training step at batch 2 whose batch-norm maps shrink to 2x2 amplifies
    rounding through the network (mobilenet_v2: forward error 2e-5 RMS from
    float64 in eager and trnc alike), and one ReLU decision on a value that
    close to 0 moves every upstream gradient. Empty when neither holds."""
    ref_model = copy.deepcopy(model).double().train(train)
    ref = step(ref_model, x.double(), ref_model)
    floor = 1e-6 * max(float(g.abs().max()) for g in ref[1].values())

    def rms(t, r):
        return float((t.double() - r).square().mean().sqrt())

    def within(references) -> bool:
        for name, r in [("", ref[0])] + list(ref[1].items()):
            a = actual[0] if not name else actual[1][name]
            worst = max(rms(e[0] if not name else e[1][name], r) for e in references)
            if rms(a, r) > 2 * worst + floor:
                return False
        return True

    if within([eager]):
        return "fp64 rule"
    spread = [eager]
    for seed in range(SPREAD_RUNS):
        u = torch.rand(x.shape, generator=torch.Generator().manual_seed(100 + seed)) * 2 - 1
        m = copy.deepcopy(model).train(train)
        spread.append(step(m, x * (1 + 2.0**-24 * u), m))
    return "fp32 spread" if within(spread) else ""


def check(model: torch.nn.Module, x: torch.Tensor) -> dict:
    """The importer's verdict on the training step's graphs (trnc.check_support,
    train mode): which operators would not lower, without compiling or
    simulating; the sweep's --check for models not yet run in full."""
    import trnc

    report = trnc.check_support(model.train(), x, train=True)
    failing = [g for g in report.graphs if not g.ok]
    return {"ok": report.ok, "unsupported": sorted(report.unsupported_operators),
            "message": failing[0].message.splitlines()[0][:300] if failing and failing[0].message else ""}


def main(argv: list[str]) -> int:
    out_path, spec = argv[0], argv[1]
    size = int(argv[argv.index("--size") + 1]) if "--size" in argv else 64
    batch = int(argv[argv.index("--batch") + 1]) if "--batch" in argv else 2
    source, name = spec.split(":", 1)
    torch.set_num_threads(1)
    record: dict = {"model": spec, "size": size, "batch": batch}

    def save():
        with open(out_path, "w") as f:
            json.dump(record, f, indent=1)

    try:
        model = build(source, name, size)
        record["params"] = sum(p.numel() for p in model.parameters())
        x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(0))
        if "--check" in argv:
            try:
                record["check"] = check(model, x)
            except Exception as exc:  # noqa: BLE001
                record["check"] = {"ok": False, "error": classify(exc)}
            save()
            return 0
        for mode in ("train", "eval"):
            record[mode] = {"status": "running"}
            save()
            try:
                run_mode(model, x, mode == "train", record[mode])
            except Exception as exc:  # noqa: BLE001  (every failure is a result)
                record[mode].update(status="error", error=classify(exc))
            save()
    except Exception as exc:  # noqa: BLE001
        record["error"] = classify(exc)
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
