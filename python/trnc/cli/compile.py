"""``trnc compile``: compile a model ahead of time into the cache (and optionally a directory).

``trnc compile MODULE:FACTORY --input "bf16[8,128]" [--train]`` traces the
model exactly as ``torch.compile(model, backend="neuron", dynamic=False)``
would, so that a later real run with the same shapes hits the cache for
every graph; ``trnc compile model.pt2`` does the same for a saved
``torch.export`` program. The logic lives in trnc/aot.py. Exit code 1 when a
graph fails or when nothing could be stored (cache disabled or unwritable, and
no ``-o DIR``): the command would have had no effect.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import TrncError
from ..options import DEFAULT_TARGET, CompilerOptions
from . import UsageError

EPILOG = """examples:
  trnc compile mypkg.models:make_mlp --input "f32[8,128]"
  trnc compile models.py:make_mlp --input "bf16[8,128]" --train -o out/
  trnc compile model.pt2 -o out/

Without --train the model runs in eval mode under torch.no_grad() (inference
graph); with --train it runs in train mode and backward() of the sum of its
outputs compiles the backward graph too. A later torch.compile(model,
backend="neuron", dynamic=False) run with the same shapes, dtypes, mode and
options hits the cache for every graph."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compile",
        help="compile a model (MODULE:FACTORY or a .pt2 file) ahead of time into the cache",
        description="Compile every graph of a model ahead of time into the artifact cache.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", metavar="MODULE:FACTORY|FILE.pt2",
                   help="a factory returning an nn.Module (pkg.mod:fn or path/file.py:fn), or a torch.export .pt2 file")
    p.add_argument("--input", "-i", action="append", default=[], metavar="DTYPE[SHAPE]",
                   help='one model input, e.g. "bf16[8,128]"; repeat in argument order (dtypes: f32 bf16 f16 f64 i64 i32 i16 i8 u8 bool)')
    p.add_argument("--train", action="store_true", help="also compile the backward graph (train mode, loss = sum of outputs)")
    p.add_argument("--target", default=DEFAULT_TARGET, help=f"NeuronCore target (default {DEFAULT_TARGET}; see `trnc targets`)")
    p.add_argument("-o", "--output", metavar="DIR", help="also write each artifact as DIR/<key>.trnc plus DIR/manifest.json")
    p.set_defaults(func=run)


def _stored(results: list, options: dict) -> int:
    """How many of the compiled graphs' artifacts are now in the cache."""
    from .. import aot

    cache = aot._cache_module()
    if cache is None or not cache.enabled(options):
        return 0
    keys = {e.key for e in cache.entries(cache.cache_dir(options))}
    return sum(r.status != "failed" and r.key in keys for r in results)


def run(args: argparse.Namespace) -> int:
    from .. import aot

    try:
        CompilerOptions(target=args.target)  # validate before tracing
        for spec in args.input:
            aot.parse_input_spec(spec)
    except TrncError as exc:
        raise UsageError(str(exc)) from None
    options = {"target": args.target}
    if args.model.endswith(".pt2"):
        if args.input or args.train:
            print("trnc: note: --input/--train are ignored for a .pt2 program (its example inputs are used, inference only)",
                  file=sys.stderr)
        graphs = aot.collect_pt2(args.model, options)
    else:
        graphs = aot.collect_module(args.model, args.input, args.train, options)
    if not graphs:
        raise TrncError(f"{args.model} produced no graph to compile (nothing in its forward for torch.compile?)")
    print(aot.cache_line(graphs))
    results = aot.compile_all(graphs, keep_artifacts=bool(args.output))
    for r in results:
        detail = f"{r.seconds:.2f}s" if r.status != "failed" else "see below"
        print(f"{r.name}: {r.status} ({detail}) key {r.key[:16]}")
    if args.output:
        print(f"wrote {aot.write_output_dir(args.output, results, args.model)}")
    print(aot.summary_line(results))
    for line in aot.failure_lines(results):
        print(line, file=sys.stderr)
    if any(r.status == "failed" for r in results):
        return 1
    if not args.output and _stored(results, options) == 0:
        reason = aot.cache_line(graphs).removeprefix("cache: ")
        print(f"trnc: error: no artifact was stored ({reason}); enable the cache or pass -o DIR",
              file=sys.stderr)
        return 1
    return 0
