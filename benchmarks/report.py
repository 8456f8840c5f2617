"""RESULTS.md and RESULTS.json for the benchmark harness: records, tables, method.

A measured workload becomes a *record* (a dict of plain numbers, record());
run.py keeps every workload's latest record in RESULTS.json and renders
RESULTS.md from those records, so a run of some workloads (--only) updates
their rows and keeps the others, and a later run can print deltas against
an earlier RESULTS.json (deltas()). Everything printed is computed by a run;
the reference numbers quoted for comparison come from HARDWARE.md
("Reference results").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from measure import Timing, compiled
from workloads import Workload

# HARDWARE.md "Reference results": NKI matmul tutorial on one trn1 core.
TUTORIAL_NAIVE_MS, TUTORIAL_NAIVE_PEAK = 51.80, 0.11
TUTORIAL_BEST_MS, TUTORIAL_BEST_PEAK = 6.97, 0.852

ENGINES = ("tensor", "vector", "scalar", "gpsimd", "dma")


@dataclass
class Row:
    """One workload's measurements in this run (turned into a record)."""
    workload: Workload
    eager: Timing
    neuron: Timing
    inductor: Optional[Timing]
    graphs: list  # trnc.profiling.GraphProfile of one step
    eager1: Optional[Timing] = None  # eager with one intra-op thread


def _nan_to_none(x: float) -> Optional[float]:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _timing(t: Optional[Timing]) -> Optional[dict]:
    if t is None:
        return None
    return {"median_s": _nan_to_none(t.median_s), "min_s": min(t.runs_s, default=None),
            "steps": len(t.runs_s), "compile_s": t.compile_s, "error": t.error}


def profile_numbers(w: Workload, graphs: list) -> dict:
    """The simulated numbers of one step (its graphs run back to back) against w's roofline.

    Roofline bound = max(FLOP / peak(w.dtype), minimal HBM bytes / HBM bandwidth).
    Minimal HBM bytes: every compiled program (forward, backward, optimizer
    step) reads each of its inputs and writes each of its outputs exactly once
    and keeps everything else on chip: for a matmul A + B + C; for a training
    step the weights (read by forward and backward), the gradients (written),
    the optimizer state (read and written), the activations AOTAutograd saves
    for backward (written by forward, read by backward), the tokens and the loss
    (and logits when returned).
    """
    dicts = [g.to_dict() for g in graphs]
    sim_ns = sum(d["total_ns"] for d in dicts)
    first = dicts[0]
    peak = first["peak_flops_per_second_by_dtype"][w.dtype]
    bw = first["peak_hbm_bytes_per_second"]
    min_bytes = sum(d["program_input_bytes"] + d["program_output_bytes"] for d in dicts)
    hbm = sum(d["hbm_bytes"] for d in dicts)
    compute_ns = w.flops / peak * 1e9
    memory_ns = min_bytes / bw * 1e9
    busy = {e: sum(d["engines"][e]["busy_ns"] for d in dicts) / sim_ns if sim_ns else 0.0 for e in ENGINES}
    dtypes = []
    for d in dicts:
        dtypes += [k for k in d["matmul_dtypes"] if k not in dtypes]
    return {
        "target": first["target"],
        "sim_ns": sim_ns,
        "peak_flops_per_second": peak,
        "peak_hbm_bytes_per_second": bw,
        # MFU of the model's FLOPs (w.flops, in w.dtype) against that dtype's peak.
        "mfu": w.flops / peak * 1e9 / sim_ns if sim_ns else None,
        # The profile's own: Tensor Engine FLOPs, each against its dtype's peak.
        "hfu": sum(d["tensor_at_peak_ns"] for d in dicts) / sim_ns if sim_ns else None,
        "profile_mfu": sum(d["useful_at_peak_ns"] for d in dicts) / sim_ns if sim_ns else None,
        "matmul_dtypes": "+".join(dtypes),
        "tensor_flops": sum(d["tensor_flops"] for d in dicts),
        "hbm_bytes": hbm,
        "min_hbm_bytes": min_bytes,
        "mbu": hbm / (sim_ns * 1e-9 * bw) if sim_ns else None,
        "compute_bound_ns": compute_ns,
        "memory_bound_ns": memory_ns,
        "bound_ns": max(compute_ns, memory_ns),
        "bound": "compute" if compute_ns >= memory_ns else "memory",
        "busy": busy,
        "verdicts": ", ".join(sorted({d["verdict"] for d in dicts})) or "-",
        "instructions": sum(d["program_instructions"] for d in dicts),
        "graphs": [{"graph": g.graph, "total_ns": d["total_ns"], "hbm_bytes": d["hbm_bytes"],
                    "input_bytes": d["program_input_bytes"], "output_bytes": d["program_output_bytes"],
                    "instructions": d["program_instructions"], "scratch_bytes": d["program_scratch_bytes"],
                    "scratch_arena_bytes": d["program_scratch_arena_bytes"]} for g, d in zip(graphs, dicts)],
    }


def record(r: Row, commit: str, when: str) -> dict:
    """Everything RESULTS.md shows about one workload, as plain values (RESULTS.json)."""
    w = r.workload
    rec = {"key": w.key, "name": w.name, "dtype": w.dtype, "flops": w.flops, "flops_rule": w.flops_rule,
           "train": w.train, "optimizer": w.optimizer is not None, "inductor_planned": w.inductor,
           "commit": commit, "when": when, "error": r.neuron.error,
           "eager": _timing(r.eager), "eager1": _timing(r.eager1), "neuron": _timing(r.neuron),
           "inductor": _timing(r.inductor)}
    if r.graphs and not r.neuron.error:
        rec.update(profile_numbers(w, r.graphs))
    return rec


def _ms(s: Optional[float]) -> str:
    if s is None or math.isnan(s):
        return "n/a"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def _sim(ns: float) -> str:
    return f"{ns / 1e6:.4g} ms" if ns >= 1e5 else f"{ns / 1e3:.4g} us"


def _pct(x: Optional[float]) -> str:
    if x is None or math.isnan(x):
        return "n/a"
    return f"{100 * x:.1f}%" if x == 0 or x >= 0.01 else f"{100 * x:.2g}%"


def _ratio(a: Optional[float], b: Optional[float]) -> str:
    if a is None or b is None or math.isnan(a) or math.isnan(b) or b <= 0:
        return "n/a"
    return f"{a / b:.2g}x" if a / b < 100 else f"{a / b:,.0f}x"


def _bytes(n: Optional[float]) -> str:
    if n is None:
        return "n/a"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _count(n: Optional[float]) -> str:
    return "n/a" if n is None else f"{n:,.0f}"


def one_line(rec: dict) -> str:
    if rec.get("error") or "sim_ns" not in rec:
        return f"{rec['name']}: failed: {rec.get('error')}"
    ind = rec["inductor"]
    return (f"{rec['name']}: simulated {rec['sim_ns'] / 1e6:.3f} ms (bound {rec['bound_ns'] / 1e6:.3f} ms, "
            f"{rec['bound']}), TE busy {_pct(rec['busy']['tensor'])}, MFU {_pct(rec['mfu'])} ({rec['dtype']}); "
            f"HBM {_bytes(rec['hbm_bytes'])} (min {_bytes(rec['min_hbm_bytes'])}); "
            f"{_count(rec['instructions'])} instructions; sim wall {_ms(rec['neuron']['median_s'])} vs eager "
            f"{_ms(rec['eager']['median_s'])}; compile neuron {_ms(rec['neuron']['compile_s'])} vs inductor "
            f"{_ms(ind['compile_s']) if ind else 'n/a'}")


def trn1_anchor(w: Workload, commit: str, when: str) -> dict:
    """The tutorial's shape compiled for trn1 (its reference machine), one profiled step."""
    t, graphs = compiled(w, "neuron", profile=True, options={"target": "trn1"}, repeats=0)
    rec = {"key": w.key, "commit": commit, "when": when, "error": t.error or (None if graphs else "no profile")}
    if not rec["error"]:
        n = profile_numbers(w, graphs)
        rec.update(trn1_ns=n["sim_ns"], trn1_mfu=n["mfu"], trn1_te_busy=n["busy"]["tensor"])
    return rec


def _measured(rec: dict) -> bool:
    return not rec.get("error") and "sim_ns" in rec


def _simulated_table(recs: list[dict]) -> list[str]:
    out = ["| workload | FLOP per step | simulated time | at 100% of peak | Tensor Engine busy | MFU | HFU | MBU | verdict |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        if not _measured(r):
            out.append(f"| {r['name']} | {r['flops']:.3g} | failed: {r.get('error')} | | | | | | |")
            continue
        out.append(f"| {r['name']} | {r['flops']:.3g} | {_sim(r['sim_ns'])} | {_sim(r['compute_bound_ns'])} | "
                   f"{_pct(r['busy']['tensor'])} | {_pct(r['mfu'])} {r['dtype']} | {_pct(r['hfu'])} "
                   f"{r['matmul_dtypes'] or '-'} | {_pct(r['mbu'])} | {r['verdicts']} |")
    return out


def _roofline_table(recs: list[dict]) -> list[str]:
    out = ["| workload | simulated | roofline bound | simulated / bound | FLOP / peak | minimal bytes / HBM bw | "
           "HBM bytes moved | minimal HBM bytes | moved / minimal | Tensor | Vector | Scalar | GpSimd | DMA | "
           "instructions | neuron compile |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in recs:
        if not _measured(r):
            out.append(f"| {r['name']} | failed: {r.get('error')} |" + " |" * 15)
            continue
        busy = " | ".join(_pct(r["busy"][e]) for e in ENGINES)
        out.append(f"| {r['name']} | {_sim(r['sim_ns'])} | {_sim(r['bound_ns'])} ({r['bound']}) | "
                   f"{_ratio(r['sim_ns'], r['bound_ns'])} | {_sim(r['compute_bound_ns'])} | "
                   f"{_sim(r['memory_bound_ns'])} | {_bytes(r['hbm_bytes'])} | {_bytes(r['min_hbm_bytes'])} | "
                   f"{_ratio(r['hbm_bytes'], r['min_hbm_bytes'])} | {busy} | {_count(r['instructions'])} | "
                   f"{_ms(r['neuron']['compile_s'])} |")
    return out


def _minimum_by_program(recs: list[dict]) -> list[str]:
    """Where each multi-graph step's minimal bytes come from: each program's inputs and outputs."""
    out = []
    for r in recs:
        if _measured(r) and len(r["graphs"]) > 1:
            parts = "; ".join(f"{g['graph']} reads {_bytes(g['input_bytes'])}, writes {_bytes(g['output_bytes'])} "
                              f"(moves {_bytes(g['hbm_bytes'])})" for g in r["graphs"])
            out.append(f"- {r['name']}: {parts}.")
    return out


def _scratch_table(recs: list[dict]) -> list[str]:
    """Each program's HBM scratch: its regions' bytes and the arena they are packed into."""
    rows = [r for r in recs if _measured(r) and any(g.get("scratch_bytes") for g in r["graphs"])]
    if not rows:
        return []
    out = ["| workload | program | scratch regions, end to end | scratch arena | arena / regions |",
           "|---|---|---:|---:|---:|"]
    for r in rows:
        for g in r["graphs"]:
            if g.get("scratch_bytes"):
                out.append(f"| {r['name']} | {g['graph']} | {_bytes(g['scratch_bytes'])} | "
                           f"{_bytes(g['scratch_arena_bytes'])} | "
                           f"{_pct(g['scratch_arena_bytes'] / g['scratch_bytes'])} |")
    return out


def _wall_table(recs: list[dict]) -> list[str]:
    out = ["| workload | eager PyTorch (CPU), median (min) | eager, 1 thread, median (min) | trnc simulator, median (min) "
           "| simulator / eager (medians) | simulator / eager 1 thread | steps timed |",
           "|---|---:|---:|---:|---:|---:|---:|"]

    def cell(t: Optional[dict]) -> str:
        if t and t.get("error"):
            return t["error"]
        return f"{_ms(t['median_s'])} ({_ms(t['min_s'])})" if t else "n/a"

    for r in recs:
        e, e1, n = r["eager"], r["eager1"], r["neuron"]
        out.append(f"| {r['name']} | {cell(e)} | {cell(e1)} | {cell(n)} | {_ratio(n['median_s'], e['median_s'])} | "
                   f"{_ratio(n['median_s'], e1['median_s']) if e1 else 'n/a'} | {n['steps']} |")
    return out


def _compile_table(recs: list[dict], inductor_ok: bool) -> list[str]:
    out = ["| workload | neuron compile | inductor compile | neuron / inductor |", "|---|---:|---:|---:|"]
    for r in recs:
        i = r["inductor"]
        if i is None:
            ind = ("not run (a simulator-speed workload)" if not r["inductor_planned"] else
                   "not run (no C++ compiler)" if not inductor_ok else "n/a")
        elif i["error"]:
            ind = i["error"] if i["error"].startswith("not timed") else f"failed: {i['error']}"
        else:
            ind = _ms(i["compile_s"])
        n = f"failed: {r['error']}" if r.get("error") else _ms(r["neuron"]["compile_s"])
        ratio = _ratio(r["neuron"]["compile_s"], i["compile_s"]) if i and not i["error"] else "n/a"
        out.append(f"| {r['name']} | {n} | {ind} | {ratio} |")
    return out


# What deltas() compares: (label, record key, formatter).
DELTA_FIELDS = (("simulated", "sim_ns", _sim), ("MFU", "mfu", _pct), ("HBM bytes", "hbm_bytes", _bytes),
                ("instructions", "instructions", _count), ("neuron compile", None, _ms))


def _delta_value(rec: dict, key: Optional[str]) -> Optional[float]:
    if key is None:
        return rec["neuron"]["compile_s"] if rec.get("neuron") else None
    return rec.get(key)


def deltas(recs: list[dict], baseline: dict) -> list[str]:
    """A table of the measured records against the same workloads of an earlier RESULTS.json
    (empty when none of them is in it): old -> new (new / old) per field."""
    old = baseline.get("workloads", {})
    pairs = [(old[r["key"]], r) for r in recs if r["key"] in old and _measured(r) and _measured(old[r["key"]])]
    if not pairs:
        return []
    out = ["| workload | baseline | " + " | ".join(label for label, _, _ in DELTA_FIELDS) + " |",
           "|---|---|" + "---:|" * len(DELTA_FIELDS)]
    for o, n in pairs:
        cells = []
        for _, key, fmt in DELTA_FIELDS:
            a, b = _delta_value(o, key), _delta_value(n, key)
            cells.append(f"{fmt(a)} -> {fmt(b)} ({_ratio(b, a)})")
        out.append(f"| {n['name']} | {o['commit']} | " + " | ".join(cells) + " |")
    return out


def _anchor_text(recs: list[dict], anchor: Optional[dict]) -> list[str]:
    big = next((r for r in recs if anchor and r["key"] == anchor["key"] and _measured(r)), None)
    out = ["## Against the reference anchors (HARDWARE.md)", ""]
    if anchor is None or big is None:
        return out + ["The tutorial-sized matmul was not run (--quick).", ""]
    out += [
        f"NKI matmul tutorial, [4096,8192]@[8192,8192] bf16 on one **trn1** core, measured on hardware: "
        f"naive tiled kernel {TUTORIAL_NAIVE_MS} ms ({_pct(TUTORIAL_NAIVE_PEAK)} of peak), fully optimised "
        f"{TUTORIAL_BEST_MS} ms ({_pct(TUTORIAL_BEST_PEAK)} of peak).",
        "",
        "| | time | share of peak |",
        "|---|---:|---:|",
        f"| tutorial, naive kernel (trn1, measured) | {TUTORIAL_NAIVE_MS} ms | {_pct(TUTORIAL_NAIVE_PEAK)} |",
        f"| tutorial, optimised kernel (trn1, measured) | {TUTORIAL_BEST_MS} ms | {_pct(TUTORIAL_BEST_PEAK)} |",
    ]
    if anchor["error"]:
        out.append(f"| trnc, trn1 (simulated) | failed: {anchor['error']} | |")
    else:
        out.append(f"| trnc-compiled, trn1 (simulated) | {anchor['trn1_ns'] / 1e6:.4g} ms | {_pct(anchor['trn1_mfu'])} MFU "
                   f"(Tensor Engine busy {_pct(anchor['trn1_te_busy'])}) |")
    out.append(f"| trnc-compiled, trn2 (simulated) | {big['sim_ns'] / 1e6:.4g} ms | {_pct(big['mfu'])} MFU "
               f"(Tensor Engine busy {_pct(big['busy']['tensor'])}) |")
    out.append("")
    if not anchor["error"]:
        mfu = anchor["trn1_mfu"]
        where = ("below the naive kernel" if mfu < TUTORIAL_NAIVE_PEAK else
                 "between the naive and the optimised kernel" if mfu < TUTORIAL_BEST_PEAK else
                 "at or above the optimised kernel")
        out += [
            f"Read honestly: on trn1 trnc's schedule is simulated at {_pct(mfu)} of peak, {where}. "
            "The simulator is a model built from public documents, not a measurement, so this says what our "
            "cost model predicts for trnc's instruction streams; it validates neither the model nor the "
            "compiler against hardware. The tutorial's own kernels have not been run through our simulator "
            "(they are NKI Python, not trnc artifacts), so the comparison is between our simulated "
            "schedule and their measured kernels.",
            "",
            "On trn2 the kernel-optimization tutorial reports the Tensor Engine active 87% (first version) "
            f"to 99.5% (optimised); trnc's simulated Tensor Engine busy share for the same shape is "
            f"{_pct(big['busy']['tensor'])}.",
            "",
        ]
    return out


def _provenance(recs: list[dict], when: str) -> str:
    """Which rows this run measured and which it kept from earlier runs (--only/--skip)."""
    kept = [r for r in recs if r["when"] != when]
    if not kept:
        return "every row below was measured in this run."
    return ("rows not measured in this run are kept from RESULTS.json: " +
            "; ".join(f"{r['key']} ({r['commit']}, {r['when']})" for r in kept) + ".")


def render(recs: list[dict], anchor: Optional[dict], facts: list, elapsed_s: float, inductor_ok: bool,
           when: str, delta_lines: Optional[list[str]] = None, baseline_note: str = "",
           roofline_image: Optional[str] = None) -> str:
    out = [
        "# trnc benchmark results",
        "",
        f"Written by `python3 benchmarks/run.py` on {when} in {elapsed_s:.0f} s (see benchmarks/README.md); "
        f"{_provenance(recs, when)} Machine-readable: RESULTS.json beside this file.",
        "",
        "**Simulated times are estimates** from trnc's NeuronCore model (public AWS documentation, "
        "HARDWARE.md), not measurements on Trainium. Wall and compile times are measured on the machine below.",
        "",
        "## Simulated on one trn2 NeuronCore (the default target)",
        "",
        *_simulated_table(recs),
        "",
        "FLOP per step counts the model's matmuls (2*M*K*N each; the MLP step: both forward matmuls, "
        "both weight gradients and the second layer's input gradient; the GPT steps: 3x their forward matmuls, "
        "attention over the full T x T included, the formula in workloads.gpt_step_flops). \"At 100% of peak\" "
        "is FLOP / the per-core Tensor Engine peak of the dtype the workload's matmuls run in (bf16/fp16: "
        "128*128*2*clock; fp32: a quarter of that, HARDWARE.md). MFU = FLOP per step / (simulated time x that "
        "peak), labelled with the dtype; HFU is the profile's: every Tensor Engine FLOP (including matmuls the "
        "compiler adds, e.g. for sums over the batch), each divided by the peak of the dtype it ran at (labels: "
        "the dtypes seen), over the simulated time. MBU = HBM bytes / (simulated time x HBM bandwidth per core). "
        "Verdict rule (AWS performance guide): compute-bound when an engine is >= 90% busy, memory-bound at "
        ">= 60% of memory bandwidth, else latency-bound.",
        "",
        "## Roofline: simulated time against its bound",
        "",
        *_roofline_table(recs),
        "",
        *([f"![Each workload against trn2's compute and HBM ceilings (simulated)]({roofline_image})", ""]
          if roofline_image else []),
        "Roofline bound = max(FLOP per step / peak of the workload's dtype, minimal HBM bytes / HBM bandwidth "
        "per core); simulated / bound is how far the schedule is from it (1x is the roofline). Minimal HBM "
        "bytes: every compiled program of the step reads each of its inputs and writes each of its outputs "
        "once, everything else staying on chip (the bytes of the programs' input and output regions): for a "
        "matmul A + B + C; for a training step the weights (read by forward and by backward), the gradients "
        "(written), the optimizer state (read and written, when the optimizer step is compiled: the bf16 GPT's "
        "AdamW), the activations AOTAutograd saves for backward (written by forward, read by backward; what is "
        "saved follows trnc's decompositions and the partitioner), tokens, loss and logits. The demo GPT's "
        "AdamW runs eagerly on the host (as in `python -m trnc.demo`), so its step has no optimizer state on "
        "the device. HBM bytes moved: every DMA byte read from or written to HBM. Tensor ... DMA: each engine's "
        "busy time over the simulated time (DMA: the union of the transfers over the 16 queues). "
        "Instructions: the programs' instruction counts (all streams, static; every graph of the step). "
        "Neuron compile: as in the compile-time table below.",
        "",
        *(["Minimal bytes by program (forward: weights and tokens in; saved activations, loss and logits out; "
           "backward: saved activations and output gradients in, weight gradients out; inference: the optimizer "
           "step, parameters, gradients and state in, parameters and state out):", "",
           *_minimum_by_program(recs), ""] if _minimum_by_program(recs) else []),
        *(["## HBM scratch", "", "Intermediates a program keeps in HBM (between fusion groups, spills) are scratch "
           "regions; the compiler packs them by liveness into one arena per program (trnc-pack-scratch: regions "
           "never live at once share bytes), which is what the program reserves beside its inputs and outputs; "
           "\"end to end\" is the arena unpacked (each region 64-byte aligned). Programs with no scratch are not "
           "listed.", "", *_scratch_table(recs), ""] if _scratch_table(recs) else []),
        *(["## Change against an earlier run", "", baseline_note, "", *delta_lines, ""] if delta_lines else []),
        *_anchor_text(recs, anchor),
        "## Simulator wall time vs eager PyTorch on this CPU",
        "",
        *_wall_table(recs),
        "",
        "Both columns run the same step on the same inputs: eager PyTorch (CPU kernels, bf16 matmuls "
        "included) and the trnc-compiled step, whose time is the functional + timed simulation of every "
        "instruction (plus Dynamo/AOTAutograd call overhead). Medians of the timed steps after one "
        "warm-up (eager) or the first, compiling step (neuron); the neuron steps run inside "
        "trnc.profiling.capture() (profile on, per-instruction trace off). The simulator runs on one "
        "thread; eager PyTorch uses its intra-op threads (listed below), and again one thread: on this "
        "shared 2-core machine a busy peer core stalls eager's threads at every barrier (medians swing "
        "several-fold between runs), while the single-threaded columns compare the same CPU work.",
        "",
        "## Compile time: backend=\"neuron\" vs backend=\"inductor\"",
        "",
        *_compile_table(recs, inductor_ok),
        "",
        "Compile time = wall time inside the backend call Dynamo makes (AOTAutograd tracing and "
        "partitioning + compiling the forward graph, and the optimizer step's graph where it is compiled) plus, "
        "for the training steps, the backward graph's compile, which both backends run lazily at the first "
        "backward(): for neuron its own account of it (trnc.backend.neuron.stats.compile_seconds counts "
        "the backend calls and that compile), for inductor, which keeps none, the first backward() minus "
        "the median later backward(); Dynamo's own bytecode tracing is excluded for both. Every cache off (TRNC_DISABLE_CACHE=1, "
        "TORCHINDUCTOR_FX_GRAPH_CACHE=0, a fresh TORCHINDUCTOR_CACHE_DIR), Dynamo reset before each backend, "
        "so both compile from cold in a process that has already imported torch. Inductor compiles for "
        "this CPU (C++/OpenMP kernels, or extern mm calls for plain matmuls).",
        "",
        "## Machine and software",
        "",
        "| | |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in facts],
        "",
        "## Method",
        "",
        "- One process, workloads in the order above; for each: eager, then neuron, then inductor. "
        "First a warm-up compile of a different small model with each backend, so that one-time costs "
        "(imports, Inductor's C++ toolchain start-up) are charged to neither.",
        "- Repetitions: 5 steps for the smaller matmuls and the demo GPT, 9 for the MLP, 2 for the tutorial-sized "
        "matmul (each of its simulated steps executes 32,768 matmul instructions functionally on this CPU), 1 for "
        "the bf16 GPT training step; medians.",
        "- `run.py --only KEY` / `--skip KEY` measure some workloads (keys: `run.py --list`) and keep the other "
        "rows from RESULTS.json, which records each row's commit and date.",
        "- Simulated numbers come from the profiles of the timed steps (the simulator is deterministic).",
        "- The tutorial-sized matmul is also compiled for trn1 (one profiled step) to compare with the "
        "tutorial's trn1 measurements (its first, compiling step is profiled; no timing taken).",
        "- The machine is shared with other work (2 cores, often loaded by parallel builds): wall times "
        "carry that noise (tiny steps suffer most, e.g. from OpenMP threads waiting on a descheduled "
        "peer), hence the minimum beside each median; simulated times are deterministic.",
        "",
    ]
    return "\n".join(out)


def roofline_points(recs: list[dict]) -> list[tuple[str, float, float, float]]:
    """``(name, useful FLOP, HBM bytes, simulated seconds)`` of each measured trn2 workload,
    the points trnc.plot.roofline places."""
    return [(r["key"], r["flops"], r["hbm_bytes"], r["sim_ns"] * 1e-9) for r in recs
            if r.get("sim_ns") and r.get("hbm_bytes") and r.get("target", "trn2") == "trn2"]
