"""The sweep's section of benchmarks/RESULTS.md: summary, failures grouped by cause, table.

The section sits between BEGIN and END markers; the rest of RESULTS.md (the other
benchmarks' sections) is kept as it is. A missing section is appended.
"""

from __future__ import annotations

import collections
import datetime
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/

BEGIN = "<!-- hf-sweep:begin (benchmarks/hf_sweep/sweep.py writes this section) -->"
END = "<!-- hf-sweep:end -->"


def passed(r: dict) -> bool:
    return bool(r.get("forward_ok") and r.get("backward_ok"))


def cause(r: dict) -> str:
    """The grouping key of a failure: first unsupported operator, else the error kind."""
    if r.get("skipped"):
        return "skipped: " + r["skipped"]
    err = r.get("error") or {}
    if err.get("stage") in ("build", "eager", "start") and err.get("kind") not in ("timeout", "crash"):
        return f"sweep: tiny config rejected in eager ({err.get('kind')})"
    if err.get("kind") == "unsupported operator":
        return f"unsupported operator `{err.get('operator')}`"
    if err:
        return err.get("kind", "error")
    if not r.get("forward_ok"):
        return "forward differs from eager"
    return "backward differs from eager"


def _fmt_err(x) -> str:
    if x is None:
        return ""
    x = float(x)
    return "inf" if x == float("inf") else f"{x:.1e}"


def _detail(r: dict) -> str:
    err = r.get("error") or {}
    if not err:
        return "" if passed(r) else cause(r)
    text = err.get("operator") or err.get("message", "")
    if err.get("stage"):
        text = f"{err['stage']}: {text}"
    return text.replace("|", "\\|").replace("\n", " ")[:160]


def _mark(ok, ran: bool) -> str:
    return "yes" if ok else ("no" if ran else "-")


def render(records: list[dict], meta: dict) -> tuple[str, str]:
    """(markdown section, one-line summary)."""
    total = len(records)
    skipped = [r for r in records if r.get("skipped")]
    npass = sum(passed(r) for r in records)
    nfwd = sum(bool(r.get("forward_ok")) for r in records)
    considered = total - len(skipped)
    summary = (f"HF causal-LM sweep: {npass} / {considered} architectures pass forward and backward "
               f"({nfwd} pass forward; {len(skipped)} skipped; {total} in transformers' causal-LM mapping)")
    groups = collections.defaultdict(list)
    for r in records:
        if not passed(r) and not r.get("skipped"):
            groups[cause(r)].append(r["arch"])
    everywhere = collections.Counter(op for r in records for op in r.get("unsupported_all", []))
    import machine  # benchmarks/machine.py (imports torch and trnc)

    commit = machine.commit()
    import torch
    import transformers

    lines = [
        BEGIN,
        "## Hugging Face causal-LM architectures (issue 5)",
        "",
        f"**{summary}.**",
        "",
        f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC at commit {commit}: "
        f"transformers {transformers.__version__}, torch {torch.__version__}, Python {platform.python_version()}; "
        f"{meta.get('seconds', 0):.0f} s wall for {meta.get('archs_run', total)} architectures, "
        f"{meta.get('jobs', 1)} worker(s), {meta.get('timeout', 0):.0f} s timeout each. "
        "Command: `python3 benchmarks/hf_sweep/sweep.py` (records: `benchmarks/RESULTS-hf.json`)."
        + (f" Then {len(meta['update']['archs'])} architectures re-run at commit {commit} "
           f"(`sweep.py ARCH...`, {meta['update']['seconds']:.0f} s wall, {meta['update']['jobs']} worker(s)); "
           "their records replace the earlier ones." if meta.get("update") else ""),
        "",
        "Method: each architecture's config class with tiny sizes (hidden 64, 2 layers, 4 heads, 2 KV heads, "
        "vocab 256, sequence 16, batch 2; dropout 0), seeded random weights, float32, transformers' default "
        "attention (SDPA where supported) and MoE experts (grouped_mm), `HF_HUB_OFFLINE=1`. "
        "\"sweep: tiny config rejected\" means eager itself failed on the shrunk config (a gap in "
        "benchmarks/hf_sweep/tiny.py, not in trnc). Generic shrinking rules keep derived sizes consistent "
        "(per-layer kind lists resized to the layer count, MoE and SSM group sizes, sub-configs); the few "
        "per-architecture exceptions are tiny.py's QUIRKS, POST_CONFIG, labels_for and extra_inputs. "
        "Forward: `model.eval()` under `torch.no_grad()`, logits vs eager. Backward: "
        "`model.train()`, loss with `labels=input_ids`, `loss.backward()`, the loss and every parameter's "
        "gradient vs eager. Both through `torch.compile(model, backend=\"neuron\", dynamic=False)`; ok means "
        "it ran and matched eager within rtol = atol = 1e-4 (worker.py's TOLERANCE: the few architectures "
        "whose fp32 rounding alone, measured against float64, is larger). Compile time is trnc's (AOTAutograd + export + "
        "compiler; cold, caches off), in seconds. Graph breaks: Dynamo's `graph_break` counter.",
        "",
        "### Failures grouped by cause",
        "",
        "| cause (first unsupported operator or error) | architectures | count |",
        "|---|---|---|",
    ]
    for key, archs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"| {key.replace('|', '/')} | {', '.join(archs)} | {len(archs)} |")
    if everywhere:
        lines += ["", "Operators that would not lower anywhere in the failing architectures' forward and "
                  "backward graphs (`trnc.check_support`), by the number of architectures using them: "
                  + ", ".join(f"`{op}` ({n})" for op, n in everywhere.most_common()) + "."]
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"{r['arch']} ({r['skipped']})" for r in skipped) + "."]
    lines += [
        "",
        "### Per architecture",
        "",
        "| architecture | class | forward | backward | logits max abs err | grad max abs err | "
        "compile s (fwd / train) | graph breaks | first unsupported operator or error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        ran_fwd = "logits_max_abs_err" in r
        ran_bwd = "grad_max_abs_err" in r
        compile_s = " / ".join(str(r[k]) for k in ("forward_compile_s", "train_compile_s") if k in r)
        lines.append(
            f"| {r['arch']} | {r.get('model_class', '')} | {_mark(r.get('forward_ok'), ran_fwd)} | "
            f"{_mark(r.get('backward_ok'), ran_bwd)} | {_fmt_err(r.get('logits_max_abs_err'))} | "
            f"{_fmt_err(r.get('grad_max_abs_err'))} | {compile_s} | {r.get('graph_breaks', '')} | {_detail(r)} |"
        )
    lines.append(END)
    return "\n".join(lines) + "\n", summary


def write_results(records: list[dict], meta: dict, path) -> str:
    """Replace (or append) the HF section of RESULTS.md at `path`; returns the summary line."""
    section, summary = render(records, meta)
    if path is None:
        return summary
    text = open(path).read() if os.path.exists(path) else "# trnc benchmark results\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
    return summary
