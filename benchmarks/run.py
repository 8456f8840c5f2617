#!/usr/bin/env python3
"""One command for trnc's benchmarks: ``python3 benchmarks/run.py`` writes benchmarks/RESULTS.md.

Side by side, in one run, for bf16 matmuls (512^3 up to the NKI tutorial's
[4096,8192]@[8192,8192]), the MLP forward+backward and the demo's GPT
forward+backward:
  - simulated time and Tensor Engine utilisation/MFU (trnc's timed simulator);
  - simulator wall time vs eager PyTorch on this CPU (ratio);
  - compile time of backend="neuron" vs backend="inductor" (ratio).
Method and machine are written beside the numbers. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import tempfile
import time

# Cold compiles for both backends: no trnc artifact cache, no Inductor caches.
os.environ["TRNC_DISABLE_CACHE"] = "1"
os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="trnc-bench-inductor-"))

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine  # noqa: E402
import report  # noqa: E402
from measure import compiled, eager  # noqa: E402
from workloads import all_workloads, warmup_workload  # noqa: E402


def kept_sections(old: str) -> list[str]:
    """The marker-delimited sections of an earlier RESULTS.md, in order."""
    return [m.group(0) for m in re.finditer(r"<!-- ([\w-]+):begin.*?<!-- \1:end -->", old, re.S)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"))
    parser.add_argument("--quick", action="store_true", help="skip the largest matmul (a smoke run)")
    args = parser.parse_args()

    started = time.perf_counter()
    rows = []
    workloads = all_workloads()
    if args.quick:
        workloads = [w for w in workloads if w.flops < 1e11]
    inductor_ok = bool(machine.cxx_compiler())
    # One-time costs (imports, AOTAutograd and Inductor initialisation) are paid
    # here, so that no backend is charged them on the first workload.
    print("[bench] warm-up compiles", flush=True)
    for backend in ("neuron",) + (("inductor",) if inductor_ok else ()):
        compiled(warmup_workload(), backend, repeats=1)
    for w in workloads:
        print(f"[bench] {w.name}: eager", flush=True)
        e = eager(w)
        e1 = eager(w, threads=1)
        print(f"[bench] {w.name}: neuron", flush=True)
        n, graphs = compiled(w, "neuron", profile=True)
        print(f"[bench] {w.name}: inductor", flush=True)
        i = compiled(w, "inductor")[0] if inductor_ok and w.inductor else None
        rows.append(report.Row(w, e, n, i, graphs, e1))
        print(f"[bench] {report.one_line(rows[-1])}", flush=True)

    anchor = None
    big = [w for w in workloads if w.flops > 5e11]
    if big:
        print(f"[bench] {big[0].name}: neuron on trn1 (tutorial anchor)", flush=True)
        anchor = report.trn1_anchor(big[0])

    elapsed = time.perf_counter() - started
    text = report.render(rows, anchor, machine.facts(), elapsed, inductor_ok,
                         datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    # Keep the sections other harnesses write, each between its own markers
    # ("<!-- NAME:begin ...-->" .. "<!-- NAME:end -->": hf-sweep, demo-gpt).
    if os.path.exists(args.output):
        for section in kept_sections(open(args.output).read()):
            text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(args.output, "w") as f:
        f.write(text)
    print(f"[bench] wrote {args.output} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
