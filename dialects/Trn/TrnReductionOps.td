//===- TrnReductionOps.td - trn reduction ops -------------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_REDUCTION_OPS
#define TRN_REDUCTION_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Trn_ReduceSumOp : Trn_Op<"reduce_sum", [Pure]> {
  let summary = "sum over dimensions, which are removed from the shape";
  let description = [{
    Sums over `dims` (sorted, unique) and drops them; `keepdim` is a
    `trn.reshape` after this op. Accumulates in fp32.

    ```mlir
    %s = trn.reduce_sum %x dims = [0] : tensor<4x8xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // TRN_REDUCTION_OPS
