"""The real run after `trnc compile`: torch.compile(..., backend="neuron") on a fixture.

    python run_model.py train   # make_mlp, f32[8,32], forward + backward
    python run_model.py FILE.pt2  # a torch.export program's module, inference

Checks the result against eager and prints one line, TRNC_REPORT {json}, with
trnc.cache.stats() and trnc._C.cache_compile_count() of this process.
"""

import json
import sys

import torch

import trnc
import trnc.cache

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from models import make_mlp  # noqa: E402

torch.manual_seed(1)
if sys.argv[1] == "train":
    model = make_mlp()
    x = torch.randn(8, 32)
    compiled = torch.compile(model, backend="neuron", dynamic=False)
    out = compiled(x)
    out.sum().backward()
    grad = model.fc1.weight.grad.clone()
    model.zero_grad()
    model(x).sum().backward()
    torch.testing.assert_close(grad, model.fc1.weight.grad, rtol=1e-4, atol=1e-4)
else:
    program = torch.export.load(sys.argv[1])
    model = program.module()
    (x,), _ = program.example_inputs
    compiled = torch.compile(model, backend="neuron", dynamic=False)
    with torch.no_grad():
        out = compiled(x)
torch.testing.assert_close(out, model(x), rtol=1e-4, atol=1e-4)
report = {"cache": trnc.cache.stats(), "compiles": trnc._C.cache_compile_count()}
print("TRNC_REPORT " + json.dumps(report, default=str))
