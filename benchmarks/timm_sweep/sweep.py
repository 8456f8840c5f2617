"""The vision sweep: torchvision's classification models (and timm's, when
installed) through backend="neuron", training step vs eager, train and eval mode.

    python3 benchmarks/timm_sweep/sweep.py [--size 64] [--batch 2] [--timeout 900]
        [--models torchvision:resnet18,... | --families] [--skip-done]
        [--results results.json] [--markdown RESULTS.md]

--families runs the smallest variant of every timm architecture family
(timm_families.py; its selection and the skipped families are in
timm_families.json); --skip-done leaves out models already in the results.

Each model runs in its own process (vision_worker.py: isolation, a peak-RSS
figure per model, a timeout that kills only that model); results merge into
the JSON file by model name, so a partial run adds to earlier ones, and the
markdown table is regenerated from the whole file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def all_models() -> list[str]:
    import tv_shim

    models = tv_shim.import_torchvision().models
    names = [f"torchvision:{n}" for n in models.list_models(module=models)]
    try:
        import timm
    except ImportError:
        return names
    return names + [f"timm:{n}" for n in timm.list_models()]


def run_one(spec: str, size: int, batch: int, timeout: float, check: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        start = time.perf_counter()
        cmd = [sys.executable, os.path.join(HERE, "vision_worker.py"), out, spec, "--size", str(size),
               "--batch", str(batch)] + (["--check"] if check else [])
        try:
            subprocess.run(cmd, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        record = json.load(open(out)) if os.path.exists(out) else {"model": spec}
        record["wall_s"] = round(time.perf_counter() - start, 1)
        if check:
            return {"check": record.get("check") or {"ok": False, "error": record.get("error") or {
                "kind": f"timeout after {timeout:.0f} s" if timed_out else "worker died (memory?)"}}}
        for mode in ("train", "eval"):
            if timed_out and record.get(mode, {}).get("status") in (None, "running"):
                record[mode] = {"status": "timeout", "error": {"kind": f"timeout after {timeout:.0f} s"}}
            elif mode not in record and "error" not in record:
                record[mode] = {"status": "crashed", "error": {"kind": "worker died (memory?)"}}
        return record


def _cell(rec: dict, key: str, fmt: str) -> str:
    v = rec.get(key)
    return format(v, fmt) if isinstance(v, (int, float)) else ""


def markdown(results: dict, size: int, batch: int) -> str:
    rows = sorted((r for r in results.values() if "train" in r or "eval" in r or "error" in r),
                  key=lambda r: r["model"])
    checked = sorted((s, r["check"]) for s, r in results.items() if r.get("check") and r not in rows)
    modes = [(r, m) for r in rows for m in ("train", "eval")]
    passed = sum(1 for r, m in modes if r.get(m, {}).get("status", "").startswith("pass"))
    lines = [
        "# Vision sweep results (benchmarks/timm_sweep)",
        "",
        f"Training step (forward + backward of `(model(x) * g).sum()`) at {size}x{size}, batch {batch}, "
        "float32, `torch.compile(backend=\"neuron\", dynamic=False)` vs eager; train mode (batch "
        "statistics) and eval mode (running statistics). Errors are max |trnc - eager| / max |eager| per "
        "tensor (output; worst parameter gradient); a pass is both <= 1e-3, or \"pass (fp64 rule)\": no further "
        "from a float64 eager run than eager float32 is (2x RMS, per tensor), or \"pass (fp32 spread)\": no further "
        "from float64 than the worst of eager float32 steps on inputs one rounding away (a step that amplifies "
        "rounding, e.g. one ReLU decision flipped; see vision_worker.py). Compile = trnc's compile time "
        "for the step's graphs (wall; AOTAutograd, export and the C++ compiler); first step CPU = the process's "
        "CPU time for the first step (compile and one simulated run; steadier than wall time on a shared "
        "machine); RSS = the worker's peak; simulated = one step on the simulator.",
        "",
        f"**{passed} / {len(modes)} (model, mode) pairs pass** over {len(rows)} models run here "
        "(the sweep's subset this session; see README.md).",
        "",
        "| model | mode | status | out err | grad err | compile s | first step CPU s | peak RSS MB | simulated ms "
        "| cause / first unsupported op |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r, m in modes:
        rec = r.get(m, {"status": "not run", "error": r.get("error", {})})
        err = rec.get("error", {}) or {}
        cause = err.get("operator") or err.get("kind", "")
        if err.get("message"):
            cause += f": {err['message'][:120]}"
        if rec.get("cause"):  # a mismatch's analysed cause, added to results.json by hand
            cause = (cause + "; " if cause else "") + rec["cause"]
        lines.append(
            f"| {r['model']} | {m} | {rec.get('status', '')} | {_cell(rec, 'out_rel_err', '.1e')} | "
            f"{_cell(rec, 'grad_rel_err', '.1e')} | {_cell(rec, 'compile_s', '.1f')} | "
            f"{_cell(rec, 'first_step_cpu_s', '.1f')} | "
            f"{_cell(rec, 'peak_rss_mb', 'd')} | {_cell(rec, 'simulated_ms', '.2f')} | {cause.replace('|', '/')} |")
    if checked:
        ok = sum(1 for _, c in checked if c.get("ok"))
        lines += [
            "",
            "## Operator check only (sweep.py --check: not run in full)",
            "",
            "The training step's graphs exported and given to the importer alone (`trnc.check_support`, "
            f"train mode): no compile, no simulation, no comparison. {ok} / {len(checked)} models lower every "
            "operator.",
            "",
            "| model | every operator lowers | unsupported operators / error |",
            "|---|---|---|",
        ]
        for spec, c in checked:
            err = c.get("error") or {}
            what = ", ".join(c.get("unsupported", [])) or c.get("message", "") or (
                err.get("kind", "") + (f": {err['message'][:120]}" if err.get("message") else ""))
            lines.append(f"| {spec} | {'yes' if c.get('ok') else 'no'} | {what.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--models", default="", help="comma-separated SOURCE:NAME (default: every model)")
    ap.add_argument("--families", action="store_true",
                    help="the smallest variant of every timm family (timm_families.py) instead of --models")
    ap.add_argument("--skip-done", action="store_true", help="leave out models already in the results file")
    ap.add_argument("--check", action="store_true",
                    help="only check which operators lower (trnc.check_support), for models not run in full")
    ap.add_argument("--results", default=os.path.join(HERE, "results.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "RESULTS.md"))
    args = ap.parse_args()
    results = json.load(open(args.results)) if os.path.exists(args.results) else {}
    if args.families:
        import timm_families

        specs = timm_families.picked(timm_families.load(args.size))
    else:
        specs = args.models.split(",") if args.models else all_models()
    for spec in specs:
        done = results.get(spec, {})
        if args.skip_done and ("train" in done or (args.check and "check" in done)):
            continue
        if args.check:
            results.setdefault(spec, {"model": spec}).update(run_one(spec, args.size, args.batch, args.timeout, True))
            print(spec, results[spec]["check"], flush=True)
        else:
            record = run_one(spec, args.size, args.batch, args.timeout)
            results[spec] = record
            print(spec, {m: record.get(m, {}).get("status") for m in ("train", "eval")}, f"{record['wall_s']} s",
                  flush=True)
        with open(args.results, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
        with open(args.markdown, "w") as f:
            f.write(markdown(results, args.size, args.batch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
