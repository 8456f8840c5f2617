"""What the distributed examples share: joining the process group torchrun
describes in the environment, the command line, the training loop against
the eager reference, the simulated time of one step, and the rank-0 report
(a line per step and a final ``RESULT`` JSON line the tests read)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Callable, Iterable, Optional

import torch
import torch.distributed as dist

import trnc


def init(description: str, steps: int = 3) -> argparse.Namespace:
    """Parses the example's flags and joins the gloo process group from the
    environment torchrun sets (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--steps", type=int, default=steps, help="training steps")
    ap.add_argument("--check", action="store_true",
                    help="also train the eager reference and fail unless the runs agree")
    ap.add_argument("--trace", metavar="DIR",
                    help="write each rank's simulated timeline of the last step to DIR/rank<N>.json "
                         "(Chrome trace: chrome://tracing or Perfetto)")
    args = ap.parse_args()
    missing = [k for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
    if missing:
        sys.exit(f"{sys.argv[0]}: run it with torchrun (torchrun --nproc-per-node 2 {sys.argv[0]}): "
                 f"{', '.join(missing)} not set")
    dist.init_process_group("gloo")  # rank, world size and rendezvous from the environment
    args.rank, args.world = dist.get_rank(), dist.get_world_size()
    return args


def simulated_step(args: argparse.Namespace, step) -> tuple[object, dict]:
    """Runs step() once under a profile capture: its result, and the simulated
    time of the compiled graphs it ran (this rank's NeuronCore); with
    --trace, writes their timeline."""
    with trnc.profiling.capture(trace=bool(args.trace)) as cap:
        out = step()
    if args.trace:
        os.makedirs(args.trace, exist_ok=True)
        cap.write_trace(os.path.join(args.trace, f"rank{args.rank}.json"))
    return out, {"simulated_ms": cap.total_ns / 1e6, "collective_us": cap.collective_ns / 1e3,
                 "exposed_collective_us": cap.exposed_collective_ns / 1e3}


def log(args: argparse.Namespace, text: str) -> None:
    if args.rank == 0:
        print(text, flush=True)


def finish(args: argparse.Namespace, result: dict) -> None:
    """Prints rank 0's RESULT line (the graphs this rank ran on trnc by kind,
    compiled or served by AOTAutograd's cache: the ranks share it, so the
    rank that stores a graph first saves the others its compile) and leaves
    the process group."""
    result = dict(result, world=args.world, checked=args.check, graphs=dict(trnc.neuron.stats.ran()))
    log(args, "RESULT " + json.dumps(result, sort_keys=True))
    # Leave together: a rank tearing gloo down while a peer is still on its
    # way out can leave that peer's destroy_process_group waiting forever
    # (seen once in CI at 4 ranks on 2 cores: every step done and reported,
    # then no exit in 240 s; pytorch/pytorch#75097).
    dist.barrier()
    dist.destroy_process_group()


def assert_same(args: argparse.Namespace, what: str, got: torch.Tensor, want: torch.Tensor,
                rtol: float, atol: float) -> float:
    """Fails the rank (and so torchrun) unless got matches want; returns the
    largest absolute difference."""
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"rank {args.rank}: {what}: {m}")
    return float((got.detach().double() - want.detach().double()).abs().max()) if got.numel() else 0.0


def optimizer_step(loss_of: Callable, opt: torch.optim.Optimizer) -> Callable:
    """A training step of one batch: zero_grad, loss_of(*batch), backward, opt.step."""

    def step(batch) -> torch.Tensor:
        opt.zero_grad()
        loss = loss_of(*batch)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def fit(args: argparse.Namespace, next_batch: Callable, step: Callable, reference: Optional[Callable],
        reference_name: str, rtol: float, atol: float) -> tuple[list, dict]:
    """Runs args.steps steps of step(batch) (each returning the loss to
    compare), the last under a profile capture (the graphs compiled by then);
    with a reference, runs reference(batch) after each and fails unless its
    loss matches. Returns the losses and the last step's simulated time."""
    losses, timing = [], {}
    for i in range(args.steps):
        batch = next_batch()
        if i == args.steps - 1:
            loss, timing = simulated_step(args, lambda: step(batch))
        else:
            loss = step(batch)
        losses.append(float(loss))
        line = f"step {i}: loss {losses[-1]:.6f}"
        if reference is not None:
            want = reference(batch)
            assert_same(args, f"step {i} loss", loss, want, rtol, atol)
            line += f" ({reference_name} {float(want):.6f})"
        log(args, line)
    log(args, f"rank 0 simulated step: {timing['simulated_ms']:.3f} ms on its NeuronCore "
              f"({timing['collective_us']:.1f} us of collectives in its compiled graphs)")
    return losses, timing


def max_param_diff(args: argparse.Namespace, named: Iterable[tuple[str, torch.Tensor]],
                   reference: Iterable[torch.Tensor]) -> float:
    """Fails unless every parameter matches the reference's; the largest difference."""
    return max(assert_same(args, name, p, q, 1e-4, 1e-5) for (name, p), q in zip(named, reference))
