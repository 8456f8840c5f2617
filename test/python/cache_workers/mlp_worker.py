"""A separate process for test_cache.py: compile the test MLP (forward and
backward) through the neuron backend, check against eager, print one JSON line
with this process's cache statistics.

argv: [READY_FILE GO_FILE]: when given, the worker creates READY_FILE after its
imports and waits for GO_FILE, so the parent can start several at once.
The cache directory, hooks and timeouts come from the environment.
"""

import json
import os
import sys
import time

import torch

import trnc
import trnc.cache
from trnc._native import native


def main() -> None:
    if len(sys.argv) == 3:
        ready, go = sys.argv[1:]
        open(ready, "w").close()
        while not os.path.exists(go):
            time.sleep(0.01)
    dtype = getattr(torch, os.environ.get("WORKER_DTYPE", "float32"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(dtype)
    x = torch.randn(32, 64).to(dtype)
    expected = model(x)
    start = time.perf_counter()
    actual = torch.compile(model, backend=trnc.neuron, dynamic=False)(x)
    first_output = time.perf_counter() - start
    tol = {} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    torch.testing.assert_close(actual, expected, **tol)
    actual.sum().backward()
    stats = trnc.cache.stats()
    stats["pipeline_runs"] = native().cache_compile_count()
    stats["first_output_seconds"] = first_output
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
