"""Rank bodies: the three ways users train on many cores, each through
backend="neuron" against the eager (or single-process) run: DDP around a
compiled model, FSDP2 fully_shard per GPT block with a compiled block, and
DTensor tensor parallelism with a compiled forward and backward."""

import copy

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend

import trnc
from trnc.models import gpt


class _Mlp(nn.Module):
    """A user model (its forward is user code: Dynamo compiles the frame DDP
    calls; torch's own nn.Sequential.forward is a skipped file there)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 512), nn.Linear(512, 512), nn.Linear(512, 4)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def ddp(rank: int, world: int) -> None:
    """Dynamo's DDP optimizer splits the graph at bucket boundaries; every
    piece compiles to the simulator and losses track eager DDP."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.manual_seed(0)
    model = _Mlp()
    ref = copy.deepcopy(model)
    # 1 MiB buckets (DDP's first bucket size, the least Dynamo accepts) over
    # 1.2 MiB of parameters: two buckets, so the graph splits in two.
    compiled_ddp, eager_ddp = DDP(model, bucket_cap_mb=1), DDP(ref, bucket_cap_mb=1)
    compiled = torch.compile(compiled_ddp, backend="neuron")
    forward_graphs = trnc.neuron.stats.counts["forward"]
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, ref)]
    gen = torch.Generator().manual_seed(100 + rank)
    for _ in range(3):
        x, y = torch.randn(8, 64, generator=gen), torch.randn(8, 4, generator=gen)
        losses = []
        for run, opt in zip((compiled, eager_ddp), opts):
            opt.zero_grad()
            loss = F.mse_loss(run(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[0], losses[1], rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    # Dynamo's DDPOptimizer compiles one subgraph per bucket.
    split = trnc.neuron.stats.counts["forward"] - forward_graphs
    assert split >= 2, f"DDP graph not split at the bucket boundary: {split} forward graph(s)"


def fsdp2(rank: int, world: int) -> None:
    """fully_shard per GPT block, each block compiled: AdamW losses equal the
    single-process run on the whole batch."""
    from torch.distributed.fsdp import fully_shard

    config = gpt.GPTConfig(vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32)
    torch.manual_seed(0)
    model = gpt.GPT(config)
    ref = copy.deepcopy(model)
    for block in model.h:
        fully_shard(block)
        block.compile(backend="neuron")
    fully_shard(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(7)
    for _ in range(3):
        batches = [gpt.batch(config, 2, gen) for _ in range(world)]  # same on every rank
        idx, tgt = batches[rank]
        opt.zero_grad()
        loss = model(idx, tgt)[1]
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean /= world
        opt_ref.zero_grad()
        whole = ref(torch.cat([b[0] for b in batches]), torch.cat([b[1] for b in batches]))[1]
        whole.backward()
        opt_ref.step()
        torch.testing.assert_close(mean, whole.detach(), rtol=1e-4, atol=1e-5)
    assert trnc.neuron.stats.counts["forward"] >= 1 and trnc.neuron.stats.counts["backward"] >= 1


def tensor_parallel(rank: int, world: int) -> None:
    """ColwiseParallel / RowwiseParallel on an MLP: the collectives sit inside
    the compiled forward and backward graphs, results match one process."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
    ref = copy.deepcopy(mlp)
    parallelize_module(mlp, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    counter = CompileCounterWithBackend(trnc.neuron)
    compiled = torch.compile(mlp, backend=counter)
    before = trnc.neuron.stats.counts["collectives"]
    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(3))
    out = compiled(x)
    out.sum().backward()
    expected = ref(x)
    expected.sum().backward()
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    for p, q in zip(mlp.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad.full_tensor(), q.grad, rtol=1e-5, atol=1e-6)
    assert counter.frame_count == 1, f"graph breaks: {counter.frame_count} frames"
    assert trnc.neuron.stats.counts["collectives"] > before, "no collective inside the compiled graphs"
