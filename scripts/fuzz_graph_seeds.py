"""Writes the seed corpus of trnc-compile-fuzzer: the graph JSON that
torch.compile exports for a few small real programs (forward and backward
graphs of an MLP, a conv net, attention, embedding + integer arithmetic,
reductions, indexing, random), stack traces stripped to keep them small.

Usage: python scripts/fuzz_graph_seeds.py compiler/fuzz/seeds
"""

from __future__ import annotations

import json
import os
import sys

import torch
import torch.nn.functional as F

import trnc.backend


def programs():
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    conv = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.AvgPool2d(2))
    emb = torch.nn.Embedding(32, 8)

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def integers(ids, x):
        pos = torch.arange(ids.shape[-1]) * 3 + ids % 5
        return emb(ids).sum(-1) + pos, (torch.sigmoid(x) * 10).long().cumsum(-1)

    def reductions(x):
        return x.softmax(-1), x.var(0), x.amax(1), torch.cumsum(x, 1), x.argmax(-1)

    def indexing(x, i):
        return x[i], x.gather(1, i[:, None].expand(-1, 4)), torch.where(x > 0, x, x * 0.1).t()

    def random(x):
        return F.dropout(x, 0.5, training=True) + torch.rand_like(x)

    r = torch.Generator().manual_seed(0)
    yield "mlp", mlp, (torch.randn(4, 8, generator=r, requires_grad=True),)
    yield "conv", conv, (torch.randn(1, 2, 8, 8, generator=r, requires_grad=True),)
    yield "attention", attention, tuple(torch.randn(1, 2, 8, 4, generator=r, requires_grad=True) for _ in range(3))
    yield "integers", integers, (torch.randint(0, 32, (2, 6), generator=r), torch.randn(2, 6, generator=r))
    yield "reductions", reductions, (torch.randn(4, 6, generator=r, requires_grad=True),)
    yield "indexing", indexing, (torch.randn(6, 4, generator=r), torch.tensor([0, 5, 2, 2]))
    yield "random", random, (torch.randn(4, 8, generator=r),)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    original = trnc.backend.compile_exported
    current = {}

    def capture(graph, options):
        doc = json.loads(graph.to_json())
        for node in doc["nodes"]:
            node["stack_trace"] = None
        path = os.path.join(out, f"{current['name']}-{graph.name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"), sort_keys=True)
        print(path, os.path.getsize(path))
        return original(graph, options)

    trnc.backend.compile_exported = capture
    for name, fn, inputs in programs():
        current["name"] = name
        torch._dynamo.reset()
        result = torch.compile(fn, backend="neuron", dynamic=False)(*inputs)
        outs = result if isinstance(result, tuple) else (result,)
        loss = sum(o.float().sum() for o in outs if o.requires_grad)
        if isinstance(loss, torch.Tensor):
            loss.backward()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "compiler/fuzz/seeds")
