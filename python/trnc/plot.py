"""Pictures of simulated runs: an engine timeline and a roofline (PNG, SVG, PDF).

matplotlib is optional (``pip install trnc[plot]``, or scripts/setup.sh); without
it both functions raise a ``TrncError`` that names the package.

- ``timeline(profile, path)``: one row per engine and per DMA queue, one bar per
  instruction, from a profile recorded with ``trace=True`` (a ``GraphProfile``,
  a ``trnc._C.Profile`` or a whole ``Capture``, whose runs are laid end to end).
  ``GraphProfile.plot(path)`` and ``Capture.plot(path)`` call it.
- ``roofline(points, target, path)``: each point is ``(name, flop, bytes, seconds)``
  for one graph run or workload, placed by arithmetic intensity (FLOP/byte) and
  achieved FLOP/s under ``target``'s compute ceiling (Tensor Engine peak) and
  bandwidth ceiling (HBM bytes/s per core); ``target`` is a name ("trn2").

Every number drawn is a simulated estimate (docs/profiling.md), not a measurement.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from .errors import TrncError

__all__ = ["timeline", "roofline", "roofline_points"]

# Bar colours by the trace's category (the engine of the instruction).
_COLOURS = {"tensor": "#1f77b4", "vector": "#ff7f0e", "scalar": "#2ca02c", "gpsimd": "#9467bd", "dma": "#8c564b"}
_LANE = re.compile(r" \(lane \d+\)$")


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:
        raise TrncError(
            "trnc.plot needs matplotlib, which is not installed: pip install matplotlib "
            "(or pip install 'trnc[plot]')"
        ) from exc
    matplotlib.use("Agg", force=False)  # files only; never opens a window
    import matplotlib.pyplot as plt

    return plt


def _trace_events(profile: Any) -> list[dict]:
    if not hasattr(profile, "trace_json"):
        raise TrncError(f"trnc.plot.timeline needs a profile (GraphProfile, Capture), got {type(profile).__name__}")
    return json.loads(profile.trace_json())["traceEvents"]


def _rows(events: list[dict]) -> tuple[list[str], dict[str, list[dict]]]:
    """Row labels (engines first, then DMA queues, as in the trace) and each row's slices.
    The trace splits overlapping slices of one queue into lanes; a row merges them."""
    names: dict[tuple, str] = {}
    order: dict[tuple, int] = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = _LANE.sub("", e["args"]["name"])
            order.setdefault(names[(e["pid"], e["tid"])], e["tid"])
    rows: dict[str, list[dict]] = {}
    for e in events:
        if e.get("ph") == "X":
            label = names.get((e["pid"], e["tid"]), f"track {e['tid']}")
            rows.setdefault(label, []).append(e)
    labels = sorted(set(rows) | {n for n in order if "engine" in n}, key=lambda n: order.get(n, 1 << 30))
    return labels, rows


def timeline(profile: Any, path: str, title: str | None = None) -> str:
    """Draw the engine and DMA-queue timeline of `profile` into `path`; returns `path`."""
    events = _trace_events(profile)
    labels, rows = _rows(events)
    if not rows:
        raise TrncError(
            "this profile has no per-instruction trace to draw: record it with "
            "trnc.profiling.capture(trace=True) (or trnc profile --plot)"
        )
    plt = _pyplot()
    end_us = max(e["ts"] + e["dur"] for r in rows.values() for e in r)
    fig, ax = plt.subplots(figsize=(12, 0.32 * len(labels) + 1.6))
    for y, label in enumerate(labels):
        slices = rows.get(label, [])
        for cat in sorted({e.get("cat", "") for e in slices}):
            bars = [(e["ts"], max(e["dur"], end_us * 1e-4)) for e in slices if e.get("cat", "") == cat]
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=_COLOURS.get(cat, "#7f7f7f"), linewidth=0)
        busy = sum(e["dur"] for e in slices)
        ax.text(end_us * 1.005, y, f"{100 * busy / end_us:.0f}%", va="center", fontsize=7)
    offset = 0.0
    for run in getattr(profile, "graphs", None) or []:  # a Capture: where each run starts
        ax.axvline(offset, color="black", linewidth=0.8, alpha=0.6)
        ax.text(offset, -0.6, f" {run.graph}", fontsize=8, va="bottom")
        offset += run.total_ns / 1e3
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -1.2)
    ax.set_xlim(0, end_us * 1.05)
    ax.set_xlabel("simulated time (us)")
    ax.set_title(title or f"{_title_of(profile)}: simulated NeuronCore timeline ({end_us:.1f} us)", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _title_of(profile: Any) -> str:
    graph = getattr(profile, "graph", None) or getattr(profile, "program", None)
    if graph:
        return str(graph)
    runs = getattr(profile, "graphs", None)
    return f"{len(runs)} graph runs" if runs is not None else "trnc profile"


def roofline_points(capture: Any) -> list[tuple[str, float, float, float]]:
    """``(name, flop, bytes, seconds)`` of each graph run of a capture (or one
    GraphProfile): Tensor Engine FLOPs, HBM bytes and simulated time."""
    runs = getattr(capture, "graphs", None) or [capture]
    points = []
    for g in runs:
        d = g.profile.to_dict()
        points.append((f"{g.graph} call {g.call}", d["tensor_flops"], d["hbm_bytes"], d["total_ns"] * 1e-9))
    return points


def roofline(points: Iterable[Sequence], target: str, path: str, title: str | None = None) -> str:
    """Draw a roofline of `points` (each ``(name, flop, bytes, seconds)``) under the
    ceilings of `target` ("trn1", "trn2", ...) into `path`; returns `path`.
    A point with no bytes or no time cannot be placed and is an error."""
    from ._native import native

    try:
        ceilings = native().target_ceilings(target)
    except ValueError as exc:
        raise TrncError(f"trnc.plot.roofline: {exc}") from exc
    peak_flops, peak_bw = ceilings["peak_flops_per_second"], ceilings["peak_hbm_bytes_per_second"]
    placed = []
    for point in points:
        if len(point) != 4:
            raise TrncError(f"trnc.plot.roofline: a point is (name, flop, bytes, seconds), got {point!r}")
        name, flop, nbytes, seconds = point
        if not (nbytes > 0 and seconds > 0 and flop >= 0):
            raise TrncError(f"trnc.plot.roofline: point {name!r} needs bytes > 0, seconds > 0 and flop >= 0")
        placed.append((str(name), flop / nbytes, flop / seconds))
    if not placed:
        raise TrncError("trnc.plot.roofline: no points to draw")
    plt = _pyplot()
    ridge = peak_flops / peak_bw  # FLOP/byte where the ceilings meet
    lo = min([p[1] for p in placed] + [ridge]) / 10
    hi = max([p[1] for p in placed] + [ridge]) * 10
    fig, ax = plt.subplots(figsize=(7.5, 5))
    xs = [lo, ridge, hi]
    ax.plot(xs, [min(peak_flops, x * peak_bw) for x in xs], color="black", linewidth=1.5,
            label=f"{target}: {peak_flops / 1e12:.1f} TFLOP/s, {peak_bw / 1e9:.0f} GB/s per core")
    for name, intensity, achieved in placed:
        ax.scatter([intensity], [achieved], s=25, zorder=3)
        ax.annotate(name, (intensity, achieved), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / HBM byte)")
    ax.set_ylabel("achieved FLOP/s (simulated)")
    ax.set_title(title or f"roofline on {target} (simulated estimates)", fontsize=10)
    ax.grid(which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
