//===- TrnCollectiveOps.td - trn collectives across ranks -*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td): one op
// for torch's functional collectives (_c10d_functional.*, docs/distributed.md),
// with the replica group resolved to ranks at compile time.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_COLLECTIVE_OPS
#define TRN_COLLECTIVE_OPS

include "dialects/Trn/TrnBase.td"

def Trn_CollectiveOp : Trn_Op<"collective"> {
  let summary = "a collective across the ranks of a replica group";
  let description = [{
    `kind` is all_reduce, all_gather, reduce_scatter, all_to_all or
    broadcast; `reduce_op` (sum, avg, product, min, max) is set for the two
    reducing kinds and empty otherwise. `ranks` are the group's global
    ranks (resolved from the process group's name when the graph was
    exported), `world_size` the default group's size, `root` the source
    rank of a broadcast (group rank), `id` the collective's number in its
    graph, which the host uses to find the process group at run time.
    all_gather and reduce_scatter concatenate / split along dim 0.
    Not pure: communication must happen exactly once per call, so CSE and
    dead-code elimination leave it alone. Lowered to one `nisa.collective`
    on the collective DMA queue; `wait_tensor` is the semaphore wait of its
    consumers.

    ```mlir
    %r = trn.collective "all_reduce" %x {reduce_op = "sum", ranks = array<i64: 0, 1>,
        world_size = 2, root = 0, id = 0} : tensor<8x16xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Trn_Tensor:$input, StrAttr:$kind, StrAttr:$reduce_op,
                       DenseI64ArrayAttr:$ranks, I64Attr:$world_size,
                       I64Attr:$root, I64Attr:$id);
  let results = (outs Trn_Tensor:$result);
  let assemblyFormat = [{
    $kind $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // TRN_COLLECTIVE_OPS
