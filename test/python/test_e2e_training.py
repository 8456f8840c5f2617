"""End to end: a two-layer MLP trained with SGD, and how graphs get compiled."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import trnc
from helpers import BACKEND, mlp, needs_entry_point, needs_native, train

pytestmark = needs_native

STEPS = 5


def test_mlp_training_float32_matches_eager():
    model = mlp(torch.float32)
    eager_losses, eager_grads = train(model, STEPS, torch.float32, compiled=False)
    trnc_losses, trnc_grads = train(model, STEPS, torch.float32, compiled=True)
    torch.testing.assert_close(trnc_losses, eager_losses)
    torch.testing.assert_close(trnc_grads, eager_grads)
    assert trnc.neuron.stats.counts["forward"] == 1 and trnc.neuron.stats.counts["backward"] == 1


def test_mlp_training_bfloat16_matches_eager():
    # Tolerances: bf16 has an 8-bit mantissa (one ulp = 2**-8 ~ 0.4% relative).
    # Eager CPU and the simulator both accumulate matmuls in f32 but in a
    # different order (the simulator tiles K by 128 into PSUM) and may round
    # intermediate results (e.g. addmm's bias add) at different points, so
    # single values differ by a few ulps; over 5 SGD steps the weights drift by
    # the same few ulps. rtol 1.6e-2 (~4 ulps, torch's own bf16 default) and
    # atol 1e-2 (gradients that cancel to near zero) cover that while still
    # catching a wrong gradient, whose error is O(1) relative.
    tol = dict(rtol=1.6e-2, atol=1e-2)
    model = mlp(torch.bfloat16)
    eager_losses, eager_grads = train(model, STEPS, torch.bfloat16, compiled=False)
    trnc_losses, trnc_grads = train(model, STEPS, torch.bfloat16, compiled=True)
    torch.testing.assert_close(trnc_losses, eager_losses, **tol)
    torch.testing.assert_close(trnc_grads, eager_grads, **tol)


def test_new_input_shape_compiles_a_second_graph():
    model = torch.nn.Linear(16, 8)
    compiled = torch.compile(model, backend=BACKEND, dynamic=False)
    for batch in (4, 9, 4):
        x = torch.randn(batch, 16)
        torch.testing.assert_close(compiled(x), model(x))
    assert trnc.neuron.stats.counts["forward"] == 2


def test_set_default_backend_uses_neuron():
    torch.compiler.set_default_backend(BACKEND)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
    x = torch.randn(4, 16)
    torch.testing.assert_close(torch.compile(model)(x), model(x))
    assert trnc.neuron.stats.counts["forward"] == 1


@needs_entry_point
def test_set_default_backend_by_name():
    torch.compiler.set_default_backend("neuron")
    model = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    torch.testing.assert_close(torch.compile(model)(x), model(x))
    assert trnc.neuron.stats.counts["forward"] == 1


@needs_entry_point
def test_entry_point_in_fresh_interpreter_without_import_trnc():
    script = textwrap.dedent(
        """
        import sys, torch
        assert "trnc" not in sys.modules
        model = torch.nn.Linear(16, 8)
        x = torch.randn(4, 16, requires_grad=True)
        out = torch.compile(model, backend="neuron", dynamic=False)(x)
        torch.testing.assert_close(out, model(x))
        out.sum().backward()
        import trnc
        print("graphs", dict(trnc.neuron.stats.counts))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert "graphs {'forward': 1, 'backward': 1}" in proc.stdout


def test_options_reach_the_backend():
    model = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    out = torch.compile(model, backend=BACKEND, dynamic=False, options={"target": "trn2"})(x)
    torch.testing.assert_close(out, model(x))


@pytest.mark.parametrize("lnc, target, message", [(2, "trn1", "lnc=2 is not supported on trn1"),
                                                  (3, "trn2", "must be 1 or 2"), (True, "trn2", "must be 1 or 2")])
def test_lnc_other_than_one_is_refused_by_name(lnc, target, message):
    compiled = torch.compile(torch.nn.Linear(4, 4), backend=BACKEND, dynamic=False,
                             options={"lnc": lnc, "target": target})
    with pytest.raises(Exception, match=message):
        compiled(torch.randn(2, 4))


def test_lnc_in_the_compiler_options_and_the_cache_key():
    # The compiler parses "lnc" (a string, like every option), refuses it on
    # trn1 naming the target, and compiles lnc=2 elsewhere into a program
    # over two physical cores (docs/distributed.md, "LNC=2"); "lnc" changes
    # the key.
    from trnc._native import native
    graph = json.dumps({"inputs": [], "nodes": [], "outputs": []})
    trn1 = native().compile(graph, json.dumps({"target": "trn1", "lnc": "2"}))
    assert not trn1["ok"] and trn1["error_kind"] == "invalid_options"
    assert "lnc=2 is not supported on trn1" in trn1["message"]
    bad = native().compile(graph, json.dumps({"target": "trn2", "lnc": "4"}))
    assert not bad["ok"] and "'lnc' must be" in bad["message"]
    trn2 = native().compile(graph, json.dumps({"target": "trn2", "lnc": "2"}))
    # lnc=2 is accepted on trn2: this empty graph fails on the graph itself.
    assert not trn2["ok"] and "lnc" not in trn2["message"] and "schema" in trn2["message"]
    assert native().target_max_lnc("trn1") == 1 and native().target_max_lnc("trn2") == 2
    keys = {native().cache_key(graph, options) for options in
            (json.dumps({"target": "trn2"}), json.dumps({"target": "trn2", "lnc": "2"}))}
    assert len(keys) == 2


def test_lnc_one_is_todays_program():
    model = torch.nn.Linear(16, 8)
    x = torch.randn(4, 16)
    out = torch.compile(model, backend=BACKEND, dynamic=False, options={"lnc": 1})(x)
    torch.testing.assert_close(out, model(x))
    assert "lnc" not in trnc.CompilerOptions(lnc=1).to_json()  # not in the key: lnc=1 keys are as before


def test_unknown_option_is_an_error():
    compiled = torch.compile(torch.nn.Linear(4, 4), backend=BACKEND, dynamic=False, options={"tarjet": "trn2"})
    with pytest.raises(Exception, match="unknown option"):
        compiled(torch.randn(2, 4))


def test_per_block_compile_shares_one_graph_pair_across_identical_blocks():
    """torchtitan-style per-block compile (benchmarks/compile_cost --per-block):
    identical transformer blocks are one forward and one backward compile,
    however many layers, and the step matches eager."""
    from trnc.models import gpt

    torch.manual_seed(0)
    config = gpt.GPTConfig(n_layer=3, n_embd=64, n_head=2, vocab_size=64, block_size=16)
    model, ref = gpt.GPT(config), gpt.GPT(config)
    ref.load_state_dict(model.state_dict())
    idx = torch.randint(0, config.vocab_size, (2, 16), generator=torch.Generator().manual_seed(0))
    torch._dynamo.reset()
    trnc.neuron.stats.reset()
    for block in model.h:
        block.compile(backend=BACKEND, dynamic=False)
    _, loss = model(idx, idx)
    loss.backward()
    assert dict(trnc.neuron.stats.counts) == {"forward": 1, "backward": 1}
    _, expected = ref(idx, idx)
    expected.backward()
    torch.testing.assert_close(loss, expected, atol=1e-4, rtol=1e-4)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4)
