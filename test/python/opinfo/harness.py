"""The OpInfo conformance harness: run claimed operators' samples through trnc.

For each claimed OpInfo (claims.py), dtype and mode, a deterministic subset of
``op.sample_inputs`` (all of them with TRNC_OPINFO_FULL=1) is compiled with
``torch.compile(fn, backend="neuron", dynamic=False, fullgraph=True)`` after a
Dynamo reset, and compared with eager PyTorch:

* ``fwd``: inputs without grad, under ``torch.no_grad()`` (the inference graph);
* ``bwd``: inputs requiring grad (the training forward graph plus the backward
  graph); outputs and input gradients are compared. Only for OpInfos that
  support autograd, at floating dtypes.

Every sample yields an ``Outcome``; test_opinfo.py turns them into strict
expected-failure verdicts and report.py into docs/coverage.md.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterator, Optional

import torch
import torch._dynamo
from torch.utils import _pytree as pytree

import trnc
from claims import AREA_OF, CALLABLES, CLAIMS, FP64_ARBITRATED, RANDOM, REDUCES
import xfails

FULL = os.environ.get("TRNC_OPINFO_FULL", "0") not in ("", "0")
# Samples per (operator, dtype, mode) in the default (CI) run.
SAMPLES_PER_CASE = int(os.environ.get("TRNC_OPINFO_SAMPLES", "1"))

ALL_DTYPES = (torch.float32, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool)
# The default run: one dtype per family the backend claims.
DEFAULT_DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.bool)
MODES = ("fwd", "bwd")


def tolerance(dtype: torch.dtype, op_name: str, k: int) -> dict[str, float]:
    """The one place tolerances are defined.

    float32: near torch's defaults (rtol 1.3e-6, atol 1e-5); operators that sum
    K terms (REDUCES: reductions, matmuls, norms, losses) get atol
    4 * eps * K, because the engines accumulate sequentially while eager sums in
    blocks (see helpers.fp32_matmul_tol). rtol is 4x the default: the
    Activation Engine's transcendentals are not correctly rounded.
    bfloat16 / float16: eager rounds every intermediate to the narrow type
    while the engines keep float32 internally, so both sides differ by a few
    ulps of the narrow type: 2 ulps relative (bf16 eps 7.8e-3, fp16 9.8e-4)
    and the same absolute, scaled by sqrt(K) for REDUCES (rounding errors of K
    terms add like a random walk). Integers and bool: exact.
    """
    if not dtype.is_floating_point:
        return {"rtol": 0.0, "atol": 0.0}
    k = max(k, 1) if op_name in REDUCES else 1
    if dtype == torch.float32:
        return {"rtol": 4 * 1.3e-6, "atol": max(1e-5, 4 * torch.finfo(torch.float32).eps * k)}
    eps = torch.finfo(dtype).eps
    scale = max(1.0, k**0.5 / 2)
    return {"rtol": 2 * eps * scale, "atol": 2 * eps * scale}


@dataclass
class Outcome:
    """What one sample did. ``status``: pass, fail or skip (eager itself failed,
    or nothing to differentiate). ``kind`` classifies failures: unsupported
    (importer refused an operator), dtype, mismatch (numbers differ), error."""

    op: str
    area: str
    dtype: str
    mode: str
    sample: int
    status: str
    kind: str = ""
    reason: str = ""
    expected: str = ""  # an XFAIL_SAMPLES reason: this sample is expected to fail

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def full_name(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


@functools.lru_cache(maxsize=None)
def claimed_opinfos() -> dict[str, Any]:
    """full name -> OpInfo for every claim; a claim without an OpInfo is an error."""
    from torch.testing._internal.common_methods_invocations import op_db

    by_name = {full_name(op): op for op in op_db}
    missing = [name for name in AREA_OF if name not in by_name]
    if missing:
        raise LookupError(f"claims.py names OpInfos that op_db lacks: {missing}")
    return {name: by_name[name] for names in CLAIMS.values() for name in names}


def dtypes_for(op: Any) -> list[torch.dtype]:
    supported = op.supported_dtypes("cpu")
    return [d for d in (ALL_DTYPES if FULL else DEFAULT_DTYPES) if d in supported]


def modes_for(op: Any, dtype: torch.dtype) -> list[str]:
    differentiable = op.supports_autograd and dtype.is_floating_point and full_name(op) not in RANDOM
    return ["fwd", "bwd"] if differentiable else ["fwd"]


def cases() -> Iterator[tuple[str, torch.dtype, str]]:
    """Every (operator, dtype, mode) the run covers, in a stable order."""
    for name, op in claimed_opinfos().items():
        for dtype in dtypes_for(op):
            for mode in modes_for(op, dtype):
                yield name, dtype, mode


def _rank(name: str, dtype: torch.dtype, mode: str, index: int) -> str:
    return hashlib.sha256(f"{name}|{dtype}|{mode}|{index}".encode()).hexdigest()


def samples(name: str, dtype: torch.dtype, mode: str) -> list[tuple[int, Any]]:
    """(index, SampleInput) pairs: all of them in a full run, else the
    SAMPLES_PER_CASE with the smallest seeded hash (stable across runs)."""
    op = claimed_opinfos()[name]
    torch.manual_seed(0)
    everything = list(enumerate(op.sample_inputs("cpu", dtype, requires_grad=(mode == "bwd"))))
    if FULL:
        return everything
    chosen = sorted(everything, key=lambda pair: _rank(name, dtype, mode, pair[0]))[:SAMPLES_PER_CASE]
    return sorted(chosen, key=lambda pair: pair[0])


def _contraction_length(sample: Any, result: Any) -> int:
    tensors = [t for t in pytree.tree_leaves((sample.input, sample.args, sample.kwargs)) if isinstance(t, torch.Tensor)]
    outs = [t for t in pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
    biggest_in = max((t.numel() for t in tensors), default=1)
    smallest_out = max(min((t.numel() for t in outs), default=1), 1)
    longest_dim = max((max(t.shape, default=1) for t in tensors), default=1)
    return max(biggest_in // smallest_out, longest_dim)


_GRAPH_NAME = re.compile(r"'(inference|forward|backward)_\d+'")


def _first_line(text: str, limit: int = 160) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    line = _GRAPH_NAME.sub(r"'\1'", line)  # stable reasons: no graph numbers
    return line if len(line) <= limit else line[: limit - 3] + "..."


def classify(exc: BaseException) -> tuple[str, str]:
    """(kind, reason) for a failure; unsupported operators name the first one."""
    inner = getattr(exc, "inner_exception", None) or exc
    if isinstance(inner, trnc.UnsupportedOperatorError):
        return "unsupported", f"not lowered yet: {inner.operators[0].target}"
    if isinstance(inner, trnc.CompileError) and inner.error_kind == "unsupported_dtype":
        found = sorted(set(re.findall(r": (\w+)(?: at |$)", inner.compiler_message, re.M)))
        return "dtype", "unsupported dtype: " + (", ".join(found) or _first_line(inner.compiler_message))
    if isinstance(inner, trnc.CompileError):
        lines = inner.compiler_message.splitlines()
        line = next((s for s in lines if "error:" in s), lines[0] if lines else "")
        return "error", f"compile error: {_first_line(line)}"
    if isinstance(inner, AssertionError):
        text = str(inner)
        detail = next((s.strip() for s in text.splitlines() if s.strip().startswith(("Mismatched", "Greatest"))), "")
        return "mismatch", _first_line(f"mismatch: {_first_line(text, 60)} {detail}")
    return "error", f"{type(inner).__name__}: {_first_line(str(inner))}"


def _trnc_graphs() -> int:
    """Graphs trnc compiled in this process, or loaded from AOTAutograd's cache
    (aot_cache.py: a sample with the metadata of an earlier one of its case
    hits it, and the backend is not called again)."""
    return sum(trnc.neuron.stats.ran().values())


def _compiled(fn: Any) -> Any:
    torch._dynamo.reset()  # one fresh cache per sample: graphs do not pile up
    return torch.compile(fn, backend=trnc.neuron, dynamic=False, fullgraph=True)


def _check_random(name: str, sample: Any, actual: Any, expected: Any) -> None:
    for a, e in zip(pytree.tree_leaves(actual), pytree.tree_leaves(expected)):
        if isinstance(e, torch.Tensor):
            assert a.shape == e.shape and a.dtype == e.dtype, f"random op: {a.dtype}{list(a.shape)} != {e.dtype}{list(e.shape)}"
    if name == "nn.functional.dropout":
        _check_dropout(sample, actual)


def _check_dropout(sample: Any, actual: torch.Tensor) -> None:
    """trnc's RNG is not eager's (test_dropout.py checks masks and gradients), so
    by property: each element is 0 (dropped) or x / (1 - p); x itself when not
    training or p = 0."""
    x, args, kwargs = sample.input, sample.args, sample.kwargs
    p = float(kwargs.get("p", args[0] if args else 0.5))
    training = kwargs.get("training", args[1] if len(args) > 1 else True)
    if not training or p == 0.0:
        expected = x
    else:
        scaled = x * 0.0 if p == 1.0 else x / (1.0 - p)
        expected = torch.where(actual == 0, torch.zeros((), dtype=x.dtype), scaled)
    torch.testing.assert_close(actual, expected, equal_nan=True, **tolerance(x.dtype, "nn.functional.dropout", 1))


def _is_random(name: str, sample: Any) -> bool:
    return name in RANDOM or float(sample.kwargs.get("dropout_p", 0.0) or 0.0) > 0.0


def _result_dtype(result: Any, fallback: torch.dtype) -> torch.dtype:
    """The dtype tolerances follow: the result's, so an int or bool input with a
    float result (exp of int64) is compared as a float, not exactly."""
    for leaf in pytree.tree_leaves(result):
        if isinstance(leaf, torch.Tensor):
            return leaf.dtype
    return fallback


def _run_fwd(name: str, fn: Any, sample: Any, dtype: torch.dtype) -> None:
    args, kwargs = (sample.input, *sample.args), sample.kwargs
    with torch.no_grad():
        expected = fn(*args, **kwargs)
        before = _trnc_graphs()
        actual = _compiled(fn)(*args, **kwargs)
    if _trnc_graphs() == before:
        raise AssertionError("nothing was compiled by trnc (the graph ran eagerly)")
    if _is_random(name, sample):
        return _check_random(name, sample, actual, expected)
    tol = tolerance(_result_dtype(expected, dtype), name, _contraction_length(sample, expected))
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, **tol)
    except AssertionError:
        if name not in FP64_ARBITRATED:
            raise
        with torch.no_grad():
            reference = fn(*pytree.tree_map(_widen, args), **pytree.tree_map(_widen, kwargs))
        _no_less_accurate(actual, expected, reference, tol)


def _run_bwd(name: str, fn: Any, sample: Any, dtype: torch.dtype) -> bool:
    """Forward + backward; False when the sample has nothing to differentiate."""
    args, kwargs = (sample.input, *sample.args), sample.kwargs
    leaves = [t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.requires_grad]

    def run(f: Any, wide: bool = False) -> tuple[Any, Any]:
        # wide: the float64 reference, from the same (sample-dtype) values.
        a, kw, xs = args, kwargs, leaves
        if wide:
            a, kw = pytree.tree_map(_widen, (args, kwargs))
            xs = [t for t in pytree.tree_leaves((a, kw)) if isinstance(t, torch.Tensor) and t.requires_grad]
        out = sample.output_process_fn_grad(f(*a, **kw))
        outs = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]
        if not xs or not outs:
            return out, None
        gen = torch.Generator().manual_seed(1)
        grads_out = [torch.randn(t.shape, generator=gen).to(dtype if wide else t.dtype).to(t.dtype) for t in outs]
        return out, torch.autograd.grad(outs, xs, grads_out, allow_unused=True)

    if _is_random(name, sample):
        return False
    expected, expected_grads = run(fn)
    if expected_grads is None:
        return False
    actual, actual_grads = run(_compiled(fn))
    tol = tolerance(dtype, name, _contraction_length(sample, expected))
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True, **tol)
        torch.testing.assert_close(actual_grads, expected_grads, equal_nan=True, **tol)
    except AssertionError:
        if name not in FP64_ARBITRATED:
            raise
        _no_less_accurate((actual, actual_grads), (expected, expected_grads), run(fn, wide=True), tol)
    return True


def _widen(x: Any) -> Any:
    if not isinstance(x, torch.Tensor) or not x.dtype.is_floating_point:
        return x
    return x.detach().double().requires_grad_(x.requires_grad)


def _no_less_accurate(actual: Any, expected: Any, reference: Any, tol: dict[str, float]) -> None:
    """FP64_ARBITRATED operators, Inductor's fp64_ref rule (torch._dynamo.utils.same):
    each tensor of ``actual`` has an RMS error against the float64 ``reference``
    of at most ``m`` times eager's (``expected``) plus atol; m = 2 for float32
    and 3 for 16-bit results (eager's rounding of each intermediate dominates),
    NaNs where the reference or eager has them."""
    for a, e, r in zip(*(pytree.tree_leaves(x) for x in (actual, expected, reference))):
        if not isinstance(e, torch.Tensor):
            continue
        assert isinstance(a, torch.Tensor) and a.shape == e.shape, f"shape {getattr(a, 'shape', a)} != {e.shape}"
        m = 2.0 if e.dtype == torch.float32 else 3.0
        nan = r.isnan() | e.isnan()
        assert torch.equal(a.isnan(), nan), f"Mismatched NaNs: {int((a.isnan() != nan).sum())} elements"
        a, e, r = (t.detach().double()[~nan] for t in (a, e, r))
        ours, eagers = ((t - r).square().mean().sqrt().item() if t.numel() else 0.0 for t in (a, e))
        if ours > m * eagers + tol["atol"]:
            raise AssertionError(
                "Tensor-likes are not close (vs float64, as eager is)!\n"
                f"Greatest RMS error vs float64: {ours:.3g} > {m} x eager's {eagers:.3g} + atol {tol['atol']:.3g}"
            )


def run_case(name: str, dtype: torch.dtype, mode: str) -> list[Outcome]:
    """Run the selected samples of one (operator, dtype, mode)."""
    op = claimed_opinfos()[name]
    fn = CALLABLES.get(name, op.op)
    area, dtype_name = AREA_OF[name], str(dtype).removeprefix("torch.")
    outcomes = []
    for index, sample in samples(name, dtype, mode):
        result = Outcome(name, area, dtype_name, mode, index, "pass")
        result.expected = xfails.sample_reason(op.name, op.variant_test_name, dtype_name, mode, sample, index) or ""
        try:
            # Eager must accept the sample; a sample eager rejects is skipped.
            try:
                with torch.no_grad():
                    fn(sample.input, *sample.args, **sample.kwargs)
            except Exception as exc:  # noqa: BLE001
                result.status, result.reason = "skip", f"eager fails: {_first_line(str(exc))}"
            else:
                if mode == "fwd":
                    _run_fwd(name, fn, sample, dtype)
                elif not _run_bwd(name, fn, sample, dtype):
                    result.status, result.reason = "skip", "random or no differentiable output"
        except Exception as exc:  # noqa: BLE001 (every failure is an outcome)
            result.status = "fail"
            result.kind, result.reason = classify(exc)
        outcomes.append(result)
    return outcomes


# Every outcome of this process, for report.py (conftest writes them out).
RESULTS: list[Outcome] = []


def first_failure(outcomes: list[Outcome]) -> Optional[Outcome]:
    return next((o for o in outcomes if o.status == "fail"), None)
