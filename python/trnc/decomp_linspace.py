"""trnc decomposition rules for integer and 16-bit ``linspace``
(docs/decompositions.md, "Indexing, data movement and tensor creation").
float16 / bfloat16: see _half_linspace. Integers:

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
import struct
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
    runs: list[tuple[int, int, int]] = []
    if step == Fraction(d, n):  # an exact step: every product and sum is exact
        return runs
    stride = n // math.gcd(d, n)  # M / N is an integer exactly at i = j * stride
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


def _round(x: float, dtype: torch.dtype) -> float:
    """x rounded to float32, then to dtype (float16 / bfloat16), nearest-even:
    c10::Half / BFloat16 arithmetic is a float32 operation then a conversion."""
    x = struct.unpack("<f", struct.pack("<f", x))[0]
    if dtype == torch.float16:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _half_linspace(start, end, steps, dtype, device):
    """float16 / bfloat16: the kernel's step_t is the 16-bit type itself, so every
    operation rounds to it: step = (end - start) / (steps - 1), then
    start + step * idx (idx converted to the type) or end - step * (steps - 1 - idx),
    each product and sum rounded. The same casts on the device: a float32
    product of two 16-bit values is exact, so casting it rounds once, as the
    kernel does; sums round to float32 first, as the kernel's float math does."""
    n = steps - 1
    s, e = _round(float(start), dtype), _round(float(end), dtype)
    step = _round(_round(e - s, dtype) / _round(float(n), dtype), dtype)

    def narrow(t):  # round to the 16-bit type, keep computing in float32
        return aten._to_copy.default(aten._to_copy.default(t, dtype=dtype), dtype=torch.float32)

    i = aten.arange.default(steps, dtype=torch.float32, device=device)
    low = aten.add.Tensor(narrow(aten.mul.Tensor(narrow(i), step)), s)
    back = narrow(aten.mul.Tensor(narrow(aten.sub.Tensor(aten.mul.Tensor(i, -1), -n)), step))
    high = aten.sub.Tensor(aten.full.default([steps], e, dtype=torch.float32, device=device), back)
    out = aten.where.self(aten.lt.Scalar(i, steps // 2), low, high)
    return aten._to_copy.default(out, dtype=dtype)


def _linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or torch.get_default_dtype()
    scalars = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (start, end))
    if scalars and steps >= 2 and dtype in (torch.float16, torch.bfloat16):
        return _half_linspace(start, end, steps, dtype, device)
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
