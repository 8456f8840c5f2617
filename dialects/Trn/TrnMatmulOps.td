//===- TrnMatmulOps.td - trn matmul ops -------------------*- tablegen -*-===//
//
// Part of the trn dialect's op definitions (included by TrnOps.td), one file
// per operator area so each area grows on its own.
//
//===----------------------------------------------------------------------===//
#ifndef TRN_MATMUL_OPS
#define TRN_MATMUL_OPS

include "dialects/Trn/TrnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def Trn_MatmulOp : Trn_Op<"matmul", [Pure]> {
  let summary = "2-D matrix product [M, K] x [K, N] -> [M, N]";
  let description = [{
    Accumulates in fp32 whatever the operand type, like the Tensor Engine.
    Operands and result share one element type.

    ```mlir
    %c = trn.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Trn_FloatTensor:$lhs, Trn_FloatTensor:$rhs);
  let results = (outs Trn_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // TRN_MATMUL_OPS
