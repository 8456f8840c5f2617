//===- TrnFusionOps.td - fusion groups as regions ----------*- tablegen -*-===//
//
// `trn.fusion_group`: the ops one tile loop computes together, formed by
// trnc-form-fusion-groups (passes/FormFusionGroups.cpp) and lowered as a unit
// by the tile phase. HBM appears only at a group's boundary: its operands
// (values defined above it) are loaded, and only the values it yields are
// stored. IREE's flow.dispatch.region is the model.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_FUSION_OPS
#define TRN_FUSION_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Trn_FusionGroupOp : Trn_Op<"fusion_group",
    [RecursiveMemoryEffects, SingleBlock]> {
  let summary = "ops computed together over on-chip tiles";
  let description = [{
    The body holds trn ops in program order, ended by `trn.yield` of the
    values read after the group. It reads values defined above it directly
    (the region is not isolated: views and small producers formed earlier
    are simply in scope). `kind` says which tile loop computes it:

    - `elementwise`: elementwise ops of one shape, one loop over
      [partition, free] tiles of their iteration space; each input loaded
      once, only yielded values stored.
    - `rows`: the ops of one [K..., N] row space (`row_space`): elementwise
      ops on full rows and per-row values, reductions over the row, sums
      over the rows, the views between them; each row whole in a partition
      (a layer norm forward or backward, a cross-entropy and its gradient).
    - `matmul`: one `trn.matmul` first, then its epilogue: elementwise ops
      over its [M, N] result (or a reshape of it with the same last dim),
      computed on each output tile as it leaves PSUM, and the reshapes of the
      result they read.

    ```mlir
    %0 = trn.fusion_group "elementwise" -> (tensor<128x512xf32>) {
      %1 = trn.exp %x : tensor<128x512xf32>
      %2 = trn.tanh %1 : tensor<128x512xf32>
      trn.yield %2 : tensor<128x512xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$kind, OptionalAttr<DenseI64ArrayAttr>:$row_space);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind (`->` `(` type($results)^ `)`)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ops of the body, in order, without the terminator.
    ::llvm::SmallVector<::mlir::Operation *> members();
    /// The value the body yields as `result`.
    ::mlir::Value yielded(::mlir::OpResult result);
  }];
}

def Trn_YieldOp : Trn_Op<"yield",
    [Pure, Terminator, HasParent<"FusionGroupOp">]> {
  let summary = "the values a fusion group makes visible after it";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

#endif // TRN_FUSION_OPS
