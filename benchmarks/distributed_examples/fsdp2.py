#!/usr/bin/env python3
"""FSDP2: fully_shard per GPT block, each block compiled with backend="neuron", AdamW.

    torchrun --nproc-per-node 2 benchmarks/distributed_examples/fsdp2.py [--steps N] [--check]

Each block's parameters are sharded over the ranks; FSDP2's hooks all-gather
them before the block's compiled forward (and again for its compiled
backward) and reduce-scatter its gradients after, through gloo. AdamW steps
on the local shards. The global batch is the ranks' batches together, so
--check trains the same model in this process alone on the whole batch and
fails unless every step's mean loss over the ranks equals its loss.
"""

import copy

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

from common import finish, fit, init, optimizer_step
from trnc.models import gpt


def main() -> None:
    args = init(__doc__.splitlines()[0])
    config = gpt.GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32)
    torch.manual_seed(0)
    model = gpt.GPT(config)
    ref = copy.deepcopy(model)  # before sharding: the whole model
    for block in model.h:
        fully_shard(block)
        block.compile(backend="neuron")
    fully_shard(model)  # the embeddings, final norm and head
    local = optimizer_step(lambda idx, tgt: model(idx, tgt)[1], torch.optim.AdamW(model.parameters(), lr=1e-2))

    def step(batches):  # this rank's share; the loss compared is the mean over the ranks
        mean = local(batches[args.rank]).clone()
        dist.all_reduce(mean)
        return mean / args.world

    reference = None
    if args.check:
        whole = optimizer_step(lambda idx, tgt: ref(idx, tgt)[1], torch.optim.AdamW(ref.parameters(), lr=1e-2))
        reference = lambda batches: whole((torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches])))
    gen = torch.Generator().manual_seed(7)  # the same stream on every rank: each takes its share
    losses, timing = fit(args, lambda: [gpt.batch(config, 2, gen) for _ in range(args.world)], step, reference,
                         "one process, whole batch", 1e-4, 1e-5)
    finish(args, {"losses": losses, **timing})


if __name__ == "__main__":
    main()
