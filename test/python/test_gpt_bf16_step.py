"""The benchmark's bf16 GPT training step (benchmarks/workloads.py: d_model 1024, 16 heads,
2 layers, vocab 8192, batch 4 x 1024 tokens) through backend="neuron", its gradients
against an fp32 reference of the same weights, with the race checker on (conftest.py).

The big graphs take the scheduling paths the small tests do not (the list scheduler's
three prefetch depths picking different winners, its weight-gradient order kept,
fusions near the SBUF share): a wrong order there would change the numbers, not only
the simulated time the benchmarks record. Eager bf16 is no reference (its layer norm
parameter gradients accumulate in bf16 on CPU, up to ~50% off); trnc accumulates in
fp32 and stays within ~0.5% of the fp32 gradients' scale.
"""

import torch

from helpers import compile_neuron, needs_native
from trnc.models import gpt

pytestmark = needs_native

CONFIG = gpt.GPTConfig(vocab_size=8192, block_size=1024, n_layer=2, n_head=16, n_embd=1024)


def test_bf16_gpt_step_gradients_match_fp32():
    torch.manual_seed(0)
    model = gpt.GPT(CONFIG).to(torch.bfloat16)
    reference = gpt.GPT(CONFIG)
    reference.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
    idx, targets = gpt.batch(CONFIG, 4, torch.Generator().manual_seed(0))

    _, loss = compile_neuron(model)(idx, targets)
    loss.backward()
    _, ref_loss = reference(idx, targets)
    ref_loss.backward()

    assert abs(float(loss) - float(ref_loss)) < 0.05
    for (name, p), r in zip(model.named_parameters(), reference.parameters()):
        scale = float(r.grad.abs().max())
        err = float((p.grad.float() - r.grad).abs().max())
        assert err <= 0.02 * scale, f"{name}: max error {err:.3g} against max gradient {scale:.3g}"
