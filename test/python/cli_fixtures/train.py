"""A tiny training loop for `trnc precompile -- python train.py STEPS`.

Prints one line, TRNC_REPORT {json}: what the neuron backend compiled in this
process (trnc.neuron.stats), trnc.cache.stats() and trnc._C.cache_compile_count().
"""

import json
import sys

import torch

import trnc
import trnc.cache

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from models import make_mlp  # noqa: E402

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2
model = make_mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model, backend="neuron", dynamic=False)
for _ in range(steps):
    x = torch.randn(8, 32)
    loss = compiled(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
with torch.no_grad():
    compiled(torch.randn(4, 32))  # an inference graph with another shape

report = {
    "counts": dict(trnc.neuron.stats.counts),
    "cache": trnc.cache.stats(),
    "compiles": trnc._C.cache_compile_count(),
    "loss": float(loss.detach()),
}
print("TRNC_REPORT " + json.dumps(report, default=str))
