"""Compile cost of one model's training step through backend="neuron".

    python3 benchmarks/compile_cost/compile_cost.py torchvision:resnet50 --size 224 --batch 8
    python3 benchmarks/compile_cost/compile_cost.py gpt --layers 1,2,4,8,16
    python3 benchmarks/compile_cost/compile_cost.py gpt --layers 1,2,4,8,16 --per-block

For a torchvision model (benchmarks/timm_sweep's build: random weights,
dropout off), one `loss = (model(x) * g).sum(); loss.backward()` step in
train mode, compiled into a fresh artifact cache: the first step's wall
and CPU time (the machine may be shared: CPU time is the steadier figure),
trnc's compile time (trnc.neuron.stats: AOTAutograd, export and the C++
compiler) and the C++ compiler's part per graph, the process's peak RSS, and
from the cached artifacts (trnc inspect) the graphs' instruction counts
and artifact bytes. `gpt`: the same for trnc.models.gpt's training step at
each number of layers, cold (an empty cache) and warm (the same cache, a
fresh Dynamo). ``--per-block`` compiles each transformer block instead of
the model (torchtitan style; the embedding, head and loss run eagerly):
Dynamo's guards are on the block's code and parameter shapes, not on the
instance, so identical blocks share one forward and one backward graph.
Each measurement runs in its own process so peak RSS is its own. Prints one
JSON object per measurement.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def artifacts(cache_dir: str) -> list[dict]:
    """trnc inspect --json of every artifact in cache_dir."""
    found = []
    for root, _, files in os.walk(cache_dir):
        for f in files:
            if f.endswith(".trnc"):
                path = os.path.join(root, f)
                out = subprocess.run([sys.executable, "-m", "trnc.cli", "inspect", path, "--json", "--no-estimate"],
                                     capture_output=True, text=True, check=True).stdout
                doc = json.loads(out)
                found.append({"graph": doc["name"], "bytes": doc["bytes"],
                              "instructions": sum(e["instructions"] for e in doc["engines"])})
    return found


class NativeTimes(logging.Handler):
    """The C++ compile time of each graph, from trnc's INFO log (backend.py:
    "graph NAME: cache miss, compiled, S s")."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seconds: dict[str, float] = {}

    def emit(self, record: logging.LogRecord) -> None:
        m = re.match(r"graph (\S+): cache (?:miss, compiled|hit), ([0-9.]+) s", record.getMessage())
        if m:
            self.seconds[m.group(1)] = float(m.group(2))


def timed_first_step(run) -> dict:
    """Runs the first (compiling) step: wall and CPU time, trnc's compile time
    (AOTAutograd, export and the C++ compiler) and the C++ part per graph."""
    import trnc

    handler = NativeTimes()
    logger = logging.getLogger("trnc")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    trnc.neuron.stats.reset()
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    logger.removeHandler(handler)
    return {"first_step_s": round(time.perf_counter() - wall, 2), "first_step_cpu_s": round(time.process_time() - cpu, 2),
            "compile_s": round(trnc.neuron.stats.compile_seconds, 2),
            "native_compile_s": {k: round(v, 2) for k, v in handler.seconds.items()}}


def vision_step(spec: str, size: int, batch: int) -> dict:
    import torch

    sys.path.insert(0, os.path.join(HERE, "..", "timm_sweep"))
    sys.path.insert(0, os.path.join(HERE, "..", "hf_sweep"))
    import vision_worker

    torch.set_num_threads(1)
    source, name = spec.split(":", 1)
    model = vision_worker.build(source, name).train()
    x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(0))
    compiled = torch.compile(model, backend="neuron", dynamic=False)

    def run():
        out = compiled(x)
        (out * torch.randn(out.shape, generator=torch.Generator().manual_seed(1))).sum().backward()

    return {"model": spec, "size": size, "batch": batch, **timed_first_step(run)}


def gpt_step(layers: int, per_block: bool) -> dict:
    import torch
    import trnc
    from trnc.models import gpt

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(n_layer=layers))
    idx = torch.randint(0, model.config.vocab_size, (2, 64), generator=torch.Generator().manual_seed(0))
    if per_block:
        for block in model.h:
            block.compile(backend="neuron", dynamic=False)
        compiled = model
    else:
        compiled = torch.compile(model, backend="neuron", dynamic=False)

    def run():
        _, loss = compiled(idx, idx)
        loss.backward()

    rec = {"model": "gpt", "layers": layers, "per_block": per_block, **timed_first_step(run)}
    rec["graphs"] = dict(trnc.neuron.stats.counts)
    return rec


def child(argv: list[str]) -> int:
    """One measurement in this process: argv = [cache_dir, kind, ...]."""
    cache_dir, kind = argv[0], argv[1]
    os.environ["TRNC_CACHE_DIR"] = cache_dir
    os.environ.pop("TRNC_DISABLE_CACHE", None)
    rec = gpt_step(int(argv[2]), argv[3:4] == ["per-block"]) if kind == "gpt" else vision_step(
        argv[2], int(argv[3]), int(argv[4]))
    rec["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(rec))
    return 0


def measure(cache_dir: str, args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", cache_dir, *args], capture_output=True, text=True)
    if out.returncode != 0:
        return {"args": args, "error": out.stderr.strip().splitlines()[-1:] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="torchvision:NAME or gpt")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--layers", default="1,2,4,8,16", help="gpt: layer counts")
    ap.add_argument("--per-block", action="store_true", help="gpt: compile each block, not the model")
    args = ap.parse_args()
    if args.model == "gpt":
        for n in [int(v) for v in args.layers.split(",")]:
            child_args = ["gpt", str(n)] + (["per-block"] if args.per_block else [])
            with tempfile.TemporaryDirectory() as cache:
                cold = measure(cache, child_args)
                cold["cache"] = "cold"
                cold["artifacts"] = artifacts(cache)
                print(json.dumps(cold), flush=True)
                warm = measure(cache, child_args)
                warm["cache"] = "warm"
                print(json.dumps(warm), flush=True)
        return 0
    with tempfile.TemporaryDirectory() as cache:
        rec = measure(cache, ["vision", args.model, str(args.size), str(args.batch)])
        rec["artifacts"] = artifacts(cache)
        print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
