"""trnc decomposition rule for integer ``linspace`` (docs/decompositions.md,
"Indexing, data movement and tensor creation").

PyTorch's CPU kernel (RangeFactoriesKernel.cpp) truncates start and end to
the integer dtype, takes step = (end - start) / (steps - 1) in double and
steps from both ends: element i is trunc(start + step * i) below steps // 2,
else trunc(end - step * (steps - 1 - i)), each a single rounding (the
multiply-add is contracted to an FMA). The core rule steps in float32 and
misses elements that land near an integer.

Here the exact value is the rational M / N with M = start * N + D * i,
N = steps - 1, D = end - start; truncating it gives eager's result except at
the points where M / N is an integer k and eager's double rounding lands just
toward zero of k (giving k - sign(k)). Those points are known at trace time
(the arguments are constants): the host replays eager's arithmetic exactly
(``fractions``) on the integer points only and marks the runs of points that
move. On the device: an iota, ``2M - u(i)`` in float32 (u = sign(k) on the
marked runs, else 0: half a step toward zero, which moves only the integer
points) divided by 2N and truncated by the cast. Exact while |2M| < 2**23
(the quotient's rounding stays under 1 / 4N); larger ranges are refused
(reported unsupported) rather than approximated.
"""

from __future__ import annotations

import math
from fractions import Fraction

import torch
from torch._decomp import core_aten_decompositions

__all__ = ["rules"]

aten = torch.ops.aten
_EXACT_LIMIT = 2**23


def _eager_moves(s: int, e: int, steps: int) -> list[tuple[int, int, int]]:
    """Runs (first i, last i, sign of k) of integer points where eager's double
    arithmetic truncates to k - sign(k) instead of the exact k."""
    n, d = steps - 1, e - s
    step = Fraction((float(e) - float(s)) / n)  # the double step, exactly
    stride = n // math.gcd(d, n)  # M / N is an integer exactly at i = j * stride
    runs: list[tuple[int, int, int]] = []
    for i in range(0, steps, stride):
        k = (s * n + d * i) // n
        v = Fraction(s) + step * i if i < steps // 2 else Fraction(e) - step * (n - i)
        if k == 0 or int(float(v)) == k:  # float(Fraction) rounds once, as the FMA
            continue
        sign = 1 if k > 0 else -1
        if runs and runs[-1][2] == sign and runs[-1][1] == i - stride:
            runs[-1] = (runs[-1][0], i, sign)
        else:
            runs.append((i, i, sign))
    return runs


def _linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or torch.get_default_dtype()
    scalars = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end))
    if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool or not scalars or steps < 2:
        return core_aten_decompositions()[aten.linspace.default](
            start, end, steps, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory)
    s, e, n = int(start), int(end), steps - 1  # Scalar::to<int> truncates
    if 2 * n * max(abs(s), abs(e)) >= _EXACT_LIMIT:
        return NotImplemented  # not exact in float32: aten.linspace is reported unsupported
    i = aten.arange.default(steps, dtype=torch.float32, device=device)
    num = aten.add.Tensor(aten.mul.Tensor(i, 2 * (e - s)), 2 * s * n)  # 2M, exact
    for first, last, sign in _eager_moves(s, e, steps):
        run = aten.logical_and.default(aten.ge.Scalar(i, first), aten.le.Scalar(i, last))
        num = aten.sub.Tensor(num, aten._to_copy.default(run, dtype=torch.float32), alpha=sign)
    q = aten.div.Tensor(num, 2 * n)
    return aten._to_copy.default(q, dtype=dtype)  # truncates toward zero


def rules() -> dict:
    return {aten.linspace.default: _linspace}
