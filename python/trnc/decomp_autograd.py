"""Backward rules derived from forward rules by differentiating them while tracing.

Some operators reach trnc's graphs with a fused backward of their own that has
no PyTorch decomposition (``grid_sampler_2d_backward``,
``mkldnn_rnn_layer_backward``). Writing their gradients out by hand would
restate each forward's maths a second time. Instead such a backward rule
re-runs the operator's *forward* decomposition on detached copies of the
saved inputs with autograd switched back on, and asks autograd for the
vector-Jacobian product: the backward graph then holds exactly the
derivatives of the ops the forward decomposed into (every one of which trnc
lowers), and forward and backward cannot drift apart.

Decomposition rules run below the Autograd dispatch key (AOTAutograd traces
its joint graph there, with the autograd keys excluded from dispatch), so
``vjp`` lifts that exclusion for the duration of the local autograd pass.
The proxy/fake modes stay active, so every op of the pass, and of its
backward, is traced into the graph being built (and decomposed further).
That is below AOTAutograd's functionalization: a forward given to ``vjp`` must
use ops whose derivative formulas are functional (``clamp``'s is not: it calls
``logical_and_``; spell it with ``where``). AOTAutograd refuses a graph with an
in-place op, so a violation fails loudly at compile time, never silently.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import torch

_DK = torch._C.DispatchKey
# The keys AutoDispatchBelowADInplaceOrView excludes (c10 autograd_dispatch_keyset
# + ADInplaceOrView): with them excluded, ops would not record a graph.
_AUTOGRAD_KEYS = (
    torch._C.DispatchKeySet(_DK.AutogradFunctionality)
    | torch._C.DispatchKeySet(_DK.AutogradCPU)
    | torch._C.DispatchKeySet(_DK.AutogradOther)
    | torch._C.DispatchKeySet(_DK.ADInplaceOrView)
)


def vjp(forward: Callable, primals: Sequence[torch.Tensor], cotangents: Sequence[Optional[torch.Tensor]],
        needs: Sequence[bool]) -> list[Optional[torch.Tensor]]:
    """Gradients of ``forward(*primals)`` w.r.t. the primals whose ``needs`` is True.

    ``forward`` returns a tensor or a tuple of tensors; ``cotangents`` match
    them one for one (None: that output's gradient is zero). Primals not needed
    (or that no output depends on) get None, or zeros where ``needs`` asks for
    them, so callers can return the result directly as an op's gradients.
    """
    include = torch._C._dispatch_tls_local_include_set()
    exclude = torch._C._dispatch_tls_local_exclude_set() - _AUTOGRAD_KEYS
    with torch._C._ForceDispatchKeyGuard(include, exclude), torch.enable_grad():
        leaves = [p.detach().requires_grad_(bool(n) and p.is_floating_point())
                  for p, n in zip(primals, needs)]
        outs = forward(*leaves)
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, cotangents)
                 if g is not None and isinstance(o, torch.Tensor) and o.requires_grad]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        grads = iter(torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                                         allow_unused=True) if pairs and wanted else [None] * len(wanted))
        result = []
        for leaf in leaves:
            g = next(grads) if leaf.requires_grad else None
            if g is None and leaf.requires_grad:
                g = torch.zeros_like(leaf)
            result.append(g)
    return result
