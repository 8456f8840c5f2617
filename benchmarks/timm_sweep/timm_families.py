"""The smallest variant of every timm architecture family (issue 13's sweep).

    python3 benchmarks/timm_sweep/timm_families.py [--size 64] [--cap 35000000]

A family is a ``timm.models`` module (``timm.list_modules()``: resnet,
vision_transformer, efficientnet, ...), its variants the models it registers
(``timm.list_models(module=...)``). Each variant is built on the meta device
(no memory, no initialisation: ~0.4 s each, ~8 min CPU for timm 1.0.31's
1,371 models) to count its parameters. The family's pick is its smallest
variant that (a) has at most ``cap`` parameters and (b) runs a forward pass
at size x size, batch 2, on the meta device (shapes only; a model whose
pretrained config fixes its input size is built for size x size, as
vision_worker.create_timm does). A family is skipped, with the reason, when
its smallest variant is above the cap or none of its MAX_TRIES smallest
variants runs at that size.

The selection is written to timm_families.json (with timm's version, the
size and the cap); sweep.py --families reads it and recomputes it only when
one of those differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Parameters of the largest smallest-variant the sweep runs: the simulator
# holds the step's weights, gradients and activations in its memory image,
# and the goal is a compile under 20 s and 2 GB. 35M admits every
# family whose smallest variant is a "tiny"/"small" model (Swin-T, ConvNeXt-T,
# DaViT-T: 28M) and leaves out the base-size-only families (86M ViT-B
# derivatives, VGG's 133M).
PARAM_CAP = 35_000_000
# Variants tried per family, smallest first, for one that runs at the size.
MAX_TRIES = 4
PATH = os.path.join(HERE, "timm_families.json")


def _count(name: str) -> int | str:
    import vision_worker

    try:
        with torch.device("meta"):
            model = vision_worker.create_timm(name)
        return sum(p.numel() for p in model.parameters())
    except Exception as exc:  # noqa: BLE001  (a variant that does not build is not a candidate)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"


def _runs_at(name: str, size: int) -> str:
    """"" when name's forward runs at size x size (on the meta device), else why not."""
    import vision_worker

    try:
        with torch.device("meta"):
            model = vision_worker.create_timm(name, size)
            model(torch.empty(2, 3, size, size))
        return ""
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"


def select(size: int, cap: int = PARAM_CAP, log=print) -> dict:
    import tv_shim

    tv_shim.import_torchvision()
    import timm

    warnings.filterwarnings("ignore")
    families = {}
    for module in sorted(timm.list_modules()):
        counts = {n: _count(n) for n in timm.list_models(module=module)}
        sized = sorted((c, n) for n, c in counts.items() if isinstance(c, int))
        entry: dict = {"variants": len(counts)}
        if not sized:
            entry["skipped"] = "no variant builds: " + next(iter(counts.values()), "")
        elif sized[0][0] > cap:
            entry.update(smallest=sized[0][1], params=sized[0][0],
                         skipped=f"smallest variant has {sized[0][0] / 1e6:.1f}M parameters (cap {cap / 1e6:.0f}M)")
        else:
            tried = []
            for params, name in [v for v in sized if v[0] <= cap][:MAX_TRIES]:
                why = _runs_at(name, size)
                if not why:
                    entry.update(model=name, params=params)
                    break
                tried.append(f"{name}: {why}")
            if tried:
                entry["smaller_variants_failing"] = tried
            if "model" not in entry:
                entry.update(smallest=sized[0][1], params=sized[0][0],
                             skipped=f"does not run at {size}x{size}: {tried[0]}")
        families[module.removeprefix("timm.models.")] = entry
        log(module, entry.get("model") or entry["skipped"])
    return {"timm": timm.__version__, "size": size, "cap": cap, "families": families}


def load(size: int, cap: int = PARAM_CAP, path: str = PATH) -> dict:
    """The selection for this timm, size and cap: the file's, else computed and saved."""
    import tv_shim

    tv_shim.import_torchvision()
    import timm

    if os.path.exists(path):
        saved = json.load(open(path))
        if (saved.get("timm"), saved.get("size"), saved.get("cap")) == (timm.__version__, size, cap):
            return saved
    selection = select(size, cap)
    with open(path, "w") as f:
        json.dump(selection, f, indent=1, sort_keys=True)
    return selection


def picked(selection: dict) -> list[str]:
    """The selected models, as sweep specs, smallest first."""
    fams = selection["families"].values()
    return [f"timm:{e['model']}" for e in sorted((e for e in fams if "model" in e), key=lambda e: e["params"])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--cap", type=int, default=PARAM_CAP)
    ap.add_argument("--out", default=PATH)
    args = ap.parse_args()
    selection = select(args.size, args.cap)
    with open(args.out, "w") as f:
        json.dump(selection, f, indent=1, sort_keys=True)
    fams = selection["families"]
    print(f"{len(picked(selection))} of {len(fams)} families selected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
