#!/usr/bin/env python3
"""DTensor tensor parallelism (Megatron-style) with a forward and backward compiled by backend="neuron".

    torchrun --nproc-per-node 2 benchmarks/distributed_examples/tensor_parallel.py [--steps N] [--check]

A small pre-norm transformer whose attention has separate q, k, v and output
projections (the layout tensor parallelism shards: a fused QKV projection
cannot be split by columns without mixing q and k). Every block gets
ColwiseParallel on wq, wk, wv and the MLP's first linear (each rank holds
n_head / world heads and 1 / world of the hidden units) and RowwiseParallel
on wo and the MLP's second linear (the partial sums all-reduced). The
DTensor collectives are traced into the compiled forward and backward graphs:
one Dynamo frame, no graph break. Every rank trains on the same batch with
SGD; --check trains an unsharded copy in this process and fails unless
the losses and the gathered parameters agree.
"""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import trnc
from common import finish, fit, init, max_param_diff, optimizer_step
from trnc.models import gpt


class Attention(nn.Module):
    def __init__(self, dim: int, n_head: int) -> None:
        super().__init__()
        self.head_dim = dim // n_head
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape  # -1 heads: the heads this rank holds
        q, k, v = (w(x).view(B, T, -1, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(B, T, -1))


class Block(nn.Module):
    def __init__(self, dim: int, n_head: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, n_head)
        self.w1, self.w2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.w2(F.gelu(self.w1(self.norm2(x))))


class Transformer(nn.Module):
    def __init__(self, vocab: int, block_size: int, dim: int, n_head: int, n_layer: int) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(block_size, dim)
        self.blocks = nn.ModuleList(Block(dim, n_head) for _ in range(n_layer))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


PLAN = {"attn.wq": ColwiseParallel(), "attn.wk": ColwiseParallel(), "attn.wv": ColwiseParallel(),
        "attn.wo": RowwiseParallel(), "w1": ColwiseParallel(), "w2": RowwiseParallel()}


def main() -> None:
    args = init(__doc__.splitlines()[0])
    config = gpt.GPTConfig(vocab_size=64, block_size=16)  # the data's vocabulary and length
    torch.manual_seed(0)
    model = Transformer(config.vocab_size, config.block_size, dim=32, n_head=4, n_layer=2)
    ref = copy.deepcopy(model) if args.check else None
    mesh = init_device_mesh("cpu", (args.world,))
    for block in model.blocks:
        parallelize_module(block, mesh, PLAN)
    counter = CompileCounterWithBackend(trnc.neuron)
    compiled = torch.compile(model, backend=counter)
    step = optimizer_step(compiled, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    reference = optimizer_step(ref, torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)) if ref is not None else None
    gen = torch.Generator().manual_seed(3)  # the same batches on every rank
    losses, timing = fit(args, lambda: gpt.batch(config, 2, gen), step, reference, "one process, unsharded",
                         1e-5, 1e-6)
    result = {"losses": losses, "frames": counter.frame_count, **timing}
    if ref is not None:
        full = [p.full_tensor() if isinstance(p, DTensor) else p for p in model.parameters()]
        result["max_param_diff"] = max_param_diff(args, zip((n for n, _ in model.named_parameters()), full),
                                                  ref.parameters())
    finish(args, result)


if __name__ == "__main__":
    main()
