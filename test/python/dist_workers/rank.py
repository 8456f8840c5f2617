"""One rank of a torchrun launch: ``python -m dist_workers.rank module:function``
joins the gloo process group from torchrun's environment, runs
function(rank, world) and leaves the group together with the other ranks; an
exception fails the rank (and so torchrun)."""

import importlib
import os
import sys

import torch.distributed as dist


def main() -> None:
    module, _, name = sys.argv[1].partition(":")
    fn = getattr(importlib.import_module(module), name)
    dist.init_process_group("gloo")
    try:
        fn(dist.get_rank(), dist.get_world_size())
        # Leave together: a rank tearing gloo down while its peer still has
        # a collective in flight aborts the peer.
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # A rank that finished its work exits here, without the interpreter's
    # and C++ runtime's teardown: a still-joinable std::thread destroyed at
    # exit (a gloo or compile worker; none of trnc's) aborted one rank in
    # ~13 CI runs with "terminate called without an active exception"
    # after every check had passed. A failing rank raises before this.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
