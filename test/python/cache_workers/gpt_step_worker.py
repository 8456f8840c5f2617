"""A separate process for test_aot_cache.py: one training step (forward, loss,
backward) of a small trnc.models.gpt model through backend="neuron", checked
against eager on a copy of the model. Prints one JSON line: AOTAutograd's cache
counters, trnc's cache statistics, the graphs the backend compiled, the C++
compiler runs, the cache warnings, and the loss and gradients for comparison
between processes.

The cache directories (TRNC_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR) and test hooks
come from the environment. WORKER_PRECOMPILE=1 turns on Dynamo's caching
precompile and saves its package after the step.
"""

import copy
import json
import os
import warnings

import torch

import trnc
import trnc.cache
from trnc._native import native
from trnc.models import gpt


def main() -> None:
    precompile = os.environ.get("WORKER_PRECOMPILE") == "1"
    torch._dynamo.config.caching_precompile = precompile
    torch.manual_seed(0)
    model = gpt.GPT(gpt.GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_embd=32))
    reference = copy.deepcopy(model)
    idx = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _, loss = torch.compile(model, backend=trnc.neuron, dynamic=False)(idx, idx)
        loss.backward()
    if precompile:
        torch.compiler.save_cache_artifacts()
    _, expected = reference(idx, idx)
    expected.backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    eager_grads = {n: p.grad for n, p in reference.named_parameters()}
    max_grad_error = max(float((grads[n] - eager_grads[n]).abs().max()) for n in grads)
    counters = torch._dynamo.utils.counters["aot_autograd"]
    print(json.dumps({
        "aot": {k: counters[k] for k in ("autograd_cache_hit", "autograd_cache_miss",
                                          "autograd_cache_saved", "autograd_cache_bypass")},
        "trnc_cache": trnc.cache.stats(),
        "dynamo_cache": dict(torch._dynamo.utils.counters["dynamo_cache"]),
        "graphs": dict(trnc.neuron.stats.counts),
        "loaded": dict(trnc.neuron.stats.loaded),
        "pipeline_runs": native().cache_compile_count(),
        "cache_warnings": [str(w.message) for w in record if issubclass(w.category, trnc.cache.TrncCacheWarning)],
        "loss": float(loss.detach()),
        "loss_error": abs(float(loss.detach()) - float(expected.detach())),
        "max_grad_error": max_grad_error,
        "grad_sums": {n: float(g.double().sum()) for n, g in sorted(grads.items())},
    }), flush=True)


if __name__ == "__main__":
    main()
