"""One rank of a torchrun launch: ``python -m dist_workers.rank module:function``
joins the gloo process group from torchrun's environment, runs
function(rank, world) and leaves the group together with the other ranks; an
exception fails the rank (and so torchrun)."""

import importlib
import sys

import torch.distributed as dist


def main() -> None:
    module, _, name = sys.argv[1].partition(":")
    fn = getattr(importlib.import_module(module), name)
    dist.init_process_group("gloo")
    try:
        fn(dist.get_rank(), dist.get_world_size())
        # Leave together: a rank tearing gloo down while its peer still has
        # a collective in flight aborts the peer ("terminate called without
        # an active exception", seen once under load).
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
