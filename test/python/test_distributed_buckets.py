"""Gradient buckets inside a compiled backward graph (benchmarks/distributed.py's
SyncBucket, DDP's bucketing): a bucket's all_reduce is issued as soon as its
gradients exist and overlaps the backward of the layers before it in the
simulated timeline; one bucket of everything cannot overlap. One process in
a fake 4-rank group (timing only, no data moved; numerics are the 2-rank
tests')."""

import os
import sys

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn

import trnc
from helpers import needs_native

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import distributed as bench  # noqa: E402

pytestmark = [needs_native, pytest.mark.skipif(not dist.is_available(), reason="needs torch.distributed")]


class _Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(256, 256) for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x.square().mean()


@pytest.fixture
def fake_world():
    bench._fake_world(4)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _step_profile(bucket_mb: float) -> dict:
    torch.manual_seed(0)
    model = bench.synced(_Mlp(), bucket_mb)

    def step(x):
        loss = model(x)
        loss.backward()
        return loss.detach()

    torch._dynamo.reset()
    compiled = torch.compile(step, backend="neuron")
    x = torch.randn(128, 256)
    compiled(x)
    with trnc.profiling.capture() as cap:
        compiled(x)
    (backward,) = [g.profile.to_dict() for g in cap.graphs if g.graph.startswith("backward")]
    return dict(backward, buckets=model.buckets)


def test_buckets_follow_ddp_order_and_cap():
    named = list(_Mlp().named_parameters())
    # A bucket closes at 256 KiB or more: one per layer (bias, then weight), last layer first.
    assert bench.buckets(named, 0.25) == [[f"layers.{i}.bias", f"layers.{i}.weight"] for i in (2, 1, 0)]
    assert len(bench.buckets(named, 0)) == 6 and len(bench.buckets(named, float("inf"))) == 1


def test_bucket_all_reduce_overlaps_the_next_buckets_backward(fake_world):
    per_layer, whole = _step_profile(0.25), _step_profile(float("inf"))
    assert per_layer["buckets"] == per_layer["collectives"] == 3, per_layer
    assert whole["buckets"] == whole["collectives"] == 1, whole
    # The last layer's bucket is ready first: its all-reduce runs under the
    # backward of the layers before it (how much of it is hidden depends on
    # how long that backward is, so only that some is).
    assert per_layer["collective_overlap_ns"] > 0, per_layer
    # One bucket waits for the last gradient: nothing left to hide behind.
    assert whole["collective_overlap_ns"] == 0 and whole["exposed_collective_ns"] == whole["collective_ns"], whole
