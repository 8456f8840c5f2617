"""Collectives in compiled graphs with 2 ranks (gloo on localhost): each test
spawns two processes, each simulating its own NeuronCore
(docs/distributed.md)."""

import pytest
import torch.distributed as dist

from dist_workers import collectives, launch, training
from helpers import needs_native

pytestmark = [
    needs_native,
    pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs gloo"),
]


def test_functional_collectives_exact_vs_eager():
    """all_reduce (sum, max), all_gather, reduce_scatter, all_to_all and
    broadcast in one compiled function, forward and backward: bit-exact vs
    eager gloo, one Dynamo frame (no graph break at a collective)."""
    launch(collectives.exact)


def test_bf16_all_reduce_and_profile():
    launch(collectives.bf16_and_profile)


def test_uneven_all_to_all_is_refused_by_name():
    launch(collectives.uneven_all_to_all)


def test_ddp_compiled_model():
    """DDP around a compiled model: graph split at bucket boundaries, losses
    and parameters equal eager DDP."""
    launch(training.ddp)


def test_fsdp2_gpt_adamw():
    """FSDP2 fully_shard per GPT block with torch.compile per block: AdamW
    losses equal the single-process run."""
    launch(training.fsdp2)


def test_tensor_parallel_mlp():
    """DTensor ColwiseParallel/RowwiseParallel: collectives inside the
    compiled graphs (one frame), results and gradients equal one process."""
    launch(training.tensor_parallel)


def test_all_reduce_four_ranks():
    """A bf16 all_reduce over 4 ranks, exact vs eager (world size and group
    layout are in the cache key: another artifact than the 2-rank one)."""
    launch(collectives.bf16_and_profile, world=4)
