"""torch.distributed through backend="neuron", launched by torchrun as users
launch it: each test starts `torchrun --standalone --nproc-per-node N`, every
rank a process simulating its own NeuronCore and joining gloo from the
environment (docs/distributed.md). The training modes run the scripts of
benchmarks/distributed_examples with --check (each fails unless it matches
the eager run) and the test checks what they report."""

import json
import os
import subprocess
import sys

import pytest
import torch.distributed as dist

from dist_workers import EXAMPLES, collectives, example, launch, torchrun
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


def test_functional_collectives_exact_vs_eager_at_lnc2():
    """The same function at options={"lnc": 2}: each rank a logical core
    (two physical cores), its collectives issued by core 0 between
    barriers; bit-exact vs eager gloo."""
    launch(collectives.exact_lnc2)


def test_bf16_all_reduce_and_profile():
    launch(collectives.bf16_and_profile)


def test_uneven_all_to_all_is_refused_by_name():
    launch(collectives.uneven_all_to_all)


def test_all_reduce_four_ranks():
    """A bf16 all_reduce over 4 ranks, exact vs eager (world size and group
    layout are in the cache key: another artifact than the 2-rank one)."""
    launch(collectives.bf16_and_profile, world=4)


def _trained(result: dict, world: int) -> None:
    assert result["checked"] and result["world"] == world, result
    assert len(result["losses"]) == 3 and all(0 < x < 10 for x in result["losses"]), result["losses"]
    assert result["simulated_ms"] > 0, result


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_example(world):
    """DDP around a compiled GPT: Dynamo's DDP optimizer splits it at the
    bucket boundary (two buckets: two forward and two backward graphs);
    losses and parameters equal eager DDP on gloo."""
    result = example("ddp", world)
    _trained(result, world)
    assert result["graphs"]["forward"] == 2 and result["graphs"]["backward"] == 2, result["graphs"]
    assert result["max_param_diff"] < 1e-5, result


def test_fsdp2_example():
    """FSDP2 fully_shard per GPT block, each block compiled, AdamW: every
    step's mean loss equals the single-process run on the whole batch."""
    result = example("fsdp2")
    _trained(result, 2)
    assert result["graphs"]["forward"] >= 1 and result["graphs"]["backward"] >= 1, result["graphs"]


def test_tensor_parallel_example(tmp_path):
    """DTensor ColwiseParallel/RowwiseParallel on attention and MLP: the
    collectives are inside the compiled forward and backward (one frame),
    losses and gathered parameters equal one unsharded process; --trace
    writes each rank's timeline with the collectives on their DMA queue."""
    result = example("tensor_parallel", 2, "--trace", str(tmp_path))
    _trained(result, 2)
    assert result["frames"] == 1, f"graph breaks: {result['frames']} frames"
    assert result["graphs"]["collectives"] > 0, "no collective inside the compiled graphs"
    assert 0 < result["collective_us"] and 0 <= result["exposed_collective_us"] <= result["collective_us"]
    assert result["max_param_diff"] < 1e-5, result
    for rank in range(2):
        events = json.loads((tmp_path / f"rank{rank}.json").read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        assert any("collective" in str(e.get("name", "")) for e in events), f"rank {rank}: no collective slice"


def test_example_without_torchrun_says_so():
    """Run as a plain script (no torchrun environment) an example exits with
    a message naming torchrun, not a rendezvous hang or traceback."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    proc = subprocess.run([sys.executable, os.path.join(EXAMPLES, "ddp.py")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode != 0
    assert "run it with torchrun" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_ranks_that_never_exit_are_killed_and_reported(tmp_path):
    """A launch that outlives its timeout (a rank hung at exit, as gloo's
    teardown once did in CI) fails with the ranks' output so far, and no
    rank is left running to hold a core through the tests after it."""
    script = tmp_path / "never_exits.py"
    script.write_text("import time\nprint('rank up', flush=True)\ntime.sleep(3600)\n")
    with pytest.raises(AssertionError, match=r"did not exit within 20 s \(ranks killed\)[\s\S]*rank up"):
        torchrun([str(script)], 2, timeout=20)
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(script).encode() in f.read():
                    left.append(pid)
        except OSError:
            pass
    assert not left, f"ranks still running: {left}"
