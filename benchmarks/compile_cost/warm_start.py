"""Time to first training step, cold vs warm, backend="neuron" beside "inductor".

    python3 benchmarks/compile_cost/warm_start.py                # 3 runs, neuron and inductor
    python3 benchmarks/compile_cost/warm_start.py --runs 5 --layers 4 --d-model 768
    python3 benchmarks/compile_cost/warm_start.py --backends neuron --no-aot-cache --precompile

The model is trnc.models.gpt (default 4 layers, d_model 768, 12 heads, vocab 512,
batch 2 x 64 tokens); one step is ``_, loss = model(idx, idx); loss.backward()``.
Every measurement is a fresh process. A run makes a new pair of empty cache
directories (TRNC_CACHE_DIR for trnc's artifacts, TORCHINDUCTOR_CACHE_DIR for
PyTorch's AOTAutograd and FX graph caches), measures a cold process in them,
then a warm one in the same directories. Per process: the first step's wall and
CPU time (Dynamo, AOTAutograd or its cache hit, the backend, the step itself),
the median of the next steps, and their difference (the first call's overhead);
AOTAutograd's cache counters; trnc's C++ compiles. Prints one JSON line per
process, then a Markdown table of the medians over the runs.

``--no-aot-cache`` adds a "neuron, no AOTAutograd cache" row
(``TORCHINDUCTOR_AUTOGRAD_CACHE=0``: trnc's artifact cache only, the backend as it
was before it used AOTAutograd's cache). ``--precompile`` adds a "+precompile" row per backend: the same with Dynamo's caching
precompile (``torch._dynamo.config.caching_precompile``, which skips Dynamo's
tracing too): the cold process saves its package with
``torch.compiler.save_cache_artifacts()``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(backend: str, layers: int, d_model: int, heads: int, steps: int, precompile: bool) -> dict:
    import torch

    if precompile:
        torch._dynamo.config.caching_precompile = True
    import trnc  # noqa: F401  (the neuron backend; also what a user imports)
    from trnc.models import gpt

    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=512, block_size=128, n_layer=layers, n_head=heads, n_embd=d_model))
    idx = torch.randint(0, 512, (2, 64), generator=torch.Generator().manual_seed(0))
    compiled = torch.compile(model, backend=backend, dynamic=False)

    def run() -> float:
        model.zero_grad(set_to_none=True)
        _, loss = compiled(idx, idx)
        loss.backward()
        return float(loss)

    wall, cpu = time.perf_counter(), time.process_time()
    loss = run()
    first, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
    later = []
    for _ in range(steps):
        start = time.perf_counter()
        run()
        later.append(time.perf_counter() - start)
    if precompile:
        torch.compiler.save_cache_artifacts()
    counters = torch._dynamo.utils.counters
    rec = {"first_step_s": round(first, 3), "first_step_cpu_s": round(first_cpu, 3),
           "step_s": round(statistics.median(later), 3), "overhead_s": round(first - statistics.median(later), 3),
           "loss": loss, "aot": {k.replace("autograd_cache_", ""): v for k, v in counters["aot_autograd"].items()
                                 if k.startswith("autograd_cache")},
           "dynamo_cache": dict(counters["dynamo_cache"])}
    if backend == "neuron":
        from trnc._native import native

        rec["trnc_compiles"] = native().cache_compile_count()
    return rec


def measure(env: dict, args: list[str]) -> dict:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                         env={**os.environ, **env})
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec["process_s"] = round(time.perf_counter() - start, 3)
    return rec


def median_of(records: list[dict], field: str) -> float:
    values = [r[field] for r in records if field in r]
    return statistics.median(values) if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", nargs=6, metavar=("BACKEND", "LAYERS", "D_MODEL", "HEADS", "STEPS", "PRECOMPILE"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--steps", type=int, default=3, help="steps after the first, for the steady step time")
    ap.add_argument("--backends", default="neuron,inductor")
    ap.add_argument("--precompile", action="store_true", help="add each backend with Dynamo's caching precompile")
    ap.add_argument("--no-aot-cache", action="store_true", help="add neuron with AOTAutograd's cache off")
    args = ap.parse_args()
    if args.child:
        b, layers, d, h, steps, pre = args.child
        print(json.dumps(child(b, int(layers), int(d), int(h), int(steps), pre == "1")))
        return 0
    backends = args.backends.split(",")
    # (row name, backend, precompile, extra environment)
    variants = [(b, b, False, {}) for b in backends]
    if args.no_aot_cache:
        variants.append(("neuron, no AOTAutograd cache", "neuron", False, {"TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}))
    if args.precompile:
        variants += [(b + "+precompile", b, True, {}) for b in backends]
    results: dict[str, dict[str, list]] = {}
    for run in range(args.runs):
        for name, backend, precompile, extra in variants:  # interleaved: a busy machine slows every variant alike
            child_args = [backend, str(args.layers), str(args.d_model), str(args.heads), str(args.steps),
                          "1" if precompile else "0"]
            with tempfile.TemporaryDirectory() as tmp:
                env = {"TRNC_CACHE_DIR": os.path.join(tmp, "trnc"), "TORCHINDUCTOR_CACHE_DIR": os.path.join(tmp, "torch"),
                       **extra}
                for state in ("cold", "warm"):
                    rec = measure(env, child_args)
                    rec.update(variant=name, cache=state, run=run)
                    print(json.dumps(rec), flush=True)
                    results.setdefault(name, {}).setdefault(state, []).append(rec)
    print()
    print(f"GPT {args.layers} layers, d_model {args.d_model}, {args.heads} heads, batch 2 x 64, "
          f"training step; medians of {args.runs} fresh processes each")
    print()
    print("| backend | first step s cold | first step s warm | warm / cold | first step CPU s cold / warm "
          "| first-call overhead s cold / warm | steady step s | caches (warm) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, by_state in results.items():
        cold, warm = by_state.get("cold", []), by_state.get("warm", [])
        c, w = median_of(cold, "first_step_s"), median_of(warm, "first_step_s")
        last = warm[-1] if warm else {}
        aot = {**{f"aot {k}": v for k, v in last.get("aot", {}).items()}, **last.get("dynamo_cache", {})}
        print(f"| {name} | {c:.2f} | {w:.2f} | {w / c:.2f} | {median_of(cold, 'first_step_cpu_s'):.2f} / "
              f"{median_of(warm, 'first_step_cpu_s'):.2f} | {median_of(cold, 'overhead_s'):.2f} / "
              f"{median_of(warm, 'overhead_s'):.2f} | {median_of(warm, 'step_s'):.2f} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(aot.items())) or '-'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
