"""Rank bodies (run on every rank by dist_workers.rank under torchrun):
functional collectives in a compiled function (forward and backward)
exactly equal to eager gloo (also at lnc=2), and refusals by name."""

import functools

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
from torch._dynamo.testing import CompileCounterWithBackend

import trnc


def _f(x, w):
    group = dist.group.WORLD
    y = x @ w
    a = fc.all_reduce(y, "sum", group)
    g = fc.all_gather_single(a, 0, group)
    r = fc.reduce_scatter_single(g * 2, "sum", 0, group)
    t = fc.all_to_all_single(r, None, None, group)
    b = fc.broadcast(t, 1, group)
    m = fc.all_reduce(y.detach(), "max", group)  # max has no backward
    return (b.relu() + a * m).sum(dim=0)


def exact(rank: int, world: int, options: dict | None = None, rows: int = 4, cols: int = 8) -> list:
    """Returns the graphs' profiles of the compiled run."""
    # Integer-valued floats: every sum is exact in fp32, so the simulator's
    # matmul and eager's agree bit for bit and any difference would be the
    # collectives'.
    gen = torch.Generator().manual_seed(10 + rank)
    x = torch.randint(-3, 4, (rows, 16), generator=gen).float()
    w0 = torch.randint(-2, 3, (16, cols), generator=gen).float()
    results = {}
    for mode in ("eager", "neuron"):
        w = w0.clone().requires_grad_(True)
        if mode == "eager":
            fn = _f
        else:
            counter = CompileCounterWithBackend(functools.partial(trnc.neuron, options=options))
            fn = torch.compile(_f, backend=counter)
        with trnc.profiling.capture() as cap:
            out = fn(x, w)
            out.sum().backward()
        results[mode] = (out.detach(), w.grad.clone())
    torch.testing.assert_close(results["neuron"][0], results["eager"][0], rtol=0, atol=0)
    torch.testing.assert_close(results["neuron"][1], results["eager"][1], rtol=0, atol=0)
    assert counter.frame_count == 1, f"graph breaks: {counter.frame_count} frames"
    stats = trnc.neuron.stats.counts
    assert stats["forward"] >= 1 and stats["backward"] >= 1, stats
    return [g.profile.to_dict() for g in cap.graphs]


def exact_lnc2(rank: int, world: int) -> None:
    """The same at lnc=2: each rank one program over two physical cores,
    core 0 issuing the collectives between barriers. 512 rows (four row
    tiles) of 8192 columns: core 1 computes half of them, so it writes
    collective inputs and reads collective results. (With 8 or 2048
    columns, or 256 rows now that the sum over the rows costs the Tensor
    Engine half of what it did, the split is estimated not to pay for its
    barriers, and the compiler keeps the program on core 0.)"""
    profiles = exact(rank, world, {"lnc": 2}, rows=512, cols=8192)
    assert profiles and all(d["lnc"] == 2 for d in profiles), profiles
    assert sum(d["collectives"] for d in profiles) >= 6, [d["collectives"] for d in profiles]
    core1 = [d["cores"][1] for d in profiles]
    assert any(c["dma"]["instructions"] > 0 for c in core1), core1


def bf16_and_profile(rank: int, world: int) -> None:
    """bf16 all_reduce is exact vs eager too, and the profile reports the
    collective's simulated time."""
    x = (torch.arange(256, dtype=torch.float32).reshape(16, 16) * (rank + 1)).to(torch.bfloat16)

    def g(x):
        return fc.all_reduce(x * 2, "sum", dist.group.WORLD) + 1

    expected = g(x)
    with trnc.profiling.capture() as cap:
        got = torch.compile(g, backend="neuron")(x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    d = cap.graphs[-1].profile.to_dict()
    assert d["collectives"] == 1 and d["collective_ns"] > 0, d
    assert 0 <= d["exposed_collective_ns"] <= d["collective_ns"]
    assert cap.collective_ns == d["collective_ns"]
    assert "collectives: 1 " in cap.graphs[-1].summary(), cap.graphs[-1].summary()


def uneven_all_to_all(rank: int, world: int) -> None:
    """An unsupported collective form fails compilation naming it."""

    def h(x):
        return fc.all_to_all_single(x, [1, 3], [3, 1], dist.group.WORLD) * 2

    try:
        torch.compile(h, backend="neuron")(torch.ones(4, 2))
    except Exception as e:  # Dynamo wraps the backend's error
        text = str(e)
        assert "all_to_all_single" in text and "uneven" in text, text
    else:
        raise AssertionError("uneven all_to_all_single compiled")
