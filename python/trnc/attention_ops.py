"""trnc's fused attention operators: ``torch.ops.trnc.attention`` and
``torch.ops.trnc.attention_backward`` (graph-JSON targets
``trnc.attention.default`` / ``trnc.attention_backward.default``).

The scaled-dot-product-attention rules of decomp_matmul_conv.py reach them
for attention without a mask or dropout; the compiler lowers each as one
group (passes/Tile/LowerAttention.cpp), so the [L, S] scores never reach
HBM. The CPU implementations below *are* the contract the lowering matches:

- ``attention(q[N,H,L,E], k[N,H,S,E], v[N,H,S,Ev], causal, scale)
  -> (out[N,L,H,Ev], lse[N,H,L] float32)``: scores ``q k^T * scale`` in
  float32 (causal: key j > query i masked), ``p = softmax`` rounded to v's
  type, ``out = p v`` accumulated in float32 (as PyTorch's CPU flash kernel
  does for 16-bit inputs); ``lse`` is the row logsumexp of the scores. The
  output's [N, L, H, Ev] layout is the fused kernel's memory layout: callers
  permute it to [N, H, L, Ev] as a view.
- ``attention_backward(grad_out, q, k, v, out, lse, causal, scale)
  -> (dq[N,L,H,E], dk[N,S,H,E], dv[N,S,H,Ev])`` (the same sequence-major layout,
  permuted back by callers): with ``p = exp(scores - lse)`` and
  ``D = rowsum(grad_out * out)``: ``dv = p^T grad_out``,
  ``ds = p (grad_out v^T - D)``, ``dq = ds k * scale``, ``dk = ds^T q * scale``.
"""

from __future__ import annotations

import torch

__all__ = ["attention", "attention_backward", "eligible", "fits", "max_keys"]

# The lowering (passes/Tile/LowerAttention.cpp) puts the head dim on the 128
# partitions and walks any number of keys with an online softmax, keeping a
# head's keys and values (and, for the gradient, its query-side rows and
# results) resident in SBUF: the sequence lengths are bounded by that
# residency (resident_bytes, mirroring residentBytes there for one head)
# within the smallest target's SBUF partition (trn1: 192 KiB) less what the
# lowering keeps for its working tiles (kWorkingBytes).
MAX_HEAD = 128
PARTITIONS = 128
SBUF_PARTITION_BYTES = 192 * 1024
WORKING_BYTES = 64 * 1024


def resident_bytes(l: int, s: int, e: int, ev: int, elt_bytes: int, backward: bool) -> int:
    """SBUF bytes per partition one head's resident tiles take, for l queries
    and s keys: forward, K^T [E, S] and the [<= 128, E] row blocks of K and V
    (V with a column of ones, whose product with P sums P's rows);
    the gradient, the K and V rows (V with extra columns) and the dK, dV
    results, per query block the Q and dO rows (dO with -D), the dq result and
    fp32 -lse and -D, and K^T, V^T, Q^T, dO^T. -D rides in one extra column
    of dO (ones in V's) in float32, two (hi, lo) in a 16-bit type."""
    k_blocks, q_blocks = -(-s // PARTITIONS), -(-l // PARTITIONS)
    if not backward:
        return s * elt_bytes + k_blocks * (e + ev + 1) * elt_bytes
    fold = 2 if elt_bytes < 4 else 1
    return (
        k_blocks * (2 * (e + ev) + fold) * elt_bytes
        + q_blocks * ((2 * e + ev + fold) * elt_bytes + 8)
        + 2 * (s + l) * elt_bytes
    )


def max_keys(e: int, ev: int, dtype: torch.dtype, backward: bool = False, queries: int | None = None) -> int:
    """The most keys the fused operators take for these head sizes and dtype,
    with `queries` queries (default: as many as keys, self-attention)."""
    budget, elt = SBUF_PARTITION_BYTES - WORKING_BYTES, torch.finfo(dtype).bits // 8
    s = budget // elt  # resident_bytes grows with s: search below this bound
    lo, hi = 0, s
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if resident_bytes(mid if queries is None else queries, mid, e, ev, elt, backward) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def fits(l: int, s: int, e: int, ev: int, dtype: torch.dtype, backward: bool = False) -> bool:
    """Whether one head of l queries and s keys fits the lowering's SBUF budget."""
    elt = torch.finfo(dtype).bits // 8
    return resident_bytes(l, s, e, ev, elt, backward) <= SBUF_PARTITION_BYTES - WORKING_BYTES


def eligible(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, backward: bool = False
) -> bool:
    """Whether the fused operator (the gradient's with `backward`) takes this
    attention (else the caller decomposes it into matmuls and a softmax)."""
    return (
        q.dim() == 4
        and k.dim() == 4
        and v.dim() == 4
        and q.dtype in (torch.float32, torch.bfloat16, torch.float16)
        and k.dtype == q.dtype
        and v.dtype == q.dtype
        and q.shape[:2] == k.shape[:2] == v.shape[:2]
        and k.shape[2] == v.shape[2]
        and q.shape[3] == k.shape[3]
        and 0 < q.shape[2]
        and q.shape[3] <= MAX_HEAD
        and v.shape[3] <= MAX_HEAD
        and 0 < k.shape[2]
        and fits(q.shape[2], k.shape[2], q.shape[3], v.shape[3], q.dtype, backward)
        and scale > 0
    )


def _scores(q, k, causal: bool, scale: float) -> torch.Tensor:
    s = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return s


@torch.library.custom_op("trnc::attention", mutates_args=())
def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    s = _scores(q, k, causal, scale)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1)).to(v.dtype)
    out = torch.matmul(p.float(), v.float()).to(v.dtype)
    return out.permute(0, 2, 1, 3).contiguous(), lse


@attention.register_fake
def _(q, k, v, causal, scale):
    n, h, l, _ = q.shape
    return q.new_empty((n, l, h, v.shape[3])), q.new_empty((n, h, l), dtype=torch.float32)


@torch.library.custom_op("trnc::attention_backward", mutates_args=())
def attention_backward(
    grad_out: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    causal: bool,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    p = torch.exp(_scores(q, k, causal, scale) - lse.unsqueeze(-1))
    g = grad_out.float()
    d = (g * out.float()).sum(dim=-1, keepdim=True)
    dv = torch.matmul(p.transpose(-2, -1), g)
    ds = p * (torch.matmul(g, v.float().transpose(-2, -1)) - d)
    dq = torch.matmul(ds, k.float()) * scale
    dk = torch.matmul(ds.transpose(-2, -1), q.float()) * scale
    return tuple(g.to(q.dtype).permute(0, 2, 1, 3).contiguous() for g in (dq, dk, dv))


@attention_backward.register_fake
def _(grad_out, q, k, v, out, lse, causal, scale):
    return tuple(t.new_empty((t.shape[0], t.shape[2], t.shape[1], t.shape[3])) for t in (q, k, v))
