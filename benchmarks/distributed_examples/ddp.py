#!/usr/bin/env python3
"""DistributedDataParallel around a model compiled with backend="neuron".

    torchrun --nproc-per-node 2 benchmarks/distributed_examples/ddp.py [--steps N] [--check]

Every rank trains the GPT of trnc.models on its own batch with SGD. DDP
buckets the gradients (1 MiB buckets here, so this model's 1.6 MB of
parameters make two); Dynamo's DDP optimizer splits the compiled forward at
the bucket boundaries, so each piece's backward is its own compiled graph
and DDP's reducer all-reduces a bucket (through gloo) as soon as the piece
that produced it has run. --check trains an eager DDP copy on the same
batches and fails unless the losses and parameters agree (SGD: an update
is linear in the gradient, so rounding differences stay rounding-sized;
AdamW's first steps move every element by about lr times its gradient's
sign, which rounding can flip for a gradient near zero).
"""

import copy

import torch
from torch.nn.parallel import DistributedDataParallel as DDP

from common import finish, fit, init, max_param_diff, optimizer_step
from trnc.models import gpt


def main() -> None:
    args = init(__doc__.splitlines()[0])
    config = gpt.GPTConfig(vocab_size=64, block_size=32, n_layer=2, n_head=2, n_embd=128, bias=False)
    torch.manual_seed(0)  # the same initial model on every rank (DDP also broadcasts it)
    model = gpt.GPT(config)
    compiled = torch.compile(DDP(model, bucket_cap_mb=1), backend="neuron")
    step = optimizer_step(lambda idx, tgt: compiled(idx, tgt)[1],
                          torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    reference = None
    if args.check:
        ref = copy.deepcopy(model)
        eager = DDP(ref, bucket_cap_mb=1)
        reference = optimizer_step(lambda idx, tgt: eager(idx, tgt)[1],
                                   torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9))
    gen = torch.Generator().manual_seed(100 + args.rank)  # each rank its own data
    losses, timing = fit(args, lambda: gpt.batch(config, 2, gen), step, reference, "eager DDP", 1e-5, 1e-6)
    result = {"losses": losses, **timing}
    if args.check:
        result["max_param_diff"] = max_param_diff(args, model.named_parameters(), ref.parameters())
    finish(args, result)


if __name__ == "__main__":
    main()
