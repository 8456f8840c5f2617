"""trnc decomposition rules for integer number theory: ``gcd`` and ``lcm``
(see docs/decompositions.md, "Elementwise operators and dtypes").

No engine has a loop, so gcd is Euclid's algorithm unrolled to a fixed number
of steps, each a handful of Vector instructions on the whole tensor:

    a, b = |a|, |b|
    repeat N times:  a, b = (b if b != 0 else a), a % max(b, 1)

Once b reaches 0 a step changes nothing (a % 1 == 0), so extra steps are
harmless. N is Lame's bound: Euclid on a, b <= M takes at most k division
steps with F(k + 1) <= M (F the Fibonacci numbers), plus one step that swaps
a < b. M is the dtype's magnitude, capped at 2**31: int64 lives in int32
tiles on chip (docs: dtypes), so int32 and int64 both take 46 steps.
Integer remainder is exact while |x| <= 2**24 (the engines compute int32 in
fp32), and so is gcd.

lcm(a, b) = |a / g * b| with g = gcd(a, b) (0 when g == 0), as ATen's kernel.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def euclid_steps(magnitude: int) -> int:
    """Steps of Euclid's algorithm that suffice for operands <= magnitude."""
    steps, prev, cur = 0, 1, 1  # F(1), F(2)
    while cur <= magnitude:
        prev, cur = cur, prev + cur
        steps += 1
    return steps + 1  # + the swap step when a < b


def _magnitude(dtype: torch.dtype) -> int:
    info = torch.iinfo(dtype)
    return min(max(abs(info.min), info.max), 2**31)


def _as(x, dtype):
    return x if x.dtype == dtype else aten._to_copy.default(x, dtype=dtype)


def _gcd(a, b):
    dtype = torch.result_type(a, b)
    a, b = aten.abs.default(_as(a, dtype)), aten.abs.default(_as(b, dtype))
    for _ in range(euclid_steps(_magnitude(dtype))):
        r = aten.remainder.Tensor(a, aten.clamp_min.default(b, 1))
        a = aten.where.self(aten.ne.Scalar(b, 0), b, a)
        b = r
    return a


def _lcm(a, b):
    dtype = torch.result_type(a, b)
    a, b = _as(a, dtype), _as(b, dtype)
    g = aten.clamp_min.default(_gcd(a, b), 1)  # g == 0 only when a == b == 0
    return aten.abs.default(aten.mul.Tensor(aten.div.Tensor_mode(a, g, rounding_mode="trunc"), b))


def rules() -> dict:
    return {
        aten.gcd.default: _gcd,
        aten.lcm.default: _lcm,
    }
