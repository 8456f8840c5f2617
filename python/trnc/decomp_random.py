"""Random numbers on the device: the ``trnc.seed`` / ``trnc.random_uniform``
operators and the decompositions of torch's random operators onto them
(docs/decompositions.md, "Random numbers and dropout").

- ``torch.ops.trnc.seed(n) -> int32[2]``: two fresh words from torch's default
  CPU generator. Graph export turns every ``trnc.seed`` node into an extra graph
  input, which ``CompiledGraph`` fills before each call (``draw_seed``), so
  ``torch.manual_seed(s)`` makes runs reproducible and every call gets a fresh
  mask. ``n`` only keeps two seeds of one graph apart (AOTAutograd's CSE would
  merge identical argument-less nodes); it never reaches the graph JSON.
- ``torch.ops.trnc.random_uniform(size, dtype, seed) -> Tensor``: uniform [0, 1)
  numbers, a pure function of ``seed``: element ``i`` (row-major) is
  Philox-4x32-10 of counter ``i`` under the key ``seed`` (Salmon et al., SC'11),
  its first word's top m bits times 2^-m (m = 24 / 11 / 8 for float32 / float16 /
  bfloat16). The CPU implementation below is that formula, bit for bit the
  device's Random instruction (runtime/isa/Isa.h).

Dropout is ``native_dropout`` -> ``(x * (u < 1 - p)) * 1 / (1 - p)`` with the
boolean mask as its second result, which AOTAutograd saves for the backward
(``native_dropout_backward`` = grad * mask * scale), so both passes use one mask.
"""

from __future__ import annotations

import itertools
import math
from typing import Optional, Sequence

import numpy as np
import torch

__all__ = ["seed", "random_uniform", "draw_seed", "rules", "SEED_TARGET"]

aten = torch.ops.aten

SEED_TARGET = "trnc.seed.default"

_M0, _M1 = 0xD2511F53, 0xCD9E8D57  # Philox-4x32 multipliers (Random123)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85  # its Weyl key increments
_MASK32 = 0xFFFFFFFF
_BITS = {torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}


def draw_seed() -> torch.Tensor:
    """Two int32 words from torch's default CPU generator."""
    return torch.randint(-(2**31), 2**31, (2,), dtype=torch.int64).to(torch.int32)


@torch.library.custom_op("trnc::seed", mutates_args=(), tags=(torch.Tag.nondeterministic_seeded,))
def seed(n: int) -> torch.Tensor:
    """A fresh seed (two int32 words) from torch's default generator."""
    return draw_seed()


@seed.register_fake
def _(n):
    return torch.empty((2,), dtype=torch.int32)


def _philox_first_word(counter: np.ndarray, key: Sequence[int]) -> np.ndarray:
    """Word 0 of Philox-4x32-10((counter mod 2^32, counter >> 32, 0, 0), key)."""
    c0 = counter & _MASK32
    c1 = counter >> np.uint64(32)
    c2 = np.zeros_like(counter)
    c3 = np.zeros_like(counter)
    k0, k1 = key[0] & _MASK32, key[1] & _MASK32
    for r in range(10):
        if r:
            k0, k1 = (k0 + _W0) & _MASK32, (k1 + _W1) & _MASK32
        p0 = np.uint64(_M0) * c0  # < 2^64: exact
        p1 = np.uint64(_M1) * c2
        c0, c1, c2, c3 = (
            (p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0),
            p1 & np.uint64(_MASK32),
            (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1),
            p0 & np.uint64(_MASK32),
        )
    return c0


def _check_uniform(size: Sequence[int], dtype: torch.dtype, seed: torch.Tensor) -> None:
    torch._check(dtype in _BITS, lambda: f"trnc::random_uniform: dtype must be float32/float16/bfloat16, got {dtype}")
    torch._check(
        seed.dtype == torch.int32 and tuple(seed.shape) == (2,),
        lambda: f"trnc::random_uniform: the seed must be int32[2], got {seed.dtype}{list(seed.shape)}",
    )
    torch._check(all(s >= 0 for s in size), lambda: f"trnc::random_uniform: negative size {list(size)}")


@torch.library.custom_op("trnc::random_uniform", mutates_args=())
def random_uniform(size: Sequence[int], dtype: torch.dtype, seed: torch.Tensor) -> torch.Tensor:
    """Uniform [0, 1) of shape ``size``: element i is Philox-4x32-10 of counter i
    under the key ``seed``, exact in ``dtype`` (the device's Random instruction)."""
    _check_uniform(size, dtype, seed)
    n = math.prod(size)
    key = [int(w) & _MASK32 for w in seed.tolist()]
    x = _philox_first_word(np.arange(n, dtype=np.uint64), key)
    m = _BITS[dtype]
    values = (x >> np.uint64(32 - m)).astype(np.float64) * 2.0**-m
    return torch.from_numpy(values.astype(np.float32)).reshape(list(size)).to(dtype)


@random_uniform.register_fake
def _(size, dtype, seed):
    _check_uniform(size, dtype, seed)
    return torch.empty(list(size), dtype=dtype)


# -----------------------------------------------------------------------------
# Decompositions (run under AOTAutograd's tracing: only the ops they call end up
# in the graph). Each random operator draws its own seed node.
# -----------------------------------------------------------------------------

_seed_numbers = itertools.count()


def _uniform(shape: Sequence[int], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.ops.trnc.random_uniform(list(shape), dtype, torch.ops.trnc.seed(next(_seed_numbers)))


def _uniform_as(shape: Sequence[int], dtype: Optional[torch.dtype]) -> torch.Tensor:
    """rand's result in ``dtype`` (default: torch's default dtype); float64 is
    drawn as float32 (trnc computes float64 in float32)."""
    dtype = dtype or torch.get_default_dtype()
    if dtype in _BITS:
        return _uniform(shape, dtype)
    return aten._to_copy.default(_uniform(shape), dtype=dtype)


def _native_dropout(x: torch.Tensor, p: float, train: Optional[bool]):
    if train is False:  # torch: (a copy of x, an all-true mask)
        return aten.clone.default(x), aten.ones_like.default(x, dtype=torch.bool)
    keep = aten.lt.Scalar(_uniform(x.shape), 1.0 - p)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)  # torch's native_dropout: scale 0 at p = 1
    # torch's order: input.mul(mask).mul_(scale).
    kept = aten.mul.Tensor(x, aten._to_copy.default(keep, dtype=x.dtype))
    return aten.mul.Tensor(kept, scale), keep


def _bernoulli_p(x: torch.Tensor, p: float = 0.5, *, generator=None) -> torch.Tensor:
    return aten._to_copy.default(aten.lt.Scalar(_uniform(x.shape), p), dtype=x.dtype)


def _bernoulli(x: torch.Tensor, *, generator=None) -> torch.Tensor:
    # x holds the probabilities.
    return aten._to_copy.default(aten.lt.Tensor(_uniform(x.shape), _as(x, torch.float32)), dtype=x.dtype)


def _rand(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _uniform_as(size, dtype)


def _rand_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _uniform_as(x.shape, dtype or x.dtype)


def _uniform_op(x: torch.Tensor, low: float = 0.0, high: float = 1.0, *, generator=None) -> torch.Tensor:
    return _as(aten.add.Tensor(aten.mul.Tensor(_uniform(x.shape), high - low), low), x.dtype)


def _normal(shape: Sequence[int]) -> torch.Tensor:
    """Standard normal float32 by Box-Muller: sqrt(-2 log(1 - u1)) * cos(2 pi u2)."""
    r = aten.sqrt.default(aten.mul.Tensor(aten.log.default(aten.rsub.Scalar(_uniform(shape), 1.0)), -2.0))
    return aten.mul.Tensor(r, aten.cos.default(aten.mul.Tensor(_uniform(shape), 2.0 * math.pi)))


def _as(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return x if x.dtype == dtype else aten._to_copy.default(x, dtype=dtype)


def _randn(size, *, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _as(_normal(size), dtype or torch.get_default_dtype())


def _randn_like(x, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _as(_normal(x.shape), dtype or x.dtype)


def _normal_functional(x: torch.Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> torch.Tensor:
    return _as(aten.add.Tensor(aten.mul.Tensor(_normal(x.shape), std), mean), x.dtype)


def _exponential(x: torch.Tensor, lambd: float = 1.0, *, generator=None) -> torch.Tensor:
    """Inverse CDF: -log1p(-u) / lambd, u uniform [0, 1) in fp32 (1 - u > 0, so finite)."""
    e = aten.mul.Tensor(aten.log1p.default(aten.mul.Tensor(_uniform(x.shape), -1.0)), -1.0 / lambd)
    return _as(e, x.dtype)


def rules() -> dict:
    """The random operators' decompositions (merged into trnc's table)."""
    return {
        aten.native_dropout.default: _native_dropout,
        aten.bernoulli.p: _bernoulli_p,
        aten.bernoulli.default: _bernoulli,
        aten.rand.default: _rand,
        aten.rand_like.default: _rand_like,
        aten.uniform.default: _uniform_op,
        aten.randn.default: _randn,
        aten.randn_like.default: _randn_like,
        aten.normal_functional.default: _normal_functional,
        aten.exponential.default: _exponential,
    }
