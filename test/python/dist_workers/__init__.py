"""Worker functions for test_distributed*.py: each runs in one rank's process
(torch.multiprocessing.spawn, gloo on localhost) and raises on a mismatch;
``launch`` starts the ranks and fails the test with the first rank's error."""

import os
import socket
import traceback

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank: int, world: int, port: int, fn, args, errors) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)  # two ranks share the machine's cores
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        fn(rank, world, *args)
    except BaseException:
        errors.put((rank, traceback.format_exc()))
        raise
    finally:
        dist.destroy_process_group()


def launch(fn, *args, world: int = 2) -> None:
    """Runs fn(rank, world, *args) in `world` spawned ranks."""
    ctx = mp.get_context("spawn")
    errors = ctx.SimpleQueue()
    try:
        mp.start_processes(_entry, args=(world, _free_port(), fn, args, errors), nprocs=world,
                           join=True, start_method="spawn")
    except mp.ProcessRaisedException:
        pass
    if not errors.empty():
        rank, text = errors.get()
        raise AssertionError(f"rank {rank} failed:\n{text}")
