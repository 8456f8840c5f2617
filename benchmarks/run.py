#!/usr/bin/env python3
"""One command for trnc's benchmarks: ``python3 benchmarks/run.py`` writes benchmarks/RESULTS.md.

Side by side, in one run, for bf16 matmuls (512^3 up to the NKI tutorial's
[4096,8192]@[8192,8192]), the MLP forward+backward, the demo's GPT
forward+backward and a bf16 GPT training step with AdamW at a realistic size:
  - simulated time, Tensor Engine utilisation/MFU (against the peak of the
    workload's dtype) and a roofline table (trnc's timed simulator);
  - simulator wall time vs eager PyTorch on this CPU (ratio);
  - compile time of backend="neuron" vs backend="inductor" (ratio);
  - calibration (calibration.py): our NKI-tutorial kernels simulated on trn1 against
    the tutorials' published hardware latencies (key "calibration").
Every workload's latest record is kept in RESULTS.json beside RESULTS.md:
``--only KEY`` / ``--skip KEY`` re-measure some workloads and keep the other
rows (``--render``: none, only rewrite RESULTS.md); each run prints (and RESULTS.md shows) the change against the
RESULTS.json it replaces, or against ``--baseline FILE``.
Method and machine are written beside the numbers. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
import tempfile
import time
from typing import Optional

# Cold compiles for both backends: no trnc artifact cache, no Inductor caches
# (set before torch is imported). Only when run as the benchmark: a process
# that imports this module (test_bench_harness.py) keeps its own caches.
# Every simulated run is also race-checked (semaphores, scratch read before
# written), as in the tests: a time is only reported for a program the
# checker accepts (about 7% more simulator wall time on the bf16 GPT step).
if __name__ == "__main__":
    os.environ["TRNC_DISABLE_CACHE"] = "1"
    os.environ.setdefault("TRNC_RACE_CHECK", "1")
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="trnc-bench-inductor-"))

import torch  # noqa: E402,F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibration  # noqa: E402
import machine  # noqa: E402
import report  # noqa: E402
from measure import Timing, compiled, eager, too_slow_on_cpu  # noqa: E402
from workloads import all_workloads, warmup_workload  # noqa: E402

JSON_FORMAT = 1
QUICK_MAX_FLOPS = 1e11  # --quick: workloads below this many FLOP per step
CALIBRATION = "calibration"  # the --only/--skip key of calibration.py's section


def kept_sections(old: str) -> list[str]:
    """The marker-delimited sections of an earlier RESULTS.md, in order."""
    return [m.group(0) for m in re.finditer(r"<!-- ([\w-]+):begin.*?<!-- \1:end -->", old, re.S)]


def _keys(values: list[str]) -> list[str]:
    return [k for v in values for k in v.split(",") if k]


def select(workloads: list, only: list[str], skip: list[str], quick: bool) -> list:
    """The workloads to measure; unknown keys are an error that lists the known ones."""
    known = {w.key for w in workloads}
    unknown = sorted(set(only + skip) - known)
    if unknown:
        raise SystemExit(f"run.py: unknown workload key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    chosen = [w for w in workloads if (not only or w.key in only) and w.key not in skip]
    if quick:
        chosen = [w for w in chosen if w.flops < QUICK_MAX_FLOPS]
    return chosen


def load_json(path: str) -> dict:
    """An earlier RESULTS.json, or an empty one when there is none."""
    if not os.path.exists(path):
        return {"format": JSON_FORMAT, "workloads": {}}
    with open(path) as f:
        data = json.load(f)
    if data.get("format") != JSON_FORMAT:
        raise SystemExit(f"run.py: {path} has format {data.get('format')!r}, expected {JSON_FORMAT}")
    return data


def merged(workloads: list, measured: dict, old: dict) -> list[dict]:
    """Records in workload order: this run's, else the earlier run's; then earlier-only keys."""
    out = [measured.get(w.key) or old.get(w.key) for w in workloads]
    known = {w.key for w in workloads}
    return [r for r in out if r] + [r for k, r in old.items() if k not in known]


def draw_roofline(recs: list[dict], directory: str) -> Optional[str]:
    """roofline.png beside RESULTS.md (trnc.plot, matplotlib optional): its file name, or None."""
    points = report.roofline_points(recs)
    if not points:
        return None
    try:
        from trnc.plot import roofline
        roofline(points, "trn2", os.path.join(directory, "roofline.png"),
                 title="trnc workloads on one trn2 NeuronCore (simulated)")
    except Exception as exc:  # no matplotlib, or nothing placeable: the table stands alone
        print(f"[bench] roofline image not drawn: {exc}", flush=True)
        return None
    return "roofline.png"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("-o", "--output", default=os.path.join(here, "RESULTS.md"),
                        help="RESULTS.md to write; its records go to the .json beside it")
    parser.add_argument("--quick", action="store_true", help=f"only workloads under {QUICK_MAX_FLOPS:.0e} FLOP (a smoke run)")
    parser.add_argument("--only", action="append", default=[], metavar="KEY[,KEY]", help="measure only these workloads")
    parser.add_argument("--skip", action="append", default=[], metavar="KEY[,KEY]", help="do not measure these")
    parser.add_argument("--baseline", metavar="RESULTS.json", help="compare against this file "
                        "(default: the RESULTS.json being replaced)")
    parser.add_argument("--list", action="store_true", help="print the workload keys and names, then exit")
    parser.add_argument("--render", action="store_true", help="measure nothing: rewrite RESULTS.md from RESULTS.json")
    args = parser.parse_args()

    workloads = all_workloads()
    if args.list:
        for w in workloads:
            print(f"{w.key:24} {w.flops:9.3g} FLOP  {w.name}")
        return 0
    # "calibration" (calibration.py: the NKI tutorial kernels on trn1, a few minutes) is a key of
    # its own: measured with every full run and by --only calibration, never by --quick.
    only, skip = _keys(args.only), _keys(args.skip)
    run_calibration = not (args.render or args.quick or CALIBRATION in skip or (only and CALIBRATION not in only))
    only, skip = [k for k in only if k != CALIBRATION], [k for k in skip if k != CALIBRATION]
    chosen = [] if args.render or (args.only and not only) else select(workloads, only, skip, args.quick)
    json_path = os.path.splitext(args.output)[0] + ".json"
    previous = load_json(json_path)
    baseline = load_json(args.baseline) if args.baseline else previous

    started = time.perf_counter()
    commit = machine.commit()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    measured = {}
    inductor_ok = bool(machine.cxx_compiler())
    # One-time costs (imports, AOTAutograd and Inductor initialisation) are paid
    # here, so that no backend is charged them on the first workload.
    if chosen:
        print("[bench] warm-up compiles", flush=True)
    for backend in (("neuron",) + (("inductor",) if inductor_ok else ())) if chosen else ():
        compiled(warmup_workload(), backend, repeats=1)
    for w in chosen:
        print(f"[bench] {w.key}: eager", flush=True)
        e = eager(w)
        e1 = eager(w, threads=1)
        print(f"[bench] {w.key}: neuron", flush=True)
        n, graphs = compiled(w, "neuron", profile=True)
        print(f"[bench] {w.key}: inductor", flush=True)
        i = None
        if inductor_ok and w.inductor:
            slow = too_slow_on_cpu(w)
            i = Timing(error=slow) if slow else compiled(w, "inductor")[0]
        measured[w.key] = report.record(report.Row(w, e, n, i, graphs, e1), commit, when)
        print(f"[bench] {report.one_line(measured[w.key])}", flush=True)

    anchor = previous.get("anchor")
    big = [w for w in chosen if w.flops > 5e11 and w.key.startswith("matmul")]
    if big:
        print(f"[bench] {big[0].key}: neuron on trn1 (tutorial anchor)", flush=True)
        anchor = report.trn1_anchor(big[0], commit, when)

    calibration_section = None
    if run_calibration:
        print("[bench] calibration: NKI tutorial kernels on trn1", flush=True)
        results = calibration.run(log=lambda line: print(f"[bench] {line}", flush=True))
        calibration_section = calibration.section(results)

    recs = merged(workloads, measured, previous.get("workloads", {}))
    delta_lines = report.deltas([r for r in recs if r["key"] in measured], baseline)
    note = (f"This run ({commit}) against {args.baseline or 'the RESULTS.json it replaced'}: "
            "old -> new (new / old).")
    if delta_lines:
        print("[bench] " + note + "\n" + "\n".join(delta_lines), flush=True)
    elapsed = time.perf_counter() - started
    image = draw_roofline(recs, os.path.dirname(os.path.abspath(args.output)))
    text = report.render(recs, anchor, machine.facts(), elapsed, inductor_ok, when, delta_lines, note,
                         roofline_image=image)
    # Keep the sections other harnesses write, each between its own markers
    # ("<!-- NAME:begin ...-->" .. "<!-- NAME:end -->": hf-sweep, demo-gpt).
    if os.path.exists(args.output):
        for section in kept_sections(open(args.output).read()):
            text = text.rstrip("\n") + "\n\n" + section + "\n"
    if calibration_section:
        text = calibration.replace_section(text, calibration_section)
    with open(args.output, "w") as f:
        f.write(text)
    data = {"format": JSON_FORMAT, "written": when, "commit": commit, "machine": dict(machine.facts()),
            "workloads": {r["key"]: r for r in recs}, "anchor": anchor}
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    print(f"[bench] wrote {args.output} and {json_path} in {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
